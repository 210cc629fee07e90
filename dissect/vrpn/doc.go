// Package vrpn dissects VRPN (Virtual-Reality Peripheral Network) as
// mainline C++ VRPN 07.38 puts it on the wire, over TCP and UDP (default
// port 3883 for both). [New] returns the protocol for one run.
//
// The wire format implemented here is the one of the shared spec
// (vrpn-wire-format.txt) as corrected by the real captures of mainline
// (captures/vrpn/README.md, "facts"); where they disagree the captures win.
// Every such place is listed under "Where the captures win over the spec".
//
// # TCP
//
// Each direction starts with a 24-byte cookie, "vrpn: ver. 07.38", two
// spaces, one ASCII log-mode digit (the remote logging this side asks of
// its peer: 1 incoming, 2 outgoing) and five NULs. It is a record of type
// cookie with fields version ("07.38") and log_mode (int); it is not framed
// and has no header fields. The cookie warns "cookie version X differs from
// 07.38" only when the major version (before the '.') is not 07, since
// mainline compares only that. Both sides send their cookie at once, so
// each direction is parsed on its own, whatever the order.
//
// Then come framed messages. The header is six big-endian 32-bit words:
// length, tv_sec, tv_usec, sender id, type id, sequence number; length is
// 24 plus the unpadded body. The body is padded to a multiple of 8 and the
// record covers header, body and padding. Mainline does not clear the
// padding (it holds stale bytes of earlier messages), so padding content is
// ignored without a warning. A length below 24 or above 1 MiB is
// malformed (code bad_length); tv_usec of a million or more is decoded with
// a warning.
//
// # Record fields
//
// Every framed message's fields start with sender (the name, or the numeric
// id as a string when no description was seen), sender_id, type_id, sent
// (the header time) and sequence. For system messages (negative type ids)
// the header's sender field is not a sender (it holds the id described, a
// UDP port or a log mode), so their sender is always that number as a
// string. Then, per type:
//
//	sender_description (-1)      name            body: u32 length incl. NUL, name, NUL
//	type_description (-2)        name            (the id described is sender_id)
//	udp_description (-3)         host, port      body: host + NUL; port = sender field
//	log_description (-4)         mode, incoming, outgoing
//	                                             body: i32 strlen(in), i32 strlen(out),
//	                                             in + NUL, out + NUL; mode = sender field
//	disconnect (-5)              (none)
//	vrpn_Tracker Pos_Quat        sensor, pos [x,y,z], quat {x,y,z,w}
//	vrpn_Tracker Velocity        sensor, vel, vel_quat, vel_quat_dt
//	vrpn_Tracker Acceleration    sensor, acc, acc_quat, acc_quat_dt
//	vrpn_Button Change           button, state   (i32, i32)
//	vrpn_Button States           states          (i32 count, count × i32)
//	vrpn_Analog Channel          channels        (f64 count, count × f64)
//	vrpn_Dial update             change, dial    (f64, i32)
//	vrpn_Base ping_message       (none: empty body)
//	vrpn_Base pong_message       rtt_ms, when the ping it answers was seen
//	any other described type     data (hex of the body)
//	undescribed type id          type "unknown", data (hex), a warning
//	other negative type id       type "unknown", data (hex), a warning
//	type described with a reserved name  type "unknown", data (hex), a warning
//
// Mainline's connection notices (vrpn_Connection.C) never go on the wire:
// every connection registers the sender "VRPN Control" and the types
// VRPN_Connection_Got_First_Connection, VRPN_Connection_Got_Connection,
// VRPN_Connection_Dropped_Connection and
// VRPN_Connection_Dropped_Last_Connection, so their descriptions are sent,
// but the messages are only handed to local handlers (doCallbacksFor,
// never pack_message) and are not logged either. They are not decoded; a
// message of one of these types would be written as hex.
//
// A reserved name is "", "*" or the type of another record (cookie,
// udp_callback, the system types, unknown, gap, skipped): a record's type
// always says what its fields are.
//
// Tracker bodies are i32 sensor, i32 sensor again, f64 vector[3], f64
// quaternion in x, y, z, w order, and for Velocity and Acceleration a final
// f64 dt (64 bytes for Pos_Quat, 72 for the others). Doubles are passed as
// float64 values unchanged (-0.0 stays negative zero). A body too short for
// its type gives the record its type, the warning "body of N bytes too
// short for TYPE" and the body as data; a longer body is decoded with a
// warning. Record.Summary holds a one-line text for the table, for example
// "Tracker0 sensor=1 pos=(0,0,0) quat=(0,0,0,1)".
//
// With Ctx.Decode false only types and warnings are set; the name tables,
// UDP routes and waiting pings are still learnt.
//
// # Round trips
//
// Each remote object of a client sends vrpn_Base ping_message once it
// runs, and again about every second while unanswered; the server answers
// each ping with a pong_message from its sender of the same name, on the
// same connection, and also sends that pong to its other clients (README
// fact 17). A pong gets rtt_ms, its capture time minus that of the ping it
// answers, in milliseconds: the oldest ping still unanswered in the other
// direction of the stream whose sender has the pong's sender name (ids
// differ per direction, names do not). A pong with no such ping (one sent
// to another client's ping, or whose ping the capture missed) has none, and
// senders never described take no part. Each direction keeps at most 8
// waiting pings per sender (a newer one forgets the oldest) and 512
// waiting requests in all (the oldest is forgotten). Catalogued requests
// and the replies that name them (Request_Tracker_To_Room and To_Room,
// ...) are timed the same way, per sender name and request type
// (roundtrip.go, dissect/exchange).
//
// # Names
//
// Sender and type ids are numbered by each side in its own order, so names
// are learnt per direction of each connection from its SENDER_DESCRIPTION
// and TYPE_DESCRIPTION messages. The tables are maps capped at 4096 ids each
// (a description beyond that warns "name table full"); names are kept up to
// 255 bytes (the record still shows the whole name). All the tables of a run
// together hold at most 16 MiB of names (each counted as its length plus 64
// bytes): past it a description is not recorded and warns so, the messages
// of its id are "unknown", and the connection ends with a note counting the
// names refused. A connection gives its names back when it ends (or, when a
// UDP route still reads them, when the route goes).
//
// # UDP
//
// A client asking for UDP+TCP sends the "lob" datagram "<host> <port>" and
// one NUL, unpadded, to the server's UDP port; it is a record of type
// udp_callback with fields host and port (not framed). It is recognised by
// its form: a host of letters, digits and dots, one space, a decimal port
// 1-65535, the NUL ending the datagram (a port below 1024, which mainline
// ignores, warns).
//
// Other datagrams hold one or more whole framed messages (no cookie). Their
// ids are named by the TCP connection that announced the datagram's
// destination: when direction A→B of a connection carries UDP_DESCRIPTION
// (port P, host H), datagrams sent to H:P use the names learnt on direction
// B→A of that connection (then, as a fallback, descriptions seen on the UDP
// flow itself). H is taken as the address when it is an IP address, and
// the announcing side's address otherwise (also when H is unspecified).
// This cross-stream state lives in the value [New] returns, bounded to 4096
// destinations (the oldest is forgotten first). A flow with no known
// connection is decoded with numeric ids (type unknown). The last message
// of a datagram may lack its padding (decoded, with a warning).
//
// # Detection
//
// TCP: a direction starting with "vrpn: ver. " is VRPN (Maybe on a shorter
// prefix of it). UDP: the lob datagram; a datagram to an address announced
// earlier in the run by a UDP_DESCRIPTION; or, weaker, a datagram made
// entirely of framed messages that pass the plausibility check below.
//
// # Resynchronisation and late joins
//
// Where no framing can be trusted, a header is plausible when its length is
// 24..64000 (mainline's TCP buffer, vrpn_CONNECTION_TCP_BUFLEN = 64000,
// bounds every message it sends), tv_usec is below one million, the sender
// id is 0..65535 and the type id is -5..65535.
//
// On TCP that alone is far too weak: the bodies of real messages (the
// zeros and stale bytes after a Text message's text, the doubles of a
// Poser request) hold plausible headers. A candidate is confirmed only by
// the run that follows it (resync.go): three headers in a row, each at
// the padded end of the message before, each plausible with sender and
// type ids below 2000 (mainline's vrpn_CONNECTION_MAX_SENDERS and
// _MAX_TYPES; at most 64 past the largest id the direction described,
// when it described some), sequence numbers counting up by one (README
// fact 4; or repeating, on a direction seen to repeat them) and sent
// times within a day of each other, or of the times the direction sent
// before (plus the capture time elapsed since); a time of 0.0, which
// mainline sends for a button's states before its first report, is not
// compared. A run may
// span at most 32 KiB. The verdict depends only on the run's bytes, so the
// segmentation of the stream cannot change what is decoded.
//
// A TCP direction is parsed from stream offset 0. When its first bytes are
// not the cookie but a confirmed candidate, the capture joined the
// connection late at a message boundary: messages are decoded from there
// (with a stream note), named only once descriptions are seen. When the
// candidate is refuted, Parse returns a [*dissect.Error] with code
// no_cookie at offset 0: dissect.Stream then skips that byte and calls
// Sync from offset 1, so a capture that starts inside a message is
// resynchronised on the next confirmed header.
//
// Sync (after malformed data, a gap or a late join) returns the first
// confirmed candidate when every candidate before it is refuted; else it
// waits, holding the bytes from the first undecided candidate (at most
// 32 KiB, within the Stream's sync limit). At the end of the data or
// before a gap (dissect.Ctx.Last) nothing can wait: a run that reaches
// the end exactly, or has two whole headers before the end cuts it, is
// confirmed, every other candidate is dropped, and the search goes on
// past it, so an unconfirmed candidate never swallows the messages after
// it. Once a direction's phase is known from its cookie, only offsets at
// that phase modulo 8 are tried, since every message is a multiple of 8
// bytes; a phase learnt from a message framed after a search is not
// trusted by the next search.

// # Where the captures win over the spec
//
//   - Quaternions are x, y, z, w on the wire, not w, x, y, z (fact 13 and
//     the quaternion-order proof).
//   - The tracker word after the sensor is a second copy of the sensor,
//     not padding without meaning; a copy that differs warns.
//   - Velocity ends with f64 vel_quat_dt (72 bytes), like Acceleration.
//   - Button Change is one (i32 button, i32 state) pair, without a count.
//   - The sequence number is the sixth header word and lies inside the
//     24 bytes the length counts: length = 24 + unpadded body.
//   - The cookie says 07.38; only the major version is compared.
//   - Both sides send their cookie unconditionally, in either order, and in
//     UDP+TCP mode both send UDP_DESCRIPTION; datagrams to a side's
//     announced port carry the ids of the other direction.
//   - The lob datagram is strlen + 1 bytes, not padded to 8.
//   - Padding bytes are not zeroed.
//   - Descriptions carry a u32 name length that includes the NUL.
//   - LOG_DESCRIPTION has two i32 lengths that exclude the NULs, then both
//     names, each with its NUL (mainline's own Format_Of_Protocol.txt is
//     stale on this).
//   - Dial update (f64 change, i32 dial) and ping/pong (empty bodies), not
//     in the spec, are decoded.
//   - DISCONNECT_MESSAGE (-5) never appears on the wire (it only goes to
//     log files); it is decoded if seen.
//
// A protocol value and its parsers are used from one goroutine, as
// dissect.Stream drives them.
package vrpn
