package vrpn

import (
	"math"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
)

// The catalogue: mainline's application message types beyond the ones
// decode.go handles by hand, each described once by the layout of its
// body. One layout gives both the type's declaration and its decoding, so
// the two cannot disagree. Bodies are packed big-endian with no padding
// between values (mainline's vrpn_buffer).

// msgDef is one catalogued message type.
type msgDef struct {
	name string // type name as described on the wire
	doc  string // one line
	body []item // the body, in wire order
	// decode, when set, decodes the body instead of body (which then only
	// declares the fields): for bodies a layout cannot say. It adds the
	// fields and returns the summary text after the sender; on a body it
	// cannot decode it returns ok false having added no field (the record
	// then carries data, as hex) after warning why.
	decode func(c *dissect.Ctx, b []byte) (sum []byte, ok bool)
	// exchange, pose: as in dissect.TypeDecl.
	exchange dissect.Exchange
	pose     *dissect.Pose
}

// op is what an item reads from the body.
type op uint8

const (
	opI32   op = iota // int32, a KindInt field
	opU32             // uint32, a KindUint field
	opU8              // one byte, a KindUint field
	opI8              // one signed byte, a KindInt field
	opI16             // int16, a KindInt field
	opU16             // uint16, a KindUint field
	opF32             // float32, a KindFloat32 field
	opF64             // float64, a KindFloat field
	opVec3            // three float64: a KindArray [x, y, z]
	opQuat            // four float64 x, y, z, w: a KindObject
	opText            // up to n bytes holding NUL-terminated text: a KindString of the text before the NUL
	opCStr            // text up to and including a NUL: a KindString (the NUL is not kept)
	opEnum            // uint32 naming one of names: a KindString (an unknown value: its number as text, with a warning)
	opArray           // count values of elem, count from the earlier integer item named count (or n when count is ""): a KindArray
	opRest            // the rest of the body: KindBytes
	// opStale is n bytes a mainline sender sends without having written
	// them (its length counts a struct's padding, or a buffer larger than
	// what it filled): read when present, no field. A body may stop before
	// or inside them.
	opStale
)

// item is one value of a body layout.
type item struct {
	name  string
	op    op
	n     int      // opText: buffer size; opArray: fixed length when count is ""
	elem  op       // opArray: the items (a scalar op, opVec3 or opQuat)
	count string   // opArray: the item holding the count
	names []string // opEnum: names of 0, 1, ...
	unit  string
	doc   string
	role  dissect.Role
	// decl, when set, is the item's declaration (for the items of a body
	// a decode func reads, whose shape no op says).
	decl *dissect.FieldDecl
}

// Constructors of items, for readable tables.
func i32f(name, doc string) item       { return item{name: name, op: opI32, doc: doc} }
func u32f(name, doc string) item       { return item{name: name, op: opU32, doc: doc} }
func f64f(name, unit, doc string) item { return item{name: name, op: opF64, unit: unit, doc: doc} }
func f32f(name, unit, doc string) item { return item{name: name, op: opF32, unit: unit, doc: doc} }
func vec3f(name, unit, doc string) item {
	return item{name: name, op: opVec3, unit: unit, doc: doc}
}
func quatf(name, doc string) item { return item{name: name, op: opQuat, doc: doc} }
func textf(name string, size int, doc string) item {
	return item{name: name, op: opText, n: size, doc: doc}
}
func cstrf(name, doc string) item { return item{name: name, op: opCStr, doc: doc} }
func enumf(name, doc string, names ...string) item {
	return item{name: name, op: opEnum, names: names, doc: doc}
}

// arrayf is an array of elem whose length is the earlier integer item named
// count.
func arrayf(name string, elem op, count, unit, doc string) item {
	return item{name: name, op: opArray, elem: elem, count: count, unit: unit, doc: doc}
}

// fixedf is an array of n values of elem.
func fixedf(name string, elem op, n int, unit, doc string) item {
	return item{name: name, op: opArray, elem: elem, n: n, unit: unit, doc: doc}
}
func restf(name, doc string) item { return item{name: name, op: opRest, doc: doc} }

// stalef is n bytes of the sender's stale memory, at the end of a body
// (opStale): they declare no field.
func stalef(n int) item { return item{op: opStale, n: n} }

// size is the wire size of a fixed-size op (0 for the others).
func (o op) size() int {
	switch o {
	case opU8, opI8:
		return 1
	case opI16, opU16:
		return 2
	case opI32, opU32, opF32, opEnum:
		return 4
	case opF64:
		return 8
	case opVec3:
		return 24
	case opQuat:
		return 32
	}
	return 0
}

// kind is the value kind of a scalar op.
func (o op) kind() dissect.Kind {
	switch o {
	case opI32, opI8, opI16:
		return dissect.KindInt
	case opU32, opU8, opU16:
		return dissect.KindUint
	case opF32:
		return dissect.KindFloat32
	case opF64:
		return dissect.KindFloat
	case opVec3, opArray:
		return dissect.KindArray
	case opQuat:
		return dissect.KindObject
	case opRest:
		return dissect.KindBytes
	}
	return dissect.KindString
}

// fieldDecl declares the item, with doc and unit; every value of an item
// of a decoded body is present, so it is required.
func (it item) fieldDecl() dissect.FieldDecl {
	if it.decl != nil {
		return *it.decl
	}
	f := dissect.FieldDecl{Name: it.name, Kind: it.op.kind(), Unit: it.unit, Doc: it.doc, Role: it.role}
	switch it.op {
	case opVec3:
		f.Elem = &dissect.FieldDecl{Kind: dissect.KindFloat}
	case opQuat:
		f.Fields = quatDecls(it.doc)
	case opArray:
		e := item{op: it.elem, unit: it.unit, doc: it.doc}.fieldDecl()
		e.Name, e.Unit, e.Doc = "", "", ""
		f.Elem = &e
	}
	return f
}

func quatDecls(doc string) []dissect.FieldDecl {
	q := make([]dissect.FieldDecl, 4)
	for i, k := range [4]string{"x", "y", "z", "w"} {
		q[i] = dissect.FieldDecl{Name: k, Kind: dissect.KindFloat, Required: true, Doc: doc + ", " + k}
	}
	return q
}

// decl declares the type: the header, the body's items, then data for a
// body that cannot be decoded.
func (d *msgDef) decl() dissect.TypeDecl {
	body := make([]dissect.FieldDecl, 0, len(d.body))
	for _, it := range d.body {
		if it.op != opStale {
			body = append(body, it.fieldDecl())
		}
	}
	t := app(d.name, d.doc, body...)
	t.Exchange, t.Pose = d.exchange, d.pose
	if d.exchange.Role == dissect.Reply && d.exchange.Answers != "" {
		t.Fields = append(t.Fields, exchangeLatency(d.exchange.Answers))
	}
	return t
}

// families lists the catalogue's definitions, a family (one mainline
// class) per file.
func families() [][]msgDef {
	return [][]msgDef{
		baseDefs(), trackerDefs(), poserDefs(), analogOutputDefs(), buttonDefs(),
		imagerDefs(), forceDefs(), soundDefs(), auxLoggerDefs(),
	}
}

// catalogue maps each catalogued type name to its definition.
type catalogue map[string]*msgDef

// newCatalogue gathers the definitions of every family.
func newCatalogue() catalogue {
	m := catalogue{}
	for _, family := range families() {
		for i := range family {
			m[family[i].name] = &family[i]
		}
	}
	return m
}

// catalogued is built once; it is never written after.
var catalogued = newCatalogue()

// catalogDecls declares every catalogued type, in the order of the
// families.
func catalogDecls() []dissect.TypeDecl {
	var ts []dissect.TypeDecl
	for _, family := range families() {
		for i := range family {
			ts = append(ts, family[i].decl())
		}
	}
	return ts
}

// catalogue decodes a body of a catalogued type into c.Rec, then keeps a
// request or times a reply (roundtrip.go).
func (p *parser) catalogue(c *dissect.Ctx, body []byte, d *msgDef, sender string, named bool) {
	defer p.exchangeRTT(c, d, sender, named)
	r := c.Rec
	mark := len(r.Fields)
	if d.decode != nil {
		s, ok := d.decode(c, body)
		if !ok {
			r.Fields = r.Fields[:mark]
			p.raw(c, body, d.name, -1)
			return
		}
		p.summary(c, func(sum []byte) []byte { return append(sum, s...) })
		return
	}
	off, ok := p.layout(c, body, d)
	if !ok {
		r.Fields = r.Fields[:mark]
		p.raw(c, body, d.name, -1)
		return
	}
	long(c, body, off, d.name)
	if c.Decode {
		p.summary(c, func(s []byte) []byte { return appendSummary(s, r.Fields[mark:]) })
	}
}

// layout reads d.body from body, adding the fields when c.Decode. It
// returns how many bytes it read, or false after warning about the first
// item the body cannot hold.
func (p *parser) layout(c *dissect.Ctx, body []byte, d *msgDef) (int, bool) {
	r := c.Rec
	off := 0
	ints := p.ints[:0] // values of the integer items so far, for counts
	defer func() { p.ints = ints[:0] }()
	for _, it := range d.body {
		need := it.op.size()
		count := -1
		switch it.op {
		case opText:
			// Mainline reads the text up to its NUL (vrpn_unbuffer with a
			// negative length): a body may stop after the NUL.
			need = min(it.n, len(body)-off)
			if need < it.n && indexNUL(body[off:off+need]) < 0 {
				r.Warnf("body of %d bytes too short for %s: %s at offset %d has no NUL", len(body), d.name, it.name, off)
				return 0, false
			}
		case opArray:
			count = it.n
			if it.count != "" {
				count = -1
				for _, v := range ints {
					if v.name == it.count {
						count = int(min(max(v.v, -1), math.MaxInt32))
					}
				}
				if count < 0 {
					r.Warnf("%s: count %s of %s at offset %d is negative", d.name, it.count, it.name, off)
					return 0, false
				}
			}
			need = count * it.elem.size()
		case opCStr:
			n := indexNUL(body[off:])
			if n < 0 {
				r.Warnf("%s: %s at offset %d has no terminating NUL", d.name, it.name, off)
				return 0, false
			}
			need = n + 1
		case opRest:
			need = len(body) - off
		case opStale:
			off += min(it.n, len(body)-off)
			continue
		}
		if len(body)-off < need {
			r.Warnf("body of %d bytes too short for %s: %s at offset %d needs %d bytes", len(body), d.name, it.name, off, need)
			return 0, false
		}
		b := body[off : off+need]
		off += need
		if v, ok := intValue(it.op, b); ok {
			ints = append(ints, namedInt{it.name, v})
		}
		// Warnings first: a run without Decode warns the same.
		switch it.op {
		case opText:
			if indexNUL(b) < 0 {
				r.Warnf("%s: %s at offset %d fills its %d bytes with no NUL", d.name, it.name, off-need, need)
			}
		case opEnum:
			if v := be.Uint32(b); int64(v) >= int64(len(it.names)) {
				r.Warnf("%s: %s %d at offset %d is not one mainline names", d.name, it.name, v, off-need)
			}
		}
		if !c.Decode {
			continue
		}
		switch it.op {
		case opText, opCStr:
			if n := indexNUL(b); n >= 0 {
				b = b[:n]
			}
			r.Add(it.name, dissect.Str(string(b)))
		case opEnum:
			v := be.Uint32(b)
			if int64(v) < int64(len(it.names)) {
				r.Add(it.name, dissect.Str(it.names[v]))
			} else {
				r.Add(it.name, dissect.Str(strconv.FormatUint(uint64(v), 10)))
			}
		case opRest:
			r.Add(it.name, dissect.Bytes(b))
		case opArray:
			items := r.Alloc(count)
			w := it.elem.size()
			for i := range items {
				items[i].Value = scalar(r, it.elem, b[i*w:])
			}
			r.Add(it.name, dissect.Array(items))
		default:
			r.Add(it.name, scalar(r, it.op, b))
		}
	}
	return off, true
}

// namedInt is the value of an integer item, for later counts.
type namedInt struct {
	name string
	v    int64
}

// intValue is the value of an integer op read from b.
func intValue(o op, b []byte) (int64, bool) {
	switch o {
	case opI32:
		return int64(i32(b)), true
	case opU32:
		return int64(be.Uint32(b)), true
	case opU8:
		return int64(b[0]), true
	case opI8:
		return int64(int8(b[0])), true
	case opI16:
		return int64(int16(be.Uint16(b))), true
	case opU16:
		return int64(be.Uint16(b)), true
	}
	return 0, false
}

// scalar is the value of a fixed-size op read from b (opVec3 and opQuat
// included).
func scalar(r *dissect.Record, o op, b []byte) dissect.Value {
	if v, ok := intValue(o, b); ok {
		if o.kind() == dissect.KindUint {
			return dissect.Uint(uint64(v))
		}
		return dissect.Int(v)
	}
	switch o {
	case opF32:
		return dissect.Float32(math.Float32frombits(be.Uint32(b)))
	case opF64:
		return dissect.Float(f64(b))
	case opVec3:
		v := r.Alloc(3)
		for i := range v {
			v[i].Value = dissect.Float(f64(b[8*i:]))
		}
		return dissect.Array(v)
	case opQuat:
		q := r.Alloc(4)
		for i, k := range [4]string{"x", "y", "z", "w"} {
			q[i] = dissect.Field{Key: k, Value: dissect.Float(f64(b[8*i:]))}
		}
		return dissect.Object(q)
	}
	return dissect.Value{}
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// summaryText is how many bytes of a text a summary shows.
const summaryText = 60

// appendSummary writes " key=value" for each field: numbers in full,
// arrays as appendItems does, text quoted and cut, bytes as their count.
func appendSummary(s []byte, fs []dissect.Field) []byte {
	for _, f := range fs {
		s = append(s, ' ')
		s = append(s, f.Key...)
		s = append(s, '=')
		s = appendValue(s, f.Value)
	}
	return s
}

func appendValue(s []byte, v dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindInt:
		return strconv.AppendInt(s, v.Int(), 10)
	case dissect.KindUint:
		return strconv.AppendUint(s, v.Uint(), 10)
	case dissect.KindFloat, dissect.KindFloat32:
		return appendFloat(s, v.Float())
	case dissect.KindString:
		t := v.Str()
		if len(t) > summaryText {
			return append(strconv.AppendQuote(s, t[:summaryText]), "…"...)
		}
		return strconv.AppendQuote(s, t)
	case dissect.KindBytes:
		s = strconv.AppendInt(s, int64(len(v.Str())), 10)
		return append(s, " bytes"...)
	case dissect.KindArray:
		items := v.Items()
		if len(items) > 0 && items[0].Value.Kind() != dissect.KindInt && items[0].Value.Kind() != dissect.KindFloat {
			s = append(s, '[')
			for i, it := range items {
				if i == summaryItems {
					return append(s, " …]"...)
				}
				if i > 0 {
					s = append(s, ' ')
				}
				s = appendValue(s, it.Value)
			}
			return append(s, ']')
		}
		return appendItems(s, items)
	case dissect.KindObject:
		s = append(s, '(')
		for i, f := range v.Items() {
			if i > 0 {
				s = append(s, ',')
			}
			s = appendValue(s, f.Value)
		}
		return append(s, ')')
	}
	return s
}
