package parquetout

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/parquet-go/parquet-go"
)

// plan is the Parquet schema of one declaration and the map from its
// declared fields to the schema's leaf columns, built once per
// declaration: writing a record then only matches its keys against the
// declared ones and appends values to known columns.
type plan struct {
	schema *parquet.Schema
	ncols  int
	file   *schema.GroupNode // the same schema, for the file writer (arrow.go)
	specs  []colSpec         // each leaf column's type and levels
	fields []node            // the declared top-level fields, in declaration order
	// The common columns' indexes.
	capture, time, transport, stream, src, dst int
	offset, length, warnings, extra            int
	rtype                                      int // record_type, or -1
	raw                                        int // raw (Options.Raw), or -1
}

// node is a declared field in the schema: where each of its values goes.
// Levels are Parquet's: def is the definition level of a present value,
// rep (arrays) the repetition level of its items.
type node struct {
	name   string
	kind   dissect.Kind
	col    int   // scalars and objects without keys: the column
	leaves []int // every column of the field, for its nulls
	def    int
	rep    int
	elem   *node  // arrays
	fields []node // objects, in declaration order
	// flat is set for a top-level field of a scalar kind: its values
	// go to its column at level def without more ado (scalar).
	flat bool
}

// newPlan returns the plan of d; nil d (a record no declaration matches)
// has the common columns only. typed adds the record_type column, for
// partitions that do not say the type (overflow, shortened names); raw
// the raw column, the record's bytes (-x: the "raw" of JSON).
func newPlan(d *dissect.TypeDecl, typed, raw bool) (*plan, error) {
	g := parquet.Group{
		"capture":    parquet.String(),
		"time":       timestamp(),
		"transport":  parquet.String(),
		"stream":     parquet.Int(64),
		"src":        parquet.String(),
		"dst":        parquet.String(),
		"offset":     parquet.Int(64),
		"length":     parquet.Int(64),
		"warnings":   parquet.Optional(parquet.List(parquet.String())),
		"extra_json": parquet.Optional(parquet.String()),
	}
	var decls []dissect.FieldDecl
	if d != nil {
		decls = d.Fields
	}
	for i := range decls {
		g[columnName(decls[i].Name)] = parquet.Optional(nodeOf(&decls[i]))
	}
	if typed {
		g[typeColumn] = parquet.String()
	}
	if raw {
		g[rawColumn] = parquet.Optional(parquet.Leaf(parquet.ByteArrayType))
	}
	s := parquet.NewSchema("record", g)
	p := &plan{schema: s, ncols: len(s.Columns()), rtype: -1, raw: -1}
	for _, c := range []struct {
		on   bool
		col  *int
		name string
	}{{typed, &p.rtype, typeColumn}, {raw, &p.raw, rawColumn}} {
		if !c.on {
			continue
		}
		lc, ok := s.Lookup(c.name)
		if !ok {
			return nil, fmt.Errorf("parquetout: no column %s", c.name)
		}
		*c.col = lc.ColumnIndex
	}
	for _, c := range []struct {
		col  *int
		path []string
	}{
		{&p.capture, []string{"capture"}}, {&p.time, []string{"time"}}, {&p.transport, []string{"transport"}},
		{&p.stream, []string{"stream"}}, {&p.src, []string{"src"}}, {&p.dst, []string{"dst"}},
		{&p.offset, []string{"offset"}}, {&p.length, []string{"length"}},
		{&p.warnings, []string{"warnings", "list", "element"}}, {&p.extra, []string{"extra_json"}},
	} {
		lc, ok := s.Lookup(c.path...)
		if !ok {
			return nil, fmt.Errorf("parquetout: no column %s", strings.Join(c.path, "."))
		}
		*c.col = lc.ColumnIndex
	}
	var err error
	p.fields = make([]node, len(decls))
	for i := range decls {
		n := &p.fields[i]
		if err = n.build(s, &decls[i], []string{columnName(decls[i].Name)}, 0, 0, true); err != nil {
			return nil, err
		}
		switch n.kind {
		case dissect.KindInt, dissect.KindUint, dissect.KindFloat, dissect.KindFloat32, dissect.KindBool,
			dissect.KindString, dissect.KindBytes, dissect.KindTime:
			n.flat = true
		}
	}
	if p.file, p.specs, err = arrowSchema(s); err != nil {
		return nil, err
	}
	return p, nil
}

func timestamp() parquet.Node { return parquet.TimestampAdjusted(parquet.Nanosecond, false) }

// nodeOf returns the Parquet type of a declared field's values. Array
// items are required: a declared array holds no nulls. Object keys are
// optional, as a value may lack a key not declared Required. An object
// declared without keys is a STRING holding its JSON, "{}", as Parquet
// has no empty group.
func nodeOf(f *dissect.FieldDecl) parquet.Node {
	switch f.Kind {
	case dissect.KindInt:
		return parquet.Int(64)
	case dissect.KindUint:
		return parquet.Uint(64)
	case dissect.KindFloat:
		return parquet.Leaf(parquet.DoubleType)
	case dissect.KindFloat32:
		return parquet.Leaf(parquet.FloatType)
	case dissect.KindBool:
		return parquet.Leaf(parquet.BooleanType)
	case dissect.KindBytes:
		return parquet.Leaf(parquet.ByteArrayType)
	case dissect.KindTime:
		return timestamp()
	case dissect.KindArray:
		return parquet.List(nodeOf(f.Elem))
	case dissect.KindObject:
		if len(f.Fields) == 0 {
			return parquet.String()
		}
		g := parquet.Group{}
		for i := range f.Fields {
			g[f.Fields[i].Name] = parquet.Optional(nodeOf(&f.Fields[i]))
		}
		return g
	}
	return parquet.String()
}

// build fills n for the field f at path in s. def and rep are the levels
// of f's parent when present; optional says whether f's own node is.
// The levels computed are checked against the schema's, so that a
// mistake here fails the writer instead of writing a file readers
// misread.
func (n *node) build(s *parquet.Schema, f *dissect.FieldDecl, path []string, def, rep int, optional bool) error {
	n.name, n.kind, n.def = f.Name, f.Kind, def
	if optional {
		n.def++
	}
	switch {
	case f.Kind == dissect.KindArray:
		n.rep = rep + 1
		n.elem = new(node)
		p := append(path[:len(path):len(path)], "list", "element")
		if err := n.elem.build(s, f.Elem, p, n.def+1, n.rep, false); err != nil {
			return err
		}
		n.leaves = n.elem.leaves
		return nil
	case f.Kind == dissect.KindObject && len(f.Fields) > 0:
		n.fields = make([]node, len(f.Fields))
		for i := range f.Fields {
			c := &n.fields[i]
			if err := c.build(s, &f.Fields[i], append(path[:len(path):len(path)], f.Fields[i].Name), n.def, rep, true); err != nil {
				return err
			}
			n.leaves = append(n.leaves, c.leaves...)
		}
		return nil
	}
	lc, ok := s.Lookup(path...)
	if !ok || lc.MaxDefinitionLevel != n.def || lc.MaxRepetitionLevel != rep {
		return fmt.Errorf("parquetout: column %s: levels %d, %d in the schema, %d, %d planned",
			strings.Join(path, "."), lc.MaxDefinitionLevel, lc.MaxRepetitionLevel, n.def, rep)
	}
	n.col = lc.ColumnIndex
	n.leaves = []int{lc.ColumnIndex}
	return nil
}

// field returns the index in fs of the field named key, or -1. Records
// carry their keys in declaration order, so the field at hint (the one
// after the previous match) is tried first.
func field(fs []node, key string, hint int) int {
	if hint < len(fs) && fs[hint].name == key {
		return hint
	}
	for i := range fs {
		if fs[i].name == key {
			return i
		}
	}
	return -1
}

// fits reports whether v is as n declares it (kinds, keys declared and
// not repeated, at every depth), so that its values have columns. Enums
// and required keys do not matter to the columns.
func (n *node) fits(v *dissect.Value) bool {
	if v.Kind() != n.kind {
		return false
	}
	switch {
	case n.elem != nil:
		items := v.Items()
		for i := range items {
			if !n.elem.fits(&items[i].Value) {
				return false
			}
		}
	case n.kind == dissect.KindObject:
		items := v.Items()
		if n.fields == nil {
			return len(items) == 0
		}
		var seen uint64 // keys 0..63 seen; later keys are checked by scanning
		hint := 0
		for i := range items {
			j := field(n.fields, items[i].Key, hint)
			if j < 0 || !n.fields[j].fits(&items[i].Value) {
				return false
			}
			hint = j + 1
			if j < 64 {
				if seen&(1<<j) != 0 {
					return false
				}
				seen |= 1 << j
				continue
			}
			for k := range i {
				if items[k].Key == items[i].Key {
					return false
				}
			}
		}
	}
	return true
}
