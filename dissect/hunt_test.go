package dissect_test

import (
	"fmt"
	"math/rand"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// huntToy is the toy protocol with content detection, so that it is also
// looked for in streams of unknown protocol, over TCP, UDP and serial.
// syncBytes, when set, adds up the bytes handed to Sync.
type huntToy struct {
	toy
	syncBytes *int
}

func (h *huntToy) Info() dissect.Info {
	return dissect.Info{
		Name: "toy", Proto: "toy",
		Transports: []dissect.Transport{dissect.TCP, dissect.UDP, dissect.Serial},
		Detection:  `a direction starting with 03 "TOY"`,
	}
}

func (h *huntToy) NewParser(*dissect.StreamInfo) dissect.Parser {
	return countingParser{h.syncBytes}
}

type countingParser struct{ n *int }

func (p countingParser) Parse(c *dissect.Ctx, b []byte) (int, error) { return toyParser{}.Parse(c, b) }

func (p countingParser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	if p.n != nil {
		*p.n += len(b)
	}
	return toyParser{}.Sync(c, b)
}

// toyGarbage returns n bytes that can start no toy message: 0 or
// 0xC8-0xFD (lengths 0 and over 100 are malformed; 0xFE, the oversize
// marker, and 0xFF are left out).
func toyGarbage(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		if rng.Intn(4) == 0 {
			continue
		}
		b[i] = byte(0xC8 + rng.Intn(0xFE-0xC8))
	}
	return b
}

// toyMessages returns count toy messages (by the toy's definition: a
// length byte 1-100, then that many bytes) starting at stream offset off,
// and the records they must give.
func toyMessages(rng *rand.Rand, count int, off int64) ([]byte, []want) {
	var b []byte
	var w []want
	for range count {
		l := 1 + rng.Intn(toyMax)
		w = append(w, want{"msg", off + int64(len(b)), int64(1 + l)})
		b = append(b, byte(l))
		for range l {
			b = append(b, byte(rng.Intn(256)))
		}
	}
	return b, w
}

func newHuntStream(t testing.TB, info dissect.StreamInfo, lim dissect.Limits, syncBytes *int) (*dissect.Stream, *collector) {
	t.Helper()
	reg, err := dissect.NewRegistry(&huntToy{syncBytes: syncBytes})
	if err != nil {
		t.Fatal(err)
	}
	col := &collector{}
	return dissect.NewStream(info, reg, col, dissect.StreamOptions{Limits: lim, Decode: true}), col
}

func serialInfo() dissect.StreamInfo {
	return dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.Serial, Link: "/dev/ttyUSB0"}, Name: [2]string{"host", "/dev/ttyUSB0"}}
}

// feedRandom feeds b to dir in chunks of 1 to max bytes.
func feedRandom(s *dissect.Stream, dir dissect.Dir, rng *rand.Rand, b []byte, max int) {
	for len(b) > 0 {
		n := 1 + rng.Intn(min(len(b), max))
		s.Data(dir, time.Unix(1, 0), b[:n])
		b = b[n:]
	}
}

// checkJoined checks the records of src: exactly w from offset g on, and
// before g the garbage, skipped: what left the hunt's window before the
// protocol was found with reason "unknown protocol" (proto ""), then
// what the protocol's resync passed over in the window (proto "toy").
func checkJoined(t *testing.T, recs []*dissect.Record, src string, g int64, w []want) {
	t.Helper()
	var got []want
	known := false
	for _, r := range recs {
		switch {
		case r.Src != src:
		case r.Offset >= g:
			got = append(got, want{r.Type, r.Offset, r.Length})
		case r.Type != "skipped":
			t.Fatalf("%s before the first message at %d%s", r.Type, g, dump(recs))
		case r.Proto == "" && !known && reason(r) == dissect.ReasonUnknown:
		case r.Proto == "toy" && strings.HasPrefix(reason(r), "toy: "):
			known = true
		default:
			t.Fatalf("skipped at %d: proto %q reason %q before the first message at %d%s", r.Offset, r.Proto, reason(r), g, dump(recs))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(w) {
		t.Fatalf("records from %d\n got %v\nwant %v%s", g, got, w, dump(recs))
	}
}

// TestHuntDecodesAfterGarbage: 3 KiB that no protocol detects fill the
// detection window; the stream is still decoded from the first message,
// whatever the chunking, and the garbage is skipped: "unknown protocol"
// as far as it left the window before the protocol was found, then the
// protocol's resync.
func TestHuntDecodesAfterGarbage(t *testing.T) {
	for _, info := range []dissect.StreamInfo{tcpInfo(9999), serialInfo()} {
		for seed := int64(0); seed < 40; seed++ {
			rng := rand.New(rand.NewSource(seed))
			garbage := toyGarbage(rng, 3<<10)
			msgs, w := toyMessages(rng, 30, int64(len(garbage)))
			in := append(garbage, msgs...)
			s, col := newHuntStream(t, info, dissect.Limits{}, nil)
			feedRandom(s, 0, rng, in, []int{1, 9, 300, 5000}[seed%4])
			s.End(0, time.Unix(2, 0))
			s.End(1, time.Unix(2, 0))
			checkJoined(t, col.recs, info.Name[0], int64(len(garbage)), w)
			checkTiling(t, col.recs, info.Name[0], int64(len(in)))
			if s.Protocol() == nil {
				t.Fatalf("seed %d: no protocol chosen", seed)
			}
		}
	}
}

func reason(r *dissect.Record) string {
	v, _ := r.Fields.Get("reason")
	return v.Str()
}

// TestHuntOtherDirectionResynchronises: when one direction finds the
// protocol, the other direction's held bytes go to the parser, which
// resynchronises in them: its messages after its own garbage are decoded.
func TestHuntOtherDirectionResynchronises(t *testing.T) {
	for seed := int64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		g0, g1 := toyGarbage(rng, 2500), toyGarbage(rng, 1000+rng.Intn(2000))
		m0, w0 := toyMessages(rng, 20, int64(len(g0)))
		m1, w1 := toyMessages(rng, 20, int64(len(g1)))
		in := [2][]byte{append(g0, m0...), append(g1, m1...)}
		s, col := newHuntStream(t, tcpInfo(9999), dissect.Limits{}, nil)
		for len(in[0])+len(in[1]) > 0 {
			d := rng.Intn(2)
			if len(in[d]) == 0 {
				d ^= 1
			}
			n := 1 + rng.Intn(min(len(in[d]), 200))
			s.Data(dissect.Dir(d), time.Unix(1, 0), in[d][:n])
			in[d] = in[d][n:]
		}
		s.End(0, time.Unix(2, 0))
		s.End(1, time.Unix(2, 0))
		for d, name := range []string{"10.0.0.1:5000", "10.0.0.2:9999"} {
			g, w := []int{len(g0), len(g1)}[d], [][]want{w0, w1}[d]
			var got []want
			for _, r := range col.recs {
				if r.Src == name && r.Offset >= int64(g) {
					got = append(got, want{r.Type, r.Offset, r.Length})
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(w) {
				t.Fatalf("seed %d dir %d: records after the garbage\n got %v\nwant %v%s", seed, d, got, w, dump(col.recs))
			}
			checkTiling(t, col.recs, name, int64(g+len([][]byte{m0, m1}[d])))
		}
	}
}

// TestHuntOneMessageAtEnd: one message after the garbage is not enough
// while more may come, and enough once the direction has ended.
func TestHuntOneMessageAtEnd(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	garbage := toyGarbage(rng, 3000)
	msg, w := toyMessages(rng, 1, int64(len(garbage)))
	s, col := newHuntStream(t, tcpInfo(9999), dissect.Limits{}, nil)
	s.Data(0, time.Unix(1, 0), append(garbage, msg...))
	if s.Protocol() != nil {
		t.Fatalf("protocol chosen on one message that may be cut: %s", dump(col.recs))
	}
	s.End(0, time.Unix(2, 0))
	checkJoined(t, col.recs, "10.0.0.1:5000", 3000, w)
	checkTiling(t, col.recs, "10.0.0.1:5000", int64(3000+len(msg)))
}

// TestHuntNoProtocolStaysSkipped: garbage only gives "unknown protocol"
// records, around a gap, tiling the stream.
func TestHuntNoProtocolStaysSkipped(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	s, col := newHuntStream(t, tcpInfo(9999), dissect.Limits{}, nil)
	s.Data(0, time.Unix(1, 0), toyGarbage(rng, 5000))
	s.Gap(0, time.Unix(1, 0), 10)
	s.Data(0, time.Unix(1, 0), toyGarbage(rng, 100))
	s.End(0, time.Unix(2, 0))
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"skipped", 0, 5000}, {"gap", 5000, 10}, {"skipped", 5010, 100}})
	for _, r := range col.recs {
		if r.Proto != "" || (r.Type == "skipped" && reason(r) != dissect.ReasonUnknown) {
			t.Errorf("record %s proto %q reason %q", r.Type, r.Proto, reason(r))
		}
	}
}

// TestHuntAfterGap: messages that follow a gap in a stream of unknown
// protocol are found too.
func TestHuntAfterGap(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	g := toyGarbage(rng, 2500)
	msgs, w := toyMessages(rng, 5, int64(len(g))+7)
	s, col := newHuntStream(t, serialInfo(), dissect.Limits{}, nil)
	s.Data(0, time.Unix(1, 0), g)
	s.Gap(0, time.Unix(1, 0), 7)
	feedRandom(s, 0, rng, msgs, 10)
	s.End(0, time.Unix(2, 0))
	checkRecords(t, col.recs, "host", append([]want{{"skipped", 0, 2500}, {"gap", 2500, 7}}, w...))
}

// TestHuntNotOnUDP: a UDP flow keeps its per-datagram behaviour: with no
// protocol found, every datagram is skipped even when it would parse.
func TestHuntNotOnUDP(t *testing.T) {
	info := tcpInfo(9999)
	info.Transport = dissect.UDP
	s, col := newHuntStream(t, info, dissect.Limits{}, nil)
	for range 6 {
		s.Datagram(0, time.Unix(1, 0), []byte{1, 'a', 2, 'b', 'c'})
	}
	s.End(0, time.Unix(2, 0))
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"skipped", 0, 30}})
}

// TestHuntWorkIsLinear counts the bytes handed to Sync while a stream of
// garbage arrives one byte at a time. The garbage holds valid length bytes
// whose messages run past the end of what has arrived, so that Sync keeps
// asking for more at an earlier offset: still, the bytes scanned stay
// within a small multiple of the bytes fed.
func TestHuntWorkIsLinear(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	var in []byte
	for len(in) < 50000 {
		in = append(in, 100) // a valid length, its message never followed by another
		in = append(in, toyGarbage(rng, 150)...)
	}
	n := 0
	s, col := newHuntStream(t, tcpInfo(9999), dissect.Limits{}, &n)
	feedRandom(s, 0, rng, in, 1)
	s.End(0, time.Unix(2, 0))
	checkTiling(t, col.recs, "10.0.0.1:5000", int64(len(in)))
	if n > 4*len(in) {
		t.Errorf("Sync was handed %d bytes for %d bytes fed; want at most 4 per byte", n, len(in))
	}
}

// FuzzHunt feeds arbitrary bytes, in arbitrary chunks with gaps, to both
// directions of a stream of unknown protocol, and checks that the records
// tile every byte.
func FuzzHunt(f *testing.F) {
	f.Add([]byte{0xC8, 0xC9, 2, 'a', 'b', 1, 'c', 1, 'd'}, int64(1))
	f.Add([]byte(strings.Repeat("\xC8", 40)+"\x01a\x01b\x01c"), int64(2))
	f.Add([]byte{100, 0xC8, 0, 0, 3, 'T', 'O', 'Y', 1}, int64(3))
	f.Fuzz(func(t *testing.T, in []byte, seed int64) {
		rng := rand.New(rand.NewSource(seed))
		info := tcpInfo(9999)
		if seed%2 == 0 {
			info = serialInfo()
		}
		s, col := newHuntStream(t, info, dissect.Limits{MaxMessage: 32, MaxSync: 16, MaxDetect: 8}, nil)
		var total [2]int64
		t0 := time.Unix(1, 0)
		for len(in) > 0 {
			n := 1 + rng.Intn(min(len(in), 7))
			d := dissect.Dir(rng.Intn(2))
			if rng.Intn(10) == 0 {
				s.Gap(d, t0, int64(n))
			} else {
				s.Data(d, t0, in[:n])
			}
			total[d] += int64(n)
			in = in[n:]
		}
		s.End(0, t0)
		s.End(1, t0)
		checkTiling(t, col.recs, info.Name[0], total[0])
		checkTiling(t, col.recs, info.Name[1], total[1])
	})
}

var _ = netip.AddrPort{}
