package dissect

import (
	"errors"
	"fmt"
	"time"
	"unsafe"
)

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
	// detection cannot decide; MaxDetectDatagrams the same for UDP.
	MaxDetect          int
	MaxDetectDatagrams int
}

// DefaultLimits are the limits used when a field of [Limits] is zero.
var DefaultLimits = Limits{
	MaxMessage:         1 << 20,
	MaxSync:            64 << 10,
	MaxDetect:          2 << 10,
	MaxDetectDatagrams: 4,
}

func (l Limits) withDefaults() Limits {
	if l.MaxMessage <= 0 {
		l.MaxMessage = DefaultLimits.MaxMessage
	}
	if l.MaxSync <= 0 {
		l.MaxSync = DefaultLimits.MaxSync
	}
	if l.MaxDetect <= 0 {
		l.MaxDetect = DefaultLimits.MaxDetect
	}
	if l.MaxDetectDatagrams <= 0 {
		l.MaxDetectDatagrams = DefaultLimits.MaxDetectDatagrams
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
// Until a protocol is chosen the stream holds the first bytes (bounded by
// [Limits]) for content detection; see [Registry].
type Stream struct {
	Info StreamInfo

	reg    *Registry
	sink   Sink
	lim    Limits
	decode bool

	detecting bool
	held      []heldUnit
	heldBytes [2]int
	heldUnits [2]int

	proto  Protocol
	pname  string
	parser Parser

	countOnly bool
	counts    []TypeCount
	cache     [32]int32 // type string address → index into counts, plus one

	dirs  [2]dirState
	rec   Record // filled by the parser
	ev    Record // gap and skipped events, so a pending skip can be flushed while rec holds a message
	ctx   Ctx
	notes []string
	err   error
}

type dirState struct {
	next int64  // stream offset of buf[0]: every byte before it is in a record or a pending skip
	buf  []byte // bytes held for an incomplete message or a sync search

	skipOff    int64 // pending skipped run [skipOff, skipOff+skipLen)
	skipLen    int64
	skipReason string

	discard       int64 // bytes of an oversize message still to pass
	discardOff    int64
	discardReason string

	needSync bool
	ended    bool
}

type unitKind uint8

const (
	unitData unitKind = iota
	unitDatagram
	unitGap
	unitEnd
)

type heldUnit struct {
	kind unitKind
	dir  Dir
	t    time.Time
	data []byte
	n    int64
}

// StreamOptions configure [NewStream].
type StreamOptions struct {
	Limits Limits
	// Decode asks parsers for fields; false gives types only (summary runs).
	Decode bool
	// CountOnly is for summary-only runs: a message without warnings is
	// counted in the stream ([Stream.Counts]) instead of being sent to the
	// sink. Gaps, skipped bytes and messages with warnings are still sent.
	CountOnly bool
}

// TypeCount is the number of messages of one type.
type TypeCount struct {
	Type  string
	Count int64
}

// NewStream returns the driver for one stream. The registry picks its
// protocol: at once when a decode-as rule matches, else by content and then
// by default port.
func NewStream(info StreamInfo, reg *Registry, sink Sink, opt StreamOptions) *Stream {
	s := &Stream{Info: info, reg: reg, sink: sink, lim: opt.Limits.withDefaults(), decode: opt.Decode, countOnly: opt.CountOnly}
	s.ctx = Ctx{Stream: &s.Info, Decode: opt.Decode, Rec: &s.rec, notes: &s.notes}
	if p, ok := reg.forced(&s.Info); ok {
		s.choose(p)
	} else {
		s.detecting = true
	}
	return s
}

// Protocol returns the protocol chosen for the stream, or nil while
// detecting or when none was found.
func (s *Stream) Protocol() Protocol { return s.proto }

// Err returns the first error a sink returned; the stream stops at it.
func (s *Stream) Err() error { return s.err }

// Notes returns the stream-level warnings collected so far (see [Ctx.Note]).
func (s *Stream) Notes() []string { return s.notes }

// Data gives the next contiguous bytes of direction dir. data is not kept.
func (s *Stream) Data(dir Dir, t time.Time, data []byte) {
	if s.err != nil || len(data) == 0 {
		return
	}
	if s.detecting {
		s.hold(heldUnit{kind: unitData, dir: dir, t: t, data: append([]byte(nil), data...)})
		return
	}
	s.feed(dir, t, data)
}

// Datagram gives one UDP datagram of direction dir. Datagram boundaries are
// kept: a message never spans two datagrams. data is not kept.
func (s *Stream) Datagram(dir Dir, t time.Time, data []byte) {
	if s.err != nil {
		return
	}
	if s.detecting {
		s.hold(heldUnit{kind: unitDatagram, dir: dir, t: t, data: append([]byte(nil), data...)})
		return
	}
	s.datagram(dir, t, data)
}

// Gap reports n bytes of direction dir that were never captured. The parser
// resynchronises after it.
func (s *Stream) Gap(dir Dir, t time.Time, n int64) {
	if s.err != nil || n <= 0 {
		return
	}
	if s.detecting {
		s.hold(heldUnit{kind: unitGap, dir: dir, t: t, n: n})
		return
	}
	s.gap(dir, t, n)
}

// End reports that direction dir has ended (FIN, RST, end of capture, idle
// expiry). What is still held becomes a skipped record.
func (s *Stream) End(dir Dir, t time.Time) {
	if s.err != nil {
		return
	}
	if s.detecting {
		s.hold(heldUnit{kind: unitEnd, dir: dir, t: t})
		return
	}
	s.end(dir, t)
}

// hold keeps a unit while detection cannot decide, then tries to decide.
func (s *Stream) hold(u heldUnit) {
	s.held = append(s.held, u)
	switch u.kind {
	case unitData:
		s.heldBytes[u.dir] += len(u.data)
	case unitDatagram:
		s.heldBytes[u.dir] += len(u.data)
		s.heldUnits[u.dir]++
	}
	s.detect(u.kind == unitGap || u.kind == unitEnd)
}

// detect runs content detection over the held prefix of each direction.
func (s *Stream) detect(force bool) {
	var prefix [2][]byte
	var cut [2]bool // a gap or end was seen: the prefix is final
	for _, u := range s.held {
		switch u.kind {
		case unitData:
			if !cut[u.dir] {
				prefix[u.dir] = append(prefix[u.dir], u.data...)
			}
		case unitDatagram:
			if prefix[u.dir] == nil {
				prefix[u.dir] = u.data
			}
			cut[u.dir] = true
		default:
			cut[u.dir] = true
		}
	}
	undecided := false
	for _, p := range s.reg.candidates(s.Info.Transport) {
		for d := Dir(0); d < 2; d++ {
			if len(prefix[d]) == 0 {
				continue
			}
			switch p.Detect(&s.Info, d, prefix[d]) {
			case Yes:
				s.decide(p)
				return
			case Maybe:
				if !cut[d] {
					undecided = true
				}
			}
		}
	}
	full := false
	for d := 0; d < 2; d++ {
		if s.heldBytes[d] >= s.lim.MaxDetect || s.heldUnits[d] >= s.lim.MaxDetectDatagrams {
			full = true
		}
	}
	if undecided && !force && !full {
		return
	}
	s.decide(s.reg.byPort(&s.Info))
}

// decide chooses p (nil: unknown) and replays the held units through it.
func (s *Stream) decide(p Protocol) {
	s.choose(p)
	held := s.held
	s.held = nil
	for _, u := range held {
		if s.err != nil {
			return
		}
		switch u.kind {
		case unitData:
			s.feed(u.dir, u.t, u.data)
		case unitDatagram:
			s.datagram(u.dir, u.t, u.data)
		case unitGap:
			s.gap(u.dir, u.t, u.n)
		case unitEnd:
			s.end(u.dir, u.t)
		}
	}
}

func (s *Stream) choose(p Protocol) {
	s.detecting = false
	s.proto = p
	if p != nil {
		s.pname = p.Info().Proto
		s.parser = p.NewParser(&s.Info)
	}
}

func (s *Stream) feed(dir Dir, t time.Time, data []byte) {
	d := &s.dirs[dir]
	if d.ended {
		return
	}
	if d.discard > 0 {
		k := min(int64(len(data)), d.discard)
		d.discard -= k
		d.next += k
		data = data[k:]
		if d.discard == 0 {
			s.emitEvent(dir, t, TypeSkipped, d.discardOff, d.next-d.discardOff, d.discardReason)
		}
		if len(data) == 0 {
			return
		}
	}
	if s.parser == nil {
		s.skip(d, int64(len(data)), ReasonUnknown)
		return
	}
	b := data
	if len(d.buf) > 0 {
		d.buf = append(d.buf, data...)
		b = d.buf
	}
	n := s.run(dir, t, b, false)
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

func (s *Stream) datagram(dir Dir, t time.Time, data []byte) {
	d := &s.dirs[dir]
	if d.ended {
		return
	}
	if s.parser == nil {
		s.skip(d, int64(len(data)), ReasonUnknown)
		return
	}
	d.needSync = false // every datagram starts at a message boundary
	s.run(dir, t, data, true)
	s.flushSkip(dir, t)
}

// run frames b (which starts at stream offset d.next) and returns how many
// bytes it consumed: each consumed byte is in an emitted record or in the
// pending skipped run.
func (s *Stream) run(dir Dir, t time.Time, b []byte, final bool) int {
	d := &s.dirs[dir]
	c := &s.ctx
	c.Dir, c.Time, c.Final = dir, t, final
	i := 0
	for i < len(b) && s.err == nil {
		rest := b[i:]
		if d.needSync {
			c.Offset = d.next
			k, ok := s.parser.Sync(c, rest)
			k = min(max(k, 0), len(rest))
			if !ok && final {
				k = len(rest)
			}
			if k > 0 {
				s.skip(d, int64(k), "")
				i += k
				rest = rest[k:]
			}
			if !ok {
				if len(rest) > s.lim.MaxSync {
					drop := len(rest) - s.lim.MaxSync/2
					s.skip(d, int64(drop), "")
					i += drop
				}
				return i
			}
			d.needSync = false
			if len(rest) == 0 {
				return i
			}
		}
		s.rec.Reset()
		c.Offset = d.next
		n, err := s.parser.Parse(c, rest)
		switch {
		case err == nil && n > 0 && n <= len(rest):
			if d.skipLen > 0 {
				s.flushSkip(dir, t)
			}
			s.emitMessage(dir, t, d.next, int64(n))
			d.next += int64(n)
			i += n
		case errors.Is(err, ErrNeedMore) && final:
			reason := fmt.Sprintf("%s: truncated message at offset %d: the datagram ends after %d of its bytes", s.pname, d.next, len(rest))
			s.skip(d, int64(len(rest)), reason)
			return len(b)
		case errors.Is(err, ErrNeedMore) && n > s.lim.MaxMessage:
			s.flushSkip(dir, t)
			take := min(n, len(rest))
			d.discardOff = d.next
			d.discard = int64(n - take)
			d.discardReason = fmt.Sprintf("%s: message of %d bytes at offset %d exceeds the %d-byte limit; passed over undecoded", s.pname, n, d.next, s.lim.MaxMessage)
			d.next += int64(take)
			i += take
			if d.discard == 0 {
				s.emitEvent(dir, t, TypeSkipped, d.discardOff, int64(n), d.discardReason)
			}
			return i
		case errors.Is(err, ErrNeedMore) && len(rest) > s.lim.MaxMessage:
			s.malformed(d, fmt.Sprintf("%s: no message ends within %d bytes at offset %d", s.pname, len(rest), d.next))
			i++
		case errors.Is(err, ErrNeedMore):
			return i
		default:
			s.malformed(d, s.describe(err, n))
			i++
		}
	}
	return i
}

// malformed skips the first byte at d.next and asks for a resync.
func (s *Stream) malformed(d *dirState, reason string) {
	s.skip(d, 1, reason)
	d.needSync = true
}

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

// skip adds n bytes at d.next to the pending skipped run. reason is used
// when it starts the run ("" keeps an earlier reason, or says "resync").
func (s *Stream) skip(d *dirState, n int64, reason string) {
	if d.skipLen == 0 {
		d.skipOff = d.next
		d.skipReason = reason
	} else if d.skipReason == "" {
		d.skipReason = reason
	}
	d.skipLen += n
	d.next += n
}

func (s *Stream) flushSkip(dir Dir, t time.Time) {
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
	s.emitEvent(dir, t, TypeSkipped, off, n, reason)
}

// flushHeld turns everything held for direction dir into records: the
// incomplete message buffer, an oversize message cut short, the skipped run.
func (s *Stream) flushHeld(dir Dir, t time.Time, why string) {
	d := &s.dirs[dir]
	if d.discard > 0 {
		s.emitEvent(dir, t, TypeSkipped, d.discardOff, d.next-d.discardOff, d.discardReason+" (cut short)")
		d.discard = 0
	}
	if len(d.buf) > 0 {
		if d.needSync {
			s.skip(d, int64(len(d.buf)), "")
		} else {
			s.skip(d, int64(len(d.buf)), fmt.Sprintf("%s: %s (%d bytes at offset %d)", s.pname, why, len(d.buf), d.next))
		}
		d.buf = d.buf[:0]
	}
	s.flushSkip(dir, t)
}

func (s *Stream) gap(dir Dir, t time.Time, n int64) {
	d := &s.dirs[dir]
	if d.ended {
		return
	}
	s.flushHeld(dir, t, ReasonBeforeGap)
	s.emitEvent(dir, t, TypeGap, d.next, n, "")
	d.next += n
	if s.parser != nil {
		d.needSync = true
	}
}

func (s *Stream) end(dir Dir, t time.Time) {
	d := &s.dirs[dir]
	if d.ended {
		return
	}
	s.flushHeld(dir, t, ReasonIncomplete)
	d.ended = true
	if e, ok := s.parser.(Ender); ok && s.dirs[dir^1].ended {
		s.ctx.Dir, s.ctx.Time = dir, t
		e.End(&s.ctx)
	}
}

func (s *Stream) fill(r *Record, dir Dir, t time.Time, off, n int64) {
	r.Time = t
	r.Proto = s.pname
	r.Transport = s.Info.Transport
	r.Stream = s.Info.ID
	r.Src = s.Info.Name[dir]
	r.Dst = s.Info.Name[dir^1]
	r.Offset = off
	r.Length = n
}

func (s *Stream) emitMessage(dir Dir, t time.Time, off, n int64) {
	if s.rec.Type == "" {
		s.rec.Type = "unknown"
	}
	if s.countOnly && len(s.rec.Warnings) == 0 {
		s.count(s.rec.Type)
		return
	}
	s.fill(&s.rec, dir, t, off, n)
	if err := s.sink.Record(&s.rec); err != nil {
		s.err = err
	}
}

// count adds one message of type typ to the stream's counts. Protocols name
// types with string constants, so the address of the string's bytes finds
// its slot without hashing; a hit is confirmed by comparing the strings.
func (s *Stream) count(typ string) {
	slot := uint64(uintptr(unsafe.Pointer(unsafe.StringData(typ)))) * 0x9E3779B97F4A7C15 >> 59 // top 5 bits: 32 slots
	if i := s.cache[slot] - 1; i >= 0 {
		c := &s.counts[i]
		if len(c.Type) == len(typ) && (unsafe.StringData(c.Type) == unsafe.StringData(typ) || c.Type == typ) {
			c.Count++
			return
		}
	}
	for i := range s.counts {
		if s.counts[i].Type == typ {
			s.counts[i].Count++
			s.cache[slot] = int32(i + 1)
			return
		}
	}
	s.counts = append(s.counts, TypeCount{Type: typ, Count: 1})
	s.cache[slot] = int32(len(s.counts))
}

// Counts returns the messages counted instead of sent, with
// [StreamOptions.CountOnly], per type in order of first appearance, and the
// protocol they belong to.
func (s *Stream) Counts() (proto string, counts []TypeCount) { return s.pname, s.counts }

func (s *Stream) emitEvent(dir Dir, t time.Time, typ string, off, n int64, reason string) {
	r := &s.ev
	r.Reset()
	s.fill(r, dir, t, off, n)
	r.Type = typ
	if typ == TypeSkipped {
		r.Add("reason", Str(reason))
	}
	if err := s.sink.Record(r); err != nil {
		s.err = err
	}
}
