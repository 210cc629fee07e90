package layout

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
)

// Plan is a compiled schema: per type, what to read and what it declares.
// A Plan is read-only once compiled and may be shared by any number of
// decoders.
type Plan struct {
	types  []ctype
	byName map[string]int
	lim    Limits
}

// wire kinds of a compiled field
type wkind uint8

const (
	wUint wkind = iota
	wInt
	wBits
	wFloat
	wBytes
	wStr
	wType
	wSwitch
)

type ctype struct {
	name    string
	doc     string
	fields  []cfield
	nOut    int   // fields recorded
	minSize int64 // the least bytes a value takes (bits rounded up)
	decls   []dissect.FieldDecl
	// flat: the type is one run of fixed fields (then tail, bytes or
	// text to the end, if any): Decode's fast path (run.go)
	flat *run
	tail *cfield
}

// cref is a compiled Ref: a number, or slot idx of the seq's values.
type cref struct {
	n   int64
	idx int // -1: the number n
}

type cfield struct {
	id       string
	at       string
	kind     wkind
	width    int // bytes of an integer or float; bits of a bit field
	order    Order
	size     cref
	hasSize  bool
	sizeEOS  bool
	contents []byte
	term     int // -1: none
	pad      int // -1: none
	repeat   Repeat
	count    cref
	until    int64
	sub      int // wType: the type
	on       int // wSwitch: the slot switched on
	cases    map[int64]int
	def      int // wSwitch: the default type, -1: none
	enum     map[int64]string
	valid    *Valid
	scale    float64
	offset   float64
	out      int // index among the recorded fields, -1: not recorded
	doc      string
	unitName string
	roleOf   dissect.Role
	// plain: an integer read once, recorded as it is (no enum, valid
	// or scale): the decoder's fast path
	plain bool
	// boolean: a byte read as a bool (bool.go)
	boolean bool
	// before: how many fields of its type are recorded before this one
	before int
	// referred: a later field's size, count or switch is this field
	referred bool
	// run: the fields from this one that are read with one bounds check
	// (run.go); nil: none
	run *run
}

// Error is a compile error: where the description says it and what is
// wrong.
type Error struct {
	At  string
	Msg string
}

func (e *Error) Error() string {
	if e.At == "" {
		return e.Msg
	}
	return e.At + ": " + e.Msg
}

func errAt(at, format string, args ...any) *Error {
	return &Error{At: at, Msg: fmt.Sprintf(format, args...)}
}

// Compile checks a schema against lim (zero fields: [DefaultLimits]) and
// compiles it. Every error is an [*Error] naming where the description
// says what is wrong.
func Compile(s *Schema, lim Limits) (*Plan, error) {
	def := DefaultLimits()
	if lim.MaxTypes <= 0 {
		lim.MaxTypes = def.MaxTypes
	}
	if lim.MaxFields <= 0 {
		lim.MaxFields = def.MaxFields
	}
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = def.MaxDepth
	}
	if lim.MaxSize <= 0 {
		lim.MaxSize = def.MaxSize
	}
	if lim.MaxValues <= 0 {
		lim.MaxValues = def.MaxValues
	}
	if len(s.Types) > lim.MaxTypes {
		return nil, errAt(s.Types[lim.MaxTypes].At, "more than %d types", lim.MaxTypes)
	}
	p := &Plan{types: make([]ctype, len(s.Types)), byName: map[string]int{}, lim: lim}
	nf := 0
	for i := range s.Types {
		t := &s.Types[i]
		if !validName(t.Name) {
			return nil, errAt(t.At, "type name %q: want lower-case letters, digits and _, starting with a letter", t.Name)
		}
		if _, dup := p.byName[t.Name]; dup {
			return nil, errAt(t.At, "type %q described twice", t.Name)
		}
		p.byName[t.Name] = i
		nf += len(t.Seq)
		if nf > lim.MaxFields {
			return nil, errAt(t.At, "more than %d fields in all", lim.MaxFields)
		}
	}
	enums := map[string]map[int64]string{}
	for _, e := range s.Enums {
		if !validName(e.Name) {
			return nil, errAt(e.At, "enum name %q: want lower-case letters, digits and _, starting with a letter", e.Name)
		}
		if enums[e.Name] != nil {
			return nil, errAt(e.At, "enum %q described twice", e.Name)
		}
		m := make(map[int64]string, len(e.Values))
		for _, v := range e.Values {
			if _, dup := m[v.Value]; dup {
				return nil, errAt(e.At, "enum %q: value %d named twice", e.Name, v.Value)
			}
			m[v.Value] = v.Name
		}
		enums[e.Name] = m
	}
	for i := range s.Types {
		if err := p.compileType(s, i, enums); err != nil {
			return nil, err
		}
	}
	// Types nest without cycles and no deeper than MaxDepth; then sizes
	// and declarations, innermost first.
	state := make([]uint8, len(p.types))
	for i := range p.types {
		if err := p.walk(s, i, state, 1); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// walk visits type i's nested types depth first: a type met again while
// it is being visited is a cycle. Once its nested types are done, it sets
// the type's least size and declarations.
func (p *Plan) walk(s *Schema, i int, state []uint8, depth int) error {
	switch state[i] {
	case 1:
		return errAt(s.Types[i].At, "type %q contains itself (a cycle of types)", p.types[i].name)
	case 2:
		return nil
	}
	if depth > p.lim.MaxDepth {
		return errAt(s.Types[i].At, "types nested more than %d deep", p.lim.MaxDepth)
	}
	state[i] = 1
	t := &p.types[i]
	for k := range t.fields {
		f := &t.fields[k]
		for _, sub := range f.subs() {
			if err := p.walk(s, sub, state, depth+1); err != nil {
				return err
			}
		}
	}
	state[i] = 2
	bits := int64(0)
	for k := range t.fields {
		f := &t.fields[k]
		if f.kind == wBits {
			bits += int64(f.width)
			continue
		}
		t.minSize += (bits + 7) / 8
		bits = 0
		m := p.minSize(f)
		if f.repeat != Once && m == 0 {
			return errAt(s.Types[i].Seq[k].At, "field %q repeats an item that may take no bytes", f.id)
		}
		if f.repeat == RepeatExpr && f.count.idx < 0 {
			m = satMul(m, f.count.n)
		} else if f.repeat != Once {
			m = 0
		}
		t.minSize = satAdd(t.minSize, m)
	}
	t.minSize = satAdd(t.minSize, (bits+7)/8)
	t.decls = p.declsOf(i)
	return nil
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func (f *cfield) subs() []int {
	switch f.kind {
	case wType:
		return []int{f.sub}
	case wSwitch:
		out := make([]int, 0, len(f.cases)+1)
		for _, c := range f.cases {
			out = append(out, c)
		}
		if f.def >= 0 {
			out = append(out, f.def)
		}
		return out
	}
	return nil
}

// minSize is the least bytes one item of f takes.
func (p *Plan) minSize(f *cfield) int64 {
	switch f.kind {
	case wUint, wInt, wFloat:
		return int64(f.width)
	case wBytes, wStr:
		switch {
		case f.hasSize && f.size.idx < 0:
			return f.size.n
		case f.term >= 0 && !f.hasSize && !f.sizeEOS:
			return 1
		}
		return 0
	case wType:
		if f.hasSize && f.size.idx < 0 {
			return f.size.n
		}
		return p.types[f.sub].minSize
	case wSwitch:
		if f.hasSize && f.size.idx < 0 {
			return f.size.n
		}
		m := int64(-1)
		for _, c := range f.subs() {
			if n := p.types[c].minSize; m < 0 || n < m {
				m = n
			}
		}
		return max(m, 0)
	}
	return 0
}

// compileType compiles the fields of type i.
func (p *Plan) compileType(s *Schema, i int, enums map[string]map[int64]string) error {
	t := &s.Types[i]
	ct := &p.types[i]
	ct.name, ct.doc = t.Name, t.Doc
	ct.fields = make([]cfield, len(t.Seq))
	slot := map[string]int{}
	for k := range t.Seq {
		f := &t.Seq[k]
		cf := &ct.fields[k]
		cf.before = ct.nOut
		if err := p.compileField(s, f, cf, ct.fields[:k], slot, enums); err != nil {
			return err
		}
		if f.ID != "" {
			if !validName(f.ID) {
				return errAt(f.At, "field id %q: want lower-case letters, digits and _, starting with a letter", f.ID)
			}
			if _, dup := slot[f.ID]; dup {
				return errAt(f.At, "field %q described twice in type %q", f.ID, t.Name)
			}
			slot[f.ID] = k
			cf.out = ct.nOut
			ct.nOut++
		} else {
			cf.out = -1
		}
	}
	compileRuns(ct)
	compileFlat(ct)
	return nil
}

// intWord parses u1 … u8, s1 … s8, f2, f4, f8 with an optional le or be.
func intWord(w string, def Order) (k wkind, width int, o Order, ok bool) {
	o = def
	switch {
	case strings.HasSuffix(w, "le"):
		o, w = LittleEndian, w[:len(w)-2]
	case strings.HasSuffix(w, "be"):
		o, w = BigEndian, w[:len(w)-2]
	}
	if len(w) != 2 {
		return 0, 0, 0, false
	}
	n := int(w[1] - '0')
	switch w[0] {
	case 'u':
		k = wUint
	case 's':
		k = wInt
	case 'f':
		if n != 2 && n != 4 && n != 8 {
			return 0, 0, 0, false
		}
		return wFloat, n, o, true
	default:
		return 0, 0, 0, false
	}
	if n < 1 || n > 8 {
		return 0, 0, 0, false
	}
	return k, n, o, true
}

func (p *Plan) compileField(s *Schema, f *Field, cf *cfield, prev []cfield, slot map[string]int, enums map[string]map[int64]string) error {
	cf.id, cf.at, cf.term, cf.pad, cf.def = f.ID, f.At, -1, -1, -1
	cf.doc, cf.unitName, cf.roleOf = f.Doc, f.Unit, f.Role
	ref := func(r Ref, what string) (cref, error) {
		if r.Field == "" {
			if r.N < 0 || r.N > p.lim.MaxSize {
				return cref{}, errAt(f.At, "%s %d: want 0 to %d", what, r.N, p.lim.MaxSize)
			}
			return cref{n: r.N, idx: -1}, nil
		}
		k, ok := slot[r.Field]
		if !ok || !prev[k].isInt() {
			return cref{}, errAt(f.At, "%s names %q, which is not an earlier integer field of this type", what, r.Field)
		}
		prev[k].referred = true
		return cref{idx: k}, nil
	}
	w := f.Type
	switch {
	case f.Switch != nil:
		if w != "" {
			return errAt(f.At, "field %q has both a type and a switch", f.ID)
		}
		cf.kind = wSwitch
	case w == "":
		cf.kind = wBytes
	case w == "str":
		cf.kind = wStr
	case w == "strz":
		cf.kind = wStr
		cf.term = 0
	case w == "bool":
		cf.kind, cf.width, cf.order, cf.boolean = wUint, 1, BigEndian, true
	case w[0] == 'b' && len(w) > 1 && w[1] >= '0' && w[1] <= '9':
		n, err := strconv.Atoi(w[1:])
		if err != nil || n < 1 || n > 64 {
			return errAt(f.At, "bit field type %q: want b1 to b64", w)
		}
		cf.kind, cf.width, cf.order = wBits, n, s.BitEndian
	default:
		if k, n, o, ok := intWord(w, s.Endian); ok {
			cf.kind, cf.width, cf.order = k, n, o
			break
		}
		sub, ok := p.byName[w]
		if !ok {
			return errAt(f.At, "unknown type %q (want u1…u8, s1…s8, b1…b64, f2, f4, f8, bool, str, strz, or a type of this file)", w)
		}
		cf.kind, cf.sub = wType, sub
	}
	scalar := cf.kind == wUint || cf.kind == wInt || cf.kind == wBits || cf.kind == wFloat
	if scalar && (f.Size.Set || f.SizeEOS) {
		return errAt(f.At, "field %q: a %s has a size of its own; size is for bytes, text and types", f.ID, w)
	}
	if f.Size.Set && f.SizeEOS {
		return errAt(f.At, "field %q: size and size-eos: give one", f.ID)
	}
	if f.Size.Set {
		r, err := ref(f.Size, "size")
		if err != nil {
			return err
		}
		cf.size, cf.hasSize = r, true
	}
	cf.sizeEOS = f.SizeEOS
	if f.Contents != nil {
		if cf.kind != wBytes || f.Size.Set || f.SizeEOS {
			return errAt(f.At, "field %q: contents is a constant of bytes and takes no type or size", f.ID)
		}
		if len(f.Contents) == 0 || int64(len(f.Contents)) > p.lim.MaxSize {
			return errAt(f.At, "field %q: contents of %d bytes", f.ID, len(f.Contents))
		}
		cf.contents = f.Contents
		cf.size, cf.hasSize = cref{n: int64(len(f.Contents)), idx: -1}, true
	}
	if f.Terminator != nil {
		if cf.kind != wBytes && cf.kind != wStr {
			return errAt(f.At, "field %q: terminator is for bytes and text", f.ID)
		}
		cf.term = int(*f.Terminator)
	}
	if f.PadRight != nil {
		if cf.kind != wBytes && cf.kind != wStr {
			return errAt(f.At, "field %q: pad-right is for bytes and text", f.ID)
		}
		cf.pad = int(*f.PadRight)
	}
	if (cf.kind == wBytes || cf.kind == wStr) && !cf.hasSize && !cf.sizeEOS && cf.term < 0 {
		return errAt(f.At, "field %q: bytes or text need size, size-eos or a terminator", f.ID)
	}
	switch f.Encoding {
	case "", "UTF-8", "utf-8", "ASCII", "ascii":
	default:
		return errAt(f.At, "field %q: encoding %q: only UTF-8 and ASCII are read", f.ID, f.Encoding)
	}
	if f.Encoding != "" && cf.kind != wStr {
		return errAt(f.At, "field %q: encoding is for text (type str or strz)", f.ID)
	}
	cf.repeat = f.Repeat
	switch f.Repeat {
	case RepeatExpr:
		if !f.RepeatExpr.Set {
			return errAt(f.At, "field %q: repeat: expr needs repeat-expr", f.ID)
		}
		r, err := ref(f.RepeatExpr, "repeat-expr")
		if err != nil {
			return err
		}
		cf.count = r
	case RepeatUntil:
		if f.RepeatUntil == nil {
			return errAt(f.At, "field %q: repeat: until needs repeat-until", f.ID)
		}
		if cf.kind != wUint && cf.kind != wInt {
			return errAt(f.At, "field %q: repeat-until compares integers (u1…u8, s1…s8)", f.ID)
		}
		cf.until = *f.RepeatUntil
	}
	if f.Repeat != RepeatExpr && f.RepeatExpr.Set {
		return errAt(f.At, "field %q: repeat-expr without repeat: expr", f.ID)
	}
	if f.Repeat != RepeatUntil && f.RepeatUntil != nil {
		return errAt(f.At, "field %q: repeat-until without repeat: until", f.ID)
	}
	if f.Repeat != Once && cf.kind == wBits {
		return errAt(f.At, "field %q: a bit field cannot repeat", f.ID)
	}
	intKind := cf.kind == wUint || cf.kind == wInt || cf.kind == wBits
	if f.Enum != "" {
		m, ok := enums[f.Enum]
		if !ok {
			return errAt(f.At, "field %q: unknown enum %q", f.ID, f.Enum)
		}
		if !intKind {
			return errAt(f.At, "field %q: an enum names integers", f.ID)
		}
		if cf.boolean {
			if err := checkBoolEnum(f, m); err != nil {
				return err
			}
		}
		cf.enum = m
	}
	if f.Valid != nil {
		if !intKind {
			return errAt(f.At, "field %q: valid bounds integers", f.ID)
		}
		cf.valid = f.Valid
	}
	if f.Scale != 0 || f.Offset != 0 {
		if !intKind || f.Enum != "" {
			return errAt(f.At, "field %q: scale and offset turn an integer (not an enum) into a float", f.ID)
		}
		if cf.boolean {
			return errAt(f.At, "field %q: a bool has no scale or offset", f.ID)
		}
		if f.Scale == 0 || math.IsNaN(f.Scale) || math.IsInf(f.Scale, 0) || math.IsNaN(f.Offset) || math.IsInf(f.Offset, 0) {
			return errAt(f.At, "field %q: scale must be a finite non-zero number, offset finite", f.ID)
		}
		cf.scale, cf.offset = f.Scale, f.Offset
	}
	cf.plain = (cf.kind == wUint || cf.kind == wInt) && !cf.boolean && cf.repeat == Once && cf.enum == nil && cf.valid == nil && cf.scale == 0
	if f.Role == dissect.RoleLatency {
		return errAt(f.At, "field %q: role latency is computed by dissect, not read from the wire", f.ID)
	}
	if cf.kind == wSwitch {
		k, ok := slot[f.Switch.On]
		if !ok || !prev[k].isInt() {
			return errAt(f.At, "field %q: switch-on names %q, which is not an earlier integer field of this type", f.ID, f.Switch.On)
		}
		cf.on = k
		prev[k].referred = true
		cf.cases = make(map[int64]int, len(f.Switch.Cases))
		for _, c := range f.Switch.Cases {
			sub, ok := p.byName[c.Type]
			if !ok {
				return errAt(f.At, "field %q: case %d: unknown type %q", f.ID, c.Value, c.Type)
			}
			if _, dup := cf.cases[c.Value]; dup {
				return errAt(f.At, "field %q: case %d given twice", f.ID, c.Value)
			}
			cf.cases[c.Value] = sub
		}
		if f.Switch.Default != "" {
			sub, ok := p.byName[f.Switch.Default]
			if !ok {
				return errAt(f.At, "field %q: default: unknown type %q", f.ID, f.Switch.Default)
			}
			cf.def = sub
		}
		if len(cf.cases) == 0 && cf.def < 0 {
			return errAt(f.At, "field %q: a switch without cases", f.ID)
		}
	}
	return nil
}

// isInt reports whether the field holds one integer another field may
// name (a size, a count, a switch).
func (f *cfield) isInt() bool {
	return (f.kind == wUint || f.kind == wInt || f.kind == wBits) && f.repeat == Once
}
