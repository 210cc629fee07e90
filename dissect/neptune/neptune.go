package neptune

import (
	"errors"
	"slices"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/framing"
)

const proto = "neptune"

// Device message types: the first payload byte, as dispatched by
// nep_network.ino.
const (
	msgAbort     = 0
	msgSetMotor  = 1
	msgTranslate = 2
	msgRotate    = 3
	msgStabilize = 4
	msgLamp      = 5
)

// Record types of the device framing.
const (
	typeAbort     = "abort"
	typeSetMotor  = "set_motor"
	typeTranslate = "translate"
	typeRotate    = "rotate"
	typeStabilize = "stabilize"
	typeLamp      = "lamp"
	typeUnknown   = "unknown"
)

const (
	// maxLen is the first length byte the device refuses: it flushes its
	// input instead of reading a message.
	maxLen = 100
	// chainLen is how many consecutive well-formed messages Sync wants.
	chainLen = 3
	// firstRelay and lastRelay are the set_motor ids that the motor
	// co-processor (motor_test.ino) drives as relays; 0 to firstRelay-1
	// are motors, ids past lastRelay are ignored.
	firstRelay = 5
	lastRelay  = 6
)

// wantLen is the payload length the device accepts for each type (0: any
// length, for abort).
var wantLen = [...]int{msgAbort: 0, msgSetMotor: 4, msgTranslate: 3, msgRotate: 3, msgStabilize: 2, msgLamp: 2}

var typeNames = [...]string{typeAbort, typeSetMotor, typeTranslate, typeRotate, typeStabilize, typeLamp}

var axisNames = [3]string{"x", "y", "z"}

// directions[min(dir, 1)] is a set_motor direction.
var directions = [2]string{"forward", "reverse"}

// relaySummary[id-firstRelay][min(dir, 1)] is the summary of a set_motor that
// switches a relay.
var relaySummary = [2][2]string{{"relay 5 off", "relay 5 on"}, {"relay 6 off", "relay 6 on"}}

type device struct {
	fr *framing.Framer
}

// New returns the Neptune ROV device protocol: the length-prefixed commands
// that the ROV's Arduino (nep_network.ino) reads on TCP port 1493, its
// default port. It has no content detection; other ports and serial links
// need a decode-as rule ("tcp.port==N,neptune", "serial,neptune").
func New() dissect.Protocol {
	fr, err := framing.New(deviceFraming())
	if err != nil {
		panic("neptune: the device framing does not compile: " + err.Error()) // every test runs it
	}
	return device{fr: fr}
}

// Info describes the protocol (a new value on each call).
func (device) Info() dissect.Info {
	return dissect.Info{
		Name:       proto,
		Proto:      proto,
		Title:      "Neptune ROV device commands (length byte, type, arguments; nep_network.ino)",
		Transports: []dissect.Transport{dissect.TCP, dissect.Serial},
		Ports:      []dissect.Port{{Transport: dissect.TCP, Port: 1493}},
		Detection:  "",
		Types:      deviceDecls(),
	}
}

// Detect always answers No: a one-byte length prefix is no signature.
func (device) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict { return dissect.No }

func (d device) NewParser(*dissect.StreamInfo) dissect.Parser { return &deviceParser{fr: d.fr} }

// deviceParser keeps, per direction, what the device keeps between
// messages: the type byte left in its packet buffer, which a length of 0
// runs again.
type deviceParser struct {
	fr   *framing.Framer
	dirs [2]dirState
}

type dirState struct {
	// prev is the type byte left in the device's buffer by the last message
	// of length 1 or more; 0 (abort) before any, the buffer being zeroed.
	prev byte
	// dropped: the byte before resumeAt was a length of 100 or more, which
	// the device drops; Sync resumes at once at resumeAt.
	dropped  bool
	resumeAt int64
}

// Parse frames and decodes the message at b[0]: a length byte, then that
// many payload bytes. The only error is code "bad_length": a length byte of
// 100 or more, which the device drops alone (Sync then resumes at the next
// byte). Bytes values in the record alias b.
func (pp *deviceParser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	s := &pp.dirs[c.Dir&1]
	n := pp.fr.Whole(b)
	if n == 0 {
		var err error
		n, err = pp.fr.Frame(b)
		switch err.(type) {
		case nil:
		case *framing.Bad:
			s.dropped, s.resumeAt = true, c.Offset+1
			return 0, dissect.Malformed(proto, "bad_length", 0, "length byte %d is 100 or more: the device drops this byte (its flush() discards nothing) and reads the next byte as a length", b[0])
		default: // framing.ErrShort
			return n, dissect.ErrNeedMore
		}
	}
	l := n - 1
	p := b[1:n]
	r := c.Rec
	if l == 0 {
		zeroLength(c, s)
		return n, nil
	}
	s.prev = p[0]
	t := p[0]
	if int(t) >= len(typeNames) {
		r.Type = typeUnknown
		r.Warnf("unknown message type %d", t)
		if c.Decode {
			r.Add("data", dissect.Bytes(p))
			r.Summary = "type=" + strconv.Itoa(int(t)) + " len=" + strconv.Itoa(l)
		}
		return n, nil
	}
	r.Type = typeNames[t]
	ok := t == msgAbort || l == wantLen[t]
	if !ok {
		r.Warnf("%s needs length %d, got %d: the device ignores it", r.Type, wantLen[t], l)
	}
	switch t {
	case msgSetMotor:
		setMotor(c, p, ok)
	case msgTranslate, msgRotate:
		move(c, p)
	case msgStabilize:
		if c.Decode && l >= 2 {
			r.Add("enable", dissect.Bool(p[1] != 0))
		}
	case msgLamp:
		if c.Decode && l >= 2 {
			r.Add("on", dissect.Bool(p[1] != 0))
		}
	}
	// The whole payload is shown when it is not the type's exact shape
	// (an abort with arguments, a wrong length).
	if c.Decode && (!ok || t == msgAbort && l > 1) {
		r.Add("data", dissect.Bytes(p))
	}
	return n, nil
}

// zeroLength decodes a length byte of 0. The device reads no payload and
// runs its handler on the type byte its buffer still holds (nep_network.ino
// run_command with len 0): an abort runs again, every other known type
// fails its length check and is ignored.
func zeroLength(c *dissect.Ctx, s *dirState) {
	r := c.Rec
	if c.Decode {
		r.Summary = "len=0"
	}
	switch {
	case int(s.prev) >= len(typeNames):
		r.Type = typeUnknown
		r.Warnf("length 0: the device runs the previous message's type %d again, which it does not know", s.prev)
	case s.prev == msgAbort:
		r.Type = typeAbort
		r.Warn("length 0: the device runs the previous message's type (abort) again, with no arguments")
	default:
		r.Type = typeNames[s.prev]
		r.Warnf("length 0: the device runs the previous message's type (%s) again with length 0, and ignores it", r.Type)
	}
}

// setMotor decodes [1, id, dir, magnitude] from what p holds.
func setMotor(c *dissect.Ctx, p []byte, ok bool) {
	r := c.Rec
	if len(p) >= 2 && p[1] > lastRelay {
		r.Warnf("set_motor: id %d is neither a motor (0-4) nor a relay (5-6): the co-processor ignores it", p[1])
	}
	if !c.Decode {
		return
	}
	if ok {
		// The bulk of a stream: fill the three fields in place.
		f := grow(r, 3)
		f[0] = dissect.Field{Key: "motor", Value: dissect.Uint(uint64(p[1]))}
		f[1] = dissect.Field{Key: "direction", Value: dissect.Str(directions[min(p[2], 1)])}
		f[2] = dissect.Field{Key: "magnitude", Value: dissect.Uint(uint64(p[3]))}
		if p[1] >= firstRelay && p[1] <= lastRelay {
			r.Add("relay_on", dissect.Bool(p[2] != 0))
			r.Summary = relaySummary[p[1]-firstRelay][min(p[2], 1)]
		}
		return
	}
	if len(p) >= 2 {
		r.Add("motor", dissect.Uint(uint64(p[1])))
	}
	if len(p) >= 3 {
		r.Add("direction", dissect.Str(directions[min(p[2], 1)]))
	}
	if len(p) >= 4 {
		r.Add("magnitude", dissect.Uint(uint64(p[3])))
	}
}

// grow appends n fields to r and returns them, to be filled in place.
func grow(r *dissect.Record, n int) []dissect.Field {
	l := len(r.Fields)
	r.Fields = slices.Grow(r.Fields, n)[:l+n]
	return r.Fields[l : l+n : l+n]
}

// move decodes translate and rotate: [type, axis, sign].
func move(c *dissect.Ctx, p []byte) {
	r := c.Rec
	if len(p) >= 2 && p[1] >= byte(len(axisNames)) {
		r.Warnf("%s: axis %d is not 0 (x), 1 (y) or 2 (z)", r.Type, p[1])
	}
	if !c.Decode {
		return
	}
	if len(p) == 3 && p[1] < byte(len(axisNames)) {
		f := grow(r, 2)
		f[0] = dissect.Field{Key: "axis", Value: dissect.Str(axisNames[p[1]])}
		f[1] = dissect.Field{Key: "sign", Value: dissect.Uint(uint64(p[2]))}
		return
	}
	if len(p) >= 2 {
		a := p[1]
		if int(a) < len(axisNames) {
			r.Add("axis", dissect.Str(axisNames[a]))
		} else {
			r.Add("axis", dissect.Str(strconv.Itoa(int(a))))
		}
	}
	if len(p) >= 3 {
		r.Add("sign", dissect.Uint(uint64(p[2])))
	}
}

// deviceFraming is how the device frames a message (nep_network.ino): a
// length byte, then that many payload bytes; a length of 100 or more
// (a frame past Max) is refused. Three whole messages in a row confirm a
// resync candidate (there is no check).
func deviceFraming() framing.Framing {
	return framing.Framing{
		Length:  &framing.Length{Offset: 0, Width: 1, Adjust: 1},
		Max:     maxLen,
		Confirm: chainLen,
	}
}

// syncLen is the payload length of each type in its usual shape, as Sync
// wants it: the length the device acts on, and 1 for an abort (the device
// takes an abort of any length, but a long one would let a run of garbage
// pass for a message).
var syncLen = [...]int{msgAbort: 1, msgSetMotor: 4, msgTranslate: 3, msgRotate: 3, msgStabilize: 2, msgLamp: 2}

// wellFormed frames a resync candidate's message as the framing does,
// refusing what Parse would take but the device would not act on: a
// length of 0 (it reruns a type byte a gap may have changed), an unknown
// type or a length that is not the type's syncLen.
func (pp *deviceParser) wellFormed(b []byte) (int, error) {
	if len(b) > 0 && b[0] == 0 {
		return 0, errNotWellFormed
	}
	if len(b) > 1 {
		if t := b[1]; int(t) >= len(syncLen) || int(b[0]) != syncLen[t] {
			return 0, errNotWellFormed
		}
	}
	return pp.fr.Frame(b)
}

var errNotWellFormed = errors.New("neptune: not a well-formed message")

// Sync returns the first offset of b where chainLen well-formed messages
// in a row frame, or the first where the bytes end before that is decided
// (with false) so that it is judged again with more bytes; len(b) when
// every offset is ruled out.
//
// Right after a dropped length byte (and no gap since) it returns (0,
// true): the device reads the next byte as a length. Otherwise (after a
// gap) nothing from before is trusted: a sync point starts a chain of
// well-formed messages, the first of length 1 or more, which sets the type
// byte a later length 0 reruns.
func (pp *deviceParser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	s := &pp.dirs[c.Dir&1]
	if s.dropped {
		s.dropped = false
		if c.Offset == s.resumeAt {
			return 0, true
		}
	}
	return pp.fr.Resync(b, false, pp.wellFormed)
}
