package parquetout

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/duckdb"
)

// wildDecls: proto p has a declared type "known" and a "*" declaration
// with a field; proto u declares nothing.
func wildDecls() (known, wild *dissect.TypeDecl, decl func(*dissect.Record) *dissect.TypeDecl) {
	known = &dissect.TypeDecl{Type: "known", Fields: []dissect.FieldDecl{{Name: "k", Kind: dissect.KindInt}}}
	wild = &dissect.TypeDecl{Type: "*", Fields: []dissect.FieldDecl{{Name: "n", Kind: dissect.KindInt}}}
	return known, wild, func(r *dissect.Record) *dissect.TypeDecl {
		switch {
		case r.Proto != "p":
			return nil
		case r.Type == "known":
			return known
		}
		return wild
	}
}

// rowsUnder returns every row of the parts under dir/rel.
func rowsUnder(t *testing.T, dir, rel string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, f := range lakeFiles(t, dir) {
		if filepath.Dir(f) == rel {
			_, rows := readRows(t, filepath.Join(dir, f))
			out = append(out, rows...)
		}
	}
	return out
}

// TestOverflowPartition writes 10 wire-named types per protocol (twice
// each) with room for 3 partitions named by the wire: the first 3 types
// seen get theirs, the rest go to the overflow partitions, the declared
// type keeps its own, and no record is lost.
func TestOverflowPartition(t *testing.T) {
	_, _, decl := wildDecls()
	dir := t.TempDir()
	w, err := New(dir, Options{Decl: decl, MaxPartitions: 3, MaxOpen: 2})
	if err != nil {
		t.Fatal(err)
	}
	var recs []*dissect.Record
	for round := range 2 {
		for i := range 10 {
			r := &dissect.Record{Proto: "p", Type: fmt.Sprintf("w%d", i), Offset: int64(100*round + i)}
			r.Add("n", dissect.Int(int64(i)))
			u := &dissect.Record{Proto: "u", Type: fmt.Sprintf("x%d", i), Offset: int64(100*round + i)}
			u.Add("z", dissect.Str("free"))
			recs = append(recs, r, u)
		}
		k := &dissect.Record{Proto: "p", Type: "known", Offset: int64(100*round + 50)}
		k.Add("k", dissect.Int(7))
		recs = append(recs, k)
	}
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
		if len(w.open) > 2 {
			t.Fatalf("%d parts open, MaxOpen 2", len(w.open))
		}
		// 3 wire-named tables (both protocols together), 2 overflow
		// tables, the declared one.
		if len(w.tables) > 3+2+1 {
			t.Fatalf("%d tables", len(w.tables))
		}
	}
	// The types come w0 x0 w1 x1 ...: w0, x0 and w1 make 3 (the bound
	// is the run's, both protocols together); every later type of either
	// overflows: p's 8 types w2..w9 and u's 9 types x1..x9, twice each.
	if got, want := w.Overflowed(), int64(2*(8+9)); got != want {
		t.Errorf("Overflowed %d, want %d", got, want)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for _, f := range lakeFiles(t, dir) {
		dirs[filepath.Dir(f)] = true
	}
	var got []string
	for d := range dirs {
		got = append(got, d)
	}
	sort.Strings(got)
	want := []string{"proto=p/type=__overflow__", "proto=p/type=known", "proto=p/type=w0", "proto=p/type=w1",
		"proto=u/type=__overflow_undeclared__", "proto=u/type=x0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partitions\n%v\nwant\n%v", got, want)
	}
	over := rowsUnder(t, dir, "proto=p/type=__overflow__")
	types := map[string]int{}
	for _, r := range over {
		types[r["record_type"].(string)]++
		if r["n"] == nil {
			t.Errorf("overflow row without its declared field n: %v", r)
		}
	}
	if len(over) != 16 || len(types) != 8 || types["w2"] != 2 || types["w9"] != 2 {
		t.Errorf("p overflow: %d rows, types %v", len(over), types)
	}
	uover := rowsUnder(t, dir, "proto=u/type=__overflow_undeclared__")
	for _, r := range uover {
		if !strings.HasPrefix(r["record_type"].(string), "x") || r["extra_json"] != `{"z":"free"}` {
			t.Errorf("u overflow row %v", r)
		}
	}
	if len(uover) != 18 {
		t.Errorf("u overflow: %d rows, want 18", len(uover))
	}
	if r := rowsUnder(t, dir, "proto=p/type=w0"); len(r) != 2 || r[0]["record_type"] != nil {
		t.Errorf("w0: %v (its partition names its type: no record_type column)", r)
	}
	if err := duckdb.Available(); err != nil {
		t.Log("DuckDB count skipped:", err)
		return
	}
	_, rows := duckdb.Query(t, "SELECT count(*), count(DISTINCT coalesce(record_type, type)) FROM read_parquet("+
		duckdb.Quote(filepath.Join(dir, "**", "*.parquet"))+", hive_partitioning = true, union_by_name = true)")
	// 42 records of 21 types: p's w0..w9 and known, u's x0..x9.
	if got := fmt.Sprint(rows); got != "[[42 21]]" {
		t.Errorf("DuckDB count, types: %s, want [[42 21]]", got)
	}
}

// TestLongTypeNames writes types whose partition names are at and past
// the 255-byte limit, with multi-byte UTF-8 and escaped characters where
// the cut falls: every directory name fits, none is cut inside an escape
// or a character, each type has its own partition, the full type is in
// record_type, and the shortened ones are counted.
func TestLongTypeNames(t *testing.T) {
	limit := maxName - len("type=") // 250 escaped bytes fit
	names := []struct {
		typ   string
		short bool
	}{
		{strings.Repeat("a", limit), false},
		{strings.Repeat("a", limit+1), true},
		{strings.Repeat("a", limit+1) + "b", true}, // differs after the cut only
		{strings.Repeat("é", limit/2), false},      // 250 bytes
		{"a" + strings.Repeat("é", limit/2), true}, // 251: the cut falls inside an é
		{strings.Repeat("/", limit/3), false},      // 83 × "%2F" = 249 bytes
		{strings.Repeat("/", limit/3+1), true},     // 252: the cut falls inside a %2F
		{"b" + strings.Repeat("?", 1000), true},
		{strings.Repeat("€", 10000), true},
	}
	_, _, decl := wildDecls()
	dir := t.TempDir()
	w, err := New(dir, Options{Decl: decl})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		for j := range 2 {
			r := &dissect.Record{Proto: "p", Type: n.typ, Offset: int64(10*i + j)}
			r.Add("n", dissect.Int(int64(i)))
			if err := w.Record(r); err != nil {
				t.Fatalf("%d: %v", i, err)
			}
		}
	}
	if got, want := w.Shortened(), 6; got != want {
		t.Errorf("Shortened %d, want %d", got, want)
	}
	for k := range w.tables {
		if len(k.typ) > maxName {
			t.Errorf("a table is known by %d bytes", len(k.typ))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	escape := regexp.MustCompile(`%([0-9A-F]{2})?`)
	byDir := map[string][]map[string]any{}
	for _, f := range lakeFiles(t, dir) {
		d := filepath.Base(filepath.Dir(f))
		if len(d) > maxName || len(filepath.Base(f)) > maxName {
			t.Errorf("name of %d bytes: %s", len(d), f)
		}
		if !utf8.ValidString(d) {
			t.Errorf("%s: cut inside a UTF-8 character", d)
		}
		for _, m := range escape.FindAllStringSubmatch(d, -1) {
			if m[1] == "" {
				t.Errorf("%s: cut inside an escape", d)
			}
		}
		_, rows := readRows(t, filepath.Join(dir, f))
		byDir[d] = append(byDir[d], rows...)
	}
	if len(byDir) != len(names) {
		t.Errorf("%d partitions for %d types", len(byDir), len(names))
	}
	for d, rows := range byDir {
		i := int(rows[0]["n"].(int64))
		n := names[i]
		if len(rows) != 2 {
			t.Errorf("%s: %d rows", d, len(rows))
		}
		if !n.short {
			if d != "type="+EscapePartition(n.typ) || rows[0]["record_type"] != nil {
				t.Errorf("type %d: partition %s, record_type %v", i, d, rows[0]["record_type"])
			}
			continue
		}
		if !regexp.MustCompile(`~[0-9a-f]{32}$`).MatchString(d) || !strings.HasPrefix(EscapePartition(n.typ), strings.TrimPrefix(d[:len(d)-33], "type=")) {
			t.Errorf("type %d: partition %s is not a prefix and a hash", i, d)
		}
		for _, r := range rows {
			if r["record_type"] != n.typ {
				t.Errorf("type %d: record_type %.40q", i, r["record_type"])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "proto=p")); err != nil {
		t.Error(err)
	}
}
