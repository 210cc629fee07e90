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

func checkFields(t *testing.T, got dissect.Fields, want []kv) {
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

func newSession(decode bool) *session {
	s := &session{}
	s.info.Transport = dissect.TCP
	s.p = deltarobot.New().NewParser(&s.info)
	s.c = dissect.Ctx{Stream: &s.info, Decode: decode, Rec: &s.rec}
	return s
}

func (s *session) parse(dir dissect.Dir, b []byte) (int, error) {
	s.rec.Reset()
	s.c.Dir = dir
	return s.p.Parse(&s.c, b)
}

// prime feeds magic and version to both directions, so the parser trusts
// them.
func (s *session) prime(t testing.TB) {
	t.Helper()
	for d := dissect.Dir(0); d < 2; d++ {
		for _, m := range [][]byte{vMagic, vVersion} {
			if n, err := s.parse(d, m); n != len(m) || err != nil || len(s.rec.Warnings) != 0 {
				t.Fatalf("prime: Parse = %d, %v, warnings %q", n, err, s.rec.Warnings)
			}
		}
	}
}
