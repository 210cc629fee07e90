package pipeline

import (
	"context"
	"net/netip"
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/reassembly"
)

// TestCutBound: positions are bounded (the oldest of the growing
// direction forgotten and counted), forgotten as records pass over them
// but for the lead-in, and a kept record marks the packets that carried
// its bytes, its lead-in and the first packet of its stream.
func TestCutBound(t *testing.T) {
	c := NewCut()
	c.maxSegs = 4
	s := &reassembly.Stream{StreamID: reassembly.StreamID{ID: 0, Transport: reassembly.TCP, Addr: [2]netip.AddrPort{}}}
	for i := range int64(10) {
		c.packet(&capture.Packet{})
		if i == 0 {
			c.open(s)
			continue
		}
		c.segment(s, 0, reassembly.Segment{Off: (i - 1) * 10, N: 10, ACK: true})
	}
	if c.segs != 4 || c.Forgotten() != 5 {
		t.Fatalf("%d positions held, %d forgotten; want 4 and 5", c.segs, c.Forgotten())
	}
	// A direction whose records never come (an unknown protocol) keeps
	// no more than the bound in its slice either.
	u := &reassembly.Stream{StreamID: reassembly.StreamID{ID: 1, Transport: reassembly.UDP}}
	for range 1000 {
		c.packet(&capture.Packet{})
		c.unit(u, 0, 10, false)
	}
	if d := &c.streams[1].dirs[0]; len(d.segs)-d.head > 4 || len(d.segs) > 200 {
		t.Fatalf("an unknown stream holds %d positions in a slice of %d", len(d.segs)-d.head, len(d.segs))
	}
	c.closed(u, 0)
	c.closed(u, 1)
	// Packets 6..9 carried offsets 50..90; a record at 80..90 (packet 9)
	// with three records before it at 50, 60, 70.
	for _, off := range []int64{50, 60, 70} {
		c.seen(&dissect.Record{Stream: 0, Offset: off, Length: 10, Type: "x"})
	}
	r := &dissect.Record{Stream: 0, Offset: 80, Length: 10, Type: "x"}
	c.seen(r)
	c.Keep(r)
	var marked []int64
	for i := range c.Packets() {
		if c.Marked(i) {
			marked = append(marked, i)
		}
	}
	// The stream's first packet, the one with its first bytes (offset 0),
	// the lead-in (6, 7, 8) and the record's.
	want := []int64{0, 1, 6, 7, 8, 9}
	if len(marked) != len(want) || c.Kept() != int64(len(want)) {
		t.Fatalf("marked %v (%d kept); want %v", marked, c.Kept(), want)
	}
	for i := range want {
		if marked[i] != want[i] {
			t.Fatalf("marked %v; want %v", marked, want)
		}
	}
	// Another record past them: only the lead-in's positions stay.
	c.seen(&dissect.Record{Stream: 0, Offset: 90, Length: 10, Type: "x"})
	if c.segs != 3 {
		t.Errorf("%d positions held after the records; want 3 (the lead-in of the next)", c.segs)
	}
}

// BenchmarkCut is a file run over a Deltarobot session, decoded with and
// without a Cut that keeps one record in a hundred: what the first
// reading of -Y -w costs over a plain run.
func BenchmarkCut(b *testing.B) {
	s := newSession(b, 20000, 1400)
	pkts := packetsOf(s)
	var size int64
	for i := range pkts {
		size += int64(len(pkts[i].Data))
	}
	reg := registry(b)
	for _, withCut := range []bool{false, true} {
		name := "plain"
		if withCut {
			name = "cut"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				var cut *Cut
				n := 0
				sink := dissect.SinkFunc(func(r *dissect.Record) error {
					if n++; cut != nil && n%100 == 0 {
						cut.Keep(r)
					}
					return nil
				})
				if withCut {
					cut = NewCut()
					cut.Decl = reg.Decl
				}
				if _, err := Run(context.Background(), &sliceSource{pkts: pkts}, Config{Registry: reg, Sink: sink, Cut: cut}); err != nil {
					b.Fatal(err)
				}
				if cut != nil && cut.Kept() == 0 {
					b.Fatal("nothing kept")
				}
			}
		})
	}
}
