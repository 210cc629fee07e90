package reassembly

import (
	"testing"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// The expected event sequences below were written by hand from the rules
// in the Assembler doc comment, not by running the code.

// tcpCase is one TCP scenario on the connection cli4 -> srv4 with client
// ISN 1000 and server ISN 5000.
type tcpCase struct {
	name  string
	cfg   Config
	build func(f *feed, c *pktbuild.Conn)
	want  []string
	spans map[string]int64
	stats func(Stats) bool // extra checks
}

func TestTCP(t *testing.T) {
	cases := []tcpCase{
		{
			name: "in order",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("abc")), c.Send(C, []byte("def")), c.Send(S, []byte("xyz")))
				f.seg(c.Fin(C), c.Fin(S), c.Ack(C))
			},
			want:  []string{"open 0", "data 0/0 abc", "data 0/0 def", "data 0/1 xyz", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 6, "0/1": 3},
			stats: func(s Stats) bool {
				return s.TCPOutOfOrder == 0 && s.TCPRetransmitted == 0 && s.TCPGapBytes == 0 && s.Packets == 9
			},
		},
		{
			name: "reorder",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b, d := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cccc"))
				f.seg(a, d, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "data 0/0 cccc", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 9},
			stats: func(s Stats) bool { return s.TCPOutOfOrder == 1 && s.TCPGapBytes == 0 },
		},
		{
			name: "reorder, two held",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b, d, e := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cccc")), c.Send(C, []byte("dd"))
				f.seg(a, e, d, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "data 0/0 cccc", "data 0/0 dd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 11},
			stats: func(s Stats) bool { return s.TCPOutOfOrder == 2 },
		},
		{
			name: "exact duplicate",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb"))
				f.seg(a, a, b, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 5},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 5 },
		},
		{
			name: "duplicate of held segment",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b, d := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cccc"))
				f.seg(a, d, d, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "data 0/0 cccc", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 9},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 4 && s.TCPOutOfOrder == 1 },
		},
		{
			name: "overlap with delivered data: first copy wins",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("hello")))
				// Offsets 3..9: "LO" overlaps the delivered "lo" with
				// other bytes: a conflict at 3+2.
				f.seg(c.Segment(C, pktbuild.PSH, 1001+3, []byte("LOworld")))
				c.Next[C] = 1001 + 10
				f.seg(c.Send(C, []byte("!")))
			},
			want:  []string{"open 0", "data 0/0 hello", "conflict 0/0 3+2", "data 0/0 world", "data 0/0 !", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 11},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 2 && s.TCPConflicts == 1 && s.TCPConflictBytes == 2 },
		},
		{
			name: "overlap with held data: first copy wins",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("0123")))
				// Offsets 8..11 arrive first, then 4..9 with different
				// bytes at 8 and 9.
				f.seg(c.Segment(C, pktbuild.PSH, 1001+8, []byte("89AB")))
				f.seg(c.Segment(C, pktbuild.PSH, 1001+4, []byte("4567xy")))
			},
			want: []string{"open 0", "data 0/0 0123", "data 0/0 4567", "conflict 0/0 8+2", "data 0/0 89AB",
				"close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 12},
			stats: func(s Stats) bool {
				return s.TCPRetransmitted == 2 && s.TCPOutOfOrder == 1 && s.TCPConflicts == 1 && s.TCPConflictBytes == 2
			},
		},
		{
			name: "segment spanning two held pieces",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("01")))
				f.seg(c.Segment(C, pktbuild.PSH, 1001+4, []byte("45")))
				f.seg(c.Segment(C, pktbuild.PSH, 1001+8, []byte("89")))
				// Offsets 2..11; the held ranges 4-5 and 8-9 win.
				f.seg(c.Segment(C, pktbuild.PSH, 1001+2, []byte("23xx67yyAB")))
			},
			// One conflict for the segment, from its first differing
			// byte (4) to its last (9).
			want: []string{"open 0", "data 0/0 01", "data 0/0 23", "conflict 0/0 4+6", "data 0/0 45", "data 0/0 67",
				"data 0/0 89", "data 0/0 AB", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 12},
			stats: func(s Stats) bool {
				return s.TCPRetransmitted == 4 && s.TCPOutOfOrder == 3 && s.TCPConflicts == 1 && s.TCPConflictBytes == 6
			},
		},
		{
			name: "lost segment in the middle, resolved by the FINs",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Send(C, []byte("lost"))
				d := c.Send(C, []byte("dd"))
				f.seg(a, d, c.Fin(C), c.Fin(S))
			},
			// The server's FIN acknowledges all of the client's stream, its
			// FIN included: the ACK is read before the FIN it comes with.
			want:  []string{"open 0", "data 0/0 aa", "gap 0/0 4", "data 0/0 dd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 8},
			stats: func(s Stats) bool { return s.TCPGapBytes == 4 },
		},
		{
			name: "lost segment, resolved by the peer's ACK",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 4)
				d := c.Send(C, []byte("dd"))
				f.seg(a, d)
				// The server acknowledges all of it: the hole was received
				// but not captured, so the gap comes now, not at the FINs.
				f.seg(c.Ack(S), c.Send(S, []byte("x")))
			},
			want:  []string{"open 0", "data 0/0 aa", "gap 0/0 4", "data 0/0 dd", "data 0/1 x", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 8, "0/1": 1},
			stats: func(s Stats) bool { return s.TCPGapBytes == 4 && s.TCPOutOfOrder == 1 },
		},
		{
			name: "an ACK covering part of a hole declares only that part lost",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Send(C, []byte("bb")) // lost
				ack := c.Ack(S)         // acknowledges up to the end of "bb"
				x := c.Send(S, []byte("x"))
				cc := c.Send(C, []byte("cc"))
				d := c.Send(C, []byte("dd"))
				f.seg(a, d, ack, x)
				f.seg(cc) // a retransmission of the rest of the hole
			},
			want:  []string{"open 0", "data 0/0 aa", "gap 0/0 2", "data 0/1 x", "data 0/0 cc", "data 0/0 dd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 8, "0/1": 1},
			stats: func(s Stats) bool { return s.TCPGapBytes == 2 },
		},
		{
			name: "an ACK past a hole with nothing held behind it declares nothing",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				b := c.Send(C, []byte("bb"))
				// the ACK is captured before the data it acknowledges
				f.seg(a, c.Ack(S), b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bb", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4},
			stats: func(s Stats) bool { return s.TCPGapBytes == 0 },
		},
		{
			name: "lost segment, data continues after the held-byte limit (64 bytes counted per segment)",
			cfg:  Config{MaxBuffered: 2*(2+pieceOverhead) + 1},
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 5)
				f.seg(a, c.Send(C, []byte("cc")), c.Send(C, []byte("dd")), c.Send(C, []byte("ee")), c.Send(C, []byte("ff")))
			},
			want: []string{"open 0", "data 0/0 aa", "gap 0/0 5", "data 0/0 cc", "data 0/0 dd", "data 0/0 ee",
				"data 0/0 ff", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 15},
			stats: func(s Stats) bool { return s.TCPGapBytes == 5 && s.TCPOutOfOrder == 3 },
		},
		{
			name: "held bytes limit forces a gap",
			cfg:  Config{MaxBuffered: 10},
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("01"))
				c.Skip(C, 2)
				f.seg(a, c.Send(C, []byte("456789")), c.Send(C, []byte("ABCDE")), c.Send(C, []byte("F")))
			},
			want: []string{"open 0", "data 0/0 01", "gap 0/0 2", "data 0/0 456789", "data 0/0 ABCDE",
				"data 0/0 F", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 16},
		},
		{
			name: "loss before FIN",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 3)
				f.seg(a, c.Fin(C), c.Send(S, []byte("ok")), c.Fin(S), c.Ack(C))
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/1 ok", "close 0/1", "gap 0/0 3", "close 0/0"},
			spans: map[string]int64{"0/0": 5, "0/1": 2},
		},
		{
			name: "loss before FIN, resolved by Flush",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 3)
				f.seg(a, c.Fin(C))
			},
			want:  []string{"open 0", "data 0/0 aa", "gap 0/0 3", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 5},
		},
		{
			name: "FIN with data, data past the FIN dropped",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				fin := c.FinData(C, []byte("bye"))
				f.seg(fin, c.Segment(C, pktbuild.PSH, fin.TCP.Seq+3, []byte("more")))
			},
			want:  []string{"open 0", "data 0/0 bye", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 3},
			stats: func(s Stats) bool { return s.TCPAfterClose == 4 },
		},
		{
			name: "FIN before the data it follows",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b := c.Send(C, []byte("aa")), c.Send(C, []byte("bb"))
				fin := c.Fin(C)
				f.seg(a, fin, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bb", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4},
		},
		{
			name: "mid-stream join, both directions",
			build: func(f *feed, c *pktbuild.Conn) {
				// No handshake: the server speaks first, so it is dir 0.
				f.seg(c.Send(S, []byte("srv1")), c.Send(C, []byte("cli1")))
				// From before the server's first byte: dropped.
				f.seg(c.Segment(S, pktbuild.PSH, 5000-10, []byte("0123456789")))
				// Client offsets -4..7: 4 before start, 4 retransmitted, 4 new.
				f.seg(c.Segment(C, pktbuild.PSH, 1000-4, []byte("....cli1NEW!")))
				c.Next[C] = 1008
				f.seg(c.Send(C, []byte("x")))
			},
			want: []string{"open 0", "data 0/0 srv1", "data 0/1 cli1", "data 0/1 NEW!", "data 0/1 x",
				"close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4, "0/1": 9},
			stats: func(s Stats) bool { return s.TCPBeforeStart == 14 && s.TCPRetransmitted == 4 },
		},
		{
			name: "SYN-ACK first",
			build: func(f *feed, c *pktbuild.Conn) {
				hs := c.Handshake()
				f.seg(hs[1], hs[2], c.Send(S, []byte("yo")), c.Send(C, []byte("hi")))
			},
			want:  []string{"open 0", "data 0/1 yo", "data 0/0 hi", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 2, "0/1": 2},
		},
		{
			name: "SYN-ACK first, client's first segment lost",
			build: func(f *feed, c *pktbuild.Conn) {
				hs := c.Handshake()
				c.Skip(C, 2)
				// The SYN-ACK acknowledged ISN+1: the client's stream
				// starts there, so the lost bytes are a gap.
				f.seg(hs[1], c.Send(C, []byte("cd")))
			},
			want:  []string{"open 0", "gap 0/0 2", "data 0/0 cd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4},
		},
		{
			name: "SYN captured after the data",
			build: func(f *feed, c *pktbuild.Conn) {
				hs := c.Handshake()
				f.seg(c.Send(C, []byte("ab")), hs[0], hs[1], c.Send(C, []byte("cd")))
			},
			want:  []string{"open 0", "data 0/0 ab", "data 0/0 cd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4},
		},
		{
			name: "RST with a hole",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 3)
				f.seg(a, c.Send(C, []byte("cc")), c.Send(S, []byte("s")), c.Rst(S))
				// Trailing segment on the reset connection: no new stream.
				f.seg(c.Send(C, []byte("zz")))
			},
			// The server's "s" acknowledges the client's "cc": the gap and
			// "cc" come first, then "s".
			want: []string{"open 0", "data 0/0 aa", "gap 0/0 3", "data 0/0 cc", "data 0/1 s",
				"close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 7, "0/1": 1},
			stats: func(s Stats) bool { return s.TCPAfterClose == 2 && s.Streams.TCP == 1 },
		},
		{
			name: "connection refused",
			build: func(f *feed, c *pktbuild.Conn) {
				syn := c.SYN(C)
				f.seg(syn, c.Rst(S))
			},
			want: []string{"open 0", "close 0/0", "close 0/1"},
		},
		{
			name: "port reuse after close gives a new stream",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("one")))
				fin := c.Fin(C)
				f.seg(fin, c.Fin(S), c.Ack(C), fin) // retransmitted FIN after the end
				c2 := pktbuild.NewConn(cli4, srv4, 90000, 70000)
				hs := c2.Handshake()
				f.seg(hs[0], hs[0], hs[1], hs[2], c2.Send(C, []byte("two")))
			},
			want: []string{"open 0", "data 0/0 one", "close 0/0", "close 0/1",
				"open 1", "data 1/0 two", "close 1/0", "close 1/1"},
			spans: map[string]int64{"0/0": 3, "1/0": 3},
		},
		{
			name: "SYN with a new ISN ends a connection still open",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Send(C, []byte("old")))
				c2 := pktbuild.NewConn(cli4, srv4, 90000, 70000)
				f.seg(c2.Handshake()...)
				f.seg(c2.Send(S, []byte("new")))
			},
			want: []string{"open 0", "data 0/0 old", "close 0/0", "close 0/1",
				"open 1", "data 1/1 new", "close 1/0", "close 1/1"},
			spans: map[string]int64{"0/0": 3, "1/1": 3},
		},
		{
			name: "sequence numbers wrap at 2^32",
			build: func(f *feed, c *pktbuild.Conn) {
				c.Next[C] = 0xfffffff8 // ISN; data starts at 0xfffffff9
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("0123456789")) // crosses 2^32 after 7 bytes
				b := c.Send(C, []byte("abc"))
				d := c.Send(C, []byte("def"))
				f.seg(a, d, b, b.Slice(1, 3))
			},
			want:  []string{"open 0", "data 0/0 0123456789", "data 0/0 abc", "data 0/0 def", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 16},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 2 && s.TCPBeforeStart == 0 },
		},
		{
			name: "mid-stream join across the wrap",
			build: func(f *feed, c *pktbuild.Conn) {
				c.Next[C] = 0xfffffffe
				a, b := c.Send(C, []byte("wxyz")), c.Send(C, []byte("!"))
				f.seg(a, c.Segment(C, pktbuild.PSH, 0xfffffffc, []byte("uvwx")), b)
			},
			want:  []string{"open 0", "data 0/0 wxyz", "data 0/0 !", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 5},
			stats: func(s Stats) bool { return s.TCPBeforeStart == 2 && s.TCPRetransmitted == 2 },
		},
		{
			name: "snaplen-truncated segment gives a gap",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				s := c.Send(C, []byte("0123456789"))
				// Ethernet 14 + IPv4 20 + TCP 20 + 4 payload bytes.
				f.frame(s.Frame(eth).Truncate(14 + 20 + 20 + 4))
				f.seg(c.Send(C, []byte("abc")))
			},
			want:  []string{"open 0", "data 0/0 0123", "gap 0/0 6", "data 0/0 abc", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 13},
			stats: func(s Stats) bool { return s.TCPGapBytes == 6 },
		},
		{
			name: "snaplen-truncated segment held out of order",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b, d := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cc"))
				f.seg(a)
				f.frame(d.Frame(eth).Truncate(14 + 20 + 20 + 1))
				f.seg(b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "data 0/0 c", "gap 0/0 1", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 7},
		},
		{
			name: "snaplen cutting the TCP header is malformed",
			build: func(f *feed, c *pktbuild.Conn) {
				f.frame(c.Send(C, []byte("abc")).Frame(eth).Truncate(14 + 20 + 10))
			},
			want:  nil,
			stats: func(s Stats) bool { return s.Malformed == 1 && s.Streams.TCP == 0 },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &feed{e: eth}
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			tc.build(f, c)
			r, st := run(t, tc.cfg, f.pkts, true)
			eventsEqual(t, r.strings(), tc.want)
			checkSpans(t, r, tc.spans)
			if tc.stats != nil && !tc.stats(st) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}
