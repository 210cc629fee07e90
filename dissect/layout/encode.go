package layout

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
)

// Append encodes type t from fields, as [Decoder.Decode] records them,
// and appends the bytes to dst. A size or count field must agree with
// what it sizes or counts; unrecorded fields are written as their
// contents or as zeros. Encoding is for fuzz seeds and test inputs: an
// encoder derived from the same description checks only that decoding
// and encoding agree, never that the description is right.
func (p *Plan) Append(dst []byte, t int, fields []dissect.Field) ([]byte, error) {
	e := &encoder{p: p, b: dst}
	if err := e.seq(t, fields); err != nil {
		return dst, err
	}
	return e.b, nil
}

type encoder struct {
	p   *Plan
	b   []byte
	bit int // bits of the last byte already written (0: aligned)
}

func (e *encoder) align() { e.bit = 0 }

func (e *encoder) seq(ti int, fields dissect.Fields) error {
	t := &e.p.types[ti]
	vals := make([]int64, len(t.fields))
	for k := range t.fields {
		f := &t.fields[k]
		var v dissect.Value
		has := false
		if f.out >= 0 {
			if v, has = fields.Get(f.id); !has {
				return fmt.Errorf("%s: field %q missing", t.name, f.id)
			}
		}
		if f.kind == wBits {
			raw, err := e.rawInt(f, v, has)
			if err != nil {
				return err
			}
			e.writeBits(raw, f.width, f.order)
			vals[k] = int64(raw)
			continue
		}
		e.align()
		if f.repeat == Once {
			raw, err := e.item(f, v, has, vals)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", t.name, f.id, err)
			}
			vals[k] = raw
			continue
		}
		items := v.Items()
		if f.repeat == RepeatExpr && int64(len(items)) != e.ref(f.count, vals) {
			return fmt.Errorf("%s.%s: %d items, the count says %d", t.name, f.id, len(items), e.ref(f.count, vals))
		}
		for _, it := range items {
			if _, err := e.item(f, it.Value, true, vals); err != nil {
				return fmt.Errorf("%s.%s: %w", t.name, f.id, err)
			}
		}
	}
	e.align()
	return nil
}

func (e *encoder) ref(r cref, vals []int64) int64 {
	if r.idx < 0 {
		return r.n
	}
	return vals[r.idx]
}

func (e *encoder) item(f *cfield, v dissect.Value, has bool, vals []int64) (int64, error) {
	switch f.kind {
	case wUint, wInt:
		raw, err := e.rawInt(f, v, has)
		if err != nil {
			return 0, err
		}
		e.b = appendUint(e.b, raw, f.width, f.order)
		return int64(raw), nil
	case wFloat:
		x := v.Float()
		var raw uint64
		switch f.width {
		case 2:
			raw = uint64(float32ToHalf(float32(x)))
		case 4:
			raw = uint64(math.Float32bits(float32(x)))
		default:
			raw = math.Float64bits(x)
		}
		e.b = appendUint(e.b, raw, f.width, f.order)
		return 0, nil
	case wBytes, wStr:
		var data []byte
		switch {
		case f.contents != nil:
			data = f.contents
		case !has:
		case f.kind == wStr:
			data = []byte(v.Str())
		default:
			data = v.Raw()
		}
		return 0, e.span(f, data, vals, has)
	}
	sub := f.sub
	if f.kind == wSwitch {
		on := vals[f.on]
		s, ok := f.cases[on]
		if !ok {
			if f.def < 0 {
				return 0, fmt.Errorf("no type for %d", on)
			}
			s = f.def
		}
		sub = s
	}
	start := len(e.b)
	if err := e.seq(sub, v.Items()); err != nil {
		return 0, err
	}
	if f.hasSize {
		sz := e.ref(f.size, vals)
		if int64(len(e.b)-start) > sz {
			return 0, fmt.Errorf("%d bytes, the size says %d", len(e.b)-start, sz)
		}
		for int64(len(e.b)-start) < sz {
			e.b = append(e.b, 0)
		}
	}
	return 0, nil
}

// span writes the bytes of a bytes or text field.
func (e *encoder) span(f *cfield, data []byte, vals []int64, has bool) error {
	switch {
	case f.hasSize:
		sz := e.ref(f.size, vals)
		if int64(len(data)) > sz {
			return fmt.Errorf("%d bytes, the size says %d", len(data), sz)
		}
		if !has && f.contents == nil {
			data = nil
		}
		e.b = append(e.b, data...)
		fill := byte(0)
		if f.pad >= 0 {
			fill = byte(f.pad)
		}
		n := int64(len(data))
		if f.term >= 0 && n < sz {
			e.b = append(e.b, byte(f.term))
			n++
		}
		for ; n < sz; n++ {
			e.b = append(e.b, fill)
		}
	case f.sizeEOS:
		e.b = append(e.b, data...)
	default:
		if bytes.IndexByte(data, byte(f.term)) >= 0 {
			return fmt.Errorf("the text holds its terminator 0x%02x", f.term)
		}
		e.b = append(append(e.b, data...), byte(f.term))
	}
	return nil
}

// rawInt is the wire value of an integer field.
func (e *encoder) rawInt(f *cfield, v dissect.Value, has bool) (uint64, error) {
	if !has {
		if f.valid != nil && f.valid.Min != nil {
			return uint64(*f.valid.Min), nil
		}
		return 0, nil
	}
	var raw uint64
	switch {
	case f.boolean:
		return rawBool(f, v)
	case f.enum != nil:
		s := v.Str()
		found := false
		for k, name := range f.enum {
			if name == s {
				raw, found = uint64(k), true
			}
		}
		if !found {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%q: %q is not a name of its enum", f.id, s)
			}
			raw = uint64(n)
		}
	case f.scale != 0:
		raw = uint64(int64(math.Round((v.Float() - f.offset) / f.scale)))
	case v.Kind() == dissect.KindInt:
		raw = uint64(v.Int())
	default:
		raw = v.Uint()
	}
	bits := f.width
	if f.kind != wBits {
		bits *= 8
	}
	if bits < 64 {
		if f.kind == wInt {
			lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
			if int64(raw) < lo || int64(raw) > hi {
				return 0, fmt.Errorf("%q: %d does not fit %d bits", f.id, int64(raw), bits)
			}
			raw &= 1<<bits - 1
		} else if raw >= 1<<bits {
			return 0, fmt.Errorf("%q: %d does not fit %d bits", f.id, raw, bits)
		}
	}
	return raw, nil
}

func appendUint(b []byte, v uint64, width int, o Order) []byte {
	if o == BigEndian {
		for i := width - 1; i >= 0; i-- {
			b = append(b, byte(v>>(8*i)))
		}
		return b
	}
	for i := 0; i < width; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// writeBits appends the n low bits of v, as readBits reads them.
func (e *encoder) writeBits(v uint64, n int, o Order) {
	for i := 0; i < n; i++ {
		if e.bit == 0 {
			e.b = append(e.b, 0)
		}
		var bit uint64
		if o == BigEndian {
			bit = v >> (n - 1 - i) & 1
			e.b[len(e.b)-1] |= byte(bit << (7 - e.bit))
		} else {
			bit = v >> i & 1
			e.b[len(e.b)-1] |= byte(bit << e.bit)
		}
		e.bit = (e.bit + 1) % 8
	}
}

// float32ToHalf converts to IEEE 754 binary16, rounding to nearest
// (ties away from zero), infinities and NaN kept.
func float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	frac := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		frac |= 0x800000
		return sign | uint16((frac+(1<<(13-exp)))>>(14-exp))
	}
	h := uint32(exp)<<10 | frac>>13
	if frac&0x1000 != 0 {
		h++
	}
	return sign | uint16(h)
}
