package dissect

import (
	"errors"
	"fmt"
	"time"
)

// This file holds the Stream type, its options and entry points, and the
// framing loop. Detection (the held prefix, the protocol choice, the hunt
// for a sync point on a stream whose protocol is unknown) is in detect.go
// and hunt.go; byte accounting (skipped runs, gaps, end, records) in
// account.go.

// Limits bound the memory one stream may hold. Zero fields take the
// defaults of [DefaultLimits].
type Limits struct {
	// MaxMessage is the largest message buffered for decoding. A message
	// that declares more is passed over without being held and reported as
	// a skipped record.
	MaxMessage int
	// MaxSync is how many bytes a direction may hold while its parser looks
	// for a place to resynchronise; past it the oldest half is skipped.
	MaxSync int
	// MaxDetect is how many bytes of a direction are held while content
	// detection cannot decide, and how many of the latest bytes a
	// direction of unknown protocol keeps while it looks for a protocol's
	// sync point; MaxDetectDatagrams bounds detection for UDP.
	MaxDetect          int
	MaxDetectDatagrams int
	// MaxHeld is not per stream: it is the budget of the bytes all the
	// streams of a run hold together ([HeldBudget]), which the run (the
	// pipeline) makes and gives each stream; 0: [DefaultHeldBudget].
	MaxHeld int64
}

// DefaultLimits returns the limits used when a field of [Limits] is zero:
// 1 MiB messages, 64 KiB of resynchronisation, 2 KiB or 4 datagrams of
// detection.
func DefaultLimits() Limits {
	return Limits{
		MaxMessage:         1 << 20,
		MaxSync:            64 << 10,
		MaxDetect:          2 << 10,
		MaxDetectDatagrams: 4,
	}
}

func (l Limits) withDefaults() Limits {
	def := DefaultLimits()
	if l.MaxMessage <= 0 {
		l.MaxMessage = def.MaxMessage
	}
	if l.MaxSync <= 0 {
		l.MaxSync = def.MaxSync
	}
	if l.MaxDetect <= 0 {
		l.MaxDetect = def.MaxDetect
	}
	if l.MaxDetectDatagrams <= 0 {
		l.MaxDetectDatagrams = def.MaxDetectDatagrams
	}
	return l
}

// Reasons written in skipped records by the framework.
const (
	ReasonUnknown    = "unknown protocol"
	ReasonIncomplete = "incomplete message at end of stream"
	ReasonBeforeGap  = "incomplete message before a gap"
)

// Stream drives one stream (both directions) through a protocol's [Parser],
// and turns every byte it is given into exactly one record: a message, a
// skipped run or a gap. Feed it with [Stream.Data] (TCP, serial),
// [Stream.Datagram] (UDP), [Stream.Gap] and [Stream.End], in capture order.
//
// The protocol is chosen as [Registry] describes. Until then the stream
// holds the first bytes of each direction (bounded by [Limits.MaxDetect]
// and [Limits.MaxDetectDatagrams]) for content detection, and replays them
// once it has decided. When nothing matched, a byte stream (TCP, serial)
// keeps looking: its bytes are skipped records with reason
// [ReasonUnknown], but the latest MaxDetect bytes of each direction are
// held while the content-detected protocols' parsers look for a sync point
// in them; the first place where one finds a point followed by two whole
// messages decides the protocol, and the stream is decoded from there (the
// bytes held before it go to the protocol's resync first). Every record
// carries the stamp (capture time and number) of the unit that brought its
// last byte, however long the stream held it (times.go).
//
// Memory is bounded by [Limits] whatever the input; the work per byte is
// bounded too (a constant times the number of protocols while looking).
// A Stream is used from one goroutine.
type Stream struct {
	Info StreamInfo

	reg    *Registry
	sink   Sink
	lim    Limits
	decode bool

	// detection (detect.go)
	detecting bool
	held      []heldUnit
	heldBytes [2]int
	heldUnits [2]int

	// hunt for a sync point when no protocol was found (hunt.go)
	hunt *hunt

	proto  Protocol
	pname  string
	parser Parser

	countOnly bool
	counts    *TypeCounts // StreamOptions.Counts, or the stream's own, made on first use
	shared    bool        // counts is StreamOptions.Counts
	raw       bool        // StreamOptions.Raw

	dirs [2]dirState
	// rec is filled by the parser; ev holds gap and skipped events, so a
	// pending skip can be flushed while rec holds a message. Both are made
	// on first use: most streams of a capture with many flows never carry
	// a message (a bare SYN, a scan), and these 400 bytes are a third of
	// a stream's cost.
	rec   *Record
	ev    *Record
	ctx   Ctx
	notes []string
	err   error

	bl budgetLink // the run-wide bound on held bytes (budget.go)
}

// dirState is the framing and accounting state of one direction.
type dirState struct {
	next int64  // stream offset of buf[0]: every byte before it is in a record or a pending skip
	buf  []byte // bytes held for an incomplete message, a sync search or the hunt

	skipOff    int64 // pending skipped run [skipOff, skipOff+skipLen)
	skipLen    int64
	skipReason string
	skipT      Stamp // the unit that brought the run's last byte

	end   int64      // stream offset past the last byte given
	lastT Stamp      // the unit that brought the last byte given
	times []byteTime // the units of the held bytes of earlier units (times.go)
	th    int        // times[:th] are spent
	// shortEnd: a parse of the message at shortAt said it ends past
	// shortEnd-1 (times.go)
	shortAt, shortEnd int64

	want int64 // with bytes in buf and no resync: the length the parser said the message has (0: unknown)

	discard       int64 // bytes of an oversize message still to pass
	discardOff    int64
	discardReason string
	discardT      Stamp // the unit that brought the last byte passed

	needSync bool
	ended    bool
	joined   bool // Stream.Joined: the first byte need not start a message

	// raw holds, with StreamOptions.Raw, the bytes of the pending skipped
	// run or of the oversize message being passed over (never both: the
	// run is flushed before a pass-over starts), for the record's Raw.
	raw []byte

	warn []string // warnings for the next record of this direction (bounded)
}

// maxPendingWarnings bounds the warnings a direction holds for its next
// record; later ones are counted in the last.
const maxPendingWarnings = 4

// StreamOptions configure [NewStream].
type StreamOptions struct {
	Limits Limits
	// Decode asks parsers for fields; false gives types only (summary runs).
	Decode bool
	// CountOnly is for summary-only runs: a message without warnings is
	// counted in the stream ([Stream.Counts]) instead of being sent to the
	// sink. Gaps, skipped bytes and messages with warnings are still sent.
	CountOnly bool
	// Counts, if set, is where a CountOnly stream counts, shared by the
	// streams of a run (all driven from one goroutine), so that the rows of
	// wire-named types are bounded once per run ([MaxTypeRows]) rather than
	// once per stream; [Stream.Counts] is then nil.
	Counts *TypeCounts
	// Raw sets [Record.Raw] on every record sent (tshark's -x): a message
	// gets its bytes as framed, a skipped record the bytes it passes over,
	// a gap none. To keep memory bounded by [Limits], a skipped run or an
	// oversize message passed over is then sent as several skipped records
	// when it grows past Limits.MaxMessage bytes: each cut falls after the
	// segment, read or datagram that crossed that size. Without Raw
	// nothing is kept and nothing is cut.
	Raw bool
	// Budget, when not nil, bounds the bytes held by all the streams that
	// share it (see [HeldBudget]); nil: only [Limits] bound them, per
	// direction.
	Budget *HeldBudget
}

// NewStream returns the driver for one stream. The registry picks its
// protocol: at once when a decode-as rule matches, else by content and then
// by default port.
func NewStream(info StreamInfo, reg *Registry, sink Sink, opt StreamOptions) *Stream {
	s := &Stream{Info: info, reg: reg, sink: sink, lim: opt.Limits.withDefaults(), decode: opt.Decode, countOnly: opt.CountOnly, counts: opt.Counts, shared: opt.Counts != nil, raw: opt.Raw}
	s.ctx = Ctx{Stream: &s.Info, Decode: opt.Decode, notes: &s.notes}
	s.bl.b = opt.Budget
	if e := reg.forced(&s.Info); e != nil {
		s.choose(e)
	} else {
		s.detecting = true
	}
	return s
}

// Protocol returns the protocol chosen for the stream, or nil while
// detecting or when none was found (yet).
func (s *Stream) Protocol() Protocol { return s.proto }

// Err returns the first error a sink returned; the stream stops at it.
func (s *Stream) Err() error { return s.err }

// Notes returns the stream-level warnings collected so far (see [Ctx.Note]).
func (s *Stream) Notes() []string { return s.notes }

// Counts returns the messages counted instead of sent, with
// [StreamOptions.CountOnly], per protocol and type in order of first
// appearance; nil when nothing was counted, or when [StreamOptions.Counts]
// was set (they are there). The value belongs to the stream: read it or
// merge it ([TypeCounts.Merge]), do not add to it.
func (s *Stream) Counts() *TypeCounts {
	if s.shared {
		return nil
	}
	return s.counts
}

// Joined tells that direction dir was joined mid-way (a capture that
// started inside a TCP connection): its first byte need not start a
// message, so its parser looks for one there as after a gap, and
// decodes from the first place where messages parse. Call it before the
// direction's first bytes; later it does nothing.
func (s *Stream) Joined(dir Dir) {
	d := &s.dirs[dir]
	if d.end > 0 || d.ended || s.detecting && s.heldBytes[dir] > 0 {
		return
	}
	d.joined = true
	if s.parser != nil {
		d.needSync = true
	}
}

// Data gives the next contiguous bytes of direction dir, captured at t,
// with no unit number ([Stream.DataAt]).
func (s *Stream) Data(dir Dir, t time.Time, data []byte) { s.DataAt(dir, Stamp{Time: t}, data) }

// DataAt gives the next contiguous bytes of direction dir. data is not kept.
// t is the unit that brought it: what it completes carries t's time
// and number.
func (s *Stream) DataAt(dir Dir, t Stamp, data []byte) {
	if s.err != nil || len(data) == 0 {
		return
	}
	if s.detecting {
		s.hold(heldUnit{kind: unitData, dir: dir, t: t, data: append([]byte(nil), data...)})
	} else {
		s.feed(dir, t, data)
	}
	if s.raw {
		s.cutRaw(t)
	}
	s.account(t)
}

// Datagram gives one UDP datagram of direction dir, captured at t, with no
// unit number ([Stream.DatagramAt]).
func (s *Stream) Datagram(dir Dir, t time.Time, data []byte) { s.DatagramAt(dir, Stamp{Time: t}, data) }

// DatagramAt gives one UDP datagram of direction dir. Datagram boundaries are
// kept: a message never spans two datagrams. data is not kept.
// t is the unit that brought it: what it completes carries t's time
// and number.
func (s *Stream) DatagramAt(dir Dir, t Stamp, data []byte) {
	if s.err != nil {
		return
	}
	if s.detecting {
		s.hold(heldUnit{kind: unitDatagram, dir: dir, t: t, data: append([]byte(nil), data...)})
	} else {
		s.datagram(dir, t, data)
	}
	if s.raw {
		s.cutRaw(t)
	}
	s.account(t)
}

// Gap reports n bytes of direction dir never captured, found at t, with no
// unit number ([Stream.GapAt]).
func (s *Stream) Gap(dir Dir, t time.Time, n int64) { s.GapAt(dir, Stamp{Time: t}, n) }

// GapAt reports n bytes of direction dir that were never captured. The parser
// resynchronises after it.
// t is the unit that brought it: what it completes carries t's time
// and number.
func (s *Stream) GapAt(dir Dir, t Stamp, n int64) {
	if s.err != nil || n <= 0 {
		return
	}
	if s.detecting {
		s.hold(heldUnit{kind: unitGap, dir: dir, t: t, n: n})
	} else {
		s.gap(dir, t, n)
	}
	s.account(t)
}

// End reports that direction dir ended at t, with no unit number
// ([Stream.EndAt]).
func (s *Stream) End(dir Dir, t time.Time) { s.EndAt(dir, Stamp{Time: t}) }

// EndAt reports that direction dir has ended (FIN, RST, end of capture, idle
// expiry). What is still held becomes a skipped record.
// t is the unit that brought it: what it completes carries t's time
// and number.
func (s *Stream) EndAt(dir Dir, t Stamp) {
	if s.err != nil {
		return
	}
	if s.detecting {
		s.hold(heldUnit{kind: unitEnd, dir: dir, t: t})
	} else {
		s.end(dir, t)
	}
	s.account(t)
}

// feed frames the next bytes of a byte-stream direction once detection is
// over: through the parser, or, with no protocol, through the hunt.
func (s *Stream) feed(dir Dir, t Stamp, data []byte) {
	d := &s.dirs[dir]
	if d.ended {
		return
	}
	if len(data) > 0 {
		d.lastT = t
		d.end += int64(len(data))
	}
	s.feedBytes(d, dir, t, data)
	if len(data) > 0 && (d.end > d.next || d.th < len(d.times)) {
		d.noteTime(t) // the held bytes keep their time (times.go)
	}
}

// feedBytes is feed's framing: past an oversize message, then through
// the parser or the hunt.
func (s *Stream) feedBytes(d *dirState, dir Dir, t Stamp, data []byte) {
	if d.discard > 0 {
		k := min(int64(len(data)), d.discard)
		if s.raw {
			d.raw = append(d.raw, data[:k]...)
		}
		d.discard -= k
		d.next += k
		d.discardT = t
		data = data[k:]
		if d.discard == 0 {
			s.emitEvent(dir, t, TypeSkipped, d.discardOff, d.next-d.discardOff, d.discardReason)
		}
		if len(data) == 0 {
			return
		}
	}
	if s.parser == nil {
		if s.hunt != nil {
			s.huntData(dir, t, data)
			return
		}
		s.skip(d, data, ReasonUnknown)
		return
	}
	b := data
	if len(d.buf) > 0 {
		if need := len(d.buf) + len(data); need > cap(d.buf) {
			d.buf = grow(d.buf, need, d, s.bl.b)
		}
		d.buf = append(d.buf, data...)
		b = d.buf
	}
	n := s.run(dir, t, b, false, false)
	rest := b[n:]
	if len(d.buf) > 0 {
		d.buf = d.buf[:copy(d.buf, rest)]
	} else {
		d.buf = append(d.buf[:0], rest...)
	}
	if len(d.buf) == 0 && cap(d.buf) > 256<<10 {
		d.buf = nil // do not keep a large buffer for a quiet stream
	}
}

// grow returns buf with room for need bytes: the capacity doubles, but
// never past the length the parser said the message has (dirState.want),
// so a large message costs its size plus at most as much again in
// garbage (append's 1.25 growth would leave four times its size for the
// collector: with many streams, most of the peak RSS). The budget's
// spare buffer (b may be nil) is taken instead when it fits the message.
func grow(buf []byte, need int, d *dirState, b *HeldBudget) []byte {
	c := max(need, 2*cap(buf), 512)
	most := 2 * c
	if !d.needSync && d.want >= int64(need) {
		c = min(c, int(d.want))
		most = max(int(d.want), c)
	}
	if nb := b.take(need, most); nb != nil {
		return append(nb[:0], buf...)
	}
	nb := make([]byte, len(buf), c)
	copy(nb, buf)
	return nb
}

// datagram frames one UDP datagram on its own.
func (s *Stream) datagram(dir Dir, t Stamp, data []byte) {
	d := &s.dirs[dir]
	if d.ended {
		return
	}
	d.lastT = t
	d.end += int64(len(data))
	if s.parser == nil {
		s.skip(d, data, ReasonUnknown)
		return
	}
	d.needSync = false // every datagram starts at a message boundary
	s.run(dir, t, data, true, false)
	s.flushSkip(dir, t)
}

// run frames b (which starts at stream offset d.next) and returns how many
// bytes it consumed: each consumed byte is in an emitted record or in the
// pending skipped run. last is the last look at held bytes before a gap or
// the end (Ctx.Last): a Sync that finds nothing passes over all of b, and
// a Parse that needs more stops the run (the rest is then incomplete).
func (s *Stream) run(dir Dir, t Stamp, b []byte, final, last bool) int {
	if s.rec == nil {
		s.rec = &Record{}
		s.ctx.Rec = s.rec
	}
	d := &s.dirs[dir]
	c := &s.ctx
	c.Dir, c.Final, c.Last = dir, final, last
	c.at(t)
	i := 0
	for i < len(b) && s.err == nil {
		rest := b[i:]
		if d.needSync {
			c.Offset = d.next
			k, ok := s.parser.Sync(c, rest)
			k = min(max(k, 0), len(rest))
			if !ok && (final || last) {
				k = len(rest)
			}
			if k > 0 {
				s.skip(d, rest[:k], "")
				i += k
				rest = rest[k:]
			}
			if !ok {
				if len(rest) > s.lim.MaxSync {
					drop := len(rest) - s.lim.MaxSync/2
					s.skip(d, rest[:drop], "")
					i += drop
				}
				return i
			}
			d.needSync = false
			if len(rest) == 0 {
				return i
			}
		}
		var n int
		var err error
		parsed := false
		if d.skipLen == 0 && d.th >= len(d.times) {
			var k int
			k, n, err, parsed = s.runPlain(d, dir, t, rest)
			i += k
			if !parsed {
				continue
			}
			rest = rest[k:]
		}
		c.Offset = d.next
		mt := t // the time of the unit that completed the message
		switch {
		case parsed: // runPlain's result for rest
		case d.th < len(d.times) && (d.shortAt != d.next || d.shortEnd <= d.times[len(d.times)-1].end):
			// Held bytes with their times, unless they start a message
			// the parser said ends in this unit's bytes.
			n, err = s.parseTimed(d, rest, t)
			c.at(t)
			if err == nil && n > 0 && n <= len(rest) {
				// A parser may frame a message only once bytes after it
				// confirm it: the message's own last byte says when.
				mt = d.timeAt(d.next+int64(n)-1, t)
			}
		default:
			s.rec.Reset()
			n, err = s.parser.Parse(c, rest)
		}
		needMore := err != nil && errors.Is(err, ErrNeedMore) // once: errors.Is costs, per byte in 1-byte segments
		switch {
		case err == nil && n > 0 && n <= len(rest):
			if d.skipLen > 0 {
				s.flushSkip(dir, t)
			}
			s.emitMessage(dir, mt, d.next, rest[:n])
			d.next += int64(n)
			i += n
			if d.th < len(d.times) {
				d.dropTimes(d.next) // the next messages take the fast path
			}
		case needMore && final:
			reason := fmt.Sprintf("%s: truncated message at offset %d: the datagram ends after %d of its bytes", s.pname, d.next, len(rest))
			s.skip(d, rest, reason)
			return len(b)
		case needMore && last:
			return i
		case needMore && n > s.lim.MaxMessage:
			s.flushSkip(dir, t)
			take := min(n, len(rest))
			if s.raw {
				d.raw = append(d.raw, rest[:take]...)
			}
			d.discardOff = d.next
			d.discard = int64(n - take)
			d.discardReason = fmt.Sprintf("%s: message of %d bytes at offset %d exceeds the %d-byte limit; passed over undecoded", s.pname, n, d.next, s.lim.MaxMessage)
			d.discardT = d.timeAt(d.next+int64(take)-1, t)
			d.next += int64(take)
			i += take
			if d.discard == 0 {
				s.emitEvent(dir, d.discardT, TypeSkipped, d.discardOff, int64(n), d.discardReason)
			}
			return i
		case needMore && len(rest) > s.lim.MaxMessage:
			s.malformed(d, rest, fmt.Sprintf("%s: no message ends within %d bytes at offset %d", s.pname, len(rest), d.next))
			i++
		case needMore:
			d.want = 0
			if n > len(rest) {
				d.want = int64(n)
				d.shortAt, d.shortEnd = d.next, d.next+int64(n) // parseTimed starts there
			}
			return i
		default:
			s.malformed(d, rest, s.describe(err, n))
			i++
		}
	}
	return i
}

// malformed skips the first byte of rest, at d.next, and asks for a
// resync.
func (s *Stream) malformed(d *dirState, rest []byte, reason string) {
	s.skip(d, rest[:1], reason)
	d.needSync = true
}

// describe is the reason of a skipped run that starts where Parse failed.
func (s *Stream) describe(err error, n int) string {
	d := &s.dirs[s.ctx.Dir]
	var e *Error
	switch {
	case errors.As(err, &e):
		return fmt.Sprintf("%s: malformed at offset %d: %s", s.pname, d.next+e.Offset, e.Msg)
	case err != nil:
		return fmt.Sprintf("%s: malformed at offset %d: %v", s.pname, d.next, err)
	}
	return fmt.Sprintf("%s: parser returned a bad length %d at offset %d", s.pname, n, d.next)
}
