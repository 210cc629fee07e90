package parquetout

import (
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
)

// rowBuilder appends records to a part's column buffers: each value
// straight to its leaf column with its levels. One serves every table of
// a writer, a record at a time.
type rowBuilder struct {
	set   []bool          // per declared field: already written in this row
	extra []dissect.Field // the fields that go to extra_json
	// general, set by tests, makes every record take the general path
	// (fields), not the one for records as declared (declaredOrder).
	general bool
	jbuf    []byte
	json    *output.JSON
}

// build appends r as a row of plan p to b and returns whether some field
// went to extra_json. Strings and bytes are copied into b, as the
// record's buffers are not ours.
func (rb *rowBuilder) build(b *batch, p *plan, r *dissect.Record, capture string) bool {
	// The common columns are required and flat: no levels.
	cols := b.cols
	sz := 8 + cols[p.capture].addStr(capture)
	for _, e := range p.env {
		switch e.from {
		case dissect.FieldTime:
			cols[e.col].i64 = append(cols[e.col].i64, r.Time.UnixNano())
		case dissect.FieldFrame:
			cols[e.col].i64 = append(cols[e.col].i64, r.Frame)
		case dissect.FieldTransport:
			sz += cols[e.col].addBytes(r.Transport.String()) // a name of ours, valid
		case dissect.FieldStream: // kept as runs, of no size: a stream's messages come in bursts
			b.int64Run(e.col, int64(r.Stream))
			continue
		case dissect.FieldSrc:
			sz += cols[e.col].addStr(r.Src)
		case dissect.FieldDst:
			sz += cols[e.col].addStr(r.Dst)
		case dissect.FieldOffset:
			cols[e.col].i64 = append(cols[e.col].i64, r.Offset)
		case dissect.FieldLength: // runs: a type's messages have one length
			b.int64Run(e.col, r.Length)
			continue
		default:
			v, _ := e.values(r) // one value: a JSON key's
			if e.kind == dissect.KindString {
				sz += cols[e.col].addStr(v[0].Str())
			} else { // an integer, a time as nanoseconds
				cols[e.col].i64 = append(cols[e.col].i64, v[0].Int())
			}
		}
		sz += 8 // a slot (batch.size)
	}
	if p.rtype >= 0 {
		sz += 8 + cols[p.rtype].addStr(r.Type)
	}
	b.size += sz
	if p.raw >= 0 {
		if r.Raw == nil {
			b.null(p.raw, 0, 0)
		} else {
			b.raw(p.raw, r.Raw, 1, 0)
		}
	}
	if len(r.Warnings) == 0 {
		b.null(p.warnings, 0, 0)
	}
	for i, s := range r.Warnings {
		b.str(p.warnings, s, 2, min(i, 1))
	}

	extra := false
	if rb.general || !declaredOrder(p, r.Fields) {
		extra = rb.fields(b, p, r.Fields)
	} else {
		for i := range r.Fields {
			scalar(b, &p.fields[i], &r.Fields[i].Value)
		}
		b.null(p.extra, 0, 0)
	}
	b.rows++
	return extra
}

// declaredOrder reports whether fs are p's fields as declared, each in
// its place and of its kind, all scalars (most records, whose protocol
// adds the declared fields in order): they go to their columns one
// after the other, with nothing to look up or check.
func declaredOrder(p *plan, fs []dissect.Field) bool {
	if !p.flat || len(fs) != len(p.fields) {
		return false
	}
	for i := range fs {
		n := &p.fields[i]
		if k := fs[i].Key; fs[i].Value.Kind() != n.kind || len(k) != len(n.name) ||
			unsafe.StringData(k) != unsafe.StringData(n.name) && k != n.name {
			return false
		}
	}
	return true
}

// fields appends the columns of fs, a record's fields in any order, and
// returns whether some went to extra_json.
func (rb *rowBuilder) fields(b *batch, p *plan, fs []dissect.Field) bool {
	if cap(rb.set) < len(p.fields) {
		rb.set = make([]bool, len(p.fields))
	}
	rb.set = rb.set[:len(p.fields)]
	clear(rb.set)
	extra := rb.extra[:0]
	hint := 0
	for i := range fs {
		f := &fs[i]
		j := field(p.fields, f.Key, hint)
		if j < 0 || rb.set[j] {
			extra = append(extra, *f) // undeclared or repeated key
			continue
		}
		n := &p.fields[j]
		// A scalar of the declared kind (the common case) needs no more
		// checking.
		if k := f.Value.Kind(); k != n.kind || k == dissect.KindArray || k == dissect.KindObject {
			if !n.fits(&f.Value) {
				extra = append(extra, *f)
				continue
			}
		}
		rb.set[j], hint = true, j+1
		if n.flat {
			scalar(b, n, &f.Value)
			continue
		}
		emit(b, n, &f.Value, 0)
	}
	for j := range p.fields {
		if !rb.set[j] {
			nulls(b, &p.fields[j], 0, 0)
		}
	}
	if len(extra) == 0 {
		b.null(p.extra, 0, 0)
	} else {
		rb.jbuf = rb.appendObject(rb.jbuf[:0], extra)
		b.raw(p.extra, rb.jbuf, 1, 0)
	}
	clear(extra) // drop the references to the record
	rb.extra = extra[:0]
	return len(extra) > 0
}

// emit appends the values of v, which fits n, at repetition level r.
func emit(b *batch, n *node, v *dissect.Value, r int) {
	switch {
	case n.elem != nil:
		items := v.Items()
		if len(items) == 0 {
			nulls(b, n, r, n.def)
			return
		}
		for i := range items {
			emit(b, n.elem, &items[i].Value, r)
			r = n.rep
		}
	case n.fields != nil:
		items := v.Items()
		k := 0 // items are usually in declaration order
		for i := range n.fields {
			c := &n.fields[i]
			j := -1
			if k < len(items) && items[k].Key == c.name {
				j = k
			} else {
				for m := range items {
					if items[m].Key == c.name {
						j = m
						break
					}
				}
			}
			if j < 0 {
				nulls(b, c, r, n.def)
				continue
			}
			k = j + 1
			emit(b, c, &items[j].Value, r)
		}
	default:
		leaf(b, n, v, r)
	}
}

// scalar appends v, a value of n's kind, to n's column: the common case
// of leaf, for a top-level scalar field (n.flat), without its calls.
func scalar(b *batch, n *node, v *dissect.Value) {
	c := &b.cols[n.col]
	c.def.add(int16(n.def))
	b.size += 8
	switch n.kind {
	case dissect.KindFloat32:
		c.f32 = append(c.f32, v.Float32())
	case dissect.KindFloat:
		c.f64 = append(c.f64, v.Float())
	case dissect.KindInt:
		c.i64 = append(c.i64, v.Int())
	case dissect.KindUint:
		c.i64 = append(c.i64, int64(v.Uint()))
	case dissect.KindBool:
		c.bl = append(c.bl, v.Bool())
	case dissect.KindTime:
		c.i64 = append(c.i64, v.Time().UnixNano())
	case dissect.KindString:
		b.size += c.addStr(v.Str())
	case dissect.KindBytes:
		p := v.Raw()
		b.size += c.addBytes(unsafe.String(unsafe.SliceData(p), len(p))) // only read
	}
}

// nulls appends a null to each of n's columns, at levels r and def: n is
// absent (or an empty array) where its parent is defined to level def.
func nulls(b *batch, n *node, r, def int) {
	for _, c := range n.leaves {
		b.null(c, def, r)
	}
}

// emptyObject is the value of an object declared without keys.
const emptyObject = "{}"

// leaf appends a scalar v to n's column.
func leaf(b *batch, n *node, v *dissect.Value, r int) {
	switch v.Kind() {
	case dissect.KindInt:
		b.int64(n.col, v.Int(), n.def, r)
	case dissect.KindUint:
		b.int64(n.col, int64(v.Uint()), n.def, r)
	case dissect.KindFloat:
		b.float64(n.col, v.Float(), n.def, r)
	case dissect.KindFloat32:
		b.float32(n.col, v.Float32(), n.def, r)
	case dissect.KindBool:
		b.bool(n.col, v.Bool(), n.def, r)
	case dissect.KindString:
		b.str(n.col, v.Str(), n.def, r)
	case dissect.KindBytes:
		b.raw(n.col, v.Raw(), n.def, r)
	case dissect.KindTime:
		b.int64(n.col, v.Time().UnixNano(), n.def, r)
	case dissect.KindObject:
		b.str(n.col, emptyObject, n.def, r)
	default:
		b.null(n.col, n.def-1, r) // not reached: v fits n
	}
}

// appendObject appends fs as a JSON object in the forms of
// docs/output.md, with the encoder of -o json.
func (rb *rowBuilder) appendObject(buf []byte, fs []dissect.Field) []byte {
	buf = append(buf, '{')
	for i := range fs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = output.AppendString(buf, fs[i].Key)
		buf = append(buf, ':')
		buf = rb.json.AppendValue(buf, &fs[i].Value)
	}
	return append(buf, '}')
}
