package parquetout

import (
	"fmt"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestChunkedColumns: a row group of more rows than a worker expands at
// once (chunkSlots) is written whole: each row's optional string (runs
// of one value, nulls), int and float32, and a list, read back.
func TestChunkedColumns(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{
		{Name: "s", Kind: dissect.KindString}, {Name: "n", Kind: dissect.KindInt},
		{Name: "x", Kind: dissect.KindFloat32},
		{Name: "a", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindInt}}}}
	const rows = 3*chunkSlots + 123
	names := []string{"alpha", "b", ""}
	var recs []*dissect.Record
	for i := range rows {
		r := rec("t", "n", dissect.Int(int64(i)))
		if i%7 != 3 { // runs of a few equal strings, nulls between
			r.Add("s", dissect.Str(names[i/5%3]))
		}
		if i%2 == 0 {
			r.Add("x", dissect.Float32(float32(i)/4))
		}
		if i%3 == 0 {
			r.Add("a", dissect.Array([]dissect.Field{dissect.Elem(dissect.Int(int64(i))), dissect.Elem(dissect.Int(-1))}))
		}
		recs = append(recs, r)
	}
	dir, extra := writeLake(t, []*dissect.TypeDecl{d}, recs...)
	if extra != 0 {
		t.Errorf("ExtraRows %d", extra)
	}
	_, got := readRows(t, onlyFile(t, dir, "proto=p/type=t"))
	if len(got) != rows {
		t.Fatalf("%d rows, want %d", len(got), rows)
	}
	bad := 0
	for i, g := range got {
		var s, x, a any
		if i%7 != 3 {
			s = names[i/5%3]
		}
		if i%2 == 0 {
			x = float32(i) / 4
		}
		if i%3 == 0 {
			a = fmt.Sprint([]any{int64(i), int64(-1)})
		}
		ga := any(nil)
		if g["a"] != nil {
			ga = fmt.Sprint(g["a"])
		}
		if g["n"] != int64(i) || g["s"] != s || g["x"] != x || ga != a || g["capture"] != "c.pcap" {
			if bad++; bad < 5 {
				t.Errorf("row %d: %v, want s %v x %v a %v", i, g, s, x, a)
			}
		}
	}
}
