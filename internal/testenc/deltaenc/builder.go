package deltaenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// SyncRun is how many consecutive complete messages with known ids the
// decoder contract requires at an offset before it resynchronises there
// after malformed data or a gap.
const SyncRun = 3

// Builder appends messages to one direction of a stream and keeps the record
// each should produce. The zero Builder is empty and ready to use.
type Builder struct {
	buf   []byte
	msgs  []Message
	bad   []int64 // offsets of ids with an undefined size code
	ended bool    // a truncated message closed the stream
	err   error
}

// Len returns the number of bytes appended so far.
func (b *Builder) Len() int64 { return int64(len(b.buf)) }

// Bytes returns the bytes appended so far (not a copy).
func (b *Builder) Bytes() []byte { return b.buf }

func (b *Builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("deltaenc: "+format, args...)
	}
}

// add appends wire and its expected record m (Offset and Length are set here).
func (b *Builder) add(m Message, wire []byte) {
	if b.ended {
		b.fail("message appended after a truncated message at offset %d", len(b.buf))
		return
	}
	m.Offset = int64(len(b.buf))
	m.Length = int64(len(wire))
	b.buf = append(b.buf, wire...)
	b.msgs = append(b.msgs, m)
}

// Magic appends a protocol magic message.
func (b *Builder) Magic() {
	b.add(Message{Type: TypeMagic, ID: IDMagic, Magic: MagicValue, Warn: truth.No}, Magic())
}

// Version appends a protocol version message.
func (b *Builder) Version(v uint32) {
	b.add(Message{Type: TypeVersion, ID: IDVersion, Version: v, Warn: truth.No}, Version(v))
}

// ActuatorPosition appends a current actuator position message.
func (b *Builder) ActuatorPosition(x, y, z, u float32) {
	b.add(Message{Type: TypeActuatorPosition, ID: IDActuatorPosition, Vec: [4]float32{x, y, z, u}, Warn: truth.No}, ActuatorPosition(x, y, z, u))
}

// CurrentDirection appends a current direction vector message.
func (b *Builder) CurrentDirection(x, y, z, u float32) {
	b.add(Message{Type: TypeCurrentDirection, ID: IDCurrentDirection, Vec: [4]float32{x, y, z, u}, Warn: truth.No}, CurrentDirection(x, y, z, u))
}

// DesiredDirection appends a desired direction vector message.
func (b *Builder) DesiredDirection(x, y, z, u float32) {
	b.add(Message{Type: TypeDesiredDirection, ID: IDDesiredDirection, Vec: [4]float32{x, y, z, u}, Warn: truth.No}, DesiredDirection(x, y, z, u))
}

// Ping appends a ping message.
func (b *Builder) Ping(id uint64) {
	b.add(Message{Type: TypePing, ID: IDPing, PingID: id, Warn: truth.No}, Ping(id))
}

// Pong appends a pong message. Whether rtt_ms is expected is settled by
// [Conversation.Finish] (a pong answering no seen ping has none); a lone
// Builder leaves it unasserted.
func (b *Builder) Pong(id uint64) {
	b.add(Message{Type: TypePong, ID: IDPong, PingID: id}, Pong(id))
}

// EndOfTransmission appends an end of transmission message.
func (b *Builder) EndOfTransmission(reason string) {
	b.add(Message{Type: TypeEndOfTransmission, ID: IDEndOfTransmission, Reason: reason, Warn: truth.No}, EndOfTransmission(reason))
}

// Curve appends a curve message.
func (b *Builder) Curve(points [][3]float32) {
	p := append([][3]float32{}, points...)
	b.add(Message{Type: TypeCurve, ID: IDCurve, Points: p, Warn: truth.No}, Curve(points))
}

// BadCurve appends a curve whose length is not a multiple of 12: points,
// then trailing (1..11 bytes). It is still a curve record, with a warning.
func (b *Builder) BadCurve(points [][3]float32, trailing []byte) {
	if len(trailing)%12 == 0 {
		b.fail("BadCurve: %d trailing bytes leave the length a multiple of 12", len(trailing))
		return
	}
	if len(trailing) > 12 {
		b.fail("BadCurve: %d trailing bytes hold whole points; give them as points", len(trailing))
		return
	}
	p := append([][3]float32{}, points...)
	t := append([]byte(nil), trailing...)
	b.add(Message{Type: TypeCurve, ID: IDCurve, Points: p, Trailing: t, Warn: truth.Yes}, BadCurve(points, trailing))
}

// Unknown appends a message whose id is not one of the protocol's (an
// unknown type, type 0x000, or a known type under another size code). For
// size code 0xF the content length is written after the id; for codes
// 0x0..0x4 content must have the code's size. It expects an "unknown"
// record with a warning.
func (b *Builder) Unknown(id uint16, content []byte) {
	if _, ok := TypeName(id); ok {
		b.fail("Unknown: id %#04x is a known message", id)
		return
	}
	size := uint8(id >> 12)
	var wire []byte
	switch n, ok := ContentSize(size); {
	case size == SizeVariable:
		wire = VarRaw(id, content)
	case !ok:
		b.fail("Unknown: id %#04x has an undefined size code; use BadSize", id)
		return
	case n != len(content):
		b.fail("Unknown: id %#04x needs %d content bytes, got %d", id, n, len(content))
		return
	default:
		wire = Raw(id, content)
	}
	c := append([]byte(nil), content...)
	b.add(Message{Type: TypeUnknown, ID: id, Data: c, Warn: truth.Yes}, wire)
}

// BadSize appends an id with an undefined size code (0x5..0xE) and junk.
// The decoder cannot frame it: the expected records are one skipped run from
// here to the offset where the decoder resynchronises (see [FirstSync]),
// settled by [Builder.Finish], which fails when that offset is not the start
// of a message appended later.
func (b *Builder) BadSize(size uint8, typ uint16, junk []byte) {
	if size < 5 || size > 0xE {
		b.fail("BadSize: size code %#x is defined", size)
		return
	}
	b.bad = append(b.bad, int64(len(b.buf)))
	b.add(Message{Type: TypeSkipped}, BadSize(size, typ, junk))
}

// Truncated appends the first keep bytes of the message wire (0 < keep <
// len(wire)) and closes the builder: the stream must end there, and the
// expected record is a skipped run (an incomplete message at the end).
func (b *Builder) Truncated(wire []byte, keep int) {
	if keep <= 0 || keep >= len(wire) {
		b.fail("Truncated: keep %d of %d bytes is not a truncation", keep, len(wire))
		return
	}
	b.add(Message{Type: TypeSkipped}, Truncated(wire, keep))
	b.ended = true
}

// Finish returns the bytes and the expected records. Runs that the decoder
// must skip are resolved (an undefined size code skips up to the decoder's
// resynchronisation point) and adjacent skipped runs are merged, as the
// decoder contract merges them.
func (b *Builder) Finish() ([]byte, []Message, error) {
	if b.err != nil {
		return nil, nil, b.err
	}
	msgs := append([]Message(nil), b.msgs...)
	for _, o := range b.bad {
		s, err := FirstSync(b.buf, int(o)+1)
		if err != nil {
			return nil, nil, fmt.Errorf("deltaenc: bad size id at offset %d: %w", o, err)
		}
		msgs, err = skipRange(msgs, o, int64(s))
		if err != nil {
			return nil, nil, fmt.Errorf("deltaenc: bad size id at offset %d: %w", o, err)
		}
	}
	msgs = mergeSkipped(msgs)
	markReady(msgs)
	return b.buf, msgs, nil
}

// markReady sets Ready on every record: a message that starts a
// resynchronisation chain (the first message after a skipped run or a gap)
// and the messages of that chain are emitted together, once the chain is
// complete: SyncRun messages, or fewer when one of them is a protocol magic.
func markReady(msgs []Message) {
	for i := range msgs {
		msgs[i].Ready = msgs[i].End()
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i].IsEvent() || !msgs[i-1].IsEvent() {
			continue
		}
		ready := msgs[i].End()
		for k := i; k < min(i+SyncRun, len(msgs)) && !msgs[k].IsEvent(); k++ {
			ready = msgs[k].End()
			if msgs[k].Type == TypeMagic && msgs[k].Magic == MagicValue {
				break
			}
		}
		for k := i; k < len(msgs) && msgs[k].Offset < ready; k++ {
			msgs[k].Ready = ready
		}
	}
}

// skipOps lets the truth package's SkipRange and MergeSkipped handle
// Messages.
var skipOps = truth.Ops[Message]{
	Span:      func(m *Message) (int64, int64) { return m.Offset, m.Length },
	IsSkipped: func(m *Message) bool { return m.Type == TypeSkipped },
	Grow:      func(m *Message, n int64) { m.Length += n },
	Skipped:   func(off, n int64) Message { return Message{Type: TypeSkipped, Offset: off, Length: n} },
	String:    (*Message).String,
}

// skipRange replaces the records in [from, to) by one skipped record. Both
// ends must be record boundaries (to may be the end of the stream).
func skipRange(msgs []Message, from, to int64) ([]Message, error) {
	return truth.SkipRange(skipOps, msgs, from, to)
}

// mergeSkipped joins adjacent skipped records.
func mergeSkipped(msgs []Message) []Message { return truth.MergeSkipped(skipOps, msgs) }

// chain outcomes.
const (
	chainMiss       = iota // an id that is not a known message
	chainHit               // the chain is good enough to resynchronise at
	chainIncomplete        // known ids that run past the end of the data
)

// knownChain looks at up to SyncRun consecutive messages starting at b[0]
// and judges them twice: by the rule "SyncRun complete messages with known
// ids, or at least two that end exactly where the direction ends" (r3),
// and by that rule or "a complete protocol_magic holding DeltaRVr among
// them" (rm), which the decoder documents as well (b ends where the
// direction does in every use here). Only ids
// and lengths are checked, the loosest reading of "a known message parses":
// a stricter decoder rejects a subset of these candidates.
func knownChain(b []byte) (r3, rm int) {
	p := 0
	magic := false
	for i := range SyncRun {
		if p == len(b) && i >= 2 {
			// b ends the direction: the contract accepts two or more
			// complete known messages that end exactly there.
			return chainHit, chainHit
		}
		if len(b)-p < 2 {
			return chainIncomplete, orMagic(magic, chainIncomplete)
		}
		id := binary.LittleEndian.Uint16(b[p:])
		if _, ok := TypeName(id); !ok {
			return chainMiss, orMagic(magic, chainMiss)
		}
		var n int64
		if id>>12 == SizeVariable {
			if len(b)-p < 6 {
				return chainIncomplete, orMagic(magic, chainIncomplete)
			}
			n = 6 + int64(binary.LittleEndian.Uint32(b[p+2:]))
		} else {
			c, _ := ContentSize(uint8(id >> 12))
			n = 2 + int64(c)
		}
		if n > int64(len(b)-p) {
			return chainIncomplete, orMagic(magic, chainIncomplete)
		}
		if id == IDMagic && string(b[p+2:p+10]) == MagicValue {
			magic = true
		}
		p += int(n)
	}
	return chainHit, chainHit
}

func orMagic(magic bool, r int) int {
	if magic {
		return chainHit
	}
	return r
}

// ErrAmbiguous is returned by [FirstSync] when the place where the decoder
// resynchronises depends on a detail of the decoder: before the first good
// offset some offset starts known messages that run past the end of the data
// (a decoder would wait there for bytes that never come), or the two
// readings of the sync rule (see [FirstSync]) disagree. Test scenarios avoid
// it, so that their truth holds for any decoder that follows the contract.
var ErrAmbiguous = errors.New("deltaenc: resynchronisation is ambiguous")

// FirstSync returns the first offset i >= from at which the decoder
// contract resumes decoding after malformed data or a gap: SyncRun
// consecutive complete messages with known ids start at b[i]. The decoder
// also resumes at a chain holding a complete, correct protocol_magic;
// FirstSync requires both rules to give the same offset. It returns len(b)
// when there is none (all of b[from:] is skipped), and ErrAmbiguous (with
// the offset found) when the answer depends on the decoder.
func FirstSync(b []byte, from int) (int, error) {
	first := [2]int{len(b), len(b)}
	undecided := [2]int{-1, -1}
	for i := max(from, 0); i < len(b); i++ {
		r3, rm := knownChain(b[i:])
		for k, r := range [2]int{r3, rm} {
			switch {
			case first[k] < len(b):
			case r == chainHit:
				first[k] = i
			case r == chainIncomplete && undecided[k] < 0:
				undecided[k] = i
			}
		}
		if first[0] < len(b) && first[1] < len(b) {
			break
		}
	}
	for k := range 2 {
		if undecided[k] >= 0 && first[k] < len(b) {
			return first[0], fmt.Errorf("%w: known ids at offset %d run past the end of the data, before the sync point %d", ErrAmbiguous, undecided[k], first[k])
		}
	}
	if first[0] != first[1] {
		return first[0], fmt.Errorf("%w: three known messages first start at %d, but a chain holding the magic at %d", ErrAmbiguous, first[0], first[1])
	}
	return first[0], nil
}

// isBoundary reports whether off starts a record of msgs or is the end.
func isBoundary(msgs []Message, off, end int64) bool {
	if off == end {
		return true
	}
	i := sort.Search(len(msgs), func(i int) bool { return msgs[i].Offset >= off })
	return i < len(msgs) && msgs[i].Offset == off
}

// ApplyGap returns the records expected when bytes [from, to) of a direction
// (whose bytes are b and expected records msgs) are never captured: records
// before the gap stay; a message cut by the start of the gap becomes a
// skipped run (an incomplete message before a gap), and so do messages that
// were waiting for the rest of a resynchronisation chain (see
// [Message.Ready]); the gap record; then a
// skipped run from the end of the gap to the decoder's resynchronisation
// point (which must be the start of a record), then the rest.
func ApplyGap(b []byte, msgs []Message, from, to int64) ([]Message, error) {
	if from < 0 || to <= from || to > int64(len(b)) {
		return nil, fmt.Errorf("deltaenc: gap [%d,%d) outside [0,%d)", from, to, len(b))
	}
	s, err := FirstSync(b, int(to))
	if err != nil {
		return nil, fmt.Errorf("deltaenc: after the gap [%d,%d): %w", from, to, err)
	}
	sync := int64(s)
	if !isBoundary(msgs, sync, int64(len(b))) {
		return nil, fmt.Errorf("deltaenc: after the gap [%d,%d) the decoder resynchronises at %d, inside a message", from, to, sync)
	}
	var out []Message
	for _, m := range msgs {
		switch {
		case max(m.Ready, m.End()) <= from:
			out = append(out, m)
		case m.Offset < from:
			// Cut by the gap, or complete but waiting for the rest of its
			// resynchronisation chain: never emitted, passed over.
			out = append(out, Message{Type: TypeSkipped, Offset: m.Offset, Length: min(m.End(), from) - m.Offset})
		}
	}
	out = append(out, Message{Type: TypeGap, Offset: from, Length: to - from})
	if sync > to {
		out = append(out, Message{Type: TypeSkipped, Offset: to, Length: sync - to})
	}
	for _, m := range msgs {
		if m.Offset >= sync {
			out = append(out, m)
		}
	}
	out = mergeSkipped(out)
	markReady(out)
	markHandshake(out)
	return out, nil
}

// markHandshake stops asserting the warnings of the first two decoded
// messages when they are not protocol_magic then protocol_version (a
// capture joined mid-stream, a gap over the handshake): the decoder may
// warn that the stream does not begin with magic and version.
func markHandshake(msgs []Message) {
	want := [2]string{TypeMagic, TypeVersion}
	k := 0
	ok := true
	for i := range msgs {
		if msgs[i].IsEvent() {
			continue
		}
		if k >= 2 {
			break
		}
		ok = ok && msgs[i].Type == want[k]
		if !ok {
			msgs[i].Warn = truth.Any
		}
		k++
	}
}

// Cut returns the bytes and records of a direction whose capture starts at
// offset at (the bytes before it were never seen; offsets restart at 0).
// When at is inside a message, the first two bytes seen must form an id
// with an undefined size code (so the decoder rejects them at once); the
// records are then a skipped run up to the resynchronisation point, then
// the rest. Unless the first two messages are magic and version, their
// warnings are not asserted (see markHandshake).
func Cut(b []byte, msgs []Message, at int64) ([]byte, []Message, error) {
	if at < 0 || at >= int64(len(b)) {
		return nil, nil, fmt.Errorf("deltaenc: cut at %d outside [0,%d)", at, len(b))
	}
	nb := b[at:]
	shift := func(m Message) Message { m.Offset -= at; return m }
	var out []Message
	if isBoundary(msgs, at, int64(len(b))) {
		for _, m := range msgs {
			if m.Offset >= at {
				out = append(out, shift(m))
			}
		}
		markReady(out)
		markHandshake(out)
		return nb, out, nil
	}
	if len(nb) < 2 {
		return nil, nil, fmt.Errorf("deltaenc: cut at %d leaves less than an id", at)
	}
	if code := nb[1] >> 4; code < 5 || code > 0xE {
		return nil, nil, fmt.Errorf("deltaenc: cut at %d starts with id %#04x, which a decoder can frame; choose another offset", at, binary.LittleEndian.Uint16(nb))
	}
	s, err := FirstSync(nb, 1)
	if err != nil {
		return nil, nil, fmt.Errorf("deltaenc: cut at %d: %w", at, err)
	}
	sync := int64(s) + at
	if !isBoundary(msgs, sync, int64(len(b))) {
		return nil, nil, fmt.Errorf("deltaenc: cut at %d: the decoder resynchronises at %d, inside a message", at, sync)
	}
	out = append(out, Message{Type: TypeSkipped, Offset: 0, Length: sync - at})
	for _, m := range msgs {
		if m.Offset >= sync {
			out = append(out, shift(m))
		}
	}
	markReady(out)
	markHandshake(out)
	return nb, out, nil
}
