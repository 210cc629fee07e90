package query

import (
	"bytes"
	"math"
	"regexp"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
)

// node is a compiled test. Nodes are immutable after Compile.
type node interface {
	eval(r *dissect.Record) bool
	write(b *strings.Builder)
	prec() int // 1 or, 2 and, 3 not, 4 a test
}

// op is a comparison operator.
type op uint8

const (
	opEq    op = iota
	opNe       // !(any ==)
	opNeAny    // any !=
	opLt
	opLe
	opGt
	opGe
)

func (o op) String() string { return [...]string{"==", "!=", "!==", "<", "<=", ">", ">="}[o] }

// holds applies o to the result of a comparison of one value: c is its
// sign, ok false when the values do not compare (other kinds, NaN).
func (o op) holds(c int, ok bool) bool {
	switch o {
	case opEq:
		return ok && c == 0
	case opNe, opNeAny:
		return !ok || c != 0
	case opLt:
		return ok && c < 0
	case opLe:
		return ok && c <= 0
	case opGt:
		return ok && c > 0
	}
	return ok && c >= 0
}

// anyValue calls fn with each value p names in r (arrays at the end of the
// path flattened, element by element) until fn returns true, and reports
// whether it did.
func anyValue(r *dissect.Record, p *Path, fn func(dissect.Value) bool) bool {
	if p.key != "" {
		if p.info != nil {
			return fn(dissect.Str(p.info(r)))
		}
		if p.env.Values == nil {
			return false
		}
		vs, n := p.env.Values(r)
		for _, v := range vs[:n] {
			if visit(v, fn) {
				return true
			}
		}
		return false
	}
	if r.Proto != p.proto {
		return false
	}
	if len(p.steps) == 0 {
		return fn(dissect.Bool(true))
	}
	return walkAny(dissect.Object(r.Fields), p.steps, fn)
}

func walkAny(v dissect.Value, steps []step, fn func(dissect.Value) bool) bool {
	if len(steps) == 0 {
		return visit(v, fn)
	}
	s := steps[0]
	switch {
	case s.key == "":
		items := v.Items()
		if v.Kind() != dissect.KindArray || s.index >= len(items) {
			return false
		}
		return walkAny(items[s.index].Value, steps[1:], fn)
	case v.Kind() == dissect.KindObject:
		for _, f := range v.Items() {
			if f.Key == s.key {
				return walkAny(f.Value, steps[1:], fn)
			}
		}
	case v.Kind() == dissect.KindArray:
		for _, it := range v.Items() {
			if walkAny(it.Value, steps, fn) {
				return true
			}
		}
	}
	return false
}

func visit(v dissect.Value, fn func(dissect.Value) bool) bool {
	if v.Kind() == dissect.KindArray {
		for _, it := range v.Items() {
			if visit(it.Value, fn) {
				return true
			}
		}
		return false
	}
	return fn(v)
}

// present reports whether p names any value in r (an array, even empty,
// is a value).
func present(r *dissect.Record, p *Path) bool {
	if p.key != "" {
		if p.env.Values == nil {
			return true
		}
		_, n := p.env.Values(r)
		return n > 0
	}
	if r.Proto != p.proto {
		return false
	}
	return presentIn(dissect.Object(r.Fields), p.steps)
}

func presentIn(v dissect.Value, steps []step) bool {
	if len(steps) == 0 {
		return true
	}
	s := steps[0]
	switch {
	case s.key == "":
		items := v.Items()
		return v.Kind() == dissect.KindArray && s.index < len(items) && presentIn(items[s.index].Value, steps[1:])
	case v.Kind() == dissect.KindObject:
		for _, f := range v.Items() {
			if f.Key == s.key {
				return presentIn(f.Value, steps[1:])
			}
		}
	case v.Kind() == dissect.KindArray:
		for _, it := range v.Items() {
			if presentIn(it.Value, steps) {
				return true
			}
		}
	}
	return false
}

// cmpLit compares v with l: the sign of v - l, and false when they do not
// compare.
func cmpLit(v dissect.Value, l *lit) (int, bool) {
	switch v.Kind() {
	case dissect.KindInt:
		if l.kind != litNum {
			return 0, false
		}
		return cmpIntLit(v.Int(), l)
	case dissect.KindUint:
		if l.kind != litNum {
			return 0, false
		}
		x := v.Uint()
		switch {
		case l.isInt:
			if l.i < 0 {
				return 1, true
			}
			return cmpOrd(x, uint64(l.i)), true
		case l.isUint:
			return cmpOrd(x, l.u), true
		}
		return cmpUintFloat(x, l.f)
	case dissect.KindFloat, dissect.KindFloat32:
		if l.kind != litNum {
			return 0, false
		}
		x := v.Float()
		if v.Kind() == dissect.KindFloat32 {
			return cmpFloat(x, l.f32)
		}
		switch {
		case l.isInt:
			c, ok := cmpIntFloat(l.i, x)
			return -c, ok
		case l.isUint:
			c, ok := cmpUintFloat(l.u, x)
			return -c, ok
		}
		return cmpFloat(x, l.f)
	case dissect.KindTime:
		if !l.hasTime {
			return 0, false
		}
		ns := v.Int()
		switch {
		case ns < l.tlo:
			return -1, true
		case ns > l.thi:
			return 1, true
		case l.tlo == l.thi:
			return 0, true
		case ns == l.tlo:
			return -1, true
		}
		return 1, true
	case dissect.KindString:
		if l.kind != litStr {
			return 0, false
		}
		return strings.Compare(v.Str(), l.s), true
	case dissect.KindBytes:
		if !l.hasHex {
			return 0, false
		}
		return bytes.Compare(v.Raw(), l.hex), true
	case dissect.KindBool:
		if l.kind != litBool {
			return 0, false
		}
		return cmpOrd(b2i(v.Bool()), b2i(l.b)), true
	}
	return 0, false
}

func cmpIntLit(x int64, l *lit) (int, bool) {
	switch {
	case l.isInt:
		return cmpOrd(x, l.i), true
	case l.isUint:
		return -1, true // l.u > MaxInt64
	}
	return cmpIntFloat(x, l.f)
}

// cmpValues compares two values of a record (a field with a field).
func cmpValues(a, b dissect.Value) (int, bool) {
	var l lit
	switch b.Kind() {
	case dissect.KindInt:
		l = lit{kind: litNum, isInt: true, i: b.Int(), f: b.Float()}
	case dissect.KindUint:
		l = lit{kind: litNum, f: b.Float()}
		l.setUint(b.Uint(), false)
	case dissect.KindFloat, dissect.KindFloat32:
		if a.Kind() == dissect.KindFloat32 && b.Kind() == dissect.KindFloat {
			return cmpFloat(a.Float(), b.Float()) // not at float32 precision
		}
		l = lit{kind: litNum, f: b.Float(), f32: float64(float32(b.Float()))}
	case dissect.KindTime:
		if a.Kind() != dissect.KindTime {
			return 0, false
		}
		return cmpOrd(a.Int(), b.Int()), true
	case dissect.KindString:
		if a.Kind() != dissect.KindString {
			return 0, false
		}
		return strings.Compare(a.Str(), b.Str()), true
	case dissect.KindBytes:
		if a.Kind() != dissect.KindBytes {
			return 0, false
		}
		return bytes.Compare(a.Raw(), b.Raw()), true
	case dissect.KindBool:
		l = lit{kind: litBool, b: b.Bool()}
	default:
		return 0, false
	}
	if a.Kind() == dissect.KindTime {
		return 0, false
	}
	return cmpLit(a, &l)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpOrd[T int | int64 | uint64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpFloat(x, y float64) (int, bool) {
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	case x == y:
		return 0, true
	}
	return 0, false // NaN
}

// cmpIntFloat compares an integer and a float exactly.
func cmpIntFloat(i int64, f float64) (int, bool) {
	switch {
	case math.IsNaN(f):
		return 0, false
	case f >= 1<<63:
		return -1, true
	case f < -(1 << 63):
		return 1, true
	}
	t := math.Trunc(f)
	if c := cmpOrd(i, int64(t)); c != 0 {
		return c, true
	}
	return cmpFloat(t, f)
}

// cmpUintFloat compares an unsigned integer and a float exactly.
func cmpUintFloat(u uint64, f float64) (int, bool) {
	switch {
	case math.IsNaN(f):
		return 0, false
	case f < 0:
		return 1, true
	case f >= 1<<64:
		return -1, true
	}
	t := math.Trunc(f)
	if c := cmpOrd(u, uint64(t)); c != 0 {
		return c, true
	}
	return cmpFloat(t, f)
}

// The nodes.

type orNode struct{ a, b node }

func (n *orNode) eval(r *dissect.Record) bool { return n.a.eval(r) || n.b.eval(r) }
func (n *orNode) prec() int                   { return 1 }
func (n *orNode) write(b *strings.Builder)    { writeBin(b, n.a, " || ", n.b, 1) }

type andNode struct{ a, b node }

func (n *andNode) eval(r *dissect.Record) bool { return n.a.eval(r) && n.b.eval(r) }
func (n *andNode) prec() int                   { return 2 }
func (n *andNode) write(b *strings.Builder)    { writeBin(b, n.a, " && ", n.b, 2) }

func writeBin(b *strings.Builder, x node, sep string, y node, prec int) {
	writeSub(b, x, prec)
	b.WriteString(sep)
	writeSub(b, y, prec+1) // the right operand of a || b || c nests on the left
}

func writeSub(b *strings.Builder, x node, prec int) {
	if x.prec() < prec {
		b.WriteByte('(')
		x.write(b)
		b.WriteByte(')')
		return
	}
	x.write(b)
}

type notNode struct{ a node }

func (n *notNode) eval(r *dissect.Record) bool { return !n.a.eval(r) }
func (n *notNode) prec() int                   { return 3 }
func (n *notNode) write(b *strings.Builder) {
	b.WriteByte('!')
	writeSub(b, n.a, 3)
}

// protoNode is a bare protocol name.
type protoNode struct{ proto string }

func (n *protoNode) eval(r *dissect.Record) bool { return r.Proto == n.proto }
func (n *protoNode) prec() int                   { return 4 }
func (n *protoNode) write(b *strings.Builder)    { b.WriteString(n.proto) }

// presentNode is a bare field path or record key.
type presentNode struct{ path Path }

func (n *presentNode) eval(r *dissect.Record) bool { return present(r, &n.path) }
func (n *presentNode) prec() int                   { return 4 }
func (n *presentNode) write(b *strings.Builder)    { b.WriteString(n.path.name) }

// cmpNode compares a field path with a literal.
type cmpNode struct {
	path Path
	op   op
	lit  *lit
}

func (n *cmpNode) eval(r *dissect.Record) bool {
	if n.op == opNe {
		return !anyValue(r, &n.path, func(v dissect.Value) bool { return opEq.holds(cmpLit(v, n.lit)) })
	}
	return anyValue(r, &n.path, func(v dissect.Value) bool { return n.op.holds(cmpLit(v, n.lit)) })
}
func (n *cmpNode) prec() int                { return 4 }
func (n *cmpNode) write(b *strings.Builder) { writeCmp(b, n.path.name, n.op, n.lit) }

func writeCmp(b *strings.Builder, name string, o op, l *lit) {
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(o.String())
	b.WriteByte(' ')
	b.WriteString(l.String())
}

// keyIntNode compares stream, offset or length with a number.
type keyIntNode struct {
	key string
	op  op
	lit *lit
}

func (n *keyIntNode) eval(r *dissect.Record) bool {
	var x int64
	switch n.key {
	case "stream":
		x = int64(r.Stream)
	case "offset":
		x = r.Offset
	default:
		x = r.Length
	}
	return n.op.holds(cmpIntLit(x, n.lit))
}
func (n *keyIntNode) prec() int                { return 4 }
func (n *keyIntNode) write(b *strings.Builder) { writeCmp(b, n.key, n.op, n.lit) }

// keyStrNode compares proto, type, transport, src or dst with a string.
type keyStrNode struct {
	key string
	op  op
	lit *lit
}

func (n *keyStrNode) eval(r *dissect.Record) bool {
	var s string
	switch n.key {
	case "proto":
		s = r.Proto
	case "type":
		s = r.Type
	case "transport":
		s = r.Transport.String()
	case "src":
		s = r.Src
	default:
		s = r.Dst
	}
	return n.op.holds(strings.Compare(s, n.lit.s), true)
}
func (n *keyStrNode) prec() int                { return 4 }
func (n *keyStrNode) write(b *strings.Builder) { writeCmp(b, n.key, n.op, n.lit) }

// pathCmpNode compares two paths: true when some pair of their values
// satisfies the operator (for !=: when no pair is equal).
type pathCmpNode struct {
	a, b Path
	op   op
}

func (n *pathCmpNode) eval(r *dissect.Record) bool {
	o := n.op
	if o == opNe {
		o = opEq
	}
	found := anyValue(r, &n.a, func(x dissect.Value) bool {
		return anyValue(r, &n.b, func(y dissect.Value) bool { return o.holds(cmpValues(x, y)) })
	})
	if n.op == opNe {
		return !found
	}
	return found
}
func (n *pathCmpNode) prec() int { return 4 }
func (n *pathCmpNode) write(b *strings.Builder) {
	b.WriteString(n.a.name)
	b.WriteByte(' ')
	b.WriteString(n.op.String())
	b.WriteByte(' ')
	b.WriteString(n.b.name)
}

// inNode is "path in {...}" or "path not in {...}".
type inNode struct {
	path   Path
	set    []setElem
	negate bool
}

type setElem struct {
	lo, hi *lit
	rng    bool
}

func (n *inNode) eval(r *dissect.Record) bool {
	found := anyValue(r, &n.path, func(v dissect.Value) bool {
		for i := range n.set {
			e := &n.set[i]
			if !e.rng {
				if opEq.holds(cmpLit(v, e.lo)) {
					return true
				}
			} else if opGe.holds(cmpLit(v, e.lo)) && opLe.holds(cmpLit(v, e.hi)) {
				return true
			}
		}
		return false
	})
	return found != n.negate
}
func (n *inNode) prec() int { return 4 }
func (n *inNode) write(b *strings.Builder) {
	b.WriteString(n.path.name)
	if n.negate {
		b.WriteString(" not")
	}
	b.WriteString(" in {")
	for i, e := range n.set {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.lo.String())
		if e.rng {
			b.WriteString("..")
			b.WriteString(e.hi.String())
		}
	}
	b.WriteByte('}')
}

// containsNode is "path contains string": a substring of a string, or
// bytes (given in hex) within a byte string.
type containsNode struct {
	path Path
	lit  *lit
}

func (n *containsNode) eval(r *dissect.Record) bool {
	return anyValue(r, &n.path, func(v dissect.Value) bool {
		switch v.Kind() {
		case dissect.KindString:
			return strings.Contains(v.Str(), n.lit.s)
		case dissect.KindBytes:
			return n.lit.hasHex && bytes.Contains(v.Raw(), n.lit.hex)
		}
		return false
	})
}
func (n *containsNode) prec() int { return 4 }
func (n *containsNode) write(b *strings.Builder) {
	b.WriteString(n.path.name)
	b.WriteString(" contains ")
	b.WriteString(n.lit.String())
}

// matchesNode is "path matches regexp", for strings.
type matchesNode struct {
	path Path
	re   *regexp.Regexp
}

func (n *matchesNode) eval(r *dissect.Record) bool {
	return anyValue(r, &n.path, func(v dissect.Value) bool {
		return v.Kind() == dissect.KindString && n.re.MatchString(v.Str())
	})
}
func (n *matchesNode) prec() int { return 4 }
func (n *matchesNode) write(b *strings.Builder) {
	b.WriteString(n.path.name)
	b.WriteString(" matches ")
	b.WriteString(quote(n.re.String()))
}
