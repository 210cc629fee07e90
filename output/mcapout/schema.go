package mcapout

import (
	"math"
	"slices"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
)

// A node is the JSON Schema of one value, in the subset that Foxglove and
// Lichtblick turn into plottable datatypes: every property has a "type" of
// boolean, integer, number, string, object (with properties) or array
// (whose items are one of the others, never an array).
type node struct {
	typ   string // "boolean", "integer", "number", "string", "array", "object"
	item  *node  // array
	keys  []string
	props map[string]*node // object
}

// derive returns the schema of v, or false when v has none in the subset:
// null, an empty array (its items' type is unknown), an array of arrays,
// an array whose items do not share one schema.
func derive(v *dissect.Value) (*node, bool) {
	switch v.Kind() {
	case dissect.KindInt, dissect.KindUint:
		return &node{typ: "integer"}, true
	case dissect.KindFloat, dissect.KindFloat32:
		return &node{typ: "number"}, true
	case dissect.KindBool:
		return &node{typ: "boolean"}, true
	case dissect.KindString, dissect.KindBytes, dissect.KindTime:
		return &node{typ: "string"}, true
	case dissect.KindArray:
		items := v.Items()
		if len(items) == 0 || items[0].Value.Kind() == dissect.KindArray {
			return nil, false
		}
		it, ok := derive(&items[0].Value)
		if !ok {
			return nil, false
		}
		n := &node{typ: "array", item: it}
		for i := 1; i < len(items); i++ {
			if !n.item.fits(&items[i].Value) {
				return nil, false
			}
		}
		return n, true
	case dissect.KindObject:
		n := &node{typ: "object", props: map[string]*node{}}
		for _, f := range v.Items() {
			if _, dup := n.props[f.Key]; dup {
				continue
			}
			if p, ok := derive(&f.Value); ok {
				n.keys = append(n.keys, f.Key)
				n.props[f.Key] = p
			}
		}
		return n, true
	}
	return nil, false
}

// fits says whether v validates against n and is written as n says: a
// float must be finite (JSON has no NaN), an int fits "number" too, every
// key of an object must have a property.
func (n *node) fits(v *dissect.Value) bool {
	switch v.Kind() {
	case dissect.KindInt, dissect.KindUint:
		return n.typ == "integer" || n.typ == "number"
	case dissect.KindFloat, dissect.KindFloat32:
		f := v.Float()
		return n.typ == "number" && !math.IsNaN(f) && !math.IsInf(f, 0)
	case dissect.KindBool:
		return n.typ == "boolean"
	case dissect.KindString, dissect.KindBytes, dissect.KindTime:
		return n.typ == "string"
	case dissect.KindArray:
		if n.typ != "array" {
			return false
		}
		for i := range v.Items() {
			if !n.item.fits(&v.Items()[i].Value) {
				return false
			}
		}
		return true
	case dissect.KindObject:
		if n.typ != "object" {
			return false
		}
		seen := 0
		for i, f := range v.Items() {
			p, ok := n.props[f.Key]
			if !ok || !p.fits(&v.Items()[i].Value) {
				return false
			}
			seen++
		}
		return seen == len(v.Items())
	}
	return false
}

// appendJSON appends n as a JSON Schema.
func (n *node) appendJSON(b []byte) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, n.typ...)
	b = append(b, '"')
	switch n.typ {
	case "array":
		b = append(b, `,"items":`...)
		b = n.item.appendJSON(b)
	case "object":
		b = append(b, `,"properties":{`...)
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = output.AppendString(b, k)
			b = append(b, ':')
			b = n.props[k].appendJSON(b)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// recordSchema is the schema of a record channel: the keys of a JSON Lines
// record (docs/output.md) with "fields" typed from the first record, plus
// extra_json for the fields that do not fit.
func recordSchema(name string, fields *node) []byte {
	b := []byte(`{"title":`)
	b = output.AppendString(b, name)
	b = append(b, `,"description":"A dissect record as in -o json; fields that do not fit this schema are in extra_json.","type":"object","properties":{`...)
	for _, k := range []string{"time", "proto", "transport", "src", "dst", "type"} {
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":{"type":"string"},`...)
	}
	for _, k := range []string{"stream", "offset", "length"} {
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":{"type":"integer"},`...)
	}
	b = append(b, `"warnings":{"type":"array","items":{"type":"string"}},`...)
	b = append(b, `"extra_json":{"type":"string","description":"a JSON object of the fields that do not fit"},`...)
	b = append(b, `"fields":`...)
	b = fields.appendJSON(b)
	return append(b, "}}"...)
}

// fieldsNode is the schema of a record channel's fields: the documented
// fields of its record type (infos), plus the fields of its first record
// that are not documented (a HandControl payload's keys, say); fields with
// no schema in the subset are left out, so their values always go to
// extra_json.
func fieldsNode(infos []dissect.FieldInfo, typ string, fs dissect.Fields) *node {
	n := documented(infos, typ)
	v := dissect.Object(fs)
	if first, ok := derive(&v); ok {
		n.merge(first)
	}
	return n
}

// documented returns the schema of a record type's fields as its
// protocol documents them (dissect.FieldInfo): paths such as "quat.w",
// "pos[]" or "values[].semantics" become properties, "array of T" an
// array; what the subset cannot hold (arrays of arrays, "payload.*" keys
// that depend on a schema) is left out.
func documented(infos []dissect.FieldInfo, typ string) *node {
	root := &node{typ: "object", props: map[string]*node{}}
	for _, f := range infos {
		if len(f.Types) > 0 && !slices.Contains(f.Types, typ) {
			continue
		}
		if leaf, ok := typeNode(f.Type); ok {
			root.place(strings.Split(f.Name, "."), leaf)
		}
	}
	return root
}

// typeNode is the schema of a FieldInfo.Type.
func typeNode(t string) (*node, bool) {
	switch t {
	case "int", "uint":
		return &node{typ: "integer"}, true
	case "float":
		return &node{typ: "number"}, true
	case "bool":
		return &node{typ: "boolean"}, true
	case "string", "bytes", "time":
		return &node{typ: "string"}, true
	case "object":
		return &node{typ: "object", props: map[string]*node{}}, true
	}
	if it, ok := strings.CutPrefix(t, "array of "); ok && !strings.HasPrefix(it, "array") {
		if n, ok := typeNode(it); ok {
			return &node{typ: "array", item: n}, true
		}
	}
	return nil, false
}

// place puts leaf at path below the object n, making the objects and
// arrays of objects on the way; a path it cannot follow is dropped.
func (n *node) place(path []string, leaf *node) {
	key, depth := path[0], 0
	for strings.HasSuffix(key, "[]") {
		key, depth = strings.TrimSuffix(key, "[]"), depth+1
	}
	if key == "*" || depth > 1 || n.typ != "object" {
		return
	}
	if len(path) == 1 {
		if depth == 1 && leaf.typ != "array" {
			return
		}
		if _, ok := n.props[key]; !ok {
			n.add(key, leaf)
		}
		return
	}
	p, ok := n.props[key]
	if !ok {
		p = &node{typ: "object", props: map[string]*node{}}
		if depth == 1 {
			p = &node{typ: "array", item: p}
		}
		n.add(key, p)
	}
	if depth == 1 {
		if p.typ != "array" {
			return
		}
		p = p.item
	}
	p.place(path[1:], leaf)
}

func (n *node) add(key string, p *node) {
	n.keys = append(n.keys, key)
	n.props[key] = p
}

// merge adds to the object n the properties of the object m that n lacks,
// recursively; where both have a key, n's schema is kept.
func (n *node) merge(m *node) {
	if n.typ == "array" && m.typ == "array" {
		n.item.merge(m.item)
		return
	}
	if n.typ != "object" || m.typ != "object" {
		return
	}
	for _, k := range m.keys {
		if p, ok := n.props[k]; ok {
			p.merge(m.props[k])
		} else {
			n.add(k, m.props[k])
		}
	}
}
