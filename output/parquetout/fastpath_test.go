package parquetout

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
)

// TestDeclaredOrderAgrees holds the path of records as declared
// (declaredOrder) to the general one (rowBuilder.fields): the same
// records, built into row groups both ways, make the same columns,
// levels and extra_json, for records that take the fast path (keys as
// declared, from the declaration's strings or copies of them) and for
// those that must not (a key missing, moved, repeated or undeclared, a
// value of another kind, a declaration with nested fields).
func TestDeclaredOrderAgrees(t *testing.T) {
	flat := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{
		{Name: "i", Kind: dissect.KindInt}, {Name: "u", Kind: dissect.KindUint},
		{Name: "f", Kind: dissect.KindFloat}, {Name: "g", Kind: dissect.KindFloat32},
		{Name: "b", Kind: dissect.KindBool}, {Name: "s", Kind: dissect.KindString},
		{Name: "r", Kind: dissect.KindBytes}, {Name: "tm", Kind: dissect.KindTime}}}
	values := []dissect.Value{dissect.Int(-3), dissect.Uint(1 << 63), dissect.Float(2.5), dissect.Float32(-1.25),
		dissect.Bool(true), dissect.Str("a\xffb"), dissect.Bytes([]byte{0, 0xff}), dissect.Time(time.Unix(5, 6))}
	// record returns a record of flat's fields, its keys the
	// declaration's strings or (copy) strings of their own, then edited.
	record := func(copyKeys bool, edit func(fs []dissect.Field) []dissect.Field) *dissect.Record {
		r := &dissect.Record{Proto: "p", Type: "t", Src: "a", Dst: "b", Transport: dissect.UDP}
		for i, fd := range flat.Fields {
			k := fd.Name
			if copyKeys {
				k = strings.Clone(k)
			}
			r.Add(k, values[i])
		}
		if edit != nil {
			r.Fields = edit(r.Fields)
		}
		return r
	}
	fast := []*dissect.Record{record(false, nil), record(true, nil)}
	slow := []*dissect.Record{
		record(false, func(fs []dissect.Field) []dissect.Field { return fs[1:] }),                          // missing
		record(false, func(fs []dissect.Field) []dissect.Field { fs[0], fs[1] = fs[1], fs[0]; return fs }), // moved
		record(false, func(fs []dissect.Field) []dissect.Field { fs[7].Key = "i"; return fs }),             // repeated
		record(false, func(fs []dissect.Field) []dissect.Field { fs[7].Key = "new"; return fs }),           // undeclared
		record(false, func(fs []dissect.Field) []dissect.Field { fs[3].Value = dissect.Float(1); return fs }),
		record(false, func(fs []dissect.Field) []dissect.Field { fs[0].Value = dissect.Value{}; return fs }),
		record(false, func(fs []dissect.Field) []dissect.Field { return append(fs, fs[0]) }),
	}
	deltas, delta := deltaRecords(500)
	nest, nested := nested()
	cases := []struct {
		decl       *dissect.TypeDecl
		recs       []*dissect.Record
		fast, slow int // records taking each path
	}{
		{flat, append(append([]*dissect.Record{}, fast...), slow...), len(fast), len(slow)},
		{delta, deltas, len(deltas), 0},
		{nest, nested, 0, len(nested)},
	}
	for _, c := range cases {
		p, err := newPlan(c.decl, false, true)
		if err != nil {
			t.Fatal(err)
		}
		var built [2]*batch
		var extras [2][]bool
		for k, general := range []bool{false, true} {
			b := newBatch(p.specs)
			rb := rowBuilder{general: general, json: output.NewJSONAppender()}
			for _, r := range c.recs {
				extras[k] = append(extras[k], rb.build(b, p, r, "c.pcap"))
			}
			for i := range b.cols {
				b.cols[i].def.done()
				b.cols[i].rep.done()
			}
			built[k] = b
		}
		nfast := 0
		for _, r := range c.recs {
			if declaredOrder(p, r.Fields) {
				nfast++
			}
		}
		if nfast != c.fast || len(c.recs)-nfast != c.slow {
			t.Errorf("%s: %d records as declared, want %d", c.decl.Type, nfast, c.fast)
		}
		if !reflect.DeepEqual(extras[0], extras[1]) {
			t.Errorf("%s: extra_json %v, the general path %v", c.decl.Type, extras[0], extras[1])
		}
		for i := range built[0].cols {
			if f, g := &built[0].cols[i], &built[1].cols[i]; !reflect.DeepEqual(f, g) {
				t.Errorf("%s: column %d: %+v, the general path %+v", c.decl.Type, i, f, g)
			}
		}
		if built[0].rows != built[1].rows || built[0].size != built[1].size {
			t.Errorf("%s: rows %d size %d, the general path %d %d", c.decl.Type, built[0].rows, built[0].size, built[1].rows, built[1].size)
		}
	}
}
