package vrpn

import "github.com/dissect-tools/dissect/dissect"

// types declares every record type VRPN emits (a new slice on each call:
// [dissect.Protocol.Info] shares nothing). A field is required only when
// every record of its type carries it: a body too short or malformed for
// its type leaves the record its type, with data (the body as hex) in
// place of the decoded fields.
func types() []dissect.TypeDecl {
	return append([]dissect.TypeDecl{
		{Type: TypeCookie, Context: true, Doc: "the 24-byte cookie that starts each TCP direction (not framed)", Fields: []dissect.FieldDecl{
			{Name: "version", Kind: dissect.KindString, Required: true, Doc: `version after "vrpn: ver. ", e.g. "07.38"`},
			{Name: "log_mode", Kind: dissect.KindInt, Doc: "remote logging this side asks of its peer: 1 incoming, 2 outgoing, 3 both (absent when not a digit)"},
		}},
		{Type: TypeUDPCallback, Doc: `the UDP datagram "<host> <port>" asking the server to connect back over TCP (not framed)`, Fields: []dissect.FieldDecl{
			{Name: "host", Kind: dissect.KindString, Required: true, Doc: "host to connect back to"},
			{Name: "port", Kind: dissect.KindInt, Required: true, Doc: "TCP port to connect back to"},
		}},
		system(TypeSenderDescription, "names the sender id in sender_id for this direction (system message -1)",
			dissect.FieldDecl{Name: "name", Kind: dissect.KindString, Doc: "sender name given to the id"}),
		system(TypeTypeDescription, "names the type id in sender_id for this direction (system message -2)",
			dissect.FieldDecl{Name: "name", Kind: dissect.KindString, Doc: "type name given to the id"}),
		system(TypeUDPDescription, "the UDP address where this side receives datagrams (system message -3)",
			dissect.FieldDecl{Name: "host", Kind: dissect.KindString, Required: true, Doc: "host of the UDP channel"},
			dissect.FieldDecl{Name: "port", Kind: dissect.KindInt, Required: true, Doc: "UDP port, carried in the header's sender field"}),
		system(TypeLogDescription, "asks the peer to log the connection (system message -4)",
			dissect.FieldDecl{Name: "mode", Kind: dissect.KindInt, Doc: "logging asked for, carried in the header's sender field: 1 incoming, 2 outgoing, 3 both"},
			dissect.FieldDecl{Name: "incoming", Kind: dissect.KindString, Doc: "log file name for incoming messages"},
			dissect.FieldDecl{Name: "outgoing", Kind: dissect.KindString, Doc: "log file name for outgoing messages"}),
		system(TypeDisconnect, "end of a connection (system message -5; mainline only writes it to log files)"),
		tracker(namePosQuat, "a tracker sensor's position and orientation", "pos", "m", "position [x, y, z]", "quat", "orientation quaternion", ""),
		tracker(nameVelocity, "a tracker sensor's linear and angular velocity", "vel", "m/s", "linear velocity [x, y, z]",
			"vel_quat", "rotation over vel_quat_dt, as a quaternion", "vel_quat_dt"),
		tracker(nameAcceleration, "a tracker sensor's linear and angular acceleration", "acc", "m/s^2", "linear acceleration [x, y, z]",
			"acc_quat", "change of angular velocity over acc_quat_dt, as a quaternion", "acc_quat_dt"),
		app(nameButtonChange, "one button pressed or released",
			dissect.FieldDecl{Name: "button", Kind: dissect.KindInt, Doc: "button number"},
			dissect.FieldDecl{Name: "state", Kind: dissect.KindInt, Doc: "button state: 1 pressed, 0 released"}),
		app(nameButtonStates, "the state of every button of the sender",
			dissect.FieldDecl{Name: "states", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindInt}, Doc: "state of every button, states[0] button 0's: 1 pressed, 0 released"}),
		app(nameAnalog, "the values of the sender's analog channels",
			dissect.FieldDecl{Name: "channels", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat}, Doc: "value of every channel, channels[0] channel 0's (meaning set by the device)"}),
		app(nameDial, "a dial turned",
			dissect.FieldDecl{Name: "change", Kind: dissect.KindFloat, Unit: "rev", Doc: "turn since the last report, in revolutions"},
			dissect.FieldDecl{Name: "dial", Kind: dissect.KindInt, Doc: "dial number"}),
		ping(),
		pong(),
		hexType(TypeUnknown, "a message whose type id was never described, is an undefined system id, or was described with the name of another record type"),
		hexType("*", "a message of a described application type that is not decoded"),
	}, catalogDecls()...)
}

// headerDecls returns the fields every framed message starts with. Only
// application messages have a sender: in system messages the header's
// sender field holds the id described, a UDP port or a log mode.
func headerDecls(senderRole dissect.Role) []dissect.FieldDecl {
	senderDoc := "sender's name, or its id as text when never described"
	if senderRole == dissect.RoleNone {
		senderDoc = "the header's sender field as text: the id described, the UDP port or the log mode"
	}
	return []dissect.FieldDecl{
		{Name: "sender", Kind: dissect.KindString, Required: true, Role: senderRole, Doc: senderDoc},
		{Name: "sender_id", Kind: dissect.KindInt, Required: true, Doc: "sender field of the message header"},
		{Name: "type_id", Kind: dissect.KindInt, Required: true, Doc: "type id of the message header (negative: system message)"},
		{Name: "sent", Kind: dissect.KindTime, Required: true, Role: dissect.RoleSentTime, Doc: "sender's timestamp of the message"},
		{Name: "sequence", Kind: dissect.KindUint, Required: true, Role: dissect.RoleSequence, Doc: "sequence number, counted per side and per channel (TCP, UDP)"},
	}
}

// undecoded is the data field of a type whose body is written as hex only
// when it is too short or malformed for the type.
func undecoded() dissect.FieldDecl {
	return dissect.FieldDecl{Name: "data", Kind: dissect.KindBytes, Doc: "body as hex, when too short or malformed to decode (the record warns)"}
}

// app declares an application type: the header fields, then body, then
// data for a body that cannot be decoded.
func app(name, doc string, body ...dissect.FieldDecl) dissect.TypeDecl {
	fs := append(headerDecls(dissect.RoleSender), body...)
	return dissect.TypeDecl{Type: name, Doc: doc, Fields: append(fs, undecoded())}
}

// hexType declares an application type whose body is always written as hex.
func hexType(name, doc string) dissect.TypeDecl {
	fs := append(headerDecls(dissect.RoleSender), dissect.FieldDecl{Name: "data", Kind: dissect.KindBytes, Required: true, Doc: "the message body, as hex"})
	return dissect.TypeDecl{Type: name, Doc: doc + ": body as hex", Fields: fs}
}

// system declares a system message type, like app.
func system(name, doc string, body ...dissect.FieldDecl) dissect.TypeDecl {
	fs := append(headerDecls(dissect.RoleNone), body...)
	// The names given to ids decide how later messages decode.
	ctx := name == TypeSenderDescription || name == TypeTypeDescription
	return dissect.TypeDecl{Type: name, Doc: doc, Fields: append(fs, undecoded()), Context: ctx}
}

// tracker declares Pos_Quat, Velocity or Acceleration: sensor, a vector,
// a quaternion and, for the last two (dt != ""), the seconds the
// quaternion spans.
func tracker(name, doc, vec, unit, vecDoc, quat, quatDoc, dt string) dissect.TypeDecl {
	q := make([]dissect.FieldDecl, 4)
	for i, k := range [4]string{"x", "y", "z", "w"} {
		q[i] = dissect.FieldDecl{Name: k, Kind: dissect.KindFloat, Required: true, Doc: quatDoc + ", " + k}
	}
	body := []dissect.FieldDecl{
		{Name: "sensor", Kind: dissect.KindInt, Role: dissect.RoleSensor, Doc: "tracker sensor number"},
		{Name: vec, Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat}, Unit: unit, Doc: vecDoc},
		{Name: quat, Kind: dissect.KindObject, Fields: q, Doc: quatDoc + " {x, y, z, w}"},
	}
	if dt != "" {
		body = append(body, dissect.FieldDecl{Name: dt, Kind: dissect.KindFloat, Unit: "s", Doc: "seconds over which " + quat + " applies"})
	}
	t := app(name, doc, body...)
	if dt == "" {
		t.Pose = &dissect.Pose{Position: vec, Orientation: quat}
	}
	return t
}

// ping declares vrpn_Base ping_message, which a client's remote object
// sends to ask whether the server's device is there.
func ping() dissect.TypeDecl {
	t := app(namePing, "a client asks whether the sender's device is there (answered by a pong)")
	t.Exchange = dissect.Exchange{Role: dissect.Request}
	return t
}

// pong declares vrpn_Base pong_message, the server's answer to a ping,
// with the round trip when the ping was seen.
func pong() dissect.TypeDecl {
	t := app(namePong, "the server's answer to a ping of the same sender (sent to every client)")
	t.Exchange = dissect.Exchange{Role: dissect.Reply, Answers: namePing}
	t.Fields = append(t.Fields, dissect.FieldDecl{Name: "rtt_ms", Kind: dissect.KindFloat, Unit: "ms", Role: dissect.RoleLatency,
		Doc: "capture time of the pong minus that of the oldest unanswered ping of the same sender in the other direction (absent when none was seen)"})
	return t
}
