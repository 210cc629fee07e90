package parquetout

import (
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
	"github.com/parquet-go/parquet-go"
)

// rowBuilder turns records into Parquet rows: the values of each leaf
// column with their levels, in column order, as the library's Row wants
// them. One serves every table of a writer, a row at a time.
type rowBuilder struct {
	vals  [][]parquet.Value // per column of the current plan
	set   []bool            // per declared field: already written in this row
	extra []dissect.Field   // the fields that go to extra_json
	jbuf  []byte
	json  *output.JSON
}

// build appends r as a row of plan p to row and returns it, with whether
// some field went to extra_json. Strings and bytes are copied into a (the
// part's arena), as the record's buffers are not ours and rows are
// written in batches.
func (b *rowBuilder) build(row parquet.Row, p *plan, r *dissect.Record, capture string, a *arena) (parquet.Row, bool) {
	if cap(b.vals) < p.ncols {
		b.vals = make([][]parquet.Value, p.ncols)
	}
	b.vals = b.vals[:p.ncols]
	for i := range b.vals {
		b.vals[i] = b.vals[i][:0]
	}
	b.one(p.capture, immutable(capture), 0)
	b.one(p.time, parquet.Int64Value(r.Time.UnixNano()), 0)
	b.one(p.transport, immutable(r.Transport.String()), 0)
	b.one(p.stream, parquet.Int64Value(int64(r.Stream)), 0)
	b.one(p.src, a.str(r.Src), 0)
	b.one(p.dst, a.str(r.Dst), 0)
	b.one(p.offset, parquet.Int64Value(r.Offset), 0)
	b.one(p.length, parquet.Int64Value(r.Length), 0)
	if p.rtype >= 0 {
		b.one(p.rtype, a.str(r.Type), 0)
	}
	if len(r.Warnings) == 0 {
		b.one(p.warnings, parquet.Value{}, 0)
	}
	for i, s := range r.Warnings {
		b.vals[p.warnings] = append(b.vals[p.warnings], a.str(s).Level(min(i, 1), 2, p.warnings))
	}

	if cap(b.set) < len(p.fields) {
		b.set = make([]bool, len(p.fields))
	}
	b.set = b.set[:len(p.fields)]
	clear(b.set)
	extra := b.extra[:0]
	hint := 0
	for i := range r.Fields {
		f := &r.Fields[i]
		j := field(p.fields, f.Key, hint)
		if j < 0 || b.set[j] {
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
		b.set[j], hint = true, j+1
		b.emit(n, &f.Value, 0, a)
	}
	for j := range p.fields {
		if !b.set[j] {
			b.nulls(&p.fields[j], 0, 0)
		}
	}
	if len(extra) == 0 {
		b.one(p.extra, parquet.Value{}, 0)
	} else {
		b.jbuf = b.appendObject(b.jbuf[:0], extra)
		b.one(p.extra, a.bytes(b.jbuf), 1)
	}
	clear(extra) // drop the references to the record
	b.extra = extra[:0]

	for _, vs := range b.vals {
		row = append(row, vs...)
	}
	return row, len(extra) > 0
}

// one sets column col's only value, at repetition level 0.
func (b *rowBuilder) one(col int, v parquet.Value, def int) {
	b.vals[col] = append(b.vals[col], v.Level(0, def, col))
}

// emit appends the values of v, which fits n, at repetition level r.
func (b *rowBuilder) emit(n *node, v *dissect.Value, r int, a *arena) {
	switch {
	case n.elem != nil:
		items := v.Items()
		if len(items) == 0 {
			b.nulls(n, r, n.def)
			return
		}
		for i := range items {
			b.emit(n.elem, &items[i].Value, r, a)
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
				b.nulls(c, r, n.def)
				continue
			}
			k = j + 1
			b.emit(c, &items[j].Value, r, a)
		}
	default:
		b.vals[n.col] = append(b.vals[n.col], leaf(v, a).Level(r, n.def, n.col))
	}
}

// nulls appends a null to each of n's columns, at levels r and def: n is
// absent (or an empty array) where its parent is defined to level def.
func (b *rowBuilder) nulls(n *node, r, def int) {
	for _, c := range n.leaves {
		b.vals[c] = append(b.vals[c], parquet.Value{}.Level(r, def, c))
	}
}

// emptyObject is the value of an object declared without keys.
const emptyObject = "{}"

// leaf returns the Parquet value of a scalar v.
func leaf(v *dissect.Value, a *arena) parquet.Value {
	switch v.Kind() {
	case dissect.KindInt:
		return parquet.Int64Value(v.Int())
	case dissect.KindUint:
		return parquet.Int64Value(int64(v.Uint()))
	case dissect.KindFloat:
		return parquet.DoubleValue(v.Float())
	case dissect.KindFloat32:
		return parquet.FloatValue(v.Float32())
	case dissect.KindBool:
		return parquet.BooleanValue(v.Bool())
	case dissect.KindString:
		return a.str(v.Str())
	case dissect.KindBytes:
		return a.bytes(v.Raw())
	case dissect.KindTime:
		return parquet.Int64Value(v.Time().UnixNano())
	case dissect.KindObject:
		return immutable(emptyObject)
	}
	return parquet.Value{}
}

// appendObject appends fs as a JSON object in the forms of
// docs/output.md, with the encoder of -o json.
func (b *rowBuilder) appendObject(buf []byte, fs []dissect.Field) []byte {
	buf = append(buf, '{')
	for i := range fs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = output.AppendString(buf, fs[i].Key)
		buf = append(buf, ':')
		buf = b.json.AppendValue(buf, &fs[i].Value)
	}
	return append(buf, '}')
}

// arena holds copies of the strings and bytes of the rows a part has not
// written yet. A full chunk is left to the values that point into it and
// a new one started; reset reuses the last.
type arena struct{ buf []byte }

func (a *arena) bytes(p []byte) parquet.Value {
	if len(a.buf)+len(p) > cap(a.buf) {
		a.buf = make([]byte, 0, max(min(2*cap(a.buf), 1<<20), len(p), 4096))
	}
	n := len(a.buf)
	a.buf = append(a.buf, p...)
	return parquet.ByteArrayValue(a.buf[n:len(a.buf):len(a.buf)])
}

func (a *arena) str(s string) parquet.Value {
	return a.bytes(unsafe.Slice(unsafe.StringData(s), len(s)))
}

func (a *arena) reset() { a.buf = a.buf[:0] }

// immutable returns s as a value without copying it: for strings that
// are not a record's (constants, the capture's name), which stay as they
// are while a batch waits.
func immutable(s string) parquet.Value {
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}
