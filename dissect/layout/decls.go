package layout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
)

// Type returns the index of the named type, or -1.
func (p *Plan) Type(name string) int {
	if i, ok := p.byName[name]; ok {
		return i
	}
	return -1
}

// Name returns type t's name.
func (p *Plan) Name(t int) string { return p.types[t].name }

// Doc returns type t's one-line description.
func (p *Plan) Doc(t int) string { return p.types[t].doc }

// Fields returns the declarations of the fields type t records, in wire
// order: a new slice on each call.
func (p *Plan) Fields(t int) []dissect.FieldDecl {
	return cloneDecls(p.types[t].decls)
}

// MinSize returns the least bytes a value of type t takes.
func (p *Plan) MinSize(t int) int64 { return p.types[t].minSize }

// Recorded returns how many fields type t records (the length of
// [Plan.Fields]).
func (p *Plan) Recorded(t int) int { return p.types[t].nOut }

func cloneDecls(ds []dissect.FieldDecl) []dissect.FieldDecl {
	out := slices.Clone(ds)
	for i := range out {
		if out[i].Elem != nil {
			e := *out[i].Elem
			e.Fields = cloneDecls(e.Fields)
			out[i].Elem = &e
		}
		out[i].Fields = cloneDecls(out[i].Fields)
	}
	return out
}

// declsOf declares the recorded fields of type i (its nested types are
// declared already: see walk).
func (p *Plan) declsOf(i int) []dissect.FieldDecl {
	t := &p.types[i]
	out := make([]dissect.FieldDecl, 0, t.nOut)
	for k := range t.fields {
		f := &t.fields[k]
		if f.out < 0 {
			continue
		}
		d := p.itemDecl(f)
		if f.repeat != Once {
			item := d
			item.Name, item.Doc, item.Unit, item.Role, item.Required = "", "", "", dissect.RoleNone, true
			d = dissect.FieldDecl{Kind: dissect.KindArray, Elem: &item, Unit: d.Unit, Doc: d.Doc, Role: d.Role}
		}
		d.Name, d.Required = f.id, true
		out = append(out, d)
	}
	return out
}

// doc texts, kept with the compiled field
func (p *Plan) itemDecl(f *cfield) dissect.FieldDecl {
	d := dissect.FieldDecl{Doc: f.docText(), Unit: f.unit(), Role: f.role()}
	switch f.kind {
	case wUint, wBits:
		d.Kind = dissect.KindUint
	case wInt:
		d.Kind = dissect.KindInt
	case wFloat:
		d.Kind = dissect.KindFloat32
		if f.width == 8 {
			d.Kind = dissect.KindFloat
		}
	case wBytes:
		d.Kind = dissect.KindBytes
	case wStr:
		d.Kind = dissect.KindString
	case wType:
		d.Kind, d.Fields = dissect.KindObject, cloneDecls(p.types[f.sub].decls)
	case wSwitch:
		d.Kind = dissect.KindObject
		for _, sub := range f.subs() {
			for _, fd := range p.types[sub].decls {
				if have := findDecl(d.Fields, fd.Name); have != nil {
					if have.Kind != fd.Kind {
						have.Doc = "" // kinds differ by case: keep the first
					}
					continue
				}
				fd.Required = false // present in some cases only
				d.Fields = append(d.Fields, fd)
			}
		}
	}
	if f.scale != 0 {
		d.Kind = dissect.KindFloat
	}
	if f.enum != nil {
		d.Kind = dissect.KindString
	}
	if f.boolean {
		boolDecl(f, &d)
	}
	return d
}

func findDecl(ds []dissect.FieldDecl, name string) *dissect.FieldDecl {
	for i := range ds {
		if ds[i].Name == name {
			return &ds[i]
		}
	}
	return nil
}

// docText is the field's doc, with an enum's names appended.
func (f *cfield) docText() string {
	doc := f.doc
	if f.enum != nil && !f.boolean {
		keys := make([]int64, 0, len(f.enum))
		for k := range f.enum {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b strings.Builder
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%d)", f.enum[k], k)
		}
		if doc != "" {
			doc += "; "
		}
		doc += "one of " + b.String() + "; another value is written as its number"
	}
	return doc
}

func (f *cfield) unit() string       { return f.unitName }
func (f *cfield) role() dissect.Role { return f.roleOf }

// Slot returns the index of type t's integer field named id, for
// [Decoder.Raw], or -1.
func (p *Plan) Slot(t int, id string) int {
	for k := range p.types[t].fields {
		f := &p.types[t].fields[k]
		if f.id == id && f.isInt() {
			return k
		}
	}
	return -1
}
