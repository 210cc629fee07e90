package dissect

import (
	"errors"
	"fmt"
	"time"

	"github.com/dissect-tools/dissect/reassembly"
)

// ErrNeedMore is returned by [Parser.Parse] when b holds only the start of a
// message. The int returned with it is the total number of bytes the message
// needs when the parser knows it, or 0.
var ErrNeedMore = errors.New("dissect: need more data")

// ErrMalformed is what every [*Error] unwraps to.
var ErrMalformed = errors.New("dissect: malformed")

// Error reports input that cannot be framed or decoded. Offset is relative to
// the buffer given to the parser; [Stream] rebases it to the stream offset.
type Error struct {
	Proto  string // protocol name, e.g. "deltarobot"
	Code   string // stable token, e.g. "bad_size_id"
	Offset int64
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: offset %d: %s", e.Proto, e.Offset, e.Msg)
}

// Unwrap returns [ErrMalformed].
func (e *Error) Unwrap() error { return ErrMalformed }

// Malformed returns an [*Error] at offset off of the parser's buffer.
func Malformed(proto, code string, off int, format string, args ...any) *Error {
	return &Error{Proto: proto, Code: code, Offset: int64(off), Msg: fmt.Sprintf(format, args...)}
}

// StreamID identifies a stream: its number, transport, endpoints and
// serial link (the type is reassembly's, where streams are made).
type StreamID = reassembly.StreamID

// StreamInfo describes a stream to protocols: its identity and the names
// written in the src and dst keys.
type StreamInfo struct {
	StreamID
	// Name[d] is the sender of direction d as written in src/dst: "ip:port",
	// "[v6]:port", or for serial "host" (dir 0) and the link name (dir 1).
	Name [2]string
}

// Ctx is what a parser is told with each call.
type Ctx struct {
	Stream *StreamInfo
	Dir    Dir
	Offset int64 // stream offset of b[0] in this direction
	// Time is the capture time of the unit being processed; in Parse, of
	// the unit that brought the last byte of the bytes offered, which for
	// bytes held from earlier units (a resync, the hunt) is offered up to
	// the end of each unit in turn (times.go): a message is parsed with
	// the time of the unit that completed it.
	Time time.Time
	// Frame is the number of that unit in the input (Record.Frame).
	Frame int64
	// Final is true when b ends where the transport ends a unit: the end of a
	// UDP datagram. A parser that reads "to the end" may use all of b.
	Final bool
	// Last is true in the last look a byte stream's held bytes get before
	// a gap or the end of the direction: no byte will follow b, so a Sync
	// or Parse that was waiting for more bytes to judge b must judge it
	// now (a candidate it could not confirm is dropped, not waited on).
	// Answering as without Last is correct too: what is held is then
	// skipped, as before.
	Last bool
	// End is true, with Last, when the direction has ended (no gap
	// follows: nothing of it will ever come). A resync that accepts less
	// evidence where the data ends (Deltarobot's two messages ending
	// exactly there) does so only then: before a gap the bytes after it
	// may be what would have confirmed or refuted the candidate.
	End bool
	// Decode is false when only the type is wanted (summary-only runs): the
	// parser may then skip filling Fields, but must still update its state.
	Decode bool
	// Rec is the record to fill on success: Type, Fields, Warnings, Summary.
	// It has been Reset; the Stream fills the common keys.
	Rec *Record
	// Notes collects stream-level warnings that belong to no record (for the
	// summary), e.g. a request never answered.
	notes *[]string
}

// at sets Time and Frame from the unit's stamp.
func (c *Ctx) at(u Stamp) { c.Time, c.Frame = u.Time, u.Frame }

// Note records a warning that belongs to no single record; it is counted and
// shown in the run summary.
func (c *Ctx) Note(format string, args ...any) {
	if c.notes != nil {
		*c.notes = append(*c.notes, fmt.Sprintf(format, args...))
	}
}

// Parser frames and decodes the messages of one stream, both directions. A
// new Parser is made for every stream ([Protocol.NewParser]); it keeps the
// per-stream state (names learnt, requests in flight) but never the bytes it
// is given.
type Parser interface {
	// Parse decodes the one message that starts at b[0]. It returns:
	//   - (n, nil), 0 < n <= len(b): a message of n bytes, described in c.Rec;
	//   - (need, ErrNeedMore): b is the start of a message of need bytes (0
	//     when not yet known);
	//   - (0, *Error): no message can be framed at b[0].
	// Parse must not keep b. Bytes values put in c.Rec may alias b.
	Parse(c *Ctx, b []byte) (int, error)
	// Sync looks for the first offset i in b at which a message plausibly
	// starts, after malformed data or a gap. It returns (i, true) when found,
	// or (k, false) when no message starts before k and more data is needed
	// to judge b[k:] (k == len(b) when nothing in b can start a message).
	Sync(c *Ctx, b []byte) (int, bool)
}

// Ender is implemented by parsers that have something to say when a stream
// ends, such as requests never answered. [Stream] calls End once, after both
// directions have ended; End may only add notes ([Ctx.Note]).
type Ender interface {
	End(c *Ctx)
}

// Verdict is a protocol's answer to content detection.
type Verdict uint8

// Verdicts of [Protocol.Detect].
const (
	No    Verdict = iota // this is not the protocol
	Maybe                // cannot tell yet: more bytes are needed
	Yes                  // this is the protocol
)

// Port is a default port of a protocol.
type Port struct {
	Transport Transport
	Port      uint16
}

// Info describes a protocol for the registry and for `dissect protocols`.
// [Protocol.Info] returns a new value on each call: changing it changes
// nothing else.
type Info struct {
	Name       string // decode-as name, e.g. "deltarobot", "neptune-wiki"
	Proto      string // "proto" key written in records, e.g. "neptune"
	Title      string // one line, e.g. "Deltarobot VR (Qt leader ↔ Unity follower)"
	Transports []Transport
	Ports      []Port // tried when content detection finds nothing
	// Detection says how content detection works, in one line; "" if the
	// protocol has none. A protocol with content detection is also looked
	// for in byte streams of unknown protocol, from its parser's Sync
	// points (see [Stream]); one without is chosen only by port or rule.
	Detection string
	// Types declares every record type the protocol emits (besides gap
	// and skipped, which every stream shares: [EventTypes]). The display
	// filter's field names, `dissect protocols --fields` and `--schema`
	// and every typed writer come from them.
	Types []TypeDecl
}

// Protocol is one dissector. A Protocol value lives for one run and may hold
// state shared by the streams of that run (VRPN's UDP flows named by their
// TCP connection).
type Protocol interface {
	// Info describes the protocol; each call returns a new value that
	// shares nothing with the protocol. The [Registry] calls it once.
	Info() Info
	// Detect looks at the first bytes of direction dir of a new stream (TCP,
	// serial: the first bytes in order; UDP: the first datagram) and says
	// whether they are this protocol. It must be cheap and look at a bounded
	// prefix.
	Detect(s *StreamInfo, dir Dir, b []byte) Verdict
	// NewParser returns the parser for one stream.
	NewParser(s *StreamInfo) Parser
}
