package parquetout

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestTableCache: records of one type string (one address) go to the
// table of their own proto and, for a type with variants, of the variant
// each one's field selects, in whatever order they come; a declaration
// without variant is asked for once per proto and type.
func TestTableCache(t *testing.T) {
	req := &dissect.TypeDecl{Type: "GetSettings", Variant: &dissect.Variant{Key: "direction", Value: "request"},
		Fields: []dissect.FieldDecl{{Name: "direction", Kind: dissect.KindString}, {Name: "code", Kind: dissect.KindUint}}}
	resp := &dissect.TypeDecl{Type: "GetSettings", Variant: &dissect.Variant{Key: "direction", Value: "response"},
		Fields: []dissect.FieldDecl{{Name: "direction", Kind: dissect.KindString}, {Name: "gain", Kind: dissect.KindFloat}}}
	pos := &dissect.TypeDecl{Type: "pos", Fields: []dissect.FieldDecl{{Name: "x", Kind: dissect.KindFloat}}}
	decl := declOf(req, resp, pos)
	calls := map[string]int{}
	dir := t.TempDir()
	w, err := New(dir, Options{Capture: "c.pcap", Workers: 1, Decl: func(r *dissect.Record) *dissect.TypeDecl {
		calls[r.Proto+" "+r.Type]++
		return decl(r)
	}})
	if err != nil {
		t.Fatal(err)
	}
	typ := "GetSettings"
	in := []*dissect.Record{
		rec(typ, "direction", dissect.Str("request"), "code", dissect.Uint(1)),
		rec(typ, "direction", dissect.Str("response"), "gain", dissect.Float(0.5)),
		rec(typ, "direction", dissect.Str("sideways")), // no variant: undeclared, own type's table
		rec(typ, "direction", dissect.Str("request"), "code", dissect.Uint(2)),
		rec(typ, "direction", dissect.Str("response"), "gain", dissect.Float(1.5)),
	}
	for i := 0; i < 3; i++ { // the same type string in another proto after
		in = append(in, rec("pos", "x", dissect.Float(float64(i))))
	}
	for i := 0; i < 3; i++ {
		q := rec("pos", "x", dissect.Float(float64(10+i)))
		q.Proto = "q"
		in = append(in, q)
	}
	for _, r := range in {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if calls["p pos"] != 1 || calls["q pos"] != 1 || calls["p GetSettings"] != 5 {
		t.Errorf("Decl calls %v, want p pos 1, q pos 1, p GetSettings 5", calls)
	}
	_, rows := readRows(t, partWith(t, dir, "proto=p/type=GetSettings", "direction", "request"))
	if len(rows) != 2 || rows[0]["code"] != int64(1) || rows[1]["code"] != int64(2) {
		t.Errorf("request: %v", rows)
	}
	_, rows = readRows(t, partWith(t, dir, "proto=p/type=GetSettings", "direction", "response"))
	if len(rows) != 2 || rows[0]["gain"] != 0.5 || rows[1]["gain"] != 1.5 {
		t.Errorf("response: %v", rows)
	}
	_, rows = readRows(t, partWith(t, dir, "proto=p/type=GetSettings", "extra_json", `{"direction":"sideways"}`))
	if len(rows) != 1 {
		t.Errorf("undeclared variant: %v", rows)
	}
	for proto, want := range map[string][]float64{"p": {0, 1, 2}, "q": {10, 11, 12}} {
		_, rows = readRows(t, onlyFile(t, dir, "proto="+proto+"/type=pos"))
		if len(rows) != 3 {
			t.Errorf("%s pos: %v", proto, rows)
			continue
		}
		for i, x := range want {
			if rows[i]["x"] != x {
				t.Errorf("%s pos row %d: %v, want x %v", proto, i, rows[i], x)
			}
		}
	}
}
