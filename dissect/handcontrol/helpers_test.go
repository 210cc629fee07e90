package handcontrol

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"dissect/dissect"

	"google.golang.org/protobuf/encoding/protowire"
)

// h decodes hex written with optional spaces.
func h(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// refCRC is a bitwise CRC-8 (poly 0x07, init 0, MSB first, no xorout),
// written independently of the table-driven crc8.
func refCRC(b []byte) byte {
	var c uint16
	for _, x := range b {
		c ^= uint16(x)
		for range 8 {
			c <<= 1
			if c&0x100 != 0 {
				c ^= 0x107
			}
		}
	}
	return byte(c)
}

// frame builds a frame with a correct CRC (from refCRC).
func frame(code byte, payload []byte) []byte {
	b := append([]byte{0xfd, 0xba, 0xdc, 0x01, 0x50, 0xb4, 0x11, 0xff, code, byte(len(payload)), byte(len(payload) >> 8)}, payload...)
	return append(b, refCRC(b[8:]))
}

// badFrame builds a frame whose CRC byte is wrong.
func badFrame(code byte, payload []byte) []byte {
	b := frame(code, payload)
	b[len(b)-1] ^= 0x5a
	return b
}

// Protobuf encoding for tests, with protowire's append functions and the
// field numbers of protocols.md §1.6/§1.7 (independent of the decoder).
func pvar(num protowire.Number, v uint64) []byte {
	b := protowire.AppendTag(nil, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func pbytes(num protowire.Number, v []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func pstr(num protowire.Number, s string) []byte { return pbytes(num, []byte(s)) }

// kv is an expected field.
type kv struct {
	k string
	v dissect.Value
}

func i64(v int64) dissect.Value  { return dissect.Int(v) }
func str(s string) dissect.Value { return dissect.Str(s) }
func obj(fs ...kv) dissect.Value {
	out := make([]dissect.Field, len(fs))
	for i, f := range fs {
		out[i] = dissect.Field{Key: f.k, Value: f.v}
	}
	return dissect.Object(out)
}
func arr(vs ...dissect.Value) dissect.Value {
	out := make([]dissect.Field, len(vs))
	for i, v := range vs {
		out[i] = dissect.Elem(v)
	}
	return dissect.Array(out)
}

// eqValue compares two values by kind and content.
func eqValue(a, b dissect.Value) bool { return a.Equal(b) }

// show writes a value as JSON-like text for failure messages.
func show(v dissect.Value) string {
	switch v.Kind() {
	case dissect.KindObject, dissect.KindArray:
		var b strings.Builder
		open, close := "{", "}"
		if v.Kind() == dissect.KindArray {
			open, close = "[", "]"
		}
		b.WriteString(open)
		for i, f := range v.Items() {
			if i > 0 {
				b.WriteString(", ")
			}
			if v.Kind() == dissect.KindObject {
				b.WriteString(f.Key + ": ")
			}
			b.WriteString(show(f.Value))
		}
		b.WriteString(close)
		return b.String()
	case dissect.KindString:
		return fmt.Sprintf("%q", v.Str())
	case dissect.KindBytes:
		return "0x" + hex.EncodeToString(v.Raw())
	case dissect.KindInt:
		return fmt.Sprint(v.Int())
	case dissect.KindUint:
		return fmt.Sprintf("%du", v.Uint())
	case dissect.KindBool:
		return fmt.Sprint(v.Bool())
	case dissect.KindFloat, dissect.KindFloat32:
		return fmt.Sprint(v.Float())
	}
	return "null"
}

func showFields(fs dissect.Fields) string { return show(dissect.Object(fs)) }

func checkFields(t testing.TB, got dissect.Fields, want []kv) {
	t.Helper()
	w := obj(want...)
	if !eqValue(dissect.Object(got), w) {
		t.Fatalf("fields:\n got  %s\n want %s", showFields(got), show(w))
	}
}

// checkWarnings wants one warning per substring, in order.
func checkWarnings(t testing.TB, got []string, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("warnings: got %q, want %d matching %q", got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d: %q does not contain %q", i, got[i], want[i])
		}
	}
}

// session is one parser with a context, for direct Parse calls.
type session struct {
	p    dissect.Parser
	info dissect.StreamInfo
	rec  dissect.Record
	c    dissect.Ctx
}

func newSession(t testing.TB, opt Options, decode bool) *session {
	t.Helper()
	proto, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{}
	s.info = dissect.StreamInfo{ID: 1, Transport: dissect.Serial, Name: [2]string{"host", "/dev/rfcomm0"}, Link: "/dev/rfcomm0"}
	s.p = proto.NewParser(&s.info)
	s.c = dissect.Ctx{Stream: &s.info, Decode: decode, Rec: &s.rec, Time: t0}
	return s
}

func (s *session) parse(dir dissect.Dir, at time.Time, b []byte) (int, error) {
	s.rec.Reset()
	s.c.Dir, s.c.Time = dir, at
	return s.p.Parse(&s.c, b)
}

var t0 = time.Date(2021, 5, 8, 12, 0, 0, 0, time.UTC)

// --- driving dissect.Stream ---

func registry(t testing.TB, opt Options) *dissect.Registry {
	t.Helper()
	p, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dissect.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := reg.ParseDecodeAs("serial,handcontrol")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(rule)
	return reg
}

func serialInfo() dissect.StreamInfo {
	return dissect.StreamInfo{ID: 2, Transport: dissect.Serial, Name: [2]string{"host", "/dev/ttyUSB0"}, Link: "/dev/ttyUSB0"}
}

// event is one unit fed to a stream.
type event struct {
	dir  dissect.Dir
	at   time.Time
	data []byte // nil with gap > 0: a gap; nil and gap 0: end
	gap  int64
}

type collect struct{ recs []*dissect.Record }

func (c *collect) Record(r *dissect.Record) error {
	c.recs = append(c.recs, r.Clone())
	return nil
}

var chunkSizes = []int{1, 2, 3, 5, 8, 11, 12, 13, 17, 64, 1000}

// feedStream feeds the events through dissect.Stream, cutting data into
// random chunks drawn from rng (nil: whole), and returns the records and the
// stream's notes.
func feedStream(t testing.TB, reg *dissect.Registry, decode bool, evs []event, rng *rand.Rand) ([]*dissect.Record, []string) {
	var sink collect
	s := dissect.NewStream(serialInfo(), reg, &sink, dissect.StreamOptions{Decode: decode})
	for _, e := range evs {
		switch {
		case e.data != nil:
			b := e.data
			for len(b) > 0 {
				n := len(b)
				if rng != nil {
					n = min(n, 1+rng.IntN(chunkSizes[rng.IntN(len(chunkSizes))]))
				}
				s.Data(e.dir, e.at, b[:n])
				b = b[n:]
			}
		case e.gap > 0:
			s.Gap(e.dir, e.at, e.gap)
		default:
			s.End(e.dir, e.at)
		}
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	return sink.recs, s.Notes()
}

func dirOf(r *dissect.Record) dissect.Dir {
	if r.Src == "host" {
		return 0
	}
	return 1
}

// checkTiling asserts that the records of each direction tile [0, size[d]).
func checkTiling(t testing.TB, recs []*dissect.Record, size [2]int64) {
	t.Helper()
	var end [2]int64
	for i, r := range recs {
		d := dirOf(r)
		if r.Offset != end[d] || r.Length <= 0 {
			t.Fatalf("record %d (%s dir %d): offset %d length %d, want offset %d", i, r.Type, d, r.Offset, r.Length, end[d])
		}
		end[d] += r.Length
	}
	if end != size {
		t.Fatalf("records cover %v bytes, want %v", end, size)
	}
}
