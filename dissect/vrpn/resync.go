package vrpn

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// This file holds the search for a message boundary on a TCP direction
// where none is known: a capture that joined the connection late, after a
// gap, after malformed bytes.
//
// A candidate is an offset whose 24 bytes read as a plausible header
// (plausible). It is confirmed only by what follows it, its run: chainLen
// headers in a row, each at the padded end of the message before it, each
// plausible with ids that mainline can have sent on this direction
// (joinHeader), sequence numbers that count up by one (README fact 4;
// or stay the same, on a direction seen to repeat them), and
// sent times near each other and near the times this direction already
// sent. A candidate is refuted as soon as one header of
// its run is not, or when its run would span more than joinWindow bytes.
// The decision depends only on the bytes of the run, never on where the
// buffer ends, so the answer does not depend on how the stream is cut into
// segments: Sync returns the first candidate that is confirmed while every
// candidate before it is refuted, and waits (holds the bytes from the
// first undecided candidate) otherwise. The wait is bounded by joinWindow,
// below the Stream's sync limit. At the end of the data (Ctx.Last) a run
// may be shorter: it is confirmed when it reaches the end exactly, or when
// at least two of its headers are whole and the end cuts the rest; a
// candidate that cannot be judged is dropped, and the search goes on past
// it instead of holding the rest of the stream.
//
// The search state lets Sync resume where it stopped. dissect.Stream
// hands Sync the bytes it holds from the first offset Sync could not
// judge, plus the new ones; without this state a search fed a few bytes
// at a time would re-examine the whole held buffer on every call. The
// state is keyed by stream offsets, which name the same byte on every
// call: it is kept while the calls continue one search (same phase, the
// new buffer starts no earlier than the last one did, within what was
// seen, and ends no earlier), and dropped otherwise (after a gap, a new
// search, or when Sync found its point).

const (
	// chainLen is how many headers in a row confirm a candidate.
	chainLen = 3
	// joinWindow bounds the bytes a candidate's run may span (its first
	// chainLen-1 messages and the header after them), so that a candidate
	// is judged within it: half the Stream's default sync limit, which
	// holds the bytes from the first undecided candidate. A run of real
	// messages longer than this is not a sync point; the search finds the
	// next one.
	joinWindow = 32 << 10
	// maxDescID is the largest sender or type id mainline gives
	// (vrpn_CONNECTION_MAX_SENDERS and _MAX_TYPES are 2000; a description
	// past them is refused).
	maxDescID = 1999
	// idSlack is how far past the largest id a direction described an
	// undescribed id may go in a run (descriptions lost in a gap).
	idSlack = 64
	// maxSkew is how far apart, in seconds, the sent times of a run may
	// be, and how far outside the times this direction sent before (plus
	// the capture time elapsed since).
	maxSkew = 24 * 60 * 60
)

// cand is a candidate whose run waits for bytes.
type cand struct {
	off int64  // stream offset of its header
	pos int64  // stream offset of the next header of its run to check
	at  int64  // look again once the buffer ends at or past this offset
	sec uint32 // tv_sec of the first header of its run with a time
	seq uint32 // sequence number of the last header of its run found good
	n   int8   // headers of its run found good
	// timed: sec holds (a header with a time was found)
	timed bool
	ok    bool // confirmed
	done  bool // refuted
}

// scan is the search state of one TCP direction.
type scan struct {
	active bool
	phase  int   // the direction's phase when the search began
	start  int64 // stream offset of the last buffer
	end    int64 // stream offset of the end of the last buffer
	pos    int64 // next offset to classify: each one before it is refuted or in pend
	okAt   int64 // the last confirmed candidate, or -1: the scan stops while it is in the buffer
	// pend holds the undecided and the confirmed candidates in offset
	// order; pend[:head] are refuted. Candidate number seq is
	// pend[seq-base]; the heap holds the numbers of the undecided ones.
	pend []cand
	head int
	base int64
	due  []int64 // heap of candidate numbers, by at
}

// joinRef is what a run is checked against: the ids and times this
// direction already sent.
type joinRef struct {
	maxSender, maxType int32 // largest ids a run may carry
	counted            int   // 1 + len(senders) + len(types) of the table they were computed from; 0: never
	seen               bool  // a message was decoded: seq holds
	timed              bool  // a message with a time was decoded: tmin..tmax hold
	tmin, tmax         uint32
	tcapt              int64  // capture time of the last message decoded, in Unix seconds (0: none)
	seq                uint32 // sequence number of the last message decoded
	flat               bool   // two messages in a row had the same sequence number: the sender does not count
}

// saw records the sent time and sequence number of a decoded message of
// the direction, captured at t.
func (r *joinRef) saw(sec, usec, seq uint32, t time.Time) {
	if r.seen && seq == r.seq {
		r.flat = true
	}
	r.seen, r.seq = true, seq
	if sec == 0 && usec == 0 {
		return // no time (see joinHeader)
	}
	if !r.timed {
		r.tmin, r.tmax, r.timed = sec, sec, true
	} else if sec < r.tmin {
		r.tmin = sec
	} else if sec > r.tmax {
		r.tmax = sec
	}
	r.tcapt = 0
	if !t.IsZero() {
		r.tcapt = t.Unix()
	}
}

// bounds sets the id bounds from the direction's table: the largest
// described ids plus idSlack, or maxDescID when it describes none. It
// walks the table only when its size changed.
func (r *joinRef) bounds(t *table) {
	n := 1
	if t != nil {
		n += len(t.senders) + len(t.types)
	}
	if n == r.counted {
		return
	}
	r.counted = n
	r.maxSender, r.maxType = maxDescID, maxDescID
	if t == nil {
		return
	}
	if len(t.senders) > 0 {
		m := int32(0)
		for id := range t.senders {
			m = max(m, id)
		}
		r.maxSender = min(m+idSlack, maxDescID)
	}
	if len(t.types) > 0 {
		m := int32(0)
		for id := range t.types {
			m = max(m, id)
		}
		r.maxType = min(m+idSlack, maxDescID)
	}
}

// near reports whether sent time sec fits the times the direction sent
// before, at capture time now.
func (r *joinRef) near(sec uint32, now time.Time) bool {
	if !r.timed {
		return true
	}
	slack := int64(maxSkew)
	if !now.IsZero() && r.tcapt != 0 {
		dt := now.Unix() - r.tcapt
		slack += max(dt, -dt)
	}
	s := int64(sec)
	return s >= int64(r.tmin)-slack && s <= int64(r.tmax)+slack
}

// joinHeader checks the whole header h as a member of cd's run.
func (p *parser) joinHeader(c *dissect.Ctx, d *dirState, h []byte, cd *cand) bool {
	d.checks++
	if plausible(h) != good {
		return false
	}
	sender, typ, sec, seq := int32(be.Uint32(h[12:])), int32(be.Uint32(h[16:])), be.Uint32(h[4:]), be.Uint32(h[20:])
	switch {
	case typ >= 0:
		if typ > d.ref.maxType || sender > d.ref.maxSender {
			return false
		}
	case typ == sysSenderDescription || typ == sysTypeDescription:
		if sender > maxDescID { // the id described
			return false
		}
	}
	// Mainline numbers the messages of a TCP channel 0, 1, 2, ...; a
	// sender seen not to count may repeat its number.
	if cd.n > 0 && seq != cd.seq+1 && (seq != cd.seq || !d.ref.flat) {
		return false
	}
	cd.seq = seq
	if sec == 0 && be.Uint32(h[8:]) == 0 {
		// No time: mainline sends some messages so (Button States
		// before the button's first report).
		return true
	}
	if !cd.timed {
		cd.sec, cd.timed = sec, true
		return d.ref.near(sec, c.Time)
	}
	diff := int64(sec) - int64(cd.sec)
	return max(diff, -diff) <= maxSkew || (d.ref.timed && d.ref.near(sec, c.Time))
}

// walk advances cd's run over b (stream offsets off..off+len(b)) as far as
// it can: good when confirmed, bad when refuted, partial when it waits for
// the bytes up to cd.at. With c.Last it never answers partial.
func (p *parser) walk(c *dissect.Ctx, cd *cand, b []byte, off int64) verdict {
	d := &p.dirs[c.Dir]
	end := off + int64(len(b))
	for {
		if cd.pos == end && cd.n > 0 {
			if c.Last {
				return good // the run ends the data
			}
			cd.at = end + headerLen
			return partial
		}
		if cd.pos+headerLen > end {
			switch {
			case c.Last && cd.n >= 2:
				return good // two whole headers, then the cut end of the data
			case c.Last:
				return bad
			case cd.n == 0 && plausible(b[cd.pos-off:]) == bad:
				return bad // a run's later header is judged whole
			}
			cd.at = cd.pos + headerLen
			return partial
		}
		h := b[cd.pos-off : cd.pos-off+headerLen]
		if !p.joinHeader(c, d, h, cd) {
			return bad
		}
		cd.n++
		if cd.n >= chainLen {
			return good
		}
		next := cd.pos + int64(padded(be.Uint32(h)))
		if next+headerLen-cd.off > joinWindow {
			return bad
		}
		cd.pos = next
	}
}

// sameSearch reports whether a call at [off, end) with phase ph continues
// the search s stands in.
func (s *scan) sameSearch(ph int, off, end int64) bool {
	return s.active && s.phase == ph && off >= s.start && off <= s.end && end >= s.end
}

func (s *scan) reset(ph int, off int64) {
	s.active, s.phase, s.start, s.end, s.pos, s.okAt = true, ph, off, off, off, -1
	s.pend, s.head, s.base, s.due = s.pend[:0], 0, 0, s.due[:0]
}

// add makes cd a waiting candidate, to be looked at again once the buffer
// ends at or past cd.at, or a confirmed one.
func (s *scan) add(cd cand) {
	s.pend = append(s.pend, cd)
	if cd.ok {
		s.okAt = max(s.okAt, cd.off)
		return
	}
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
			if cd := &s.pend[seq-s.base]; !cd.done && !cd.ok && cd.off >= off {
				return cd, seq
			}
		}
		s.pop() // done, or cut off from the buffer
	}
	return nil, 0
}

// front returns the first candidate at or after off that is not refuted,
// or nil, and compacts pend.
func (s *scan) front(off int64) *cand {
	for s.head < len(s.pend) && (s.pend[s.head].done || s.pend[s.head].off < off) {
		s.head++
	}
	if s.head > 64 && 2*s.head > len(s.pend) {
		s.compact()
	}
	if s.head < len(s.pend) {
		return &s.pend[s.head]
	}
	return nil
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

// syncStream is Sync on a TCP direction; see [parser.Sync] and the top of
// this file for what it answers. It examines each offset's header once,
// and a waiting candidate's run again only when the bytes it waits for
// have come.
func (p *parser) syncStream(c *dissect.Ctx, b []byte) (int, bool) {
	if c.Offset == 0 {
		// A direction joined at its very start (a capture that missed
		// only the handshake): the cookie is a boundary.
		n := min(len(b), len(magic))
		if n > 0 && string(b[:n]) == magic[:n] {
			return 0, n == len(magic) || c.Last
		}
	}
	d := &p.dirs[c.Dir]
	s := &d.scan
	off, end := c.Offset, c.Offset+int64(len(b))
	if !s.sameSearch(d.phase, off, end) {
		if !d.cookiePhase {
			// The phase came from a message framed after a search,
			// which may have been wrong: search every offset again.
			d.phase = -1
		}
		s.reset(d.phase, off)
		d.ref.bounds(d.names)
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
	if c.Last {
		p.syncLast(c, b)
	} else {
		// Waiting candidates whose bytes have come.
		for len(s.due) > 0 {
			cd, seq := s.top(off)
			if cd == nil || cd.at > end {
				break
			}
			s.pop()
			switch p.walk(c, cd, b, off) {
			case good:
				cd.ok = true
				s.okAt = max(s.okAt, cd.off)
			case bad:
				cd.done = true
			default:
				s.push(seq)
			}
		}
		// Offsets not classified yet, up to a confirmed one.
		for s.okAt < off && s.pos < end {
			i := int(s.pos - off)
			d.checks++
			v := plausible(b[i:])
			if v == partial {
				break // judged again with more bytes
			}
			if v == good {
				cd := cand{off: s.pos, pos: s.pos}
				switch p.walk(c, &cd, b, off) {
				case good:
					cd.ok = true
					s.add(cd)
				case partial:
					s.add(cd)
				}
			}
			s.pos += step
		}
	}
	if s.head < len(s.pend) {
		if f := s.front(off); f != nil {
			if f.ok {
				s.active = false
			}
			return int(f.off - off), f.ok
		}
	}
	return int(min(s.pos, end) - off), false
}

// syncLast decides, at the end of the data, every candidate still waiting
// and the offsets not classified yet, in offset order, up to the first
// confirmed one.
func (p *parser) syncLast(c *dissect.Ctx, b []byte) {
	d := &p.dirs[c.Dir]
	s := &d.scan
	off, end := c.Offset, c.Offset+int64(len(b))
	for i := s.head; i < len(s.pend); i++ {
		cd := &s.pend[i]
		if cd.done || cd.off < off {
			continue
		}
		if cd.ok || p.walk(c, cd, b, off) == good {
			cd.ok = true
			return
		}
		cd.done = true
	}
	step := int64(1)
	if d.phase >= 0 {
		step = align
	}
	for ; s.pos < end; s.pos += step {
		d.checks++
		if plausible(b[s.pos-off:]) == bad {
			continue
		}
		cd := cand{off: s.pos, pos: s.pos}
		if p.walk(c, &cd, b, off) == good {
			cd.ok = true
			s.add(cd)
			s.pos += step
			return
		}
	}
}
