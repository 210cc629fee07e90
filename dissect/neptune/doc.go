// Package neptune dissects the commands of the Neptune ROV (sarbos/Neptune)
// in two modes, both written with proto "neptune": the framing its device
// firmware really reads ([New], decode-as name "neptune"), and the packet
// format of the project wiki as an explicit mode for UDP datagrams
// ([NewWiki], decode-as name "neptune-wiki"). docs/neptune.md says where
// each rule comes from and lists every assumption.
//
// # Device framing ("neptune")
//
// The ROV's Arduino (nep_network.ino) is a TCP server on port 1493, the
// protocol's default port; serial links need "serial,neptune". Each message
// is a length byte, then that many payload bytes; payload[0] is the type:
//
//	0 abort       any length                      no fields
//	1 set_motor   length 4: [1, id, dir, mag]     motor, direction, magnitude
//	2 translate   length 3: [2, axis, sign]       axis, sign
//	3 rotate      length 3: [3, axis, sign]       axis, sign
//	4 stabilize   length 2: [4, b]                enable
//	5 lamp        length 2: [5, b]                on
//
// direction is "forward" for dir 0 and "reverse" otherwise; axis is "x",
// "y" or "z" for 0, 1, 2 (another value is shown as its decimal digits,
// with a warning); sign is the raw byte, unsigned (the device passes it,
// zero-extended, to a handler that is an empty stub, so no meaning is
// known); enable and on are false for 0 and true otherwise, as C++ bool()
// reads them. On the motor co-processor ids 0-4 are motors and 5-6 relays
// (dir 0 off, otherwise on): a relay command adds the field relay_on and
// its summary says so ("relay 5 on"); an id of 7 or more gets a warning (the co-processor ignores it).
//
// A message whose length does not fit its type (the device ignores it) is
// still framed by its length byte: its record has the type's name, the
// fields its bytes hold, the whole payload as "data" and a warning such as
// "set_motor needs length 4, got 3: the device ignores it". An abort with
// arguments shows them the same way, without a warning (the device does not
// check an abort's length). Any other type is an "unknown" record with
// "data" (the payload, type byte included). A length of 0 is what the
// device does with it: it reads no payload and runs its handler on the type
// byte its buffer still holds, so the record has the previous message's
// type (per direction; abort at the start, the buffer being zeroed), no
// field and a warning; only an abort does anything again.
//
// A length byte of 100 or more is malformed (code "bad_length"): the device
// drops that byte alone (its client.flush() discards nothing) and reads the
// next as a length, so Sync resumes at the very next byte and every message
// after it decodes as soon as its last byte is seen. Parse itself frames
// every length below 100, as the device does, so a stream is decoded from
// its first byte without any search.
//
// A gap (bytes never captured) is where the decoder stops knowing what the
// device did: the missing bytes may have held any lengths and any message,
// so neither the device's place in its framing nor the type byte left in
// its buffer is known after it. Decoding starts afresh: Sync looks for the
// first offset from which three consecutive well-formed messages frame (a
// known type with the length the device acts on for it; an abort only with
// length 1, so that garbage cannot pass for a long abort), and the bytes
// before it are skipped. The first of those messages has a length of 1 or
// more, so it sets the buffer's type byte again before any length 0 is
// decoded. When the bytes run out before a candidate offset is decided,
// Sync answers (offset, false) and it is judged again with more bytes.
// Messages before a gap are not affected by it; one cut by it is skipped.
//
// # Wiki packet format ("neptune-wiki")
//
// The wiki format is described once in dissect's wire vocabulary
// (dissect/layout; wiki.go), which gives its declarations and decoder.
// The wiki's header is type u8, priority u8, sequence u8; it has no length
// field, so one packet is one UDP datagram. Type numbers come from
// NepPacketTypes.h (the wiki has none): 1 speed_motor (RAW_MOTOR_TYPE, the
// wiki's "Speed Motor": motor_id u8, direction bool, speed float32, duration
// int), 2 position_motor (motor_id u8, degree float32, speed float32), 3
// relay (relay_id u8, enable bool), 4 sensor_data (sensor_type int,
// sensor_id int, data: the rest of the datagram). Every record starts with
// priority and sequence. Multi-byte values are little-endian; "int" is
// int32, or int16 with [WikiOptions].Int16. A bool is one byte: 0 false, 1
// true, another value true with a warning; direction is "forward" (true) or
// "reverse". Another type is an "unknown" record with "data" (the body) and
// a warning. A body cut short keeps the whole fields it holds and shows the
// bytes of a field cut short as "trailing"; extra bytes after a body are
// "trailing" too; both with a warning. A datagram shorter than the header
// keeps what it has (priority when two bytes long), with a warning.
//
// # Decoding and summaries
//
// When [dissect.Ctx.Decode] is false, Parse sets only the record's type and
// warnings. Summaries are left to be derived from the fields, except a
// relay command ("relay 6 off") and unknown device messages ("type=9
// len=3", "len=0"). Well-formed messages are decoded without allocating.
package neptune
