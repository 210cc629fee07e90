package output

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/strcache"
	"github.com/dissect-tools/dissect/query"
)

// Occurrence selects which values of a name that names several are
// written (tshark's -E occurrence).
type Occurrence uint8

// Occurrences.
const (
	OccurAll   Occurrence = iota // occurrence=a: all, joined by the aggregator
	OccurFirst                   // occurrence=f: the first
	OccurLast                    // occurrence=l: the last
)

// FieldsOptions say how -o fields writes its lines, like tshark's -E
// options. The zero value is tshark's default: no header, tab-separated,
// no quotes, all occurrences joined by ",".
type FieldsOptions struct {
	Header     bool       // header=y: a first line with the names
	BOM        bool       // bom=y: a UTF-8 byte order mark before everything
	Separator  string     // separator=: between the values of a line; "" is a tab
	Aggregator string     // aggregator=: between the occurrences of one name; "" is ","
	Quote      byte       // quote=d: '"', quote=s: '\'', quote=n: 0 (none)
	Occurrence Occurrence // occurrence=
}

// ParseFieldsOption applies one of tshark's -E options, "key=value", to o:
// header=y|n, separator=/t|/s|TEXT, aggregator=,|/s|TEXT, quote=d|s|n,
// occurrence=f|l|a, bom=y|n, escape=y (values are always escaped).
func ParseFieldsOption(s string, o *FieldsOptions) error {
	key, val, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("%q: want key=value (header=y, separator=, , quote=d, occurrence=f, aggregator=;)", s)
	}
	yesNo := func(p *bool) error {
		switch val {
		case "y":
			*p = true
		case "n":
			*p = false
		default:
			return fmt.Errorf("%q: want %s=y or %s=n", s, key, key)
		}
		return nil
	}
	text := func(p *string) error {
		switch {
		case val == "/t":
			*p = "\t"
		case val == "/s":
			*p = " "
		case val == "" || strings.ContainsAny(val, "\n\r"):
			return fmt.Errorf("%q: want %s=/t (tab), /s (space) or a character", s, key)
		default:
			*p = val
		}
		return nil
	}
	switch key {
	case "header":
		return yesNo(&o.Header)
	case "bom":
		return yesNo(&o.BOM)
	case "separator":
		return text(&o.Separator)
	case "aggregator":
		return text(&o.Aggregator)
	case "quote":
		switch val {
		case "d":
			o.Quote = '"'
		case "s":
			o.Quote = '\''
		case "n":
			o.Quote = 0
		default:
			return fmt.Errorf("%q: want quote=d (double), s (single) or n (none)", s)
		}
	case "occurrence":
		switch val {
		case "a":
			o.Occurrence = OccurAll
		case "f":
			o.Occurrence = OccurFirst
		case "l":
			o.Occurrence = OccurLast
		default:
			return fmt.Errorf("%q: want occurrence=f (first), l (last) or a (all)", s)
		}
	case "escape":
		if val != "y" {
			return fmt.Errorf("%q: values are always escaped, so that a record is one line (escape=y)", s)
		}
	default:
		return fmt.Errorf("%q: unknown option %q (header, separator, aggregator, quote, occurrence, bom, escape)", s, key)
	}
	return nil
}

// Fields writes one line per record with the values of the named fields
// (tshark's -T fields -e NAME ...), in the order named; a name the record
// does not have gives an empty value. How each kind of value is written:
//
//   - integers in full; floats as in JSON (0.2, 100.0, 1e+21), but NaN,
//     Inf and -Inf without quotes; booleans true and false;
//   - strings as they are, with tab, newline, carriage return and
//     backslash written \t, \n, \r and \\, every other control character
//     and each byte of invalid UTF-8 \xNN, and the other characters that
//     must not reach a terminal (C1 controls, line separators, bidi
//     formatting) \u{NNNN}, so a record is always one line;
//   - byte strings as lowercase hex; instants as RFC 3339 UTC with nine
//     fraction digits, like JSON's "time"; null as nothing;
//   - the numeric times time_epoch and time_relative (tshark's
//     frame.time_epoch, frame.time_relative) as seconds with nine
//     fraction digits (1763712499.479337000), exact;
//   - an array: its items, joined by ","; an object (or an array inside
//     an array) as compact JSON.
//
// A name that names several values (a key step over an array:
// roboid.values.semantics) gives them all joined by the aggregator, or
// only the first or last ([FieldsOptions].Occurrence). With a quote
// character, each value that is not empty is enclosed in it, the
// character doubled inside (as in CSV).
type Fields struct {
	w       *bufio.Writer
	o       FieldsOptions
	paths   []query.Path
	names   []string
	pending bool // the BOM and header are still to write
	buf     []byte
	vals    []dissect.Value // the values of the path being written
	collect func(dissect.Value) bool
	js      JSON // for objects: its key cache and time cache
}

// NewFields returns a field writer on w for names, each a field path as
// in -Y (see query.ParsePath). Whether the protocols and fields exist is
// not checked here.
func NewFields(w io.Writer, names []string, o FieldsOptions) (*Fields, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no field to write")
	}
	if o.Separator == "" {
		o.Separator = "\t"
	}
	if o.Aggregator == "" {
		o.Aggregator = ","
	}
	f := &Fields{
		w: bufio.NewWriterSize(w, 64<<10), o: o, names: names,
		pending: true, buf: make([]byte, 0, 512),
		js: JSON{keys: jsonCache{strcache.New[[]byte](6)}, strs: jsonCache{strcache.New[[]byte](6)}},
	}
	for _, n := range names {
		p, err := query.ParsePath(n)
		if err != nil {
			return nil, err
		}
		f.paths = append(f.paths, p)
	}
	f.collect = f.collectValue
	return f, nil
}

// collectValue keeps v as the path's value, as the occurrence option says.
func (f *Fields) collectValue(v dissect.Value) bool {
	switch f.o.Occurrence {
	case OccurFirst:
		f.vals = append(f.vals, v)
		return false
	case OccurLast:
		f.vals = append(f.vals[:0], v)
		return true
	}
	f.vals = append(f.vals, v)
	return true
}

// start writes the BOM and the header line, once.
func (f *Fields) start(b []byte) []byte {
	f.pending = false
	if f.o.BOM {
		b = append(b, "\ufeff"...)
	}
	if !f.o.Header {
		return b
	}
	for i, n := range f.names {
		if i > 0 {
			b = append(b, f.o.Separator...)
		}
		b = f.appendQuoted(b, func(b []byte) []byte { return appendFieldText(b, n) })
	}
	return append(b, '\n')
}

// Record writes r's line.
func (f *Fields) Record(r *dissect.Record) error {
	b := f.buf[:0]
	if f.pending {
		b = f.start(b)
	}
	for i := range f.paths {
		if i > 0 {
			b = append(b, f.o.Separator...)
		}
		key := f.paths[i].RecordKey()
		if key == "info" {
			// The INFO column's text, as the table shows it (escaped).
			from := len(b)
			b = AppendInfo(b, r)
			if f.o.Quote != 0 {
				b = f.quote(b, from)
			}
			continue
		}
		if query.IsTimeKey(key) {
			// Seconds with nine fraction digits, exact.
			from := len(b)
			b = appendTimeKey(b, key, r)
			if f.o.Quote != 0 {
				b = f.quote(b, from)
			}
			continue
		}
		f.vals = f.vals[:0]
		f.paths[i].Each(r, f.collect)
		if len(f.vals) == 0 {
			continue
		}
		if f.o.Quote == 0 {
			b = f.appendVals(b)
			continue
		}
		from := len(b)
		b = f.appendVals(b)
		if len(b) > from {
			b = f.quote(b, from)
		}
	}
	b = append(b, '\n')
	f.buf = b
	_, err := f.w.Write(b)
	return err
}

// appendVals appends the values collected for one name.
func (f *Fields) appendVals(b []byte) []byte {
	for i := range f.vals {
		if i > 0 {
			b = append(b, f.o.Aggregator...)
		}
		b = f.appendValue(b, &f.vals[i], true)
	}
	return b
}

// appendQuoted appends what fn appends, quoted when a quote is set.
func (f *Fields) appendQuoted(b []byte, fn func([]byte) []byte) []byte {
	from := len(b)
	b = fn(b)
	if f.o.Quote != 0 {
		b = f.quote(b, from)
	}
	return b
}

// quote encloses b[from:] in the quote character, doubling it inside.
func (f *Fields) quote(b []byte, from int) []byte {
	q := f.o.Quote
	n := 0
	for _, c := range b[from:] {
		if c == q {
			n++
		}
	}
	end := len(b)
	for range n + 2 {
		b = append(b, 0)
	}
	// move b[from:end] right, doubling quotes, from the end
	w := len(b) - 1
	b[w] = q
	w--
	for i := end - 1; i >= from; i-- {
		b[w] = b[i]
		w--
		if b[i] == q {
			b[w] = q
			w--
		}
	}
	b[w] = q
	return b
}

// appendNumber appends a number as -e and -V write it: integers in full,
// floats as in JSON but NaN, Inf and -Inf without quotes.
func appendNumber(b []byte, v *dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case dissect.KindUint:
		return strconv.AppendUint(b, v.Uint(), 10)
	}
	x := v.Float()
	switch {
	case math.IsNaN(x):
		return append(b, "NaN"...)
	case math.IsInf(x, 1):
		return append(b, "Inf"...)
	case math.IsInf(x, -1):
		return append(b, "-Inf"...)
	case v.Kind() == dissect.KindFloat32:
		return appendFloat32(b, v.Float32())
	}
	return appendFloat(b, x, 64)
}

// appendValue appends v; top is false inside an array, where arrays and
// objects are written as JSON.
func (f *Fields) appendValue(b []byte, v *dissect.Value, top bool) []byte {
	switch v.Kind() {
	case dissect.KindInt, dissect.KindUint, dissect.KindFloat, dissect.KindFloat32:
		return appendNumber(b, v)
	case dissect.KindBool:
		if v.Bool() {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case dissect.KindString:
		return appendFieldText(b, v.Str())
	case dissect.KindBytes:
		return appendHex(b, v.Raw())
	case dissect.KindTime:
		return f.js.ts.append(b, v.Time())
	case dissect.KindArray:
		if !top {
			return f.js.appendValue(b, v)
		}
		items := v.Items()
		for i := range items {
			if i > 0 {
				b = append(b, ',')
			}
			b = f.appendValue(b, &items[i].Value, false)
		}
		return b
	case dissect.KindObject:
		return f.js.appendObject(b, v.Items())
	}
	return b
}

// Flush writes the header if no record came, and buffered output.
func (f *Fields) Flush() error {
	if f.pending {
		if _, err := f.w.Write(f.start(f.buf[:0])); err != nil {
			return err
		}
	}
	return f.w.Flush()
}

// appendFieldText appends s as a field value: tab, newline, carriage
// return and backslash as \t, \n, \r, \\; other C0 controls, DEL and
// bytes of invalid UTF-8 as \xNN; the other [hidden] characters as
// \u{NNNN}. The result is one line of valid UTF-8 that is safe on a
// terminal.
func appendFieldText(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		bad := r == utf8.RuneError && size == 1
		if !bad && c != '\\' && !hidden(r) {
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch {
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case bad || r < 0x80:
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		default:
			b = append(b, `\u{`...)
			b = strconv.AppendUint(b, uint64(r), 16)
			b = append(b, '}')
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}
