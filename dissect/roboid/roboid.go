package roboid

import (
	"math"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

const proto = "roboid"

// Port is the UDP port tried when nothing else selects a protocol for a
// stream. It is an unverified lead (protocols.md §3.4), not a documented
// fact; use a decode-as rule ("udp.port==N,roboid") for other ports.
const Port = 7681

// Message ids: the first byte of every datagram.
const (
	IDPose        = 0x10
	IDNewThing    = 0x80
	IDInvestigate = 0x81
	IDModelURL    = 0x90
	IDClient      = 0xA0
	IDNetworkID   = 0xA1
)

// Record types.
const (
	TypeClient      = "Client"
	TypeNetworkID   = "NetworkId"
	TypePose        = "Pose"
	TypeNewThing    = "NewThing"
	TypeInvestigate = "Investigate"
	TypeModelURL    = "ModelURL"
	TypeUnknown     = "unknown"
)

const (
	// MaxValues bounds the typed values decoded from one Pose; the bytes
	// after them are shown as "rest", with a warning.
	MaxValues = 1024
	// maxValueWarnings bounds the per-value warnings of one record (one
	// more warning then counts those left out).
	maxValueWarnings = 8
	// summaryValues is how many values the table summary shows.
	summaryValues = 4
	// summaryData is how many data bytes the table summary shows.
	summaryData = 16
	// summaryText is how many characters of a ModelURL the summary shows.
	summaryText = 80
)

type protocol struct {
	pl *plan
}

// New returns the Roboid Control protocol. It has no content detection (a
// one-byte message id is no signature): streams are chosen by the default
// UDP port [Port] (an unverified guess) or by a decode-as rule such as
// "udp.port==7681,roboid".
func New() dissect.Protocol { return protocol{pl: compile()} }

// Info describes the protocol (a new value on each call).
func (pr protocol) Info() dissect.Info {
	return dissect.Info{
		Name:       proto,
		Proto:      proto,
		Title:      "Roboid Control network sync (Passer VR), data-type byte format of April 2024",
		Transports: []dissect.Transport{dissect.UDP},
		Ports:      []dissect.Port{{Transport: dissect.UDP, Port: Port}},
		Types:      pr.pl.decls(),
	}
}

// Detect always answers No: nothing in a Roboid datagram is distinctive.
func (protocol) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict { return dissect.No }

// NewParser returns the parser of one stream.
func (pr protocol) NewParser(*dissect.StreamInfo) dissect.Parser {
	return &parser{pl: pr.pl, dec: pr.pl.p.NewDecoder()}
}

// parser decodes the datagrams of one stream. It keeps no protocol state,
// only scratch space for its decoder and summaries.
type parser struct {
	pl  *plan
	dec *layout.Decoder
	sum []byte
}

// Parse decodes the datagram b as one message and returns len(b). Outside a
// datagram (c.Final false) no message end can be known: it returns a
// [*dissect.Error] with code "not_datagram".
func (p *parser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	if !c.Final {
		return 0, dissect.Malformed(proto, "not_datagram", 0, "a message ends where its UDP datagram ends; these bytes are not a datagram")
	}
	if len(b) == 0 {
		return 0, dissect.ErrNeedMore
	}
	m := &p.pl.ids[b[0]]
	if m.t < 0 {
		p.unknown(c, b)
		return len(b), nil
	}
	r := c.Rec
	r.Type = m.record
	var err error
	if c.Decode {
		_, err = p.dec.Decode(r, m.t, b)
	} else if m.quiet < 0 || len(b) < m.quiet {
		_, err = p.dec.Check(r, m.t, b) // the same warnings, no fields
	}
	if de, ok := err.(*layout.DecodeError); ok { // an id cut off: every other field takes the rest
		r.Warnf("%s: the datagram ends after %d bytes, before %s", r.Type, len(b), de.Field)
	}
	switch {
	case m.t != p.pl.pose:
		p.other(c, b, m.ids, err != nil)
	case err != nil:
		if c.Decode {
			p.sum = appendIDs(p.sum[:0], b[1:])
			r.Summary = string(p.sum)
		}
	default:
		p.pose(c, b)
	}
	return len(b), nil
}

// Sync never finds a message start in bytes that are not a datagram (every
// datagram starts a message, so the framework calls it only for such bytes).
func (p *parser) Sync(_ *dissect.Ctx, b []byte) (int, bool) { return len(b), false }

// other completes a message of ids and data whose id bytes end at idEnd:
// the data when the datagram ended in its ids (short), and the summary.
func (p *parser) other(c *dissect.Ctx, b []byte, idEnd int, short bool) {
	if !c.Decode {
		return
	}
	r := c.Rec
	if short {
		r.Add("data", dissect.Bytes(b[len(b):]))
	}
	k := min(len(b), idEnd)
	ids, data := b[1:k], b[k:]
	s := p.sum[:0]
	s = appendIDs(s, ids)
	if len(data) > 0 {
		if len(s) > 0 {
			s = append(s, ' ')
		}
		if r.Type == TypeModelURL && printable(data) {
			s = strconv.AppendQuote(s, string(data[:min(len(data), summaryText)]))
			if len(data) > summaryText {
				s = append(s, "…"...)
			}
		} else {
			s = append(s, "data="...)
			s = appendHex(s, data)
		}
	}
	p.sum = s
	r.Summary = string(s)
}

func (p *parser) unknown(c *dissect.Ctx, b []byte) {
	r := c.Rec
	r.Type = TypeUnknown
	r.Warnf("unknown message id 0x%02x", b[0])
	if !c.Decode {
		return
	}
	r.Add("message_id", dissect.Int(int64(b[0])))
	r.Add("data", dissect.Bytes(b[1:]))
	s := append(p.sum[:0], "id=0x"...)
	s = append(s, hexDigits[b[0]>>4], hexDigits[b[0]&15])
	s = append(s, " len="...)
	s = strconv.AppendInt(s, int64(len(b)), 10)
	p.sum = s
	r.Summary = string(s)
}

// walk is the outcome of framing the typed values of a Pose.
type walk struct {
	n         int  // values framed, the last possibly truncated
	truncated bool // the last value is cut off by the end of the datagram
	rest      int  // offset of the bytes not decoded as values, or -1
}

// pose decodes the typed values of a Pose whose ids are decoded, from
// byte 3.
func (p *parser) pose(c *dissect.Ctx, b []byte) {
	r := c.Rec
	w := frameValues(r, b)
	if !c.Decode {
		return
	}
	s := appendIDs(p.sum[:0], b[1:3])
	s = append(s, ':')
	vals := r.Alloc(w.n)
	off := 3
	for i := range vals {
		t := DataType(b[off])
		end := off + 1 + t.Size()
		trunc := i == w.n-1 && w.truncated
		if trunc {
			end = len(b)
		}
		raw := b[off+1 : end]
		vals[i] = dissect.Elem(value(r, t, raw, trunc))
		if i < summaryValues {
			if i > 0 {
				s = append(s, ';')
			}
			s = append(s, ' ')
			s = appendValue(s, t, raw, trunc)
		}
		off = end
	}
	r.Add("values", dissect.Array(vals))
	switch {
	case w.n > summaryValues:
		s = append(s, "; +"...)
		s = strconv.AppendInt(s, int64(w.n-summaryValues), 10)
		s = append(s, " more"...)
	case w.n == 0:
		s = append(s, " no values"...)
	}
	if w.rest >= 0 {
		r.Add("rest", dissect.Bytes(b[w.rest:]))
		s = append(s, "; rest "...)
		s = strconv.AppendInt(s, int64(len(b)-w.rest), 10)
		s = append(s, " bytes"...)
	}
	p.sum = s
	r.Summary = string(s)
}

// frameValues finds the typed values of the Pose b (from offset 3) and adds
// the warnings about them to r. It allocates only for warnings.
func frameValues(r *dissect.Record, b []byte) walk {
	w := walk{rest: -1}
	undefined := 0
	off := 3
	for off < len(b) {
		t := DataType(b[off])
		if t == 0 {
			r.Warnf("Pose: data type 0x00 at byte %d announces an extension byte, which the spec does not define: the %d bytes from there are shown as rest", off, len(b)-off)
			w.rest = off
			break
		}
		if w.n == MaxValues {
			r.Warnf("Pose: only the first %d values are decoded: the %d bytes from byte %d are shown as rest", MaxValues, len(b)-off, off)
			w.rest = off
			break
		}
		if !t.Defined() {
			if undefined < maxValueWarnings {
				r.Warnf("Pose: value %d (data type %s at byte %d) has undefined semantics %d", w.n, t, off, t&15)
			}
			undefined++
		}
		w.n++
		end := off + 1 + t.Size()
		if end > len(b) {
			r.Warnf("Pose: value %d (data type %s at byte %d) needs %d bytes, the datagram ends after %d", w.n-1, t, off, t.Size(), len(b)-off-1)
			w.truncated = true
			break
		}
		off = end
	}
	if undefined > maxValueWarnings {
		r.Warnf("Pose: %d more values with undefined semantics", undefined-maxValueWarnings)
	}
	return w
}

// value returns the object of one typed value: data_type, semantics,
// angular_bytes, linear_bytes, raw, then either truncated (true) or the
// interpretation: angles_deg, magnitude_uint, magnitude_f16 (2 bytes),
// magnitude_f32 (4 bytes).
func value(r *dissect.Record, t DataType, raw []byte, trunc bool) dissect.Value {
	na, nl := t.AngularBytes(), t.LinearBytes()
	k := 5
	switch {
	case trunc:
		k++
	default:
		if na > 0 {
			k += 1 + na
		}
		if nl > 0 {
			k++
		}
		if nl > 1 {
			k++
		}
	}
	fs := r.Alloc(k)
	fs[0] = dissect.Field{Key: "data_type", Value: dissect.Str(t.String())}
	fs[1] = dissect.Field{Key: "semantics", Value: dissect.Str(t.Semantics())}
	fs[2] = dissect.Field{Key: "angular_bytes", Value: dissect.Uint(uint64(na))}
	fs[3] = dissect.Field{Key: "linear_bytes", Value: dissect.Uint(uint64(nl))}
	fs[4] = dissect.Field{Key: "raw", Value: dissect.Bytes(raw)}
	i := 5
	if trunc {
		fs[i] = dissect.Field{Key: "truncated", Value: dissect.Bool(true)}
		return dissect.Object(fs[:i+1])
	}
	if na > 0 {
		angles := fs[k-na : k : k]
		for j := range angles {
			angles[j] = dissect.Elem(dissect.Float(AngleDegrees(raw[j])))
		}
		fs[i] = dissect.Field{Key: "angles_deg", Value: dissect.Array(angles)}
		i++
	}
	if nl > 0 {
		m := raw[na:]
		fs[i] = dissect.Field{Key: "magnitude_uint", Value: dissect.Uint(magnitude(m))}
		i++
		switch nl {
		case 2:
			fs[i] = dissect.Field{Key: "magnitude_f16", Value: dissect.Float(Half(uint16(magnitude(m))))}
			i++
		case 4:
			fs[i] = dissect.Field{Key: "magnitude_f32", Value: dissect.Float32(math.Float32frombits(uint32(magnitude(m))))}
			i++
		}
	}
	return dissect.Object(fs[:i])
}

// appendValue writes a value for the summary: its semantics (or
// "undefined(0xNN)"), the angles in degrees, and the magnitude (1 byte as
// an integer, 2 bytes as float16, 4 bytes as float32).
func appendValue(s []byte, t DataType, raw []byte, trunc bool) []byte {
	if t.Defined() {
		s = append(s, t.Semantics()...)
	} else {
		s = append(s, "undefined("...)
		s = append(s, t.String()...)
		s = append(s, ')')
	}
	if trunc {
		return append(s, " (truncated)"...)
	}
	na, nl := t.AngularBytes(), t.LinearBytes()
	for j := range na {
		if j == 0 {
			s = append(s, ' ')
		} else {
			s = append(s, ',')
		}
		s = append(s, angleText[raw[j]]...)
	}
	m := raw[na:]
	switch nl {
	case 1:
		s = append(s, ' ')
		s = strconv.AppendUint(s, uint64(m[0]), 10)
	case 2:
		s = append(s, ' ')
		s = strconv.AppendFloat(s, Half(uint16(magnitude(m))), 'g', -1, 64)
		s = append(s, " (f16)"...)
	case 4:
		s = append(s, ' ')
		s = strconv.AppendFloat(s, float64(math.Float32frombits(uint32(magnitude(m)))), 'g', -1, 32)
		s = append(s, " (f32)"...)
	}
	return s
}

// angleText holds each angle byte in degrees with its unit, for summaries.
var angleText = func() (s [256]string) {
	for i := range s {
		s[i] = strconv.FormatFloat(AngleDegrees(byte(i)), 'g', -1, 64) + "°"
	}
	return s
}()

// appendIDs writes "net N" and "thing N" for the id bytes present.
func appendIDs(s []byte, ids []byte) []byte {
	for i, id := range ids {
		if i > 0 {
			s = append(s, ' ')
		}
		if i == 0 {
			s = append(s, "net "...)
		} else {
			s = append(s, "thing "...)
		}
		s = strconv.AppendUint(s, uint64(id), 10)
	}
	return s
}

const hexDigits = "0123456789abcdef"

// appendHex writes up to summaryData bytes of b in hex, then "…" if more.
func appendHex(s, b []byte) []byte {
	for i, c := range b {
		if i == summaryData {
			return append(s, "…"...)
		}
		s = append(s, hexDigits[c>>4], hexDigits[c&15])
	}
	return s
}

// printable reports whether b is printable ASCII.
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
