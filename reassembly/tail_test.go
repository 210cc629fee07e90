package reassembly

import (
	"net/netip"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// Tail gaps: a direction that ends without its FIN ends with a gap up to
// the highest sequence number known sent (segment ends, peer ACKs). The
// connection is cli4 -> srv4, client ISN 1000, server ISN 5000 unless a
// case says otherwise; expectations are worked out from the sequence
// numbers by hand.

func TestTCPTailGap(t *testing.T) {
	cases := []struct {
		tcpCase
		isn  [2]uint32
		tail int64 // Stats.TCPTailGapBytes
	}{
		{tcpCase: tcpCase{
			name: "acknowledged tail lost, flushed",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("abc")))
				c.Skip(C, 5) // 5 bytes sent, not captured
				f.seg(c.Ack(S))
			},
			want:  []string{"open 0", "data 0/0 abc", "gap 0/0 5", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 8},
		}, tail: 5},
		{tcpCase: tcpCase{
			name: "sender's later bare ACK gives the end",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("abc")))
				c.Skip(C, 4)
				f.seg(c.Ack(C)) // its sequence number is 1000+1+7
			},
			want:  []string{"open 0", "data 0/0 abc", "gap 0/0 4", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 7},
		}, tail: 4},
		{tcpCase: tcpCase{
			name: "reset after a lost tail",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("ab")))
				c.Skip(C, 3)
				f.seg(c.Rst(S)) // RST|ACK acknowledging 1000+1+5
			},
			want:  []string{"open 0", "data 0/0 ab", "gap 0/0 3", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 5},
		}, tail: 3},
		{tcpCase: tcpCase{
			name: "acknowledged FIN is no gap",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("abc")), c.Fin(C), c.Ack(S)) // ACK 1000+1+3+1
			},
			want:  []string{"open 0", "data 0/0 abc", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 3},
		}},
		{tcpCase: tcpCase{
			name: "SYN slot acknowledged is no gap",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...) // the client's ACK is for 5000+1
				f.seg(c.Send(C, []byte("x")), c.Ack(S))
			},
			want:  []string{"open 0", "data 0/0 x", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 1},
		}},
		{tcpCase: tcpCase{
			name: "dropped last segment is not counted twice",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(S, []byte("hello")))
				f.pkt(drop(eth, c.Send(S, []byte("world")), t0))
				f.seg(c.Ack(C))
			},
			want:  []string{"open 0", "data 0/1 hello", "gap 0/1 5", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/1": 10},
		}},
		{tcpCase: tcpCase{
			name: "mid-stream: ACK before the first byte seen is no gap",
			build: func(f *feed, c *pktbuild.Conn) {
				c.Skip(C, 100)
				f.seg(c.Send(C, []byte("xyz"))) // starts direction 0 at 1100
				f.seg(pktbuild.NewConn(cli4, srv4, 1000, 5000).Ack(S))
				c.Skip(C, 10)
				f.seg(c.Ack(S)) // acknowledges 1113
			},
			want:  []string{"open 0", "data 0/0 xyz", "gap 0/0 10", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 13},
		}, tail: 10},
		{tcpCase: tcpCase{
			name: "sequence numbers wrap",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("abcdef"))) // 0xfffffffe .. 0x3
				c.Skip(C, 4)
				f.seg(c.Ack(S)) // acknowledges 0x8
			},
			want:  []string{"open 0", "data 0/0 abcdef", "gap 0/0 4", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 10},
		}, isn: [2]uint32{0xfffffffd, 5000}, tail: 4},
		{tcpCase: tcpCase{
			name: "ACK beyond the largest window is ignored",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("abc")))
				c.Skip(C, 1<<30+1)
				f.seg(c.Ack(S))
			},
			want:  []string{"open 0", "data 0/0 abc", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 3},
		}},
		{tcpCase: tcpCase{
			name: "complete connection has no gap",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("req")), c.Ack(S), c.Send(S, []byte("resp")), c.Ack(C))
				f.seg(c.Fin(S), c.Ack(C), c.Fin(C), c.Ack(S))
			},
			want:  []string{"open 0", "data 0/0 req", "data 0/1 resp", "close 0/1", "close 0/0"},
			spans: map[string]int64{"0/0": 3, "0/1": 4},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &feed{e: eth}
			isn := tc.isn
			if isn == [2]uint32{} {
				isn = [2]uint32{1000, 5000}
			}
			c := pktbuild.NewConn(cli4, srv4, isn[0], isn[1])
			tc.build(f, c)
			r, st := run(t, tc.cfg, f.pkts, true)
			eventsEqual(t, r.strings(), tc.want)
			checkSpans(t, r, tc.spans)
			if st.TCPTailGapBytes != tc.tail {
				t.Errorf("TCPTailGapBytes %d, want %d (stats %+v)", st.TCPTailGapBytes, tc.tail, st)
			}
		})
	}
}

func TestTCPTailGapOnExpire(t *testing.T) {
	r := newRecorder()
	a := New(r, Config{})
	c := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.1:40001"), srv4, 1, 2)
	for _, s := range c.Handshake() {
		a.Packet(s.Packet(eth, t0))
	}
	a.Packet(c.Send(S, []byte("data")).Packet(eth, t0))
	c.Skip(S, 6)
	a.Packet(c.Ack(C).Packet(eth, t0))
	a.Expire(t0.Add(time.Minute), time.Second)
	eventsEqual(t, r.strings(), []string{"open 0", "data 0/1 data", "close 0/0", "gap 0/1 6", "close 0/1"})
	r.verify(t)
}
