package vrpn

import (
	"strconv"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// The catalogue: mainline's application message types beyond the ones
// decode.go handles by hand, each body described once on the shared wire
// vocabulary (dissect/layout). One description gives both the type's
// declaration and its decoding, so the two cannot disagree. Bodies are
// packed big-endian with no padding between values (mainline's
// vrpn_buffer). VRPN's ways stay small Go hooks: stale bytes after a
// body, a text buffer cut after its NUL, vertex triples, and the bodies
// the vocabulary cannot say (decode).

// msgDef is one catalogued message type.
type msgDef struct {
	name string         // type name as described on the wire
	doc  string         // one line
	body []layout.Field // the body, in wire order; every field has an ID
	// stale is how many bytes a mainline sender sends after the body
	// without having written them (its length counts a struct's padding,
	// or a buffer larger than what it filled): read when present, no
	// field. A body may stop before or inside them.
	stale int
	// triples names a float64 array of the body recorded in threes, an
	// array of [x, y, z] (a vertex list); the layout reads it flat.
	triples string
	// decode, when set, decodes the body instead of the layout (which then
	// only declares the fields): for bodies the vocabulary cannot say. It
	// adds the fields and returns the summary text after the sender; on a
	// body it cannot decode it returns ok false having added no field (the
	// record then carries data, as hex) after warning why.
	decode func(c *dissect.Ctx, b []byte) (sum []byte, ok bool)
	// decls, when set, declares the fields a decode func adds that no
	// layout describes (body is then empty).
	decls []dissect.FieldDecl
	// exchange, pose: as in dissect.TypeDecl.
	exchange dissect.Exchange
	pose     *dissect.Pose

	typ   int   // the body's type in catalogPlan
	textN int   // the size of a text buffer that ends the body (textf), 0: none
	texts []int // the indexes of the body's text buffers
	// fixed is the size of a body of fixed size that has nothing to warn
	// about once whole (numbers only), 0 for the others: a types-only run
	// need not read it.
	fixed int
}

// Constructors of fields, for readable tables. Integers and floats are
// big-endian (the schema's order).
func i32f(id, doc string) layout.Field { return layout.Field{ID: id, Type: "s4", Doc: doc} }
func u32f(id, doc string) layout.Field { return layout.Field{ID: id, Type: "u4", Doc: doc} }
func u16f(id, doc string) layout.Field { return layout.Field{ID: id, Type: "u2", Doc: doc} }
func f64f(id, unit, doc string) layout.Field {
	return layout.Field{ID: id, Type: "f8", Unit: unit, Doc: doc}
}
func f32f(id, unit, doc string) layout.Field {
	return layout.Field{ID: id, Type: "f4", Unit: unit, Doc: doc}
}

// vec3f is three float64: [x, y, z].
func vec3f(id, unit, doc string) layout.Field { return fixedf(id, "f8", 3, unit, doc) }

// quatf is a quaternion of four float64: an object x, y, z, w.
func quatf(id, doc string) layout.Field { return layout.Field{ID: id, Type: quatType, Doc: doc} }

// textf is a buffer of size bytes holding text up to a NUL: the text
// before the NUL is kept. Mainline reads it up to the NUL, so a body may
// stop after the NUL when the buffer ends the body.
func textf(id string, size int, doc string) layout.Field {
	nul := byte(0)
	return layout.Field{ID: id, Type: "str", Size: layout.Num(int64(size)), Terminator: &nul, Doc: doc}
}

// cstrf is text up to and including a NUL (the NUL is not kept).
func cstrf(id, doc string) layout.Field { return layout.Field{ID: id, Type: "strz", Doc: doc} }

// enumf is a uint32 named by one of catalogEnums.
func enumf(id, doc, enum string) layout.Field {
	return layout.Field{ID: id, Type: "u4", Enum: enum, Doc: doc}
}

// arrayf is an array of typ whose length is the earlier integer field
// named count.
func arrayf(id, typ, count, unit, doc string) layout.Field {
	return layout.Field{ID: id, Type: typ, Repeat: layout.RepeatExpr, RepeatExpr: layout.FieldRef(count), Unit: unit, Doc: doc}
}

// fixedf is an array of n values of typ.
func fixedf(id, typ string, n int, unit, doc string) layout.Field {
	return layout.Field{ID: id, Type: typ, Repeat: layout.RepeatExpr, RepeatExpr: layout.Num(int64(n)), Unit: unit, Doc: doc}
}

// quatType is the layout type of a quaternion.
const quatType = "quat"

// catalogEnums name the values of the catalogue's enums, as mainline's
// headers do.
var catalogEnums = []layout.Enum{
	{Name: "text_severity", Values: enumValues(0, "normal", "warning", "error")},
	{Name: "button_mode", Values: []layout.EnumValue{{Value: buttonMomentary, Name: "momentary"}, {Value: buttonToggleOff, Name: "toggle_off"}, {Value: buttonToggleOn, Name: "toggle_on"}}},
	{Name: "trimesh_type", Values: enumValues(0, "ghost", "hcollide")},
	{Name: "force_error", Values: enumValues(0, "value_out_of_range", "duty_cycle_error", "force_error", "misc_error", "ok")},
	{Name: "constraint_mode", Values: enumValues(0, "none", "point", "line", "plane")},
	{Name: "imager_value_type", Values: []layout.EnumValue{{Value: 0, Name: "unknown"}, {Value: 1, Name: "uint8"}, {Value: 4, Name: "uint16"}, {Value: 5, Name: "uint12in16"}, {Value: 6, Name: "float32"}}},
	{Name: "imager_compression", Values: enumValues(0, "none")},
}

// enumValues names the values from, from+1, ...
func enumValues(from int64, names ...string) []layout.EnumValue {
	vs := make([]layout.EnumValue, len(names))
	for i, n := range names {
		vs[i] = layout.EnumValue{Value: from + int64(i), Name: n}
	}
	return vs
}

// enumName returns the name enum gives v (false: none).
func enumName(enum string, v int64) (string, bool) {
	for _, e := range catalogEnums {
		if e.Name != enum {
			continue
		}
		for _, ev := range e.Values {
			if ev.Value == v {
				return ev.Name, true
			}
		}
	}
	return "", false
}

// layoutName is the layout type name of a VRPN type name: lower case,
// every other character than a letter or digit an underscore.
func layoutName(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
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

// The catalogue, built once and never written after: the plan of every
// body, the definitions by name and in the order of the families.
var catalogPlan, catalogued, catalogOrder = newCatalogue()

// newCatalogue compiles the bodies of every family into one plan.
func newCatalogue() (plan *layout.Plan, m catalogue, order []*msgDef) {
	var err error
	s := &layout.Schema{Endian: layout.BigEndian, Enums: catalogEnums, Types: []layout.Type{{
		Name: quatType, Doc: "a quaternion x, y, z, w",
		Seq: []layout.Field{{ID: "x", Type: "f8"}, {ID: "y", Type: "f8"}, {ID: "z", Type: "f8"}, {ID: "w", Type: "f8"}},
	}, imagerChannelType()}}
	m = catalogue{}
	for _, family := range families() {
		for i := range family {
			d := &family[i]
			d.typ = len(s.Types)
			for k := range d.body {
				if f := &d.body[k]; f.Terminator != nil && f.Size.Set {
					d.texts = append(d.texts, k)
					if k == len(d.body)-1 {
						d.textN = int(f.Size.N)
					}
				}
			}
			s.Types = append(s.Types, layout.Type{Name: layoutName(d.name), Doc: d.doc, Seq: d.body})
			m[d.name] = d
			order = append(order, d)
		}
	}
	plan, err = layout.Compile(s, layout.Limits{})
	if err != nil {
		panic("vrpn catalogue: " + err.Error()) // the tables above are fixed
	}
	for _, d := range order {
		d.setFixed(plan)
	}
	return plan, m, order
}

// setFixed sets d.fixed from plan when every field of the body is a
// number, or a fixed count of numbers, or a quaternion.
func (d *msgDef) setFixed(plan *layout.Plan) {
	if len(d.body) == 0 || d.decode != nil {
		return
	}
	for _, f := range d.body {
		switch f.Type {
		case "s2", "u2", "s4", "u4", "f4", "f8", quatType:
		default:
			return
		}
		if f.Enum != "" || f.Repeat != layout.Once && (f.Repeat != layout.RepeatExpr || f.RepeatExpr.Field != "") {
			return
		}
	}
	d.fixed = int(plan.MinSize(d.typ))
}

// decl declares the type: the header, the body's fields, then data for a
// body that cannot be decoded.
func (d *msgDef) decl() dissect.TypeDecl {
	body := d.decls
	if body == nil {
		body = d.bodyDecls()
	}
	t := app(d.name, d.doc, body...)
	t.Exchange, t.Pose = d.exchange, d.pose
	if d.exchange.Role == dissect.Reply && d.exchange.Answers != "" {
		t.Fields = append(t.Fields, exchangeLatency(d.exchange.Answers))
	}
	return t
}

// bodyDecls are the layout's declarations of the body, but for VRPN's
// ways: a field is not required (a malformed body is data instead), a
// quaternion's parts take its doc, triples are arrays of [x, y, z].
func (d *msgDef) bodyDecls() []dissect.FieldDecl {
	fs := catalogPlan.Fields(d.typ)
	for i := range fs {
		f := &fs[i]
		f.Required = false
		if f.Elem != nil {
			f.Elem.Required = false
		}
		if d.body[i].Type == quatType {
			for k := range f.Fields {
				f.Fields[k].Doc = f.Doc + ", " + f.Fields[k].Name
			}
		}
		if f.Name == d.triples {
			f.Elem = &dissect.FieldDecl{Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat}}
		}
	}
	return fs
}

// catalogDecls declares every catalogued type, in the order of the
// families.
func catalogDecls() []dissect.TypeDecl {
	ts := make([]dissect.TypeDecl, len(catalogOrder))
	for i, d := range catalogOrder {
		ts[i] = d.decl()
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
	if !c.Decode && d.fixed > 0 && len(body) >= d.fixed {
		long(c, body, d.fixed+min(d.stale, len(body)-d.fixed), d.name)
		return
	}
	if p.cat == nil {
		p.cat = catalogPlan.NewDecoder()
	}
	n, err := p.cat.Decode(r, d.typ, p.wholeText(body, d))
	if err != nil {
		r.Fields = r.Fields[:mark]
		if e, ok := err.(*layout.DecodeError); ok && e.Short {
			r.Warnf("body of %d bytes too short for %s: %v", len(body), d.name, err)
		} else {
			r.Warnf("%s: %v", d.name, err)
		}
		p.raw(c, body, d.name, -1)
		return
	}
	n = min(n, len(body))
	n += min(d.stale, len(body)-n)
	fs := r.Fields[mark:]
	for _, k := range d.texts {
		if f := &d.body[k]; int64(len(fs[k].Value.Str())) == f.Size.N {
			r.Warnf("%s: %s fills its %d bytes with no NUL", d.name, f.ID, f.Size.N)
		}
	}
	long(c, body, n, d.name)
	if !c.Decode {
		r.Fields = r.Fields[:mark]
		return
	}
	if d.triples != "" {
		group3(r, fs, d.triples)
	}
	p.summary(c, func(s []byte) []byte { return appendSummary(s, fs) })
}

// wholeText returns body, or, when it stops inside the text buffer that
// ends d's body after the text's NUL, body with zeros to the buffer's end
// (mainline reads the text up to its NUL).
func (p *parser) wholeText(body []byte, d *msgDef) []byte {
	if d.textN == 0 {
		return body
	}
	size := int(catalogPlan.MinSize(d.typ))
	at := size - d.textN
	if len(body) >= size || len(body) <= at || indexNUL(body[at:]) < 0 {
		return body
	}
	p.pad = append(append(p.pad[:0], body...), make([]byte, size-len(body))...)
	return p.pad
}

// group3 makes the flat array field key of fs an array of [x, y, z].
func group3(r *dissect.Record, fs []dissect.Field, key string) {
	for i := range fs {
		if fs[i].Key != key {
			continue
		}
		flat := fs[i].Value.Items()
		rows := r.Alloc(len(flat) / 3)
		for k := range rows {
			rows[k].Value = dissect.Array(flat[3*k : 3*k+3])
		}
		fs[i].Value = dissect.Array(rows)
	}
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
