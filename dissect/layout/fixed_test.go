package layout

import (
	"errors"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// A run of fixed-width fields (read with one bounds check) decodes as the
// fields one by one would: values worked out by hand beside each field.
func TestRunOfFixedFields(t *testing.T) {
	p := compile(t, &Schema{Endian: LittleEndian, Types: []Type{{Name: "m", Seq: []Field{
		{ID: "id", Type: "u2"},               // 03 40 → 0x4003
		{Type: "u1"},                         // 00, read and not recorded
		{ID: "x", Type: "f4"},                // 00 00 80 3f → 1.0
		{ID: "y", Type: "f4be"},              // c0 00 00 00 → -2.0
		{ID: "t", Type: "s2be", Scale: 0.01}, // ff 38 → -200 → -2.0
		{ID: "w", Type: "f8"},                // 0.5: 00…00 e0 3f
		{ID: "h", Type: "f2be"},              // 3c 00 → 1.0
		{ID: "k", Type: "u3be"},              // 01 02 03 → 66051
		{ID: "n", Type: "u1"},                // 02 → 2 bytes of data
		{ID: "data", Size: FieldRef("n")},    // aa bb
		{ID: "tail", Type: "u4"},             // 01 00 00 00 → 1, a second run
	}}}})
	b := []byte{0x03, 0x40, 0x00, 0x00, 0x00, 0x80, 0x3f, 0xc0, 0, 0, 0, 0xff, 0x38,
		0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0x3c, 0x00, 1, 2, 3, 2, 0xaa, 0xbb, 1, 0, 0, 0}
	r, n := decode(t, p, "m", b)
	if n != len(b) {
		t.Fatalf("read %d of %d bytes", n, len(b))
	}
	want(t, r, "id", dissect.Uint(0x4003))
	want(t, r, "x", dissect.Float32(1))
	want(t, r, "y", dissect.Float32(-2))
	want(t, r, "t", dissect.Float(-2))
	want(t, r, "w", dissect.Float(0.5))
	want(t, r, "h", dissect.Float32(1))
	want(t, r, "k", dissect.Uint(66051))
	want(t, r, "data", dissect.Bytes([]byte{0xaa, 0xbb}))
	want(t, r, "tail", dissect.Uint(1))
	if f := p.types[0].fields; f[0].run == nil || f[0].run.n != 9 || f[9].run != nil || f[10].run == nil || f[10].run.n != 1 {
		t.Errorf("runs: want one of the nine fields before the bytes, none for the bytes, one after")
	}

	// Cut anywhere inside the first run, the error names the field the
	// bytes end in, with the offset and need of that field.
	offs := []struct {
		cut, off, need int
		name           string
	}{{1, 0, 2, "id"}, {2, 2, 3, "(unnamed)"}, {5, 3, 7, "x"}, {12, 11, 13, "t"}, {25, 23, 26, "k"}}
	for _, c := range offs {
		var de *DecodeError
		_, err := p.NewDecoder().Decode(&dissect.Record{}, 0, b[:c.cut])
		if !errors.As(err, &de) || !de.Short || de.Offset != c.off || de.Need != c.need {
			t.Errorf("cut at %d: %v (%#v), want short at %d needing %d", c.cut, err, de, c.off, c.need)
		}
	}
}

// Decoding a run of numbers allocates nothing once the record's buffers
// are grown.
func TestRunAllocates(t *testing.T) {
	p := compile(t, &Schema{Endian: LittleEndian, Types: []Type{{Name: "v", Seq: []Field{
		{ID: "x", Type: "f4"}, {ID: "y", Type: "f4"}, {ID: "z", Type: "f4"}, {ID: "u", Type: "f4"},
	}}}})
	b := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0xbf} // 1, 2, 3, -1
	d := p.NewDecoder()
	r := &dissect.Record{}
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset()
		if _, err := d.Decode(r, 0, b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per message", allocs)
	}
	want(t, r, "x", dissect.Float32(1))
	want(t, r, "y", dissect.Float32(2))
	want(t, r, "z", dissect.Float32(3))
	want(t, r, "u", dissect.Float32(-1))
}

// Runs of float64 and of big-endian floats, each read in a loop of their
// own, and a run whose floats are not all recorded, read field by field.
func TestRunOfFloats(t *testing.T) {
	p := compile(t, &Schema{Endian: BigEndian, Types: []Type{
		{Name: "d", Seq: []Field{{ID: "a", Type: "f8le"}, {ID: "b", Type: "f8le"}}},
		{Name: "e", Seq: []Field{{ID: "a", Type: "f4"}, {ID: "b", Type: "f4"}}},
		{Name: "g", Seq: []Field{{ID: "a", Type: "f8"}, {Type: "f8"}, {ID: "c", Type: "f8"}}},
	}})
	r, _ := decode(t, p, "d", []byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0, 0, 0, 0, 0, 0, 0x04, 0xc0}) // 0.5, -2.5
	want(t, r, "a", dissect.Float(0.5))
	want(t, r, "b", dissect.Float(-2.5))
	r, _ = decode(t, p, "e", []byte{0x3f, 0x80, 0, 0, 0xc0, 0x20, 0, 0}) // 1, -2.5
	want(t, r, "a", dissect.Float32(1))
	want(t, r, "b", dissect.Float32(-2.5))
	r, _ = decode(t, p, "g", []byte{0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0xc0, 0x04, 0, 0, 0, 0, 0, 0}) // 0.5, skipped, -2.5
	want(t, r, "a", dissect.Float(0.5))
	want(t, r, "c", dissect.Float(-2.5))
	if len(r.Fields) != 2 {
		t.Errorf("fields %v, want a and c", r.Fields)
	}
}

// A header's reader followed by a message's (Fixed.Then) reads both in
// one call as the two would one after the other: a vector after the
// header, and floats after an integer in the middle of a message. Values
// worked out by hand beside each field.
func TestFixedThen(t *testing.T) {
	p := compile(t, &Schema{Endian: LittleEndian, Types: []Type{
		{Name: "hdr", Seq: []Field{{ID: "id", Type: "u2"}, {ID: "seq", Type: "s1"}}},
		{Name: "vec", Seq: []Field{{ID: "x", Type: "f4"}, {ID: "y", Type: "f4"}, {ID: "z", Type: "f4"}, {ID: "u", Type: "f4"}}},
		{Name: "mix", Seq: []Field{{ID: "a", Type: "f4"}, {ID: "b", Type: "u2be"}, {ID: "c", Type: "f4"}, {ID: "d", Type: "f4"}}},
	}})
	fixed := func(name string) Fixed {
		f, ok := p.Fixed(p.Type(name))
		if !ok {
			t.Fatalf("%s: not fixed", name)
		}
		return f
	}
	hdr := []byte{0x03, 0x40, 0xfe} // 0x4003, -2
	for _, c := range []struct {
		name string
		body []byte
		want dissect.Fields
	}{
		{"vec", []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0xbf}, // 1, 2, 3, -1
			dissect.Fields{{Key: "x", Value: dissect.Float32(1)}, {Key: "y", Value: dissect.Float32(2)},
				{Key: "z", Value: dissect.Float32(3)}, {Key: "u", Value: dissect.Float32(-1)}}},
		{"mix", []byte{0, 0, 0x20, 0xc0, 0x01, 0x02, 0, 0, 0, 0x3f, 0, 0, 0x80, 0x40}, // -2.5, 258, 0.5, 4
			dissect.Fields{{Key: "a", Value: dissect.Float32(-2.5)}, {Key: "b", Value: dissect.Uint(258)},
				{Key: "c", Value: dissect.Float32(0.5)}, {Key: "d", Value: dissect.Float32(4)}}},
	} {
		both := fixed("hdr").Then(fixed(c.name))
		want := append(dissect.Fields{{Key: "id", Value: dissect.Uint(0x4003)}, {Key: "seq", Value: dissect.Int(-2)}}, c.want...)
		if both.Size() != 3+len(c.body) || both.Len() != len(want) {
			t.Fatalf("hdr then %s: %d bytes, %d fields; want %d, %d", c.name, both.Size(), both.Len(), 3+len(c.body), len(want))
		}
		r := &dissect.Record{}
		both.Decode(r.Extend(both.Len()), append(append([]byte(nil), hdr...), c.body...))
		for i := range want {
			if r.Fields[i].Key != want[i].Key || !r.Fields[i].Value.Equal(want[i].Value) {
				t.Errorf("hdr then %s: field %d is %v, want %v", c.name, i, r.Fields[i], want[i])
			}
		}
		for k, v := range []int64{0x4003, -2} {
			if r, ok := both.Int(k); !ok || r.Read(hdr) != v {
				t.Errorf("hdr then %s: Int(%d) reads %d (%v), want %d", c.name, k, r.Read(hdr), ok, v)
			}
		}
		if _, ok := both.Int(2); ok {
			t.Errorf("hdr then %s: Int(2) (a float) taken as an integer", c.name)
		}
	}
}
