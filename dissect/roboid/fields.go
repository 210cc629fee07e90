package roboid

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// message is one message id, its record type and its layout (the id byte
// first).
type message struct {
	id     byte
	record string
	layout layout.Type
}

// messages describes every message the README lists, once: the
// declarations, the decoder and the ids come from here. Which messages
// carry which ids is our reading of the README's message list. A Pose's
// typed values, whose sizes are coded in nibbles of each value's
// data-type byte, are the Go hook of roboid.go (frameValues).
func messages() []message {
	id := layout.Field{Type: "u1", Doc: "message id"}
	netID := layout.Field{ID: "network_id", Type: "u1", Doc: "network id (absent when the datagram ends before it)"}
	thingID := layout.Field{ID: "thing_id", Type: "u1", Doc: "thing id (absent when the datagram ends before it)"}
	data := layout.Field{ID: "data", SizeEOS: true, Doc: "the message's bytes after its ids"}
	msg := func(id8 byte, record, name, doc string, seq ...layout.Field) message {
		return message{id: id8, record: record, layout: layout.Type{Name: name, Doc: doc, Seq: append([]layout.Field{id}, seq...)}}
	}
	return []message{
		msg(IDClient, TypeClient, "client", "0xA0: a client's first message after connecting", data),
		msg(IDNetworkID, TypeNetworkID, "network_id", "0xA1: the site assigns the client its network id", netID, data),
		msg(IDPose, TypePose, "pose", "0x10: typed values (position, orientation, ...) of a thing", netID, thingID),
		msg(IDNewThing, TypeNewThing, "new_thing", "0x80: answer to Investigate, carrying the thing's type", netID, thingID, data),
		msg(IDInvestigate, TypeInvestigate, "investigate", "0x81: asks about a thing a Pose named", netID, thingID, data),
		msg(IDModelURL, TypeModelURL, "model_url", "0x90: a link to the thing's model", netID, thingID, data),
	}
}

// plan is the compiled description, with what Parse needs of each
// message id in one place.
type plan struct {
	p      *layout.Plan
	ids    [256]idInfo
	record []string // by layout type
	pose   int
}

type idInfo struct {
	t      int    // the layout type; -1: unknown
	record string // the record type
	ids    int    // where the id bytes end (the type's least size)
	// quiet: from this many bytes on, the type cannot warn nor fail
	// (layout's Sure): without decoding, nothing to read; -1: never
	quiet int
}

func compile() *plan {
	ms := messages()
	s := layout.Schema{}
	for _, m := range ms {
		s.Types = append(s.Types, m.layout)
	}
	p, err := layout.Compile(&s, layout.Limits{})
	if err != nil {
		panic("roboid: the description does not compile: " + err.Error()) // every test compiles it
	}
	pl := &plan{p: p, record: make([]string, len(ms)), pose: p.Type("pose")}
	for i := range pl.ids {
		pl.ids[i].t = -1
	}
	for _, m := range ms {
		t := p.Type(m.layout.Name)
		pl.record[t] = m.record
		least := int(p.MinSize(t))
		quiet := -1
		if _, ok := p.Sure(t, least); ok {
			quiet = least
		}
		pl.ids[m.id] = idInfo{t: t, record: m.record, ids: least, quiet: quiet}
	}
	return pl
}

// decls declares every record type Parse emits (a new slice on each call:
// [dissect.Protocol.Info] shares nothing): each message's fields from its
// layout, then a Pose's values and rest, and unknown. The fields that
// take bytes are optional: a datagram that ends before an id gives a
// record without it (and a warning); data, the rest of the datagram, is
// always there (empty at worst). A Pose's values are objects whose keys
// depend on the data type: the five that describe the value always, then
// either truncated or the interpretation its syntax allows. The spec
// gives the magnitudes no unit (their meaning depends on the semantics).
func (pl *plan) decls() []dissect.TypeDecl {
	var out []dissect.TypeDecl
	for t, record := range pl.record {
		fs := pl.p.Fields(t)
		for i := range fs {
			fs[i].Required = fs[i].Kind == dissect.KindBytes
		}
		if t == pl.pose {
			fs = append(fs,
				dissect.FieldDecl{Name: "values", Kind: dissect.KindArray, Doc: "the typed values, in order (absent when the datagram ends before the thing id)",
					Elem: &dissect.FieldDecl{Kind: dissect.KindObject, Doc: "one typed value", Fields: valueDecl()}},
				dissect.FieldDecl{Name: "rest", Kind: dissect.KindBytes, Doc: "bytes from the extension data type 0x00, or past the first 1024 values, not decoded"})
		}
		out = append(out, dissect.TypeDecl{Type: record, Doc: pl.p.Doc(t), Fields: fs})
	}
	return append(out, dissect.TypeDecl{Type: TypeUnknown, Doc: "a message id the README does not list (with a warning)", Fields: []dissect.FieldDecl{
		{Name: "message_id", Kind: dissect.KindInt, Required: true, Doc: "the message id byte"},
		{Name: "data", Kind: dissect.KindBytes, Required: true, Doc: "the bytes after the message id"},
	}})
}

// valueDecl declares the keys of one value of a Pose, in the order value
// writes them.
func valueDecl() []dissect.FieldDecl {
	return []dissect.FieldDecl{
		{Name: "data_type", Kind: dissect.KindString, Required: true, Doc: `the data type byte as hex, e.g. "0x62"`},
		{Name: "semantics", Kind: dissect.KindString, Required: true, Enum: []string{
			"position", "linear_velocity", "linear_acceleration", "orientation",
			"angular_velocity", "angular_acceleration", "direction", SemUndefined,
		}, Doc: "the low nibble's meaning"},
		{Name: "angular_bytes", Kind: dissect.KindUint, Required: true, Doc: "angle bytes, 0-3 (bits 7-6)"},
		{Name: "linear_bytes", Kind: dissect.KindUint, Required: true, Doc: "magnitude bytes, 0, 1, 2 or 4 (bits 5-4)"},
		{Name: "raw", Kind: dissect.KindBytes, Required: true, Doc: "the value's bytes after its data type"},
		{Name: "truncated", Kind: dissect.KindBool, Doc: "true when the datagram ends inside the value (then no interpretation)"},
		{Name: "angles_deg", Kind: dissect.KindArray, Unit: "deg", Doc: "each angle byte × 360/256, unsigned (an unverified encoding)",
			Elem: &dissect.FieldDecl{Kind: dissect.KindFloat, Unit: "deg", Doc: "one angle"}},
		{Name: "magnitude_uint", Kind: dissect.KindUint, Doc: "the magnitude bytes as an unsigned little-endian integer"},
		{Name: "magnitude_f16", Kind: dissect.KindFloat, Doc: "a 2-byte magnitude read as an IEEE 754 half, little-endian"},
		{Name: "magnitude_f32", Kind: dissect.KindFloat32, Doc: "a 4-byte magnitude read as an IEEE 754 single, little-endian"},
	}
}
