// Package output renders dissect records: JSON Lines (the output contract,
// docs/output.md), a one-line-per-record table for terminals, and the
// end-of-run summary. Nothing here uses reflection: records are appended to a
// byte buffer field by field.
package output

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/strcache"
)

// JSON writes one JSON object per record (JSON Lines).
type JSON struct {
	w         *bufio.Writer
	buf       []byte
	flushEach bool
	raw       bool // SetRaw
	ts        timeCache
	stamp     stampCache
	keys      jsonCache // field keys, with the colon
	strs      jsonCache // proto, type, src, dst
	head      *headCache
	shapes    *shapeCache
}

// NewJSON returns a JSON Lines writer on w. With flushEach, every record is
// flushed as it is written (live capture piped into jq); otherwise output is
// buffered and Flush must be called at the end.
func NewJSON(w io.Writer, flushEach bool) *JSON {
	j := NewJSONAppender()
	j.w, j.flushEach, j.buf = bufio.NewWriterSize(w, 256<<10), flushEach, make([]byte, 0, 1024)
	return j
}

// SetRaw, when on, ends every object with the key "raw": the record's bytes
// (dissect.Record.Raw) as lowercase hex, "" for a gap (tshark's -x).
func (j *JSON) SetRaw(on bool) { j.raw = on }

// NewJSONAppender returns a JSON whose only use is its Append methods:
// records and values as JSON in the form of the output contract, for
// writers that embed them in another format (MCAP).
func NewJSONAppender() *JSON {
	return &JSON{keys: jsonCache{strcache.New[[]byte](6)}, strs: jsonCache{strcache.New[[]byte](6)}, head: new(headCache), shapes: new(shapeCache)}
}

// JSONLines appends records as JSON Lines, for writers that format on
// several goroutines (pipeline.Parallel): each has its own.
type JSONLines struct{ j *JSON }

// NewJSONLines returns a JSONLines; raw is SetRaw's.
func NewJSONLines(raw bool) *JSONLines {
	j := NewJSONAppender()
	j.raw = raw
	return &JSONLines{j}
}

// AppendRecord appends r as one line, newline included.
func (l *JSONLines) AppendRecord(b []byte, r *dissect.Record) []byte {
	return append(l.j.AppendRecord(b, r), '\n')
}

// Record writes r as one line.
func (j *JSON) Record(r *dissect.Record) error {
	b := j.AppendRecord(j.buf[:0], r)
	b = append(b, '\n')
	j.buf = b
	if _, err := j.w.Write(b); err != nil {
		return err
	}
	if j.flushEach {
		return j.w.Flush()
	}
	return nil
}

// AppendRecord appends r as one JSON object, with no newline.
func (j *JSON) AppendRecord(b []byte, r *dissect.Record) []byte {
	b = j.stamp.append(&j.ts, b, r)
	b = j.head.append(j, b, r)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, r.Offset, 10)
	b = append(b, `,"length":`...)
	b = strconv.AppendInt(b, r.Length, 10)
	b = j.shapes.append(j, b, r)
	if len(r.Warnings) > 0 {
		b = append(b, `,"warnings":[`...)
		for i, w := range r.Warnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, w)
		}
		b = append(b, ']')
	}
	if j.raw {
		b = append(b, `,"raw":"`...)
		b = appendHex(b, r.Raw)
		b = append(b, '"')
	}
	return append(b, '}')
}

// Flush writes out buffered output.
func (j *JSON) Flush() error { return j.w.Flush() }

func (j *JSON) appendObject(b []byte, fs []dissect.Field) []byte {
	b = append(b, '{')
	for i := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = j.keys.appendKey(b, fs[i].Key)
		b = j.appendValue(b, &fs[i].Value)
	}
	return append(b, '}')
}

// AppendValue appends v as the JSON of records writes it.
func (j *JSON) AppendValue(b []byte, v *dissect.Value) []byte { return j.appendValue(b, v) }

func (j *JSON) appendValue(b []byte, v *dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case dissect.KindUint:
		return strconv.AppendUint(b, v.Uint(), 10)
	case dissect.KindFloat:
		return appendFloat(b, v.Float(), 64)
	case dissect.KindFloat32:
		return appendFloat32(b, v.Float32())
	case dissect.KindBool:
		if v.Bool() {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case dissect.KindString:
		return appendString(b, v.Str())
	case dissect.KindBytes:
		b = append(b, '"')
		b = appendHex(b, v.Raw())
		return append(b, '"')
	case dissect.KindTime:
		b = append(b, '"')
		b = j.ts.append(b, v.Time())
		return append(b, '"')
	case dissect.KindArray:
		b = append(b, '[')
		for i, it := range v.Items() {
			if i > 0 {
				b = append(b, ',')
			}
			b = j.appendValue(b, &it.Value)
		}
		return append(b, ']')
	case dissect.KindObject:
		return j.appendObject(b, v.Items())
	}
	return append(b, "null"...)
}

// AppendFloat appends a float64 as the JSON of records writes it (see
// appendFloat), for other writers of JSON (statistics).
func AppendFloat(b []byte, f float64) []byte { return appendFloat(b, f, 64) }

// appendFloat writes f as a JSON number, or as the string "NaN", "Inf" or
// "-Inf". Numbers use plain decimal notation between 1e-6 and 1e21 and
// exponent notation outside, with the fewest digits that read back exactly at
// the given bit size. A number always has a fraction or an exponent, so that
// a typed reader (Python, DuckDB, pandas) reads it as a float and never as an
// integer: a whole value gets ".0" (100.0, 0.0), negative zero is written as
// -0.0, and the exponent form (1e+21) is a float already.
func appendFloat(b []byte, f float64, bits int) []byte {
	if bits == 32 {
		return appendFloat32(b, float32(f))
	}
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	// The plain form of a whole value has no point: the shortest digits of
	// a value with a fraction never round to a whole number (the rounding
	// interval is narrower than the spacing of the float, which divides 1),
	// so the value decides.
	if a == math.Trunc(a) {
		b = append(b, '.', '0')
	}
	return b
}

const hexDigits = "0123456789abcdef"

func appendHex(b []byte, raw []byte) []byte {
	for _, c := range raw {
		b = append(b, hexDigits[c>>4], hexDigits[c&15])
	}
	return b
}

// jsonSafe marks the ASCII bytes that appear in a JSON string as they are
// (DEL is escaped, like the other controls).
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string, escaped as records escape text.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD
// ([ValidUTF8]); control characters, U+FFFD and the other characters
// that must not reach a terminal ([hidden]: C1 controls, line
// separators, invisible characters) are escaped as \uNNNN (a surrogate
// pair past U+FFFF), so the line reads back to ValidUTF8(s).
func appendString(b []byte, s string) []byte {
	s = ValidUTF8(s)
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonSafe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if hidden(r) || r == utf8.RuneError {
			b = append(b, s[start:i]...)
			b = AppendJSONEscape(b, r)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// timeCache formats instants as RFC 3339 UTC with nine fraction digits,
// clamped to the years 0000–9999 ([clampTime]).
// Records completed by one packet share its time, so the last result is
// kept whole; the date-and-seconds prefix is kept while the second lasts.
type timeCache struct {
	sec    int64
	prefix []byte // "2006-01-02T15:04:05."
	last   time.Time
	full   []byte // the formatted last
}

func (c *timeCache) append(b []byte, t time.Time) []byte {
	if c.full != nil && t.Equal(c.last) {
		return append(b, c.full...)
	}
	key := t
	t = clampTime(t)
	sec := t.Unix()
	if c.prefix == nil || sec != c.sec {
		c.sec = sec
		c.prefix = t.UTC().AppendFormat(c.prefix[:0], "2006-01-02T15:04:05.")
	}
	full := append(c.full[:0], c.prefix...)
	ns := t.Nanosecond()
	var d [9]byte
	for i := 8; i >= 0; i-- {
		d[i] = byte('0' + ns%10)
		ns /= 10
	}
	full = append(full, d[:]...)
	full = append(full, 'Z')
	c.full, c.last = full, key
	return append(b, full...)
}

// stampCache keeps the JSON of the last record's stamp, from `{"time":` to
// the frame number's last digit: the records of one packet share both, so
// one comparison and one copy replace the formatting of a number.
type stampCache struct {
	frame int64
	t     time.Time
	enc   []byte // empty: nothing cached yet
}

func (c *stampCache) append(ts *timeCache, b []byte, r *dissect.Record) []byte {
	// The same time.Time value first (the records of one packet share
	// it), Equal only when it is another value.
	if len(c.enc) == 0 || r.Frame != c.frame || r.Time != c.t && !r.Time.Equal(c.t) {
		enc := append(c.enc[:0], `{"time":"`...)
		enc = ts.append(enc, r.Time)
		enc = append(enc, `","frame":`...)
		c.enc, c.frame, c.t = strconv.AppendInt(enc, r.Frame, 10), r.Frame, r.Time
	}
	return append(b, c.enc...)
}

// jsonCache keeps the JSON form of strings that recur by address: field
// keys, protocol and type names are string constants, and a stream's
// address strings live as long as the stream. Finding them by the address
// and length of their bytes (package internal/strcache) spares escaping
// them for every record.
type jsonCache struct {
	c strcache.Cache[[]byte]
}

// append writes s as a JSON string.
func (jc *jsonCache) append(b []byte, s string) []byte {
	return append(b, jc.lookup(s, false)...)
}

// appendKey writes s as an object key, colon included.
func (jc *jsonCache) appendKey(b []byte, s string) []byte {
	return append(b, jc.lookup(s, true)...)
}

func (jc *jsonCache) lookup(s string, key bool) []byte {
	if len(s) == 0 {
		if key {
			return []byte(`"":`)
		}
		return []byte(`""`)
	}
	enc, hit := jc.c.Lookup(s)
	if !hit {
		*enc = appendString((*enc)[:0], s)
		if key {
			*enc = append(*enc, ':')
		}
	}
	return *enc
}
