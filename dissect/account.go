package dissect

import (
	"fmt"
	"time"
)

// This file holds byte accounting: every byte a Stream is given ends in
// exactly one record. Bytes that are not (yet) in a message go to the
// direction's pending skipped run, which becomes one record when a message
// follows it, at a gap, at the end of the direction, or when its reason
// changes hands (a protocol found by the hunt); a gap is a record of its
// own; a message is sent to the sink or, in summary-only runs, counted.

// skip adds b, the bytes at d.next, to the pending skipped run. reason is
// used when it starts the run ("" keeps an earlier reason, or says
// "resync").
func (s *Stream) skip(d *dirState, b []byte, reason string) {
	n := int64(len(b))
	if s.raw {
		d.raw = append(d.raw, b...)
	}
	if d.skipLen == 0 {
		d.skipOff = d.next
		d.skipReason = reason
	} else if d.skipReason == "" {
		d.skipReason = reason
	}
	d.skipLen += n
	if n > 0 {
		d.skipT = d.timeAt(d.next+n-1, d.lastT)
	}
	d.next += n
}

// flushSkip sends the pending skipped run of dir, if any, as one record.
func (s *Stream) flushSkip(dir Dir, t Stamp) {
	d := &s.dirs[dir]
	if d.skipLen == 0 {
		return
	}
	reason := d.skipReason
	if reason == "" {
		reason = s.pname + ": bytes passed over while resynchronising"
	}
	off, n := d.skipOff, d.skipLen
	d.skipLen = 0
	d.skipReason = ""
	s.emitEvent(dir, d.skipT, TypeSkipped, off, n, reason)
}

// flushHeld turns everything held for direction dir into records: the
// hunt's window, the incomplete message buffer, an oversize message cut
// short, the skipped run.
func (s *Stream) flushHeld(dir Dir, t Stamp, why string) {
	d := &s.dirs[dir]
	s.ctx.End = why == ReasonIncomplete // the direction's end, not a gap (Ctx.End)
	defer func() { s.ctx.End = false }()
	if s.hunt != nil {
		s.huntFlush(dir)
	}
	if s.parser != nil && d.discard == 0 && len(d.buf) > 0 && s.err == nil {
		// A last look (Ctx.Last): a search that waited on a candidate
		// decides without it, and the messages after it are decoded.
		n := s.run(dir, t, d.buf, false, true)
		s.ctx.Last = false
		d.buf = d.buf[:copy(d.buf, d.buf[n:])]
	}
	if d.discard > 0 {
		s.emitEvent(dir, d.discardT, TypeSkipped, d.discardOff, d.next-d.discardOff, d.discardReason+" (cut short)")
		d.discard = 0
	}
	if len(d.buf) > 0 {
		if d.needSync {
			s.skip(d, d.buf, "")
		} else {
			s.skip(d, d.buf, fmt.Sprintf("%s: %s (%d bytes at offset %d)", s.pname, why, len(d.buf), d.next))
		}
		d.buf = d.buf[:0]
	}
	s.flushSkip(dir, t)
}

// gap reports n bytes of dir never captured, after flushing what is held.
func (s *Stream) gap(dir Dir, t Stamp, n int64) {
	d := &s.dirs[dir]
	if d.ended {
		return
	}
	s.flushHeld(dir, t, ReasonBeforeGap)
	s.emitEvent(dir, t, TypeGap, d.next, n, "")
	d.next += n
	d.end = d.next
	d.dropTimes(d.next)
	if s.parser != nil {
		d.needSync = true
	}
}

// end ends dir: a last look for a protocol when there is none yet, then
// what is held becomes records; the parser's End runs once both
// directions have ended.
func (s *Stream) end(dir Dir, t Stamp) {
	d := &s.dirs[dir]
	if d.ended {
		return
	}
	if s.hunt != nil {
		s.ctx.End = true // the direction's end (Ctx.End), for the hunt's last look
		s.huntScan(dir, t, true)
		s.ctx.End = false
	}
	s.flushHeld(dir, t, ReasonIncomplete)
	for _, w := range d.warn { // no record followed them
		s.notes = append(s.notes, fmt.Sprintf("%s: %s", s.Info.Name[dir], w))
	}
	d.warn = nil
	d.ended = true
	d.buf, d.raw, d.times = nil, nil, nil // never used again: release them (and their share of a budget)
	if e, ok := s.parser.(Ender); ok && s.dirs[dir^1].ended {
		s.ctx.Dir = dir
		s.ctx.at(t)
		e.End(&s.ctx)
	}
}

// fill sets the keys every record has.
func (s *Stream) fill(r *Record, dir Dir, t Stamp, off, n int64) {
	r.Time, r.Frame = t.Time, t.Frame
	r.Proto = s.pname
	r.Transport = s.Info.Transport
	r.Stream = s.Info.ID
	r.TransportStream = s.Info.Index
	r.Src = s.Info.Name[dir]
	r.Dst = s.Info.Name[dir^1]
	r.Dir = dir
	r.Offset = off
	r.Length = n
}

// emitMessage sends the message the parser put in s.rec, b its bytes at
// offset off, or counts it.
func (s *Stream) emitMessage(dir Dir, t Stamp, off int64, b []byte) {
	if !s.countOnly || !s.countMessage(dir) {
		s.sendMessage(dir, t, off, b)
	}
}

// countMessage counts the message in s.rec, of a stream that only counts,
// unless it carries a warning (which the summary shows); it reports
// whether it did: then the message needs nothing else.
func (s *Stream) countMessage(dir Dir) bool {
	s.rec.nameUnknown()
	if len(s.rec.Warnings) > 0 || len(s.dirs[dir&1].warn) > 0 {
		return false
	}
	if s.counts == nil {
		s.counts = &TypeCounts{}
	}
	s.counts.Add(s.pname, s.rec.Type)
	return true
}

// nameUnknown names the message of a parser that gave no type "unknown".
func (r *Record) nameUnknown() {
	if r.Type == "" {
		r.Type = "unknown"
	}
}

// sendMessage sends the message in s.rec to the sink, b its bytes at
// offset off.
func (s *Stream) sendMessage(dir Dir, t Stamp, off int64, b []byte) {
	s.rec.nameUnknown()
	s.fill(s.rec, dir, t, off, int64(len(b)))
	s.takeWarnings(s.rec, dir)
	if s.raw {
		s.rec.Raw = b
	}
	if err := s.sink.Record(s.rec); err != nil {
		s.err = err
	}
	s.rec.Raw = nil
}

// emitEvent sends a gap or skipped record. With Raw, a skipped record
// carries the bytes held for it, which are then dropped.
func (s *Stream) emitEvent(dir Dir, t Stamp, typ string, off, n int64, reason string) {
	if s.ev == nil {
		s.ev = &Record{}
	}
	r := s.ev
	r.Reset()
	s.fill(r, dir, t, off, n)
	r.Type = typ
	if typ == TypeSkipped {
		r.Add("reason", Str(reason))
	}
	s.takeWarnings(r, dir)
	d := &s.dirs[dir]
	if s.raw && typ == TypeSkipped {
		r.Raw = d.raw
	}
	if err := s.sink.Record(r); err != nil {
		s.err = err
	}
	if s.raw && typ == TypeSkipped {
		r.Raw = nil
		d.raw = d.raw[:0]
		if cap(d.raw) > 256<<10 {
			d.raw = nil // do not keep a large buffer for a quiet stream
		}
	}
}

// cutRaw bounds the bytes held for Raw (StreamOptions.Raw): a skipped run
// or an oversize message passed over that holds Limits.MaxMessage bytes or
// more is sent now, as a skipped record of what was seen of it so far; the
// rest of it follows as further records.
func (s *Stream) cutRaw(t Stamp) {
	for dir := Dir(0); dir < 2 && s.err == nil; dir++ {
		d := &s.dirs[dir]
		if len(d.raw) < s.lim.MaxMessage {
			continue
		}
		if d.discard > 0 {
			s.emitEvent(dir, d.discardT, TypeSkipped, d.discardOff, d.next-d.discardOff, d.discardReason)
			d.discardOff = d.next
			continue
		}
		s.flushSkip(dir, t)
	}
}

// Conflict reports that a retransmission of direction dir carried n bytes
// at offset off that differ from the first copy, which was kept (and
// decoded). The warning goes on the next record of that direction, or to
// the stream's notes when none follows.
func (s *Stream) Conflict(dir Dir, t time.Time, off, n int64) {
	d := &s.dirs[dir]
	if d.ended || n <= 0 {
		return
	}
	msg := fmt.Sprintf("retransmitted bytes at offset %d (%d bytes) differ from the first copy, which was kept", off, n)
	if len(d.warn) == maxPendingWarnings {
		d.warn[len(d.warn)-1] = "more retransmissions differ from the first copy, which was kept"
		return
	}
	d.warn = append(d.warn, msg)
}

// takeWarnings moves the pending warnings of dir onto r.
func (s *Stream) takeWarnings(r *Record, dir Dir) {
	d := &s.dirs[dir]
	if len(d.warn) == 0 {
		return
	}
	for _, w := range d.warn {
		r.Warn(w)
	}
	d.warn = d.warn[:0]
}
