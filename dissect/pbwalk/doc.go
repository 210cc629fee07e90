// Package pbwalk walks protobuf wire data: the low-level reader of field
// occurrences ([Next], [Walk]) and a [Decoder] that turns a payload into
// dissect fields, driven by message descriptors ([Builder], [Message]) or
// raw like protoc --decode_raw. It knows nothing of any one protocol; the
// dissectors (handcontrol) choose the messages and name the schema.
//
// # What it decodes
//
// The wire format of https://protobuf.dev/programming-guides/encoding/:
// tags (wire types 0-5; field numbers from 1 to 2^31-1, the range of
// protowire, wider than the 2^29-1 of .proto files), varints of up to 10
// bytes (non-canonical, overlong encodings are accepted, values over 64
// bits are not), fixed32 and fixed64 little-endian, length-delimited
// values, and groups (start and end tags with the same number, nested).
//
// With a [Message], fields come out in the order their numbers first appear
// on the wire, named by the schema: enums as their value names, strings as
// text, bytes as bytes, sint32/sint64 zigzag-decoded, sfixed and int32
// sign-extended, float and double from their bits, nested messages and
// groups as objects, repeated fields (packed or not, or both mixed) and
// maps as arrays at the position of their first occurrence; a singular
// field sent several times shows its last value. A message named in
// [BuildOptions].StringWrappers is shown as its string when it holds only
// field 1 (or nothing: ""). Every value has the kind [Message.Decl]
// declares for its field, so a consumer can build a typed schema of the
// fields from the descriptors alone.
//
// What the message cannot hold under its declaration is shown raw, in a
// list beside the fields, one item per field occurrence ([RawItemDecl]):
// a field number the message lacks, a wire type that does not fit the
// field, an enum value the enum lacks (as protobuf's closed enums keep
// them with the unknown fields), a nested message that does not parse or
// is nested deeper than [MaxDepth], a string wrapper holding more than
// its string, and a message nested inside a message of its own type (its
// declaration would never end). Each item names where its message sits
// (parent: "gestures[1]"), its number, its name when the message has it,
// its wire type and its value. Without a Message (raw), every field is
// such an item: varints and fixed values unsigned integers;
// length-delimited values text when printable UTF-8, else the items of a
// nested message when they parse as one (down to [MaxRawDepth]), else text
// when UTF-8, else bytes; groups the items of their body.
//
// Signs that a Message does not fit the bytes (an unknown field number, a
// wrong wire type, an enum value the enum lacks, an int32, uint32, sint32 or
// bool out of range, a string that is not UTF-8, a nested message that does
// not parse, a singular field sent twice) are issues: Decode counts them
// and writes one warning each, so that a caller may try another schema
// ([Decoder.Check]). They are not errors.
//
// # Bounds
//
//   - Messages and groups together nest at most [MaxDepth] (32) deep: a
//     deeper message is shown raw (an issue), a deeper group fails with
//     ErrLimit. Raw decoding walks length-delimited values and groups as
//     messages down to [MaxRawDepth] (8).
//   - A message has at most [MaxFieldNumbers] (256) distinct field
//     numbers, else it fails with ErrLimit.
//   - A payload of n bytes yields at most 2n+64 output fields (an item of
//     the raw list counts as one), else it fails with ErrLimit.
//   - At most [MaxWarnings] (8) warnings per Decode, then one warning
//     counting the others.
//   - Nothing is allocated from a length or count read from the input:
//     lengths are checked against the bytes left before use, output is
//     allocated from counts of fields actually present, and the scratch
//     space grows with the input. Time is linear in the input for a fixed
//     nesting depth.
//
// # Errors
//
// Failures are *[Error] values with the offset where the problem starts,
// always within [0, len(b)] of the buffer given to the call, and a short
// reason ("truncated tag", "length 9 runs past the end"). They unwrap to
// [ErrTruncated], [ErrMalformed] or [ErrLimit], for errors.Is. When Decode
// fails it returns no fields. Only a failure of the top-level message
// fails Decode: a nested message that fails (a limit included) is shown
// raw, with an issue warning giving the reason and its offset within that
// nested value; raw decoding shows such a value as text or bytes.
//
// # Ownership
//
// The walker never modifies its input and keeps no reference to it after a
// call returns, except through its results: [Field].Bytes and the byte
// values of decoded fields and raw items are sub-slices of the input, valid
// as long as the caller keeps it unchanged; strings are copies. Nested
// objects and arrays are allocated from the dissect.Record given to Decode
// and live as long as that record's scratch area (until its Reset).
//
// # Robustness
//
// No input makes the package panic, loop or allocate without bound; the
// fuzz target FuzzWalk checks this, with a round trip through protowire's
// encoder. The package has no mutable package-level state.
package pbwalk
