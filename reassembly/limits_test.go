package reassembly

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// client returns the client endpoint of the i-th test connection.
func client(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 16), byte(i >> 8)}), uint16(1024+i&0xff))
}

// stepper feeds packets one by one to an Assembler, checking its
// internal bounds after each.
type stepper struct {
	t *testing.T
	a *Assembler
	r *recorder
}

func newStepper(t *testing.T, cfg Config) *stepper {
	r := newRecorder()
	return &stepper{t: t, a: New(r, cfg), r: r}
}

func (s *stepper) feed(tm time.Time, segs ...pktbuild.Segment) {
	s.t.Helper()
	for _, g := range segs {
		s.a.Packet(g.Packet(eth, tm))
		s.a.checkInternal(s.t)
	}
}

func (s *stepper) flush(tm time.Time) {
	s.t.Helper()
	s.a.Flush(tm)
	s.r.allClosed()
	s.r.verify(s.t)
}

// events returns the recorded events of stream id.
func (s *stepper) events(id int) []string {
	var out []string
	for _, e := range s.r.events {
		if e.id == id {
			out = append(out, e.String())
		}
	}
	return out
}

func TestMaxStreamsEvictsLeastRecent(t *testing.T) {
	s := newStepper(t, Config{MaxStreams: 3})
	var conns []*pktbuild.Conn
	for i := range 3 {
		c := pktbuild.NewConn(client(i), srv4, 1000, 5000)
		conns = append(conns, c)
		s.feed(t0, c.Handshake()...)
		s.feed(t0, c.Send(C, []byte("ab")))
	}
	// Stream 0 holds "ef" behind a hole, and is active again: stream 1
	// is now the least recently active.
	conns[0].Skip(C, 2)
	s.feed(t0.Add(time.Second), conns[0].Send(C, []byte("ef")))
	c3 := pktbuild.NewConn(client(3), srv4, 1000, 5000)
	s.feed(t0.Add(2*time.Second), c3.SYN(C))
	eventsEqual(t, s.events(1), []string{"open 1", "data 1/0 ab", "close 1/0", "close 1/1"})
	if st := s.a.Stats(); st.Evicted != 1 || len(s.a.flows) != 3 {
		t.Fatalf("evicted %d, %d flows", st.Evicted, len(s.a.flows))
	}
	// The next new stream evicts stream 2, then stream 0, whose held
	// data comes out behind a gap.
	c4 := pktbuild.NewConn(client(4), srv4, 1000, 5000)
	c5 := pktbuild.NewConn(client(5), srv4, 1000, 5000)
	s.feed(t0.Add(3*time.Second), c4.SYN(C), c5.SYN(C))
	eventsEqual(t, s.events(0), []string{"open 0", "data 0/0 ab", "gap 0/0 2", "data 0/0 ef", "close 0/0", "close 0/1"})
	// A packet of an evicted connection opens a new stream.
	s.feed(t0.Add(4*time.Second), conns[1].Send(C, []byte("cd")))
	if got := s.r.streams[len(s.r.streams)-1].Addr[0]; got != client(1) {
		t.Errorf("last stream opened by %v, want %v", got, client(1))
	}
	st := s.a.Stats()
	if st.Evicted != 4 || st.Streams.TCP != 7 {
		t.Errorf("evicted %d of %d streams, want 4 of 7", st.Evicted, st.Streams.TCP)
	}
	s.flush(t0.Add(time.Minute))
}

// TestManyFlowsBounded is the hostile case of the issue: many bare SYNs
// (and UDP flows) of distinct 4-tuples. The open streams, the flow map
// and the bookkeeping slice stay bounded by MaxStreams.
func TestManyFlowsBounded(t *testing.T) {
	const n, limit = 50000, 500
	a := New(&countHandler{}, Config{MaxStreams: limit})
	maxOrder := 0
	for i := range n {
		var p *capture.Packet
		if i%2 == 0 {
			p = pktbuild.NewConn(client(i), srv4, uint32(i), 0).SYN(C).Packet(eth, t0)
		} else {
			p = eth.Wrap(pktbuild.UDPPacket(client(i), srv4, []byte("x")).Encode()).Packet(t0)
		}
		a.Packet(p)
		if a.nLive > limit || len(a.flows) > limit {
			t.Fatalf("packet %d: %d streams open, %d flows", i, a.nLive, len(a.flows))
		}
		maxOrder = max(maxOrder, len(a.order))
	}
	if maxOrder > 2*limit+65 {
		t.Errorf("bookkeeping grew to %d entries", maxOrder)
	}
	if st := a.Stats(); st.Evicted != n-limit {
		t.Errorf("evicted %d, want %d", st.Evicted, n-limit)
	}
}

func TestIdleTimeoutCaptureTime(t *testing.T) {
	s := newStepper(t, Config{IdleTimeout: time.Minute})
	quiet := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	busy := pktbuild.NewConn(cli6, srv6, 1000, 5000)
	s.feed(t0, quiet.Handshake()...)
	quiet.Skip(C, 3)
	s.feed(t0, quiet.Send(C, []byte("held")))
	s.feed(t0, busy.Handshake()...)
	for i := 1; i <= 4; i++ {
		s.feed(t0.Add(time.Duration(i)*30*time.Second), busy.Send(C, []byte("x")))
	}
	// At 90 s the quiet connection had no packet for more than a minute:
	// ended at that packet's time, its held data behind a gap.
	eventsEqual(t, s.events(0), []string{"open 0", "gap 0/0 3", "data 0/0 held", "close 0/0", "close 0/1"})
	if st := s.a.Stats(); st.Expired != 1 || st.Evicted != 0 || len(s.a.flows) != 1 {
		t.Errorf("expired %d, evicted %d, %d flows", st.Expired, st.Evicted, len(s.a.flows))
	}
	s.flush(t0.Add(time.Hour))

	// Negative: never.
	s = newStepper(t, Config{IdleTimeout: -1})
	s.feed(t0, quiet.Send(C, []byte("a")))
	s.feed(t0.Add(24*time.Hour), busy.Send(C, []byte("b")))
	if st := s.a.Stats(); st.Expired != 0 || s.a.nLive != 2 {
		t.Errorf("expired %d with no timeout, %d open", st.Expired, s.a.nLive)
	}
	s.flush(t0.Add(25 * time.Hour))
}

// TestDeepReorder is the case: 5,000 small segments of one
// connection in reverse order, all within the byte budget, are all
// delivered, in order, with no gap.
func TestDeepReorder(t *testing.T) {
	const segs = 5000
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	var f feed
	f.e = eth
	f.seg(c.Handshake()...)
	var want bytes.Buffer
	var rev []pktbuild.Segment
	for i := range segs {
		b := fmt.Appendf(nil, "segment %05d of the reversed stream, padded to about eighty bytes........%d|", i, i%10)
		want.Write(b)
		rev = append(rev, c.Send(C, b))
	}
	for i := len(rev) - 1; i >= 0; i-- {
		f.seg(rev[i])
	}
	r, st := run(t, Config{}, f.pkts, true)
	var got bytes.Buffer
	for _, e := range r.events {
		switch e.kind {
		case "data":
			got.WriteString(e.data)
		case "gap":
			t.Fatalf("gap of %d bytes", e.n)
		}
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) || st.TCPGapBytes != 0 {
		t.Errorf("delivered %d bytes, want %d; %d gap bytes", got.Len(), want.Len(), st.TCPGapBytes)
	}
	if st.TCPOutOfOrder != segs-1 {
		t.Errorf("%d segments held, want %d", st.TCPOutOfOrder, segs-1)
	}
}

// TestGlobalHeldBudget: 100 connections each hold data behind a hole;
// all together may hold MaxHeldBytes. Past it, the oldest holes are
// declared lost first, and every byte is delivered or a gap once.
func TestGlobalHeldBudget(t *testing.T) {
	const conns, chunk = 100, 4000
	limit := 10 * (chunk + pieceOverhead)
	s := newStepper(t, Config{MaxHeldBytes: limit})
	payload := bytes.Repeat([]byte("z"), chunk)
	spans := map[string]int64{}
	for i := range conns {
		c := pktbuild.NewConn(client(i), srv4, 1000, 5000)
		s.feed(t0, c.Handshake()...)
		c.Skip(C, 10)
		s.feed(t0, c.Send(C, payload))
		spans[fmt.Sprintf("%d/0", i)] = 10 + chunk
	}
	// Each connection past the tenth pushed out the oldest hole.
	for i := range conns {
		ev := s.events(i)
		lost := len(ev) == 3 && ev[1] == fmt.Sprintf("gap %d/0 10", i)
		if lost != (i < conns-10) {
			t.Errorf("stream %d: %q", i, ev)
		}
	}
	if s.a.heldBytes != limit {
		t.Errorf("%d bytes held, want %d", s.a.heldBytes, limit)
	}
	s.flush(t0.Add(time.Second))
	checkSpans(t, s.r, spans)
}

// TestTinySegmentsBounded: a flood of 1-byte segments, each behind its
// own hole, cannot hold more than the per-direction budget, counting the
// per-segment overhead, nor more than maxPieces pieces.
func TestTinySegmentsBounded(t *testing.T) {
	const n = 30000
	limit := 1000 * (1 + pieceOverhead)
	s := newStepper(t, Config{MaxBuffered: limit})
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	s.feed(t0, c.Handshake()...)
	maxHeld := 0
	for range n {
		c.Skip(C, 1)
		s.a.Packet(c.Send(C, []byte{'t'}).Packet(eth, t0))
		maxHeld = max(maxHeld, len(s.a.order[0].h[0].held))
	}
	s.a.checkInternal(t)
	if maxHeld > limit/(1+pieceOverhead) {
		t.Errorf("%d pieces held, budget %d bytes", maxHeld, limit)
	}
	s.flush(t0)
	checkSpans(t, s.r, map[string]int64{"0/0": 2 * n})
}

// TestConflictDelivered: a retransmission of a segment already delivered,
// over the same range with other bytes, is a conflict (the first copy was
// kept); the same bytes again are a plain retransmission; a range never
// sent as one segment is compared too (the incomplete block, byte by byte).
func TestConflictDelivered(t *testing.T) {
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	var f feed
	f.e = eth
	f.seg(c.Handshake()...)
	f.seg(c.Send(C, []byte("0123")))
	f.seg(c.Segment(C, pktbuild.PSH, 1001, []byte("0123"))) // same bytes
	f.seg(c.Segment(C, pktbuild.PSH, 1001, []byte("xxxx"))) // other bytes
	f.seg(c.Segment(C, pktbuild.PSH, 1002, []byte("1y")))   // offsets 1-2: "2" differs
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{"open 0", "data 0/0 0123", "conflict 0/0 0+4", "conflict 0/0 2+1", "close 0/0", "close 0/1"})
	if st.TCPConflicts != 2 || st.TCPConflictBytes != 5 || st.TCPRetransmitted != 10 {
		t.Errorf("%d conflicts (%d bytes), %d retransmitted", st.TCPConflicts, st.TCPConflictBytes, st.TCPRetransmitted)
	}
}

// TestStreamMemory measures the reassembly state per open stream (the
// conn, its map entry and bookkeeping; no held data): set
// DISSECT_STREAM_MEMORY=1 to run it.
func TestStreamMemory(t *testing.T) {
	if os.Getenv("DISSECT_STREAM_MEMORY") == "" {
		t.Skip("set DISSECT_STREAM_MEMORY=1 to measure")
	}
	const n = 200000
	for _, kind := range []string{"tcp", "udp"} {
		pkts := make([]*capture.Packet, n)
		for i := range pkts {
			if kind == "tcp" {
				pkts[i] = pktbuild.NewConn(client(i), srv4, uint32(i), 0).SYN(C).Packet(eth, t0)
			} else {
				pkts[i] = eth.Wrap(pktbuild.UDPPacket(client(i), srv4, []byte("x")).Encode()).Packet(t0)
			}
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a := New(&countHandler{}, Config{MaxStreams: -1})
		for _, p := range pkts {
			a.Packet(p)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		t.Logf("%s: %d bytes of heap per open stream (%d streams)", kind, int64(after.HeapAlloc-before.HeapAlloc)/n, a.nLive)
		runtime.KeepAlive(a)
		runtime.KeepAlive(pkts)
	}
}

// TestFuzzLimitsSeed checks that the fuzz seed for the limits reaches
// them: a conflict, evictions, expiries and held data declared lost for
// the global budget.
func TestFuzzLimitsSeed(t *testing.T) {
	st := fuzzRun(t, limitsSeed())
	if st.TCPConflicts == 0 || st.Evicted == 0 || st.Expired == 0 || st.TCPGapBytes == 0 {
		t.Errorf("conflicts %d, evicted %d, expired %d, gap bytes %d", st.TCPConflicts, st.Evicted, st.Expired, st.TCPGapBytes)
	}
}

// TestReversePiecesBounded: tiny segments in reverse order past maxPieces
// (far within the byte budgets) hold at most maxPieces pieces; the
// holes pushed out are gaps, and the bytes that come later for them are
// retransmissions.
func TestReversePiecesBounded(t *testing.T) {
	const n = maxPieces + 2000
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	s := newStepper(t, Config{})
	s.feed(t0, c.Handshake()...)
	segs := make([]pktbuild.Segment, n)
	for i := range segs {
		segs[i] = c.Send(C, []byte{'r'})
	}
	start := time.Now()
	maxHeld := 0
	for i := n - 1; i >= 0; i-- {
		s.a.Packet(segs[i].Packet(eth, t0))
		maxHeld = max(maxHeld, len(s.a.order[0].h[0].held))
	}
	t.Logf("%d reversed segments in %v", n, time.Since(start))
	s.a.checkInternal(t)
	if maxHeld > maxPieces {
		t.Errorf("%d pieces held", maxHeld)
	}
	s.flush(t0)
	checkSpans(t, s.r, map[string]int64{"0/0": n})
	// The segment after the first maxPieces pushes out the hole before
	// them (the n-maxPieces-1 bytes still to come, then retransmissions).
	if st := s.a.Stats(); st.TCPGapBytes != n-maxPieces-1 || st.TCPRetransmitted != n-maxPieces-1 {
		t.Errorf("%d gap bytes, %d retransmitted", st.TCPGapBytes, st.TCPRetransmitted)
	}
}

// BenchmarkNewFlows opens a new TCP connection (a bare SYN) per
// iteration with 1024 streams at most: the cost of a stream's life from
// open to eviction.
func BenchmarkNewFlows(b *testing.B) {
	const ring = 1 << 16
	pkts := make([]*capture.Packet, ring)
	for i := range pkts {
		pkts[i] = pktbuild.NewConn(client(i), srv4, uint32(i), 0).SYN(C).Packet(eth, t0)
	}
	a := New(&countHandler{}, Config{MaxStreams: 1024})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		a.Packet(pkts[i%ring])
		i++
	}
	b.ReportMetric(float64(a.Stats().Evicted)/float64(b.N), "evictions/op")
}
