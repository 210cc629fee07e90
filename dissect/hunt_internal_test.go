package dissect

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"
)

// never is a protocol with content detection whose parser finds nothing:
// a stream of it stays in the hunt for good.
type never struct{}

func (never) Info() Info {
	return Info{Name: "never", Proto: "never", Transports: []Transport{TCP}, Detection: "nothing"}
}
func (never) Detect(*StreamInfo, Dir, []byte) Verdict { return No }
func (never) NewParser(*StreamInfo) Parser            { return never{} }
func (never) Parse(*Ctx, []byte) (int, error)         { return 0, Malformed("never", "never", 0, "never") }
func (never) Sync(_ *Ctx, b []byte) (int, bool)       { return len(b), false }

// TestHuntMemoryIsBounded: a direction of unknown protocol holds at most
// MaxDetect bytes between calls, and its buffer does not keep the size of
// a large write.
func TestHuntMemoryIsBounded(t *testing.T) {
	reg, err := NewRegistry(never{})
	if err != nil {
		t.Fatal(err)
	}
	info := StreamInfo{StreamID: StreamID{Transport: TCP, Addr: [2]netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2")}}}
	var n int
	s := NewStream(info, reg, SinkFunc(func(*Record) error { n++; return nil }), StreamOptions{})
	lim := DefaultLimits()
	rng := rand.New(rand.NewPCG(1, 2))
	chunk := make([]byte, 256<<10)
	var fed int64
	for range 2000 {
		k := 1 + rng.IntN([]int{1, 100, 3000, len(chunk)}[rng.IntN(4)])
		s.Data(0, time.Unix(1, 0), chunk[:k])
		fed += int64(k)
		d := &s.dirs[0]
		if s.hunt == nil {
			t.Fatal("the hunt stopped")
		}
		if held := len(d.buf) - s.hunt.dirs[0].head; held > lim.MaxDetect {
			t.Fatalf("holds %d bytes after a write of %d, want at most %d", held, k, lim.MaxDetect)
		}
		if cap(d.buf) > 4*lim.MaxDetect && k < lim.MaxDetect {
			t.Fatalf("buffer capacity %d after a write of %d", cap(d.buf), k)
		}
	}
	s.End(0, time.Unix(2, 0))
	if n != 1 || s.dirs[0].next != fed {
		t.Errorf("%d records for %d bytes up to offset %d, want one skipped record", n, fed, s.dirs[0].next)
	}
}
