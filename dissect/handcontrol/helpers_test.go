package handcontrol

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/framing"

	"google.golang.org/protobuf/encoding/protowire"
)

// h decodes hex written with optional spaces; cat concatenates.
var (
	h   = dissecttest.Hex
	cat = dissecttest.Cat
)

// crc8 is the CRC of the frame description (framing.go) over b.
func crc8(b []byte) byte {
	c := *frameDesc(0).Check
	fr, err := framing.New(framing.Framing{Size: len(b) + 1, Check: &c})
	if err != nil {
		panic(err)
	}
	_, want := fr.Sums(cat(b, []byte{0}))
	return byte(want)
}

// refCRC is a bitwise CRC-8 (poly 0x07, init 0, MSB first, no xorout),
// written independently of the description's table-driven CRC.
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

// arr is an expected array.
var arr = dissecttest.Array

func showFields(fs dissect.Fields) string { return dissecttest.DescribeValue(dissect.Object(fs)) }

func checkFields(t testing.TB, got dissect.Fields, want []kv) {
	t.Helper()
	dissecttest.CheckFields(t, got, obj(want...).Items()...)
}

// checkWarnings wants one warning per substring, in order.
var checkWarnings = dissecttest.CheckWarnings

// session is one parser of a serial link, for direct Parse calls.
type session struct{ *dissecttest.Session }

func newSession(t testing.TB, opt Options, decode bool) *session {
	t.Helper()
	proto, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.Serial, Link: "/dev/rfcomm0"}, Name: [2]string{"host", "/dev/rfcomm0"}}
	s := &session{dissecttest.NewSession(proto, info, decode)}
	s.Ctx.Time = t0
	return s
}

// parse parses b as direction dir, read at time at.
func (s *session) parse(dir dissect.Dir, at time.Time, b []byte) (int, error) {
	s.Ctx.Time = at
	return s.Parse(dir, b)
}

var t0 = time.Date(2021, 5, 8, 12, 0, 0, 0, time.UTC)

// --- driving dissect.Stream ---

func registry(t testing.TB, opt Options) *dissect.Registry {
	t.Helper()
	p, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return dissecttest.Registry(t, []string{"serial,handcontrol"}, p)
}

func serialInfo() dissect.StreamInfo {
	return dissect.StreamInfo{StreamID: dissect.StreamID{ID: 2, Transport: dissect.Serial, Link: "/dev/ttyUSB0"}, Name: [2]string{"host", "/dev/ttyUSB0"}}
}

// event is one unit fed to a stream.
type event struct {
	dir  dissect.Dir
	at   time.Time
	data []byte // nil with gap > 0: a gap; nil and gap 0: end
	gap  int64
}

var chunkSizes = []int{1, 2, 3, 5, 8, 11, 12, 13, 17, 64, 1000}

// feedStream feeds the events through dissect.Stream, cutting data into
// random chunks drawn from rng (nil: whole), and returns the records and the
// stream's notes.
func feedStream(t testing.TB, reg *dissect.Registry, decode bool, evs []event, rng *rand.Rand) ([]*dissect.Record, []string) {
	t.Helper()
	units := make([]dissecttest.Event, len(evs))
	for i, e := range evs {
		units[i] = dissecttest.Event{Dir: e.dir, At: e.at, Data: e.data, Gap: e.gap}
	}
	return dissecttest.Feed(t, reg, serialInfo(), dissect.StreamOptions{Decode: decode}, units, rng, chunkSizes)
}

func dirOf(r *dissect.Record) dissect.Dir {
	if r.Src == "host" {
		return 0
	}
	return 1
}
