package parquetout

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// nested returns a declaration with lists of lists, lists of objects and
// objects declared without keys, and records of it (offsets 0, 1, 2):
// keys missing in list items, empty lists at each depth.
func nested() (*dissect.TypeDecl, []*dissect.Record) {
	point := &dissect.FieldDecl{Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat32}}
	item := &dissect.FieldDecl{Kind: dissect.KindObject, Fields: []dissect.FieldDecl{
		{Name: "id", Kind: dissect.KindUint}, {Name: "tags", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindString}}}}
	d := &dissect.TypeDecl{Type: "curve", Fields: []dissect.FieldDecl{
		{Name: "points", Kind: dissect.KindArray, Elem: point},
		{Name: "items", Kind: dissect.KindArray, Elem: item},
		{Name: "none", Kind: dissect.KindObject},
		{Name: "nones", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindObject}},
	}}
	pt := func(fs ...float32) dissect.Field {
		items := make([]dissect.Field, len(fs))
		for i, f := range fs {
			items[i] = dissect.Elem(dissect.Float32(f))
		}
		return dissect.Elem(dissect.Array(items))
	}
	it := func(kv ...dissect.Field) dissect.Field { return dissect.Elem(dissect.Object(kv)) }
	tags := func(ss ...string) dissect.Field {
		items := make([]dissect.Field, len(ss))
		for i, s := range ss {
			items[i] = dissect.Elem(dissect.Str(s))
		}
		return dissect.Field{Key: "tags", Value: dissect.Array(items)}
	}
	empty := dissect.Object(nil)
	recs := []*dissect.Record{
		rec("curve", "points", dissect.Array([]dissect.Field{pt(1, 2, 3), pt(4, 5, 6.5)}),
			"items", dissect.Array([]dissect.Field{
				it(dissect.Field{Key: "id", Value: dissect.Uint(1)}, tags("a", "b")),
				it(tags()),
				it(dissect.Field{Key: "id", Value: dissect.Uint(3)}),
			}),
			"none", empty, "nones", dissect.Array([]dissect.Field{dissect.Elem(empty), dissect.Elem(empty)})),
		rec("curve", "points", dissect.Array([]dissect.Field{pt(), pt(7)})),
		rec("curve", "points", dissect.Array(nil), "items", dissect.Array(nil)),
	}
	for i, r := range recs {
		r.Offset = int64(i)
	}
	return d, recs
}

// TestWriterNested: lists of lists, lists of objects with keys missing,
// and objects declared without keys, read back by the library.
func TestWriterNested(t *testing.T) {
	d, recs := nested()
	dir, extra := writeLake(t, []*dissect.TypeDecl{d}, recs...)
	if extra != 0 {
		t.Errorf("ExtraRows %d", extra)
	}
	s, rows := readRows(t, onlyFile(t, dir, "proto=p/type=curve"))
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"points", "list", "element", "list", "element"}, "FLOAT"},
		{[]string{"items", "list", "element", "id"}, "INT64 INT(64,false)"},
		{[]string{"items", "list", "element", "tags", "list", "element"}, "BYTE_ARRAY STRING"},
		{[]string{"none"}, "BYTE_ARRAY STRING"},
		{[]string{"nones", "list", "element"}, "BYTE_ARRAY STRING"},
	} {
		if got := leafType(t, s, c.path...); got != c.want {
			t.Errorf("%v: type %s, want %s", c.path, got, c.want)
		}
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, want := range []string{
		"[[1 2 3] [4 5 6.5]] [map[id:1 tags:[a b]] map[id:<nil> tags:[]] map[id:3 tags:<nil>]] {} [{} {}] <nil>",
		"[[] [7]] <nil> <nil> <nil> <nil>",
		"[] [] <nil> <nil> <nil>",
	} {
		r := rows[i]
		if got := fmt.Sprint(r["points"], " ", r["items"], " ", r["none"], " ", r["nones"], " ", r["extra_json"]); got != want {
			t.Errorf("row %d: %s\nwant   %s", i, got, want)
		}
	}
}

// TestWriterDepartures: what departs from the declaration, and records
// with no declaration, go to extra_json and are counted; the rest of a
// departing record keeps its columns.
func TestWriterDepartures(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{
		{Name: "a", Kind: dissect.KindInt},
		{Name: "f", Kind: dissect.KindFloat32},
		{Name: "o", Kind: dissect.KindObject, Fields: []dissect.FieldDecl{{Name: "k", Kind: dissect.KindInt}}},
		{Name: "l", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindInt}},
		{Name: "e", Kind: dissect.KindObject},
	}}
	ok := rec("t", "a", dissect.Int(1))
	kind := rec("t", "a", dissect.Str("one"), "f", dissect.Float(1.5)) // float64 where float32 is declared
	newKey := rec("t", "a", dissect.Int(2), "new", dissect.Uint(9))
	repeated := rec("t", "a", dissect.Int(3), "a", dissect.Int(4))
	deep := rec("t", "a", dissect.Int(5),
		"o", dissect.Object([]dissect.Field{{Key: "k", Value: dissect.Int(1)}, {Key: "z", Value: dissect.Int(2)}}),
		"l", dissect.Array([]dissect.Field{dissect.Elem(dissect.Int(1)), dissect.Elem(dissect.Str("x"))}),
		"e", dissect.Object([]dissect.Field{{Key: "k", Value: dissect.Bool(true)}}))
	objRepeat := rec("t", "o", dissect.Object([]dissect.Field{{Key: "k", Value: dissect.Int(1)}, {Key: "k", Value: dissect.Int(2)}}))
	nul := rec("t", "a", dissect.Value{})
	undeclared := rec("u", "x", dissect.Float(math.NaN()), "s", dissect.Str("q\"\n"), "b", dissect.Bytes([]byte{1, 0xff}))
	dir, extra := writeLake(t, []*dissect.TypeDecl{d}, ok, kind, newKey, repeated, deep, objRepeat, nul, undeclared)
	if extra != 7 {
		t.Errorf("ExtraRows %d, want 7", extra)
	}
	_, rows := readRows(t, onlyFile(t, dir, "proto=p/type=t"))
	want := []struct {
		a     any
		extra any
	}{
		{int64(1), nil},
		{nil, `{"a":"one","f":1.5}`},
		{int64(2), `{"new":9}`},
		{int64(3), `{"a":4}`},
		{int64(5), `{"o":{"k":1,"z":2},"l":[1,"x"],"e":{"k":true}}`},
		{nil, `{"o":{"k":1,"k":2}}`},
		{nil, `{"a":null}`},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows", len(rows))
	}
	for i, w := range want {
		if rows[i]["a"] != w.a || rows[i]["extra_json"] != w.extra {
			t.Errorf("row %d: a %#v extra_json %#v, want %#v %#v", i, rows[i]["a"], rows[i]["extra_json"], w.a, w.extra)
		}
	}
	s, rows := readRows(t, onlyFile(t, dir, "proto=p/type=u")) // the envelope but proto and type (8 columns), warnings, extra_json, capture
	if len(s.Columns()) != 11 || len(rows) != 1 || rows[0]["extra_json"] != `{"x":"NaN","s":"q\"\n","b":"01ff"}` {
		t.Errorf("undeclared: %d columns, rows %v", len(s.Columns()), rows)
	}
}

// TestWriterBatchesCopy writes rows of distinct strings and bytes across
// many batches and row groups, from records whose buffers are reused:
// every value reads back as written.
func TestWriterBatchesCopy(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{
		{Name: "s", Kind: dissect.KindString}, {Name: "b", Kind: dissect.KindBytes},
		{Name: "l", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindString}}}}
	dir := t.TempDir()
	w, err := New(dir, Options{Decl: declOf(d), RowGroupRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	const n = 1000
	for i := range n {
		s := fmt.Sprintf("row %d %s", i, strings.Repeat("x", i%50))
		copy(buf, s)
		r := rec("t", "s", dissect.Str(string(buf[:len(s)])), "b", dissect.Bytes(buf[:len(s)]),
			"l", dissect.Array([]dissect.Field{dissect.Elem(dissect.Str(s)), dissect.Elem(dissect.Str(s[:4]))}))
		r.Src = s
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
		clear(buf)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, rows := readRows(t, onlyFile(t, dir, "proto=p/type=t"))
	if len(rows) != n {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		s := fmt.Sprintf("row %d %s", i, strings.Repeat("x", i%50))
		if r["s"] != s || r["b"] != s || r["src"] != s || fmt.Sprint(r["l"]) != fmt.Sprint([]string{s, s[:4]}) {
			t.Fatalf("row %d: %v", i, r)
		}
	}
}

// TestWriterAgreesWithCheck writes random records, most as declared and
// some departing at any depth (kinds, keys undeclared or repeated,
// nulls), against the nested declaration, which has no required keys and
// no enums: a row has an extra_json exactly when dissect's own checker
// rejects its record, and nothing panics.
func TestWriterAgreesWithCheck(t *testing.T) {
	d, _ := nested()
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []*dissect.Record
	bad := int64(0)
	for i := range 2000 {
		r := &dissect.Record{Proto: "p", Type: "curve", Offset: int64(i)}
		r.Fields = randomFields(rng, d.Fields)
		if d.Check(r) != nil {
			bad++
		}
		recs = append(recs, r)
	}
	t.Logf("%d of 2000 records depart", bad)
	if bad < 100 || bad > 1900 {
		t.Fatalf("%d of 2000 records depart: the generator is off", bad)
	}
	dir, extra := writeLake(t, []*dissect.TypeDecl{d}, recs...)
	if extra != bad {
		t.Errorf("ExtraRows %d, %d records depart", extra, bad)
	}
	_, rows := readRows(t, onlyFile(t, dir, "proto=p/type=curve"))
	if len(rows) != len(recs) {
		t.Fatalf("%d rows", len(rows))
	}
	for i, row := range rows {
		err := d.Check(recs[i])
		if (row["extra_json"] != nil) != (err != nil) {
			t.Errorf("record %d: check %v, extra_json %v", i, err, row["extra_json"])
		}
	}
}

// randomFields returns fields for the declared fs: a random subset, in
// order, of values as declared, with now and then a value of another
// kind, an undeclared or repeated key, or a null.
func randomFields(rng *rand.Rand, fs []dissect.FieldDecl) []dissect.Field {
	var out []dissect.Field
	for i := range fs {
		if rng.IntN(3) == 0 {
			continue
		}
		out = append(out, dissect.Field{Key: fs[i].Name, Value: randomValue(rng, &fs[i])})
		if rng.IntN(150) == 0 {
			out = append(out, out[len(out)-1]) // repeated
		}
	}
	if rng.IntN(150) == 0 {
		out = append(out, dissect.Field{Key: "undeclared", Value: dissect.Int(1)})
	}
	return out
}

func randomValue(rng *rand.Rand, f *dissect.FieldDecl) dissect.Value {
	if rng.IntN(150) == 0 {
		switch rng.IntN(4) {
		case 0:
			return dissect.Value{}
		case 1:
			return dissect.Float(1.5)
		case 2:
			return dissect.Array([]dissect.Field{dissect.Elem(dissect.Str("x"))})
		default:
			return dissect.Object([]dissect.Field{{Key: "k", Value: dissect.Int(1)}})
		}
	}
	switch f.Kind {
	case dissect.KindArray:
		items := make([]dissect.Field, rng.IntN(4))
		for i := range items {
			items[i] = dissect.Elem(randomValue(rng, f.Elem))
		}
		return dissect.Array(items)
	case dissect.KindObject:
		return dissect.Object(randomFields(rng, f.Fields))
	case dissect.KindFloat32:
		return dissect.Float32(rng.Float32())
	case dissect.KindUint:
		return dissect.Uint(rng.Uint64())
	case dissect.KindString:
		return dissect.Str(strings.Repeat("s", rng.IntN(5)))
	}
	panic("randomValue: kind not in the nested declaration: " + f.Kind.String())
}
