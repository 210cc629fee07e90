package neptuneenc

import (
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// SyncRun is how many consecutive well-formed messages dissect/neptune's
// documented resynchronisation rule needs at an offset (doc.go: "the first
// offset from which three consecutive well-formed messages frame (a known
// type with the length the device acts on for it; an abort only with
// length 1 ...)").
const SyncRun = 3

var axisNames = [3]string{"x", "y", "z"}

// Builder appends device-framing messages to the host → device stream and
// keeps the record each should produce. The zero Builder is ready to use.
type Builder struct {
	buf   []byte
	msgs  []Message
	prev  byte // the type byte left in the device's buffer (0: zeroed at start)
	ended bool
	err   error
}

// Len returns the number of bytes appended so far.
func (b *Builder) Len() int64 { return int64(len(b.buf)) }

// Bytes returns the bytes appended so far (not a copy).
func (b *Builder) Bytes() []byte { return b.buf }

func (b *Builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("neptuneenc: "+format, args...)
	}
}

func (b *Builder) add(m Message, wire []byte) {
	if b.ended {
		b.fail("message appended after a truncated message at offset %d", len(b.buf))
		return
	}
	m.Offset, m.Length = int64(len(b.buf)), int64(len(wire))
	if !m.IsEvent() {
		m.Wire = append([]byte{}, wire...)
	}
	if !m.IsEvent() && len(wire) > 1 {
		b.prev = wire[1] // nep_network.ino reads the payload into packet[0..]
	}
	b.buf = append(b.buf, wire...)
	b.msgs = append(b.msgs, m)
}

// Abort appends an abort message (no fields).
func (b *Builder) Abort() {
	b.add(Message{Type: TypeAbort, Match: Exact, Warn: truth.No}, Abort())
}

// AbortArgs appends an abort with arguments: the device does not check an
// abort's length, so it is an abort without a warning; how the arguments
// are shown is not asserted.
func (b *Builder) AbortArgs(args ...byte) {
	if len(args) == 0 || len(args) > MaxLength-1 {
		b.fail("AbortArgs: %d arguments", len(args))
		return
	}
	b.add(Message{Type: TypeAbort, Match: Subset, Warn: truth.No,
		NotAsserted: []string{"fields: how the arguments " + hex.EncodeToString(args) + " are shown"}}, Command(CodeAbort, args...))
}

// SetMotor appends a set_motor message. Motor ids 0-4 are motors and 5-6
// relays on the co-processor; an id of 7 or more is expected to carry a
// warning (the co-processor has no such device).
func (b *Builder) SetMotor(motor, dir, magnitude byte) {
	d := "forward"
	if dir != 0 {
		d = "reverse"
	}
	w := truth.No
	if motor >= 7 {
		w = truth.Yes
	}
	fs := []Field{field("motor", Int(int64(motor))), field("direction", Str(d)), field("magnitude", Int(int64(magnitude)))}
	if motor == 5 || motor == 6 {
		// motor_test.ino: ids 5 and 6 are relays, switched on when dir != 0.
		fs = append(fs, field("relay_on", Bool(dir != 0)))
	}
	b.add(Message{Type: TypeSetMotor, Match: Exact, Warn: w, Fields: fs}, SetMotor(motor, dir, magnitude))
}

func (b *Builder) move(typ string, code, axis, sign byte) {
	m := Message{Type: typ, Match: Subset, Warn: truth.No,
		NotAsserted: []string{fmt.Sprintf("sign: its rendering (the raw byte is 0x%02x)", sign)}}
	if axis < 3 {
		m.Fields = []Field{field("axis", Str(axisNames[axis]))}
	} else {
		m.Warn = truth.Yes
		m.NotAsserted = append(m.NotAsserted, fmt.Sprintf("axis: its rendering (byte %d is not x, y or z)", axis))
	}
	b.add(m, Command(code, axis, sign))
}

// Translate appends a translate message. The axis is asserted ("x", "y",
// "z"; another value expects a warning); the sign's rendering is not.
func (b *Builder) Translate(axis, sign byte) { b.move(TypeTranslate, CodeTranslate, axis, sign) }

// Rotate appends a rotate message, asserted as [Builder.Translate].
func (b *Builder) Rotate(axis, sign byte) { b.move(TypeRotate, CodeRotate, axis, sign) }

// Stabilize appends an auto-stabilize message: enable is v != 0.
func (b *Builder) Stabilize(v byte) {
	b.add(Message{Type: TypeStabilize, Match: Exact, Warn: truth.No, Fields: []Field{field("enable", Bool(v != 0))}}, Stabilize(v))
}

// Lamp appends a lamp message: on is v != 0.
func (b *Builder) Lamp(v byte) {
	b.add(Message{Type: TypeLamp, Match: Exact, Warn: truth.No, Fields: []Field{field("on", Bool(v != 0))}}, Lamp(v))
}

// Unknown appends a message of a type the device does not know (6 or
// more): an "unknown" record whose data is the payload, type byte
// included (dissect/neptune's documented reading of the contract's
// "data"), with a warning.
func (b *Builder) Unknown(code byte, args ...byte) {
	if code <= CodeLamp {
		b.fail("Unknown: type %d is known", code)
		return
	}
	if len(args)+1 > MaxLength {
		b.fail("Unknown: %d bytes of payload", len(args)+1)
		return
	}
	wire := Command(code, args...)
	b.add(Message{Type: TypeUnknown, Match: Exact, Warn: truth.Yes, Fields: []Field{field("data", Bytes(wire[1:]))}}, wire)
}

// WrongLength appends a known type (1-5) with a length that does not fit it
// (the device ignores it): a record with the type's name and a warning; its
// fields are not asserted.
func (b *Builder) WrongLength(code byte, args ...byte) {
	want, ok := WantLength(code)
	if !ok || want == len(args)+1 || len(args)+1 > MaxLength {
		b.fail("WrongLength: type %d with %d bytes is not a wrong length", code, len(args)+1)
		return
	}
	typ := [...]string{TypeAbort, TypeSetMotor, TypeTranslate, TypeRotate, TypeStabilize, TypeLamp}[code]
	wire := Command(code, args...)
	b.add(Message{Type: typ, Match: Subset, Warn: truth.Yes, NotAsserted: []string{
		fmt.Sprintf("fields: length %d does not fit the type (needs %d); which fields are shown is the decoder's choice", len(args)+1, want)}}, wire)
}

// ZeroLength appends a length byte of 0. nep_network.ino reads no payload
// and runs run_command on the type byte its buffer still holds from the
// last message (0, abort, at the start: the buffer is zeroed): a record of
// that type (unknown past 5) with no fields and a warning.
func (b *Builder) ZeroLength() {
	typ := TypeUnknown
	if b.prev <= CodeLamp {
		typ = [...]string{TypeAbort, TypeSetMotor, TypeTranslate, TypeRotate, TypeStabilize, TypeLamp}[b.prev]
	}
	b.add(Message{Type: typ, Match: Exact, Warn: truth.Yes}, []byte{0})
}

// Garbage appends junk made of length bytes of 100 or more. nep_network.ino
// reads each as a length, and for 100 or more calls client.flush(), which
// in the Ethernet library discards nothing: each byte is dropped alone and
// the next is read as a length. The expected record is a skipped run of
// exactly the junk; the message appended next decodes.
func (b *Builder) Garbage(junk []byte) {
	if len(junk) == 0 {
		b.fail("Garbage: no bytes")
		return
	}
	for i, c := range junk {
		if c <= MaxLength {
			b.fail("Garbage: byte %d (%d) is a length below 100: the device reads a message there", i, c)
			return
		}
	}
	b.add(Message{Type: TypeSkipped}, junk)
}

// Truncated appends the first keep bytes of wire (0 < keep < len(wire))
// and closes the builder: the stream must end there, and the expected
// record is a skipped run (an incomplete message at the end).
func (b *Builder) Truncated(wire []byte, keep int) {
	if keep <= 0 || keep >= len(wire) {
		b.fail("Truncated: keep %d of %d bytes is not a truncation", keep, len(wire))
		return
	}
	b.add(Message{Type: TypeSkipped}, wire[:keep])
	b.ended = true
}

// Finish returns the bytes and the expected records, adjacent skipped
// runs merged (as the stream driver merges them).
func (b *Builder) Finish() ([]byte, []Message, error) {
	if b.err != nil {
		return nil, nil, b.err
	}
	return b.buf, mergeSkipped(append([]Message(nil), b.msgs...)), nil
}

// skipOps lets the truth package's MergeSkipped handle
// Messages.
var skipOps = truth.Ops[Message]{
	Span:      func(m *Message) (int64, int64) { return m.Offset, m.Length },
	IsSkipped: func(m *Message) bool { return m.Type == TypeSkipped },
	Grow:      func(m *Message, n int64) { m.Length += n },
	Skipped:   func(off, n int64) Message { return Message{Type: TypeSkipped, Offset: off, Length: n} },
	String:    (*Message).String,
}

// mergeSkipped joins adjacent skipped records.
func mergeSkipped(msgs []Message) []Message { return truth.MergeSkipped(skipOps, msgs) }

// chain outcomes.
const (
	chainMiss = iota
	chainHit
	chainIncomplete
)

// wellFormed judges the message at b[0] by the documented rule: a known
// type (0-5) with the length the device acts on for it, and for an abort
// only length 1 (the device accepts an abort of any length, but the
// decoder documents that it does not resynchronise on a long one). It
// returns the message's size when it is whole.
func wellFormed(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, chainIncomplete
	}
	n := int(b[0])
	if n == 0 || n > MaxLength {
		return 0, chainMiss
	}
	if len(b) < 2 {
		return 0, chainIncomplete
	}
	code := b[1]
	if code > CodeLamp {
		return 0, chainMiss
	}
	if want, ok := WantLength(code); ok && want != n || code == CodeAbort && n != 1 {
		return 0, chainMiss
	}
	if len(b) < 1+n {
		return 0, chainIncomplete
	}
	return 1 + n, chainHit
}

func chainAt(b []byte) int {
	p := 0
	for range SyncRun {
		n, r := wellFormed(b[p:])
		if r != chainHit {
			return r
		}
		p += n
	}
	return chainHit
}

// ErrAmbiguous is returned by [FirstSync] when, before the first offset
// where the decoder resynchronises, some offset starts well-formed messages
// that run past the end of the data (a decoder waits there for bytes that
// never come, or judges it by a detail of its own). Test scenarios avoid it.
var ErrAmbiguous = errors.New("neptuneenc: resynchronisation is ambiguous")

// FirstSync returns the first offset i >= from at which SyncRun consecutive
// well-formed messages start ([dissect/neptune]'s documented rule), len(b)
// when there is none, and ErrAmbiguous (with the offset found) when an
// earlier offset cannot be decided from b.
func FirstSync(b []byte, from int) (int, error) {
	undecided := -1
	for i := max(from, 0); i < len(b); i++ {
		switch chainAt(b[i:]) {
		case chainHit:
			if undecided >= 0 {
				return i, fmt.Errorf("%w: well-formed messages at offset %d run past the end of the data, before the sync point %d", ErrAmbiguous, undecided, i)
			}
			return i, nil
		case chainIncomplete:
			if undecided < 0 {
				undecided = i
			}
		}
	}
	return len(b), nil
}

// isBoundary reports whether off starts a record of msgs or is the end.
func isBoundary(msgs []Message, off, end int64) bool {
	if off == end {
		return true
	}
	i := sort.Search(len(msgs), func(i int) bool { return msgs[i].Offset >= off })
	return i < len(msgs) && msgs[i].Offset == off
}

// ApplyGap returns the records expected when bytes [from, to) of the
// stream b (expected records msgs) are never captured. The rule, derived
// from nep_network.ino and not from the decoder:
//
//   - before the gap every record is emitted once its last byte is seen: a
//     message is run when its last payload byte is read, and a length byte
//     of 100 or more is dropped alone with the next byte read as a length,
//     so nothing before the gap waits for what follows. A record that ends
//     by from stays; a message cut by the gap is a skipped run of the bytes
//     it has before from (a run of garbage cut by it just ends at from).
//   - the gap is one record.
//   - after the gap nothing of the device's state is known: neither where
//     it is in its framing (the missing bytes may have held any lengths) nor
//     which type byte its buffer holds (they may have held any message).
//     Decoding starts afresh at the first offset from to where SyncRun
//     well-formed messages start ([FirstSync]); the first of them has a
//     length of 1 or more, so it sets the type byte again. The bytes before
//     it are one skipped run. That offset must start a record of msgs (when
//     it falls inside one, the decoder's output there is not this
//     encoder's to say, and ApplyGap returns an error).
func ApplyGap(b []byte, msgs []Message, from, to int64) ([]Message, error) {
	if from < 0 || to <= from || to > int64(len(b)) {
		return nil, fmt.Errorf("neptuneenc: gap [%d,%d) outside [0,%d)", from, to, len(b))
	}
	s, err := FirstSync(b, int(to))
	if err != nil {
		return nil, fmt.Errorf("neptuneenc: after the gap [%d,%d): %w", from, to, err)
	}
	sync := int64(s)
	if !isBoundary(msgs, sync, int64(len(b))) {
		return nil, fmt.Errorf("neptuneenc: after the gap [%d,%d) the decoder resynchronises at %d, inside a message", from, to, sync)
	}
	var out []Message
	for _, m := range msgs {
		switch {
		case m.End() <= from:
			out = append(out, m)
		case m.Offset < from:
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
	return mergeSkipped(out), nil
}
