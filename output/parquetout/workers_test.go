package parquetout

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// partSeq is the <n> of a part's name, part-<run>-<n>.parquet.
func partSeq(t *testing.T, f string) int {
	t.Helper()
	base := strings.TrimSuffix(filepath.Base(f), ".parquet")
	n, err := strconv.Atoi(base[strings.LastIndexByte(base, '-')+1:])
	if err != nil {
		t.Fatalf("part name %s: %v", f, err)
	}
	return n
}

// lakeRows returns each partition's rows, its parts read in the order
// they were written, as text.
func lakeRows(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files := lakeFiles(t, dir)
	sort.SliceStable(files, func(i, j int) bool {
		if di, dj := filepath.Dir(files[i]), filepath.Dir(files[j]); di != dj {
			return di < dj
		}
		return partSeq(t, files[i]) < partSeq(t, files[j])
	})
	out := map[string][]string{}
	for _, f := range files {
		_, rows := readRows(t, filepath.Join(dir, f))
		for _, r := range rows {
			out[filepath.Dir(f)] = append(out[filepath.Dir(f)], fmt.Sprint(r))
		}
	}
	return out
}

// TestWorkersSameLake writes the same records (nested ones, departures,
// three tables, small row groups and parts, parts evicted) with row
// groups written in Record (Workers 1) and by 2 and 3 workers: every
// partition holds the same rows in the same order, every record once.
func TestWorkersSameLake(t *testing.T) {
	d, _ := nested()
	flat := &dissect.TypeDecl{Type: "flat", Fields: []dissect.FieldDecl{
		{Name: "s", Kind: dissect.KindString}, {Name: "x", Kind: dissect.KindFloat32}}}
	wild := &dissect.TypeDecl{Type: "*", Fields: []dissect.FieldDecl{{Name: "n", Kind: dissect.KindInt}}}
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []*dissect.Record
	for i := range 3000 {
		var r *dissect.Record
		switch i % 3 {
		case 0:
			r = &dissect.Record{Proto: "p", Type: "curve"}
			r.Fields = randomFields(rng, d.Fields)
		case 1:
			r = rec("flat", "s", dissect.Str([]string{"a", "a", "b", ""}[rng.IntN(4)]), "x", dissect.Float32(float32(i)/7))
		default:
			r = rec(fmt.Sprintf("w%d", rng.IntN(4)), "n", dissect.Int(int64(i)))
		}
		r.Offset = int64(i)
		r.Src = []string{"10.0.0.1:1", "10.0.0.1:1", "10.0.0.2:2"}[rng.IntN(3)]
		recs = append(recs, r)
	}
	var want map[string][]string
	for _, workers := range []int{1, 2, 3} {
		dir := t.TempDir()
		w, err := New(dir, Options{Decl: declOf(d, flat, wild), RowGroupRows: 7, PartRows: 60, MaxOpen: 3, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Record(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := lakeRows(t, dir)
		n := 0
		for _, rows := range got {
			n += len(rows)
		}
		if n != len(recs) || len(got) != 6 {
			t.Fatalf("workers %d: %d rows in %d partitions, want %d in 6", workers, n, len(got), len(recs))
		}
		if want == nil {
			want = got
			continue
		}
		for p, rows := range want {
			if fmt.Sprint(got[p]) != fmt.Sprint(rows) {
				t.Errorf("workers %d: %s differs from workers 1", workers, p)
			}
		}
	}
}

// TestRepeatedStrings: byte arrays, streams and lengths are kept as runs
// of equal values; runs of one value, of the empty string and between
// nulls come back as written.
func TestRepeatedStrings(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{{Name: "s", Kind: dissect.KindString}}}
	in := []any{"a", "a", "a", nil, "a", "", "", nil, nil, "b", "a", "a", ""}
	var recs []*dissect.Record
	streams := []int64{1, 1, 2, 2, 2, 1, 0, 0, 3, 3, 3, 1, 1}
	for i, v := range in {
		r := rec("t")
		r.Stream, r.Length = int(streams[i]), streams[len(streams)-1-i]*100
		if v != nil {
			r.Add("s", dissect.Str(v.(string)))
		}
		recs = append(recs, r)
	}
	dir, _ := writeLake(t, []*dissect.TypeDecl{d}, recs...)
	_, rows := readRows(t, onlyFile(t, dir, "proto=p/type=t"))
	if len(rows) != len(in) {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		if r["s"] != in[i] || r["capture"] != "c.pcap" || r["stream"] != streams[i] || r["length"] != streams[len(streams)-1-i]*100 {
			t.Errorf("row %d: s %#v capture %#v stream %v length %v, want %#v \"c.pcap\" %d %d", i, r["s"], r["capture"],
				r["stream"], r["length"], in[i], streams[i], streams[len(streams)-1-i]*100)
		}
	}
}

// TestLargeRowsCutRowGroups: a row group is written when its values take
// maxBatchBytes, before it has RowGroupRows rows, so that records of long
// arrays do not make a row group of gigabytes.
func TestLargeRowsCutRowGroups(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{
		{Name: "a", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat32}}}}
	// 1,000,000 bytes of slots a row (8 an item) and a few more (the
	// common columns'): 4 rows are under maxBatchBytes (4 MiB,
	// 4,194,304), the fifth passes it.
	const items, rows = 125_000, 10
	fs := make([]dissect.Field, items)
	for i := range fs {
		fs[i] = dissect.Elem(dissect.Float32(float32(i)))
	}
	r := rec("t", "a", dissect.Array(fs))
	dir := t.TempDir()
	w, err := New(dir, Options{Decl: declOf(d)})
	if err != nil {
		t.Fatal(err)
	}
	for range rows {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, rg := range openPart(t, onlyFile(t, dir, "proto=p/type=t")).RowGroups() {
		sizes = append(sizes, rg.NumRows())
	}
	if fmt.Sprint(sizes) != "[5 5]" {
		t.Errorf("row groups of %v rows, want [5 5]", sizes)
	}
}

// TestManyOpenPartsCutRowGroups: with many parts open at once, each part's
// row group is cut at openBatchBytes over the parts open rather than at
// maxBatchBytes, so that the row groups held together stay within
// openBatchBytes (and the writer's memory does not grow with MaxOpen).
func TestManyOpenPartsCutRowGroups(t *testing.T) {
	const tables, rows, size = 64, 40, 100_000 // 4 MB a table: under maxBatchBytes
	d := &dissect.TypeDecl{Type: "*", Fields: []dissect.FieldDecl{{Name: "b", Kind: dissect.KindBytes}}}
	dir := t.TempDir()
	w, err := New(dir, Options{Decl: declOf(d)})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, size)
	for i := range rows * tables {
		binary.LittleEndian.PutUint64(payload, uint64(i)) // each row its own value (a repeat is kept as a count)
		if err := w.Record(rec(fmt.Sprintf("t%d", i%tables), "b", dissect.Bytes(payload))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// 48 MiB over 64 parts: 786,432 bytes, passed by the eighth row.
	want := openBatchBytes/tables/size + 1
	for i := range tables {
		var sizes []int64
		for _, rg := range openPart(t, onlyFile(t, dir, fmt.Sprintf("proto=p/type=t%d", i))).RowGroups() {
			sizes = append(sizes, rg.NumRows())
		}
		if len(sizes) != (rows+want-1)/want {
			t.Fatalf("table t%d: row groups of %v rows, want %d each but the last", i, sizes, want)
		}
		for _, n := range sizes[:len(sizes)-1] {
			if n != int64(want) {
				t.Fatalf("table t%d: row groups of %v rows, want %d each but the last", i, sizes, want)
			}
		}
	}
}
