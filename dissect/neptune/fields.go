package neptune

import "github.com/dissect-tools/dissect/dissect"

// Both modes write "proto": "neptune", and a registry takes a type of a
// proto key declared by two protocols only when they declare it alike. The
// one type both modes emit, unknown, is therefore one declaration, of what
// the "neptune" unknown records of either mode hold: [unknownDecl].
// Neither mode writes a key that tells them apart, so one declaration of
// the two shapes is what a consumer sees of them anyway.

// deviceDecls declares every record type the device framing emits (a new
// slice on each call: [dissect.Protocol.Info] shares nothing). No field is
// required: a message whose length does not fit its type is decoded as far
// as its bytes go (a set_motor of length 1 has none of its fields), and
// then carries its whole payload as data.
func deviceDecls() []dissect.TypeDecl {
	data := func() dissect.FieldDecl {
		return dissect.FieldDecl{Name: "data", Kind: dissect.KindBytes, Doc: "the whole payload, type byte included, when its length is not the type's (an abort: when it has arguments)"}
	}
	move := func() []dissect.FieldDecl {
		return []dissect.FieldDecl{
			{Name: "axis", Kind: dissect.KindString, Doc: `"x", "y" or "z" (the byte as a decimal number when it is none of them)`},
			{Name: "sign", Kind: dissect.KindUint, Doc: "direction byte of the move, as sent"},
			data(),
		}
	}
	return []dissect.TypeDecl{
		{Type: typeAbort, Doc: "type 0: abort", Fields: []dissect.FieldDecl{data()}},
		{Type: typeSetMotor, Doc: "type 1: drive one motor (ids 0-4) or switch a relay (ids 5-6)", Fields: []dissect.FieldDecl{
			{Name: "motor", Kind: dissect.KindUint, Doc: "motor id: 0-4 thrusters, 5-6 relays"},
			{Name: "direction", Kind: dissect.KindString, Enum: []string{"forward", "reverse"}, Doc: "direction byte: 0 forward (relay off), other reverse (relay on)"},
			{Name: "magnitude", Kind: dissect.KindUint, Doc: "motor power (PWM duty), 0-255"},
			{Name: "relay_on", Kind: dissect.KindBool, Doc: "ids 5-6 only (relays): the relay switched on (direction byte not 0) or off"},
			data(),
		}},
		{Type: typeTranslate, Doc: "type 2: move along an axis", Fields: move()},
		{Type: typeRotate, Doc: "type 3: turn about an axis", Fields: move()},
		{Type: typeStabilize, Doc: "type 4: auto-stabilize on or off", Fields: []dissect.FieldDecl{
			{Name: "enable", Kind: dissect.KindBool, Doc: "auto-stabilize on"},
			data(),
		}},
		{Type: typeLamp, Doc: "type 5: lamp on or off", Fields: []dissect.FieldDecl{
			{Name: "on", Kind: dissect.KindBool, Doc: "lamp on"},
			data(),
		}},
		unknownDecl(),
	}
}

// unknownDecl declares the unknown records of both modes: the device
// framing's (a type past 5: always data; a length 0 after such a type: no
// field) and the wiki
// format's (a type NepPacketTypes.h does not number: the header's
// priority and sequence and the body as data, each as far as the datagram
// goes).
func unknownDecl() dissect.TypeDecl {
	return dissect.TypeDecl{
		Type: typeUnknown,
		Doc:  "device: an unknown type byte, or a length 0 that reruns one; neptune-wiki: a packet type NepPacketTypes.h does not number (with a warning)",
		Fields: []dissect.FieldDecl{
			{Name: "priority", Kind: dissect.KindUint, Doc: "neptune-wiki only: the header's priority byte"},
			{Name: "sequence", Kind: dissect.KindUint, Role: dissect.RoleSequence, Doc: "neptune-wiki only: the header's sequence number, 0-255"},
			{Name: "data", Kind: dissect.KindBytes, Doc: "device: the whole payload; neptune-wiki: the bytes after the header"},
		},
	}
}
