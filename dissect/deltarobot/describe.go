package deltarobot

import (
	"encoding/binary"
	"fmt"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// This file is the protocol's description, written once (protocols.md
// §4.2): the size nibble ([frame]), the message table ([messages]) with
// each content's layout, and what the declarations, the decoder and the
// encoder take from them. What the layout vocabulary cannot say is a hook
// in deltarobot.go: the magic's and version's warnings, a ping's id_hex and
// its pong's rtt_ms, a reason's text, the curve and unknown ids.

// message is one known message: its full id, record type, the layout of
// its content (nil: the hook decodes it alone) and what its record type
// means to consumers.
type message struct {
	id   uint16
	name string
	doc  string
	seq  []layout.Field
	// hook runs after the content's layout is decoded (always, also
	// without Decode: it checks, warns and keeps the ping table); nil:
	// the layout says everything.
	hook func(p *parser, c *dissect.Ctx, body []byte)
	// more declares what the hook adds to the record type.
	more func(*dissect.TypeDecl)
}

// messages is the table of protocol v6 (a new slice on each call).
func messages() []message {
	f4 := func(id, doc string) layout.Field { return layout.Field{ID: id, Type: "f4", Doc: doc} }
	vector := func(what string) []layout.Field {
		return []layout.Field{
			f4("x", what+": x coordinate"),
			f4("y", what+": y coordinate"),
			f4("z", what+": z coordinate"),
			f4("u", "fourth float of the vector, unused by the spec"),
		}
	}
	pingID := []layout.Field{{ID: "id", Type: "u8", Doc: "the ping's random 64-bit number, echoed by its pong"}}
	idHex := dissect.FieldDecl{Name: "id_hex", Kind: dissect.KindString, Required: true, Doc: `id as "0x" and 16 lower-case hex digits, exact in every JSON reader`}
	return []message{
		{id: idMagic, name: typeMagic, doc: "handshake message 0x3001, first of each direction",
			seq:  []layout.Field{{ID: "magic", Type: "str", Size: layout.Num(8), Doc: `the 8 content bytes as text, "DeltaRVr" (else a warning)`}},
			hook: (*parser).magic},
		{id: idVersion, name: typeVersion, doc: "handshake message 0x2002, second of each direction",
			seq:  []layout.Field{{ID: "version", Type: "u4", Doc: "protocol version, 1 (else a warning)"}},
			hook: (*parser).version},
		{id: idPosition, name: typePosition, doc: "current actuator position (0x4003)", seq: vector("actuator position"),
			more: func(d *dissect.TypeDecl) { d.Pose = &dissect.Pose{Name: "actuator"} }},
		{id: idPing, name: typePing, doc: "ping (0x3004), sent by the leader to show the connection is alive",
			seq: pingID, hook: (*parser).ping,
			more: func(d *dissect.TypeDecl) {
				d.Fields = append(d.Fields, idHex)
				d.Exchange, d.Heartbeat = dissect.Exchange{Role: dissect.Request}, true
			}},
		{id: idPong, name: typePong, doc: "pong (0x3005), the follower's answer to a ping",
			seq: pingID, hook: (*parser).pong,
			more: func(d *dissect.TypeDecl) {
				d.Fields = append(d.Fields, idHex, dissect.FieldDecl{
					Name: "rtt_ms", Kind: dissect.KindFloat, Unit: "ms", Role: dissect.RoleLatency,
					Doc: "pong capture time minus its ping's (present when the ping was seen)",
				})
				d.Exchange, d.Heartbeat = dissect.Exchange{Role: dissect.Reply, Answers: typePing}, true
			}},
		{id: idEOT, name: typeEOT, doc: "end of transmission (0xF006): the sender is about to close",
			seq:  []layout.Field{{ID: "reason", Type: "str", SizeEOS: true, Doc: `the optional ASCII reason, "" when none`}},
			hook: (*parser).eot},
		{id: idDirection, name: typeDirection, doc: "current direction vector of actuation (0x4007)", seq: vector("direction")},
		{id: idDesired, name: typeDesired, doc: "desired direction vector of actuation (0x4008)", seq: vector("desired direction")},
		// A point is an array [x, y, z], which the vocabulary (a nested
		// type is an object) cannot say; trailing bytes are a warning, not
		// damage: a hook.
		{id: idCurve, name: typeCurve, doc: "the exercise's curve (0xF009)", hook: (*parser).curve,
			more: func(d *dissect.TypeDecl) {
				d.Polyline = "points"
				d.Fields = []dissect.FieldDecl{{Name: "points", Kind: dissect.KindArray, Required: true, Doc: "the curve's points in order, each [x, y, z]",
					Elem: &dissect.FieldDecl{Kind: dissect.KindArray, Doc: "one point [x, y, z]",
						Elem: &dissect.FieldDecl{Kind: dissect.KindFloat32, Doc: "a coordinate"}}}}
			}},
	}
}

// unknownDecl declares the record of an id the table does not hold (the
// hook unknown): its message_id is the header's, not content.
func unknownDecl() dissect.TypeDecl {
	return dissect.TypeDecl{Type: typeUnknown, Doc: "a message of an unknown id, or a known type under another size id (with a warning)", Fields: []dissect.FieldDecl{
		{Name: "message_id", Kind: dissect.KindInt, Required: true, Doc: "the 16-bit message id"},
		{Name: "data", Kind: dissect.KindBytes, Required: true, Doc: "the message's content"},
	}}
}

// entry is a known message, compiled.
type entry struct {
	message
	t    int // layout type, -1: none
	size int // content bytes of a fixed size (0: variable)
}

// described is the compiled description, shared read-only by every
// stream of a protocol value.
type described struct {
	plan  *layout.Plan
	byLow [16]entry // by the 12-bit type; entry.id 0: none
	// fast holds, compact, the messages of a fixed size and no hook (the
	// vectors that make up the bulk of a stream), by the 12-bit type
	// (every type of the table is under 16)
	fast  [16]fastEntry
	decls []dissect.TypeDecl
}

// fastEntry is a message Parse reads by its layout alone, of numbers at
// fixed offsets.
type fastEntry struct {
	name string
	fx   layout.Fixed
	size int
	id   uint16 // an empty entry's id is one no message can have at its index
}

// describe compiles the table: each content's layout, checked against the
// size its id's nibble gives.
func describe() (*described, error) { return describeFrom(messages()) }

func describeFrom(ms []message) (*described, error) {
	s := layout.Schema{Endian: layout.LittleEndian}
	for _, m := range ms {
		if m.seq != nil {
			s.Types = append(s.Types, layout.Type{Name: m.name, Doc: m.doc, Seq: m.seq})
		}
	}
	plan, err := layout.Compile(&s, layout.Limits{})
	if err != nil {
		return nil, err
	}
	d := &described{plan: plan}
	for i := range d.fast {
		d.fast[i].id = uint16(i ^ 1) // looked up at id&0xf: never found
	}
	for _, m := range ms {
		low := m.id & 0xfff
		if int(low) >= len(d.byLow) || low == 0 || d.byLow[low].id != 0 {
			return nil, fmt.Errorf("deltarobot: message 0x%04x: type 0x%03x out of the table or given twice", m.id, low)
		}
		e := entry{message: m, t: plan.Type(m.name)}
		_, n, varLen, ok := frame(m.id)
		if !ok {
			return nil, fmt.Errorf("deltarobot: message 0x%04x: size id 0x%x has no length", m.id, m.id>>12)
		}
		if !varLen {
			e.size = n
			if e.t >= 0 && plan.MinSize(e.t) != int64(n) {
				return nil, fmt.Errorf("deltarobot: message 0x%04x: its layout takes %d bytes, its size id says %d", m.id, plan.MinSize(e.t), n)
			}
		}
		d.byLow[low] = e
		if e.hook == nil && e.size > 0 && e.t >= 0 {
			if fx, ok := plan.Fixed(e.t); ok {
				d.fast[low] = fastEntry{name: e.name, fx: fx, size: e.size, id: e.id}
			}
		}
		decl := dissect.TypeDecl{Type: m.name, Doc: m.doc}
		if e.t >= 0 {
			decl.Fields = plan.Fields(e.t)
		}
		if m.more != nil {
			m.more(&decl)
		}
		d.decls = append(d.decls, decl)
	}
	d.decls = append(d.decls, unknownDecl())
	return d, nil
}

// lookup returns the known message of this full id, or nil.
func (d *described) lookup(id uint16) *entry {
	if t := id & 0xfff; t < uint16(len(d.byLow)) && t != 0 && d.byLow[t].id == id {
		return &d.byLow[t]
	}
	return nil
}

// Append encodes a message of the table with the content its layout
// records (fields as Parse records them, without the hooks' additions)
// and appends it to dst: the id, for a variable size the u32 LE count,
// and the content. It is the description's encoder, for fuzz seeds and
// test inputs; the curve, whose content is a hook's, is not encoded.
func Append(dst []byte, typ string, fields dissect.Fields) ([]byte, error) {
	d, err := describe()
	if err != nil {
		return dst, err
	}
	for i := range d.byLow {
		e := &d.byLow[i]
		if e.id == 0 || e.name != typ {
			continue
		}
		if e.t < 0 {
			return dst, fmt.Errorf("deltarobot: %s has no layout to encode", typ)
		}
		body, err := d.plan.Append(nil, e.t, fields)
		if err != nil {
			return dst, err
		}
		dst = binary.LittleEndian.AppendUint16(dst, e.id)
		if e.size == 0 {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(body)))
		} else if len(body) != e.size {
			return dst, fmt.Errorf("deltarobot: %s: %d content bytes, its size id says %d", typ, len(body), e.size)
		}
		return append(dst, body...), nil
	}
	return dst, fmt.Errorf("deltarobot: no message type %q in the table", typ)
}
