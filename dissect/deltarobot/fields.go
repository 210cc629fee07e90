package deltarobot

import "github.com/dissect-tools/dissect/dissect"

// decls declares every record type Parse emits (a new slice on each call:
// [dissect.Protocol.Info] shares nothing). Every field is required: Parse
// adds a type's fields whatever the content (an odd magic, version or
// reason is still written, with a warning), except a pong's rtt_ms. The
// spec gives no unit for the coordinates, so none is declared. Ping and
// pong are heartbeats: the spec sends them only to show that the
// connection is alive.
func decls() []dissect.TypeDecl {
	f32 := func(name, doc string) dissect.FieldDecl {
		return dissect.FieldDecl{Name: name, Kind: dissect.KindFloat32, Required: true, Doc: doc}
	}
	vector := func(what string) []dissect.FieldDecl {
		return []dissect.FieldDecl{
			f32("x", what+": x coordinate"),
			f32("y", what+": y coordinate"),
			f32("z", what+": z coordinate"),
			f32("u", "fourth float of the vector, unused by the spec"),
		}
	}
	pingID := func() []dissect.FieldDecl {
		return []dissect.FieldDecl{
			{Name: "id", Kind: dissect.KindUint, Required: true, Doc: "the ping's random 64-bit number, echoed by its pong"},
			{Name: "id_hex", Kind: dissect.KindString, Required: true, Doc: `id as "0x" and 16 lower-case hex digits, exact in every JSON reader`},
		}
	}
	return []dissect.TypeDecl{
		{Type: typeMagic, Doc: "handshake message 0x3001, first of each direction", Fields: []dissect.FieldDecl{
			{Name: "magic", Kind: dissect.KindString, Required: true, Doc: `the 8 content bytes as text, "DeltaRVr" (else a warning)`},
		}},
		{Type: typeVersion, Doc: "handshake message 0x2002, second of each direction", Fields: []dissect.FieldDecl{
			{Name: "version", Kind: dissect.KindUint, Required: true, Doc: "protocol version, 1 (else a warning)"},
		}},
		{Type: typePosition, Doc: "current actuator position (0x4003)", Fields: vector("actuator position"),
			Pose: &dissect.Pose{Name: "actuator"}},
		{Type: typePing, Doc: "ping (0x3004), sent by the leader to show the connection is alive",
			Fields: pingID(), Exchange: dissect.Exchange{Role: dissect.Request}, Heartbeat: true},
		{Type: typePong, Doc: "pong (0x3005), the follower's answer to a ping",
			Fields: append(pingID(), dissect.FieldDecl{
				Name: "rtt_ms", Kind: dissect.KindFloat, Unit: "ms", Role: dissect.RoleLatency,
				Doc: "pong capture time minus its ping's (present when the ping was seen)",
			}),
			Exchange: dissect.Exchange{Role: dissect.Reply, Answers: typePing}, Heartbeat: true},
		{Type: typeEOT, Doc: "end of transmission (0xF006): the sender is about to close", Fields: []dissect.FieldDecl{
			{Name: "reason", Kind: dissect.KindString, Required: true, Doc: `the optional ASCII reason, "" when none`},
		}},
		{Type: typeDirection, Doc: "current direction vector of actuation (0x4007)", Fields: vector("direction")},
		{Type: typeDesired, Doc: "desired direction vector of actuation (0x4008)", Fields: vector("desired direction")},
		{Type: typeCurve, Doc: "the exercise's curve (0xF009)", Polyline: "points", Fields: []dissect.FieldDecl{
			{Name: "points", Kind: dissect.KindArray, Required: true, Doc: "the curve's points in order, each [x, y, z]",
				Elem: &dissect.FieldDecl{Kind: dissect.KindArray, Doc: "one point [x, y, z]",
					Elem: &dissect.FieldDecl{Kind: dissect.KindFloat32, Doc: "a coordinate"}}},
		}},
		{Type: typeUnknown, Doc: "a message of an unknown id, or a known type under another size id (with a warning)", Fields: []dissect.FieldDecl{
			{Name: "message_id", Kind: dissect.KindInt, Required: true, Doc: "the 16-bit message id"},
			{Name: "data", Kind: dissect.KindBytes, Required: true, Doc: "the message's content"},
		}},
	}
}
