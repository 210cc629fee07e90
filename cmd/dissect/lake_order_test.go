package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/internal/duckdb"
	"github.com/dissect-tools/dissect/output/parquetout"
)

// envelopeColumns are a part's columns before the declared fields, in
// the order of -o json's keys (proto and type are the partition's), and
// after them (the partitions' last, as hive partitioning adds them).
var (
	envelopeColumns = []string{"time TIMESTAMP_NS", "frame BIGINT", "transport VARCHAR", "stream BIGINT", "src VARCHAR", "dst VARCHAR",
		"offset BIGINT", "length BIGINT"}
	trailerColumns = []string{"warnings VARCHAR[]", "extra_json VARCHAR", "capture VARCHAR", "proto VARCHAR", "type VARCHAR"}
)

// duckType returns the DuckDB type of a declared field's column, as
// docs/scale.md lists them.
func duckType(f *dissect.FieldDecl) string {
	switch f.Kind {
	case dissect.KindInt:
		return "BIGINT"
	case dissect.KindUint:
		return "UBIGINT"
	case dissect.KindFloat:
		return "DOUBLE"
	case dissect.KindFloat32:
		return "FLOAT"
	case dissect.KindBool:
		return "BOOLEAN"
	case dissect.KindBytes:
		return "BLOB"
	case dissect.KindTime:
		return "TIMESTAMP_NS"
	case dissect.KindArray:
		return duckType(f.Elem) + "[]"
	case dissect.KindObject:
		if len(f.Fields) == 0 {
			return "VARCHAR"
		}
		var keys []string
		for i := range f.Fields {
			keys = append(keys, duckName(f.Fields[i].Name)+" "+duckType(&f.Fields[i]))
		}
		return "STRUCT(" + strings.Join(keys, ", ") + ")"
	}
	return "VARCHAR"
}

var (
	plainName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	// quotedPlain is a plain name DuckDB quotes in a type because it is
	// one of its keywords (name, text): duckName does not.
	quotedPlain = regexp.MustCompile(`"([a-z_][a-z0-9_]*)"`)
)

// duckName is a struct key as DuckDB writes it in a type, keywords
// aside.
func duckName(n string) string {
	if plainName.MatchString(n) {
		return n
	}
	return `"` + strings.ReplaceAll(n, `"`, `""`) + `"`
}

// declaredColumns returns the columns DuckDB must describe for a part of
// d: the envelope, the declared fields in declaration order (structs'
// keys in theirs), the trailer.
func declaredColumns(d *dissect.TypeDecl) []string {
	cols := append([]string(nil), envelopeColumns...)
	for i := range d.Fields {
		cols = append(cols, parquetout.ColumnName(d.Fields[i].Name)+" "+duckType(&d.Fields[i]))
	}
	return append(cols, trailerColumns...)
}

// TestLakeColumnsInDeclaredOrder writes every shipped capture into a lake
// and checks with DuckDB's DESCRIBE that each part's columns, and each
// struct's keys, are in the declared order with the declared types: the
// part of a declared type (or of one of its variants) matches one of its
// declarations exactly.
func TestLakeColumnsInDeclaredOrder(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err)
	}
	reg, err := all.Registry(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lake := t.TempDir()
	for _, c := range shippedCaptures(t) {
		if _, errOut, code := cli(t, append([]string{"-o", "parquet", "--out", lake, "--no-summary", "-r", c.path}, c.args...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.path, code, errOut)
		}
	}
	files, err := filepath.Glob(filepath.Join(lake, "proto=*", "type=*", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no parts: %v", err)
	}
	var sel []string
	for i, f := range files {
		sel = append(sel, fmt.Sprintf("SELECT %d AS f, column_name || ' ' || column_type AS c FROM (DESCRIBE SELECT * FROM read_parquet(%s, hive_partitioning=true))",
			i, duckdb.Quote(f)))
	}
	_, rows := duckdb.Query(t, "SELECT f, string_agg(c, '\n') FROM ("+strings.Join(sel, " UNION ALL ")+") GROUP BY f ORDER BY f")
	if len(rows) != len(files) {
		t.Fatalf("%d parts described, %d in the lake", len(rows), len(files))
	}
	declaredParts := map[string]bool{}
	for _, r := range rows {
		var i int
		fmt.Sscan(fmt.Sprint(r[0]), &i)
		got := quotedPlain.ReplaceAllString(fmt.Sprint(r[1]), "$1")
		rel, _ := filepath.Rel(lake, files[i])
		parts := strings.Split(rel, string(filepath.Separator))
		proto, typ := strings.TrimPrefix(parts[0], "proto="), strings.TrimPrefix(parts[1], "type=")
		var wants []string
		for _, d := range reg.Types(proto) {
			if d.Type == typ {
				wants = append(wants, strings.Join(declaredColumns(d), "\n"))
			}
		}
		if len(wants) == 0 {
			continue // a gap, a skipped event: no declaration
		}
		declaredParts[proto+"/"+typ] = true
		ok := false
		for _, w := range wants {
			ok = ok || got == w
		}
		if !ok {
			t.Errorf("%s: DuckDB describes\n%s\nwant (one of)\n%s", rel, got, strings.Join(wants, "\n--\n"))
		}
	}
	for _, want := range []string{"vrpn/vrpn_Tracker Pos_Quat", "handcontrol/GetSettings", "deltarobot/actuator_position"} {
		if !declaredParts[want] {
			t.Errorf("no part of %s (parts of declared types: %v)", want, declaredParts)
		}
	}
}

// TestLakeTypeAsJSON: in the lake of a HandControl capture whose types
// have variants (GetSettings as request and response, ACK as response),
// `where type = ...` finds the records of -o json's type, and the
// variant is the declared field that tells them apart (role).
func TestLakeTypeAsJSON(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err)
	}
	capture := filepath.Join(pcapDir, "handcontrol_serial.pcapng")
	var c *shippedCapture
	for _, s := range shippedCaptures(t) {
		if s.path == capture {
			c = &s
		}
	}
	if c == nil {
		t.Fatalf("%s is not a shipped capture", capture)
	}
	out, errOut, code := cli(t, append([]string{"-o", "json", "--no-summary", "-r", capture}, c.args...)...)
	if code != 0 {
		t.Fatalf("json exit %d: %s", code, errOut)
	}
	want := map[string]int{}
	for _, r := range parseJSONL(t, out) {
		if r.Type == "ACK" || r.Type == "GetSettings" {
			var f struct{ Role string }
			if err := json.Unmarshal(r.Fields, &f); err != nil {
				t.Fatal(err)
			}
			want[r.Type+" "+f.Role]++
		}
	}
	if want["ACK response"] == 0 || want["GetSettings request"] == 0 || want["GetSettings response"] == 0 {
		t.Fatalf("the capture no longer has ACK responses and GetSettings requests and responses: %v", want)
	}
	lake := t.TempDir()
	if _, errOut, code := cli(t, append([]string{"-o", "parquet", "--out", lake, "--no-summary", "-r", capture}, c.args...)...); code != 0 {
		t.Fatalf("parquet exit %d: %s", code, errOut)
	}
	glob := duckdb.Quote(filepath.Join(lake, "**", "*.parquet"))
	_, rows := duckdb.Query(t, "SELECT type || ' ' || role, count(*)::VARCHAR FROM read_parquet("+glob+
		", hive_partitioning=true, union_by_name=true) WHERE type = 'ACK' OR type = 'GetSettings' GROUP BY ALL")
	got := counted(rows)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lake: %v, JSON: %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(lake, "proto=handcontrol", "type=GetSettings")); err != nil {
		t.Errorf("no type=GetSettings partition: %v", err)
	}
}
