package reassembly

import (
	"slices"
	"time"
)

// IP fragment reassembly (RFC 791, RFC 8200 section 4.5, RFC 815).
//
// Fragments are grouped into sets by (source, destination, protocol,
// identification): 16 bits of IPv4 identification, 32 of IPv6. Each held
// fragment is copied. A set completes when its fragments cover the
// datagram from offset 0 to the end given by the last fragment (MF clear);
// the datagram is then decoded as if it had arrived whole, at the time of
// the fragment that completed it, through the usual transport path (TCP,
// UDP, or a tunnel with its inner packet).
//
// Overlaps are treated as Linux does since 4.19 for both IPv4 and IPv6
// (RFC 5722 with erratum 3089, extended to IPv4): a fragment lying wholly
// inside one already held is a duplicate and is ignored (the first copy
// wins); any other overlap discards the whole datagram. A discarded set
// is counted as such ([Stats].FragmentOverlaps), not as incomplete, and
// a set whose overlapping fragments carry different bytes (either kind of
// overlap) is counted once in [Stats].FragmentConflicts. A fragment that
// contradicts the known end (a second, different end, or data past it) is
// dropped, as in Linux's ip_frag_queue. A discarded set stays in
// the table, absorbing its later fragments without holding their data,
// until it times out, so that it is reported once.
//
// A set that does not complete (timeout, eviction to stay within budget,
// Flush, a discard, or a fragment whose data was dropped or cut by the snap
// length) is reported as a datagram whose payload was partly lost, once
// its other fragments are in: if its first fragment (offset 0, holding the
// TCP or UDP header) was seen, a TCP segment delivers the captured runs of
// bytes and each missing range becomes a Gap at its place in the stream; a
// UDP datagram becomes one Gap of its length on its flow. Without a first
// fragment the loss can only be counted ([Stats].FragmentBytesLost).

// Fragment table bounds.
const (
	fragTimeout   = 60 * time.Second // RFC 8200 section 4.5; Linux ip6frag_time
	fragMaxBytes  = 16 << 20         // held bytes, overhead included
	fragMaxSets   = 4096
	fragMaxPieces = 1024  // fragments held per set; past it the set is discarded
	fragMaxEnd    = 65535 // largest datagram payload
	fragSetCost   = 128   // accounted bytes per set
	fragPieceCost = 48    // accounted bytes per held fragment
	fragFree      = 16    // finished sets kept for reuse
	fragFreeCap   = 64    // largest piece capacity a reused set keeps
)

type fragKey struct {
	src, dst [16]byte
	id       uint32
	proto    uint8
	v4       bool
}

// fragPiece is a held fragment: [off, off+n) of the datagram's payload,
// of which data holds the first len(data) bytes.
type fragPiece struct {
	off, n int
	data   []byte
}

type fragSet struct {
	key     fragKey
	pieces  []fragPiece // sorted by offset, disjoint
	have    int         // bytes covered by pieces (n, not data)
	end     int         // end of the datagram's payload; -1 until the last fragment is seen
	maxEnd  int         // highest end of any fragment seen
	cost    int         // bytes accounted in fragTable.held
	lossy   bool        // a piece's data is shorter than its n
	dead    bool        // discarded: data not held, reported as lost
	overlap bool        // discarded for an overlap (RFC 5722)
	clash   bool        // overlapping fragments had different bytes (counted once)
	first   time.Time   // time of the set's first fragment
	tunnels int
}

// fragTable holds the incomplete fragment sets of an [Assembler].
type fragTable struct {
	sets     map[fragKey]*fragSet
	order    []*fragSet // by creation, oldest first
	held     int
	maxBytes int
	maxSets  int
	timeout  time.Duration
	scratch  []byte     // reassembled datagrams, reused
	free     []*fragSet // finished sets, for reuse
}

func newFragTable() fragTable {
	return fragTable{maxBytes: fragMaxBytes, maxSets: fragMaxSets, timeout: fragTimeout}
}

// fragTick finalises the sets that have timed out by time t; it is cheap
// when no set is held.
func (a *Assembler) fragTick(t Stamp) {
	if len(a.frags.order) > 0 {
		a.fragExpire(t)
	}
}

// fragExpire finalises, oldest first, the sets older than the timeout at t.
func (a *Assembler) fragExpire(t Stamp) {
	ft := &a.frags
	for len(ft.order) > 0 && t.Time.Sub(ft.order[0].first) > ft.timeout {
		a.fragFinish(ft.order[0], t)
	}
}

// fragFlush finalises every set, oldest first.
func (a *Assembler) fragFlush(t Stamp) {
	for len(a.frags.order) > 0 {
		a.fragFinish(a.frags.order[0], t)
	}
}

// newSet returns a reused set (with the capacity of its pieces) or a new
// one.
func (ft *fragTable) newSet() *fragSet {
	if n := len(ft.free); n > 0 {
		s := ft.free[n-1]
		ft.free = ft.free[:n-1]
		return s
	}
	return &fragSet{pieces: make([]fragPiece, 0, 8)}
}

// recycle keeps s, taken out of the table and no longer used, for reuse.
func (ft *fragTable) recycle(s *fragSet) {
	if len(ft.free) < fragFree && cap(s.pieces) <= fragFreeCap {
		clear(s.pieces)
		*s = fragSet{pieces: s.pieces[:0]}
		ft.free = append(ft.free, s)
	}
}

// remove takes s out of the table.
func (ft *fragTable) remove(s *fragSet) {
	delete(ft.sets, s.key)
	if i := slices.Index(ft.order, s); i >= 0 {
		ft.order = slices.Delete(ft.order, i, i+1)
	}
	ft.held -= s.cost
	s.cost = 0
}

// fragment processes one IP fragment, decoded into pk, at time t.
func (a *Assembler) fragment(pk *packet, t Stamp) {
	a.stats.Fragments++
	a.fragTick(t)
	f := &pk.fr
	if len(f.data) > f.n {
		f.data = f.data[:f.n]
	}
	end := f.off + f.n
	if end > fragMaxEnd || (f.n == 0 && f.more) {
		// Past the largest datagram, or an empty fragment that says
		// nothing (a last one still gives the end).
		a.stats.Malformed++
		return
	}
	ft := &a.frags
	k := fragKey{src: pk.src, dst: pk.dst, id: f.id, proto: f.proto, v4: pk.v4}
	s := ft.sets[k]
	if s == nil {
		if ft.sets == nil {
			ft.sets = make(map[fragKey]*fragSet)
		}
		for len(ft.order) > 0 && (len(ft.order) >= ft.maxSets || ft.held+fragSetCost > ft.maxBytes) {
			a.fragFinish(ft.order[0], t)
		}
		s = ft.newSet()
		*s = fragSet{key: k, end: -1, first: t.Time, tunnels: pk.tunnels, cost: fragSetCost, pieces: s.pieces}
		ft.held += s.cost
		ft.sets[k] = s
		ft.order = append(ft.order, s)
	}
	s.maxEnd = max(s.maxEnd, end)
	switch {
	case !s.dead:
		if !a.fragAdd(s, f, t) {
			a.fragKill(s)
		}
	case f.off == 0 && len(s.pieces) == 0 && f.n > 0:
		// A discarded set still keeps its first fragment, which names
		// the stream its loss belongs to.
		cost := len(f.data) + fragPieceCost
		if ft.held+cost <= ft.maxBytes {
			s.pieces = []fragPiece{{n: f.n, data: append([]byte(nil), f.data...)}}
			s.cost += cost
			ft.held += cost
		}
	}
	if s.gone() {
		return
	}
	if s.end >= 0 && s.have == s.end {
		if s.dead || s.lossy {
			a.fragFinish(s, t)
		} else {
			a.fragComplete(s, t)
		}
	}
}

// gone reports whether s was taken out of the table (evicted to make room
// for its own fragment).
func (s *fragSet) gone() bool { return s.cost == 0 }

// fragAdd adds fragment f to s, or ignores it; false when the set must be
// discarded.
func (a *Assembler) fragAdd(s *fragSet, f *fragInfo, t Stamp) bool {
	end := f.off + f.n
	// As Linux's ip_frag_queue: a fragment that contradicts the end
	// already known (a second, different end; data past it; an end
	// before data held) is dropped, the set kept.
	if !f.more {
		if s.end >= 0 && s.end != end {
			return true
		}
		if len(s.pieces) > 0 {
			if last := s.pieces[len(s.pieces)-1]; last.off+last.n > end {
				return true
			}
		}
		s.end = end
	} else if s.end >= 0 && end > s.end {
		return true
	}
	if f.n == 0 {
		return true
	}
	i, _ := slices.BinarySearchFunc(s.pieces, f.off, func(p fragPiece, off int) int { return p.off - off })
	// pieces[i-1] starts before f, pieces[i] at or after it.
	if i > 0 {
		if p := s.pieces[i-1]; p.off+p.n > f.off {
			a.fragClash(s, f, i-1)
			return a.fragOverlap(s, end <= p.off+p.n) // a duplicate inside p, else an overlap
		}
	}
	if i < len(s.pieces) {
		if p := s.pieces[i]; p.off < end {
			a.fragClash(s, f, i)
			return a.fragOverlap(s, p.off == f.off && end <= p.off+p.n)
		}
	}
	if len(s.pieces) == fragMaxPieces {
		return false
	}
	cost := len(f.data) + fragPieceCost
	ft := &a.frags
	for ft.held+cost > ft.maxBytes && len(ft.order) > 0 && ft.order[0] != s {
		a.fragFinish(ft.order[0], t)
	}
	if ft.held+cost > ft.maxBytes {
		return false // s alone fills the budget
	}
	s.pieces = slices.Insert(s.pieces, i, fragPiece{off: f.off, n: f.n, data: append([]byte(nil), f.data...)})
	s.have += f.n
	s.cost += cost
	ft.held += cost
	if len(f.data) < f.n {
		s.lossy = true
	}
	return true
}

// fragOverlap notes, for an overlapping fragment, whether it is a
// duplicate (ignored) or an overlap that discards s; it returns dup.
func (a *Assembler) fragOverlap(s *fragSet, dup bool) bool {
	if !dup {
		s.overlap = true
	}
	return dup
}

// fragClash counts s once in FragmentConflicts when fragment f, which
// overlaps the held pieces from index i on, has bytes that differ from
// theirs where both were captured.
func (a *Assembler) fragClash(s *fragSet, f *fragInfo, i int) {
	if s.clash {
		return
	}
	fEnd := f.off + len(f.data)
	for _, p := range s.pieces[i:] {
		if p.off >= f.off+f.n {
			break
		}
		lo, hi := max(p.off, f.off), min(p.off+len(p.data), fEnd)
		if lo < hi && string(p.data[lo-p.off:hi-p.off]) != string(f.data[lo-f.off:hi-f.off]) {
			s.clash = true
			a.stats.FragmentConflicts++
			return
		}
	}
}

// fragKill discards the data of s, keeping its first fragment's (which
// names its stream).
func (a *Assembler) fragKill(s *fragSet) {
	s.dead = true
	s.have = -1 // never complete: reported once it times out or is evicted
	var keep []fragPiece
	cost := fragSetCost
	if len(s.pieces) > 0 && s.pieces[0].off == 0 {
		keep = s.pieces[:1:1]
		cost += len(keep[0].data) + fragPieceCost
	}
	a.frags.held -= s.cost - cost
	s.cost = cost
	s.pieces = keep
}

// fragComplete decodes the datagram of the complete set s.
func (a *Assembler) fragComplete(s *fragSet, t Stamp) {
	ft := &a.frags
	ft.remove(s)
	if cap(ft.scratch) < s.end {
		ft.scratch = make([]byte, fragMaxEnd)
	}
	b := ft.scratch[:s.end]
	for _, p := range s.pieces {
		copy(b[p.off:], p.data)
	}
	a.stats.FragmentsReassembled++
	pk := packet{v4: s.key.v4, src: s.key.src, dst: s.key.dst, tunnels: s.tunnels}
	proto := s.key.proto
	ft.recycle(s)
	a.fragDispatch(&pk, pk.transport(proto, b, len(b)), t)
}

// fragDispatch hands a reassembled datagram, decoded into pk with outcome
// out, to the transport it belongs to.
func (a *Assembler) fragDispatch(pk *packet, out outcome, t Stamp) {
	if pk.short && (out == outStream || out == outFragment) {
		out = outMalformed // an inner IP length past the end of a whole datagram
	}
	switch out {
	case outOther:
		a.countOther(pk.other)
	case outMalformed:
		a.stats.Malformed++
	case outFragment:
		a.fragment(pk, t) // a fragment inside a tunnel; tunnels bound the depth
	case outStream:
		if pk.proto == ipProtoTCP {
			a.tcp(pk, t)
		} else {
			a.udp(pk, false, t)
		}
	}
}

// fragFinish reports the incomplete set s and removes it.
func (a *Assembler) fragFinish(s *fragSet, t Stamp) {
	a.frags.remove(s)
	if s.overlap {
		a.stats.FragmentOverlaps++
	} else {
		a.stats.FragmentsIncomplete++
	}
	end := s.end
	if end < 0 {
		end = s.maxEnd
	}
	lost := int64(a.fragLost(s, end, t))
	a.stats.FragmentBytesLost += max(lost, 0)
	a.frags.recycle(s)
}

// fragLost passes on what the incomplete set s (whose payload ends at
// end) has of its datagram, and returns how many bytes of it were lost.
func (a *Assembler) fragLost(s *fragSet, end int, t Stamp) int {
	lost := end
	if len(s.pieces) == 0 || s.pieces[0].off != 0 {
		return lost
	}
	p0 := s.pieces[0].data
	pk := packet{v4: s.key.v4, src: s.key.src, dst: s.key.dst, tunnels: s.tunnels, frag: true}
	if pk.transport(s.key.proto, p0, end) != outStream {
		return lost
	}
	hdr := cap(p0) - cap(pk.payload) // where the transport payload starts
	k, srcIsA := pk.key()
	if pk.proto != ipProtoTCP {
		// The datagram is lost: one Gap of its length on its flow.
		c := a.flows[k]
		if c == nil {
			c = a.newFlow(&pk, k, srcIsA, true, UDP, t)
		}
		a.touch(c, t.Time)
		lost = max(lost, hdr+pk.plen) // the UDP header tells the whole length
		if pk.plen > 0 {
			a.stats.FragmentUDPGapBytes += int64(pk.plen)
			a.h.Gap(&c.s, c.dir(srcIsA), t, int64(pk.plen))
		}
		return lost
	}
	// TCP: one segment per captured run, each declared up to the next
	// run, so that what is missing becomes a Gap at its place.
	pieces := s.pieces
	if s.dead {
		pieces = nil
	}
	seq, flags := pk.seq, pk.flags
	plenEnd := hdr + pk.plen
	next := func(i int) int {
		if i+1 < len(pieces) {
			return min(pieces[i+1].off, plenEnd)
		}
		return plenEnd
	}
	if len(pieces) == 0 {
		pk.payload = nil
		a.tcp(&pk, t)
		return lost
	}
	for i, p := range pieces {
		from := max(p.off, hdr)
		to := next(i)
		if from >= to && i > 0 {
			continue
		}
		seg := pk
		seg.seq = seq + uint32(from-hdr)
		seg.flags = flags
		if i > 0 && flags&flagSYN != 0 {
			seg.seq++ // the SYN takes the first sequence number
			seg.flags &^= flagSYN
		}
		if i < len(pieces)-1 {
			seg.flags &^= flagFIN | flagRST
		}
		data := p.data[min(from-p.off, len(p.data)):]
		data = data[:min(len(data), max(to-from, 0))]
		seg.payload = data
		seg.plen = max(to-from, 0)
		seg.trunc = len(data) < seg.plen
		lost -= len(data)
		a.tcp(&seg, t)
	}
	return lost - hdr
}
