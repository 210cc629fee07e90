package dissect

import (
	"fmt"
	"slices"
	"strings"
)

// A DeclError says where a record departs from its declaration.
type DeclError struct {
	Path string // "fields.pos[1]", "fields.payload.emg", "fields" for a key missing
	Msg  string
}

func (e *DeclError) Error() string { return e.Path + ": " + e.Msg }

// Check reports whether r's fields are as t declares them: every key
// declared, once; every value of its declared kind (nested arrays and
// objects too); every required key present; strings within an Enum; and,
// for a variant, the variant key holding its value. It returns the first
// departure.
func (t *TypeDecl) Check(r *Record) error {
	if t.Type != "*" && r.Type != t.Type {
		return &DeclError{"type", fmt.Sprintf("%q is not %q", r.Type, t.Type)}
	}
	if t.Variant != nil {
		v, ok := r.Fields.Get(t.Variant.Key)
		if !ok || v.Kind() != KindString || v.Str() != t.Variant.Value {
			return &DeclError{"fields." + t.Variant.Key, fmt.Sprintf("not the variant %q", t.Variant.Value)}
		}
	}
	return checkObject("fields", t.Fields, r.Fields)
}

func checkObject(path string, decl []FieldDecl, fs []Field) error {
	for i := range fs {
		f := &fs[i]
		d := findField(decl, f.Key)
		if d == nil {
			return &DeclError{path + "." + f.Key, "key not declared"}
		}
		for j := range i {
			if fs[j].Key == f.Key {
				return &DeclError{path + "." + f.Key, "key repeated"}
			}
		}
		if err := d.check(path+"."+f.Key, &f.Value); err != nil {
			return err
		}
	}
	for i := range decl {
		if decl[i].Required && !slices.ContainsFunc(fs, func(f Field) bool { return f.Key == decl[i].Name }) {
			return &DeclError{path + "." + decl[i].Name, "required key missing"}
		}
	}
	return nil
}

func (d *FieldDecl) check(path string, v *Value) error {
	if v.Kind() != d.Kind {
		return &DeclError{path, fmt.Sprintf("%s, declared %s", v.Kind(), d.Kind)}
	}
	switch d.Kind {
	case KindString:
		if len(d.Enum) > 0 && !slices.Contains(d.Enum, v.Str()) {
			return &DeclError{path, fmt.Sprintf("%q is not one of %s", v.Str(), strings.Join(d.Enum, ", "))}
		}
	case KindArray:
		if d.Elem == nil {
			return &DeclError{path, "array declared without its items"}
		}
		for i := range v.sub {
			if err := d.Elem.check(fmt.Sprintf("%s[%d]", path, i), &v.sub[i].Value); err != nil {
				return err
			}
		}
	case KindObject:
		return checkObject(path, d.Fields, v.sub)
	}
	return nil
}

var kindNames = [...]string{"null", "int", "uint", "float64", "float32", "bool", "string", "bytes", "time", "array", "object"}

// String returns the kind's name as declarations show it: "int",
// "float32", "array", ...
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Validate checks the declarations themselves: names given and unique,
// arrays with their items, objects with no items, variants complete, the
// fields that roles name declared. NewRegistry calls it.
func Validate(proto string, types []TypeDecl) error {
	seen := map[string]bool{}
	for i := range types {
		t := &types[i]
		name := t.Table()
		if t.Type == "" || seen[name] {
			return fmt.Errorf("dissect: %s declares type %q twice or unnamed", proto, name)
		}
		seen[name] = true
		if err := validateFields(proto+" "+name, t.Fields); err != nil {
			return err
		}
		if t.Variant != nil && t.Field(t.Variant.Key) == nil {
			return fmt.Errorf("dissect: %s %s: variant key %q not declared", proto, name, t.Variant.Key)
		}
		if t.Pose != nil {
			for _, f := range []string{t.Pose.Position, t.Pose.Orientation} {
				if f != "" && t.Field(f) == nil {
					return fmt.Errorf("dissect: %s %s: pose field %q not declared", proto, name, f)
				}
			}
			if t.Pose.Position == "" && (t.Field("x") == nil || t.Field("y") == nil || t.Field("z") == nil) {
				return fmt.Errorf("dissect: %s %s: pose without x, y, z", proto, name)
			}
		}
		if t.Polyline != "" && t.Field(t.Polyline) == nil {
			return fmt.Errorf("dissect: %s %s: polyline field %q not declared", proto, name, t.Polyline)
		}
	}
	for i := range types {
		t := &types[i]
		if t.Variant == nil {
			continue
		}
		for j := range types {
			if j != i && types[j].Type == t.Type && types[j].Variant == nil {
				return fmt.Errorf("dissect: %s %s: declared both with and without variants", proto, t.Type)
			}
		}
	}
	return nil
}

func validateFields(where string, fs []FieldDecl) error {
	for i := range fs {
		f := &fs[i]
		if f.Name == "" {
			return fmt.Errorf("dissect: %s: a field has no name", where)
		}
		if findField(fs[:i], f.Name) != nil {
			return fmt.Errorf("dissect: %s: field %q declared twice", where, f.Name)
		}
		if err := f.validate(where + " " + f.Name); err != nil {
			return err
		}
	}
	return nil
}

func (d *FieldDecl) validate(where string) error {
	switch d.Kind {
	case KindNull:
		return fmt.Errorf("dissect: %s: no kind", where)
	case KindArray:
		if d.Elem == nil {
			return fmt.Errorf("dissect: %s: array without its items", where)
		}
		return d.Elem.validate(where + "[]")
	case KindObject:
		return validateFields(where, d.Fields)
	}
	if d.Kind > KindObject {
		return fmt.Errorf("dissect: %s: unknown kind %d", where, d.Kind)
	}
	return nil
}
