package parquetout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
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
		if g["n"] != int64(i) || g["s"] != s || g["x"] != x || ga != a || g["capture"] != "c.pcap" || g["warnings"] != nil {
			if bad++; bad < 5 {
				t.Errorf("row %d: %v, want s %v x %v a %v", i, g, s, x, a)
			}
		}
	}
}

// TestEnvelopeColumns: the common columns are the envelope's JSON keys
// (dissect.Envelope, in its order) but the partitions' (proto, type),
// then the declared fields, warnings, extra_json and capture; each row
// holds the record's value of each key (a time as nanoseconds), so that
// a key added to the envelope is a column of the lake with no list here
// to change.
func TestEnvelopeColumns(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{{Name: "x", Kind: dissect.KindInt}}}
	recs := []*dissect.Record{
		{Proto: "p", Type: "t", Time: time.Unix(1700000000, 123456789), Transport: dissect.UDP, Stream: 7, Src: "10.0.0.1:5", Dst: "10.0.0.2:6", Offset: 40, Length: 12},
		{Proto: "p", Type: "t", Time: time.Unix(-5, 1), Transport: dissect.TCP, Stream: 7, Src: "a\xffb", Dst: "[::1]:9", Offset: 52, Length: 12},
	}
	dir := t.TempDir()
	w, err := New(dir, Options{Decl: declOf(d), Capture: "c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Add("x", dissect.Int(1))
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, rows := readRows(t, onlyFile(t, dir, "proto=p/type=t"))
	var want []string
	for _, k := range dissect.Envelope() {
		if k.JSON && k.Name != "proto" && k.Name != "type" {
			want = append(want, k.Name)
		}
	}
	want = append(want, "x", "warnings.list.element", "extra_json", "capture")
	if got := s.Columns(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("columns %v, want %v", got, want)
	}
	for i, r := range recs {
		for _, k := range dissect.Envelope() {
			if !k.JSON || k.Name == "proto" || k.Name == "type" {
				continue
			}
			v, _ := k.Values(r)
			var w any
			switch k.Kind {
			case dissect.KindTime, dissect.KindInt:
				w = v[0].Int()
			default:
				w = output.ValidUTF8(v[0].Str())
			}
			if rows[i][k.Name] != w {
				t.Errorf("row %d: %s = %v, want %v", i, k.Name, rows[i][k.Name], w)
			}
		}
	}
}

// TestEnvelopeValuesPath: a row built with every envelope column read
// through the envelope's Values (the path of a key the writer does not
// know) equals the row built from the record's fields.
func TestEnvelopeValuesPath(t *testing.T) {
	p, err := newPlan(nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	slow := *p
	slow.env = append([]envColumn(nil), p.env...)
	for i := range slow.env {
		slow.env[i].from = dissect.FieldValues
	}
	r := &dissect.Record{Proto: "p", Type: "t", Time: time.Unix(1700000000, 5), Transport: dissect.Serial, Stream: 3,
		Src: "/dev/ttyUSB0", Dst: "host\xfe", Offset: 99, Length: 4, Frame: 12}
	var rb rowBuilder
	rb.json = output.NewJSONAppender()
	fast, viaValues := newBatch(p.specs), newBatch(p.specs)
	for range 3 {
		rb.build(fast, p, r, "c")
		rb.build(viaValues, &slow, r, "c")
	}
	// The values as the column writers get them (the storage differs:
	// stream and length are kept as runs from the fields).
	values := func(b *batch) string {
		var out []string
		for i := range b.cols {
			var cur cursor
			for vs := b.cols[i].appendSlots(nil, &cur, i); len(vs) > 0; vs = b.cols[i].appendSlots(nil, &cur, i) {
				for _, v := range vs {
					out = append(out, fmt.Sprintf("%d:%v/%d/%d", i, v, v.DefinitionLevel(), v.RepetitionLevel()))
				}
			}
		}
		return strings.Join(out, " ")
	}
	if got, want := values(viaValues), values(fast); got != want || !strings.Contains(want, "host") {
		t.Errorf("through Values:\n%s\nfrom the fields:\n%s", got, want)
	}
}
