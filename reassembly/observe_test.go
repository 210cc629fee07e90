package reassembly

import (
	"fmt"
	"testing"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// TestObserveSegments: the observer hears every TCP packet of an open
// connection, before its bytes are delivered, with the offsets of its
// direction (also out of order) and its flags; trailing packets of a
// finished connection are not told.
func TestObserveSegments(t *testing.T) {
	f := &feed{e: eth}
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	f.seg(c.Handshake()...)
	a, b, d := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cccc"))
	f.seg(a, d, b, c.Send(S, []byte("xyz")), c.Fin(C), c.Fin(S), c.Ack(C), c.Ack(C))
	r := newRecorder()
	asm := New(r, Config{})
	var got []string
	asm.ObserveSegments(func(s *Stream, dir Dir, seg Segment) {
		flags := ""
		for _, fl := range []struct {
			on bool
			s  string
		}{{seg.SYN, "S"}, {seg.ACK, "A"}, {seg.FIN, "F"}, {seg.RST, "R"}} {
			if fl.on {
				flags += fl.s
			}
		}
		// Told before delivery: the recorder has not seen these bytes.
		got = append(got, fmt.Sprintf("%d/%d %d+%d %s (%d delivered)", s.ID, dir, seg.Off, seg.N, flags, r.span[[2]int{s.ID, int(dir)}]))
	})
	for _, p := range f.pkts {
		asm.Packet(p)
	}
	want := []string{
		"0/0 0+0 S (0 delivered)", "0/1 0+0 SA (0 delivered)", "0/0 0+0 A (0 delivered)",
		"0/0 0+2 A (0 delivered)", "0/0 5+4 A (2 delivered)", "0/0 2+3 A (2 delivered)",
		"0/1 0+3 A (0 delivered)", "0/0 9+0 AF (9 delivered)", "0/1 3+0 AF (3 delivered)",
	}
	eventsEqual(t, got, want)
}

// TestHoleAckedBefore: a segment that comes past a hole the peer has
// already acknowledged (the capture lost those bytes, or a cut left them
// out) is delivered at once after a gap, not held to the end; an ACK
// before the data it acknowledges, with the data in order, invents no
// gap.
func TestHoleAckedBefore(t *testing.T) {
	f := &feed{e: eth}
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	f.seg(c.Handshake()...)
	f.seg(c.Send(C, []byte("aa")))
	c.Skip(C, 3) // "bbb": sent, never captured
	f.seg(c.Ack(S), c.Send(C, []byte("cccc")))
	r, _ := run(t, Config{}, f.pkts, false)
	eventsEqual(t, r.strings(), []string{"open 0", "data 0/0 aa", "gap 0/0 3", "data 0/0 cccc"})
	d := c.Send(C, []byte("dd"))
	f.seg(c.Ack(S), d) // the ACK of dd captured before dd
	r, _ = run(t, Config{}, f.pkts, false)
	eventsEqual(t, r.strings(), []string{"open 0", "data 0/0 aa", "gap 0/0 3", "data 0/0 cccc", "data 0/0 dd"})

	// Without the peer's acknowledgement the bytes wait for the hole.
	f = &feed{e: eth}
	c = pktbuild.NewConn(cli4, srv4, 1000, 5000)
	f.seg(c.Handshake()...)
	f.seg(c.Send(C, []byte("aa")))
	c.Skip(C, 3)
	f.seg(c.Send(C, []byte("cccc")))
	r, _ = run(t, Config{}, f.pkts, false)
	eventsEqual(t, r.strings(), []string{"open 0", "data 0/0 aa"})
}
