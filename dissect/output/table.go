package output

import (
	"bufio"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
)

// TimeFormat selects the TIME column of the table, like tshark's -t.
type TimeFormat uint8

// Time formats.
const (
	TimeRelative     TimeFormat = iota // seconds since the first packet (tshark -t r)
	TimeAbsolute                       // UTC time of day (tshark -t a)
	TimeAbsoluteDate                   // UTC date and time (tshark -t ad)
	TimeEpoch                          // seconds since 1970 (tshark -t e)
)

// ParseTimeFormat accepts tshark's letters: r, a, ad, e.
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
	}
	return 0, false
}

// Table writes one aligned line per record, streaming: it never holds
// records, so it works on captures of any size and live. Columns grow to the
// widest value seen so far.
type Table struct {
	w         *bufio.Writer
	flushEach bool
	format    TimeFormat
	epoch     time.Time
	header    bool
	width     [5]int
	buf       []byte
	cols      []byte // the columns of the record being written
}

// maxColumnWidth bounds the growth of a column: a longer value (a type
// name of a kilobyte) overflows its column instead of widening every line
// that follows.
const maxColumnWidth = 100

// Column headers of the table.
var tableHeader = [...]string{"TIME", "STREAM", "SOURCE → DESTINATION", "PROTO", "TYPE", "INFO"}

// TableOptions say how a table is laid out.
type TableOptions struct {
	Time TimeFormat
	// Width is the terminal's width in columns: no line is wider. 0 means
	// unlimited (a pipe, a file, or --wide).
	Width int
	// ASCII replaces the arrow and ellipsis by "->" and "..." for
	// terminals whose locale is not UTF-8 (LANG=C).
	ASCII bool
	// FlushEach flushes every line as it is written.
	FlushEach bool
}

// NewTable returns a table writer on w.
func NewTable(w io.Writer, o TableOptions) *Table {
	format, flushEach := o.Time, o.FlushEach
	t := &Table{w: bufio.NewWriterSize(w, 64<<10), format: format, flushEach: flushEach}
	t.width = [5]int{10, 8, 36, 13, 24}
	for i := range t.width {
		t.width[i] = max(t.width[i], utf8.RuneCountInString(tableHeader[i])+2)
	}
	return t
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
		for i, h := range tableHeader {
			b = append(b, h...)
			if i < len(t.width) {
				b = pad(b, utf8.RuneCountInString(h), t.width[i])
			}
		}
		b = append(b, '\n')
	}
	// The five columns are written one after the other into t.cols, then
	// padded; every text comes from the wire and is escaped.
	c := t.cols[:0]
	var end [5]int
	c = t.appendTime(c, r.Time)
	end[0] = len(c)
	c = strconv.AppendInt(c, int64(r.Stream), 10)
	end[1] = len(c)
	c = appendText(c, r.Src)
	c = append(c, " → "...)
	c = appendText(c, r.Dst)
	end[2] = len(c)
	if r.Proto == "" {
		c = append(c, '-')
	} else {
		c = appendText(c, r.Proto)
	}
	end[3] = len(c)
	c = appendText(c, r.Type)
	end[4] = len(c)
	t.cols = c
	from := 0
	for i, to := range end {
		col := c[from:to]
		from = to
		b = append(b, col...)
		n := utf8.RuneCount(col)
		if n+2 > t.width[i] && n+2 <= maxColumnWidth {
			t.width[i] = n + 2
		}
		b = pad(b, n, t.width[i])
	}
	b = AppendInfo(b, r)
	b = append(b, '\n')
	t.buf = b
	if _, err := t.w.Write(b); err != nil {
		return err
	}
	if t.flushEach {
		return t.w.Flush()
	}
	return nil
}

// Flush writes out buffered output.
func (t *Table) Flush() error { return t.w.Flush() }

func pad(b []byte, n, width int) []byte {
	for ; n < width; n++ {
		b = append(b, ' ')
	}
	return b
}

// appendTime writes the TIME column: relative times are exact (see
// [since]); absolute ones are clamped to the years 0000–9999 ([clampTime]).
func (t *Table) appendTime(b []byte, ts time.Time) []byte {
	if t.format == TimeRelative {
		return appendSince(b, ts, t.epoch)
	}
	ts = clampTime(ts).UTC()
	switch t.format {
	case TimeAbsolute:
		return ts.AppendFormat(b, "15:04:05.000000")
	case TimeAbsoluteDate:
		return ts.AppendFormat(b, "2006-01-02 15:04:05.000000")
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

// appendFrac writes micro as six digits.
func appendFrac(b []byte, micro int) []byte {
	var d [6]byte
	for i := 5; i >= 0; i-- {
		d[i] = byte('0' + micro%10)
		micro /= 10
	}
	return append(b, d[:]...)
}
