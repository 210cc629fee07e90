package dissect

import (
	"fmt"
)

// This file holds the run-wide budget of the bytes Streams hold: the
// unfinished messages waiting for their end, the bytes held while a parser
// looks for a place to resynchronise or a protocol's sync point, the
// prefix held for content detection, and the bytes kept for Raw. Each of
// these is bounded per direction by [Limits], but a run may have thousands
// of streams (reassembly's MaxStreams), so the sum needs a bound of its
// own: 400 VRPN connections each holding all but 8 bytes of a message of
// 1 MiB − 64 would otherwise hold 400 MiB.

// DefaultHeldBudget is the default of [NewHeldBudget]: 32 MiB, so that
// 32 messages of the largest size (Limits.MaxMessage, 1 MiB) can wait for
// their end at once. A stream is charged its buffers' capacity, what they
// cost; but a budget costs more RSS than its size: the buffers' growth
// leaves garbage and the Go collector lets the heap reach twice what is
// live: about twice the budget plus the rest of the run. Measured on the
// worst case (1,500 VRPN connections each holding a message of 1 MiB − 64
// in both directions, docs/performance-12-23.md): peak RSS 147–149 MB at 32 MiB,
// 204 MB at 64 MiB, 331 MB at 128 MiB, against the 256 MB a run may take
// whatever the input.
const DefaultHeldBudget = 32 << 20

// HeldBudget bounds the bytes held by all the Streams of a run (given to
// them in [StreamOptions].Budget). After each call to a Stream's entry
// point ([Stream.Data], [Stream.Datagram], [Stream.Gap], [Stream.End])
// the stream's share is brought up to date; when the total is over the
// budget, streams give way until the total fits: first those that keep
// only empty buffers (which are released), then the one whose unfinished
// bytes are the oldest, and so on. A stream that gives way: its detection
// is decided with what it holds, an unfinished message becomes a skipped
// record whose reason names the budget and the rest of that message is
// passed over as it arrives (as a message over Limits.MaxMessage is),
// bytes held for a resync or a hunt are skipped, and its buffers are
// released (the largest, up to 2 MiB, is
// kept outside the budget for the next stream that needs one). Every byte
// still ends in exactly one record; the messages and bytes given up are
// counted ([HeldBudget.Dropped]).
//
// The work is constant per call: the streams that hold bytes are kept in a
// list, those with only empty buffers first, then the others in the order
// they started to hold unfinished bytes, so the one to give way is its
// head. A HeldBudget is used from one goroutine, with its Streams.
type HeldBudget struct {
	max  int64
	held int64
	peak int64

	dropped      int64 // unfinished messages given up
	droppedBytes int64 // their held bytes, and other held bytes given up

	head, tail *Stream // the streams that hold bytes, oldest first

	// spare is the largest buffer a stream gave up (at most one, outside
	// the budget): the next stream whose message grows takes it instead
	// of allocating, so a run that keeps giving way (one unfinished
	// message after another) does not churn the collector.
	spare []byte
}

// NewHeldBudget returns a budget of max bytes (0 or less:
// [DefaultHeldBudget]).
func NewHeldBudget(max int64) *HeldBudget {
	if max <= 0 {
		max = DefaultHeldBudget
	}
	return &HeldBudget{max: max}
}

// Max returns the budget in bytes.
func (b *HeldBudget) Max() int64 { return b.max }

// Held returns the bytes held now by the budget's streams.
func (b *HeldBudget) Held() int64 { return b.held }

// Peak returns the most bytes held after any call to a stream's entry
// point; it never exceeds Max. (Within one call a stream may hold one
// segment's worth more before it is brought to account.)
func (b *HeldBudget) Peak() int64 { return b.peak }

// Dropped returns how many unfinished messages were given up to stay
// within the budget, and how many held bytes were given up in all
// (unfinished messages, resync and hunt windows).
func (b *HeldBudget) Dropped() (messages, bytes int64) { return b.dropped, b.droppedBytes }

// budgetLink is a Stream's place in its budget.
type budgetLink struct {
	b            *HeldBudget
	charged      int64 // what the stream is counted for in b.held
	busy         bool  // holds bytes, not only empty buffers (see recharge)
	listed       bool
	older, newer *Stream
}

// heldNow is what the stream holds: buffer capacities (what they cost,
// not what they use) and the detection prefix.
func (s *Stream) heldNow() int64 {
	var n int64
	if s.detecting {
		n = int64(s.heldBytes[0] + s.heldBytes[1])
	}
	for i := range s.dirs {
		d := &s.dirs[i]
		n += int64(cap(d.buf)+cap(d.raw)) + int64(cap(d.times))*byteTimeSize
	}
	return n
}

// account brings the stream's share of its budget up to date and, when the
// budget is exceeded, makes the holders give way, head first (t is the
// time of the records that follow).
func (s *Stream) account(t Stamp) {
	b := s.bl.b
	if b == nil {
		return
	}
	s.recharge()
	for b.held > b.max && b.head != nil {
		h := b.head
		h.giveWay(t)
		h.recharge()
		if h.bl.listed && b.head == h {
			b.remove(h) // cannot happen (giveWay releases everything); never loop
		}
	}
	b.peak = max(b.peak, b.held)
}

// recharge sets the stream's share to what it holds now and its place in
// the list: a stream that holds bytes of something unfinished goes to the
// tail when it starts to (so the head holds the oldest unfinished
// message); one that keeps only empty buffers goes to the head, since
// releasing them loses nothing.
func (s *Stream) recharge() {
	l := &s.bl
	b := l.b
	n := s.heldNow()
	b.held += n - l.charged
	l.charged = n
	busy := s.busyNow()
	switch {
	case n == 0:
		if l.listed {
			b.remove(s)
		}
	case !l.listed:
		b.insert(s, busy)
	case busy != l.busy:
		b.remove(s)
		b.insert(s, busy)
	}
}

// busyNow tells whether the stream holds bytes (not only buffer capacity).
func (s *Stream) busyNow() bool {
	if s.detecting && s.heldBytes[0]+s.heldBytes[1] > 0 {
		return true
	}
	for i := range s.dirs {
		if d := &s.dirs[i]; len(d.buf) > 0 || len(d.raw) > 0 {
			return true
		}
	}
	return false
}

// insert puts s at the tail (busy) or at the head of the list.
func (b *HeldBudget) insert(s *Stream, busy bool) {
	l := &s.bl
	l.listed, l.busy = true, busy
	if busy {
		l.older, l.newer = b.tail, nil
		if b.tail != nil {
			b.tail.bl.newer = s
		} else {
			b.head = s
		}
		b.tail = s
		return
	}
	l.older, l.newer = nil, b.head
	if b.head != nil {
		b.head.bl.older = s
	} else {
		b.tail = s
	}
	b.head = s
}

// remove takes s out of the list (its charge stays as it is).
func (b *HeldBudget) remove(s *Stream) {
	l := &s.bl
	if l.older != nil {
		l.older.bl.newer = l.newer
	} else {
		b.head = l.newer
	}
	if l.newer != nil {
		l.newer.bl.older = l.older
	} else {
		b.tail = l.older
	}
	l.older, l.newer, l.listed = nil, nil, false
}

// maxSpare bounds the spare buffer: one message of the default
// Limits.MaxMessage, with room for growth.
const maxSpare = 2 << 20

// keep offers buf, given up, as the spare.
func (b *HeldBudget) keep(buf []byte) {
	if c := cap(buf); c > cap(b.spare) && c <= maxSpare {
		b.spare = buf[:0]
	}
}

// take returns the spare buffer when its capacity lies in [need, most],
// else nil.
func (b *HeldBudget) take(need, most int) []byte {
	if b == nil || cap(b.spare) < need || cap(b.spare) > most {
		return nil
	}
	buf := b.spare
	b.spare = nil
	return buf
}

// budgetReason is the reason of a skipped record for bytes given up to the
// budget.
func (s *Stream) budgetReason(what string) string {
	return fmt.Sprintf("%s: %s dropped: held-message budget of %d bytes reached", s.pname, what, s.bl.b.max)
}

// giveWay turns everything the stream holds into records and releases its
// buffers: the budget is full and this stream has held bytes the longest.
func (s *Stream) giveWay(t Stamp) {
	if s.err != nil {
		s.held = nil
		s.heldBytes = [2]int{}
		for i := range s.dirs {
			s.dirs[i].buf, s.dirs[i].raw = nil, nil
		}
		return
	}
	if s.detecting {
		s.detect(true) // decide with what is held, and replay it
	}
	b := s.bl.b
	for dir := Dir(0); dir < 2 && s.err == nil; dir++ {
		d := &s.dirs[dir]
		switch {
		case len(d.buf) == 0:
		case s.hunt != nil:
			b.droppedBytes += int64(len(d.buf) - s.hunt.dirs[dir].head)
			s.huntFlush(dir)
			s.flushSkip(dir, t)
		case d.needSync || s.parser == nil:
			b.droppedBytes += int64(len(d.buf))
			if d.skipLen == 0 {
				s.skip(d, d.buf, s.budgetReason(fmt.Sprintf("%d bytes held while resynchronising at offset %d", len(d.buf), d.next)))
			} else {
				s.skip(d, d.buf, "")
			}
			s.flushSkip(dir, t)
		default:
			s.dropUnfinished(dir, t)
		}
		b.keep(d.buf)
		d.buf = nil
		d.times, d.th = nil, 0
		if s.raw && len(d.raw) > 0 && s.err == nil {
			// The bytes kept for Raw: sent now, as cutRaw does.
			if d.discard > 0 {
				s.emitEvent(dir, d.discardT, TypeSkipped, d.discardOff, d.next-d.discardOff, d.discardReason)
				d.discardOff = d.next
			} else {
				s.flushSkip(dir, t)
			}
		}
		d.raw = nil
	}
}

// dropUnfinished gives up the unfinished message held in dir's buffer: the
// held bytes and, when the parser said how long the message is, the rest
// of it as it arrives, make one skipped record (cut at the held bytes with
// Raw, to send them now).
func (s *Stream) dropUnfinished(dir Dir, t Stamp) {
	d := &s.dirs[dir]
	b := s.bl.b
	n := int64(len(d.buf))
	b.dropped++
	b.droppedBytes += n
	s.flushSkip(dir, t)
	total := max(d.want, n)
	what := fmt.Sprintf("unfinished message of %d bytes at offset %d (%d held)", total, d.next, n)
	if d.want <= n {
		what = fmt.Sprintf("unfinished message at offset %d (%d bytes held, length not yet known)", d.next, n)
	}
	reason := s.budgetReason(what)
	if d.want <= n {
		// The message's end is unknown: skip what is held and look for
		// the next message.
		s.skip(d, d.buf, reason)
		s.flushSkip(dir, t)
		d.needSync = true
		return
	}
	if s.raw {
		d.raw = append(d.raw[:0], d.buf...)
	}
	d.discardOff = d.next
	d.discard = d.want - n
	d.discardReason = reason + "; passed over undecoded"
	d.discardT = d.timeAt(d.next+n-1, d.lastT)
	d.next += n
	d.want = 0
}
