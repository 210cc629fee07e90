package output

import (
	"bufio"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
)

// Tree writes every record as an indented tree of all its keys and
// fields, as tshark's -V writes a packet's details:
//
//	Record 1: vrpn_Tracker Pos_Quat (vrpn), 84 bytes, stream 0
//	    time: 2026-11-21T08:08:19.479337000Z
//	    time_epoch: 1763712499.479337000
//	    time_relative: 0.000000000
//	    frame: 1
//	    proto: vrpn
//	    ...
//	    fields:
//	        sensor: 0
//	        pos:
//	            [0]: 0.1
//
// The keys are those of the JSON record, in its order, with the numeric
// times after "time"; "fields" holds the payload, arrays with their
// indices ([0]) and objects with their keys, each item on its own line
// four columns deeper. Values are written as in JSON (floats with the
// fewest digits that read back; float32 fields at float32 precision;
// byte strings as hex, "" when empty; instants as RFC 3339), but strings
// are in double quotes without JSON's escapes, NaN and Inf without quotes,
// and an empty array or object as [] or {}; the record's own keys and its
// warnings are written without quotes. Text from the wire is escaped ([Escape]),
// so nothing reaches the terminal as a control. A line wider than the
// width is wrapped, never cut: it goes on under its value (or four
// columns deeper when the value starts far right), breaking after a space
// where one is near the end, else between characters, so that joining
// the pieces gives the value back. With the hex option the record's
// bytes follow its tree as tshark's -x dump. An empty line ends every
// record.
type Tree struct {
	w    *bufio.Writer
	o    TreeOptions
	n    int64
	buf  []byte // the record being written
	line []byte // one line's text before wrapping
	tmp  []byte
	ts   timeCache
	env  []dissect.EnvelopeKey // treeEnvelope
}

// TreeOptions say how a tree is written.
type TreeOptions struct {
	// Width is the terminal's width in columns: longer lines are wrapped.
	// 0: no wrapping (a pipe, a file, --wide).
	Width int
	// ASCII writes only ASCII: other characters as \u{NNNN}.
	ASCII bool
	// Hex writes each record's bytes (dissect.Record.Raw) after its tree.
	Hex bool
}

// treeIndent is the indentation of one level of the tree.
const treeIndent = 4

// minTreeRoom is the fewest columns a wrapped value keeps on its lines:
// the indentation gives way (shallower than the depth says) before that.
const minTreeRoom = 20

// NewTree returns a tree writer on w.
func NewTree(w io.Writer, o TreeOptions) *Tree {
	o.Width = max(o.Width, 0)
	return &Tree{w: bufio.NewWriterSize(w, 64<<10), o: o, env: treeEnvelope()}
}

// treeEnvelope is the envelope as the tree writes it: the JSON keys in
// their order, the numeric times right after "time".
func treeEnvelope() []dissect.EnvelopeKey {
	var keys, secs []dissect.EnvelopeKey
	for _, k := range dissect.Envelope() {
		if k.Seconds {
			secs = append(secs, k)
		}
	}
	for _, k := range dissect.Envelope() {
		if k.JSON {
			keys = append(keys, k)
			if k.Name == "time" {
				keys = append(keys, secs...)
			}
		}
	}
	return keys
}

// envelope writes r's envelope keys, one a line, without quotes.
func (t *Tree) envelope(b []byte, r *dissect.Record) []byte {
	for i := range t.env {
		k := &t.env[i]
		val := t.tmp[:0]
		if v, n := k.Values(r); n > 0 {
			switch {
			case k.Seconds:
				val = appendTimeKey(val, k.Name, r)
			case k.Kind == dissect.KindTime:
				val = t.ts.append(val, v[0].Time())
			case k.Kind == dissect.KindInt:
				val = strconv.AppendInt(val, v[0].Int(), 10)
			default:
				val = appendText(val, v[0].Str())
			}
		}
		b = t.text(b, 1, k.Name, val)
	}
	return b
}

// Record writes r's tree.
func (t *Tree) Record(r *dissect.Record) error {
	t.n++
	b := t.buf[:0]
	b = t.title(b, r)
	b = t.envelope(b, r)
	b = t.value(b, 1, "fields", dissect.Object(r.Fields))
	if len(r.Warnings) > 0 {
		b = t.open(b, 1, "warnings")
		for i, w := range r.Warnings {
			b = t.text(b, 2, "["+strconv.Itoa(i)+"]", appendText(t.tmp[:0], w))
		}
	}
	if t.o.Hex && len(r.Raw) > 0 {
		b = appendHexDump(b, r.Raw, hexDumpPerLine(t.o.Width, len(r.Raw)))
	}
	b = append(b, '\n')
	t.buf = b
	_, err := t.w.Write(b)
	return err
}

// title writes the record's first line: its number, type, protocol,
// length and stream.
func (t *Tree) title(b []byte, r *dissect.Record) []byte {
	l := append(t.line[:0], "Record "...)
	l = strconv.AppendInt(l, t.n, 10)
	l = append(l, ": "...)
	l = appendText(l, r.Type)
	if r.Proto != "" {
		l = append(l, " ("...)
		l = appendText(l, r.Proto)
		l = append(l, ')')
	}
	l = append(l, ", "...)
	l = strconv.AppendInt(l, r.Length, 10)
	l = append(l, " bytes, stream "...)
	l = strconv.AppendInt(l, int64(r.Stream), 10)
	t.line = l
	return t.wrap(b, 0, 0, l)
}

// open writes the line of a non-empty array or object: "key:".
func (t *Tree) open(b []byte, depth int, key string) []byte {
	l := appendText(t.line[:0], key)
	l = append(l, ':')
	t.line = l
	return t.wrap(b, depth, 0, l)
}

// text writes "key: val"; val is escaped already.
func (t *Tree) text(b []byte, depth int, key string, val []byte) []byte {
	t.tmp = val[:0] // keep the grown buffer
	l := appendText(t.line[:0], key)
	l = append(l, ':', ' ')
	head := len(l)
	l = append(l, val...)
	t.line = l
	return t.wrap(b, depth, head, l)
}

// value writes v under key, expanding arrays and objects.
func (t *Tree) value(b []byte, depth int, key string, v dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindArray, dissect.KindObject:
		items := v.Items()
		if len(items) == 0 {
			empty := "[]"
			if v.Kind() == dissect.KindObject {
				empty = "{}"
			}
			return t.text(b, depth, key, append(t.tmp[:0], empty...))
		}
		b = t.open(b, depth, key)
		for i := range items {
			k := items[i].Key
			if v.Kind() == dissect.KindArray {
				k = "[" + strconv.Itoa(i) + "]"
			}
			b = t.value(b, depth+1, k, items[i].Value)
		}
		return b
	}
	return t.text(b, depth, key, t.appendScalar(t.tmp[:0], &v))
}

// appendScalar appends a value that is not an array or object.
func (t *Tree) appendScalar(b []byte, v *dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindInt, dissect.KindUint, dissect.KindFloat, dissect.KindFloat32:
		return appendNumber(b, v)
	case dissect.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case dissect.KindString:
		b = append(b, '"')
		b = appendText(b, v.Str())
		return append(b, '"')
	case dissect.KindBytes:
		if len(v.Raw()) == 0 {
			return append(b, `""`...) // as in JSON: a line that ends in "key: " says nothing
		}
		return appendHex(b, v.Raw())
	case dissect.KindTime:
		return t.ts.append(b, v.Time())
	}
	return append(b, "null"...)
}

// wrap appends line l (escaped text, without indentation) at depth,
// wrapped to the width; l[:head] is its "key: ", after which a wrapped
// line goes on.
func (t *Tree) wrap(b []byte, depth, head int, l []byte) []byte {
	if t.o.ASCII && !asciiOnly(l) {
		head = len(appendASCII(nil, l[:head]))
		t.tmp = appendASCII(t.tmp[:0], l)
		l = t.tmp
	}
	width := t.o.Width
	indent := depth * treeIndent
	if width > 0 {
		indent = min(indent, max(0, width-minTreeRoom))
	}
	b = appendSpaces(b, indent)
	if width == 0 || indent+textWidth(l) <= width {
		b = append(b, l...)
		return append(b, '\n')
	}
	cont := indent + textWidth(l[:head])
	if width-cont < minTreeRoom {
		cont = min(indent+treeIndent, max(0, width-minTreeRoom))
	}
	room := width - indent
	for first := true; len(l) > 0; first = false {
		if !first {
			b = appendSpaces(b, cont)
			room = width - cont
		}
		n := breakAt(l, max(room, 1))
		b = append(b, l[:n]...)
		b = append(b, '\n')
		l = l[n:]
	}
	return b
}

// breakAt returns how many bytes of l go on a line of room columns: all
// of l when it fits; else up to and including the last space in the
// second half of what fits; else what fits, at least one character. The
// rest never starts with a space (it would look like indentation), unless
// the line would be empty.
func breakAt(l []byte, room int) int {
	n, _ := headLen(l, room)
	if n == len(l) {
		return n
	}
	if n == 0 {
		_, size := utf8.DecodeRune(l)
		return size
	}
	for i := n - 1; i > n/2; i-- {
		if l[i] == ' ' && l[i+1] != ' ' {
			return i + 1
		}
	}
	if l[n] == ' ' {
		// The last character goes on the next line, before the space.
		if _, size := utf8.DecodeLastRune(l[:n]); size < n && l[n-size] != ' ' {
			return n - size
		}
	}
	return n
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// Flush writes out buffered output.
func (t *Tree) Flush() error { return t.w.Flush() }
