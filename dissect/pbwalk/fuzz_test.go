package pbwalk

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"

	"google.golang.org/protobuf/encoding/protowire"
)

// specVectors are the protobuf payloads of the HandControl spec
// (protocols.md §1.9): the two decoded-by-hand vectors, the payloads of
// the synthesized frames, and the payloads that are not protobuf.
var specVectors = []string{
	// GetGestures (v1 = v2), 118 bytes.
	"08 c3 e8 ae fd 05 12 36 0a 03 0a 01 31 12 0c 6e 61 6d 65 5f 67 65 73 74 75 72 65 18 9b 01 20 01 28 06 32 0c 08 01 10 01 18 01 20 01 28 01 30 01 32 0c 08 02 10 02 18 02 20 02 28 02 30 01 12 36 0a 03 0a 01 32 12 0c 6e 61 6d 65 5f 67 65 73 74 75 72 65 18 9b 01 20 01 28 06 32 0c 08 01 10 01 18 01 20 01 28 01 30 01 32 0c 08 02 10 02 18 02 20 02 28 02 30 01",
	// Telemetry (v1 schema).
	"08 28 10 01 18 04 20 03 28 04 30 c8 85 af fd 05 38 01 42 26 0a 24 39 37 66 37 32 64 38 34 2d 62 38 35 36 2d 34 39 33 34 2d 38 64 38 30 2d 32 62 33 66 66 35 61 64 34 31 64 35 48 01 50 02 58 03 60 04 68 05 70 06",
	"08 64",                         // StartTelemetry{interval_ms=100}
	"08 0a 10 14 18 1e 20 28 28 32", // SetPositions{10,20,30,40,50}
	"0a 03 0a 01 31",                // PerformGestureId{id=UUID{"1"}}
	"08 01",                         // SetSettings{enable_emg=true}
	"0a 19 54 65 6c 65 6d 65 74 72 79 20 61 6c 72 65 61 64 79 20 73 74 61 72 74 65 64", // Error{"Telemetry already started"}
	"ff ff ff ff ff", "ab cd", "ba 05", "32", "fb ac", // payloads that are not protobuf
}

// FuzzWalk checks, on arbitrary bytes: no panic; Walk, Next and Decode
// (raw and with messages) agree; every error is an *Error with an offset
// in [0, len]; Decode stays within its bounds and gives the same verdict
// whether it builds or not, and its one-pass path what its two passes
// give. Then it uses the bytes as a random source for fields, writes them
// with protowire's append functions, and checks that they walk back the
// same (round trip) and decode without error.
func FuzzWalk(f *testing.F) {
	for _, v := range specVectors {
		f.Add(h(v))
	}
	for _, c := range errorCases() {
		f.Add(c.in)
	}
	for _, c := range append(schemaCases(), rawCases()...) {
		f.Add(c.in)
	}
	b, _ := sample()
	f.Add(b)
	msgs := compileTest(f)
	schemas := []*Message{nil, EmptyMessage("e"), msgs["t.All"], msgs["t.Simple"], msgs["t.Inner"]}
	f.Fuzz(func(t *testing.T, data []byte) {
		walkErr := checkWalk(t, data)
		for _, m := range schemas {
			checkDecode(t, m, data, walkErr)
		}
		roundTrip(t, data)
	})
}

// checkWalk walks data with Walk and Next; it returns their error.
func checkWalk(t *testing.T, data []byte) error {
	var offs []int
	err := Walk(data, func(off int, f Field) bool {
		offs = append(offs, off)
		if f.Bytes != nil && !within(f.Bytes, data) {
			t.Fatalf("field at %d: Bytes outside the input", off)
		}
		return true
	})
	checkPublic(t, err, len(data))
	var offs2 []int
	var err2 error
	for off := 0; off < len(data); {
		var next int
		_, next, err2 = Next(data, off)
		if err2 != nil {
			break
		}
		if next <= off || next > len(data) {
			t.Fatalf("Next at %d returned %d", off, next)
		}
		offs2 = append(offs2, off)
		off = next
	}
	if !slices.Equal(offs, offs2) || !sameErr(err, err2) {
		t.Fatalf("Walk %v %v, Next %v %v", offs, err, offs2, err2)
	}
	return err
}

// within reports whether s is a sub-slice of b.
func within(s, b []byte) bool {
	if len(s) == 0 {
		return true
	}
	off := cap(b) - cap(s) // where s starts, if it is a slice of b
	return off >= 0 && off <= len(b)-len(s) && &b[off] == &s[0]
}

// inside reports whether the bytes of s lie within b (s's capacity may
// end before b's: it compares addresses).
func inside(s, b []byte) bool {
	if len(s) == 0 {
		return true
	}
	if len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&s[0])), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

func sameErr(a, b error) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Error() == b.Error()
}

// checkPublic checks that err is nil or an *Error with an in-range offset
// that unwraps to a sentinel.
func checkPublic(t *testing.T, err error, n int) {
	t.Helper()
	if err == nil {
		return
	}
	var we *Error
	if !errors.As(err, &we) || we.Offset < 0 || we.Offset > n || we.Reason == "" ||
		!errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrLimit) {
		t.Fatalf("error %v (%#v) for %d bytes", err, err, n)
	}
}

func checkDecode(t *testing.T, m *Message, data []byte, walkErr error) {
	var rec dissect.Record
	d := Decoder{WarnPrefix: "p: "}
	fields, raw, issues, err := d.Decode(&rec, m, data, true)
	checkPublic(t, err, len(data))
	switch {
	case walkErr != nil:
		if !sameErr(err, walkErr) {
			t.Fatalf("Walk: %v; Decode: %v", walkErr, err)
		}
	case err != nil && !errors.Is(err, ErrLimit):
		t.Fatalf("Walk fine; Decode: %v", err)
	}
	if err != nil && (fields != nil || raw != nil) {
		t.Fatal("fields on error")
	}
	// An item of the raw list counts as one field.
	if n := dissecttest.CountFields(dissect.Object(fields)) + len(raw); n > 2*len(data)+64 {
		t.Fatalf("%d fields for %d bytes", n, len(data))
	}
	if len(rec.Warnings) > MaxWarnings+1 {
		t.Fatalf("%d warnings", len(rec.Warnings))
	}
	if m == nil && err == nil && (issues != 0 || len(fields) != 0) {
		t.Fatalf("raw decoding has issues or fields: %q %s", rec.Warnings, show(dissect.Object(fields)))
	}
	if err == nil && m != nil {
		checkConforms(t, m, fields, raw)
	}
	for _, it := range raw {
		for _, f := range it.Value.Items() {
			if f.Key == keyBytes && !inside(f.Value.Raw(), data) {
				t.Fatal("raw bytes outside the input")
			}
		}
	}
	// Building nothing gives the same verdict.
	var rec2 dissect.Record
	d2 := Decoder{WarnPrefix: "p: "}
	got2, raw2, issues2, err2 := d2.Decode(&rec2, m, data, false)
	if got2 != nil || raw2 != nil || !sameErr(err, err2) || issues2 != issues || !slices.Equal(rec.Warnings, rec2.Warnings) {
		t.Fatalf("build=false: %v issues %d %q; build=true: %v issues %d %q", err2, issues2, rec2.Warnings, err, issues, rec.Warnings)
	}
	if d2.Check(m, data) != (err == nil && issues == 0) {
		t.Fatal("Check disagrees with Decode")
	}
	// The one-pass path gives what the two passes give.
	if m != nil && m.simple && err == nil {
		var rec3 dissect.Record
		d3 := Decoder{WarnPrefix: "p: ", rec: &rec3, build: true, warn: true}
		d3.reset(len(data))
		d3.top = m
		sc, e3 := d3.scan(m, data, 0)
		if e3.failed() {
			t.Fatalf("two passes fail where Decode worked: %s", e3)
		}
		slow := d3.fill(m, data, 0, sc)
		d3.finish()
		slowRaw := d3.buildRaw()
		if !dissect.Object(slow).Equal(dissect.Object(fields)) || !dissect.Array(slowRaw).Equal(dissect.Array(raw)) || d3.issues != issues || !slices.Equal(rec3.Warnings, rec.Warnings) {
			t.Fatalf("two passes: %s %s %q\none pass: %s %s %q", show(dissect.Object(slow)), show(dissect.Array(slowRaw)), rec3.Warnings,
				show(dissect.Object(fields)), show(dissect.Array(raw)), rec.Warnings)
		}
	}
}

// source draws numbers from fuzz bytes (zeros once they run out).
type source struct{ b []byte }

func (s *source) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *source) uint(n int) uint64 {
	var v uint64
	for range n {
		v = v<<8 | uint64(s.byte())
	}
	return v
}

// genField is a field drawn for the round trip; a group holds sub-fields.
type genField struct {
	f   Field
	sub []genField
}

// genFields draws up to max fields (groups nest up to depth more levels).
func genFields(s *source, max, depth int) []genField {
	var out []genField
	for len(s.b) > 0 && len(out) < max {
		c := s.byte()
		var num protowire.Number
		switch c >> 6 {
		case 0:
			num = protowire.Number(1 + c&0x0f)
		case 1:
			num = protowire.Number(1 + s.uint(1))
		case 2:
			num = protowire.Number(1 + s.uint(2))
		default:
			num = protowire.Number(1 + s.uint(4)%uint64(protowire.MaxValidNumber))
		}
		g := genField{f: Field{Num: num}}
		switch (c >> 4) & 3 {
		case 0:
			g.f.Type = protowire.VarintType
			g.f.Value = s.uint(int(s.byte() % 9))
		case 1:
			if c&1 == 0 {
				g.f.Type, g.f.Value = protowire.Fixed32Type, s.uint(4)
			} else {
				g.f.Type, g.f.Value = protowire.Fixed64Type, s.uint(8)
			}
		case 2:
			n := int(s.byte() % 40)
			g.f.Type, g.f.Bytes = protowire.BytesType, append([]byte{}, s.b[:min(n, len(s.b))]...)
			s.b = s.b[min(n, len(s.b)):]
		case 3:
			g.f.Type = protowire.StartGroupType
			if depth > 0 {
				g.sub = genFields(s, int(s.byte()%8), depth-1)
			}
		}
		out = append(out, g)
	}
	return out
}

// encode writes fields with protowire's append functions.
func encode(b []byte, fs []genField) []byte {
	for _, g := range fs {
		b = protowire.AppendTag(b, g.f.Num, g.f.Type)
		switch g.f.Type {
		case protowire.VarintType:
			b = protowire.AppendVarint(b, g.f.Value)
		case protowire.Fixed32Type:
			b = protowire.AppendFixed32(b, uint32(g.f.Value))
		case protowire.Fixed64Type:
			b = protowire.AppendFixed64(b, g.f.Value)
		case protowire.BytesType:
			b = protowire.AppendBytes(b, g.f.Bytes)
		case protowire.StartGroupType:
			b = encode(b, g.sub)
			b = protowire.AppendTag(b, g.f.Num, protowire.EndGroupType)
		}
	}
	return b
}

// walkBack walks b and compares its fields with fs, groups recursively.
func walkBack(t *testing.T, b []byte, fs []genField) {
	i := 0
	err := Walk(b, func(off int, f Field) bool {
		if i >= len(fs) {
			t.Fatalf("field %d at %d: more fields than written", i, off)
		}
		w := fs[i]
		if f.Num != w.f.Num || f.Type != w.f.Type || f.Value != w.f.Value {
			t.Fatalf("field %d at %d: %d/%d/%d, wrote %d/%d/%d", i, off, f.Num, f.Type, f.Value, w.f.Num, w.f.Type, w.f.Value)
		}
		switch f.Type {
		case protowire.BytesType:
			if !bytes.Equal(f.Bytes, w.f.Bytes) {
				t.Fatalf("field %d: bytes %x, wrote %x", i, f.Bytes, w.f.Bytes)
			}
		case protowire.StartGroupType:
			if !bytes.Equal(f.Bytes, encode(nil, w.sub)) {
				t.Fatalf("field %d: group body %x", i, f.Bytes)
			}
			walkBack(t, f.Bytes, w.sub)
		}
		i++
		return true
	})
	if err != nil || i != len(fs) {
		t.Fatalf("walked %d of %d fields: %v", i, len(fs), err)
	}
}

// roundTrip draws fields from data, writes them and walks them back; the
// message decodes raw and with every schema without error.
func roundTrip(t *testing.T, data []byte) {
	fs := genFields(&source{data}, 200, 3)
	b := encode(nil, fs)
	walkBack(t, b, fs)
	for _, m := range []*Message{nil, EmptyMessage("e")} {
		var d Decoder
		var rec dissect.Record
		if _, _, _, err := d.Decode(&rec, m, b, true); err != nil {
			t.Fatalf("written message: %v", err)
		}
	}
}
