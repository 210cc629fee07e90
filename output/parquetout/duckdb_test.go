package parquetout

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/duckdb"
)

// TestDuckDBReadsNested reads the nested values back with DuckDB, a
// reader that shares no code with the writer: the levels of lists of
// lists and of list items with keys missing are the values written.
func TestDuckDBReadsNested(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err.Error())
	}
	d, recs := nested()
	dir, _ := writeLake(t, []*dissect.TypeDecl{d}, recs...)
	cols, rows := duckdb.Query(t, "SELECT points::VARCHAR, items::VARCHAR, \"none\", nones::VARCHAR, extra_json FROM read_parquet("+
		duckdb.Quote(filepath.Join(dir, "proto=p", "type=curve", "*.parquet"))+") ORDER BY \"offset\"")
	want := [][]any{
		{"[[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]", "[{'id': 1, 'tags': [a, b]}, {'id': NULL, 'tags': []}, {'id': 3, 'tags': NULL}]", "{}", "['{}', '{}']", nil},
		{"[[], [7.0]]", nil, nil, nil, nil},
		{"[]", "[]", nil, nil, nil},
	}
	if got, w := fmt.Sprint(rows), fmt.Sprint(want); got != w {
		t.Errorf("rows\n%s\nwant\n%s", got, w)
	}
	_, rows = duckdb.Query(t, "SELECT typeof(points), typeof(items), typeof(\"none\") FROM read_parquet("+
		duckdb.Quote(filepath.Join(dir, "proto=p", "type=curve", "*.parquet"))+") LIMIT 1")
	if got := fmt.Sprint(rows); got != "[[FLOAT[][] STRUCT(id UBIGINT, tags VARCHAR[])[] VARCHAR]]" {
		t.Errorf("types %s (columns %v)", got, cols)
	}
}

// TestDuckDBFloat32 pins what DuckDB makes of a float32 field's FLOAT
// column: the type FLOAT, the shortest float32 digits as text (those of
// -o json), the exact value when widened.
func TestDuckDBFloat32(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err.Error())
	}
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{{Name: "x", Kind: dissect.KindFloat32}}}
	var recs []*dissect.Record
	for i, f := range []float32{0.1, 3.4028235e38, 1e-45, 123456.79} {
		r := rec("t", "x", dissect.Float32(f))
		r.Offset = int64(i)
		recs = append(recs, r)
	}
	dir, _ := writeLake(t, []*dissect.TypeDecl{d}, recs...)
	_, rows := duckdb.Query(t, "SELECT typeof(x), x::VARCHAR, x::DOUBLE::VARCHAR FROM read_parquet("+
		duckdb.Quote(filepath.Join(dir, "**", "*.parquet"))+") ORDER BY \"offset\"")
	// The widened values are float32(v) in float64 (checked with Go:
	// float64(float32(0.1)) prints 0.10000000149011612).
	want := "[[FLOAT 0.1 0.10000000149011612] [FLOAT 3.4028235e+38 3.4028234663852886e+38] [FLOAT 1e-45 1.401298464324817e-45] [FLOAT 123456.79 123456.7890625]]"
	if got := fmt.Sprint(rows); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
