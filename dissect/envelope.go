package dissect

import (
	"strings"
	"time"
)

// The envelope: the keys every record has beside its fields, declared once.
// The JSON writer writes the JSON keys in this order (a test holds it to
// that), and every other consumer takes the envelope from here: the
// display filter and -e (names, kinds, tshark's spellings), 'dissect
// protocols --fields', the JSON Schemas (and so MCAP's and Foxglove's), and
// the lake's columns.

// EnvelopeKey is one key of the envelope.
type EnvelopeKey struct {
	Name string
	// Kind of its values: KindString, KindInt or KindTime. Seconds marks a
	// KindTime written and compared as a number of seconds (time_epoch,
	// time_relative).
	Kind    Kind
	Seconds bool
	// JSON: a key of every record's JSON object (in this order), of its
	// schema and of the lake; the others are names for -Y and -e only,
	// views of the JSON keys (tshark's ip.src is src's address).
	JSON bool
	// Enum lists the values a string key takes (transport); Min0 marks an
	// integer that is never negative.
	Enum []string
	Min0 bool
	// Addr marks an IP address: the filter takes it unquoted (ip.src ==
	// 10.0.0.1) and compares it in its canonical form.
	Addr bool
	// TShark are tshark's names that mean the same thing.
	TShark []string
	// Doc says what the key holds, for --fields and the schemas.
	Doc string
	// Values returns the key's values in r, n of them: one for most keys;
	// none where the record has no such value (ip.src of a serial record);
	// up to two for the keys of either end (ip.addr, tcp.port). It
	// allocates nothing. Nil for info (the summary, which the output
	// package writes).
	Values func(r *Record) (v [2]Value, n int)
	// Field names the Record field a JSON key's value is, for writers
	// that read it there without Values' call (a hot path); FieldValues
	// for the others.
	Field RecordField
}

// RecordField is the Record field an envelope key's value is.
type RecordField uint8

const (
	FieldValues RecordField = iota // none: read the value with Values
	FieldTime
	FieldFrame
	FieldProto
	FieldTransport
	FieldStream
	FieldSrc
	FieldDst
	FieldOffset
	FieldLength
	FieldType
)

// one is the Values of a key with one value.
func one(v Value) ([2]Value, int) { return [2]Value{v}, 1 }

// Envelope returns the envelope keys: the JSON keys in their JSON order,
// then the names of the filter and -e.
func Envelope() []EnvelopeKey {
	str := func(f func(*Record) string) func(*Record) ([2]Value, int) {
		return func(r *Record) ([2]Value, int) { return one(Str(f(r))) }
	}
	num := func(f func(*Record) int64) func(*Record) ([2]Value, int) {
		return func(r *Record) ([2]Value, int) { return one(Int(f(r))) }
	}
	return []EnvelopeKey{
		{Name: "time", Field: FieldTime, Kind: KindTime, JSON: true, Doc: "capture time of the packet that completed the record (RFC 3339, UTC, nanoseconds)",
			Values: func(r *Record) ([2]Value, int) { return one(Time(r.Time)) }},
		{Name: "frame", Field: FieldFrame, Kind: KindInt, JSON: true, Min0: true, TShark: []string{"frame.number"}, Doc: "the number of that packet in the input, 1-based as tshark's frame.number (serial and log inputs: of the read or log entry)",
			Values: num(func(r *Record) int64 { return r.Frame })},
		{Name: "proto", Field: FieldProto, Kind: KindString, JSON: true, Doc: "the protocol's name (\"\" for an event on a stream of no known protocol)",
			Values: str(func(r *Record) string { return r.Proto })},
		{Name: "transport", Field: FieldTransport, Kind: KindString, JSON: true, Enum: []string{TCP.String(), UDP.String(), Serial.String()}, Doc: "how the stream's bytes travelled",
			Values: str(func(r *Record) string { return r.Transport.String() })},
		{Name: "stream", Field: FieldStream, Kind: KindInt, JSON: true, Min0: true, Doc: "the stream's number, in order of first appearance across transports",
			Values: num(func(r *Record) int64 { return int64(r.Stream) })},
		{Name: "src", Field: FieldSrc, Kind: KindString, JSON: true, Doc: "the sender: ADDRESS:PORT ([ADDRESS]:PORT for IPv6), or host/device on a serial tap",
			Values: str(func(r *Record) string { return r.Src })},
		{Name: "dst", Field: FieldDst, Kind: KindString, JSON: true, Doc: "the receiver, as src",
			Values: str(func(r *Record) string { return r.Dst })},
		{Name: "offset", Field: FieldOffset, Kind: KindInt, JSON: true, Min0: true, Doc: "of the record's first byte, within its direction of the stream",
			Values: num(func(r *Record) int64 { return r.Offset })},
		{Name: "length", Field: FieldLength, Kind: KindInt, JSON: true, Min0: true, Doc: "bytes the record covers on the wire, framing included",
			Values: num(func(r *Record) int64 { return r.Length })},
		{Name: "type", Field: FieldType, Kind: KindString, JSON: true, Doc: "the record's type: a message type, gap or skipped",
			Values: str(func(r *Record) string { return r.Type })},

		{Name: "time_epoch", Kind: KindTime, Seconds: true, TShark: []string{"frame.time_epoch"}, Doc: "time as seconds since 1970 (nine decimals in -e)",
			Values: func(r *Record) ([2]Value, int) { return one(Time(r.Time)) }},
		{Name: "time_relative", Kind: KindTime, Seconds: true, TShark: []string{"frame.time_relative"}, Doc: "time as seconds since the run's first packet",
			Values: func(r *Record) ([2]Value, int) { return one(Time(relativeInstant(r))) }},
		{Name: "info", Kind: KindString, TShark: []string{"_ws.col.Info", "_ws.col.info"}, Doc: "the one-line summary of the table's INFO column"},

		{Name: "ip.src", Kind: KindString, Addr: true, Doc: "src's IPv4 address", Values: addrOf(4, true, false)},
		{Name: "ip.dst", Kind: KindString, Addr: true, Doc: "dst's IPv4 address", Values: addrOf(4, false, true)},
		{Name: "ip.addr", Kind: KindString, Addr: true, Doc: "src's or dst's IPv4 address (either matches)", Values: addrOf(4, true, true)},
		{Name: "ipv6.src", Kind: KindString, Addr: true, Doc: "src's IPv6 address", Values: addrOf(6, true, false)},
		{Name: "ipv6.dst", Kind: KindString, Addr: true, Doc: "dst's IPv6 address", Values: addrOf(6, false, true)},
		{Name: "ipv6.addr", Kind: KindString, Addr: true, Doc: "src's or dst's IPv6 address (either matches)", Values: addrOf(6, true, true)},
		{Name: "tcp", Kind: KindBool, Doc: "true for records carried by TCP", Values: onTransport(TCP)},
		{Name: "tcp.srcport", Kind: KindInt, Min0: true, Doc: "src's port, on TCP", Values: portOf(TCP, true, false)},
		{Name: "tcp.dstport", Kind: KindInt, Min0: true, Doc: "dst's port, on TCP", Values: portOf(TCP, false, true)},
		{Name: "tcp.port", Kind: KindInt, Min0: true, Doc: "src's or dst's port, on TCP (either matches)", Values: portOf(TCP, true, true)},
		{Name: "tcp.stream", Kind: KindInt, Min0: true, Doc: "the stream's number among the TCP streams, 0-based in order of first packet (tshark's)", Values: streamOf(TCP)},
		{Name: "udp", Kind: KindBool, Doc: "true for records carried by UDP", Values: onTransport(UDP)},
		{Name: "udp.srcport", Kind: KindInt, Min0: true, Doc: "src's port, on UDP", Values: portOf(UDP, true, false)},
		{Name: "udp.dstport", Kind: KindInt, Min0: true, Doc: "dst's port, on UDP", Values: portOf(UDP, false, true)},
		{Name: "udp.port", Kind: KindInt, Min0: true, Doc: "src's or dst's port, on UDP (either matches)", Values: portOf(UDP, true, true)},
		{Name: "udp.stream", Kind: KindInt, Min0: true, Doc: "the stream's number among the UDP streams, 0-based in order of first packet (tshark's)", Values: streamOf(UDP)},
	}
}

// relativeInstant is time_relative as an instant of 1970: the time since
// the run's first packet (0 when the run had none).
func relativeInstant(r *Record) time.Time {
	if r.Epoch.IsZero() {
		return time.Unix(0, 0)
	}
	return time.Unix(0, int64(r.Time.Sub(r.Epoch)))
}

// addrOf yields the IPv4 (v 4) or IPv6 (v 6) address of src and/or dst,
// as text (the canonical form netip writes).
func addrOf(v int, src, dst bool) func(*Record) ([2]Value, int) {
	return func(r *Record) (out [2]Value, n int) {
		if r.Transport == Serial {
			return out, 0
		}
		for i, ep := range [2]string{r.Src, r.Dst} {
			if i == 0 && !src || i == 1 && !dst {
				continue
			}
			host, ok := hostOf(ep)
			if !ok || strings.Contains(host, ":") != (v == 6) {
				continue
			}
			out[n] = Str(host)
			n++
		}
		return out, n
	}
}

// hostOf returns the address part of an endpoint, without brackets,
// allocating nothing.
func hostOf(ep string) (string, bool) {
	i := strings.LastIndexByte(ep, ':')
	if i <= 0 {
		return "", false
	}
	h := ep[:i]
	if len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	return h, h != ""
}

// portOf yields src's and/or dst's port on transport t.
func portOf(t Transport, src, dst bool) func(*Record) ([2]Value, int) {
	return func(r *Record) (out [2]Value, n int) {
		if r.Transport != t {
			return out, 0
		}
		for i, ep := range [2]string{r.Src, r.Dst} {
			if i == 0 && !src || i == 1 && !dst {
				continue
			}
			j := strings.LastIndexByte(ep, ':')
			if j < 0 {
				continue
			}
			p, ok := atou16(ep[j+1:])
			if !ok {
				continue
			}
			out[n] = Int(int64(p))
			n++
		}
		return out, n
	}
}

func atou16(s string) (uint16, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return uint16(n), n <= 0xffff
}

// streamOf yields the stream's number among those of transport t.
func streamOf(t Transport) func(*Record) ([2]Value, int) {
	return func(r *Record) ([2]Value, int) {
		if r.Transport == t {
			return one(Int(int64(r.TransportStream)))
		}
		return [2]Value{}, 0
	}
}

// onTransport yields true for records carried by t.
func onTransport(t Transport) func(*Record) ([2]Value, int) {
	return func(r *Record) ([2]Value, int) {
		if r.Transport == t {
			return one(Bool(true))
		}
		return [2]Value{}, 0
	}
}

// LookupEnvelope returns the envelope key name names: its own name or one
// of tshark's.
func LookupEnvelope(name string) (EnvelopeKey, bool) {
	for _, k := range Envelope() {
		if k.Name == name {
			return k, true
		}
		for _, t := range k.TShark {
			if t == name {
				return k, true
			}
		}
	}
	return EnvelopeKey{}, false
}
