package neptune_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/neptune"
)

// Device test vectors, written out by hand from protocols.md §2.3 (a length
// byte, then the payload; payload[0] is the type). vStop is the §2.6 vector
// sent by host/packet_test.py.
var (
	vStop      = h("04 01 00 00 00") // §2.6: set motor 0, forward, magnitude 0
	vMotor2    = h("04 01 02 01 ff") // motor 2, reverse, 255
	vRelay5On  = h("04 01 05 01 00") // relay 5 on (dir != 0)
	vRelay6Off = h("04 01 06 00 80") // relay 6 off (dir 0)
	vTranslate = h("03 02 00 01")    // translate x, sign byte 1
	vRotate    = h("03 03 01 00")    // rotate y, sign byte 0
	vStabilize = h("02 04 01")       // stabilize on
	vLamp      = h("02 05 00")       // lamp off
	vAbort     = h("01 00")          // abort
)

// h decodes hex written with optional spaces; cat concatenates.
var (
	h   = dissecttest.Hex
	cat = dissecttest.Cat
)

// kv is an expected field.
type kv struct {
	k string
	v dissect.Value
}

func u(v uint64) dissect.Value    { return dissect.Uint(v) }
func i(v int64) dissect.Value     { return dissect.Int(v) }
func s(v string) dissect.Value    { return dissect.Str(v) }
func f32(v float32) dissect.Value { return dissect.Float32(v) }
func hx(v string) dissect.Value   { return dissect.Bytes(h(v)) }
func bl(v bool) dissect.Value     { return dissect.Bool(v) }

func checkFields(t testing.TB, got dissect.Fields, want []kv) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("fields: got %d %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i].Key != want[i].k || !got[i].Value.Equal(want[i].v) {
			t.Errorf("field %d: got %s=%+v, want %s=%+v", i, got[i].Key, got[i].Value, want[i].k, want[i].v)
		}
	}
}

// checkWarnings wants one warning per substring, in order.
var checkWarnings = dissecttest.CheckWarnings

// session is one parser with a context, for direct Parse calls.
type session struct {
	p    dissect.Parser
	info dissect.StreamInfo
	rec  dissect.Record
	c    dissect.Ctx
}

func newSession(p dissect.Protocol, tr dissect.Transport, decode bool) *session {
	s := &session{}
	s.info.Transport = tr
	s.p = p.NewParser(&s.info)
	s.c = dissect.Ctx{Stream: &s.info, Decode: decode, Rec: &s.rec}
	return s
}

func deviceSession(decode bool) *session {
	return newSession(neptune.New(), dissect.TCP, decode)
}

func wikiSession(int16, decode bool) *session {
	return newSession(neptune.NewWiki(neptune.WikiOptions{Int16: int16}), dissect.UDP, decode)
}

func (s *session) parse(b []byte, final bool) (int, error) {
	s.rec.Reset()
	s.c.Final = final
	return s.p.Parse(&s.c, b)
}
