package stats

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
)

// maxFollowBytes bounds what follow keeps of its records (text, bytes and
// a fixed cost per record); the records past it are only counted.
const maxFollowBytes = 64 << 20

// followEntryCost is what a kept record costs beyond its strings.
const followEntryCost = 96

type followEntry struct {
	time           time.Time
	dir            uint8 // 0: from endpoint A (the first record's source)
	proto, typ     string
	offset, length int64
	info           string
	raw            []byte
	hasRaw         bool
}

// Follow is -z follow,STREAM: every record of one stream, in order, both
// directions; or, in tshark's form, -z follow,tcp|udp,ascii|hex|raw,N
// (follow_tshark.go).
type Follow struct {
	stream    int
	sel       *followSel // tshark's form; nil: follow,STREAM
	transport dissect.Transport
	a, b      string
	started   bool
	entries   []followEntry
	size      int
	limit     int
	dropped   int64
	info      []byte
	buf       []byte
}

// NewFollow returns follow for stream n.
func NewFollow(n int) *Follow { return &Follow{stream: n, limit: maxFollowBytes} }

// Name returns "follow".
func (s *Follow) Name() string { return "follow" }

// Record keeps r's summary (and bytes) when r is on the stream followed.
func (s *Follow) Record(r *dissect.Record) {
	if r.Stream != s.stream || (s.sel != nil && !s.sel.found) {
		return
	}
	if !s.started {
		s.started = true
		s.transport, s.a, s.b = r.Transport, strings.Clone(r.Src), strings.Clone(r.Dst)
	}
	s.info = output.AppendInfo(s.info[:0], r)
	cost := followEntryCost + len(s.info) + len(r.Raw) + len(r.Type) + len(r.Proto)
	if s.dropped > 0 || s.size+cost > s.limit {
		s.dropped++
		return
	}
	s.size += cost
	e := followEntry{time: r.Time, proto: strings.Clone(r.Proto), typ: strings.Clone(r.Type),
		offset: r.Offset, length: r.Length, info: string(s.info)}
	if r.Src != s.a {
		e.dir = 1
	}
	if r.Raw != nil {
		e.raw, e.hasRaw = append([]byte(nil), r.Raw...), true
	}
	s.entries = append(s.entries, e)
}

func (s *Follow) header() []string {
	if !s.started {
		return []string{"follow: stream " + itoa(int64(s.stream)) + ": no record"}
	}
	return []string{
		"follow: stream " + itoa(int64(s.stream)) + " (" + s.transport.String() + ")",
		"A: " + text(s.a) + " (lines flush left)",
		"B: " + text(s.b) + " (lines indented)",
	}
}

func (s *Follow) moreNote() string {
	return itoa(s.dropped) + " more records not shown (use -Y stream==" + itoa(int64(s.stream)) + ")"
}

// WriteTable writes a header naming the stream and its endpoints, then one
// block per record: time from the stream's first record, type, length and
// INFO, and with o.Hex its bytes as a hex dump (offsets within its
// direction). Records from B are indented by 4 spaces.
func (s *Follow) WriteTable(w io.Writer, o TableOptions) error {
	if s.sel != nil {
		return s.writeTShark(w, o)
	}
	return s.writeTable(w, o, s.header())
}

// writeTable writes the header lines, then the records.
func (s *Follow) writeTable(w io.Writer, o TableOptions, header []string) error {
	bw := bufio.NewWriter(w)
	conv := func(str string) string {
		if o.ASCII {
			return output.ASCII(str)
		}
		return str
	}
	line := func(str string) {
		str = conv(str)
		if o.Width > 0 {
			str = output.CutWidth(str, o.Width, o.ASCII)
		}
		bw.WriteString(str)
		bw.WriteByte('\n')
	}
	for _, h := range header {
		line(h)
	}
	var epoch time.Time
	if len(s.entries) > 0 {
		epoch = s.entries[0].time
	}
	var b []byte
	for i := range s.entries {
		e := &s.entries[i]
		indent := ""
		if e.dir == 1 {
			indent = "    "
		}
		b = append(b[:0], indent...)
		b = strconv.AppendFloat(b, e.time.Sub(epoch).Seconds(), 'f', 6, 64)
		b = append(b, "  "...)
		if e.proto != "" {
			b = append(b, text(e.proto)...)
			b = append(b, ' ')
		}
		b = append(b, text(e.typ)...)
		b = append(b, "  "...)
		b = strconv.AppendInt(b, e.length, 10)
		b = append(b, " bytes at "...)
		b = strconv.AppendInt(b, e.offset, 10)
		if e.info != "" {
			b = append(b, "  "...)
			b = append(b, e.info...)
		}
		line(string(b))
		if o.Hex && e.hasRaw {
			for off := 0; off < len(e.raw); off += 16 {
				line(hexLine(indent, e.offset+int64(off), e.raw[off:min(off+16, len(e.raw))]))
			}
		}
	}
	if s.dropped > 0 {
		line(s.moreNote())
	}
	return bw.Flush()
}

// hexLine is one line of a hex dump: the offset (8 hex digits), 16 bytes
// in two groups of 8, and their printable ASCII.
func hexLine(indent string, off int64, p []byte) string {
	b := make([]byte, 0, len(indent)+78)
	b = append(b, indent...)
	o := strconv.FormatInt(off, 16)
	for i := len(o); i < 8; i++ {
		b = append(b, '0')
	}
	b = append(b, o...)
	b = append(b, ' ', ' ')
	for i := range 16 {
		if i == 8 {
			b = append(b, ' ')
		}
		if i < len(p) {
			b = append(b, hexDigits[p[i]>>4], hexDigits[p[i]&15], ' ')
		} else {
			b = append(b, ' ', ' ', ' ')
		}
	}
	b = append(b, ' ')
	for _, c := range p {
		if c < 0x20 || c >= 0x7f {
			c = '.'
		}
		b = append(b, c)
	}
	return string(b)
}

// WriteJSON writes one row per record: stat, time, proto, transport,
// stream, src, dst, offset, length, type, info, and raw (hex) when the
// record carried its bytes; then, when records were not kept, a row with
// "not_shown".
func (s *Follow) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i := range s.entries {
		e := &s.entries[i]
		src, dst := s.a, s.b
		if e.dir == 1 {
			src, dst = dst, src
		}
		r := newRow(s.buf, "follow")
		r.time("time", e.time)
		r.str("proto", e.proto)
		r.str("transport", s.transport.String())
		r.int("stream", int64(s.stream))
		r.str("src", src)
		r.str("dst", dst)
		r.int("offset", e.offset)
		r.int("length", e.length)
		r.str("type", e.typ)
		r.str("info", e.info)
		s.selJSON(&r)
		if e.hasRaw {
			r.key("raw")
			r.b = append(r.b, '"')
			for _, c := range e.raw {
				r.b = append(r.b, hexDigits[c>>4], hexDigits[c&15])
			}
			r.b = append(r.b, '"')
		}
		r.end(bw)
		s.buf = r.b
	}
	if s.dropped > 0 {
		r := newRow(s.buf, "follow")
		r.int("stream", int64(s.stream))
		s.selJSON(&r)
		r.int("not_shown", s.dropped)
		r.end(bw)
		s.buf = r.b
	}
	return bw.Flush()
}
