// Package handcontrol dissects the HandControl prosthesis link ("Bluetooth
// API"): frames with a start-of-frame delimiter, a type code, a size, a
// protobuf payload and a CRC-8, exchanged between a host (the PC
// configurator, the MQTT proxy) and the prosthesis over Bluetooth RFCOMM or
// a UART. The facts come from protocols.md §1, which wins over the spec
// text; docs/handcontrol.md is the user documentation.
//
// # Framing
//
//	fd ba dc 01 50 b4 11 ff   SFD (8 bytes)
//	type                      u8, the code (see below)
//	size                      u16 little-endian, payload bytes only
//	payload                   size bytes (protobuf, or empty)
//	crc                       u8, CRC-8/SMBUS over type, size and payload
//	                          (or over the SFD too: the Android host app)
//
// CRC-8/SMBUS is polynomial 0x07, init 0, no reflection, no final xor
// (check("123456789") = 0xf4). The C#, Python and C implementations do not
// cover the SFD; the Android host app does (protocols.md §1.4). A frame is
// valid when its CRC matches either, and crc_scope says which
// ("header+payload", or "sfd+header+payload"; the first when both match);
// detection accepts both. A frame is framed by
// its size once the header is read, so an SFD pattern inside a payload does
// not split it. Bytes that do not start with the SFD are malformed (code
// no_sfd); [dissect.Parser.Sync] resynchronises at the next SFD.
//
// A size is not trusted while the bytes it declares are still coming once
// a whole frame with a valid CRC starts at an SFD inside what has come:
// Parse answers implausible_frame at once (the reason names the size), so
// a corrupt size hides no frame after it (see parser.inner).
//
// A frame whose CRC matches neither is decoded anyway (crc_ok false, no
// crc_scope, and the warning "crc 0xb6 on the wire, 0xc6 computed", the
// value over type, size and payload): real senders emit wrong
// CRCs and the size is reliable. It is rejected instead (code
// implausible_frame, and the framework resynchronises) when the bad CRC
// comes with any of these signs that the header itself is garbage:
//   - the code is 0 or above 17;
//   - the code is not one that side sends (the host sends 4-17; the device
//     sends 1 ACK, 2 ERR, 3 Telemetry and the replies 4, 6, 13, 16);
//   - the code carries no payload from that side (host 4, 6, 13, 15, 16;
//     device 1) but the size is not 0;
//   - an SFD begins inside the frame after its own, or the frame ends with
//     at least the first 2 bytes of one (the size ran over the next frame).
//
// A payload that does not parse is not one of the signs: the two frames of
// protocols.md §1.9 with a wrong CRC have such payloads, and must be
// decoded. All the signs are read from the frame's own bytes, so the result
// does not depend on how the stream was split into reads.
//
// # Records
//
// The type is the name of the code: Empty 0, ACK 1, ERR 2, Telemetry 3,
// GetSettings 4, SetSettings 5, GetGestures 6, SaveGesture 7, DeleteGesture
// 8, PerformGestureId 9, PerformGestureRaw 10, SetPositions 11,
// UpdateLastTimeSync 12, GetTelemetry 13, StartTelemetry 14, StopTelemetry
// 15, GetMioPatterns 16, SetMioPatterns 17, "unknown" for others. Fields:
// code (int), role ("request", "response" or "telemetry"), crc (the wire
// byte), crc_ok (bool), crc_scope (valid frames only), then payload (the
// message, fields in wire order), payload_raw (the fields the message
// cannot hold, when there are any) and schema ("v2", "v1", "raw" or the
// user schema's name), or payload_hex when the payload is not protobuf; a
// reply matched to its request adds request_code and latency_ms.
//
// Every record is declared ([dissect.Info].Types, decl.go), from the
// schema set the protocol value loaded: each type once per role it can
// have (a variant of the role field: request, and response or, for
// Telemetry, telemetry), since a request and a reply sharing a code carry
// different messages. The payload object declares every field of the
// messages that code and role may be decoded with (pbwalk's
// Message.Decl), merged by name: the v2 message and its v1 alternative,
// or the user's; for a type-13 reply also patterns.GetMioPatterns (the
// quirk below). A user GetMioPatterns that does not merge with the
// GetTelemetry reply's message (one key, two kinds) is not used for the
// quirk: such replies are decoded raw, and the run gets a note. A user
// message whose declaration would hold more than 4096 fields (messages
// nested in each other many times over) makes New fail.
//
// Direction 0 (serial: the host; TCP: the side that opened the connection)
// sends requests; direction 1 (the device) sends responses and, with type 3,
// telemetry. A code that the side does not send is decoded with a warning,
// using the message the code has from the other side if any.
//
// # Payloads
//
// Payloads are decoded with the built-in schema v2 (embedded .proto files,
// compiled at run time with protocompile), by the wire walker of package
// [dissect/dissect/pbwalk] driven by the descriptors: fields come out in
// wire order, repeated fields as arrays (at the position of their first
// occurrence), enums as their value names, uuid.UUID messages as their
// string, nested messages as objects. What the message cannot hold under
// its declaration is in payload_raw, one item per field occurrence, with a
// warning: a field number the message lacks, a wire type that does not fit
// the field, an enum value the enum lacks, a nested message that does not
// parse, a uuid.UUID holding more than its string, and (in a user schema)
// a message nested inside a message of its own type. The message of each
// code and role:
//
//	request  5 settings.SetSettings          response  2 errors.Error
//	request  7 telemetry.SaveGesture         response  4 settings.GetSettings
//	request  8 telemetry.DeleteGesture       response  6 telemetry.GetGestures
//	request  9 telemetry.PerformGestureById  response 13 telemetry.GetTelemetry
//	request 10 telemetry.PerformGestureRaw   response 16 patterns.GetMioPatterns
//	request 11 telemetry.SetPositions        telemetry 3 telemetry.Telemetry
//	request 12 telemetry.UpdateLastTimeSync
//	request 14 telemetry.StartTelemetry      all other codes: an empty message
//	request 17 patterns.SetMioPatterns
//
// Codes 0 and above 17 are decoded raw, and so is a payload on a code that
// carries none from that side (with a warning). A type-13 reply to GetMioPatterns
// (16) is decoded as patterns.GetMioPatterns, with a warning: the device
// answers 16 with type 13.
//
// Schema v1 (protocols.md §1.7) differs for telemetry.Telemetry,
// settings.GetSettings and settings.SetSettings. When the v2 decode shows
// an issue (a field number the message lacks, a wire type that does not
// fit, an enum value the enum lacks, an int32/uint32 or bool out of range,
// a string that is not UTF-8, a nested message that does not parse) and the
// v1 message decodes with none, v1 is used and schema is "v1"; otherwise v2
// is kept with its warnings.
//
// With [Options].Raw, payload is {} and every field is in payload_raw,
// as protoc --decode_raw reads it: varints and fixed values as unsigned
// integers; length-delimited values as text when they are UTF-8 without
// control characters, else as the fields of a nested message when they
// parse as one (up to 8 levels), else as text when UTF-8, else as hex;
// groups as nested messages. Each item names its place (parent "2[0].6[1]":
// the second field 6 inside the first field 2).
//
// With [Options].ProtoFiles, the user's .proto files are compiled at run
// time; a user message with the full name of a built-in one (or else the
// only user message with the same short name) replaces it; the others keep
// the built-in v2 message, and the run gets one note listing them.
//
// Bounds: messages nest at most 32 deep; a message has at most 256 distinct
// field numbers; a payload yields at most 2n+64 fields for n bytes (beyond
// that a nested value is shown raw, or the payload as payload_hex); at
// most 8 payload warnings per record, then a count.
//
// # Requests and replies
//
// Each stream keeps the requests in flight (up to 8, oldest first). A reply
// is matched to the oldest request it can answer (ERR answers any request,
// ACK the commands 5, 7-12, 14, 15, 17, the data replies 4, 6, 13, 16 their
// own code, and 13 also 16); requests skipped over are reported as
// unanswered. Warnings: a reply with no request in flight; a request sent
// while another is in flight (on the second); a reply that answers none of
// the requests in flight; a request older than 10 s (the C# master's
// timeout) is dropped with a warning on the next record of the stream.
// Telemetry is never matched. The parser's End method notes the requests
// still unanswered at the end of a stream, when the framework calls it.
//
// With Ctx.Decode false, Parse sets the type and the same warnings (the
// payload is still walked, building nothing) and keeps the request state.
package handcontrol
