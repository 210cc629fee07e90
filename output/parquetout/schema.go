package parquetout

import (
	"fmt"
	"strings"

	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/dissect-tools/dissect/dissect"
)

// plan is the Parquet schema of one declaration and the map from its
// declared fields to the schema's leaf columns, built once per
// declaration: writing a record then only matches its keys against the
// declared ones and appends values to known columns.
type plan struct {
	ncols  int
	file   *schema.GroupNode // the same schema, for the file writer (arrow.go)
	specs  []colSpec         // each leaf column's type and levels
	fields []node            // the declared top-level fields, in declaration order
	// The common columns' indexes.
	capture, time, frame, transport, stream, src, dst int
	offset, length, warnings, extra                   int
	rtype                                             int // record_type, or -1
	raw                                               int // raw (Options.Raw), or -1
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
	elem   *node   // arrays
	fields []node  // objects, in declaration order
	spec   colSpec // leaves: the column's type and levels
	// flat is set for a top-level field of a scalar kind: its values
	// go to its column at level def without more ado (scalar).
	flat bool
}

// newPlan returns the plan of d; nil d (a record no declaration matches)
// has the common columns only. typed adds the record_type column, for
// partitions that do not say the type (overflow, shortened names); raw
// the raw column, the record's bytes (-x: the "raw" of JSON).
//
// The columns are in the order of -o json's keys: the envelope (proto
// and type are the partition's), record_type where the type is not the
// partition's, the declared fields in declaration order (an object's
// keys in theirs), then warnings, raw, extra_json and capture.
func newPlan(d *dissect.TypeDecl, typed, raw bool) (*plan, error) {
	var decls []dissect.FieldDecl
	if d != nil {
		decls = d.Fields
	}
	p := &plan{rtype: -1, raw: -1, fields: make([]node, len(decls))}
	var fl schema.FieldList
	leaf := func(col *int, name string, typ colType) {
		*col = p.ncols
		p.ncols++
		fl = append(fl, typ.node(name, apq.Repetitions.Required))
	}
	for _, k := range dissect.JSONEnvelope() {
		if k.Name == "proto" || k.Name == "type" {
			continue // the partition's
		}
		col := p.envelopeColumn(k.Name)
		if col == nil {
			return nil, fmt.Errorf("parquet: the lake has no column for the envelope key %q", k.Name)
		}
		typ := colString
		switch k.Kind {
		case dissect.KindTime:
			typ = colTime
		case dissect.KindInt:
			typ = colInt
		}
		leaf(col, k.Name, typ)
	}
	if typed {
		leaf(&p.rtype, typeColumn, colString)
	}
	for i := range decls {
		n := &p.fields[i]
		sn, err := n.build(p, &decls[i], ColumnName(decls[i].Name), 0, 0, true)
		if err != nil {
			return nil, err
		}
		fl = append(fl, sn)
		switch n.kind {
		case dissect.KindInt, dissect.KindUint, dissect.KindFloat, dissect.KindFloat32, dissect.KindBool,
			dissect.KindString, dissect.KindBytes, dissect.KindTime:
			n.flat = true
		}
	}
	p.warnings = p.ncols
	p.ncols++
	fl = append(fl, schema.MustGroup(schema.ListOfWithName("warnings", colString.node("element", apq.Repetitions.Required), apq.Repetitions.Optional, -1)))
	if raw {
		p.raw = p.ncols
		p.ncols++
		fl = append(fl, colBytes.node(rawColumn, apq.Repetitions.Optional))
	}
	p.extra = p.ncols
	p.ncols++
	fl = append(fl, colString.node("extra_json", apq.Repetitions.Optional))
	leaf(&p.capture, "capture", colString)
	root, err := schema.NewGroupNode("record", apq.Repetitions.Required, fl, -1)
	if err != nil {
		return nil, err
	}
	p.file = root
	return p, p.check(schema.NewSchema(root))
}

// colType is a leaf column's Parquet type.
type colType struct {
	phys    apq.Type
	logical schema.LogicalType
	spec    physical
}

var (
	colInt    = colType{apq.Types.Int64, schema.NewIntLogicalType(64, true), physInt64}
	colUint   = colType{apq.Types.Int64, schema.NewIntLogicalType(64, false), physInt64}
	colTime   = colType{apq.Types.Int64, schema.NewTimestampLogicalType(false, schema.TimeUnitNanos), physInt64}
	colDouble = colType{apq.Types.Double, schema.NoLogicalType{}, physDouble}
	colFloat  = colType{apq.Types.Float, schema.NoLogicalType{}, physFloat}
	colBool   = colType{apq.Types.Boolean, schema.NoLogicalType{}, physBool}
	colBytes  = colType{apq.Types.ByteArray, schema.NoLogicalType{}, physBytes}
	colString = colType{apq.Types.ByteArray, schema.StringLogicalType{}, physBytes}
)

func (l colType) node(name string, rep apq.Repetition) schema.Node {
	return schema.MustPrimitive(schema.NewPrimitiveNodeLogical(name, rep, l.logical, l.phys, -1, -1))
}

// colOf returns the Parquet type of a declared scalar kind; an object
// declared without keys is a STRING holding its JSON, "{}", as Parquet
// has no empty group.
func colOf(k dissect.Kind) colType {
	switch k {
	case dissect.KindInt:
		return colInt
	case dissect.KindUint:
		return colUint
	case dissect.KindFloat:
		return colDouble
	case dissect.KindFloat32:
		return colFloat
	case dissect.KindBool:
		return colBool
	case dissect.KindBytes:
		return colBytes
	case dissect.KindTime:
		return colTime
	}
	return colString
}

// build fills n for the field f, named name in the file, and returns its
// schema node: arrays are LISTs of required items (a declared array holds
// no nulls), objects groups of their keys in declaration order, each
// optional (a value may lack a key not declared Required). Leaves are
// numbered in p as they come, the order of the file's columns. def and
// rep are the levels of f's parent when present; optional says whether
// f's own node is.
func (n *node) build(p *plan, f *dissect.FieldDecl, name string, def, rep int, optional bool) (schema.Node, error) {
	n.name, n.kind, n.def = f.Name, f.Kind, def
	r := apq.Repetitions.Required
	if optional {
		n.def++
		r = apq.Repetitions.Optional
	}
	switch {
	case f.Kind == dissect.KindArray:
		n.rep = rep + 1
		n.elem = new(node)
		e, err := n.elem.build(p, f.Elem, "element", n.def+1, n.rep, false)
		if err != nil {
			return nil, err
		}
		n.leaves = n.elem.leaves
		return schema.ListOfWithName(name, e, r, -1)
	case f.Kind == dissect.KindObject && len(f.Fields) > 0:
		n.fields = make([]node, len(f.Fields))
		var fl schema.FieldList
		for i := range f.Fields {
			c := &n.fields[i]
			sn, err := c.build(p, &f.Fields[i], f.Fields[i].Name, n.def, rep, true)
			if err != nil {
				return nil, err
			}
			fl = append(fl, sn)
			n.leaves = append(n.leaves, c.leaves...)
		}
		return schema.NewGroupNode(name, r, fl, -1)
	}
	l := colOf(f.Kind)
	n.col = p.ncols
	n.leaves = []int{n.col}
	n.spec = colSpec{phys: l.spec, maxDef: int16(n.def), maxRep: int16(rep)}
	p.ncols++
	return l.node(name, r), nil
}

// check sets p.specs from the file schema sc, whose leaf columns must be
// the ones p numbered, with the levels p computed, so that a mistake here
// fails the writer instead of writing a file readers misread.
func (p *plan) check(sc *schema.Schema) error {
	if sc.NumColumns() != p.ncols {
		return fmt.Errorf("parquetout: %d columns in the file schema, %d planned", sc.NumColumns(), p.ncols)
	}
	p.specs = make([]colSpec, p.ncols)
	for i := range p.specs {
		c := sc.Column(i)
		s := colSpec{maxDef: c.MaxDefinitionLevel(), maxRep: c.MaxRepetitionLevel()}
		switch c.PhysicalType() {
		case apq.Types.Int64:
			s.phys = physInt64
		case apq.Types.Float:
			s.phys = physFloat
		case apq.Types.Double:
			s.phys = physDouble
		case apq.Types.Boolean:
			s.phys = physBool
		default:
			s.phys = physBytes
		}
		p.specs[i] = s
	}
	var walk func(ns []node) error
	walk = func(ns []node) error {
		for i := range ns {
			n := &ns[i]
			switch {
			case n.elem != nil:
				if err := walk([]node{*n.elem}); err != nil {
					return err
				}
			case n.fields != nil:
				if err := walk(n.fields); err != nil {
					return err
				}
			default:
				if got := p.specs[n.col]; got != n.spec {
					return fmt.Errorf("parquetout: column %s: %+v in the schema, %+v planned", sc.Column(n.col).Path(), got, n.spec)
				}
			}
		}
		return nil
	}
	return walk(p.fields)
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

// envelopeColumn is where the plan keeps the column of envelope key
// name (the row builder writes each), nil for a key the lake does not
// write.
func (p *plan) envelopeColumn(name string) *int {
	switch name {
	case "time":
		return &p.time
	case "frame":
		return &p.frame
	case "transport":
		return &p.transport
	case "stream":
		return &p.stream
	case "src":
		return &p.src
	case "dst":
		return &p.dst
	case "offset":
		return &p.offset
	case "length":
		return &p.length
	}
	return nil
}

// reserved are the common column names (and the partition keys): a field
// of that name is written as f_<name>.
var reserved = map[string]bool{
	"capture": true, "time": true, "frame": true, "transport": true, "stream": true, "src": true,
	"dst": true, "offset": true, "length": true, "warnings": true, "extra_json": true,
	"proto": true, "type": true, typeColumn: true, rawColumn: true,
}

// ColumnName returns the column of a top-level field key: the key, or
// f_<key> for the common columns' and partitions' names.
func ColumnName(key string) string {
	if reserved[key] || strings.HasPrefix(key, "f_") && reserved[key[2:]] {
		return "f_" + key
	}
	return key
}
