package layout

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// The expected values below were worked out by hand from the bytes (each
// noted beside its field), not by running the decoder.

func ptr[T any](v T) *T { return &v }

func compile(t *testing.T, s *Schema) *Plan {
	t.Helper()
	p, err := Compile(s, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func decode(t *testing.T, p *Plan, typ string, b []byte) (*dissect.Record, int) {
	t.Helper()
	r := &dissect.Record{}
	n, err := p.NewDecoder().Decode(r, p.Type(typ), b)
	if err != nil {
		t.Fatalf("decode %s % x: %v", typ, b, err)
	}
	return r, n
}

func want(t *testing.T, r *dissect.Record, key string, v dissect.Value) {
	t.Helper()
	got, ok := r.Fields.Get(key)
	if !ok {
		t.Fatalf("no field %q in %v", key, r.Fields)
	}
	if !got.Equal(v) {
		t.Errorf("%s = %#v, want %#v", key, got, v)
	}
}

// roundTrip encodes the decoded fields back and wants the same bytes.
func roundTrip(t *testing.T, p *Plan, typ string, r *dissect.Record, b []byte) {
	t.Helper()
	out, err := p.Append(nil, p.Type(typ), r.Fields)
	if err != nil {
		t.Fatalf("encode %s: %v", typ, err)
	}
	if !bytes.Equal(out, b) {
		t.Errorf("encode %s: % x, want % x", typ, out, b)
	}
}

func TestIntegersBothOrders(t *testing.T) {
	p := compile(t, &Schema{Endian: LittleEndian, Types: []Type{{Name: "m", Seq: []Field{
		{ID: "a", Type: "u2be"}, // 01 02 → 0x0102 = 258
		{ID: "b", Type: "u2"},   // 01 02 → le default: 0x0201 = 513
		{ID: "c", Type: "s2be"}, // ff fe → -2
		{ID: "d", Type: "u3"},   // 01 02 03 → 0x030201 = 197121
		{ID: "e", Type: "s1"},   // 80 → -128
		{ID: "f", Type: "u8be"}, // ff×8 → 18446744073709551615
		{ID: "g", Type: "s3be"}, // ff ff 00 → -256
	}}}})
	b := []byte{1, 2, 1, 2, 0xff, 0xfe, 1, 2, 3, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}
	r, n := decode(t, p, "m", b)
	if n != len(b) {
		t.Fatalf("read %d of %d bytes", n, len(b))
	}
	want(t, r, "a", dissect.Uint(258))
	want(t, r, "b", dissect.Uint(513))
	want(t, r, "c", dissect.Int(-2))
	want(t, r, "d", dissect.Uint(197121))
	want(t, r, "e", dissect.Int(-128))
	want(t, r, "f", dissect.Uint(math.MaxUint64))
	want(t, r, "g", dissect.Int(-256))
	roundTrip(t, p, "m", r, b)
}

func TestBitFields(t *testing.T) {
	seq := []Field{{ID: "hi", Type: "b3"}, {ID: "lo", Type: "b5"}, {ID: "w", Type: "b12"}, {ID: "x", Type: "u1"}}
	// a6 = 1010 0110; 12 bits from ab cd, then the last 4 bits of cd are
	// skipped as the u1 aligns: be: hi = 101 = 5, lo = 00110 = 6,
	// w = 1010 1011 1100 = 0xabc.
	b := []byte{0xa6, 0xab, 0xcd, 0x07}
	p := compile(t, &Schema{Types: []Type{{Name: "m", Seq: seq}}})
	r, _ := decode(t, p, "m", b)
	want(t, r, "hi", dissect.Uint(5))
	want(t, r, "lo", dissect.Uint(6))
	want(t, r, "w", dissect.Uint(0xabc))
	want(t, r, "x", dissect.Uint(7))
	// le: hi = the 3 low bits of a6 = 110 = 6, lo = the 5 high = 10100 = 20,
	// w = the 8 bits of ab then the low 4 of cd (d) above them = 0xdab.
	p = compile(t, &Schema{BitEndian: LittleEndian, Types: []Type{{Name: "m", Seq: seq}}})
	r, _ = decode(t, p, "m", b)
	want(t, r, "hi", dissect.Uint(6))
	want(t, r, "lo", dissect.Uint(20))
	want(t, r, "w", dissect.Uint(0xdab))
}

func TestFloatsAndTransforms(t *testing.T) {
	p := compile(t, &Schema{Types: []Type{{Name: "m", Seq: []Field{
		{ID: "one", Type: "f4"},                                  // 3f 80 00 00 = 1.0
		{ID: "half", Type: "f2"},                                 // c0 00 = -2.0 (binary16)
		{ID: "d", Type: "f8le"},                                  // 00…f0 3f = 1.0
		{ID: "deg", Type: "u1", Scale: 360.0 / 256, Unit: "deg"}, // 40 = 64 → 90°
		{ID: "q", Type: "s2", Scale: 1.0 / 256},                  // ff 80 = -128 → -0.5 (Q8.8)
		{ID: "t", Type: "u1", Scale: 0.5, Offset: -40},           // 64 = 100 → 10
	}}}})
	b := []byte{0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x40, 0xff, 0x80, 0x64}
	r, _ := decode(t, p, "m", b)
	want(t, r, "one", dissect.Float32(1))
	want(t, r, "half", dissect.Float32(-2))
	want(t, r, "d", dissect.Float(1))
	want(t, r, "deg", dissect.Float(90))
	want(t, r, "q", dissect.Float(-0.5))
	want(t, r, "t", dissect.Float(10))
	roundTrip(t, p, "m", r, b)
	if k := p.Fields(p.Type("m"))[3]; k.Kind != dissect.KindFloat || k.Unit != "deg" {
		t.Errorf("deg declared %+v", k)
	}
}

func TestBytesAndText(t *testing.T) {
	p := compile(t, &Schema{Types: []Type{{Name: "m", Seq: []Field{
		{Contents: []byte{0xca, 0xfe}},
		{ID: "n", Type: "u1"},
		{ID: "data", Size: FieldRef("n")},                                  // 2 bytes: 01 02
		{ID: "name", Type: "strz"},                                         // "hi" 00
		{ID: "pad", Type: "str", Size: Num(4), PadRight: ptr(byte(' '))},   // "ab  "
		{ID: "fixed", Type: "str", Size: Num(4), Terminator: ptr(byte(0))}, // "x" 00 00 00
		{ID: "rest", SizeEOS: true},                                        // 09
	}}}})
	b := []byte{0xca, 0xfe, 2, 1, 2, 'h', 'i', 0, 'a', 'b', ' ', ' ', 'x', 0, 0, 0, 9}
	r, _ := decode(t, p, "m", b)
	want(t, r, "n", dissect.Uint(2))
	want(t, r, "data", dissect.Bytes([]byte{1, 2}))
	want(t, r, "name", dissect.Str("hi"))
	want(t, r, "pad", dissect.Str("ab"))
	want(t, r, "fixed", dissect.Str("x"))
	want(t, r, "rest", dissect.Bytes([]byte{9}))
	if len(r.Fields) != 6 {
		t.Errorf("%d fields recorded, want 6 (contents records none)", len(r.Fields))
	}
	roundTrip(t, p, "m", r, b)
	bad := append([]byte(nil), b...)
	bad[1] = 0xff
	if _, err := p.NewDecoder().Decode(&dissect.Record{}, 0, bad); err == nil || !strings.Contains(err.Error(), "want ca fe") {
		t.Errorf("wrong contents: %v", err)
	}
}

func TestArraysEnumsSwitch(t *testing.T) {
	p := compile(t, &Schema{
		Enums: []Enum{{Name: "mode", Values: []EnumValue{{0, "off"}, {1, "on"}}}},
		Types: []Type{
			{Name: "pt", Seq: []Field{{ID: "x", Type: "s1"}, {ID: "y", Type: "s1"}}},
			{Name: "a", Seq: []Field{{ID: "v", Type: "u2be"}}},
			{Name: "b", Seq: []Field{{ID: "s", Type: "strz"}}},
			{Name: "m", Seq: []Field{
				{ID: "count", Type: "u1"},
				{ID: "pts", Type: "pt", Repeat: RepeatExpr, RepeatExpr: FieldRef("count")}, // (1,-1) (2,-2)
				{ID: "list", Type: "u1", Repeat: RepeatUntil, RepeatUntil: ptr(int64(0))},  // 5 6 0
				{ID: "mode", Type: "u1", Enum: "mode"},                                     // 1 = on
				{ID: "kind", Type: "u1"},
				{ID: "body", Switch: &Switch{On: "kind", Cases: []Case{{1, "a"}, {2, "b"}}}},
				{ID: "tail", Type: "u1", Repeat: RepeatEOS},
			}},
		}})
	b := []byte{2, 1, 0xff, 2, 0xfe, 5, 6, 0, 1, 1, 0x12, 0x34, 7, 8}
	r, _ := decode(t, p, "m", b)
	pts, _ := r.Fields.Get("pts")
	if it := pts.Items(); len(it) != 2 || !it[1].Value.Items()[1].Value.Equal(dissect.Int(-2)) {
		t.Errorf("pts = %v", pts)
	}
	list, _ := r.Fields.Get("list")
	if len(list.Items()) != 3 {
		t.Errorf("list = %v, want 5 6 0", list)
	}
	want(t, r, "mode", dissect.Str("on"))
	body, _ := r.Fields.Get("body")
	if v, ok := body.Get("v"); !ok || !v.Equal(dissect.Uint(0x1234)) {
		t.Errorf("body = %v", body)
	}
	tail, _ := r.Fields.Get("tail")
	if len(tail.Items()) != 2 {
		t.Errorf("tail = %v", tail)
	}
	roundTrip(t, p, "m", r, b)

	// an unknown enum value: its number, and a warning
	b2 := append([]byte(nil), b...)
	b2[8] = 9
	r, _ = decode(t, p, "m", b2)
	want(t, r, "mode", dissect.Str("9"))
	if len(r.Warnings) != 1 {
		t.Errorf("warnings %v", r.Warnings)
	}
	// a switch value with no case is malformed
	b2[9] = 3
	if _, err := p.NewDecoder().Decode(&dissect.Record{}, p.Type("m"), b2); err == nil {
		t.Error("kind 3 decoded")
	}
}

func TestShortAndValid(t *testing.T) {
	p := compile(t, &Schema{Types: []Type{{Name: "m", Seq: []Field{
		{ID: "v", Type: "u1", Valid: &Valid{Min: ptr(int64(1)), Max: ptr(int64(3))}},
		{ID: "n", Type: "u2be"},
		{ID: "d", Size: FieldRef("n")},
	}}}})
	var de *DecodeError
	_, err := p.NewDecoder().Decode(&dissect.Record{}, 0, []byte{2, 0, 10, 1})
	if !errors.As(err, &de) || !de.Short || de.Need != 13 {
		t.Errorf("short: %#v", err)
	}
	_, err = p.NewDecoder().Decode(&dissect.Record{}, 0, []byte{4, 0, 0})
	if !errors.As(err, &de) || de.Short {
		t.Errorf("invalid: %#v", err)
	}
	if _, err := p.NewDecoder().Decode(&dissect.Record{}, 0, []byte{3, 0, 0}); err != nil {
		t.Error(err)
	}
}

// A hostile count costs nothing: it is checked against the bytes and the
// limit before anything is made.
func TestHostileCounts(t *testing.T) {
	p := compile(t, &Schema{Types: []Type{{Name: "m", Seq: []Field{
		{ID: "n", Type: "u8be"},
		{ID: "xs", Type: "u1", Repeat: RepeatExpr, RepeatExpr: FieldRef("n")},
	}}}})
	b := []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1}
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := p.NewDecoder().Decode(&dissect.Record{}, 0, b); err == nil {
			t.Fatal("decoded")
		}
	})
	if allocs > 20 {
		t.Errorf("%v allocations for a hostile count", allocs)
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		s    Schema
		want string
	}{
		{Schema{Types: []Type{{Name: "a", At: "f:1:1", Seq: []Field{{ID: "b", Type: "b"}}}, {Name: "b", At: "f:3:1", Seq: []Field{{ID: "a", Type: "a"}}}}}, "contains itself"},
		{Schema{Types: []Type{{Name: "a", Seq: []Field{{ID: "x", Type: "u9", At: "f:2:5"}}}}}, "f:2:5: unknown type \"u9\""},
		{Schema{Types: []Type{{Name: "a", Seq: []Field{{ID: "x", Size: FieldRef("n")}, {ID: "n", Type: "u1"}}}}}, "not an earlier integer field"},
		{Schema{Types: []Type{{Name: "e", Seq: nil}, {Name: "a", Seq: []Field{{ID: "x", Type: "e", Repeat: RepeatEOS}}}}}, "may take no bytes"},
		{Schema{Types: []Type{{Name: "a", Seq: []Field{{ID: "x", Type: "b65"}}}}}, "b1 to b64"},
		{Schema{Types: []Type{{Name: "a", Seq: []Field{{ID: "x", Size: Num(1 << 40)}}}}}, "size 1099511627776"},
		{Schema{Types: []Type{{Name: "a", Seq: []Field{{ID: "x", Type: "str"}}}}}, "need size"},
	}
	// deep nesting
	var deep Schema
	for i := 0; i < 40; i++ {
		name := "t" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		next := "t" + string(rune('a'+(i+1)%26)) + string(rune('a'+(i+1)/26))
		f := Field{ID: "x", Type: next}
		if i == 39 {
			f.Type = "u1"
		}
		deep.Types = append(deep.Types, Type{Name: name, Seq: []Field{f}})
	}
	cases = append(cases, struct {
		s    Schema
		want string
	}{deep, "nested more than 16"})
	for _, c := range cases {
		_, err := Compile(&c.s, Limits{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.s.Types, err, c.want)
		}
	}
}
