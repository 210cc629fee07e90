package layout

import (
	"encoding/binary"
	"math"

	"github.com/dissect-tools/dissect/dissect"
)

// Fixed reads a type whose fields are all numbers of a fixed width,
// recorded as they are (integers without enum, valid range or scale, and
// floats): a vector, a header. It keeps no state and meets no error once
// its [Fixed.Size] bytes are there, so a protocol's hot path can read such
// a message with one bounds check of its own and one call.
type Fixed struct {
	keys   []string // the fields' keys, in order
	ops    []rop
	size   int
	floats readOp // a run of floats of one kind (see step.floats), or opOther
}

// Fixed returns type t's reader, and false when t is not such a type.
func (p *Plan) Fixed(t int) (Fixed, bool) {
	ct := &p.types[t]
	if !ct.flat || ct.nOut != len(ct.ops) || len(ct.ops) > p.lim.MaxValues {
		return Fixed{}, false
	}
	for i := range ct.ops {
		if o := &ct.ops[i]; int(o.out) != i || o.code != opF2 && !o.plain && !isFloat(o.code) {
			return Fixed{}, false
		}
	}
	return Fixed{keys: ct.keys, ops: ct.ops, size: ct.steps[0].size, floats: ct.steps[0].floats}, true
}

func isFloat(c readOp) bool { return c == opF4LE || c == opF4BE || c == opF8LE || c == opF8BE }

// Size returns the bytes the type takes.
func (f *Fixed) Size() int { return f.size }

// Len returns how many fields the type records.
func (f *Fixed) Len() int { return len(f.ops) }

// Decode reads the type's fields from b, which holds at least Size bytes,
// into out, which has room for Len fields (r.Extend(f.Len())): one call,
// no state, no error.
func (f *Fixed) Decode(out []dissect.Field, b []byte) {
	out = out[:len(f.ops)]
	keys := f.keys[:len(out)]
	switch f.floats { // a vector: a loop of one kind of float
	case opF4LE:
		if len(out) == 4 && len(b) >= 16 { // x, y, z and w: unrolled
			out[0].Key, out[1].Key, out[2].Key, out[3].Key = keys[0], keys[1], keys[2], keys[3]
			out[0].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[0:])))
			out[1].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[4:])))
			out[2].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[8:])))
			out[3].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[12:])))
			return
		}
		for i := range out {
			out[i].Key = keys[i]
			out[i].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
		return
	case opF4BE:
		for i := range out {
			out[i].Key = keys[i]
			out[i].Value.SetFloat32(math.Float32frombits(binary.BigEndian.Uint32(b[4*i:])))
		}
		return
	case opF8LE:
		for i := range out {
			out[i].Key = keys[i]
			out[i].Value.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
		return
	case opF8BE:
		for i := range out {
			out[i].Key = keys[i]
			out[i].Value.SetFloat(math.Float64frombits(binary.BigEndian.Uint64(b[8*i:])))
		}
		return
	}
	for i := range f.ops {
		o := &f.ops[i]
		dst := &out[i]
		dst.Key = o.id
		p := b[o.off:]
		switch o.code {
		case opF2:
			dst.Value.SetFloat32(halfToFloat32(uint16(readUint(p, 2, o.order))))
			continue
		case opF4LE, opF4BE:
			dst.Value.SetFloat32(math.Float32frombits(uint32(o.read(p))))
			continue
		case opF8LE, opF8BE:
			dst.Value.SetFloat(math.Float64frombits(o.read(p)))
			continue
		}
		var raw uint64
		switch o.code { // the common widths without a call
		case opU1:
			raw = uint64(p[0])
		case opU2LE:
			raw = uint64(binary.LittleEndian.Uint16(p))
		case opU2BE:
			raw = uint64(binary.BigEndian.Uint16(p))
		default:
			raw = o.read(p)
		}
		if o.signed {
			sh := 64 - 8*uint(o.width)
			dst.Value.SetInt(int64(raw<<sh) >> sh)
		} else {
			dst.Value.SetUint(raw)
		}
	}
}

// read reads the raw bits of a run's field from p.
func (o *rop) read(p []byte) uint64 {
	switch o.code {
	case opU1:
		return uint64(p[0])
	case opU2LE:
		return uint64(binary.LittleEndian.Uint16(p))
	case opU2BE:
		return uint64(binary.BigEndian.Uint16(p))
	case opU4LE, opF4LE:
		return uint64(binary.LittleEndian.Uint32(p))
	case opU4BE, opF4BE:
		return uint64(binary.BigEndian.Uint32(p))
	case opU8LE, opF8LE:
		return binary.LittleEndian.Uint64(p)
	case opU8BE, opF8BE:
		return binary.BigEndian.Uint64(p)
	}
	return readUint(p, int(o.width), o.order)
}

// Raw returns the raw value of the type's integer field k (its index
// among the fields) in b, which holds at least Size bytes; false when
// field k is not an integer.
func (f *Fixed) Raw(b []byte, k int) (int64, bool) {
	if k < 0 || k >= len(f.ops) {
		return 0, false
	}
	o := &f.ops[k]
	switch o.code {
	case opF2, opF4LE, opF4BE, opF8LE, opF8BE:
		return 0, false
	}
	raw := o.read(b[o.off:])
	if o.signed {
		sh := 64 - 8*uint(o.width)
		return int64(raw<<sh) >> sh, true
	}
	return int64(raw), true
}
