package stats

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/output"
)

// table and column are the statistics' tables: [output.Grid], the one
// fitter of every table dissect measures whole.
type (
	table  = output.Grid
	column = output.GridColumn
)

const keyDrop = output.KeyDrop

// write renders t as o says.
func write(t *table, w io.Writer, o TableOptions) error {
	return t.Write(w, output.GridOptions{Width: o.Width, ASCII: o.ASCII, Hint: o.Hint})
}

// text escapes wire text for the terminal.
func text(s string) string { return output.Escape(s) }

// Times are measured to the microsecond (capture timestamps): a time in
// milliseconds is written with 3 decimals, one in seconds with 6, in the
// table and in JSON alike, so no digit beyond what was measured is shown.
const (
	msDecimals   = 3
	secsDecimals = 6
)

// ms formats milliseconds for the table: 3 decimals.
func ms(v float64) string {
	if v != v {
		return "-"
	}
	return string(appendFixed(nil, v, msDecimals, false))
}

// secs formats a number of seconds for the table (6 decimals).
func secs(v float64) string { return string(appendFixed(nil, v, secsDecimals, false)) }

// appendFixed appends v rounded to prec decimals; a value that rounds to
// zero is written without a sign. With trim (JSON), trailing zeros are
// dropped but one decimal is kept (1.5, 2.0), so that a typed reader reads
// a float; the literal is the shortest that reads back as the rounded
// value. NaN and the infinities are left to output.AppendFloat.
func appendFixed(b []byte, v float64, prec int, trim bool) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return output.AppendFloat(b, v)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', prec, 64)
	if b[start] == '-' && strings.Trim(string(b[start+1:]), "0.") == "" {
		b = append(b[:start], b[start+1:]...)
	}
	if trim && prec > 0 {
		for b[len(b)-1] == '0' && b[len(b)-2] != '.' {
			b = b[:len(b)-1]
		}
	}
	return b
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// row builds one JSON Lines row.
type row struct{ b []byte }

func newRow(b []byte, stat string) row {
	b = append(b[:0], `{"stat":`...)
	b = appendJSONString(b, stat)
	return row{b}
}

func (r *row) key(k string) {
	r.b = append(r.b, ',')
	r.b = appendJSONString(r.b, k)
	r.b = append(r.b, ':')
}

func (r *row) str(k, v string) { r.key(k); r.b = appendJSONString(r.b, v) }
func (r *row) int(k string, v int64) {
	r.key(k)
	r.b = strconv.AppendInt(r.b, v, 10)
}
func (r *row) float(k string, v float64) { r.key(k); r.b = output.AppendFloat(r.b, v) }

// ms writes a time in milliseconds rounded to the microsecond (3
// decimals); secs one in seconds (6 decimals).
func (r *row) ms(k string, v float64)   { r.key(k); r.b = appendFixed(r.b, v, msDecimals, true) }
func (r *row) secs(k string, v float64) { r.key(k); r.b = appendFixed(r.b, v, secsDecimals, true) }
func (r *row) null(k string)            { r.key(k); r.b = append(r.b, "null"...) }
func (r *row) bool(k string, v bool)    { r.key(k); r.b = strconv.AppendBool(r.b, v) }
func (r *row) time(k string, t time.Time) {
	r.key(k)
	r.b = append(r.b, '"')
	r.b = t.UTC().AppendFormat(r.b, "2006-01-02T15:04:05.000000000Z")
	r.b = append(r.b, '"')
}

// raw appends already formatted JSON for key k.
func (r *row) raw(k string, v []byte) { r.key(k); r.b = append(r.b, v...) }

func (r *row) end(w *bufio.Writer) {
	r.b = append(r.b, '}', '\n')
	w.Write(r.b)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string: invalid UTF-8 as U+FFFD,
// controls and hidden characters as \uNNNN.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case output.Hidden(r):
			b = output.AppendJSONEscape(b, r)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
