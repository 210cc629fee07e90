package layout

// Runs: a run of fixed-width fields (integers and floats read once) is
// read with one bounds check at offsets known when compiling, by compact
// read ops (see Decoder.run and Fixed).

// rop is a field of a run, compact: how to read it, where, and where it
// goes.
type rop struct {
	id    string
	off   int32 // in the run
	k     int16 // the field
	out   int16 // among the recorded fields, -1: not recorded
	code  readOp
	width uint8
	order Order
	// signed: sign-extend; plain: record the integer as it is (else
	// intValue applies the field's enum, valid range or scale)
	signed, plain bool
}

// step is what the decoder does next: read a run of fixed-width fields
// (size > 0) with one bounds check, or one field of another kind
// (fields[from], size 0).
type step struct {
	from, to int // fields[from:to]
	size     int // bytes of a run; 0: one field read on its own
	op       int // the run's first rop
	// floats: a run of floats of one width and byte order, every one
	// recorded in order (a vector, a quaternion): its readOp, read in a
	// loop of its own; opOther: not such a run
	floats readOp
}

// readOp is how a field of a run is read.
type readOp uint8

const (
	opOther readOp = iota // readUint (widths 3, 5, 6, 7)
	opU1
	opU2LE
	opU2BE
	opU4LE
	opU4BE
	opU8LE
	opU8BE
	opF2
	opF4LE
	opF4BE
	opF8LE
	opF8BE
)

// inRun reports whether f has a fixed width and is read at a fixed
// offset after the field before it: an integer or float read once.
func (f *cfield) inRun() bool {
	return (f.kind == wUint || f.kind == wInt || f.kind == wFloat) && f.repeat == Once
}

// maxRunField bounds the field indexes a rop holds (a type of more fields,
// which only Limits above the defaults allow, reads the rest one by one).
const maxRunField = 1<<15 - 1

// opOf says how f, of a run, is read.
func opOf(f *cfield) readOp {
	le := f.order == LittleEndian
	pick := func(l, b readOp) readOp {
		if le {
			return l
		}
		return b
	}
	if f.kind == wFloat {
		switch f.width {
		case 2:
			return opF2
		case 4:
			return pick(opF4LE, opF4BE)
		}
		return pick(opF8LE, opF8BE)
	}
	switch f.width {
	case 1:
		return opU1
	case 2:
		return pick(opU2LE, opU2BE)
	case 4:
		return pick(opU4LE, opU4BE)
	case 8:
		return pick(opU8LE, opU8BE)
	}
	return opOther
}

// uniformFloats returns the readOp of a run whose fields are all float32
// or all float64 of one byte order, recorded one after another; else
// opOther.
func uniformFloats(ops []rop) readOp {
	c := ops[0].code
	if c != opF4LE && c != opF4BE && c != opF8LE && c != opF8BE {
		return opOther
	}
	for i := range ops {
		if ops[i].code != c || int(ops[i].out) != int(ops[0].out)+i || ops[0].out < 0 {
			return opOther
		}
	}
	return c
}

// runs groups the fields of t into steps: each maximal run of
// fixed-width fields is read with one bounds check, at offsets known when
// compiling.
func (t *ctype) runs() {
	fields := t.fields
	for k := 0; k < len(fields); {
		if !fields[k].inRun() || k >= maxRunField {
			t.steps = append(t.steps, step{from: k, to: k + 1})
			k++
			continue
		}
		s := step{from: k, op: len(t.ops)}
		for ; k < len(fields) && k < maxRunField && fields[k].inRun(); k++ {
			f := &fields[k]
			t.keys = append(t.keys, f.id)
			t.ops = append(t.ops, rop{id: f.id, off: int32(s.size), k: int16(k), out: int16(f.out),
				code: opOf(f), width: uint8(f.width), order: f.order, signed: f.kind == wInt, plain: f.plain})
			s.size += f.width
		}
		s.to = k
		s.floats = uniformFloats(t.ops[s.op:])
		t.steps = append(t.steps, s)
	}
	t.flat = len(t.steps) == 1 && t.steps[0].size > 0
}

// vector marks a type that is one run of floats, all recorded and within
// the value limit, for Decode's shortest path.
func (t *ctype) vector(lim Limits) {
	if t.flat && t.steps[0].floats != opOther && t.nOut == len(t.ops) && len(t.ops) <= lim.MaxValues {
		t.floats, t.size = t.steps[0].floats, t.steps[0].size
	}
}
