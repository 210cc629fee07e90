package stats

import (
	"bufio"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// maxConvs bounds the streams kept; later streams are added up in one
// "(other)" row.
const maxConvs = 1 << 16

type convAcc struct {
	stream      int
	transport   dissect.Transport
	a, b        string // endpoints: src and dst of the stream's first record
	proto       string // the first protocol named on the stream
	msgs, bytes [2]int64
	gaps, gapB  int64
	skipped     int64 // records
	skipB       int64
	warned      int64 // records with warnings
	first, last time.Time
}

// Conv is -z conv: one row per stream; -z conv,tcp and conv,udp (as
// tshark's) only the streams of that transport.
type Conv struct {
	only     dissect.Transport // 0: every transport
	byStream map[int]*convAcc
	order    []*convAcc
	other    *convAcc
	buf      []byte
}

// NewConv returns an empty conv statistic.
func NewConv() *Conv { return &Conv{byStream: map[int]*convAcc{}} }

// NewConvOf returns conv of the streams of transport t alone.
func NewConvOf(t dissect.Transport) *Conv {
	c := NewConv()
	c.only = t
	return c
}

// Name returns "conv".
func (s *Conv) Name() string { return "conv" }

// Record adds r to its stream.
func (s *Conv) Record(r *dissect.Record) {
	if s.only != 0 && r.Transport != s.only {
		return
	}
	c := s.byStream[r.Stream]
	if c == nil {
		if len(s.byStream) >= maxConvs {
			if s.other == nil {
				s.other = &convAcc{stream: -1, proto: "(other)", first: r.Time}
			}
			c = s.other
		} else {
			c = &convAcc{stream: r.Stream, transport: r.Transport, a: strings.Clone(r.Src), b: strings.Clone(r.Dst), first: r.Time}
			s.byStream[r.Stream] = c
			s.order = append(s.order, c)
		}
	}
	if c.proto == "" && r.Proto != "" {
		c.proto = strings.Clone(r.Proto)
	}
	if r.Time.Before(c.first) {
		c.first = r.Time
	}
	if r.Time.After(c.last) {
		c.last = r.Time
	}
	if len(r.Warnings) > 0 {
		c.warned++
	}
	switch r.Type {
	case dissect.TypeGap:
		c.gaps++
		c.gapB += r.Length
		return
	case dissect.TypeSkipped:
		c.skipped++
		c.skipB += r.Length
		return
	}
	d := 0
	if c.stream >= 0 && r.Src != c.a {
		d = 1
	}
	c.msgs[d]++
	c.bytes[d] += r.Length
}

func (s *Conv) rows() []*convAcc {
	rows := slices.Clone(s.order)
	slices.SortFunc(rows, func(a, b *convAcc) int { return a.stream - b.stream })
	if s.other != nil {
		rows = append(rows, s.other)
	}
	return rows
}

// WriteTable writes one row per stream.
func (s *Conv) WriteTable(w io.Writer, o TableOptions) error {
	t := &table{
		Title: "conv: streams (A is the source of the stream's first record)",
	}
	if s.only != 0 {
		t.Title = "conv: " + s.only.String() + " streams (A is the source of the stream's first record)"
	}
	t.Cols = []column{
		// The endpoints with their ports are never cut while another
		// column can go: PROTO goes before (tshark's conv has none).
		{Name: "STREAM", Right: true}, {Name: "TRANSPORT", Drop: 16}, {Name: "A → B", Whole: true}, {Name: "PROTO", Drop: 11},
		{Name: "MSGS", Right: true}, {Name: "A→B", Right: true, Drop: 15}, {Name: "B→A", Right: true, Drop: 15},
		{Name: "BYTES", Right: true, Drop: 3}, {Name: "GAPS", Right: true, Drop: 14}, {Name: "GAP BYTES", Right: true, Drop: 5},
		{Name: "SKIPPED BYTES", Right: true, Drop: 4}, {Name: "WARNED", Right: true, Drop: 12},
		{Name: "FIRST s", Right: true, Drop: 13}, {Name: "DURATION s", Right: true, Drop: 2},
	}
	var epoch time.Time
	for i, c := range s.order {
		if i == 0 || c.first.Before(epoch) {
			epoch = c.first
		}
	}
	for _, c := range s.rows() {
		stream, tr, ends := itoa(int64(c.stream)), c.transport.String(), text(c.a)+" → "+text(c.b)
		if c.stream < 0 {
			stream, tr, ends = "-", "", ""
		}
		t.Add(stream, tr, ends, text(c.proto), itoa(c.msgs[0]+c.msgs[1]), itoa(c.msgs[0]), itoa(c.msgs[1]),
			itoa(c.bytes[0]+c.bytes[1]), itoa(c.gaps), itoa(c.gapB), itoa(c.skipB), itoa(c.warned),
			secs(c.first.Sub(epoch).Seconds()), secs(c.last.Sub(c.first).Seconds()))
	}
	t.Notes = append(t.Notes, "MSGS and BYTES: decoded messages (gap and skipped records apart); WARNED: records with warnings")
	return write(t, w, o)
}

// WriteJSON writes one row per stream.
func (s *Conv) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, c := range s.rows() {
		r := newRow(s.buf, "conv")
		r.int("stream", int64(c.stream))
		if c.stream >= 0 {
			r.str("transport", c.transport.String())
			r.str("a", c.a)
			r.str("b", c.b)
		}
		r.str("proto", c.proto)
		r.int("messages", c.msgs[0]+c.msgs[1])
		r.int("messages_ab", c.msgs[0])
		r.int("messages_ba", c.msgs[1])
		r.int("bytes", c.bytes[0]+c.bytes[1])
		r.int("bytes_ab", c.bytes[0])
		r.int("bytes_ba", c.bytes[1])
		r.int("gaps", c.gaps)
		r.int("gap_bytes", c.gapB)
		r.int("skipped", c.skipped)
		r.int("skipped_bytes", c.skipB)
		r.int("warned", c.warned)
		r.time("first", c.first)
		r.time("last", c.last)
		r.secs("duration_s", c.last.Sub(c.first).Seconds())
		r.end(bw)
		s.buf = r.b
	}
	return bw.Flush()
}
