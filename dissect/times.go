package dissect

import "errors"

// This file holds the stamps of held bytes: the capture time and number
// ([Stamp]) of the unit that brought them, which travel together. A
// record's time and frame are those of the unit (segment, read, datagram)
// that brought its last byte, whatever held the bytes before the record
// was made: a resync that waits for confirmation, content detection, the
// hunt for a protocol. A skipped run keeps the stamp of its last byte too
// (dirState.skipT), and a gap the stamp reassembly gives it. Bytes framed
// by the unit that brought them need nothing: the record takes that
// unit's stamp. A byte-stream direction that keeps bytes of a unit past
// the unit's call remembers the unit's stamp, per range of stream offsets
// (dirState.times), until those bytes are in records. (For an unfinished
// message whose length the parser said, the parse goes straight to the
// unit that completes it.) A message framed from held bytes is parsed
// with the time of the unit that completed it, so what a parser computes
// from Ctx.Time (round-trip times, request latencies) is right too; a
// parser that frames a message only once bytes after it confirm it (VRPN at
// the start of a direction without its cookie) parses it at the time of
// the confirming unit, but the record is still stamped with its own.
//
// Bounded: at most maxByteTimes ranges per direction, counted in the run's
// held-bytes budget (heldNow); past it, neighbouring ranges merge and keep
// the later time, so a record among more units than that may be stamped a
// few units late.

// maxByteTimes bounds the time ranges one direction keeps.
const maxByteTimes = 4096

// byteTime says that the held bytes before stream offset end (and after
// the previous range's end) came in unit t.
type byteTime struct {
	end int64
	t   Stamp
}

// byteTimeSize is what one range costs, for the budget.
const byteTimeSize = 32

// noteTime remembers, after a unit's bytes were given, that the held bytes
// up to d.end came in unit t; the ranges of bytes no longer held are dropped.
func (d *dirState) noteTime(t Stamp) {
	d.dropTimes(d.next)
	if d.end <= d.next {
		return
	}
	if n := len(d.times); n > d.th && d.times[n-1].t.Frame == t.Frame && d.times[n-1].t.Time.Equal(t.Time) {
		d.times[n-1].end = d.end
		return
	}
	if len(d.times)-d.th >= maxByteTimes {
		d.mergeTimes()
	}
	d.times = append(d.times, byteTime{d.end, t})
}

// dropTimes drops the ranges that end at or before off (every byte before
// off is in a record or a pending skipped run, whose time is kept apart).
func (d *dirState) dropTimes(off int64) {
	for d.th < len(d.times) && d.times[d.th].end <= off {
		d.th++
	}
	switch {
	case d.th == len(d.times):
		d.times, d.th = d.times[:0], 0
		if cap(d.times) > 64 {
			d.times = nil
		}
	case d.th > 64 && 2*d.th > len(d.times):
		d.times = d.times[:copy(d.times, d.times[d.th:])]
		d.th = 0
	}
}

// mergeTimes halves the ranges: each pair becomes one, with the later time.
func (d *dirState) mergeTimes() {
	live := d.times[d.th:]
	n := 0
	for i := 0; i < len(live); i += 2 {
		j := min(i+1, len(live)-1)
		live[n] = live[j]
		n++
	}
	d.times = d.times[:copy(d.times, live[:n])]
	d.th = 0
}

// timeAt returns the stamp of the unit that brought the byte at stream
// offset off, when the direction still knows it, else t (the byte
// came with the unit being processed).
func (d *dirState) timeAt(off int64, t Stamp) Stamp {
	for i := d.th; i < len(d.times); i++ {
		if off < d.times[i].end {
			return d.times[i].t
		}
	}
	return t
}

// parseTimed parses the message at d.next when rest starts with bytes held
// from earlier units: the parser is offered the bytes up to the end of the
// first unit that can complete it (a known length goes straight there),
// with that unit's time in Ctx.Time, and then to the end of each later
// unit, until it frames a message or fails; all of rest is offered last,
// with the time of the unit that brought its last byte. Offering fewer
// bytes frames the same message: a parser frames a message from its own
// bytes (Final and Last are off while a part is offered, so nothing is
// read "to the end"). A part found too short is not offered again
// (dirState.short), so the parses stay linear in the units held.
func (s *Stream) parseTimed(d *dirState, rest []byte, t Stamp) (int, error) {
	c := &s.ctx
	final, last := c.Final, c.Last
	c.Final, c.Last = false, false
	need := int64(1)
	if d.shortAt == d.next {
		need = max(need, d.shortEnd-d.next)
	}
	whole := false
	for i := d.th; i < len(d.times) && !whole; i++ {
		lim := d.times[i].end - d.next
		if lim < need {
			continue
		}
		if lim >= int64(len(rest)) {
			break
		}
		c.at(d.times[i].t)
		s.rec.Reset()
		n, err := s.parser.Parse(c, rest[:lim])
		if err == nil || !errors.Is(err, ErrNeedMore) {
			c.Final, c.Last = final, last
			return n, err
		}
		need = max(lim+1, int64(n))
		d.shortAt, d.shortEnd = d.next, d.next+need
	}
	c.Final, c.Last = final, last
	c.at(d.timeAt(d.next+int64(len(rest))-1, t))
	s.rec.Reset()
	return s.parser.Parse(c, rest)
}
