// Package dissect is the core of the toolkit: the record model that every
// protocol emits (the JSON Lines output contract in docs/output.md), the
// [Parser] interface a protocol implements, the [Stream] driver that frames
// a byte stream with a parser while accounting for every byte, and the
// [Registry] that picks a protocol for a stream by decode-as rule, content or
// default port.
//
// A protocol lives in its own package below dissect/ and never sees packets
// or files: it is fed the bytes of one direction of one stream, in order,
// and is told about gaps.
//
// Ownership: a [Record] handed to a [Sink] is valid only during that call.
// Byte values inside it may point into the stream buffer; a sink that keeps
// a record must call [Record.Clone].
package dissect
