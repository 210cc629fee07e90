package neptune

import (
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

const wikiName = "neptune-wiki"

// wikiHeader is the size of the wiki header: type, priority, sequence.
const wikiHeader = 3

// wikiDescription is the wiki format, described once: the header every
// packet starts with, each packet type's body (from the wiki's tables,
// numbered as in NepPacketTypes.h), and the packet types by number. It
// gives the declarations, the decoder and the encoder (neptune_test).
// intType is the wiki's "int": s4 (a PC's int32) or s2 (an AVR's int16).
func wikiDescription(intType string) (layout.Schema, layout.Switch) {
	intDoc := func(what string) string { return what + " (int32, or int16 with --neptune-int16)" }
	speed := layout.Field{ID: "speed", Type: "f4", Doc: "raw motor speed, 0.0-1.0"}
	motor := layout.Field{ID: "motor_id", Type: "u1", Doc: "the motor to run"}
	// packet is a packet type: the header, then the body.
	packet := func(name, doc string, body ...layout.Field) layout.Type {
		return layout.Type{Name: name, Doc: doc, Seq: append([]layout.Field{
			{Type: "u1", Doc: "packet type"},
			{ID: "priority", Type: "u1", Doc: "the header's priority byte"},
			{ID: "sequence", Type: "u1", Role: dissect.RoleSequence, Doc: "the header's sequence number, 0-255"},
		}, body...)}
	}
	s := layout.Schema{
		Endian: layout.LittleEndian,
		Types: []layout.Type{
			packet(typeSpeedMotor, "packet type 1 (RAW_MOTOR_TYPE, the wiki's Speed Motor)",
				motor,
				layout.Field{ID: "direction", Type: "bool", Enum: "direction", Doc: "direction byte: true forward, false reverse"},
				speed,
				layout.Field{ID: "duration", Type: intType, Doc: intDoc("cycles to stay at the speed")},
			),
			packet(typePositionMotor, "packet type 2 (POSITION_MOTOR_TYPE)",
				motor,
				layout.Field{ID: "degree", Type: "f4", Doc: "rotation, in degrees or radians by the motor's configuration; negative: reverse"},
				speed,
			),
			packet(typeRelay, "packet type 3 (RELAY_CONTROL_TYPE)",
				layout.Field{ID: "relay_id", Type: "u1", Doc: "the relay"},
				layout.Field{ID: "enable", Type: "bool", Doc: "relay on (a byte other than 0 or 1 is taken as true, with a warning)"},
			),
			packet(typeSensorData, "packet type 4 (SENSOR_DATA_TYPE)",
				layout.Field{ID: "sensor_type", Type: intType, Doc: intDoc("sensor type")},
				layout.Field{ID: "sensor_id", Type: intType, Doc: intDoc("sensor id")},
				layout.Field{ID: "data", SizeEOS: true, Doc: "the reading: the rest of the datagram"},
			),
			packet(typeUnknown, "", layout.Field{ID: "data", SizeEOS: true}),
		},
		Enums: []layout.Enum{{Name: "direction", Values: []layout.EnumValue{{Value: 0, Name: "reverse"}, {Value: 1, Name: "forward"}}}},
	}
	packets := layout.Switch{On: "type", Default: typeUnknown, Cases: []layout.Case{
		{Value: 1, Type: typeSpeedMotor}, // RAW_MOTOR_TYPE
		{Value: 2, Type: typePositionMotor},
		{Value: 3, Type: typeRelay},
		{Value: 4, Type: typeSensorData},
	}}
	return s, packets
}

// Record types of the wiki format.
const (
	typeSpeedMotor    = "speed_motor"
	typePositionMotor = "position_motor"
	typeRelay         = "relay"
	typeSensorData    = "sensor_data"
)

// WikiOptions configure [NewWiki].
type WikiOptions struct {
	// Int16 reads the wiki's "int" fields (speed_motor duration,
	// sensor_data sensor_type and sensor_id) as int16 little-endian, as an
	// AVR compiler lays them out; by default they are int32 little-endian,
	// as in a PC C++ program.
	Int16 bool
}

// wiki is the compiled description.
type wiki struct {
	int16   bool
	plan    *layout.Plan
	header  int      // the header type
	unknown int      // the unknown type
	types   [256]int // the body type of each packet type byte
	known   []int    // the packet types' body types, in wire-number order
	need    []string // by type: "8", "at least 8", what each body needs, for warnings
}

// NewWiki returns the Neptune ROV packet format of the project wiki
// ("Communication Protocol"): a 3-byte header (type, priority, sequence)
// then a body per type, one packet per UDP datagram. The format has no
// length field, so it cannot be framed on a byte stream; it has no default
// port and no content detection, and is used only with a decode-as rule
// such as "udp.port==9000,neptune-wiki".
func NewWiki(opt WikiOptions) dissect.Protocol {
	intType := "s4"
	if opt.Int16 {
		intType = "s2"
	}
	s, packets := wikiDescription(intType)
	plan, err := layout.Compile(&s, layout.Limits{})
	if err != nil {
		panic("neptune: the wiki description does not compile: " + err.Error()) // a test compiles it
	}
	w := &wiki{int16: opt.Int16, plan: plan, unknown: plan.Type(packets.Default), need: make([]string, len(s.Types))}
	for i := range w.types {
		w.types[i] = w.unknown
	}
	for _, c := range packets.Cases {
		t := plan.Type(c.Type)
		w.types[c.Value] = t
		w.known = append(w.known, t)
		seq := s.Types[t].Seq
		need := strconv.FormatInt(plan.MinSize(t)-wikiHeader, 10)
		if seq[len(seq)-1].SizeEOS {
			need = "at least " + need
		}
		w.need[t] = need
	}
	return w
}

// Info describes the format (a new value on each call).
func (w *wiki) Info() dissect.Info {
	return dissect.Info{
		Name:       wikiName,
		Proto:      proto,
		Title:      "Neptune ROV wiki packet format, one packet per UDP datagram (int = " + w.intWidth() + " LE)",
		Transports: []dissect.Transport{dissect.UDP},
		Detection:  "",
		Types:      w.decls(),
	}
}

func (w *wiki) intWidth() string {
	if w.int16 {
		return "int16"
	}
	return "int32"
}

// decls declares the packet types from the description, then trailing. No field is required: a datagram is
// decoded as far as it goes (one byte is a record with its type and no
// field), and a body's field cut short is left out, its bytes shown as
// trailing. The speeds are the wiki's raw 0.0-1.0 and a position_motor
// degree is degrees or radians by the motor's configuration, so none has
// a unit. unknown is the device framing's declaration ([unknownDecl]),
// which the registry takes once for the shared proto key.
func (w *wiki) decls() []dissect.TypeDecl {
	var out []dissect.TypeDecl
	for _, t := range w.known {
		fs := append(w.plan.Fields(t), dissect.FieldDecl{Name: "trailing", Kind: dissect.KindBytes, Doc: "bytes after the body, or the part of a field cut short (with a warning)"})
		for i := range fs {
			fs[i].Required = false
		}
		out = append(out, dissect.TypeDecl{Type: w.plan.Name(t), Doc: w.plan.Doc(t), Fields: fs})
	}
	return append(out, unknownDecl())
}

// Detect always answers No: the header has no constant bytes.
func (w *wiki) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict { return dissect.No }

func (w *wiki) NewParser(*dissect.StreamInfo) dissect.Parser {
	return &wikiParser{w: w, dec: w.plan.NewDecoder()}
}

type wikiParser struct {
	w   *wiki
	dec *layout.Decoder
}

// Parse decodes the datagram that b holds to its end as one packet; it
// never reports an error. Given a buffer that does not end a datagram
// (c.Final false) it asks for more: without a length field the end of a
// packet is the end of its datagram. Bytes values in the record alias b.
func (p *wikiParser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	if !c.Final || len(b) == 0 {
		return 0, dissect.ErrNeedMore
	}
	r := c.Rec
	w := p.w
	t := w.types[b[0]]
	r.Type = w.plan.Name(t)
	if len(b) < wikiHeader {
		r.Warnf("datagram of %d bytes is shorter than the %d-byte header (type, priority, sequence)", len(b), wikiHeader)
	}
	if t == w.unknown {
		r.Warnf("type %d has no number in NepPacketTypes.h", b[0])
	}
	var err error
	n, sure := 0, false
	if c.Decode {
		n, err = p.dec.Decode(r, t, b)
	} else if n, sure = w.plan.Sure(t, len(b)); !sure {
		n, err = p.dec.Check(r, t, b) // the same warnings, no fields
	}
	de, _ := err.(*layout.DecodeError)
	switch {
	case de != nil && de.Offset < wikiHeader: // warned above
	case de != nil:
		// Every field has a fixed size but the last of sensor_data and
		// unknown (the rest), so the only error is a field the bytes end
		// in or before.
		if de.Offset == len(b) {
			r.Warnf("%s: body is %d bytes, needs %s (int = %s): %s missing", r.Type, len(b)-wikiHeader, w.need[t], w.intWidth(), de.Field)
			break
		}
		r.Warnf("%s: body is %d bytes, needs %s (int = %s): %s cut short", r.Type, len(b)-wikiHeader, w.need[t], w.intWidth(), de.Field)
		r.Add("trailing", dissect.Bytes(b[de.Offset:]))
	case n < len(b):
		r.Warnf("%s: %d bytes after the %d-byte body", r.Type, len(b)-n, n-wikiHeader)
		r.Add("trailing", dissect.Bytes(b[n:]))
	}
	if !c.Decode {
		r.Fields = r.Fields[:0]
	}
	return len(b), nil
}

// Sync never finds a packet inside a datagram: a packet starts only where a
// datagram starts, and the framework realigns there by itself.
func (p *wikiParser) Sync(_ *dissect.Ctx, b []byte) (int, bool) { return len(b), false }
