package pipeline

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// TestCutMarksCostRuns: a Cut that read 100 M packets and marked the
// last holds a few bytes of marks, not a bit a packet (12.5 MB, doubled
// by append, before).
func TestCutMarksCostRuns(t *testing.T) {
	c := NewCut()
	p := &capture.Packet{Time: time.Unix(1_700_000_000, 0)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 100_000_000 {
		c.packet(p)
	}
	c.mark(c.cur())
	runtime.GC()
	runtime.ReadMemStats(&after)
	if !c.Marked(c.Packets()-1) || c.Kept() != 1 {
		t.Fatalf("the last packet is not the one marked")
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Errorf("one mark after 100 M packets holds %d bytes", grew)
	}
}

// TestMarksRuns: marks given in any order (mostly forward, some back)
// are the sorted disjoint runs of the packets marked, with the sums of
// their fingerprints; checked against a plain set.
func TestMarksRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var m marks
	set := map[int64]bool{}
	fp := func(i int64) uint64 { return mix64(uint64(i)) }
	next := int64(0)
	for range 20000 {
		var i int64
		switch rng.IntN(4) {
		case 0:
			i = rng.Int64N(next + 1) // back
		default:
			next += rng.Int64N(3)
			i = next
		}
		if got := m.add(pktRef{i, fp(i)}); got == set[i] {
			t.Fatalf("add(%d) = %v with it marked: %v", i, got, set[i])
		}
		set[i] = true
	}
	if m.n != int64(len(set)) {
		t.Fatalf("%d marked, want %d", m.n, len(set))
	}
	var n int64
	for k, r := range m.runs {
		if r.lo >= r.hi || k > 0 && m.runs[k-1].hi >= r.lo {
			t.Fatalf("run %d [%d, %d) after [%d, %d): not sorted, disjoint and apart", k, r.lo, r.hi, m.runs[max(k-1, 0)].lo, m.runs[max(k-1, 0)].hi)
		}
		var sum uint64
		for i := r.lo; i < r.hi; i++ {
			if !set[i] {
				t.Fatalf("run [%d, %d) holds %d, not marked", r.lo, r.hi, i)
			}
			sum += fp(i)
		}
		if sum != r.sum {
			t.Fatalf("run [%d, %d): sum %x, want %x", r.lo, r.hi, r.sum, sum)
		}
		n += r.hi - r.lo
	}
	if n != m.n {
		t.Fatalf("the runs hold %d packets, %d marked", n, m.n)
	}
	for i := range next + 2 {
		if m.has(i) != set[i] {
			t.Fatalf("has(%d) = %v, want %v", i, m.has(i), set[i])
		}
	}
}
