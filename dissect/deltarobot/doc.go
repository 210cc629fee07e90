// Package deltarobot dissects the Deltarobot VR protocol (version 6), spoken
// over TCP between the Deltarobot C++/Qt application (the leader, a TCP
// server) and the Unity VR visualiser (the follower, its client). It also
// runs over a serial link when asked to (decode-as "serial,deltarobot").
//
// # Framing
//
// Every message is a 16-bit little-endian id followed by its content. Bits
// 15-12 of the id are the size id, bits 11-0 the type:
//
//	size id 0x0, 0x1, 0x2, 0x3, 0x4: 1, 2, 4, 8, 16 content bytes
//	size id 0xF: a u32 LE byte count follows the id, then that many bytes
//	size id 0x5-0xE: no defined length (malformed, code "bad_size_id")
//
// Known messages are matched on the full 16-bit id (see the output contract,
// section "deltarobot"): 0x3001 protocol_magic, 0x2002 protocol_version,
// 0x4003 actuator_position, 0x3004 ping, 0x3005 pong, 0xF006
// end_of_transmission, 0x4007 current_direction, 0x4008 desired_direction,
// 0xF009 curve. Every other id that can be framed is an "unknown" record with
// its message_id and data, and a warning: a known type with another size id
// is reported as mismatched, type 0x000 as reserved-invalid.
//
// # Warnings
//
// A record carries a warning when: the magic is not "DeltaRVr"; the version
// is not 1; a curve's length is not a multiple of 12 (the whole points are
// decoded, the trailing bytes are named in the warning); an end-of-transmission
// reason is not ASCII (it is still shown, made valid UTF-8); the first message
// of a direction is not protocol_magic or its second is not protocol_version
// ("stream does not begin with magic + version", on that record).
//
// A ping and a pong carry id (the u64 random number, exact) and id_hex, the
// same number as "0x" and 16 lower-case hex digits (a string, for readers
// that round integers above 2^53: jq 1.6, JavaScript); the table shows
// id=0x… as well.
// A pong whose id matches a ping seen in the other direction gets rtt_ms, the
// pong's capture time minus the ping's in milliseconds. A stream keeps at
// most 64 outstanding pings per direction; a new ping evicts the oldest,
// and the stream's end notes how many were evicted (dissect/exchange).
//
// # Finding message boundaries
//
// The protocol has no sync marker, so boundaries are found by trial framing.
// A "chain" at offset i is the run of messages framed from i; a message in a
// chain must have a known id and, when variable-length, a length of at most
// 1 MiB. [dissect.Parser.Sync] returns the first offset whose chain holds
// three complete messages, or holds a complete protocol_magic with content
// "DeltaRVr" (clearly good). When the bytes run out before a chain at i is
// decided (a message cut short, or fewer than three messages ending exactly
// at the end of the buffer), Sync answers (i, false): everything before i is
// passed over, and i is judged again when more bytes come. An offset is
// passed over as soon as one of its bytes rules it out, so a trailing byte
// that cannot start a known id is not held.
//
// Parse trusts framing only once a direction has decoded two messages (a
// proper stream starts with protocol_magic and protocol_version). Before that,
// an unknown id or a variable length over 1 MiB is not taken as a message
// (code "no_sync"), so the framework resynchronises with Sync: a stream
// joined in the middle of a message resyncs within a few messages instead of
// being decoded as a run of unknown records. Once trusted, a direction still
// never takes a variable length over 1 MiB (the limit Sync applies; the spec
// sets none, but no message of the protocol comes near it): Parse answers
// "implausible_length", so the header is skipped and the stream resyncs at
// the next chain instead of passing over up to 4 GiB of good messages as
// one undecoded message. Parse and Sync decide from the
// bytes alone, never from how they were split into segments, so the records
// do not depend on the segmentation (within the framework's limits: a
// message over [dissect.Limits] MaxMessage is decoded when it arrives in one
// piece, and a long sync search is cut by MaxSync).
//
// # One description
//
// The message table (describe.go) holds each known id once: its record
// type, its doc, its content's layout in the shared wire vocabulary
// (dissect/layout), and a hook for what the vocabulary cannot say (the magic's
// and version's warnings, a ping's id_hex and its pong's rtt_ms, a reason
// made valid UTF-8, the curve's [x, y, z] points and trailing bytes). The
// declarations, the id lookup of Parse and Sync, the decoding of each
// content and an encoder ([Append]) are derived from it, and each layout
// is checked against the size its id's nibble gives. Message boundaries
// (the chain of three) stay Go: a complete protocol_magic accepts at
// once, and the end of a direction accepts a chain of two, which the
// shared resync of dissect/framing does not say.
//
// # Decoding and summaries
//
// When [dissect.Ctx.Decode] is false, Parse sets only the record's type and
// warnings (and still keeps the ping table and the handshake state). When it
// is true, a curve's summary is "points=N" and an unknown message's
// "id=0x1234 len=N"; the other summaries are left to be derived from the
// fields, so that the vector messages that make up nearly all traffic are
// decoded without allocating.
package deltarobot
