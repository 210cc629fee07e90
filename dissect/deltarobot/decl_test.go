package deltarobot_test

// Every record the decoder emits matches its declaration (Info.Types):
// the records of the shipped captures, of messages of every type built by
// the separate encoder (internal/testenc/deltaenc), and of random and
// mutated bytes. Each test also names the declared types its inputs never
// produce, so that a type no input reaches is a visible, explained gap.

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

// declRule decodes the test streams (server port 4000) as deltarobot.
const declRule = "tcp.port==4000,deltarobot"

// TestDeclaredCaptures runs every shipped Deltarobot capture through the
// pipeline: every record matches its declaration, and the types decoded
// are exactly the types its truth file (written by the encoder) lists.
func TestDeclaredCaptures(t *testing.T) {
	seen := dissecttest.CheckCaptures(t, "../../pcaps/deltarobot_*.pcap*", 6, func(dissecttest.Capture) []dissect.Protocol {
		return []dissect.Protocol{deltarobot.New()}
	})
	// Every type occurs in the captures (deltarobot_garbage has the
	// unknown ids, deltarobot_loss the gap): none is left out.
	if never := seen.Never(dissecttest.Registry(t, []string{declRule}, deltarobot.New()), "deltarobot"); len(never) != 0 {
		t.Errorf("declared types no capture produced: %v, want none", never)
	}
}

var (
	declClient = netip.MustParseAddrPort("198.51.100.7:50001")
	declServer = netip.MustParseAddrPort("192.0.2.1:4000")
	declT0     = time.Date(2024, 5, 2, 9, 0, 0, 0, time.UTC)
)

// declFeed feeds each direction's bytes (dir 0 the client, 1 the server)
// to one stream, cut into chunks drawn from rng (nil: the writes as
// sends gives them, or each direction whole), with a gap of gap bytes
// before the server's byte gapAt when gap > 0, and returns the records.
func declFeed(t testing.TB, reg *dissect.Registry, s *deltaenc.Session, rng *rand.Rand, gapAt, gap int64) []*dissect.Record {
	t.Helper()
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP, Addr: [2]netip.AddrPort{declClient, declServer}},
		Name: [2]string{declClient.String(), declServer.String()}}
	var sink dissecttest.Collector
	st := dissect.NewStream(info, reg, &sink, dissect.StreamOptions{Decode: true})
	sends := s.Sends
	if len(sends) == 0 {
		for d := range 2 {
			sends = append(sends, deltaenc.Send{Dir: d, End: int64(len(s.Stream[d]))})
		}
	}
	for _, w := range sends {
		at := declT0.Add(w.At)
		b := s.Stream[w.Dir][w.Start:w.End]
		if w.Dir == deltaenc.Server && gap > 0 && gapAt >= w.Start && gapAt < w.End {
			k := gapAt - w.Start
			dissecttest.Data(st, dissect.Dir(w.Dir), at, b[:k], rng, []int{1, 3, 18, 64})
			st.Gap(dissect.Dir(w.Dir), at, gap)
			b = b[k:]
		}
		dissecttest.Data(st, dissect.Dir(w.Dir), at, b, rng, []int{1, 3, 18, 64})
	}
	st.End(0, declT0.Add(time.Second))
	st.End(1, declT0.Add(time.Second))
	if st.Err() != nil {
		t.Fatal(st.Err())
	}
	return sink.Records
}

// declConversation is a conversation holding every message the encoder
// can build: each known type (a pong that answers a ping, so with rtt_ms,
// and one that answers none), the broken forms the decoder still decodes
// (a version other than 1, a curve with trailing bytes, unknown ids of
// every kind: an unknown type, a known type under another size code, the
// reserved type 0x000, an unknown variable-length type) and the ones it
// skips (an undefined size code, a message cut by the end of the stream).
func declConversation(t testing.TB) *deltaenc.Session {
	t.Helper()
	var c deltaenc.Conversation
	pts := [][3]float32{{0, 0, 0}, {1, 0.5, -1}, {0.25, 2, 3}}
	c.Write(deltaenc.Server, 0, func(b *deltaenc.Builder) {
		b.Magic()
		b.Version(1)
		b.Curve(pts)
		b.Curve(nil)
		b.ActuatorPosition(1, 2, 3, 0)
		b.CurrentDirection(0, 0, 1, 0)
		b.DesiredDirection(0, 1, 0, 0)
		b.Ping(0x9832363d2655ce94)
	})
	c.Write(deltaenc.Client, 2*time.Millisecond, func(b *deltaenc.Builder) {
		b.Magic()
		b.Version(2)
		b.Pong(0x9832363d2655ce94)
		b.Pong(7) // answers no ping
	})
	c.Write(deltaenc.Server, 3*time.Millisecond, func(b *deltaenc.Builder) {
		b.BadCurve(pts[:2], []byte{1, 2, 3, 4, 5})
		b.Unknown(0x300a, []byte{1, 2, 3, 4, 5, 6, 7, 8})
		b.Unknown(0x2003, []byte{9, 9, 9, 9})
		b.Unknown(0x1000, []byte{0, 0})
		b.Unknown(0xf00b, []byte("future message"))
		b.BadSize(7, 3, []byte{0xaa, 0xbb, 0xcc})
		b.ActuatorPosition(4, 5, 6, 0)
		b.CurrentDirection(1, 0, 0, 0)
		b.DesiredDirection(0, 0, -1, 0)
		b.EndOfTransmission("exercise finished")
		b.EndOfTransmission("")
	})
	c.Write(deltaenc.Client, 4*time.Millisecond, func(b *deltaenc.Builder) {
		b.EndOfTransmission("bye")
		b.Truncated(deltaenc.EndOfTransmission("cut"), 7)
	})
	s, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDeclaredEncoder checks the records of messages of every type built
// by the encoder, fed write by write, byte by byte and with a gap.
func TestDeclaredEncoder(t *testing.T) {
	s := declConversation(t)
	reg := dissecttest.Registry(t, []string{declRule}, deltarobot.New())
	all := dissecttest.Seen{}
	whole := declFeed(t, reg, s, nil, 0, 0)
	all.Add(dissecttest.CheckDeclared(t, reg, whole))
	all.Add(dissecttest.CheckDeclared(t, reg, declFeed(t, reg, s, rand.New(rand.NewPCG(1, 2)), 0, 0)))
	// A gap inside the server's first actuator position.
	pos := slices.IndexFunc(s.Truth[deltaenc.Server], func(m deltaenc.Message) bool { return m.Type == deltaenc.TypeActuatorPosition })
	at := s.Truth[deltaenc.Server][pos].Offset + 5
	all.Add(dissecttest.CheckDeclared(t, reg, declFeed(t, reg, s, nil, at, 9)))

	// The optional rtt_ms: present on the pong that answers the ping,
	// absent on the other.
	var rtt []bool
	for _, r := range whole {
		if r.Type == "pong" {
			_, ok := r.Fields.Get("rtt_ms")
			rtt = append(rtt, ok)
		}
	}
	if !slices.Equal(rtt, []bool{true, false}) {
		t.Errorf("pongs with rtt_ms: %v, want [true false]", rtt)
	}
	if never := all.Never(reg, "deltarobot"); len(never) != 0 {
		t.Errorf("declared types the encoder's messages never produced: %v, want none", never)
	}
}

// TestDeclaredHostile feeds random bytes and mutated conversations, in
// random chunks: whatever the bytes, every record is a declared one.
func TestDeclaredHostile(t *testing.T) {
	reg := dissecttest.Registry(t, []string{declRule}, deltarobot.New())
	base := declConversation(t)
	rng := rand.New(rand.NewPCG(20, 6))
	all := dissecttest.Seen{}
	for i := range 300 {
		s := &deltaenc.Session{}
		for d := range 2 {
			b := append([]byte(nil), base.Stream[d]...)
			switch i % 3 {
			case 0: // random bytes after a valid handshake, so that the direction is trusted
				b = append(b[:16:16], declRandom(rng, rng.IntN(400))...)
			case 1: // flipped bytes
				for range 1 + rng.IntN(8) {
					b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
				}
			case 2: // random bytes anywhere, no handshake
				b = declRandom(rng, rng.IntN(400))
			}
			s.Stream[d] = b
		}
		gapAt := int64(rng.IntN(len(s.Stream[deltaenc.Server]) + 1))
		all.Add(dissecttest.CheckDeclared(t, reg, declFeed(t, reg, s, rng, gapAt, int64(rng.IntN(3)*7))))
		if t.Failed() {
			t.Fatalf("input %d: client %x, server %x", i, s.Stream[0], s.Stream[1])
		}
	}
	// With fixed seeds, the mutated conversations reach every type.
	if never := all.Never(reg, "deltarobot"); len(never) != 0 {
		t.Errorf("declared types the random inputs never produced: %v, want none", never)
	}
}

// declRandom returns n random bytes, a third of them taken from the low
// bytes of known ids and size codes so that messages frame often.
func declRandom(rng *rand.Rand, n int) []byte {
	ids := []byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x00, 0x10, 0x20, 0x30, 0x40, 0xf0}
	b := make([]byte, n)
	for i := range b {
		if rng.IntN(3) == 0 {
			b[i] = ids[rng.IntN(len(ids))]
		} else {
			b[i] = byte(rng.Uint32())
		}
	}
	return b
}

// FuzzDeclared: arbitrary bytes in both directions, in chunks chosen by
// seed, never give a record that departs from its declaration.
func FuzzDeclared(f *testing.F) {
	s := declConversation(f)
	f.Add(s.Stream[deltaenc.Server], s.Stream[deltaenc.Client], uint64(1))
	f.Add(deltaenc.Curve([][3]float32{{1, 2, 3}}), deltaenc.VarRaw(0xf00b, []byte("x")), uint64(2))
	f.Fuzz(func(t *testing.T, server, client []byte, seed uint64) {
		reg := dissecttest.Registry(t, []string{declRule}, deltarobot.New())
		in := &deltaenc.Session{Stream: [2][]byte{client, server}}
		dissecttest.CheckDeclared(t, reg, declFeed(t, reg, in, rand.New(rand.NewPCG(seed, 0)), int64(seed%64), int64(seed%3)))
	})
}
