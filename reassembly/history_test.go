package reassembly

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// Expected values in this file come from the rule in history.go: delivered
// bytes are remembered by 32-byte blocks aligned on stream offsets (the
// last 16 KiB), the incomplete last block byte by byte; a retransmission
// is compared on the blocks it covers whole and on the incomplete block; a
// conflict runs from the first differing block (or byte, in the incomplete
// block) to the last. A retransmission of one of the last 4 segments
// delivered whole, over the same range, is also compared byte by byte on
// its ends that cover a block in part.

// good is the first copy of the client's stream: offset i holds a letter,
// never 0xff.
func good(from, to int) []byte {
	b := make([]byte, to-from)
	for i := range b {
		b[i] = byte('a' + (from+i)%26)
	}
	return b
}

// conflicts keeps the conflict events of r, rendered.
func conflicts(r *recorder) []string {
	var out []string
	for _, s := range r.strings() {
		if strings.HasPrefix(s, "conflict") {
			out = append(out, s)
		}
	}
	return out
}

// delivered returns the bytes given as Data on stream 0 direction 0.
func delivered(r *recorder) []byte {
	var b []byte
	for _, e := range r.events {
		if e.kind == "data" && e.id == 0 && e.dir == 0 {
			b = append(b, e.data...)
		}
	}
	return b
}

// TestShiftedRetransmission is the case of issue 21: A = [0,100) good,
// B = [50,150) all 0xff, C = [100,200) good, in both orders.
func TestShiftedRetransmission(t *testing.T) {
	ff := bytes.Repeat([]byte{0xff}, 100)
	for _, tc := range []struct {
		name      string
		order     string
		want      []string
		bytes     int64
		delivered []byte
	}{{
		// B's [50,100) is over A: block [64,96) differs, and the
		// incomplete block [96,100) byte by byte: 64+36. B's [100,150)
		// is new: B is its first copy. C's [100,150) is over B: the
		// block [96,128) mixes A and B and C covers it in part (not
		// compared); the incomplete block [128,150) differs throughout.
		name: "A B C", order: "ABC",
		want:      []string{"conflict 0/0 64+36", "conflict 0/0 128+22"},
		bytes:     36 + 22,
		delivered: slicesConcat(good(0, 100), ff[:50], good(150, 200)),
	}, {
		// A and C first: [0,200) good. B covers the blocks [64,96) and
		// [96,128) whole, both differ; [50,64) and [128,150) cover
		// blocks in part.
		name: "A C B", order: "ACB",
		want:      []string{"conflict 0/0 64+64"},
		bytes:     64,
		delivered: good(0, 200),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			var f feed
			f.e = eth
			f.seg(c.Handshake()...)
			segs := map[byte]pktbuild.Segment{
				'A': c.Segment(C, pktbuild.PSH, 1001, good(0, 100)),
				'B': c.Segment(C, pktbuild.PSH, 1001+50, ff[:100]),
				'C': c.Segment(C, pktbuild.PSH, 1001+100, good(100, 200)),
			}
			for _, k := range []byte(tc.order) {
				f.seg(segs[k])
			}
			r, st := run(t, Config{}, f.pkts, true)
			eventsEqual(t, conflicts(r), tc.want)
			if st.TCPConflicts != int64(len(tc.want)) || st.TCPConflictBytes != tc.bytes || st.TCPRetransmitted != 100 {
				t.Errorf("%d conflicts (%d bytes), %d retransmitted; want %d (%d), 100",
					st.TCPConflicts, st.TCPConflictBytes, st.TCPRetransmitted, len(tc.want), tc.bytes)
			}
			if got := delivered(r); !bytes.Equal(got, tc.delivered) {
				t.Errorf("delivered %q, want %q", got, tc.delivered)
			}
		})
	}
}

func slicesConcat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// TestRetransmissionBlocks: [0,250) delivered as five 50-byte segments
// (blocks [0,32) ... [192,224) complete, [224,250) the incomplete one),
// then one retransmission of [s,e) with the bytes at flip changed; [250,e)
// is new data when e > 250.
func TestRetransmissionBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		s, e int
		flip []int
		want string // the conflict, or ""
	}{
		{"one block exactly", 32, 64, []int{40}, "32-32"},
		{"one block, its first byte", 32, 64, []int{32}, "32-32"},
		{"one block, its byte 12", 32, 64, []int{44}, "32-32"},
		{"one block, its byte 20", 32, 64, []int{52}, "32-32"},
		{"one block, its last byte", 32, 64, []int{63}, "32-32"},
		{"block covered in part: not compared", 33, 64, []int{40}, ""},
		{"shifted, the next block whole", 33, 100, []int{70}, "64-32"},
		{"shifted, first and last differing blocks", 1, 130, []int{40, 100}, "32-96"},
		// [50,100) is the second segment, one of the last 4: its head
		// [50,64) and tail [96,100) are kept as bytes.
		{"same range as a segment, its head", 50, 100, []int{52}, "52-1"},
		{"same range as a segment, its tail", 50, 100, []int{99}, "99-1"},
		{"same range as a segment, head and whole block", 50, 100, []int{52, 70}, "52-44"},
		{"same range as a segment, head and tail", 50, 100, []int{63, 96}, "63-34"},
		{"same range as a segment, whole block and tail", 50, 100, []int{70, 99}, "64-36"},
		{"not quite the range of a segment: head not compared", 51, 100, []int{52}, ""},
		{"incomplete block, byte exact", 200, 250, []int{230}, "230-1"},
		{"incomplete block, same bytes; partial block not compared", 220, 250, []int{221}, ""},
		{"all of it, first and last byte", 0, 250, []int{0, 249}, "0-250"},
		{"over old and new data", 230, 260, []int{235, 255}, "235-1"},
		{"same bytes", 10, 240, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			var f feed
			f.e = eth
			f.seg(c.Handshake()...)
			for i := 0; i < 250; i += 50 {
				f.seg(c.Send(C, good(i, i+50)))
			}
			b := good(tc.s, tc.e)
			for _, i := range tc.flip {
				b[i-tc.s] = '#'
			}
			f.seg(c.Segment(C, pktbuild.PSH, 1001+uint32(tc.s), b))
			r, st := run(t, Config{}, f.pkts, true)
			var want []string
			if tc.want != "" {
				var off, n int
				fmt.Sscanf(tc.want, "%d-%d", &off, &n)
				want = []string{fmt.Sprintf("conflict 0/0 %d+%d", off, n)}
				if st.TCPConflicts != 1 || st.TCPConflictBytes != int64(n) {
					t.Errorf("%d conflicts (%d bytes), want 1 (%d)", st.TCPConflicts, st.TCPConflictBytes, n)
				}
			} else if st.TCPConflicts != 0 {
				t.Errorf("%d conflicts, want none", st.TCPConflicts)
			}
			eventsEqual(t, conflicts(r), want)
			// The first copy wins: the stream is good[0,max(250,e)),
			// the new bytes past 250 being the retransmission's.
			wantData := good(0, 250)
			if tc.e > 250 {
				wantData = append(wantData, b[250-tc.s:]...)
			}
			if got := delivered(r); !bytes.Equal(got, wantData) {
				t.Errorf("delivered %q, want %q", got, wantData)
			}
		})
	}
}

// TestRetransmissionWindow: 19,200 bytes delivered (600 blocks); the last
// 512 blocks, [2816,19200), are remembered. Older bytes are not compared,
// not even a retransmission of the first segment's exact range (only the
// last 4 segments are remembered whole).
func TestRetransmissionWindow(t *testing.T) {
	const seg, n = 1200, 16
	for _, tc := range []struct {
		name string
		s, e int
		want []string
	}{
		{"first segment: beyond the window", 0, seg, nil},
		{"last block before the window", 2784, 2816, nil},
		{"across the window's start", 2784, 2848, []string{"conflict 0/0 2816+32"}},
		{"first block of the window", 2816, 2848, []string{"conflict 0/0 2816+32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			var f feed
			f.e = eth
			f.seg(c.Handshake()...)
			for i := 0; i < seg*n; i += seg {
				f.seg(c.Send(C, good(i, i+seg)))
			}
			f.seg(c.Segment(C, pktbuild.PSH, 1001+uint32(tc.s), bytes.Repeat([]byte{0xff}, tc.e-tc.s)))
			r, st := run(t, Config{}, f.pkts, true)
			eventsEqual(t, conflicts(r), tc.want)
			if st.TCPConflicts != int64(len(tc.want)) {
				t.Errorf("%d conflicts, want %d", st.TCPConflicts, len(tc.want))
			}
		})
	}
}

// TestLargeSegment: a segment larger than the window (GRO), delivered
// whole at [10,20010) and retransmitted over the same range: its head
// [10,32) and tail [20000,20010) are compared byte by byte, its blocks in
// the window [3616,20000) by hash, the blocks before it not at all.
func TestLargeSegment(t *testing.T) {
	for _, tc := range []struct {
		flip int
		want []string
	}{
		{20, []string{"conflict 0/0 20+1"}},
		{1000, nil},
		{3615, nil},
		{3616, []string{"conflict 0/0 3616+32"}},
		{20005, []string{"conflict 0/0 20005+1"}},
	} {
		t.Run(fmt.Sprint(tc.flip), func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			var f feed
			f.e = eth
			f.seg(c.Handshake()...)
			f.seg(c.Send(C, good(0, 10)))
			f.seg(c.Send(C, good(10, 20010)))
			b := good(10, 20010)
			b[tc.flip-10] = '#'
			f.seg(c.Segment(C, pktbuild.PSH, 1001+10, b))
			r, st := run(t, Config{}, f.pkts, true)
			eventsEqual(t, conflicts(r), tc.want)
			if st.TCPConflicts != int64(len(tc.want)) {
				t.Errorf("%d conflicts, want %d", st.TCPConflicts, len(tc.want))
			}
		})
	}
}

// TestRetransmissionAfterGap: a gap ends what is known of the delivered
// bytes; blocks from before it are not compared, blocks after it are.
// [0,64) delivered, [64,100) never captured, [100,164) held until the
// server acknowledges 164: the gap is declared and [100,164) delivered.
func TestRetransmissionAfterGap(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    int
		want []string
	}{
		{"block before the gap", 32, nil},
		{"first block whole after the gap", 128, []string{"conflict 0/0 128+32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			var f feed
			f.e = eth
			f.seg(c.Handshake()...)
			f.seg(c.Send(C, good(0, 64)))
			c.Skip(C, 36)
			f.seg(c.Send(C, good(100, 164)))
			f.seg(c.Ack(S))
			f.seg(c.Segment(C, pktbuild.PSH, 1001+uint32(tc.s), bytes.Repeat([]byte{0xff}, 32)))
			r, st := run(t, Config{}, f.pkts, true)
			eventsEqual(t, conflicts(r), tc.want)
			if st.TCPGapBytes != 36 || st.TCPConflicts != int64(len(tc.want)) {
				t.Errorf("%d gap bytes, %d conflicts; want 36, %d", st.TCPGapBytes, st.TCPConflicts, len(tc.want))
			}
		})
	}
}

// TestHistoryBounded: a direction's block hashes grow with what it
// delivered (100 bytes: 3 blocks, in the first 16 slots), and however much
// it delivers it remembers 512 of them and one block of bytes; a closed
// direction nothing.
func TestHistoryBounded(t *testing.T) {
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	r := newRecorder()
	a := New(r, Config{})
	for _, s := range c.Handshake() {
		a.Packet(s.Packet(eth, t0))
	}
	a.Packet(c.Send(C, good(0, 100)).Packet(eth, t0))
	k, _ := a.anyKey()
	h := &a.flows[k].h[0]
	if h.hist == nil || len(h.hist.sums) > 16 {
		t.Fatalf("history %+v after 100 bytes, want at most 16 sums", h.hist)
	}
	for i := 0; i < 100; i++ {
		a.Packet(c.Send(C, good(0, 1000)).Packet(eth, t0))
	}
	if h.hist == nil || len(h.hist.sums) != 512 || cap(h.hist.sums) != 512 {
		t.Fatalf("history %+v after 100,000 bytes, want 512 sums", h.hist)
	}
	a.Packet(c.Fin(C).Packet(eth, t0))
	if h.hist != nil {
		t.Errorf("history kept after the direction closed")
	}
}

// anyKey returns the key of some flow.
func (a *Assembler) anyKey() (flowKey, bool) {
	for k := range a.flows {
		return k, true
	}
	return flowKey{}, false
}

// BenchmarkHistoryRecord is the history's cost per delivered 1448-byte
// segment (part of BenchmarkTCPInOrder).
func BenchmarkHistoryRecord(b *testing.B) {
	a := New(&countHandler{}, Config{})
	var h half
	data := good(0, 1448)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var off int64
	for b.Loop() {
		a.record(&h, off, data)
		off += int64(len(data))
	}
}

// TestLargeSegmentAfterSmall: the block hashes grow with the data; a
// segment larger than the window (GRO on loopback: 45 KiB) that arrives
// when they hold fewer than histBlocks entries must not write past them.
// It panicked on a live capture of lo (index 448 of 448): 14,336 bytes
// (448 blocks) delivered, then 45,568 bytes in one segment.
func TestLargeSegmentAfterSmall(t *testing.T) {
	for _, first := range []int{10, 14336, 14000, 16383} {
		t.Run(fmt.Sprint(first), func(t *testing.T) {
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			var f feed
			f.e = eth
			f.seg(c.Handshake()...)
			f.seg(c.Send(C, good(0, first)))
			f.seg(c.Send(C, good(first, first+45568)))
			// A retransmission inside the window, one byte flipped in a
			// block it covers whole (32 bytes in: past its first boundary).
			b := good(first+40000, first+40064)
			b[32] = '#'
			f.seg(c.Segment(C, pktbuild.PSH, uint32(1001+first+40000), b))
			r, _ := run(t, Config{}, f.pkts, true)
			if got := delivered(r); !bytes.Equal(got, good(0, first+45568)) {
				t.Fatalf("delivered %d bytes, want %d, the same", len(got), first+45568)
			}
			if len(conflicts(r)) != 1 {
				t.Errorf("conflicts %q, want the one flipped byte's block", conflicts(r))
			}
		})
	}
}
