package spec

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// A message of numbers at fixed offsets (testdata/vector.yaml:
// Deltarobot's actuator_position, protocols.md §4.2) is framed and
// decoded by the fast path with the record the general path gives, and
// what the fast path leaves (an id no case names) goes to the general
// path; bytes that end early ask for what frameAt asks for. Values worked
// out by hand from the bytes.
func TestFixedFastPath(t *testing.T) {
	p, err := LoadFile("testdata/vector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !p.frameFix {
		t.Fatal("vector.yaml: the frame's fields are not taken as fixed")
	}
	msg := dissecttest.Hex("03 40 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 80 bf") // 1, 2, 3, -1
	want := dissect.Fields{{Key: "message_id", Value: dissect.Uint(0x4003)}, {Key: "x", Value: dissect.Float32(1)},
		{Key: "y", Value: dissect.Float32(2)}, {Key: "z", Value: dissect.Float32(3)}, {Key: "u", Value: dissect.Float32(-1)}}
	for _, decode := range []bool{true, false} {
		r := &dissect.Record{}
		if n, _ := p.fast(&dissect.Ctx{Rec: r, Decode: decode}, msg); n != 18 || r.Type != "actuator_position" {
			t.Fatalf("fast: %d bytes as %q, want 18 as actuator_position", n, r.Type)
		}
		slow := &dissect.Record{}
		n, _, err := p.frameAt(p.plan.NewDecoder(), slow, msg, false)
		if err != nil || n != 18 || slow.Type != r.Type {
			t.Fatalf("frameAt: %d, %q, %v", n, slow.Type, err)
		}
		if !decode {
			if len(r.Fields) != 0 {
				t.Errorf("without Decode: fields %v", r.Fields)
			}
			continue
		}
		for _, f := range [][]dissect.Field{r.Fields, slow.Fields} {
			if len(f) != len(want) {
				t.Fatalf("fields %v, want %v", f, want)
			}
			for i := range want {
				if f[i].Key != want[i].Key || !f[i].Value.Equal(want[i].Value) {
					t.Errorf("field %d: %v, want %v", i, f[i], want[i])
				}
			}
		}
	}
	if n, need := p.fast(&dissect.Ctx{Rec: &dissect.Record{}, Decode: true},
		dissecttest.Hex("04 40 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 80 bf")); n != 0 || need != 0 {
		t.Errorf("0x4004 (no case): fast gave (%d, %d), want (0, 0): the general path decides", n, need)
	}
	for _, c := range []struct {
		b    []byte
		need int
	}{{msg[:17], 18}, {msg[:2], 18}, {msg[:1], 2}} {
		r := &dissect.Record{}
		n, need := p.fast(&dissect.Ctx{Rec: r, Decode: true}, c.b)
		if n != 0 || need != c.need || len(r.Fields) != 0 {
			t.Errorf("% x: fast gave (%d, %d) and fields %v, want (0, %d) and none", c.b, n, need, r.Fields, c.need)
		}
		// frameAt needs more too, and knows no more of how much
		m, _, err := p.frameAt(p.plan.NewDecoder(), &dissect.Record{}, c.b, false)
		if err != dissect.ErrNeedMore || m > c.need {
			t.Errorf("% x: frameAt gave (%d, %v), want (at most %d, ErrNeedMore)", c.b, m, err, c.need)
		}
	}
}

// With a sync word, a length field and a CRC, the fast path gives
// frameAt's record, and leaves a wrong check and a body longer than the
// fields to it.
func TestFixedFastPathFramed(t *testing.T) {
	s, err := Load("framed.yaml", []byte(`meta: {id: framed, endian: le, transports: [tcp]}
frame:
  sync: [0xa5, 0x5a]
  length: {at: 2, type: u1, adjust: 6}
  check: {crc: crc-16/ibm-3740}
seq:
  - {id: len, type: u1}
  - {id: msg, type: u1}
messages:
  switch-on: msg
  cases: {7: pos}
types:
  pos:
    seq:
      - {id: x, type: f4}
      - {id: y, type: f4}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if !p.frameFix {
		t.Fatal("not taken as fixed")
	}
	msg, err := p.Encode("pos", dissect.Fields{{Key: "len", Value: dissect.Uint(8)}, {Key: "msg", Value: dissect.Uint(7)},
		{Key: "x", Value: dissect.Float32(1.5)}, {Key: "y", Value: dissect.Float32(-4)}})
	if err != nil {
		t.Fatal(err)
	}
	r := &dissect.Record{}
	n, _ := p.fast(&dissect.Ctx{Rec: r, Decode: true}, msg)
	slow := &dissect.Record{}
	m, _, err := p.frameAt(p.plan.NewDecoder(), slow, msg, false)
	if err != nil || n != len(msg) || m != n || r.Type != "pos" || slow.Type != "pos" || len(r.Fields) != 4 || len(slow.Fields) != 4 {
		t.Fatalf("fast %d %q %v, frameAt %d %q %v: %v", n, r.Type, r.Fields, m, slow.Type, slow.Fields, err)
	}
	for i := range r.Fields {
		if r.Fields[i].Key != slow.Fields[i].Key || !r.Fields[i].Value.Equal(slow.Fields[i].Value) {
			t.Errorf("field %d: fast %v, frameAt %v", i, r.Fields[i], slow.Fields[i])
		}
	}
	if v, _ := r.Fields.Get("y"); !v.Equal(dissect.Float32(-4)) {
		t.Errorf("y = %v", v)
	}
	bad := append([]byte(nil), msg...)
	bad[len(bad)-1] ^= 1 // the check
	longer := append([]byte{0xa5, 0x5a, 0, 7}, msg[4:len(msg)-2]...)
	longer = append(longer, 0, 0, 0) // a byte after the fields, then the check
	if err := p.fr.Seal(longer); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.frameAt(p.plan.NewDecoder(), &dissect.Record{}, longer, false); err != nil {
		t.Fatalf("the longer frame: %v", err)
	}
	for _, b := range [][]byte{bad, longer, msg[:len(msg)-1]} {
		if n, need := p.fast(&dissect.Ctx{Rec: &dissect.Record{}, Decode: true}, b); n != 0 || need != 0 {
			t.Errorf("% x: fast gave (%d, %d), want (0, 0): frameAt decides", b, n, need)
		}
	}
}
