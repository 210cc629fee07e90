package dissect_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// budgetSink collects the records of many streams, keeping Raw.
type budgetSink struct{ recs []*dissect.Record }

func (s *budgetSink) Record(r *dissect.Record) error {
	c := r.Clone()
	c.Raw = append([]byte(nil), r.Raw...)
	s.recs = append(s.recs, c)
	return nil
}

// TestHeldBudgetGivesWayOldestFirst: ten toy streams each announce a
// message of 20,005 bytes and send it in 1,000-byte pieces, round robin,
// under a 64 KiB budget. Each unfinished message holds at least 19,005
// bytes before its last piece, so at most 3 fit at once: at least 7 must
// give way, and, the oldest holder going first, those that keep theirs
// are the last streams to have started. Every byte of every stream is in
// exactly one record (with Raw, the records' bytes are the wire's), the
// held bytes never pass the budget after a call, and a message sent after
// a dropped one is decoded: the rest of the dropped one was passed over.
func TestHeldBudgetGivesWayOldestFirst(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) {
			const streams, body, piece = 10, 20000, 1000
			const budget = 64 << 10
			reg, err := dissect.NewRegistry(&toy{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := reg.ParseDecodeAs("tcp.port==7000,toy")
			if err != nil {
				t.Fatal(err)
			}
			reg.AddRule(r)
			b := dissect.NewHeldBudget(budget)
			sink := &budgetSink{}
			wire := make([][]byte, streams)
			ss := make([]*dissect.Stream, streams)
			for i := range ss {
				info := tcpInfo(7000)
				info.Addr[0] = netip.AddrPortFrom(info.Addr[0].Addr(), uint16(6000+i))
				info.Name[0] = info.Addr[0].String()
				ss[i] = dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: true, Raw: raw, Budget: b})
				msg := []byte{0xFE, 0, 0, body >> 8, body & 0xff}
				for k := range body {
					msg = append(msg, byte(i+k))
				}
				wire[i] = append(msg, 2, 'o', 'k') // a message after it
			}
			t0 := time.Unix(1700000000, 0)
			sent := make([]int, streams)
			for more := true; more; {
				more = false
				for i, s := range ss {
					if sent[i] == len(wire[i]) {
						continue
					}
					n := min(piece, len(wire[i])-sent[i])
					s.Data(0, t0, wire[i][sent[i]:sent[i]+n])
					sent[i] += n
					more = more || sent[i] < len(wire[i])
					if b.Held() > b.Max() {
						t.Fatalf("after a piece of stream %d: %d bytes held, budget %d", i, b.Held(), b.Max())
					}
				}
			}
			for _, s := range ss {
				s.End(0, t0)
				s.End(1, t0)
			}
			if b.Held() != 0 {
				t.Errorf("%d bytes held after every stream ended, want 0", b.Held())
			}
			var kept []int
			var dropped int64
			for i := range ss {
				src := ss[i].Info.Name[0]
				var got []string
				var rawAll []byte
				var off int64
				for _, r := range sink.recs {
					if r.Src != src {
						continue
					}
					if r.Offset != off {
						t.Fatalf("stream %d: record %s at %d, want %d%s", i, r.Type, r.Offset, off, dump(sink.recs))
					}
					off += r.Length
					rawAll = append(rawAll, r.Raw...)
					reason, _ := r.Fields.Get("reason")
					switch {
					case r.Type == "skipped" && strings.Contains(reason.Str(), "held-message budget of 65536 bytes reached"):
						got = append(got, "dropped")
					default:
						got = append(got, r.Type)
					}
				}
				if off != int64(len(wire[i])) {
					t.Fatalf("stream %d: records cover %d bytes, want %d", i, off, len(wire[i]))
				}
				if raw && !bytes.Equal(rawAll, wire[i]) {
					t.Fatalf("stream %d: the records' Raw bytes are not the wire's", i)
				}
				switch g := strings.Join(got, " "); {
				case g == "big msg":
					kept = append(kept, i)
				case g == "dropped msg" || (raw && strings.HasPrefix(g, "dropped dropped") && strings.HasSuffix(g, " msg")):
					// Raw cuts the drop at the held bytes, to send them.
					dropped++
				default:
					t.Fatalf("stream %d: records %q, want \"big msg\" or \"dropped msg\"%s", i, g, dump(sink.recs))
				}
			}
			if len(kept) > 3 || dropped < 7 {
				t.Fatalf("%d messages kept (%v), %d dropped; want at most 3 kept", len(kept), kept, dropped)
			}
			for k, i := range kept {
				if want := streams - len(kept) + k; i != want {
					t.Fatalf("kept the messages of streams %v, want the last %d streams (oldest give way first)", kept, len(kept))
				}
			}
			// Before the first kept message's last piece, every kept
			// stream held at least 19 pieces.
			if b.Peak() > budget || b.Peak() < int64(len(kept))*19*piece {
				t.Errorf("peak %d, want within [%d, %d]", b.Peak(), len(kept)*19*piece, budget)
			}
			if n, nb := b.Dropped(); n != dropped || nb < dropped || nb > dropped*(5+body) {
				t.Errorf("Dropped() = %d messages, %d bytes; want %d messages of 1 to %d held bytes each", n, nb, dropped, 5+body)
			}
		})
	}
}

// TestHeldBudgetNilChangesNothing: without a budget a stream holds its
// message whole, as before.
func TestHeldBudgetNilChangesNothing(t *testing.T) {
	s, col := newToyStream(t, tcpInfo(7000), true, dissect.Limits{})
	msg := append([]byte{0xFE, 0, 1, 0, 0}, make([]byte, 65536)...)
	for i := 0; i < len(msg); i += 1000 {
		s.Data(0, time.Unix(1, 0), msg[i:min(i+1000, len(msg))])
	}
	s.End(0, time.Unix(2, 0))
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"big", 0, int64(len(msg))}})
}

// TestHeldBudgetHuntWindows: streams of no known protocol keep a window of
// their latest bytes while the parsers look for a sync point in it
// (hunt.go); under a budget smaller than three windows, the oldest window
// is skipped early. The bytes stay "unknown protocol" skipped records,
// every byte in one, and no message is counted as dropped.
func TestHeldBudgetHuntWindows(t *testing.T) {
	reg, err := dissect.NewRegistry(&rawHuntToy{}) // detects by content: hunts (raw_test.go)
	if err != nil {
		t.Fatal(err)
	}
	b := dissect.NewHeldBudget(4 << 10)
	sink := &budgetSink{}
	t0 := time.Unix(1700000000, 0)
	const streams, size = 3, 3000
	ss := make([]*dissect.Stream, streams)
	for i := range ss {
		info := tcpInfo(9000) // no rule, no default port: the hunt
		info.Addr[0] = netip.AddrPortFrom(info.Addr[0].Addr(), uint16(6000+i))
		info.Name[0] = info.Addr[0].String()
		ss[i] = dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: true, Budget: b})
	}
	junk := bytes.Repeat([]byte{0xC8}, 100) // 200: never a valid toy length
	for sent := 0; sent < size; sent += len(junk) {
		for i, s := range ss {
			s.Data(0, t0, junk)
			if b.Held() > b.Max() {
				t.Fatalf("stream %d: %d bytes held, budget %d", i, b.Held(), b.Max())
			}
		}
	}
	if b.Peak() == 0 {
		t.Fatal("nothing was ever held: the hunt did not keep a window, the test tests nothing")
	}
	for _, s := range ss {
		s.End(0, t0)
		s.End(1, t0)
	}
	msgs, held := b.Dropped()
	if msgs != 0 || held == 0 {
		t.Errorf("Dropped() = %d messages, %d bytes; want no message and some bytes skipped early", msgs, held)
	}
	for _, s := range ss {
		checkTiling(t, sink.recs, s.Info.Name[0], size)
		for _, r := range sink.recs {
			if reason, _ := r.Fields.Get("reason"); r.Src == s.Info.Name[0] && (r.Type != "skipped" || reason.Str() != dissect.ReasonUnknown) {
				t.Fatalf("record %s %q, want skipped %q", r.Type, reason.Str(), dissect.ReasonUnknown)
			}
		}
	}
	if b.Held() != 0 {
		t.Errorf("%d bytes held after the end", b.Held())
	}
}

// TestHeldBudgetIdleBuffersGoFirst: a stream that keeps only an empty
// buffer (its message ended) gives way before one that holds an
// unfinished message, even an older one: releasing it loses nothing.
// B holds 30,000 bytes of a 40,005-byte message (a 32 KiB buffer, grown
// by doubling from 1 KiB), then A sends a whole message of 20,005 bytes
// (its buffer, 20,005 bytes, stays), then C holds like B: 85,541 bytes
// against a budget of 75,000. Releasing A's buffer fits; dropping B's
// message (the oldest unfinished one) would have fitted too, but lost it.
// Then B ends its message (a 40,005-byte buffer, now empty) and C grows
// to 40,005: B's buffer goes, and every message is decoded.
func TestHeldBudgetIdleBuffersGoFirst(t *testing.T) {
	reg, err := dissect.NewRegistry(&toy{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := reg.ParseDecodeAs("tcp.port==7000,toy")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(r)
	b := dissect.NewHeldBudget(75000)
	sink := &budgetSink{}
	t0 := time.Unix(1700000000, 0)
	newStream := func(i int) *dissect.Stream {
		info := tcpInfo(7000)
		info.Addr[0] = netip.AddrPortFrom(info.Addr[0].Addr(), uint16(6000+i))
		info.Name[0] = info.Addr[0].String()
		return dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: true, Budget: b})
	}
	big := func(body int) []byte {
		return append([]byte{0xFE, 0, 0, byte(body >> 8), byte(body)}, make([]byte, body)...)
	}
	send := func(s *dissect.Stream, b []byte) {
		for len(b) > 0 {
			k := min(len(b), 1000)
			s.Data(0, t0, b[:k])
			b = b[k:]
		}
	}
	sb, sa, sc := newStream(1), newStream(0), newStream(2)
	mb, ma, mc := big(40000), big(20000), big(40000)
	send(sb, mb[:30000])
	send(sa, ma)
	send(sc, mc[:30000])
	if n, _ := b.Dropped(); n != 0 {
		t.Fatalf("%d messages dropped, want none: A's empty buffer goes first%s", n, dump(sink.recs))
	}
	// The buffers, and the capture times of what they hold (one time
	// range each, some tens of bytes: dissect/times.go).
	if b.Held() > b.Max() || b.Held() < 2*32768 || b.Held() > 2*32768+2*64 {
		t.Errorf("%d bytes held, want B's and C's 32 KiB buffers and their time ranges", b.Held())
	}
	send(sb, mb[30000:])
	send(sc, mc[30000:])
	for _, s := range []*dissect.Stream{sa, sb, sc} {
		s.End(0, t0)
		s.End(1, t0)
	}
	for i, s := range []*dissect.Stream{sa, sb, sc} {
		want := []want{{"big", 0, int64(len(ma))}}
		if i > 0 {
			want[0].len = int64(len(mb))
		}
		checkRecords(t, sink.recs, s.Info.Name[0], want)
	}
}

// maybeToy is the toy protocol whose detection never decides: a stream
// holds its first datagrams until MaxDetectDatagrams.
type maybeToy struct{ toy }

func (m *maybeToy) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict {
	return dissect.Maybe
}

// TestHeldBudgetDetection: TCP streams held for detection (1,800 bytes
// each, under the default MaxDetect of 2 KiB) count in the budget; past it
// the oldest decides with what it holds (here: no protocol, so its bytes
// are skipped as unknown), and every byte still ends in one record. (UDP detection decides at the first datagram
// of a direction: it holds at most one per direction.)
func TestHeldBudgetDetection(t *testing.T) {
	reg, err := dissect.NewRegistry(&maybeToy{})
	if err != nil {
		t.Fatal(err)
	}
	b := dissect.NewHeldBudget(5000)
	sink := &budgetSink{}
	t0 := time.Unix(1700000000, 0)
	const streams = 5
	ss := make([]*dissect.Stream, streams)
	for i := range ss {
		info := tcpInfo(9000)
		info.Addr[0] = netip.AddrPortFrom(info.Addr[0].Addr(), uint16(6000+i))
		info.Name[0] = info.Addr[0].String()
		ss[i] = dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: true, Budget: b})
	}
	piece := make([]byte, 600)
	for range 3 {
		for i, s := range ss {
			s.Data(0, t0, piece)
			if b.Held() > b.Max() {
				t.Fatalf("stream %d: %d bytes held, budget %d", i, b.Held(), b.Max())
			}
		}
	}
	// 5 × 1,800 bytes against 5,000: some streams decided early; the
	// detection bytes were counted (a peak of at least 2 streams' worth).
	if b.Peak() < 2*1800 || b.Peak() > b.Max() {
		t.Errorf("peak %d, want within [%d, %d]", b.Peak(), 2*1800, b.Max())
	}
	for _, s := range ss {
		s.End(0, t0)
		s.End(1, t0)
		checkTiling(t, sink.recs, s.Info.Name[0], 1800)
	}
	if b.Held() != 0 {
		t.Errorf("%d bytes held after the end", b.Held())
	}
}
