// Package roboid dissects the Roboid Control network sync protocol (Passer
// VR, Pascal Serrarens) over UDP, with the data-type byte of the April 2024
// MessageFormat.md. [New] returns the protocol. The full description, with
// every assumption, is docs/roboid.md; the facts are protocols.md §3.
//
// # Framing
//
// One UDP datagram is one message; its first byte is the message id. The
// messages are described once in dissect's wire vocabulary
// (dissect/layout; fields.go), which gives their declarations and decoder;
// a Pose's typed values are a Go hook, their sizes being coded in nibbles:
//
//	0xA0 Client       data                      (the client has no network id yet)
//	0xA1 NetworkId    network_id, data          (the id the site assigns)
//	0x10 Pose         network_id, thing_id, values, [rest]
//	0x80 NewThing     network_id, thing_id, data (the thing type, undecoded)
//	0x81 Investigate  network_id, thing_id, data
//	0x90 ModelURL     network_id, thing_id, data (the URL, undecoded)
//	other             type "unknown": message_id, data, a warning
//
// Ids are single bytes (network_id and thing_id are unsigned integers);
// data is the rest of the datagram in hex (possibly empty). Which messages
// carry which ids is our reading of the README's message list, not a
// documented layout. A datagram too short for its ids keeps the ids it has,
// with a warning (a Pose then has no values field). The protocol runs over UDP only: without datagrams there
// is no message end, and Parse answers c.Final false with the error code
// "not_datagram".
//
// # Pose values
//
// After the two ids, a Pose holds typed values up to the end of the
// datagram. Each is a data-type byte ([DataType]) followed by its value:
//
//	bit  7 6      5 4      3 2 1 0
//	     angular  linear   semantics
//
//	angular: 00 none, 01 one byte, 10 two bytes, 11 three bytes (one per dimension)
//	linear:  00 none, 01 one byte, 10 two bytes, 11 four bytes
//	semantics: 1 position, 2 linear_velocity, 3 linear_acceleration,
//	           5 orientation, 6 angular_velocity, 7 angular_acceleration,
//	           8 direction; 0, 4, 9-15 undefined (a warning each)
//
// The value is angular-bytes + linear-bytes long, the angle bytes first
// (our reading of the spec: "the angular and linear part", in that order,
// and the quaternion example "x,y,z = angular and w = linear"). Every value
// is shown as data_type ("0x62"), semantics, angular_bytes, linear_bytes
// and raw (the value bytes, hex), then decoded for every data type:
//
//	angles_deg      one per angle byte, unsigned: byte × 360/256 degrees
//	magnitude_uint  the magnitude bytes as an unsigned little-endian integer
//	magnitude_f16   2-byte magnitudes also as an IEEE 754 half, little-endian
//	magnitude_f32   4-byte magnitudes also as an IEEE 754 single, little-endian
//
// None of these encodings is verified: the spec says only how many bytes
// there are. Byte order, angle signedness and the float readings are
// guesses (protocols.md §3.4, §3.5).
//
// Data type 0x00 announces an extension byte that the spec leaves
// undefined: decoding stops there, with a warning, and the bytes from the
// 0x00 to the end of the datagram are the field "rest". A value cut off by
// the end of the datagram is shown with its partial raw bytes and
// truncated: true, undecoded, with a warning. At most [MaxValues] values
// are decoded per Pose; the bytes after them are "rest", with a warning.
// Warnings about undefined semantics are listed for the first 8 values of
// a record, then counted in one more warning.
//
// # Summary and fast path
//
// The summary is one line, e.g. "net 1 thing 2: linear_velocity 90° 1.5
// (f16)": per value (the first four) its semantics, angles and magnitude
// (1 byte as an integer, 2 bytes as float16, 4 bytes as float32). When
// [dissect.Ctx.Decode] is false only the type and the warnings are set,
// and a well-formed message costs no allocation.
//
// # Selection
//
// There is no content detection: a one-byte id is no signature. Streams
// are chosen by the default port [Port] (UDP 7681, an unverified lead) or
// by a decode-as rule.
package roboid
