package deltarobot_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// Test vectors, written out by hand. Sources: the spec's own example
// (deltarobot-protocol-v6.txt, "Message example") and protocols.md §4.3; the
// rest were written by hand from the framing in §4.2, with the float32 bit
// patterns worked out by hand (1 = 3f800000, 2 = 40000000, 3 = 40400000,
// 0.5 = 3f000000, -1 = bf800000, -2 = c0000000, 0.25 = 3e800000,
// 7 = 40e00000; little-endian on the wire).
var (
	vMagic    = h("01 30 44 65 6c 74 61 52 56 72")                         // §4.3
	vVersion  = h("02 20 01 00 00 00")                                     // spec example, §4.3
	vPing     = h("04 30 ef cd ab 89 67 45 23 01")                         // §4.3: 0x0123456789abcdef
	vPong     = h("05 30 ef cd ab 89 67 45 23 01")                         // §4.3
	vEOTEmpty = h("06 f0 00 00 00 00")                                     // §4.3
	vEOTBye   = h("06 f0 03 00 00 00 62 79 65")                            // §4.3: "bye"
	vPosition = h("03 40 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 00 00") // §4.3: (1,2,3,0)
	// §4.3: points (0,0,0) and (1,0.5,-1).
	vCurve     = h("09 f0 18 00 00 00" + "00 00 00 00 00 00 00 00 00 00 00 00" + "00 00 80 3f 00 00 00 3f 00 00 80 bf")
	vDirection = h("07 40 00 00 00 c0 00 00 80 3e 00 00 80 3f 00 00 e0 40") // (-2,0.25,1,7)
	vDesired   = h("08 40 00 00 00 3f 00 00 80 bf 00 00 00 00 00 00 00 00") // (0.5,-1,0,0)
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

func f32(v float32) dissect.Value { return dissect.Float32(v) }

func vec(x, y, z, u float32) []kv {
	return []kv{{"x", f32(x)}, {"y", f32(y)}, {"z", f32(z)}, {"u", f32(u)}}
}

func point(x, y, z float32) dissect.Field {
	return dissect.Elem(dissect.Array([]dissect.Field{dissect.Elem(f32(x)), dissect.Elem(f32(y)), dissect.Elem(f32(z))}))
}

func points(ps ...dissect.Field) []kv { return []kv{{"points", dissect.Array(ps)}} }

// checkFields wants exactly the fields want, in order.
func checkFields(t *testing.T, got dissect.Fields, want []kv) {
	t.Helper()
	fs := make([]dissect.Field, len(want))
	for i, f := range want {
		fs[i] = dissect.Field{Key: f.k, Value: f.v}
	}
	dissecttest.CheckFields(t, got, fs...)
}

// checkWarnings wants one warning per substring, in order.
var checkWarnings = dissecttest.CheckWarnings

// session is a parser of a TCP stream, for direct Parse calls.
type session struct{ *dissecttest.Session }

func newSession(decode bool) *session {
	info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}}
	return &session{dissecttest.NewSession(deltarobot.New(), info, decode)}
}

// prime feeds magic and version to both directions, so the parser trusts
// them.
func (s *session) prime(t testing.TB) {
	t.Helper()
	for d := dissect.Dir(0); d < 2; d++ {
		for _, m := range [][]byte{vMagic, vVersion} {
			if n, err := s.Parse(d, m); n != len(m) || err != nil || len(s.Rec.Warnings) != 0 {
				t.Fatalf("prime: Parse = %d, %v, warnings %q", n, err, s.Rec.Warnings)
			}
		}
	}
}
