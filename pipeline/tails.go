package pipeline

import "github.com/dissect-tools/dissect/capture"

// When the main pool and the loss batches are all full, the headers of
// further dropped packets go to a fixed ring that keeps the most recent
// ones, overwriting the oldest (those are then only counted). The newest
// headers matter most: they carry each stream's last sequence and
// acknowledgement numbers and its FIN, from which reassembly knows how
// much of the stream was never decoded, also at its end.

const (
	tailSlots     = 4096
	maxTailHeader = 192 // longer headers are only counted
)

type tailSlot struct {
	p   capture.Packet // Data is nil; the header is in hdr
	hdr [maxTailHeader]byte
	n   int
}

type tailRing struct {
	slots []tailSlot // allocated on first use
	head  int        // oldest
	n     int
}

// push keeps the first keep bytes of p; it reports false when that cost a
// packet: the oldest was overwritten, or p's headers are too long.
func (r *tailRing) push(p *capture.Packet, keep int) bool {
	if keep > maxTailHeader {
		return false
	}
	if r.slots == nil {
		r.slots = make([]tailSlot, tailSlots)
	}
	lost := false
	if r.n == len(r.slots) {
		r.head = (r.head + 1) % len(r.slots)
		r.n--
		lost = true
	}
	s := &r.slots[(r.head+r.n)%len(r.slots)]
	s.p = *p
	s.p.Data = nil
	s.p.Dropped = true
	s.n = copy(s.hdr[:], p.Data[:keep])
	r.n++
	return !lost
}

// oldest returns the oldest packet, its Data the kept header.
func (r *tailRing) oldest() *capture.Packet {
	s := &r.slots[r.head]
	s.p.Data = s.hdr[:s.n]
	return &s.p
}

func (r *tailRing) pop() {
	r.slots[r.head].p = capture.Packet{}
	r.head = (r.head + 1) % len(r.slots)
	r.n--
}
