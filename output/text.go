package output

import (
	"strconv"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
)

// Info returns the one-line summary of a record shown in the table's INFO
// column: the protocol's own summary when it set one, else its fields as
// key=value pairs; events say what happened to their bytes. Warnings follow
// in brackets. Text from the wire is escaped so it cannot drive the terminal.
func Info(r *dissect.Record) string { return string(AppendInfo(nil, r)) }

// AppendInfo appends [Info] of r to b.
func AppendInfo(b []byte, r *dissect.Record) []byte { return appendInfo(b, r, false) }

// AppendInfoWhole appends the whole INFO of r to b (the table's --wide):
// the protocol's summary when nothing in it was shortened (it holds no
// "…", the mark every protocol puts where it cut a value or left fields
// out), else every field of the record in full: every item of arrays
// and objects, every byte of hex, every digit of floats (the shortest
// text that reads back as the same number).
func AppendInfoWhole(b []byte, r *dissect.Record) []byte { return appendInfo(b, r, true) }

func appendInfo(b []byte, r *dissect.Record, whole bool) []byte {
	switch {
	case r.Type == dissect.TypeGap:
		b = strconv.AppendInt(b, r.Length, 10)
		b = append(b, " bytes never captured"...)
	case r.Type == dissect.TypeSkipped:
		b = strconv.AppendInt(b, r.Length, 10)
		b = append(b, " bytes skipped"...)
		if v, ok := r.Fields.Get("reason"); ok && v.Str() != "" {
			b = append(b, ": "...)
			b = appendText(b, v.Str())
		}
	case r.Summary != "" && !(whole && strings.Contains(r.Summary, "…")):
		b = appendText(b, r.Summary)
	default:
		for i, f := range r.Fields {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendText(b, f.Key)
			b = append(b, '=')
			if whole {
				b = appendWhole(b, f.Value)
			} else {
				b = appendShort(b, f.Value, 0)
			}
		}
	}
	for _, w := range r.Warnings {
		b = append(b, " [warning: "...)
		b = appendText(b, w)
		b = append(b, ']')
	}
	return b
}

const (
	maxShortItems = 8
	maxShortBytes = 16
)

// appendShort writes v compactly for humans: 6 significant digits for
// floats, at most 8 array items and 16 bytes of hex.
func appendShort(b []byte, v dissect.Value, depth int) []byte {
	switch v.Kind() {
	case dissect.KindInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case dissect.KindUint:
		return strconv.AppendUint(b, v.Uint(), 10)
	case dissect.KindFloat, dissect.KindFloat32:
		f := v.Float()
		if f != f || f > 1.7e308 || f < -1.7e308 {
			return appendFloat(b, f, 64)
		}
		return strconv.AppendFloat(b, f, 'g', 6, 64)
	case dissect.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case dissect.KindString:
		b = append(b, '"')
		b = appendText(b, v.Str())
		return append(b, '"')
	case dissect.KindBytes:
		raw := v.Raw()
		n := min(len(raw), maxShortBytes)
		b = appendHex(b, raw[:n])
		if n < len(raw) {
			b = append(b, "…("...)
			b = strconv.AppendInt(b, int64(len(raw)), 10)
			b = append(b, " bytes)"...)
		}
		return b
	case dissect.KindTime:
		return clampTime(v.Time()).AppendFormat(b, "2006-01-02T15:04:05.000000Z")
	case dissect.KindArray, dissect.KindObject:
		obj := v.Kind() == dissect.KindObject
		open, close := byte('['), byte(']')
		if obj {
			open, close = '{', '}'
		}
		b = append(b, open)
		items := v.Items()
		for i, it := range items {
			if i == maxShortItems || depth > 3 {
				b = append(b, "…(+"...)
				b = strconv.AppendInt(b, int64(len(items)-i), 10)
				b = append(b, ')')
				break
			}
			if i > 0 {
				b = append(b, ' ')
			}
			if obj {
				b = appendText(b, it.Key)
				b = append(b, '=')
			}
			b = appendShort(b, it.Value, depth+1)
		}
		return append(b, close)
	}
	return append(b, "null"...)
}

// appendWhole writes v in full for --wide: as appendShort, without its
// limits.
func appendWhole(b []byte, v dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindFloat:
		return appendFloat(b, v.Float(), 64)
	case dissect.KindFloat32:
		return appendFloat(b, v.Float(), 32)
	case dissect.KindBytes:
		return appendHex(b, v.Raw())
	case dissect.KindArray, dissect.KindObject:
		obj := v.Kind() == dissect.KindObject
		open, close := byte('['), byte(']')
		if obj {
			open, close = '{', '}'
		}
		b = append(b, open)
		for i, it := range v.Items() {
			if i > 0 {
				b = append(b, ' ')
			}
			if obj {
				b = appendText(b, it.Key)
				b = append(b, '=')
			}
			b = appendWhole(b, it.Value)
		}
		return append(b, close)
	}
	return appendShort(b, v, 0)
}
