package roboid

import "github.com/dissect-tools/dissect/dissect"

// decls declares every record type Parse emits (a new slice on each call:
// [dissect.Protocol.Info] shares nothing). The ids after the message id
// are optional: a datagram that ends before them gives a record without
// them (and a warning). A Pose's values are objects whose keys depend on
// the data type: the five that describe the value always, then either
// truncated or the interpretation its syntax allows. The spec gives the
// magnitudes no unit (their meaning depends on the semantics).
func decls() []dissect.TypeDecl {
	netID := func() dissect.FieldDecl {
		return dissect.FieldDecl{Name: "network_id", Kind: dissect.KindUint, Doc: "network id (absent when the datagram ends before it)"}
	}
	thingID := func() dissect.FieldDecl {
		return dissect.FieldDecl{Name: "thing_id", Kind: dissect.KindUint, Doc: "thing id (absent when the datagram ends before it)"}
	}
	data := func() dissect.FieldDecl {
		return dissect.FieldDecl{Name: "data", Kind: dissect.KindBytes, Required: true, Doc: "the message's bytes after its ids"}
	}
	return []dissect.TypeDecl{
		{Type: TypeClient, Doc: "0xA0: a client's first message after connecting", Fields: []dissect.FieldDecl{data()}},
		{Type: TypeNetworkID, Doc: "0xA1: the site assigns the client its network id", Fields: []dissect.FieldDecl{netID(), data()}},
		{Type: TypePose, Doc: "0x10: typed values (position, orientation, ...) of a thing", Fields: []dissect.FieldDecl{
			netID(), thingID(),
			{Name: "values", Kind: dissect.KindArray, Doc: "the typed values, in order (absent when the datagram ends before the thing id)",
				Elem: &dissect.FieldDecl{Kind: dissect.KindObject, Doc: "one typed value", Fields: valueDecl()}},
			{Name: "rest", Kind: dissect.KindBytes, Doc: "bytes from the extension data type 0x00, or past the first 1024 values, not decoded"},
		}},
		{Type: TypeNewThing, Doc: "0x80: answer to Investigate, carrying the thing's type", Fields: []dissect.FieldDecl{netID(), thingID(), data()}},
		{Type: TypeInvestigate, Doc: "0x81: asks about a thing a Pose named", Fields: []dissect.FieldDecl{netID(), thingID(), data()}},
		{Type: TypeModelURL, Doc: "0x90: a link to the thing's model", Fields: []dissect.FieldDecl{netID(), thingID(), data()}},
		{Type: TypeUnknown, Doc: "a message id the README does not list (with a warning)", Fields: []dissect.FieldDecl{
			{Name: "message_id", Kind: dissect.KindInt, Required: true, Doc: "the message id byte"},
			{Name: "data", Kind: dissect.KindBytes, Required: true, Doc: "the bytes after the message id"},
		}},
	}
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
