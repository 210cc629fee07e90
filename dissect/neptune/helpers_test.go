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

// checkFields wants exactly the fields want, in order.
func checkFields(t testing.TB, got dissect.Fields, want []kv) {
	t.Helper()
	fs := make([]dissect.Field, len(want))
	for i, f := range want {
		fs[i] = dissect.Field{Key: f.k, Value: f.v}
	}
	dissecttest.CheckFields(t, got, fs...)
}

// checkWarnings wants one warning per substring, in order.
var checkWarnings = dissecttest.CheckWarnings

// session is one parser, for direct Parse calls on direction 0.
type session struct{ *dissecttest.Session }

func newSession(p dissect.Protocol, tr dissect.Transport, decode bool) *session {
	return &session{dissecttest.NewSession(p, dissect.StreamInfo{StreamID: dissect.StreamID{Transport: tr}}, decode)}
}

func deviceSession(decode bool) *session {
	return newSession(neptune.New(), dissect.TCP, decode)
}

func wikiSession(int16, decode bool) *session {
	return newSession(neptune.NewWiki(neptune.WikiOptions{Int16: int16}), dissect.UDP, decode)
}

// parse parses b, which ends a datagram when final is set.
func (s *session) parse(b []byte, final bool) (int, error) {
	s.Ctx.Final = final
	return s.Parse(0, b)
}
