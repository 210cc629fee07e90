package parquetout

import (
	"fmt"
	"strings"

	"reflect"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// plan is the Parquet schema of one declaration and the map from its
// declared fields to the schema's leaf columns, built once per
// declaration: writing a record then only matches its keys against the
// declared ones and appends values to known columns.
type plan struct {
	ncols  int
	file   *parquet.Schema // the same schema, for the file writer (codec.go)
	specs  []colSpec       // each leaf column's type and levels
	fields []node          // the declared top-level fields, in declaration order
	flat   bool            // every field is a scalar (node.flat)
	// The common columns: the envelope's (dissect.Envelope: its JSON
	// keys but the partitions'), then the lake's own.
	env                      []envColumn
	capture, warnings, extra int
	rtype                    int // record_type, or -1
	raw                      int // raw (Options.Raw), or -1
}

// envColumn is an envelope key's column.
type envColumn struct {
	col  int
	kind dissect.Kind // KindTime, KindInt or KindString
	// from says which of the record's fields holds the value, for the
	// keys the writer knows; values (the envelope's) gives the others'.
	from   dissect.RecordField
	values func(*dissect.Record) ([2]dissect.Value, int)
}

// partitionKey says whether an envelope key is a partition's (proto=,
// type=) rather than a column.
func partitionKey(name string) bool { return name == "proto" || name == "type" }

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
	var fl group
	leaf := func(col *int, name string, k dissect.Kind) {
		*col = p.ncols
		p.ncols++
		fl = append(fl, named{commonEncoding(k, colOf(k).node()), name})
	}
	for _, k := range dissect.Envelope() {
		if k.JSON && !partitionKey(k.Name) {
			e := envColumn{kind: k.Kind, from: k.Field, values: k.Values}
			leaf(&e.col, k.Name, k.Kind)
			p.env = append(p.env, e)
		}
	}
	if typed {
		leaf(&p.rtype, typeColumn, dissect.KindString)
	}
	p.flat = true
	for i := range decls {
		n := &p.fields[i]
		name := ColumnName(decls[i].Name)
		fl = append(fl, named{n.build(p, &decls[i], 0, 0, true), name})
		switch n.kind {
		case dissect.KindInt, dissect.KindUint, dissect.KindFloat, dissect.KindFloat32, dissect.KindBool,
			dissect.KindString, dissect.KindBytes, dissect.KindTime:
			n.flat = true
		}
		p.flat = p.flat && n.flat
	}
	p.warnings = p.ncols
	p.ncols++
	fl = append(fl, named{parquet.Optional(parquet.List(colString.node())), "warnings"})
	if raw {
		p.raw = p.ncols
		p.ncols++
		fl = append(fl, named{parquet.Optional(colBytes.node()), rawColumn})
	}
	p.extra = p.ncols
	p.ncols++
	fl = append(fl, named{parquet.Optional(colString.node()), "extra_json"})
	leaf(&p.capture, "capture", dissect.KindString)
	p.file = parquet.NewSchema("record", fl)
	return p, p.check()
}

// colType is a leaf column's Parquet type.
type colType struct {
	node func() parquet.Node
	spec physical
}

var (
	colInt    = colType{func() parquet.Node { return parquet.Int(64) }, physInt64}
	colUint   = colType{func() parquet.Node { return parquet.Uint(64) }, physInt64}
	colTime   = colType{func() parquet.Node { return parquet.TimestampAdjusted(parquet.Nanosecond, false) }, physInt64}
	colDouble = colType{func() parquet.Node { return parquet.Leaf(parquet.DoubleType) }, physDouble}
	colFloat  = colType{func() parquet.Node { return parquet.Leaf(parquet.FloatType) }, physFloat}
	colBool   = colType{func() parquet.Node { return parquet.Leaf(parquet.BooleanType) }, physBool}
	colBytes  = colType{func() parquet.Node { return parquet.Leaf(parquet.ByteArrayType) }, physBytes}
	colString = colType{parquet.String, physBytes}
)

// group is a Parquet group whose fields are in the order given: the
// library's own Group is a map, its fields sorted by name.
type group []parquet.Field

func (g group) Fields() []parquet.Field { return g }

// The rest of parquet.Node is a required group's (parquet.Group's).
func (group) ID() int                     { return 0 }
func (g group) String() string            { return fmt.Sprint([]parquet.Field(g)) }
func (group) Type() parquet.Type          { return parquet.Group{}.Type() }
func (group) Optional() bool              { return false }
func (group) Repeated() bool              { return false }
func (group) Required() bool              { return true }
func (group) Leaf() bool                  { return false }
func (group) Encoding() encoding.Encoding { return nil }
func (group) Compression() compress.Codec { return nil }
func (group) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

// named is a node named in its group.
type named struct {
	parquet.Node
	name string
}

func (f named) Name() string { return f.name }

// Value is not used: rows are never built from Go values.
func (f named) Value(reflect.Value) reflect.Value { return reflect.Value{} }

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

// build fills n for the field f and returns its schema node: arrays are
// LISTs of required items (a declared array holds no nulls), objects
// groups of their keys in declaration order, each optional (a value may
// lack a key not declared Required). Leaves are numbered in p as they
// come, the order of the file's columns. def and rep are the levels of
// f's parent when present; optional says whether f's own node is.
func (n *node) build(p *plan, f *dissect.FieldDecl, def, rep int, optional bool) parquet.Node {
	n.name, n.kind, n.def = f.Name, f.Kind, def
	if optional {
		n.def++
	}
	var sn parquet.Node
	switch {
	case f.Kind == dissect.KindArray:
		n.rep = rep + 1
		n.elem = new(node)
		sn = parquet.List(n.elem.build(p, f.Elem, n.def+1, n.rep, false))
		n.leaves = n.elem.leaves
	case f.Kind == dissect.KindObject && len(f.Fields) > 0:
		n.fields = make([]node, len(f.Fields))
		g := make(group, len(f.Fields))
		for i := range f.Fields {
			c := &n.fields[i]
			g[i] = named{c.build(p, &f.Fields[i], n.def, rep, true), f.Fields[i].Name}
			n.leaves = append(n.leaves, c.leaves...)
		}
		sn = g
	default:
		l := colOf(f.Kind)
		n.col = p.ncols
		n.leaves = []int{n.col}
		n.spec = colSpec{phys: l.spec, maxDef: int16(n.def), maxRep: int16(rep)}
		p.ncols++
		sn = l.node()
	}
	if optional {
		sn = parquet.Optional(sn)
	}
	return sn
}

// commonEncoding returns the node of a common column, of kind k, with
// its encoding: DELTA_BINARY_PACKED for the INT64 columns (times and
// offsets that grow, streams and lengths that repeat: on the 50 MB
// Deltarobot capture a lake of 15 MB instead of 18 MB, in the same time),
// a dictionary for the string columns, which repeat a handful of values
// in runs (each value once per column chunk, then an index a row that the
// RLE encoding turns into a few bytes per run; beyond maxDictBytes of
// distinct values a chunk goes on plain).
func commonEncoding(k dissect.Kind, n parquet.Node) parquet.Node {
	switch k {
	case dissect.KindTime, dissect.KindInt:
		return parquet.Encoded(n, &parquet.DeltaBinaryPacked)
	case dissect.KindString:
		return parquet.Encoded(n, &parquet.RLEDictionary)
	}
	return n
}

// check sets p.specs from the file schema, whose leaf columns must be
// the ones p numbered, with the levels p computed, so that a mistake here
// fails the writer instead of writing a file readers misread.
func (p *plan) check() error {
	cols := p.file.Columns()
	if len(cols) != p.ncols {
		return fmt.Errorf("parquetout: %d columns in the file schema, %d planned", len(cols), p.ncols)
	}
	p.specs = make([]colSpec, p.ncols)
	for i, path := range cols {
		c, _ := p.file.Lookup(path...)
		s := colSpec{maxDef: int16(c.MaxDefinitionLevel), maxRep: int16(c.MaxRepetitionLevel)}
		switch c.Node.Type().Kind() {
		case parquet.Int64:
			s.phys = physInt64
		case parquet.Float:
			s.phys = physFloat
		case parquet.Double:
			s.phys = physDouble
		case parquet.Boolean:
			s.phys = physBool
		default:
			s.phys = physBytes
		}
		if c.ColumnIndex != i {
			return fmt.Errorf("parquetout: column %s is the schema's %d, planned %d", strings.Join(path, "."), c.ColumnIndex, i)
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
					return fmt.Errorf("parquetout: column %s: %+v in the schema, %+v planned", strings.Join(cols[n.col], "."), got, n.spec)
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

// reserved says whether name is a common column's (or a partition
// key's, an envelope key too): a field of that name is written as
// f_<name>.
func reserved(name string) bool {
	switch name {
	case "capture", "warnings", "extra_json", typeColumn, rawColumn:
		return true
	}
	for _, k := range dissect.Envelope() {
		if k.JSON && k.Name == name {
			return true
		}
	}
	return false
}

// ColumnName returns the column of a top-level field key: the key, or
// f_<key> for the common columns' and partitions' names.
func ColumnName(key string) string {
	if reserved(key) || strings.HasPrefix(key, "f_") && reserved(key[2:]) {
		return "f_" + key
	}
	return key
}
