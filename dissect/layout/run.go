package layout

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/dissect-tools/dissect/dissect"
)

// A run is consecutive fields of a type that have a fixed size and place
// and cannot fail once their bytes are there: integers, floats and bools
// read once (an enum or a scale is allowed, a valid range is not). The
// decoder checks a run's bytes once and reads its fields without a check
// each, from a compact list rather than the full compiled fields. Every
// field of a run has the run from itself to the run's end (a suffix), so
// a run whose bytes end early is tried again from each later field.
type run struct {
	base  int     // the offset of the first op in the whole run
	size  int     // bytes from base to the run's end
	n     int     // fields from this one to the run's end
	ops   []runOp // those of them that are recorded, size another or may warn
	check []runOp // those of ops that Check reads: a later field refers to it, or it may warn
}

type runOp struct {
	off   int // in the whole run
	k     int // the field's index in its type
	width int
	order Order
	read  uint8 // rd1 …: how to read it
	sign  uint  // shift that sign-extends a signed integer; 0: unsigned
	kind  opKind
	out   int // among the recorded fields; -1: not recorded
	id    string
	f     *cfield // opValue: intValue's field
	check bool    // Check reads it
}

type opKind uint8

const (
	opUint  opKind = iota // recorded as it is
	opInt                 // sign-extended
	opF2                  // IEEE 754 half
	opF4                  // single
	opF8                  // double
	opBool                // a bool without enum
	opValue               // through intValue: enum, scale, a bool with enum
)

// Reads of a run's op, by width and order.
const (
	rd1 uint8 = iota
	rd2le
	rd2be
	rd4le
	rd4be
	rd8le
	rd8be
	rdAny
)

// fixedOp returns the op of a field that may be in a run.
func fixedOp(f *cfield) (runOp, bool) {
	if f.repeat != Once || f.valid != nil {
		return runOp{}, false
	}
	op := runOp{width: f.width, order: f.order, out: f.out, id: f.id, f: f, check: f.referred || f.boolean || f.enum != nil}
	switch {
	case f.kind == wFloat && f.width == 2:
		op.kind = opF2
	case f.kind == wFloat && f.width == 4:
		op.kind = opF4
	case f.kind == wFloat:
		op.kind = opF8
	case f.kind != wUint && f.kind != wInt:
		return runOp{}, false
	case f.boolean && f.enum == nil:
		op.kind = opBool
	case f.boolean || f.enum != nil || f.scale != 0:
		op.kind = opValue
	case f.kind == wInt:
		op.kind = opInt
	default:
		op.kind = opUint
	}
	if f.kind == wInt {
		op.sign = 64 - 8*uint(f.width)
	}
	switch f.width {
	case 1:
		op.read = rd1
	case 2:
		op.read = rd2le
	case 4:
		op.read = rd4le
	case 8:
		op.read = rd8le
	default:
		op.read = rdAny
	}
	if op.read != rd1 && op.read != rdAny && f.order == BigEndian {
		op.read++ // each be read follows its le read
	}
	return op, true
}

// compileRuns finds the runs of type t's fields.
func compileRuns(t *ctype) {
	for k := 0; k < len(t.fields); {
		var ops []runOp
		size := 0
		j := k
		for ; j < len(t.fields); j++ {
			op, ok := fixedOp(&t.fields[j])
			if !ok {
				break
			}
			op.off, op.k = size, j
			size += op.width
			ops = append(ops, op)
		}
		for i := range ops {
			r := &run{base: ops[i].off, size: size - ops[i].off, n: len(ops) - i}
			for _, op := range ops[i:] {
				if op.out >= 0 || op.check { // else padding: nothing to read
					r.ops = append(r.ops, op)
				}
				if op.check {
					r.check = append(r.check, op)
				}
			}
			t.fields[k+i].run = r
		}
		k = max(j, k+1)
	}
}

// compileFlat finds whether type t is flat: one run of fixed fields,
// then at most bytes or text to the end (kept as they are).
func compileFlat(t *ctype) {
	if len(t.fields) == 0 || t.fields[0].run == nil {
		return
	}
	r := t.fields[0].run
	switch n := r.n; {
	case n == len(t.fields):
		t.flat = r
	case n == len(t.fields)-1:
		f := &t.fields[n]
		if (f.kind == wBytes || f.kind == wStr) && f.sizeEOS && f.repeat == Once && f.term < 0 && f.pad < 0 && f.contents == nil {
			t.flat, t.tail = r, f
		}
	}
}

// flat reads a flat type whose run b holds whole (Decode's fast path).
func (d *Decoder) flat(t *ctype, r *dissect.Record, b []byte) int {
	if cap(d.vals) < len(t.fields) {
		d.vals = slices.Grow(d.vals[:0], len(t.fields))
	}
	var out []dissect.Field
	if !d.check {
		out = r.Extend(t.nOut)
	}
	if !d.check || len(t.flat.check) > 0 {
		d.fixed(t.flat, b, out, d.vals[:len(t.fields)])
	}
	d.values += t.flat.n
	n := t.flat.size
	if f := t.tail; f != nil {
		d.values++
		if f.out >= 0 && !d.check {
			o := &out[f.out]
			o.Key = f.id
			if f.kind == wStr {
				o.Value.SetStr(string(b[n:]))
			} else {
				o.Value.SetBytes(b[n:])
			}
		}
		n = len(b)
	}
	return n
}

// fixed reads the fields of run r from b (r.size bytes) into out, and
// their raw values into vals (the seq's slots). With d.check, it reads
// only r.check, and records nothing.
func (d *Decoder) fixed(r *run, b []byte, out []dissect.Field, vals []int64) {
	ops := r.ops
	if d.check {
		ops = r.check
	}
	for i := range ops {
		op := &ops[i]
		var raw uint64
		switch at := b[op.off-r.base:]; op.read { // the usual reads inline: the decoder's hottest loop
		case rd1:
			raw = signExtend(uint64(at[0]), op.sign)
		case rd2le:
			raw = signExtend(uint64(binary.LittleEndian.Uint16(at)), op.sign)
		case rd4le:
			raw = signExtend(uint64(binary.LittleEndian.Uint32(at)), op.sign)
		default:
			raw = op.raw(at)
		}
		vals[op.k] = int64(raw)
		if d.check || op.out < 0 { // not recorded: only its warnings
			switch op.kind {
			case opBool:
				if raw > 1 {
					d.boolValue(op.f, raw, &d.scratch)
				}
			case opValue:
				d.intValue(op.f, raw, 0, &d.scratch)
			}
			continue
		}
		o := &out[op.out]
		o.Key = op.id
		dst := &o.Value
		switch op.kind {
		case opBool:
			if raw > 1 {
				d.boolValue(op.f, raw, dst)
			} else {
				*dst = dissect.Bool(raw == 1)
			}
		case opValue:
			d.intValue(op.f, raw, 0, dst) // no valid range: it cannot fail
		default:
			op.set(dst, raw)
		}
	}
}

// raw reads op's bits from at (its bytes first), sign-extended.
func (op *runOp) raw(at []byte) uint64 {
	var raw uint64
	switch op.read {
	case rd1:
		raw = uint64(at[0])
	case rd2le:
		raw = uint64(binary.LittleEndian.Uint16(at))
	case rd2be:
		raw = uint64(binary.BigEndian.Uint16(at))
	case rd4le:
		raw = uint64(binary.LittleEndian.Uint32(at))
	case rd4be:
		raw = uint64(binary.BigEndian.Uint32(at))
	case rd8le:
		raw = binary.LittleEndian.Uint64(at)
	case rd8be:
		raw = binary.BigEndian.Uint64(at)
	default:
		raw = readUint(at, op.width, op.order)
	}
	return signExtend(raw, op.sign)
}

// signExtend sign-extends raw by shift sh (0: unsigned).
func signExtend(raw uint64, sh uint) uint64 {
	if sh > 0 {
		return uint64(int64(raw<<sh) >> sh)
	}
	return raw
}

// set sets dst to the number raw holds, for an op recorded as it is
// (opUint … opF8).
// decode reads the op's value at at[0] into dst: set(raw(at)), an
// unsigned integer (most of any header) without set's switch.
func (op *runOp) decode(dst *dissect.Value, at []byte) {
	if op.kind == opUint {
		dst.SetUint(op.raw(at))
		return
	}
	op.set(dst, op.raw(at))
}

func (op *runOp) set(dst *dissect.Value, raw uint64) {
	switch op.kind {
	case opUint:
		dst.SetUint(raw)
	case opInt:
		dst.SetInt(int64(raw))
	case opF2:
		dst.SetFloat32(halfToFloat32(uint16(raw)))
	case opF4:
		dst.SetFloat32(math.Float32frombits(uint32(raw)))
	case opF8:
		dst.SetFloat(math.Float64frombits(raw))
	}
}

// Sure reports whether any n bytes hold a whole value of type t without
// an error or a warning, and how many bytes it takes: then Check would
// find nothing, and need not run. It is so for a flat type (fixed fields,
// then bytes to the end) none of whose fields may warn (bools, enums),
// given its fixed bytes.
func (p *Plan) Sure(t, n int) (int, bool) {
	ct := &p.types[t]
	if ct.flat == nil || len(ct.flat.check) > 0 || n < ct.flat.size || len(ct.fields) > p.lim.MaxValues {
		return 0, false
	}
	if ct.tail != nil {
		return n, true
	}
	return ct.flat.size, true
}

// Check reads type t from b as Decode does, with the same size, error and
// warnings, but records nothing: r.Fields is left as it was, and [Raw]
// holds only the integers other fields refer to. It is Decode for a
// record whose fields are not wanted (dissect.Ctx.Decode false), and
// skips the fixed fields that can neither warn nor size another.
func (d *Decoder) Check(r *dissect.Record, t int, b []byte) (int, error) {
	d.check = true
	n, err := d.Decode(r, t, b)
	d.check = false
	return n, err
}
