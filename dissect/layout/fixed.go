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
	// f4: the fields from this one on are little-endian float32, one
	// after the other from f4off (a vector), read in a loop of their own
	f4, f4off int
}

// Fixed returns type t's reader, and false when t is not such a type.
func (p *Plan) Fixed(t int) (Fixed, bool) {
	ct := &p.types[t]
	r := ct.flat
	if r == nil || ct.tail != nil || r.n != len(ct.fields) || len(r.ops) != len(ct.fields) ||
		ct.nOut != len(ct.fields) || len(ct.fields) > p.lim.MaxValues {
		return Fixed{}, false
	}
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
	}
	return fixedOf(r.ops, r.size), true
}

// fixedOf is the reader of ops, which fill size bytes.
func fixedOf(ops []runOp, size int) Fixed {
	f := Fixed{ops: ops, size: size, f4: len(ops)}
	for i := len(ops) - 1; i >= 0; i-- {
		op := &ops[i]
		if op.kind != opF4 || op.read != rd4le || i < len(ops)-1 && op.off+4 != ops[i+1].off {
			break
		}
		f.f4, f.f4off = i, op.off
	}
	return f
}

// Then returns the reader of f's fields followed by g's: a frame's header
// and the message it frames, read in one call.
func (f Fixed) Then(g Fixed) Fixed {
	ops := make([]runOp, 0, len(f.ops)+len(g.ops))
	ops = append(ops, f.ops...)
	for _, op := range g.ops {
		op.off += f.size
		op.out += len(f.ops)
		ops = append(ops, op)
	}
	return fixedOf(ops, f.size+g.size)
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
	k := min(f.f4, len(ops))
	for i := range ops[:k] {
		op := &ops[i]
		out[i].Key = op.id
		op.decode(&out[i].Value, b[op.off:])
	}
	out, ops, b = out[k:], ops[k:], b[f.f4off:]
	if len(out) == 4 && len(ops) == 4 && len(b) >= 16 { // x, y, z and w: unrolled
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
}

// Int returns the reader of the type's integer field k (its index among
// the fields); false when field k is not an integer.
func (f *Fixed) Int(k int) (IntAt, bool) {
	if k < 0 || k >= len(f.ops) || f.ops[k].kind != opUint && f.ops[k].kind != opInt {
		return IntAt{}, false
	}
	return IntAt{f.ops[k]}, true
}

// IntAt reads one integer field of a [Fixed] type: a message's type id,
// read before anything else.
type IntAt struct{ op runOp }

// Read returns the field's raw value in b, which holds at least the
// type's Size bytes.
func (r *IntAt) Read(b []byte) int64 { return int64(r.op.raw(b[r.op.off:])) }
