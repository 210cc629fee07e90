package dissect

import (
	"fmt"
	"slices"
	"time"

	"github.com/dissect-tools/dissect/reassembly"
)

// Transport is how a stream's bytes travelled; the type is reassembly's,
// where streams are made.
type Transport = reassembly.Transport

// Transports, as written in the "transport" key.
const (
	TCP    = reassembly.TCP
	UDP    = reassembly.UDP
	Serial = reassembly.Serial
)

// ParseTransport is the inverse of [Transport.String].
func ParseTransport(s string) (Transport, bool) { return reassembly.ParseTransport(s) }

// Dir is a direction of a stream (the type is reassembly's). Dir 0 is sent
// by the stream's initiator (TCP: the side that sent the SYN, or the first
// sender seen; UDP: the first sender; serial: the host, so dir 0 is
// host→device) and Dir 1 by the other side.
type Dir = reassembly.Dir

// Stamp says which unit of the input (packet, serial read, log entry)
// brought bytes: its capture time and its number. A record carries the
// stamp of the unit that completed it (Record.Time, Record.Frame); a
// stream keeps the stamps of the bytes it holds (times.go).
type Stamp = reassembly.Stamp

// Record types that every protocol shares.
const (
	TypeGap     = "gap"     // bytes never captured
	TypeSkipped = "skipped" // bytes seen but not decoded
)

// Record is one line of output: a decoded message or a stream event (gap,
// skipped). Its keys are those of the output contract (docs/output.md).
type Record struct {
	Time      time.Time // capture time of the unit that completed the record
	Frame     int64     // that unit's number in the input, 1-based (tshark's frame.number); 0: unknown
	Proto     string    // "" for events on a stream whose protocol is unknown
	Transport Transport
	Stream    int
	// TransportStream is the stream's number among those of its
	// transport, 0-based in order of first appearance (tshark's
	// tcp.stream, udp.stream).
	TransportStream int
	Src, Dst        string
	Offset          int64 // of the first byte, within this direction of the stream
	Length          int64 // bytes covered on the wire, framing included
	Type            string
	Fields          Fields
	Warnings        []string
	Summary         string // one-line human summary for the table; empty: derived from Fields
	// Raw is the bytes the record covers (Length of them; none for a gap),
	// set only when the run asks for them (-x). It aliases a stream
	// buffer: valid until the sink's Record returns.
	Raw []byte
	// Epoch is the time of the run's first timestamped packet, set by the
	// pipeline on every record: time_relative (tshark's
	// frame.time_relative) is Time − Epoch. Zero when the run has none.
	Epoch time.Time
	// Dir is the record's direction of its stream (Src sent it): which
	// bytes Offset counts. Not an output key (Src and Dst say it); a cut
	// (-r with -w) reads it.
	Dir Dir

	arena []Field
}

// Add appends a field. It sets the new field member by member: building
// a Field and copying it costs about twice as much.
func (r *Record) Add(key string, v Value) {
	f := &r.Extend(1)[0]
	f.Key = key
	f.Value.kind, f.Value.num, f.Value.str, f.Value.sub = v.kind, v.num, v.str, v.sub
}

// Extend appends n fields to r.Fields and returns them, to be set in
// place (Field.Key, and Value's setters such as SetFloat32): the fastest
// way to add several fields. Their previous contents are undefined.
func (r *Record) Extend(n int) []Field {
	l := len(r.Fields)
	if cap(r.Fields)-l < n {
		r.Fields = slices.Grow(r.Fields, n)
	}
	r.Fields = r.Fields[:l+n]
	return r.Fields[l : l+n : l+n]
}

// Warn appends a warning.
func (r *Record) Warn(msg string) { r.Warnings = append(r.Warnings, msg) }

// Warnf appends a formatted warning.
func (r *Record) Warnf(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// Alloc returns n zeroed fields for building a nested array or object. They
// live in a scratch area reused for the next record, so nested values cost no
// allocation once the area has grown.
func (r *Record) Alloc(n int) []Field {
	if cap(r.arena)-len(r.arena) < n {
		r.arena = make([]Field, 0, max(64, 2*cap(r.arena), n))
	}
	l := len(r.arena)
	r.arena = r.arena[:l+n]
	s := r.arena[l : l+n : l+n]
	clear(s)
	return s
}

// Reset empties the record's protocol part (type, fields, warnings, summary),
// keeping its buffers for reuse.
func (r *Record) Reset() {
	r.Type = ""
	r.Fields = r.Fields[:0]
	r.Warnings = r.Warnings[:0]
	r.Summary = ""
	r.arena = r.arena[:0]
}

// Clone returns a deep copy that aliases no buffer.
func (r *Record) Clone() *Record {
	c := *r
	c.Fields = cloneFields(r.Fields)
	if r.Warnings != nil {
		c.Warnings = append([]string(nil), r.Warnings...)
	}
	if r.Raw != nil {
		c.Raw = append([]byte(nil), r.Raw...) // Raw aliases a stream buffer
	}
	c.arena = nil
	return &c
}

// A Sink receives records in output order. The record and everything it
// references are valid only during the call. An error stops the run.
type Sink interface {
	Record(r *Record) error
}

// SinkFunc adapts a function to a [Sink].
type SinkFunc func(r *Record) error

// Record calls f(r).
func (f SinkFunc) Record(r *Record) error { return f(r) }
