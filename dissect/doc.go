// Package dissect is the core of the toolkit: the record model that every
// protocol emits (the JSON Lines output contract in docs/output.md), the
// declarations of every record type ([TypeDecl], in [Info].Types: fields,
// kinds, units and roles, from which the schema, the filter's names and
// the typed writers are made), the [Parser] interface a protocol implements, the [Stream] driver that frames
// a byte stream with a parser while accounting for every byte, the
// [Registry] that picks a protocol for a stream, and [TypeCounts], the one
// per-type message counter of streams and run summaries.
//
// A protocol lives in its own package below dissect/ and never sees packets
// or files: it is fed the bytes of one direction of one stream, in order,
// and is told about gaps. It describes itself and declares its records
// with [Protocol.Info], a new value on each call; package defaults are functions too ([DefaultLimits]),
// so no caller can change another's.
//
// Choosing a protocol (see [Registry]): a decode-as rule, else content
// detection over the first bytes of each direction (bounded by
// [Limits.MaxDetect]), else a default port. When all fail on a byte stream
// (TCP, serial), the stream does not give up: its bytes are skipped with
// reason [ReasonUnknown] while the parsers of the content-detected
// protocols look for a sync point in its latest bytes, and it is decoded
// from the first point followed by two whole messages. UDP flows are
// judged per datagram and do not look further.
//
// The Stream driver is split by concern: stream.go (the type, its entry
// points and the framing loop), detect.go (held units, content detection,
// the choice), hunt.go (the search for a sync point on a stream of unknown
// protocol) and account.go (skipped runs, gaps, end of direction, records
// and counts). Whatever the input, every byte given to a Stream ends in
// exactly one record (a message, a skipped run or a gap), memory is bounded
// by [Limits], and the work per byte is bounded.
//
// The consumers of records (output/..., query, stats) live outside
// dissect/ and name no protocol: they read declarations ([Registry.Decl]).
//
// Ownership: a [Record] handed to a [Sink] is valid only during that call.
// Byte values inside it may point into the stream buffer; a sink that keeps
// a record must call [Record.Clone].
package dissect
