package deltarobot

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

// The table holds exactly the nine messages of the spec (protocols.md
// §4.2), each under the name the separate encoder (internal/testenc/
// deltaenc) gives its id, and every other 16-bit id is not known.
func TestDescriptionIDs(t *testing.T) {
	d, err := describe()
	if err != nil {
		t.Fatal(err)
	}
	spec := []uint16{0x3001, 0x2002, 0x4003, 0x3004, 0x3005, 0xF006, 0x4007, 0x4008, 0xF009}
	n := 0
	for id := range 1 << 16 {
		e := d.lookup(uint16(id))
		want, ok := deltaenc.TypeName(uint16(id))
		switch {
		case ok != (e != nil):
			t.Errorf("id 0x%04x: known %v, the encoder says %v", id, e != nil, ok)
		case ok && e.name != want:
			t.Errorf("id 0x%04x: %s, the encoder says %s", id, e.name, want)
		case ok:
			n++
		}
	}
	if n != len(spec) {
		t.Errorf("%d known ids, the spec has %d", n, len(spec))
	}
	for _, id := range spec {
		if d.lookup(id) == nil {
			t.Errorf("the spec's id 0x%04x is not in the table", id)
		}
	}
	for c := range 256 {
		want := c >= 1 && c <= 9 // the low byte of the nine ids
		if d.knownLow(byte(c)) != want {
			t.Errorf("knownLow(0x%02x) = %v, want %v", c, !want, want)
		}
	}
}

// The description's encoder writes the bytes the separate encoder writes
// (deltaenc, from the spec), and Parse reads them back.
func TestDescriptionEncoder(t *testing.T) {
	const pingID = 0x0123456789abcdef
	vec := dissect.Fields{{Key: "x", Value: dissect.Float32(1)}, {Key: "y", Value: dissect.Float32(-2)},
		{Key: "z", Value: dissect.Float32(3.5)}, {Key: "u", Value: dissect.Float32(0)}}
	cases := []struct {
		typ    string
		fields dissect.Fields
		want   []byte
	}{
		{typeMagic, dissect.Fields{{Key: "magic", Value: dissect.Str("DeltaRVr")}}, deltaenc.Magic()},
		{typeVersion, dissect.Fields{{Key: "version", Value: dissect.Uint(1)}}, deltaenc.Version(1)},
		{typePosition, vec, deltaenc.ActuatorPosition(1, -2, 3.5, 0)},
		{typeDirection, vec, deltaenc.CurrentDirection(1, -2, 3.5, 0)},
		{typeDesired, vec, deltaenc.DesiredDirection(1, -2, 3.5, 0)},
		{typePing, dissect.Fields{{Key: "id", Value: dissect.Uint(pingID)}}, deltaenc.Ping(pingID)},
		{typePong, dissect.Fields{{Key: "id", Value: dissect.Uint(pingID)}}, deltaenc.Pong(pingID)},
		{typeEOT, dissect.Fields{{Key: "reason", Value: dissect.Str("exercise over")}}, deltaenc.EndOfTransmission("exercise over")},
		{typeEOT, dissect.Fields{{Key: "reason", Value: dissect.Str("")}}, deltaenc.EndOfTransmission("")},
	}
	p := New().NewParser(nil).(*parser)
	p.seen = [2]uint8{trustAfter, trustAfter}
	for _, c := range cases {
		got, err := Append(nil, c.typ, c.fields)
		if err != nil {
			t.Errorf("%s: %v", c.typ, err)
			continue
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: % x, the separate encoder writes % x", c.typ, got, c.want)
		}
		r := &dissect.Record{}
		n, err := p.Parse(&dissect.Ctx{Rec: r, Decode: true}, got)
		if err != nil || n != len(got) || r.Type != c.typ {
			t.Errorf("%s: Parse read %d of %d bytes as %s: %v", c.typ, n, len(got), r.Type, err)
			continue
		}
		for i, f := range c.fields {
			if i >= len(r.Fields) || r.Fields[i].Key != f.Key || !r.Fields[i].Value.Equal(f.Value) {
				t.Errorf("%s: fields %v, want %v first", c.typ, r.Fields, c.fields)
				break
			}
		}
	}
	for _, typ := range []string{typeCurve, typeUnknown, "nonesuch"} {
		if _, err := Append(nil, typ, nil); err == nil {
			t.Errorf("%s: encoded, want an error (no layout)", typ)
		}
	}
	if _, err := Append(nil, typePosition, vec[:3]); err == nil {
		t.Error("a vector without u: encoded, want an error")
	}
}

// A table whose layout disagrees with its id's size nibble, gives a type
// twice or uses an undefined size id is refused, naming the id.
func TestDescriptionRefused(t *testing.T) {
	u2 := []layout.Field{{ID: "v", Type: "u2"}}
	cases := []struct {
		ms   []message
		want string
	}{
		{[]message{{id: 0x2001, name: "a", seq: u2}}, "0x2001: its layout takes 2 bytes, its size id says 4"},
		{[]message{{id: 0x1001, name: "a", seq: u2}, {id: 0x1001, name: "b", seq: u2}}, "0x1001: type 0x001 out of the table or given twice"},
		{[]message{{id: 0x1000, name: "a", seq: u2}}, "type 0x000 out of the table"},
		{[]message{{id: 0x5001, name: "a", seq: u2}}, "0x5001: size id 0x5 has no length"},
	}
	for _, c := range cases {
		_, err := describeFrom(c.ms)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.ms[0].id, err, c.want)
		}
	}
}
