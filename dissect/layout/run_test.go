package layout

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// runSchema is one type whose fields are all of fixed size, in every
// read a run has (widths 1, 2, 3, 4, 8 in both orders, signed, floats,
// bool, enum, scale), then bytes to the end. The values below are worked
// out by hand from the bytes.
func runSchema() *Schema {
	return &Schema{
		Endian: LittleEndian,
		Types: []Type{{Name: "m", Seq: []Field{
			{ID: "a", Type: "u1"},                // 01
			{ID: "b", Type: "s2be"},              // ff fe: -2
			{ID: "c", Type: "u3le"},              // 01 02 03: 0x030201
			{ID: "d", Type: "s3be"},              // ff ff ff: -1
			{ID: "e", Type: "f4le"},              // 00 00 c0 3f: 1.5
			{ID: "f", Type: "f2be"},              // 3c 00: 1.0
			{ID: "g", Type: "u8be"},              // 00 .. 00 2a: 42
			{ID: "h", Type: "bool"},              // 01
			{ID: "i", Type: "u1", Enum: "color"}, // 02: blue
			{ID: "j", Type: "s1", Scale: 0.5},    // fe: -1.0
			{Type: "u2le"},                       // 34 12, not recorded
			{ID: "k", Type: "f8le"},              // 00 .. 00 f0 3f: 1.0
			{ID: "rest", SizeEOS: true},
		}}},
		Enums: []Enum{{Name: "color", Values: []EnumValue{{1, "red"}, {2, "blue"}}}},
	}
}

var runBytes = []byte{
	0x01, 0xff, 0xfe, 0x01, 0x02, 0x03, 0xff, 0xff, 0xff, 0x00, 0x00, 0xc0, 0x3f, 0x3c, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0x2a, 0x01, 0x02, 0xfe, 0x34, 0x12,
	0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0xaa,
}

var runWant = []dissect.Field{
	{Key: "a", Value: dissect.Uint(1)},
	{Key: "b", Value: dissect.Int(-2)},
	{Key: "c", Value: dissect.Uint(0x030201)},
	{Key: "d", Value: dissect.Int(-1)},
	{Key: "e", Value: dissect.Float32(1.5)},
	{Key: "f", Value: dissect.Float32(1)},
	{Key: "g", Value: dissect.Uint(42)},
	{Key: "h", Value: dissect.Bool(true)},
	{Key: "i", Value: dissect.Str("blue")},
	{Key: "j", Value: dissect.Float(-1)},
	{Key: "k", Value: dissect.Float(1)},
	{Key: "rest", Value: dissect.Bytes([]byte{0xaa})},
}

// TestRun: the run of fixed fields reads every width, order and kind
// right, and a run whose bytes end early fails at the field the bytes
// end in, keeping the fields before it.
func TestRun(t *testing.T) {
	p := compile(t, runSchema())
	// 12 fields in the run; the unrecorded u2le is padding, not read
	if r := p.types[0].fields[0].run; r == nil || r.n != 12 || len(r.ops) != 11 || r.size != len(runBytes)-1 {
		t.Fatalf("run of the first field: %+v", r)
	}
	d := p.NewDecoder()
	r := &dissect.Record{}
	n, err := d.Decode(r, 0, runBytes)
	if err != nil || n != len(runBytes) {
		t.Fatalf("Decode = %d, %v", n, err)
	}
	if len(r.Fields) != len(runWant) {
		t.Fatalf("fields %v", r.Fields)
	}
	for i, f := range runWant {
		if r.Fields[i].Key != f.Key || !r.Fields[i].Value.Equal(f.Value) {
			t.Errorf("field %d = %s %#v, want %s %#v", i, r.Fields[i].Key, r.Fields[i].Value, f.Key, f.Value)
		}
	}
	if v := d.Raw(1); v != -2 {
		t.Errorf("Raw(b) = %d", v)
	}
	// The field each byte belongs to; cut there, Decode fails at it.
	starts := []int{0, 1, 3, 6, 9, 13, 15, 23, 24, 25, 26, 28, 36}
	for cut := range len(runBytes) - 1 {
		k := 0
		for k+1 < len(starts) && starts[k+1] <= cut {
			k++
		}
		// the field whose bytes the cut ends in (or before)
		r := &dissect.Record{}
		_, err := d.Decode(r, 0, runBytes[:cut])
		var de *DecodeError
		if !errors.As(err, &de) || !de.Short || de.Offset != starts[k] {
			t.Errorf("cut %d: %v, want a short error at %d", cut, err, starts[k])
			continue
		}
		recorded := 0
		for _, f := range runSchema().Types[0].Seq[:k] {
			if f.ID != "" {
				recorded++
			}
		}
		if len(r.Fields) != recorded || recorded > 0 && r.Fields[recorded-1].Key != runWant[recorded-1].Key {
			t.Errorf("cut %d: fields %v, want the first %d", cut, r.Fields, recorded)
		}
	}
}

// TestRunValueLimit: a run that would pass the values limit is read field
// by field, and fails where the limit is passed.
func TestRunValueLimit(t *testing.T) {
	p, err := Compile(runSchema(), Limits{MaxValues: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.NewDecoder().Decode(&dissect.Record{}, 0, runBytes)
	var de *DecodeError
	if !errors.As(err, &de) || de.Short || de.Offset != 6 || de.Field != "d" {
		t.Errorf("Decode = %v, want the 4th value (d, at 6) over the limit", err)
	}
}

// TestCheck: Check gives Decode's size, errors and warnings and records
// nothing.
func TestCheck(t *testing.T) {
	p := compile(t, runSchema())
	bad := slices.Clone(runBytes)
	bad[23], bad[24] = 7, 9 // h not 0 or 1, i not in its enum: two warnings
	for _, in := range [][]byte{runBytes, bad, runBytes[:20], runBytes[:1], nil} {
		d := p.NewDecoder()
		rd := &dissect.Record{Type: "m"}
		n1, err1 := d.Decode(rd, 0, in)
		rc := &dissect.Record{Type: "m", Fields: []dissect.Field{{Key: "before", Value: dissect.Uint(1)}}}
		n2, err2 := d.Check(rc, 0, in)
		if n1 != n2 || (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Errorf("% x: Decode %d, %v; Check %d, %v", in, n1, err1, n2, err2)
		}
		if !slices.Equal(rd.Warnings, rc.Warnings) {
			t.Errorf("% x: warnings %q, Check's %q", in, rd.Warnings, rc.Warnings)
		}
		if len(rc.Fields) != 1 || rc.Fields[0].Key != "before" {
			t.Errorf("% x: Check left fields %v", in, rc.Fields)
		}
	}
	// Check still reads what a later field's size refers to.
	s := &Schema{Types: []Type{{Name: "t", Seq: []Field{{ID: "n", Type: "u1"}, {ID: "x", Type: "u2"}, {ID: "s", Size: FieldRef("n")}, {ID: "tail", Type: "u1"}}}}}
	p = compile(t, s)
	in := []byte{2, 0, 0, 0xaa, 0xbb, 5}
	if n, err := p.NewDecoder().Check(&dissect.Record{}, 0, in); n != 6 || err != nil {
		t.Errorf("Check(sized) = %d, %v, want 6", n, err)
	}
}

// TestSure: Sure answers only where Check would find nothing, with
// Check's size.
func TestSure(t *testing.T) {
	s := &Schema{Types: []Type{
		{Name: "fixed", Seq: []Field{{ID: "a", Type: "u1"}, {ID: "b", Type: "u2"}}},
		{Name: "tail", Seq: []Field{{ID: "a", Type: "u1"}, {ID: "rest", SizeEOS: true}}},
		{Name: "warns", Seq: []Field{{ID: "a", Type: "u1"}, {ID: "on", Type: "bool"}}},
		{Name: "sized", Seq: []Field{{ID: "n", Type: "u1"}, {ID: "s", Size: FieldRef("n")}}},
	}}
	p := compile(t, s)
	for _, tc := range []struct {
		typ  string
		n    int
		size int
		sure bool
	}{
		{"fixed", 3, 3, true}, {"fixed", 9, 3, true}, {"fixed", 2, 0, false},
		{"tail", 1, 1, true}, {"tail", 7, 7, true}, {"tail", 0, 0, false},
		{"warns", 5, 0, false}, {"sized", 5, 0, false},
	} {
		size, sure := p.Sure(p.Type(tc.typ), tc.n)
		if size != tc.size || sure != tc.sure {
			t.Errorf("Sure(%s, %d) = %d, %v; want %d, %v", tc.typ, tc.n, size, sure, tc.size, tc.sure)
		}
		if !sure {
			continue
		}
		r := &dissect.Record{}
		in := make([]byte, tc.n)
		if n, err := p.NewDecoder().Check(r, p.Type(tc.typ), in); n != size || err != nil || len(r.Warnings) > 0 {
			t.Errorf("%s, %d bytes: Check = %d, %v %q", tc.typ, tc.n, n, err, r.Warnings)
		}
	}
}

// general returns p compiled again without runs: every field is read by
// the general path, the reference the fast paths must agree with.
func general(t testing.TB, s *Schema) *Plan {
	p, err := Compile(s, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.types {
		p.types[i].flat, p.types[i].tail = nil, nil
		for k := range p.types[i].fields {
			p.types[i].fields[k].run = nil
		}
	}
	return p
}

// agreeSchema mixes runs with what breaks them: a bit field, a range, a
// sized field, a nested type, a repeat.
func agreeSchema() *Schema {
	s := runSchema()
	s.Types[0].Name = "flat"
	s.Types = append(s.Types,
		Type{Name: "inner", Seq: []Field{{ID: "p", Type: "u2be"}, {ID: "q", Type: "bool"}}},
		Type{Name: "mixed", Seq: []Field{
			{ID: "n", Type: "u1"}, {ID: "s", Type: "s2"}, {ID: "hi", Type: "b3"}, {ID: "lo", Type: "b5"},
			{ID: "r", Type: "u1", Valid: &Valid{Max: ptr(int64(200))}}, {ID: "f", Type: "f4"},
			{ID: "data", Size: FieldRef("n")}, {ID: "in", Type: "inner"}, {ID: "k", Type: "u1"},
			{ID: "xs", Type: "u1", Repeat: RepeatExpr, RepeatExpr: FieldRef("k")}, {ID: "e", Type: "u1", Enum: "color"},
		}})
	return s
}

// agree decodes b as every type with and without runs, and with Check:
// the same size, error, fields and warnings.
func agree(t *testing.T, fast, ref *Plan, b []byte) {
	for ti := range fast.types {
		rf, rr, rc := &dissect.Record{Type: "x"}, &dissect.Record{Type: "x"}, &dissect.Record{Type: "x"}
		df, dr := fast.NewDecoder(), ref.NewDecoder()
		nf, ef := df.Decode(rf, ti, b)
		nr, er := dr.Decode(rr, ti, b)
		nc, ec := fast.NewDecoder().Check(rc, ti, b)
		if nf != nr || nc != nr || (ef == nil) != (er == nil) || (ec == nil) != (er == nil) ||
			er != nil && (ef.Error() != er.Error() || ec.Error() != er.Error()) {
			t.Fatalf("%s % x: fast %d %v, general %d %v, check %d %v", fast.Name(ti), b, nf, ef, nr, er, nc, ec)
		}
		if !slices.Equal(rf.Warnings, rr.Warnings) || !slices.Equal(rc.Warnings, rr.Warnings) {
			t.Fatalf("%s % x: warnings %q, general %q, check %q", fast.Name(ti), b, rf.Warnings, rr.Warnings, rc.Warnings)
		}
		if len(rf.Fields) != len(rr.Fields) || len(rc.Fields) != 0 {
			t.Fatalf("%s % x: fields %v, general %v, check %v", fast.Name(ti), b, rf.Fields, rr.Fields, rc.Fields)
		}
		for i := range rf.Fields {
			if rf.Fields[i].Key != rr.Fields[i].Key || !rf.Fields[i].Value.Equal(rr.Fields[i].Value) {
				t.Fatalf("%s % x: field %d %v, general %v", fast.Name(ti), b, i, rf.Fields[i], rr.Fields[i])
			}
		}
		for k := range fast.types[ti].fields { // the slots Slot gives (padding has none)
			if f := &fast.types[ti].fields[k]; ef == nil && f.isInt() && f.id != "" && df.Raw(k) != dr.Raw(k) {
				t.Fatalf("%s % x: Raw(%d) %d, general %d", fast.Name(ti), b, k, df.Raw(k), dr.Raw(k))
			}
		}
	}
}

// TestRunsAgree: on every prefix of the worked bytes and on random bytes,
// the fast paths (runs, the flat type, Check) decode exactly as the
// general path does.
func TestRunsAgree(t *testing.T) {
	fast, ref := compile(t, agreeSchema()), general(t, agreeSchema())
	for i := range len(runBytes) + 1 {
		agree(t, fast, ref, runBytes[:i])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		b := make([]byte, rng.IntN(48))
		for i := range b {
			b[i] = byte(rng.UintN(256))
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(3)) // small counts, sizes and bools
			}
		}
		agree(t, fast, ref, b)
	}
}

func FuzzRunsAgree(f *testing.F) {
	f.Add(runBytes)
	f.Add([]byte{2, 0, 0, 0xa5, 9, 0, 0, 0x80, 0x3f, 7, 8, 0, 1, 1, 2, 3})
	s := agreeSchema()
	f.Fuzz(func(t *testing.T, b []byte) {
		agree(t, compile(t, s), general(t, s), b)
	})
}
