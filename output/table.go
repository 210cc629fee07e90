package output

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// TimeFormat selects the TIME column of the table, like tshark's -t.
type TimeFormat uint8

// Time formats, tshark's -t letters. The absolute ones of a, ad and adoy
// are in [TableOptions.Location] (the CLI gives the local zone, as
// tshark's are local time); u, ud and udoy are always UTC. All have six
// fraction digits, truncated.
const (
	TimeRelative     TimeFormat = iota // seconds since the first packet (tshark -t r)
	TimeAbsolute                       // time of day (tshark -t a)
	TimeAbsoluteDate                   // date and time (tshark -t ad)
	TimeEpoch                          // seconds since 1970 (tshark -t e)
	TimeAbsoluteDoy                    // year/day of year and time (tshark -t adoy): 2026/326 00:08:19.477060
	TimeUTC                            // UTC time of day (tshark -t u)
	TimeUTCDate                        // UTC date and time (tshark -t ud)
	TimeUTCDoy                         // UTC year/day of year and time (tshark -t udoy)
	TimeDelta                          // seconds since the previous record, shown or not (tshark -t d)
	TimeDeltaShown                     // seconds since the previous record shown (tshark -t dd)
)

// TimeFormats are the letters ParseTimeFormat accepts, as tshark's -t
// takes them.
var TimeFormats = []string{"a", "ad", "adoy", "d", "dd", "e", "r", "u", "ud", "udoy"}

// ParseTimeFormat accepts tshark's letters: a, ad, adoy, d, dd, e, r, u,
// ud, udoy (and the words relative, absolute, date, epoch).
func ParseTimeFormat(s string) (TimeFormat, bool) {
	switch s {
	case "r", "relative":
		return TimeRelative, true
	case "a", "absolute":
		return TimeAbsolute, true
	case "ad", "date":
		return TimeAbsoluteDate, true
	case "e", "epoch":
		return TimeEpoch, true
	case "adoy":
		return TimeAbsoluteDoy, true
	case "u":
		return TimeUTC, true
	case "ud":
		return TimeUTCDate, true
	case "udoy":
		return TimeUTCDoy, true
	case "d":
		return TimeDelta, true
	case "dd":
		return TimeDeltaShown, true
	}
	return 0, false
}

// Table writes one aligned line per record, streaming: it never holds
// records, so it works on captures of any size and live. The columns'
// widths are fixed when the table is made (see [TableOptions] and
// newLayout), so every row lines up with the header for the whole run.
type Table struct {
	w         *bufio.Writer
	flushEach bool
	format    TimeFormat
	epoch     time.Time
	loc       *time.Location // TableOptions.Location
	prev      time.Time      // the previous record's time (-t d, dd)
	header    bool
	ascii     bool
	limit     int // TableOptions.Width
	hex       bool
	whole     bool // TableOptions.Whole
	lay       layout
	buf       []byte // the line being written
	tmp       []byte // scratch of the cutting functions
	dst       []byte // scratch: the destination while the source is cut
	port      []byte // scratch: the port while its host is cut
}

// The columns of the table, left to right.
const (
	colTime = iota
	colStream
	colAddr
	colProto
	colType
	colInfo
	numCols
)

// Column headers of the table.
var tableHeader = [numCols]string{"TIME", "STREAM", "SOURCE → DESTINATION", "PROTO", "TYPE", "INFO"}

// TableOptions say how a table is laid out.
type TableOptions struct {
	Time TimeFormat
	// Location is the zone of the absolute formats a, ad and adoy (nil:
	// UTC).
	Location *time.Location
	// Width is the terminal's width in columns: no line is wider. 0 means
	// unlimited (a pipe, a file, or --wide).
	Width int
	// ASCII replaces the arrow and ellipsis by "->" and "..." for
	// terminals whose locale is not UTF-8 (LANG=C), and every other
	// character that is not ASCII by \u{NNNN}.
	ASCII bool
	// FlushEach flushes every line as it is written.
	FlushEach bool
	// Whole shows the whole INFO (--wide): see [AppendInfoWhole].
	Whole bool
	// Hex writes the record's bytes (dissect.Record.Raw) under each row,
	// as tshark's -x does, then an empty line (see hexdump.go).
	Hex bool
}

// NewTable returns a table writer on w.
func NewTable(w io.Writer, o TableOptions) *Table {
	return &Table{
		w:         bufio.NewWriterSize(w, 64<<10),
		format:    o.Time,
		loc:       o.Location,
		flushEach: o.FlushEach,
		ascii:     o.ASCII,
		limit:     max(o.Width, 0),
		hex:       o.Hex,
		whole:     o.Whole,
		lay:       newLayout(max(o.Width, 0), o.Time),
	}
}

// SetEpoch sets the instant relative times count from (the first packet).
// Without it, the first record's time is used.
func (t *Table) SetEpoch(e time.Time) {
	if t.epoch.IsZero() {
		t.epoch = e
	}
}

// Record writes r as one line.
func (t *Table) Record(r *dissect.Record) error {
	t.SetEpoch(r.Time)
	b := t.buf[:0]
	if !t.header {
		t.header = true
		b = t.appendHeader(b)
	}
	// Each column is written, then cut to its width (only when the width
	// is limited) and the next one starts at its fixed position. Every
	// text comes from the wire and is escaped.
	pos, first := 0, true
	for c := range numCols {
		if !t.lay.show[c] {
			continue
		}
		padFrom, padPos := len(b), pos
		if !first {
			b, pos = t.padTo(b, pos, c)
		}
		first = false
		from := len(b)
		width := t.lay.width[c]
		var w int
		switch c {
		case colTime:
			b = t.appendTime(b, r.Time)
			b, w = t.fitTime(b, from, width)
		case colStream:
			b = strconv.AppendInt(b, int64(r.Stream), 10)
			b, w = t.fit(b, from, width, (*Table).cutTail)
		case colAddr:
			b, w = t.appendAddr(b, r.Src, r.Dst, width)
		case colProto:
			if r.Proto == "" {
				b = append(b, '-')
			} else {
				b = t.appendText(b, r.Proto)
			}
			b, w = t.fit(b, from, width, (*Table).cutHead)
		case colType:
			b = t.appendText(b, r.Type)
			b, w = t.fit(b, from, width, (*Table).cutHead)
		case colInfo:
			b = appendInfo(b, r, t.whole)
			if t.ascii {
				b = t.toASCII(b, from)
			}
			if t.limit > 0 {
				b, _ = t.cutHead(b, from, width)
			}
		}
		if len(b) == from {
			// An empty column: no padding before it, so an empty INFO
			// leaves no trailing spaces.
			b, pos = b[:padFrom], padPos
		}
		pos += w
	}
	b = append(b, '\n')
	if t.hex {
		b = appendHexDump(b, r.Raw, hexDumpPerLine(t.limit, len(r.Raw)))
		b = append(b, '\n')
	}
	t.buf = b
	if _, err := t.w.Write(b); err != nil {
		return err
	}
	if t.flushEach {
		return t.w.Flush()
	}
	return nil
}

// appendHeader appends the header line.
func (t *Table) appendHeader(b []byte) []byte {
	pos, first := 0, true
	for c := range numCols {
		if !t.lay.show[c] {
			continue
		}
		if !first {
			b, pos = t.padTo(b, pos, c)
		}
		first = false
		h := tableHeader[c]
		width := t.lay.width[c]
		if c == colAddr && t.limit > 0 && stringWidth(h) > width {
			h = "SRC → DST"
		}
		from := len(b)
		b = t.appendText(b, h)
		var w int
		if c == colInfo && t.limit == 0 {
			continue
		}
		b, w = t.fit(b, from, width, (*Table).cutHead)
		pos += w
	}
	return append(b, '\n')
}

// padTo pads the line, pos columns wide, to the start of column c. A
// value wider than its column (only when the width is unlimited) pushes
// the rest of the line: the next column starts after the gap.
func (t *Table) padTo(b []byte, pos, c int) ([]byte, int) {
	to := max(t.lay.start[c], pos+t.lay.gap)
	for ; pos < to; pos++ {
		b = append(b, ' ')
	}
	return b, pos
}

// appendText appends s escaped ([appendText]), in ASCII if asked.
func (t *Table) appendText(b []byte, s string) []byte {
	from := len(b)
	b = appendText(b, s)
	if t.ascii {
		b = t.toASCII(b, from)
	}
	return b
}

// toASCII rewrites b[from:] in ASCII ([appendASCII]).
func (t *Table) toASCII(b []byte, from int) []byte {
	if asciiOnly(b[from:]) {
		return b
	}
	t.tmp = append(t.tmp[:0], b[from:]...)
	return appendASCII(b[:from], t.tmp)
}

// fit cuts b[from:] to width columns with cut when the table's width is
// limited, and returns b and the column's width.
func (t *Table) fit(b []byte, from, width int, cut func(*Table, []byte, int, int) ([]byte, int)) ([]byte, int) {
	if t.limit == 0 {
		return b, textWidth(b[from:])
	}
	return cut(t, b, from, width)
}

// fitTime cuts a time b[from:] to width columns: first fraction digits,
// then (a time whose whole seconds alone are wider, only from absurd
// timestamps) the end, after an ellipsis.
func (t *Table) fitTime(b []byte, from, width int) ([]byte, int) {
	n := len(b) - from // times are ASCII
	if t.limit == 0 || n <= width {
		return b, n
	}
	if dot := bytes.IndexByte(b[from:], '.'); dot >= 0 && dot <= width {
		if width-dot >= 2 {
			return b[:from+width], width
		}
		return b[:from+dot], dot
	}
	return t.cutHead(b, from, width)
}

// appendAddr appends the SOURCE → DESTINATION column. When it is too
// wide, each side is shortened on its own ([Table.cutEndpoint]); a side
// that fits in half the column is kept whole.
func (t *Table) appendAddr(b []byte, src, dst string, width int) ([]byte, int) {
	arrow := " → "
	if t.ascii {
		arrow = " -> "
	}
	from := len(b)
	b = t.appendText(b, src)
	srcEnd := len(b)
	b = append(b, arrow...)
	dstFrom := len(b)
	b = t.appendText(b, dst)
	w := textWidth(b[from:])
	if t.limit == 0 || w <= width {
		return b, w
	}
	aw := stringWidth(arrow)
	room := width - aw
	if room < 4 {
		return t.cutHead(b, from, width)
	}
	sw, dw := textWidth(b[from:srcEnd]), textWidth(b[dstFrom:])
	sn, dn := room/2, room-room/2
	switch {
	case sw < sn:
		sn, dn = sw, room-sw
	case dw < dn:
		sn, dn = room-dw, dw
	}
	t.dst = append(t.dst[:0], b[dstFrom:]...)
	b, sw = t.cutEndpoint(b[:srcEnd], from, sn)
	b = append(b, arrow...)
	d0 := len(b)
	b = append(b, t.dst...)
	b, dw = t.cutEndpoint(b, d0, dn)
	return b, sw + aw + dw
}

// cutEndpoint shortens an address b[from:] to n columns. An address with a
// port (ip:port, [ipv6]:port) keeps its port and loses the middle of its
// host ("[2001:d…::4d]:50915"); other names (a serial device) keep their
// end ("…/ttyUSB0").
func (t *Table) cutEndpoint(b []byte, from, n int) ([]byte, int) {
	seg := b[from:]
	if textWidth(seg) <= n {
		return b, textWidth(seg)
	}
	colon := bytes.LastIndexByte(seg, ':')
	port := len(seg) - colon // with the colon
	if colon > 0 && port >= 2 && port <= 6 && allDigits(seg[colon+1:]) &&
		(seg[colon-1] == ']' || bytes.IndexByte(seg[:colon], ':') < 0) && n-port >= 3 {
		t.port = append(t.port[:0], seg[colon:]...)
		b, w := t.cutMiddle(b[:from+colon], from, n-port)
		return append(b, t.port...), w + port
	}
	return t.cutTail(b, from, n)
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Flush writes out buffered output.
func (t *Table) Flush() error { return t.w.Flush() }

// appendTime writes the TIME column: relative times are exact (see
// [since]); absolute ones are clamped to the years 0000–9999 ([clampTime]).
func (t *Table) appendTime(b []byte, ts time.Time) []byte {
	switch t.format {
	case TimeRelative:
		return appendSince(b, ts, t.epoch)
	case TimeDelta, TimeDeltaShown:
		prev := t.prev
		if prev.IsZero() {
			prev = ts // the first record: 0.000000
		}
		t.prev = ts
		return appendSince(b, ts, prev)
	}
	ts = clampTime(ts).UTC()
	if t.loc != nil && (t.format == TimeAbsolute || t.format == TimeAbsoluteDate || t.format == TimeAbsoluteDoy) {
		// Clamped again in the zone: its offset may take an end of
		// the range into the year -1 or 10000.
		ts = ts.In(t.loc)
		if ts.Year() < 0 {
			ts = time.Date(0, 1, 1, 0, 0, 0, 0, t.loc)
		} else if ts.Year() > 9999 {
			ts = time.Date(9999, 12, 31, 23, 59, 59, 999999999, t.loc)
		}
	}
	switch t.format {
	case TimeAbsolute, TimeUTC:
		return ts.AppendFormat(b, "15:04:05.000000")
	case TimeAbsoluteDate, TimeUTCDate:
		return ts.AppendFormat(b, "2006-01-02 15:04:05.000000")
	case TimeAbsoluteDoy, TimeUTCDoy:
		return ts.AppendFormat(b, "2006/002 15:04:05.000000")
	}
	sec, ns := ts.Unix(), ts.Nanosecond()
	if sec < 0 && ns > 0 {
		// sec -2, ns 500000000 is -1.5 s: written "-1.500000"
		b = append(b, '-')
		b = appendUint(b, uint64(-sec-1))
		ns = 1e9 - ns
	} else {
		b = strconv.AppendInt(b, sec, 10)
	}
	b = append(b, '.')
	return appendFrac(b, ns/1000)
}

// Seen tells the table of a record it is not shown (a display filter
// dropped it): -t d counts from it, -t dd from the previous one shown.
func (t *Table) Seen(ts time.Time) {
	if t.format == TimeDelta {
		t.prev = ts
	}
}

// appendFrac writes micro as six digits.
func appendFrac(b []byte, micro int) []byte {
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + micro%10)
		micro /= 10
	}
	return append(b, d[:]...)
}
