package parquetout

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
	"github.com/parquet-go/parquet-go"
)

// shape is the type of a column: a leaf kind (KindNull: unknown, stored as
// a STRING that only holds nulls), a list of elem, or a struct of fields.
type shape struct {
	kind   dissect.Kind
	elem   *shape
	fields map[string]*shape
}

// schema is the Parquet schema of one (proto, type) and its field columns.
type schema struct {
	schema *parquet.Schema
	cols   map[string]*shape
	seq    int // parts written so far
}

func newSchema(fs dissect.Fields) *schema {
	g := parquet.Group{
		"capture":    parquet.String(),
		"time":       parquet.TimestampAdjusted(parquet.Nanosecond, false),
		"transport":  parquet.String(),
		"stream":     parquet.Int(64),
		"src":        parquet.String(),
		"dst":        parquet.String(),
		"offset":     parquet.Int(64),
		"length":     parquet.Int(64),
		"warnings":   parquet.Optional(parquet.List(parquet.String())),
		"extra_json": parquet.Optional(parquet.String()),
	}
	cols := map[string]*shape{}
	for _, f := range fs {
		name := columnName(f.Key)
		if _, dup := cols[name]; dup || name == "" {
			continue
		}
		s, ok := shapeOf(f.Value)
		if !ok {
			continue // not representable: its values go to extra_json
		}
		cols[name] = s
		g[name] = parquet.Optional(s.node())
	}
	return &schema{schema: parquet.NewSchema("record", g), cols: cols}
}

// shapeOf returns the shape of v, false when no column can hold it (an
// array of mixed kinds, an object with an empty or repeated key).
func shapeOf(v dissect.Value) (*shape, bool) {
	switch v.Kind() {
	case dissect.KindFloat32:
		return &shape{kind: dissect.KindFloat}, true
	case dissect.KindArray:
		s := &shape{kind: dissect.KindArray, elem: &shape{kind: dissect.KindNull}}
		for _, it := range v.Items() {
			if it.Value.Kind() == dissect.KindNull {
				continue
			}
			if s.elem.kind == dissect.KindNull {
				e, ok := shapeOf(it.Value)
				if !ok {
					return nil, false
				}
				s.elem = e
			} else if !s.elem.fits(it.Value) {
				return nil, false
			}
		}
		return s, true
	case dissect.KindObject:
		s := &shape{kind: dissect.KindObject, fields: map[string]*shape{}}
		for _, it := range v.Items() {
			if _, dup := s.fields[it.Key]; dup || it.Key == "" {
				return nil, false
			}
			e, ok := shapeOf(it.Value)
			if !ok {
				return nil, false
			}
			s.fields[it.Key] = e
		}
		if len(s.fields) == 0 {
			return &shape{kind: dissect.KindNull}, true // Parquet has no empty group
		}
		return s, true
	}
	return &shape{kind: v.Kind()}, true
}

func (s *shape) node() parquet.Node {
	switch s.kind {
	case dissect.KindInt:
		return parquet.Int(64)
	case dissect.KindUint:
		return parquet.Uint(64)
	case dissect.KindFloat:
		return parquet.Leaf(parquet.DoubleType)
	case dissect.KindBool:
		return parquet.Leaf(parquet.BooleanType)
	case dissect.KindBytes:
		return parquet.Leaf(parquet.ByteArrayType)
	case dissect.KindTime:
		return parquet.TimestampAdjusted(parquet.Nanosecond, false)
	case dissect.KindArray:
		return parquet.List(parquet.Optional(s.elem.node()))
	case dissect.KindObject:
		g := parquet.Group{}
		for k, f := range s.fields {
			g[k] = parquet.Optional(f.node())
		}
		return g
	}
	return parquet.String() // KindString, KindNull
}

// fits reports whether the column s can hold v.
func (s *shape) fits(v dissect.Value) bool {
	k := v.Kind()
	switch {
	case k == dissect.KindNull:
		return true
	case k == dissect.KindFloat32:
		return s.kind == dissect.KindFloat
	case k != s.kind:
		return false
	case k == dissect.KindArray:
		for _, it := range v.Items() {
			if !s.elem.fits(it.Value) {
				return false
			}
		}
	case k == dissect.KindObject:
		items := v.Items()
		for i, it := range items {
			f, ok := s.fields[it.Key]
			if !ok || !f.fits(it.Value) {
				return false
			}
			for _, prev := range items[:i] {
				if prev.Key == it.Key {
					return false
				}
			}
		}
	}
	return true
}

// scratch holds the scalars of one row: the library writes a zero value
// held directly in an interface as null, so every scalar is passed by
// pointer. The slices are reused for the next row (the library copies the
// values when the row is written); pointers into an outgrown backing array
// stay valid.
type scratch struct {
	i []int64
	u []uint64
	f []float64
	b []bool
	s []string
}

func (sc *scratch) reset() {
	sc.i, sc.u, sc.f, sc.b = sc.i[:0], sc.u[:0], sc.f[:0], sc.b[:0]
	clear(sc.s)
	sc.s = sc.s[:0]
}

func ptr[T any](s *[]T, v T) *T {
	*s = append(*s, v)
	return &(*s)[len(*s)-1]
}

// toAny converts v (which fits its column) to what the library writes;
// bytes are copied, as the record's buffers are not ours.
func (sc *scratch) toAny(v dissect.Value) any {
	switch v.Kind() {
	case dissect.KindInt:
		return ptr(&sc.i, v.Int())
	case dissect.KindUint:
		return ptr(&sc.u, v.Uint())
	case dissect.KindFloat, dissect.KindFloat32:
		return ptr(&sc.f, v.Float())
	case dissect.KindBool:
		return ptr(&sc.b, v.Bool())
	case dissect.KindString:
		return ptr(&sc.s, v.Str())
	case dissect.KindBytes:
		return append([]byte{}, v.Raw()...)
	case dissect.KindTime:
		return ptr(&sc.i, v.Time().UnixNano())
	case dissect.KindArray:
		items := v.Items()
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = sc.toAny(it.Value)
		}
		return out
	case dissect.KindObject:
		items := v.Items()
		out := make(map[string]any, len(items))
		for _, it := range items {
			out[it.Key] = sc.toAny(it.Value)
		}
		return out
	}
	return nil
}

// appendJSONObject appends fs as a JSON object in the forms of
// docs/output.md.
func appendJSONObject(b []byte, fs []dissect.Field) []byte {
	b = append(b, '{')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.Key)
		b = append(b, ':')
		b = appendJSONValue(b, f.Value)
	}
	return append(b, '}')
}

func appendJSONValue(b []byte, v dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case dissect.KindUint:
		return strconv.AppendUint(b, v.Uint(), 10)
	case dissect.KindFloat:
		return appendFloat(b, v.Float(), 64)
	case dissect.KindFloat32:
		return appendFloat(b, v.Float(), 32)
	case dissect.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case dissect.KindString:
		return appendJSONString(b, v.Str())
	case dissect.KindBytes:
		b = append(b, '"')
		const hexd = "0123456789abcdef"
		for _, c := range v.Raw() {
			b = append(b, hexd[c>>4], hexd[c&15])
		}
		return append(b, '"')
	case dissect.KindTime:
		return appendJSONString(b, v.Time().Format(time.RFC3339Nano))
	case dissect.KindArray:
		b = append(b, '[')
		for i, it := range v.Items() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, it.Value)
		}
		return append(b, ']')
	case dissect.KindObject:
		return appendJSONObject(b, v.Items())
	}
	return append(b, "null"...)
}

func appendFloat(b []byte, f float64, bits int) []byte {
	if bits == 32 && !math.IsNaN(f) && !math.IsInf(f, 0) {
		// the shortest float32 digits, always with a fraction or exponent
		n := len(b)
		b = strconv.AppendFloat(b, f, 'g', -1, 32)
		if !strings.ContainsAny(string(b[n:]), ".eE") {
			b = append(b, '.', '0')
		}
		return b
	}
	return output.AppendFloat(b, f) // NaN, Inf and -Inf as strings
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[r>>4], "0123456789abcdef"[r&15])
		default:
			b = append(b, string(r)...)
		}
	}
	return append(b, '"')
}
