package dissect

import (
	"errors"
)

// This file holds the hunt: what a byte stream (TCP, serial) does when
// detection found no protocol. Its bytes are skipped with reason
// [ReasonUnknown], but each direction keeps its latest bytes, a window of
// at most Limits.MaxDetect bytes plus the bytes just given, or up to
// Limits.MaxSync from the first place a candidate waits on (its messages
// may be longer than MaxDetect), in which the parsers of the protocols
// that detect by content look for a sync point.
//
// A candidate's sync point is chosen when the bytes from it parse, with a
// fresh parser, as huntMessages whole messages without error (or, at the
// end of the direction, fewer that end where it ends). The earliest such
// point of all candidates wins (list order breaks ties); a point found
// while another candidate still has undecided bytes before it waits for
// that candidate, at most until it would leave the window. What left the
// windows stays skipped (proto ""); the windows go to the chosen parser:
// the bytes before the point get its last look (a message that parses
// there is decoded, what it passes over is its skipped record), the
// stream is decoded from the point, and the other direction's window is
// handed to the parser to resynchronise in.
//
// Work stays bounded per byte: each candidate resumes its Sync where it
// stopped, never rescanning what it ruled out, and a candidate that waits
// for more bytes is looked at again only once the bytes it waits on have
// doubled (or reached the size its parser asked for), so the total cost
// is a constant times bytes × candidates.

// huntMessages is how many whole messages must parse from a sync point.
const huntMessages = 2

// hunt is the search state of a stream with no protocol yet.
type hunt struct {
	cands []*entry // the protocols that detect by content, in list order
	sync  []Parser // per candidate, for Sync only: never given a message
	dirs  [2]huntDir
	ctx   Ctx    // for Sync and trial parses; notes are dropped
	rec   Record // filled by trial parses, then thrown away
}

// huntDir is the search state of one direction. The window is
// dirState.buf[head:]; its first byte is at stream offset dirState.next.
type huntDir struct {
	head int
	at   []huntPos // per candidate
}

// huntPos is where one candidate stands in one direction.
type huntPos struct {
	pos   int64 // Sync resumes here: no sync point of this candidate lies in the window before it
	found int64 // a verified sync point, or -1
	retry int64 // look again once the window ends at or past this offset
}

type verdict uint8

const (
	reject verdict = iota
	undecided
	accept
)

// startHunt begins the search, if any protocol over the stream's transport
// detects by content.
func (s *Stream) startHunt() {
	cands := s.reg.huntable(s.Info.Transport)
	if len(cands) == 0 {
		return
	}
	h := &hunt{cands: cands, sync: make([]Parser, len(cands))}
	for i, e := range cands {
		h.sync[i] = e.p.NewParser(&s.Info)
	}
	for d := range h.dirs {
		h.dirs[d].at = make([]huntPos, len(cands))
		for i := range h.dirs[d].at {
			h.dirs[d].at[i] = huntPos{pos: s.dirs[d].next, found: -1}
		}
	}
	h.ctx = Ctx{Stream: &s.Info, Decode: s.decode, Rec: &h.rec}
	s.hunt = h
}

// huntData adds data to the window of dir and searches it.
func (s *Stream) huntData(dir Dir, t Stamp, data []byte) {
	d := &s.dirs[dir]
	d.buf = append(d.buf, data...)
	s.huntScan(dir, t, false)
}

// huntScan advances every candidate over the window of dir and chooses a
// protocol when one is verified; else it trims the window to the last
// MaxDetect bytes. final is true at the end of the direction: no more
// bytes will come, so nothing waits.
func (s *Stream) huntScan(dir Dir, t Stamp, final bool) {
	h := s.hunt
	d := &s.dirs[dir]
	hd := &h.dirs[dir]
	win := d.buf[hd.head:]
	base := d.next
	end := base + int64(len(win))
	best, bestAt := -1, int64(0)
	for i := range h.cands {
		a := &hd.at[i]
		if a.pos < base {
			*a = huntPos{pos: base, found: -1} // its place left the window
		}
		if a.found < 0 && (final || end >= a.retry) {
			s.huntAdvance(i, dir, t, win, base, final)
		}
		if a.found >= 0 && (best < 0 || a.found < bestAt) {
			best, bestAt = i, a.found
		}
	}
	if best >= 0 && (final || end-bestAt >= int64(s.lim.MaxDetect) || !hd.pendingBefore(bestAt)) {
		s.huntChoose(dir, t, best, bestAt)
		return
	}
	// The window keeps its last MaxDetect bytes, and, up to MaxSync, the
	// bytes from the first place a candidate waits on (a message longer
	// than MaxDetect must be whole to be judged).
	keep := max(int64(s.lim.MaxDetect), min(end-hd.waitsFrom(end), int64(s.lim.MaxSync)))
	if drop := end - keep - base; drop > 0 {
		s.huntDrop(dir, drop)
	}
}

// waitsFrom returns the first offset a candidate waits on (no sync point
// found yet, more bytes needed from there), or end.
func (hd *huntDir) waitsFrom(end int64) int64 {
	w := end
	for _, a := range hd.at {
		if a.found < 0 && a.pos < w {
			w = a.pos
		}
	}
	return w
}

// pendingBefore reports whether a candidate may still find a sync point
// before offset at.
func (hd *huntDir) pendingBefore(at int64) bool {
	for _, a := range hd.at {
		if a.found < 0 && a.pos < at {
			return true
		}
	}
	return false
}

// huntAdvance runs candidate i's Sync from where it stopped, trying each
// sync point it offers, until one is verified, one needs more bytes, or
// the window is exhausted.
func (s *Stream) huntAdvance(i int, dir Dir, t Stamp, win []byte, base int64, final bool) {
	h := s.hunt
	a := &h.dirs[dir].at[i]
	c := &h.ctx
	// At the end of the direction Sync judges what it would have waited
	// on (Ctx.Last).
	c.Dir, c.Final, c.Last, c.End = dir, false, final, final && s.ctx.End
	c.at(t)
	defer func() { c.Last, c.End = false, false }()
	end := base + int64(len(win))
	for a.pos < end {
		b := win[a.pos-base:]
		c.Offset = a.pos
		h.rec.Reset()
		k, ok := h.sync[i].Sync(c, b)
		k = min(max(k, 0), len(b))
		if !ok && (!final || k == len(b)) {
			// Nothing before pos+k; the rest needs more bytes, or at
			// the end of the direction there is none.
			a.pos += int64(k)
			if final {
				a.pos = end
			}
			break
		}
		// A sync point, or at the end of the direction the place a Sync
		// that does not judge at the end would have waited on: try it.
		at := a.pos + int64(k)
		v, need := s.trial(i, dir, win[at-base:], at, final)
		switch v {
		case accept:
			a.pos, a.found = at, at
			return
		case undecided:
			a.pos = at
			a.retry = end + max(1, end-at)
			if need > end {
				a.retry = need
			}
			return
		}
		a.pos = at + 1
	}
	a.retry = end + max(1, end-a.pos)
}

// trial parses b, the window from stream offset at, with a fresh parser of
// candidate i: accept when huntMessages whole messages parse (at the end
// of the direction, fewer that end exactly where it ends: a message cut
// short by the end proves nothing); undecided when more bytes are needed,
// with the window end at which to look again (0: unknown); reject on an
// error. Only the trial parser sees these bytes; a protocol's shared state
// (see [Protocol]) may learn from them.
func (s *Stream) trial(i int, dir Dir, b []byte, at int64, final bool) (verdict, int64) {
	h := s.hunt
	p := h.cands[i].p.NewParser(&s.Info)
	c := &h.ctx
	c.Dir = dir
	off, n := 0, 0
	for n < huntMessages {
		m, err := 0, ErrNeedMore
		if off < len(b) {
			h.rec.Reset()
			c.Offset = at + int64(off)
			m, err = p.Parse(c, b[off:])
		}
		switch {
		case err == nil && m > 0 && m <= len(b)-off:
			off += m
			n++
		case errors.Is(err, ErrNeedMore) && m <= s.lim.MaxMessage:
			switch {
			case final && n > 0 && off == len(b):
				return accept, 0
			case final:
				return reject, 0
			case m > 0:
				return undecided, at + int64(off+m)
			}
			return undecided, 0
		default:
			return reject, 0
		}
	}
	return accept, 0
}

// huntDrop moves the first n bytes of dir's window to the skipped run.
func (s *Stream) huntDrop(dir Dir, n int64) {
	d := &s.dirs[dir]
	hd := &s.hunt.dirs[dir]
	s.skip(d, d.buf[hd.head:hd.head+int(n)], ReasonUnknown)
	hd.head += int(n)
	if hd.head >= s.lim.MaxDetect || hd.head == len(d.buf) {
		d.buf = d.buf[:copy(d.buf, d.buf[hd.head:])]
		hd.head = 0
		if cap(d.buf) > 4*s.lim.MaxDetect {
			d.buf = append(make([]byte, 0, 2*s.lim.MaxDetect), d.buf...)
		}
	}
}

// huntFlush turns dir's whole window into skipped bytes (at a gap or the
// end of the direction).
func (s *Stream) huntFlush(dir Dir) {
	d := &s.dirs[dir]
	hd := &s.hunt.dirs[dir]
	if n := len(d.buf) - hd.head; n > 0 {
		s.skip(d, d.buf[hd.head:], ReasonUnknown)
	}
	d.buf = d.buf[:0]
	hd.head = 0
}

// huntChoose decodes the stream as candidate i, found at offset at of
// dir. The windows of both directions go to the protocol's parser to
// resynchronise in: in dir, the bytes before at get a last look (as at
// the end of the data: a message that parses before at is decoded), and
// decoding goes on from at; the other direction's window is searched as
// after a gap. The bytes the parser passes over are the protocol's
// skipped records; what left the windows before is skipped with reason
// [ReasonUnknown].
func (s *Stream) huntChoose(dir Dir, t Stamp, i int, at int64) {
	h := s.hunt
	s.hunt = nil
	o := dir ^ 1
	d, od := &s.dirs[dir], &s.dirs[o]
	// The bytes that left the windows, in both directions, are records
	// of a stream whose protocol was unknown: flush them before choosing.
	s.flushSkip(dir, t)
	s.flushSkip(o, t)
	d.buf = d.buf[:copy(d.buf, d.buf[h.dirs[dir].head:])]
	od.buf = od.buf[:copy(od.buf, od.buf[h.dirs[o].head:])]
	s.choose(h.cands[i])
	// A window starts at no known boundary: the protocol was found
	// after content detection failed on the directions' first bytes, so
	// even a window that starts a direction is searched (a true boundary
	// there is confirmed by the resync as any other). Only the other
	// direction's bytes not seen yet start at its first message, unless
	// it was joined mid-way.
	d.needSync = true
	od.needSync = od.next > 0 || len(od.buf) > 0 || od.joined
	if n := int(at - d.next); n > 0 {
		used := s.run(dir, t, d.buf[:n], false, true)
		s.ctx.Last = false
		if used < n {
			s.skip(d, d.buf[used:n], "")
		}
		d.buf = d.buf[:copy(d.buf, d.buf[n:])]
	}
	d.needSync = false
	s.feed(dir, t, nil)
	if len(od.buf) > 0 && s.err == nil {
		s.feed(o, t, nil)
	}
}
