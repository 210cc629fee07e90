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
	ops  []runOp // the type's run (run.go): every field, recorded in order
	size int
	// f4le: every field a little-endian float32, one after the other (a
	// vector), read in a loop of its own
	f4le bool
}

// Fixed returns type t's reader, and false when t is not such a type.
func (p *Plan) Fixed(t int) (Fixed, bool) {
	ct := &p.types[t]
	r := ct.flat
	if r == nil || ct.tail != nil || r.n != len(ct.fields) || len(r.ops) != len(ct.fields) ||
		ct.nOut != len(ct.fields) || len(ct.fields) > p.lim.MaxValues {
		return Fixed{}, false
	}
	f4le := true
	for i := range r.ops {
		op := &r.ops[i]
		switch op.kind {
		case opUint, opInt, opF2, opF4, opF8:
		default: // bools, enums, scales: values of their own
			return Fixed{}, false
		}
		if op.out != i {
			return Fixed{}, false
		}
		f4le = f4le && op.kind == opF4 && op.read == rd4le && op.off == 4*i
	}
	return Fixed{ops: r.ops, size: r.size, f4le: f4le}, true
}

// Size returns the bytes the type takes.
func (f *Fixed) Size() int { return f.size }

// Len returns how many fields the type records.
func (f *Fixed) Len() int { return len(f.ops) }

// Decode reads the type's fields from b, which holds at least Size bytes,
// into out, which has room for Len fields (r.Extend(f.Len())): one call,
// no state, no error.
func (f *Fixed) Decode(out []dissect.Field, b []byte) {
	out = out[:len(f.ops)]
	ops := f.ops[:len(out)]
	if f.f4le {
		if len(out) == 4 && len(b) >= 16 { // x, y, z and w: unrolled
			out[0].Key, out[1].Key, out[2].Key, out[3].Key = ops[0].id, ops[1].id, ops[2].id, ops[3].id
			out[0].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[0:])))
			out[1].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[4:])))
			out[2].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[8:])))
			out[3].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[12:])))
			return
		}
		for i := range out {
			out[i].Key = ops[i].id
			out[i].Value.SetFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
		return
	}
	for i := range ops {
		op := &ops[i]
		out[i].Key = op.id
		op.set(&out[i].Value, op.raw(b[op.off:]))
	}
}

// Raw returns the raw value of the type's integer field k (its index
// among the fields) in b, which holds at least Size bytes; false when
// field k is not an integer.
func (f *Fixed) Raw(b []byte, k int) (int64, bool) {
	if k < 0 || k >= len(f.ops) {
		return 0, false
	}
	op := &f.ops[k]
	if op.kind != opUint && op.kind != opInt {
		return 0, false
	}
	return int64(op.raw(b[op.off:])), true
}
