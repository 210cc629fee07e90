package pipeline

import (
	"errors"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

// session is a Deltarobot TCP connection built by the independent encoder
// (internal/testenc/deltaenc) and framed by internal/pktbuild: the
// handshake, the follower's magic and version, the leader's magic, version
// and n actuator positions in segments of about seg bytes, each
// acknowledged, then FIN both ways.
type session struct {
	frames []pktbuild.Frame
	bytes  [2]int64 // payload bytes per direction (0: follower, the SYN sender)
	msgs   [2]int   // messages per direction
}

var (
	follower = netip.MustParseAddrPort("10.0.0.1:40000")
	leader   = netip.MustParseAddrPort("10.0.0.2:4000")
)

func newSession(t testing.TB, n, seg int) *session {
	t.Helper()
	var fb, lb deltaenc.Builder
	fb.Magic()
	fb.Version(6)
	lb.Magic()
	lb.Version(6)
	for i := range n {
		f := float32(i)
		lb.ActuatorPosition(f, f+1, f+2, f+3)
	}
	fw, fm, err := fb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	lw, lm, err := lb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := &session{bytes: [2]int64{int64(len(fw)), int64(len(lw))}, msgs: [2]int{len(fm), len(lm)}}
	enc := pktbuild.Encap{Type: capture.LinkEthernet}
	add := func(src, dst netip.AddrPort, tcp pktbuild.TCP) {
		s.frames = append(s.frames, enc.Wrap(pktbuild.TCPPacket(src, dst, tcp).Encode()))
	}
	const fISN, lISN = 1000, 5000000
	fseq, lseq := uint32(fISN+1), uint32(lISN+1)
	add(follower, leader, pktbuild.TCP{Seq: fISN, Flags: pktbuild.SYN})
	add(leader, follower, pktbuild.TCP{Seq: lISN, Ack: fseq, Flags: pktbuild.SYN | pktbuild.ACK})
	add(follower, leader, pktbuild.TCP{Seq: fseq, Ack: lseq, Flags: pktbuild.ACK, Payload: fw})
	fseq += uint32(len(fw))
	for off := 0; off < len(lw); off += seg {
		end := min(off+seg, len(lw))
		add(leader, follower, pktbuild.TCP{Seq: lseq, Ack: fseq, Flags: pktbuild.ACK | pktbuild.PSH, Payload: lw[off:end]})
		lseq += uint32(end - off)
		add(follower, leader, pktbuild.TCP{Seq: fseq, Ack: lseq, Flags: pktbuild.ACK})
	}
	add(leader, follower, pktbuild.TCP{Seq: lseq, Ack: fseq, Flags: pktbuild.FIN | pktbuild.ACK})
	add(follower, leader, pktbuild.TCP{Seq: fseq, Ack: lseq + 1, Flags: pktbuild.FIN | pktbuild.ACK})
	add(leader, follower, pktbuild.TCP{Seq: lseq + 1, Ack: fseq + 1, Flags: pktbuild.ACK})
	return s
}

var errTimeout = errors.New("fake: read timeout")

// fakeLive is a live source: it yields its frames as fast as it is read,
// stamped with the wall clock, then times out (like a quiet interface)
// until it is closed. With more set, it starts over with the same frames
// forever (endless traffic; only a stop ends it).
type fakeLive struct {
	frames  []pktbuild.Frame
	endless bool
	i       int
	served  atomic.Int64 // frames served, read by tests
	pkt     capture.Packet
	closed  atomic.Bool
	closeAt atomic.Int64 // unix ns of Close
}

func (f *fakeLive) Next() (*capture.Packet, error) {
	if f.closed.Load() {
		return nil, io.EOF
	}
	if f.i >= len(f.frames) {
		if !f.endless {
			time.Sleep(5 * time.Millisecond)
			return nil, errTimeout
		}
		f.i = 0
	}
	fr := f.frames[f.i]
	f.i++
	f.served.Add(1)
	f.pkt = capture.Packet{Time: time.Now().UTC(), LinkType: fr.LinkType, Data: fr.Data, Length: fr.Length, InterfaceName: "fake0"}
	return &f.pkt, nil
}

func (f *fakeLive) Close() error {
	if !f.closed.Swap(true) {
		f.closeAt.Store(time.Now().UnixNano())
	}
	return nil
}

// gateSink collects records (cloned), each Record call waiting until the
// gate is opened: a reader of the output that does not read yet.
type gateSink struct {
	mu    sync.Mutex
	recs  []*dissect.Record
	gate  chan struct{}
	err   error // returned by every Record once set
	calls atomic.Int64
}

func newGateSink(open bool) *gateSink {
	g := &gateSink{gate: make(chan struct{})}
	if open {
		close(g.gate)
	}
	return g
}

func (g *gateSink) Record(r *dissect.Record) error {
	g.calls.Add(1)
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	g.recs = append(g.recs, r.Clone())
	return nil
}

func (g *gateSink) records() []*dissect.Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.recs
}

func registry(t testing.TB) *dissect.Registry {
	t.Helper()
	reg, err := all.Registry(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// deltaRegistry is registry with port 4000 decoded as Deltarobot (-d).
func deltaRegistry(t testing.TB) *dissect.Registry {
	t.Helper()
	reg := registry(t)
	rule, err := reg.ParseDecodeAs("tcp.port==4000,deltarobot")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(rule)
	return reg
}

// tally adds up the records of each direction of stream 0: bytes in
// messages, skipped and gap records, and messages.
type tally struct {
	msgBytes, skipped, gap [2]int64
	msgs                   [2]int
}

func tallyRecords(t testing.TB, recs []*dissect.Record) tally {
	t.Helper()
	var tl tally
	next := [2]int64{}
	for _, r := range recs {
		d := 0
		if r.Src == leader.String() {
			d = 1
		}
		if r.Offset != next[d] {
			t.Fatalf("direction %d: record %s at offset %d, want %d (records must tile the stream)", d, r.Type, r.Offset, next[d])
		}
		next[d] += r.Length
		switch r.Type {
		case dissect.TypeGap:
			tl.gap[d] += r.Length
		case dissect.TypeSkipped:
			tl.skipped[d] += r.Length
		default:
			tl.msgBytes[d] += r.Length
			tl.msgs[d]++
		}
	}
	return tl
}
