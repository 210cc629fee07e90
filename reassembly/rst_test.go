package reassembly

import (
	"testing"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// TestResetWindow: RFC 5961 section 3.2 as an observer. A reset is
// accepted when its sequence number lies from the next byte to deliver in
// its direction to the receiver's advertised window (here 65535, the
// field without scaling) past the highest sequence number known sent
// there (a segment's end, or the peer's acknowledgment); otherwise it is
// ignored and counted, and the connection goes on. A direction with
// nothing seen accepts any reset.
func TestResetWindow(t *testing.T) {
	accepted := []string{"open 0", "data 0/0 hello", "close 0/0", "close 0/1"}
	ignored := []string{"open 0", "data 0/0 hello", "data 0/0 world", "close 0/0", "close 0/1"}
	for _, tc := range []struct {
		name  string
		build func(f *feed, c *pktbuild.Conn)
		want  []string
	}{
		// With the handshake: the client's data starts at 1001, the
		// server's at 5001 (nothing sent: window [5001, 5001+65535]).
		{"server, exact next", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(S, pktbuild.RST, 5001, nil)) }, accepted},
		{"server, in window", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(S, pktbuild.RST, 5001+1000, nil)) }, accepted},
		{"server, last in window", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(S, pktbuild.RST, 5001+65535, nil)) }, accepted},
		{"server, one past the window", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(S, pktbuild.RST, 5001+65536, nil)) }, ignored},
		{"server, far outside", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(S, pktbuild.RST, 5001+1<<20, nil)) }, ignored},
		{"server, before the next byte", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(S, pktbuild.RST, 5000, nil)) }, ignored},
		// The client sent "hello": its window is [1006, 1006+65535].
		{"client, exact next", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(C, pktbuild.RST, 1006, nil)) }, accepted},
		{"client, last in window", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(C, pktbuild.RST, 1006+65535, nil)) }, accepted},
		{"client, one past the window", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(C, pktbuild.RST, 1006+65536, nil)) }, ignored},
		{"client, over delivered bytes", func(f *feed, c *pktbuild.Conn) { f.seg(c.Segment(C, pktbuild.RST, 1005, nil)) }, ignored},
		{"server, after the client acknowledged bytes not captured", func(f *feed, c *pktbuild.Conn) {
			// The client acknowledges 100,000 server bytes the capture
			// missed: the window runs to 5001+100000+65535.
			c.Skip(S, 100000)
			f.seg(c.Ack(C))
			f.seg(c.Segment(S, pktbuild.RST, 5001+100000+65535, nil))
		}, append([]string{"open 0", "data 0/0 hello"}, "close 0/0", "gap 0/1 100000", "close 0/1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			var f feed
			f.e = eth
			f.seg(c.Handshake()...)
			f.seg(c.Send(C, []byte("hello")))
			tc.build(&f, c)
			f.seg(c.Send(C, []byte("world")))
			r, st := run(t, Config{}, f.pkts, true)
			eventsEqual(t, r.strings(), tc.want)
			wantIgnored, wantAfter := int64(0), int64(5)
			if len(tc.want) == len(ignored) && tc.want[2] == ignored[2] {
				wantIgnored, wantAfter = 1, 0
			}
			if st.TCPResetsIgnored != wantIgnored || st.TCPAfterClose != wantAfter {
				t.Errorf("%d resets ignored, %d bytes after close; want %d, %d", st.TCPResetsIgnored, st.TCPAfterClose, wantIgnored, wantAfter)
			}
		})
	}
}

// TestResetWindowMidStream: without a handshake, each direction's window
// starts at its first byte seen; a direction that sent nothing (the
// server here, or the answer to a SYN) has no window and accepts a reset,
// even with sequence number 0.
func TestResetWindowMidStream(t *testing.T) {
	for _, tc := range []struct {
		name     string
		build    func(f *feed, c *pktbuild.Conn)
		want     []string
		ignored  int64
		afterRST int64
	}{
		{"far outside", func(f *feed, c *pktbuild.Conn) {
			f.seg(c.Send(C, []byte("hello")), c.Send(S, []byte("ok")))
			f.seg(c.Segment(S, pktbuild.RST, 5002+1<<20, nil))
			f.seg(c.Send(C, []byte("world")))
		}, []string{"open 0", "data 0/0 hello", "data 0/1 ok", "data 0/0 world", "close 0/0", "close 0/1"}, 1, 0},
		{"exact next", func(f *feed, c *pktbuild.Conn) {
			f.seg(c.Send(C, []byte("hello")), c.Send(S, []byte("ok")))
			f.seg(c.Segment(S, pktbuild.RST, 5002, nil))
			f.seg(c.Send(C, []byte("world")))
		}, []string{"open 0", "data 0/0 hello", "data 0/1 ok", "close 0/0", "close 0/1"}, 0, 5},
		{"from a direction with nothing seen, sequence number 0", func(f *feed, c *pktbuild.Conn) {
			f.seg(c.Send(C, []byte("hello")))
			f.seg(c.Segment(S, pktbuild.RST, 0, nil))
			f.seg(c.Send(C, []byte("world")))
		}, []string{"open 0", "data 0/0 hello", "close 0/0", "close 0/1"}, 0, 5},
		{"answer to a SYN", func(f *feed, c *pktbuild.Conn) {
			f.seg(c.SYN(C))
			f.seg(c.Segment(S, pktbuild.RST, 0, nil))
		}, []string{"open 0", "close 0/0", "close 0/1"}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			var f feed
			f.e = eth
			tc.build(&f, c)
			r, st := run(t, Config{}, f.pkts, true)
			eventsEqual(t, r.strings(), tc.want)
			if st.TCPResetsIgnored != tc.ignored || st.TCPAfterClose != tc.afterRST {
				t.Errorf("%d resets ignored, %d bytes after close; want %d, %d", st.TCPResetsIgnored, st.TCPAfterClose, tc.ignored, tc.afterRST)
			}
		})
	}
}

// TestResetAdvertisedWindow: the window a reset may fall in is the one
// its receiver advertised: a small one (4096), one scaled by the shift
// both SYNs offered (512 << 7), a SYN's own field unscaled; the sequence
// space seen is always in (a reset at the highest number sent, whatever
// the window); a reset within 64 KiB but past the advertised window is
// ignored (the RST of issue 32, accepted before).
func TestResetAdvertisedWindow(t *testing.T) {
	wscale := func(shift byte) []byte { return []byte{1, 3, 3, shift} } // NOP, window scale
	for _, tc := range []struct {
		name     string
		clientWS []byte // the client SYN's options
		serverWS []byte // the SYN-ACK's
		win      uint16 // the server's window on its segments after the SYN-ACK
		rst      uint32 // past the client's next byte (1006)
		accepted bool
	}{
		{"small window, in", nil, nil, 4096, 4096, true},
		{"small window, one past", nil, nil, 4096, 4097, false},
		{"small window, 20000 past (within 64 KiB)", nil, nil, 4096, 20000, false},
		{"scaled, in", wscale(7), wscale(7), 512, 512 << 7, true},
		{"scaled, one past", wscale(7), wscale(7), 512, 512<<7 + 1, false},
		{"one SYN offers no scale: the field as it is", nil, wscale(7), 512, 513, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			hs := c.Handshake()
			hs[0].TCP.Options, hs[1].TCP.Options = tc.clientWS, tc.serverWS
			var f feed
			f.e = eth
			f.seg(hs...)
			f.seg(c.Send(C, []byte("hello")))
			ack := c.Ack(S)
			ack.TCP.Window = tc.win
			f.seg(ack)
			f.seg(c.Segment(C, pktbuild.RST, 1006+tc.rst, nil))
			f.seg(c.Send(C, []byte("world")))
			_, st := run(t, Config{}, f.pkts, true)
			if got := st.TCPResetsIgnored == 0; got != tc.accepted {
				t.Errorf("reset at next+%d accepted: %v, want %v", tc.rst, got, tc.accepted)
			}
		})
	}
}
