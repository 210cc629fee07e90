package roboidenc

import (
	"fmt"
	"sort"
	"time"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// Directions of a flow. The client sends first, so dissect numbers its
// direction 0.
const (
	Client = 0 // the roboid client (a robot or a Unity scene)
	Site   = 1 // the Roboid Site
)

// RoleName returns "client" or "site".
func RoleName(dir int) string {
	if dir == Client {
		return "client"
	}
	return "site"
}

// Mag describes how a magnitude is written. The zero Mag is no magnitude.
type Mag struct {
	Kind string  // "u8", "u16", "f16", "u32", "f32", or "" for none
	V    float64 // the number to encode (rounded to the kind)
}

// U8 is a 1-byte unsigned magnitude.
func U8(v uint8) Mag { return Mag{"u8", float64(v)} }

// U16 is a 2-byte unsigned little-endian magnitude.
func U16(v uint16) Mag { return Mag{"u16", float64(v)} }

// F16 is a 2-byte magnitude as a little-endian half float.
func F16(v float32) Mag { return Mag{"f16", float64(v)} }

// U32 is a 4-byte unsigned little-endian magnitude.
func U32(v uint32) Mag { return Mag{"u32", float64(v)} }

// F32 is a 4-byte magnitude as a little-endian single float.
func F32(v float32) Mag { return Mag{"f32", float64(v)} }

// NoMag is no magnitude.
func NoMag() Mag { return Mag{} }

// bytes returns the magnitude bytes and the value they hold exactly.
func (m Mag) bytes() ([]byte, float64) {
	switch m.Kind {
	case "u8":
		return Mag8(byte(m.V)), float64(byte(m.V))
	case "u16":
		return Mag16(uint16(m.V)), float64(uint16(m.V))
	case "f16":
		h := Float16(float32(m.V))
		return Mag16(h), float64(Float16Value(h))
	case "u32":
		return Mag32(uint32(m.V)), float64(uint32(m.V))
	case "f32":
		return MagF32(float32(m.V)), float64(float32(m.V))
	}
	return nil, 0
}

// V returns a typed value with the given semantics, one angle byte per
// entry of anglesDeg (made with [Angle8]) and magnitude m.
func V(semantics byte, anglesDeg []float64, m Mag) ValueTruth {
	angles := make([]byte, len(anglesDeg))
	for i, d := range anglesDeg {
		angles[i] = Angle8(d)
	}
	mag, exact := m.bytes()
	return ValueTruth{
		Value:    NewValue(semantics, angles, mag),
		Intended: Intended{AnglesDeg: append([]float64{}, anglesDeg...), MagKind: m.Kind, Mag: exact},
	}
}

// Lit returns a typed value with an explicit data-type byte and value bytes
// (for the spec's examples written as bytes); it has no intended meaning
// beyond the bytes.
func Lit(dt byte, data ...byte) ValueTruth { return ValueTruth{Value: RawValue(dt, data)} }

// Datagram is one datagram of a flow: direction, time and its byte range
// in Session.Stream[Dir].
type Datagram struct {
	Dir        int
	At         time.Duration
	Start, End int64
}

// Session is a UDP flow: each direction's datagrams as one stream of bytes,
// the records each should produce, and the datagrams in time order.
type Session struct {
	Stream    [2][]byte
	Truth     [2][]Message
	Datagrams []Datagram
}

// Flow builds a [Session] datagram by datagram, one message per datagram.
// The zero Flow is ready to use.
type Flow struct {
	s    Session
	last [2]time.Duration
	err  error
}

func (f *Flow) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("roboidenc: "+format, args...)
	}
}

// send appends one datagram and its expected record.
func (f *Flow) send(dir int, at time.Duration, wire []byte, m Message) {
	dir &= 1
	if len(wire) == 0 {
		f.fail("empty datagram")
		return
	}
	if at < f.last[dir] {
		f.fail("%s datagram at %v before the previous one at %v", RoleName(dir), at, f.last[dir])
		return
	}
	f.last[dir] = at
	start := int64(len(f.s.Stream[dir]))
	m.Offset, m.Length, m.Wire = start, int64(len(wire)), append([]byte{}, wire...)
	f.s.Stream[dir] = append(f.s.Stream[dir], wire...)
	f.s.Truth[dir] = append(f.s.Truth[dir], m)
	f.s.Datagrams = append(f.s.Datagrams, Datagram{Dir: dir, At: at, Start: start, End: start + int64(len(wire))})
}

// Client sends a Client message.
func (f *Flow) Client(dir int, at time.Duration) {
	f.send(dir, at, ClientMsg(), Message{Type: TypeClient, Data: []byte{}, Warn: truth.No})
}

// NetworkID sends a NetworkId message.
func (f *Flow) NetworkID(dir int, at time.Duration, id byte) {
	f.send(dir, at, NetworkIDMsg(id), Message{Type: TypeNetworkID, NetworkID: id, HasNetworkID: true, Data: []byte{}, Warn: truth.No})
}

// NewThing sends a NewThing message.
func (f *Flow) NewThing(dir int, at time.Duration, net, thing, thingType byte) {
	f.send(dir, at, NewThingMsg(net, thing, thingType), Message{Type: TypeNewThing, NetworkID: net, ThingID: thing,
		HasNetworkID: true, HasThingID: true, Data: []byte{thingType}, Warn: truth.No})
}

// Investigate sends an Investigate message.
func (f *Flow) Investigate(dir int, at time.Duration, net, thing byte) {
	f.send(dir, at, InvestigateMsg(net, thing), Message{Type: TypeInvestigate, NetworkID: net, ThingID: thing,
		HasNetworkID: true, HasThingID: true, Data: []byte{}, Warn: truth.No})
}

// ModelURL sends a ModelURL message.
func (f *Flow) ModelURL(dir int, at time.Duration, net, thing byte, url string) {
	f.send(dir, at, ModelURLMsg(net, thing, url), Message{Type: TypeModelURL, NetworkID: net, ThingID: thing,
		HasNetworkID: true, HasThingID: true, Data: []byte(url), Warn: truth.No})
}

// Unknown sends a message with an id that is not one of the protocol's
// six: an "unknown" record with message_id, data and a warning.
func (f *Flow) Unknown(dir int, at time.Duration, id byte, body []byte) {
	if _, ok := TypeName(id); ok {
		f.fail("Unknown: id %#02x is known", id)
		return
	}
	f.send(dir, at, Msg(id, body...), Message{Type: TypeUnknown, MessageID: id, Data: append([]byte{}, body...), Warn: truth.Yes})
}

func poseWarn(vals []ValueTruth) truth.Want {
	if len(vals) == 0 {
		return truth.Any // well-formed, but a decoder may remark on a Pose without values
	}
	for _, v := range vals {
		if _, ok := SemanticsName(v.DataType); !ok || v.Truncated {
			return truth.Yes
		}
	}
	return truth.No
}

// Pose sends a Pose with the given values (a warning is expected when one
// has undefined semantics; with no values, warnings are not asserted).
func (f *Flow) Pose(dir int, at time.Duration, net, thing byte, vals ...ValueTruth) {
	vs := make([]Value, len(vals))
	for i, v := range vals {
		vs[i] = v.Value
	}
	f.send(dir, at, PoseMsg(net, thing, vs...), Message{Type: TypePose, NetworkID: net, ThingID: thing,
		HasNetworkID: true, HasThingID: true, Values: append([]ValueTruth{}, vals...), Warn: poseWarn(vals)})
}

// PoseExtension sends a Pose whose values are followed by the data type
// 0x00 (an undefined extension) and ext: decoding stops at the 0x00, whose
// bytes to the end are the record's rest, with a warning.
func (f *Flow) PoseExtension(dir int, at time.Duration, net, thing byte, vals []ValueTruth, ext []byte) {
	wire := []byte{IDPose, net, thing}
	for _, v := range vals {
		wire = append(wire, v.Bytes()...)
	}
	rest := append([]byte{0x00}, ext...)
	wire = append(wire, rest...)
	f.send(dir, at, wire, Message{Type: TypePose, NetworkID: net, ThingID: thing, HasNetworkID: true, HasThingID: true,
		Values: append([]ValueTruth{}, vals...), Rest: rest, HasRest: true, Warn: truth.Yes})
}

// PoseTruncated sends a Pose whose last value, last, is cut after its
// data-type byte and keep of its bytes (0 <= keep < its size): the datagram
// ends inside it.
func (f *Flow) PoseTruncated(dir int, at time.Duration, net, thing byte, vals []ValueTruth, last ValueTruth, keep int) {
	raw := last.Raw()
	if keep < 0 || keep >= len(raw) {
		f.fail("PoseTruncated: keep %d of %d bytes is not a truncation", keep, len(raw))
		return
	}
	a := min(keep, len(last.Angles))
	cut := ValueTruth{Value: Value{DataType: last.DataType, Angles: append([]byte{}, raw[:a]...), Magnitude: append([]byte{}, raw[a:keep]...)}, Truncated: true}
	wire := []byte{IDPose, net, thing}
	for _, v := range vals {
		wire = append(wire, v.Bytes()...)
	}
	wire = append(wire, last.DataType)
	wire = append(wire, raw[:keep]...)
	all := append(append([]ValueTruth{}, vals...), cut)
	f.send(dir, at, wire, Message{Type: TypePose, NetworkID: net, ThingID: thing, HasNetworkID: true, HasThingID: true,
		Values: all, Warn: truth.Yes})
}

// PoseShort sends a Pose datagram too short for its ids: [0x10] and ids
// (0 or 1 bytes). The record keeps the ids that are there and has a
// warning; whether it has an empty "values" is not asserted.
func (f *Flow) PoseShort(dir int, at time.Duration, ids ...byte) {
	if len(ids) > 1 {
		f.fail("PoseShort: %d ids is not short", len(ids))
		return
	}
	m := Message{Type: TypePose, ShortIDs: true, Warn: truth.Yes}
	if len(ids) == 1 {
		m.NetworkID, m.HasNetworkID = ids[0], true
	}
	f.send(dir, at, Msg(IDPose, ids...), m)
}

// Finish returns the session, datagrams in time order (stable).
func (f *Flow) Finish() (*Session, error) {
	if f.err != nil {
		return nil, f.err
	}
	s := f.s
	s.Datagrams = append([]Datagram(nil), f.s.Datagrams...)
	sort.SliceStable(s.Datagrams, func(i, j int) bool { return s.Datagrams[i].At < s.Datagrams[j].At })
	return &s, nil
}
