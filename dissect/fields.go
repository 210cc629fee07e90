package dissect

import (
	"slices"
	"strings"
)

// FieldInfo is one field path of a protocol's declared records, flattened
// for display filter names and `dissect protocols --fields`.
type FieldInfo struct {
	// Name is the field's path below the protocol, as in JSON: "x",
	// "quat.w", "pos[]" (an array; pos[0] its first item),
	// "values[].semantics".
	Name string
	// Type is the declared kind: "int", "uint", "float32", "float64",
	// "bool", "string", "bytes" (hex), "time", "object", or "array of T".
	Type string
	// Types lists the record types (tables, for variants) that carry it.
	Types []string
	Unit  string
	Role  Role   // the first role a declaration gives the path
	Doc   string // of that declaration, else of the first
}

// FieldInfos flattens the fields of types into paths, in order of first
// declaration; a path declared by several types lists them all.
func FieldInfos(types []TypeDecl) []FieldInfo {
	var out []FieldInfo
	at := map[string]int{}
	var walk func(table, prefix string, fs []FieldDecl)
	add := func(table, path string, d *FieldDecl) {
		i, ok := at[path]
		if !ok {
			i = len(out)
			at[path] = i
			out = append(out, FieldInfo{Name: path, Type: kindText(d), Unit: d.Unit, Role: d.Role, Doc: d.Doc})
		}
		if out[i].Role == RoleNone && d.Role != RoleNone {
			// the first declaration that gives the path a role says
			// what it means (VRPN's sender: not the system messages')
			out[i].Role, out[i].Doc = d.Role, d.Doc
		}
		if !slices.Contains(out[i].Types, table) {
			out[i].Types = append(out[i].Types, table)
		}
	}
	walk = func(table, prefix string, fs []FieldDecl) {
		for i := range fs {
			d := &fs[i]
			path := prefix + d.Name
			add(table, path, d)
			for d.Kind == KindArray && d.Elem != nil {
				d = d.Elem
				path += "[]"
				if d.Kind == KindArray {
					add(table, path, d)
				}
			}
			if d.Kind == KindObject {
				walk(table, path+".", d.Fields)
			}
		}
	}
	for i := range types {
		walk(types[i].Table(), "", types[i].Fields)
	}
	return out
}

// kindText is a field's kind as text: "float32", "array of array of float32".
func kindText(d *FieldDecl) string {
	if d.Kind == KindArray && d.Elem != nil {
		return "array of " + kindText(d.Elem)
	}
	return d.Kind.String()
}

// KnownField reports whether proto is the "proto" key of a registered
// protocol and, when field is not "", whether field names one of its
// declared fields. field is a key below the protocol ("x", "quat"; the
// filter compiler checks only the first key of a path); a longer path
// ("quat.w", "pos[0]", "payload.emg_status") is judged by its first key.
// Several protocols may share a proto key (neptune and neptune-wiki): a
// field of any of them is known.
func (r *Registry) KnownField(proto, field string) bool {
	p := r.byProto[proto]
	if proto == "" || p == nil {
		return false
	}
	if field == "" {
		return true
	}
	first := firstSegment(field)
	for _, t := range p.types {
		if t.Field(first) != nil {
			return true
		}
	}
	return false
}

// firstSegment returns the first key of a field path: what precedes the
// first '.' or '['.
func firstSegment(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}
