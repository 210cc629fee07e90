package vrpn

import "github.com/dissect-tools/dissect/dissect"

// This file holds the state that lets Sync resume a search on a TCP
// direction where it stopped. dissect.Stream hands Sync the bytes it holds
// from the first offset Sync could not judge, plus the new ones; without
// this state a search fed a few bytes at a time (garbage in 1-byte
// segments behind a candidate whose message is up to 64000 bytes long)
// would re-examine the whole held buffer on every call.
//
// The state is keyed by stream offsets, which name the same byte on every
// call: it is kept while the calls continue one search (same phase, the
// new buffer starts no earlier than the last one did, within what was seen,
// and ends no earlier), and dropped otherwise (after a gap, a new search,
// or when Sync found its point).

// cand is a candidate whose verification waits for bytes.
type cand struct {
	off  int64 // stream offset of its header
	at   int64 // look again once the buffer ends at or past this offset
	done bool  // verified or ruled out
}

// scan is the search state of one TCP direction.
type scan struct {
	active bool
	phase  int   // the direction's phase when the search began
	start  int64 // stream offset of the last buffer
	end    int64 // stream offset of the end of the last buffer
	pos    int64 // next offset to classify: each one before it is ruled out or in pend
	// pend holds the waiting candidates in offset order; pend[:head] are
	// done. Candidate number seq is pend[seq-base].
	pend []cand
	head int
	base int64
	due  []int64 // heap of candidate numbers, by at
}

// sameSearch reports whether a call at [off, end) with phase ph continues
// the search s stands in.
func (s *scan) sameSearch(ph int, off, end int64) bool {
	return s.active && s.phase == ph && off >= s.start && off <= s.end && end >= s.end
}

func (s *scan) reset(ph int, off int64) {
	s.active, s.phase, s.start, s.end, s.pos = true, ph, off, off, off
	s.pend, s.head, s.base, s.due = s.pend[:0], 0, 0, s.due[:0]
}

// add makes the header at off a waiting candidate, to be looked at again
// once the buffer ends at or past at.
func (s *scan) add(off, at int64) {
	s.pend = append(s.pend, cand{off: off, at: at})
	s.push(s.base + int64(len(s.pend)-1))
}

func (s *scan) less(i, j int) bool {
	return s.pend[s.due[i]-s.base].at < s.pend[s.due[j]-s.base].at
}

func (s *scan) push(seq int64) {
	s.due = append(s.due, seq)
	for i := len(s.due) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s.due[i], s.due[p] = s.due[p], s.due[i]
		i = p
	}
}

func (s *scan) pop() {
	n := len(s.due) - 1
	s.due[0] = s.due[n]
	s.due = s.due[:n]
	s.down(0)
}

func (s *scan) down(i int) {
	n := len(s.due)
	for {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && s.less(l, m) {
			m = l
		}
		if r < n && s.less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		s.due[i], s.due[m] = s.due[m], s.due[i]
		i = m
	}
}

// top returns the waiting candidate due first that is still in the
// buffer starting at off, and its number, dropping those that are done or
// left the buffer.
func (s *scan) top(off int64) (*cand, int64) {
	for len(s.due) > 0 {
		seq := s.due[0]
		if seq >= s.base {
			if cd := &s.pend[seq-s.base]; !cd.done && cd.off >= off {
				return cd, seq
			}
		}
		s.pop() // done, or cut off from the buffer
	}
	return nil, 0
}

// front returns the offset of the first waiting candidate at or after
// off, or -1, and compacts pend.
func (s *scan) front(off int64) int64 {
	for s.head < len(s.pend) && (s.pend[s.head].done || s.pend[s.head].off < off) {
		s.head++
	}
	at := int64(-1)
	if s.head < len(s.pend) {
		at = s.pend[s.head].off
	}
	if s.head > 64 && 2*s.head > len(s.pend) {
		s.compact()
	}
	return at
}

// compact drops pend[:head] (all done) and the heap's numbers of those
// that it still holds (cut off from the buffer, never popped), so that
// every number in the heap indexes pend. Its cost is linear in pend, of
// which at least half is dropped.
func (s *scan) compact() {
	s.base += int64(s.head)
	s.pend = s.pend[:copy(s.pend, s.pend[s.head:])]
	s.head = 0
	due := s.due[:0]
	for _, seq := range s.due {
		if seq >= s.base {
			due = append(due, seq)
		}
	}
	s.due = due
	for i := len(s.due)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
}

// syncStream is Sync on a TCP direction; see [parser.Sync] for what it
// answers. It examines each offset's header once, and a waiting candidate
// again only when the bytes it waits for have come.
func (p *parser) syncStream(c *dissect.Ctx, b []byte) (int, bool) {
	d := &p.dirs[c.Dir]
	s := &d.scan
	off, end := c.Offset, c.Offset+int64(len(b))
	if !s.sameSearch(d.phase, off, end) {
		s.reset(d.phase, off)
	}
	s.start, s.end = off, end
	step := int64(1)
	if d.phase >= 0 {
		step = align
	}
	if s.pos < off {
		s.pos = off
	}
	if step == align {
		s.pos += (int64(d.phase) - s.pos) & (align - 1)
	}

	// Candidates whose bytes have come: the first verified one wins, and
	// it precedes any offset not classified yet.
	best := int64(-1)
	for len(s.due) > 0 {
		cd, seq := s.top(off)
		if cd == nil || cd.at > end {
			break
		}
		s.pop()
		i := int(cd.off - off)
		next := i + padded(be.Uint32(b[i:]))
		v := good
		if next < len(b) {
			d.checks++
			v = plausible(b[next:])
		}
		switch v {
		case good:
			cd.done = true
			if best < 0 || cd.off < best {
				best = cd.off
			}
		case partial:
			cd.at = end + 1
			s.push(seq)
		default:
			cd.done = true
		}
	}
	if best >= 0 {
		s.active = false
		return int(best - off), true
	}

	for ; s.pos < end; s.pos += step {
		i := int(s.pos - off)
		d.checks++
		v := plausible(b[i:])
		if v == bad {
			continue
		}
		if v == partial {
			break // judged again with more bytes
		}
		next := i + padded(be.Uint32(b[i:]))
		switch {
		case next == len(b):
			s.active = false
			return i, true
		case next > len(b):
			s.add(s.pos, s.pos+int64(next-i))
			continue
		}
		d.checks++
		switch plausible(b[next:]) {
		case good:
			s.active = false
			return i, true
		case partial:
			s.add(s.pos, end+1)
		}
	}
	k := min(s.pos, end)
	if len(s.pend) > 0 {
		if f := s.front(off); f >= 0 && f < k {
			k = f
		}
	}
	return int(k - off), false
}
