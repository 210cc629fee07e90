package vrpn

import (
	"encoding/binary"
	"fmt"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// testCookie is a mainline cookie (README fact 1): "vrpn: ver. 07.38", two
// spaces, log mode '0', padded with NULs to 24 bytes.
const testCookie = "vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"

// runWhole judges the candidate at b[i] from scratch, as the top of
// resync.go states the rules, for a direction with no table and no time
// seen: good when chainLen headers in a row are plausible, with ids below
// 2000, sequence numbers counting up by one and times within a day of the
// first that has one (0.0 is none), spanning at most joinWindow bytes; bad as soon as one is not;
// partial when b ends first.
func runWhole(b []byte, i int) verdict {
	var sec0, seq uint32
	timed := false
	start := i
	for n := 0; ; n++ {
		if i+24 > len(b) {
			// A cut header is judged so far only as a candidate's
			// first; a run waits for the whole header.
			if n == 0 && plausible(b[i:]) == bad {
				return bad
			}
			return partial
		}
		h := readHeader(b[i:])
		if plausible(b[i:i+24]) != good || (h.typ >= 0 && (h.typ > 1999 || h.sender > 1999)) || ((h.typ == -1 || h.typ == -2) && h.sender > 1999) {
			return bad
		}
		if n > 0 && h.sequence != seq+1 {
			return bad
		}
		switch {
		case h.sec == 0 && h.usec == 0: // no time: not compared
		case !timed:
			sec0, timed = h.sec, true
		case math.Abs(float64(h.sec)-float64(sec0)) > 86400:
			return bad
		}
		seq = h.sequence
		if n == 2 {
			return good
		}
		i += padded(h.length)
		if i+24-start > joinWindow {
			return bad
		}
	}
}

// syncWhole is the search without state kept between calls: it judges
// every candidate of the whole buffer on every call. It is the oracle
// that the incremental search must agree with, call for call.
func syncWhole(phase int, off int64, b []byte) (int, bool) {
	i, step := 0, 1
	if phase >= 0 {
		i = int((int64(phase) - off) & (align - 1))
		step = align
	}
	for ; i < len(b); i += step {
		switch runWhole(b, i) {
		case good:
			return i, true
		case partial:
			return i, false
		}
	}
	return len(b), false
}

// hostileHeader writes at b[0:24] a plausible header (the check of
// parse.go) whose message is l bytes: tv_usec 999999 and type 5, so that
// neither word, read as a length, is plausible.
func hostileHeader(b []byte, l uint32, rng *rand.Rand) {
	binary.BigEndian.PutUint32(b[0:], l)
	binary.BigEndian.PutUint32(b[4:], rng.Uint32())
	binary.BigEndian.PutUint32(b[8:], 999999)
	binary.BigEndian.PutUint32(b[12:], uint32(rng.IntN(2000)))
	binary.BigEndian.PutUint32(b[16:], 5)
	binary.BigEndian.PutUint32(b[20:], rng.Uint32())
}

// hostileGarbage returns n bytes (n a multiple of 32) meant to start at a
// stream offset that is a multiple of 32: 0xFF, with, at a quarter of the
// multiples of 32, a plausible header whose message is up to 31,700 bytes
// (a run may span 32 KiB) and ends at 8, 16 or 24 past a multiple of 32,
// where the next header cannot be plausible. Every such candidate keeps Sync waiting for its
// whole message, and none is ever confirmed.
func hostileGarbage(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xFF
	}
	for at := 0; at+32 <= n; at += 32 {
		if rng.IntN(4) != 0 {
			continue
		}
		l := uint32(32*(1+rng.IntN(990)) + 8*(1+rng.IntN(3))) // padded, ≡ 8, 16, 24 mod 32, below joinWindow
		hostileHeader(b[at:], l, rng)
	}
	return b
}

// mixedBytes returns n bytes for the oracle test: 0xFF runs, plausible
// headers with lengths short and long, runs of messages and zeros, so
// that candidates are confirmed, refuted and left waiting.
func mixedBytes(rng *rand.Rand, n int) []byte {
	var b []byte
	for len(b) < n {
		switch rng.IntN(5) {
		case 0:
			for range rng.IntN(40) {
				b = append(b, 0xFF)
			}
		case 1:
			h := make([]byte, 24)
			hostileHeader(h, uint32(24+rng.IntN(3000)), rng)
			b = append(b, h...)
		case 2: // real messages: headers with bodies, padded, in a run
			seq, sec := rng.Uint32(), rng.Uint32()
			for range 1 + rng.IntN(4) {
				l := 24 + rng.IntN(64)
				m := make([]byte, padded(uint32(l)))
				hostileHeader(m, uint32(l), rng)
				binary.BigEndian.PutUint32(m[4:], sec+uint32(rng.IntN(2)))
				binary.BigEndian.PutUint32(m[8:], uint32(rng.IntN(1000000)))
				binary.BigEndian.PutUint32(m[16:], uint32(rng.IntN(10)))
				binary.BigEndian.PutUint32(m[20:], seq)
				seq++
				b = append(b, m...)
			}
		case 3:
			b = append(b, make([]byte, rng.IntN(12))...)
		default:
			for range rng.IntN(16) {
				b = append(b, byte(rng.IntN(256)))
			}
		}
	}
	return b[:n]
}

// TestSyncResumesLikeWhole drives Sync as dissect.Stream does (the held
// bytes from the first offset Sync could not judge, plus a chunk; a found
// point restarts the search one byte further, as after a malformed
// message) and checks every answer against the whole-buffer search, with
// and without a known phase.
func TestSyncResumesLikeWhole(t *testing.T) {
	for trial := range 60 {
		rng := rand.New(rand.NewPCG(uint64(trial), 11))
		in := mixedBytes(rng, 20000)
		phase := -1
		if trial%2 == 1 {
			phase = trial % 8
		}
		maxChunk := []int{1, 3, 8, 100, 5000}[trial%5]
		hostile := trial%6 == 5
		if hostile {
			// Hundreds of candidates waiting at once, in chunks that end
			// at 4 mod 16, never where a candidate's message does.
			in = hostileGarbage(rng, 200000)
			phase = []int{-1, 0}[trial%12/6] // where its headers are
		}
		h := newTCP(t)
		p := h.parser.(*parser)
		p.dirs[0].phase, p.dirs[0].cookiePhase = phase, phase >= 0
		var held []byte
		off, fed := int64(0), 0
		for fed < len(in) {
			n := 1 + rng.IntN(maxChunk)
			if hostile {
				n = 16 * (1 + rng.IntN(200))
				if fed == 0 {
					n = 4
				}
			}
			n = min(n, len(in)-fed)
			held = append(held, in[fed:fed+n]...)
			fed += n
			for len(held) > 0 {
				h.off[0] = off
				k, ok := p.Sync(h.ctx(0, false), held)
				wk, wok := syncWhole(phase, off, held)
				if k != wk || ok != wok {
					t.Fatalf("trial %d: Sync at %d over %d bytes = %d, %v; the whole search says %d, %v", trial, off, len(held), k, ok, wk, wok)
				}
				if ok {
					k++ // resume past the point, as after a malformed message
				} else if k < len(held) && rng.IntN(8) == 0 {
					// Cut more, as the Stream's sync limit or the hunt's
					// window does: candidates before the cut are dropped.
					k += rng.IntN(len(held) - k)
				}
				held = held[k:]
				off += int64(k)
				if !ok {
					break
				}
			}
		}
	}
}

// syncCounter wraps the protocol to reach the parsers it makes.
type syncCounter struct {
	*protocol
	made []*parser
}

func (s *syncCounter) NewParser(i *dissect.StreamInfo) dissect.Parser {
	p := s.protocol.NewParser(i).(*parser)
	s.made = append(s.made, p)
	return p
}

// TestSyncWorkBounded: 1 MiB of garbage made of candidates that keep Sync
// waiting, after a cookie, fed through dissect.Stream in 1-byte segments
// and in 16-byte segments that never end where a candidate's message ends:
// the headers Sync examines stay below one per byte (the search that
// rescans what it holds examines thousands per byte here), the records
// tile the input, and every garbage byte is skipped (a buffer that ends
// where a candidate's message does confirms nothing).
func TestSyncWorkBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	garbage := hostileGarbage(rng, 1<<20)
	in := append([]byte(testCookie+"\xff\xff\xff\xff\xff\xff\xff\xff"), garbage...) // 32 bytes before the garbage
	for _, seg := range []int{1, 16} {
		sc := &syncCounter{protocol: New().(*protocol)}
		reg, err := dissect.NewRegistry(sc)
		if err != nil {
			t.Fatal(err)
		}
		var skipped, total int64
		sink := dissect.SinkFunc(func(r *dissect.Record) error {
			total += r.Length
			if r.Type == dissect.TypeSkipped {
				skipped += r.Length
			}
			return nil
		})
		st := dissect.NewStream(newTCP(t).info, reg, sink, dissect.StreamOptions{Decode: true})
		t0 := time.Unix(1795306127, 0)
		first := 1
		if seg == 16 {
			first = 36 // segments end at 4 mod 16; messages at 0 or 8 mod 16
		}
		st.Data(0, t0, in[:first])
		for i := first; i < len(in); i += seg {
			st.Data(0, t0, in[i:min(i+seg, len(in))])
		}
		st.End(0, t0)
		if len(sc.made) != 1 {
			t.Fatalf("%d parsers", len(sc.made))
		}
		checks := sc.made[0].dirs[0].checks
		t.Logf("%d-byte segments, %d bytes: %d headers examined", seg, len(garbage), checks)
		if checks > int64(len(garbage)) {
			t.Errorf("%d-byte segments: Sync examined %d headers for %d bytes of garbage; want at most one per byte", seg, checks, len(garbage))
		}
		if total != int64(len(in)) {
			t.Errorf("%d-byte segments: records cover %d bytes, want %d", seg, total, len(in))
		}
		if skipped != int64(len(in)-cookieLen) {
			t.Errorf("%d-byte segments: skipped %d bytes, want %d", seg, skipped, len(in)-cookieLen)
		}
	}
}

// TestSyncHoldsAtMostWindow: while Sync waits on candidates (hostile and
// dense garbage, 16-byte segments), a direction holds at most the bytes
// from the first undecided candidate, less than joinWindow plus a
// segment: the buffer's capacity, which a run-wide budget counts, stays
// within twice that (the buffer doubles as it grows).
func TestSyncHoldsAtMostWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	pad := []byte(testCookie + "\xff\xff\xff\xff\xff\xff\xff\xff")
	for name, garbage := range map[string][]byte{"hostile": hostileGarbage(rng, 1<<19), "dense": denseGarbage(4, 4000)} {
		reg, _ := registry(t)
		budget := dissect.NewHeldBudget(1 << 30)
		var covered int64
		sink := dissect.SinkFunc(func(r *dissect.Record) error { covered += r.Length; return nil })
		st := dissect.NewStream(newTCP(t).info, reg, sink, dissect.StreamOptions{Budget: budget})
		in := append(append([]byte(nil), pad...), garbage...)
		t0 := time.Unix(1795306127, 0)
		st.Data(0, t0, in[:36])
		for i := 36; i < len(in); i += 16 {
			st.Data(0, t0, in[i:min(i+16, len(in))])
		}
		st.End(0, t0)
		if covered != int64(len(in)) {
			t.Errorf("%s: records cover %d of %d bytes", name, covered, len(in))
		}
		if most := int64(2 * (joinWindow + 16)); budget.Peak() > most || budget.Peak() < joinWindow/2 {
			t.Errorf("%s: held at most %d bytes, want %d..%d", name, budget.Peak(), joinWindow/2, most)
		}
		t.Logf("%s: peak held %d bytes", name, budget.Peak())
	}
}

// TestSyncSenderNotCounting: a direction whose sender writes the same
// sequence number on every message (not mainline, which counts) is still
// resynchronised after a gap, once it was seen to repeat its number; the
// first boundary after the gap starts the run.
func TestSyncSenderNotCounting(t *testing.T) {
	data := []byte(testCookie)
	for i := range 10 {
		data = append(data, encMsg(1795306106, uint32(1000*i), 1, 16, 7, []byte("8 bytes."))...)
	}
	reg, _ := registry(t)
	col := &dissecttest.Collector{}
	st := dissect.NewStream(newTCP(t).info, reg, col, dissect.StreamOptions{Decode: true})
	t0 := time.Unix(1795306127, 0)
	st.Data(0, t0, data[:24+32*3+5]) // the gap falls inside the fourth message, [120, 152)
	st.Gap(0, t0, 10)
	st.Data(0, t0, data[24+32*3+15:])
	st.End(0, t0)
	var got []string
	for _, r := range col.Records {
		got = append(got, fmt.Sprintf("%s@%d", r.Type, r.Offset))
	}
	want := []string{"cookie@0", "unknown@24", "unknown@56", "unknown@88", "skipped@120", "gap@125", "skipped@135"}
	for off := 152; off < len(data); off += 32 {
		want = append(want, fmt.Sprintf("unknown@%d", off))
	}
	if !slices.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
}
