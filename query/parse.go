package query

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// parser is a recursive-descent parser over the lexer's tokens:
//
//	or      := and { ("||" | "or") and }
//	and     := not { ("&&" | "and") not }
//	not     := ("!" | "not") not | primary
//	primary := "(" or ")" | path [ relation ] | value relop path
//	relation:= relop (value | path) | ["not"] "in" "{" elem {"," elem} "}"
//	         | "contains" value | ("matches" | "~") string
//	elem    := value | number ".." number
//	relop   := "==" | "!=" | "!==" | "<" | "<=" | ">" | ">=" | eq | ne | lt | le | gt | ge
type parser struct {
	lex   lexer
	tok   token
	known func(proto, field string) bool
	info  func(*dissect.Record) string
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) errAt(pos int, msg string) *Error {
	return &Error{Expr: p.lex.src, Pos: pos, Msg: msg}
}

func (p *parser) isOp(s string) bool { return p.tok.kind == tOp && p.tok.text == s }
func (p *parser) isKw(s string) bool { return p.tok.kind == tWord && p.tok.text == s }

// desc describes the current token for a message.
func (p *parser) desc() string {
	switch p.tok.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return "string " + quote(p.tok.text)
	case tNumber:
		return "number " + p.tok.text
	}
	return strconv.Quote(p.tok.text)
}

var keywords = map[string]bool{
	"and": true, "or": true, "not": true, "in": true, "contains": true, "matches": true,
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true, "true": true, "false": true,
}

func (p *parser) or() (node, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.isOp("||") || p.isKw("or") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		left = &orNode{left, right}
	}
	return left, nil
}

func (p *parser) and() (node, error) {
	left, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.isOp("&&") || p.isKw("and") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.not()
		if err != nil {
			return nil, err
		}
		left = &andNode{left, right}
	}
	return left, nil
}

func (p *parser) not() (node, error) {
	if p.isOp("!") || p.isKw("not") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &notNode{x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	switch {
	case p.isOp("("):
		open := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.isOp(")") {
			return nil, p.errAt(p.tok.pos, fmt.Sprintf(`expected ")" to close the "(" at column %d, got %s`, (&Error{Expr: p.lex.src, Pos: open}).Column(), p.desc()))
		}
		return x, p.advance()
	case p.tok.kind == tWord && !keywords[p.tok.text]:
		return p.test()
	case p.tok.kind == tNumber || p.tok.kind == tString || p.isKw("true") || p.isKw("false"):
		return p.literalFirst()
	case p.tok.kind == tEOF:
		return nil, p.errAt(p.tok.pos, "expression ends where a test was expected")
	}
	return nil, p.errAt(p.tok.pos, fmt.Sprintf("expected a field or protocol name, got %s", p.desc()))
}

// path resolves a word token as a field path, checking it against known.
func (p *parser) path(t token) (Path, error) {
	pa, err := ParsePath(t.text)
	if err != nil {
		msg := err.Error()
		if !strings.ContainsAny(t.text, ".[") {
			msg = fmt.Sprintf("%q is neither a record key nor a protocol name", t.text)
		}
		return pa, p.errAt(t.pos, msg)
	}
	if p.known != nil && pa.key == "" && (!p.known(pa.proto, "") || pa.Field() != "" && !p.known(pa.proto, pa.Field())) {
		if h := TSharkHint(t.text); h != "" {
			return pa, p.errAt(t.pos, fmt.Sprintf("%s is tshark's name: %s", t.text, h))
		}
		return pa, p.errAt(t.pos, fmt.Sprintf("%s is neither a field nor a protocol name", t.text))
	}
	if pa.key == "info" {
		pa.info = p.info
	}
	return pa, nil
}

// relop returns the comparison operator at the current token, if any.
func (p *parser) relop() (op, bool) {
	if p.tok.kind != tOp && p.tok.kind != tWord {
		return 0, false
	}
	switch p.tok.text {
	case "==", "eq":
		return opEq, true
	case "!=", "ne":
		return opNe, true
	case "!==":
		return opNeAny, true
	case "<", "lt":
		return opLt, true
	case "<=", "le":
		return opLe, true
	case ">", "gt":
		return opGt, true
	case ">=", "ge":
		return opGe, true
	}
	return 0, false
}

// test parses a test that starts with a path.
func (p *parser) test() (node, error) {
	pt := p.tok
	pa, err := p.path(pt)
	if err != nil {
		return nil, err
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if o, ok := p.relop(); ok {
		opTok := p.tok
		if err := p.advance(); err != nil {
			return nil, err
		}
		return p.comparison(pa, o, opTok)
	}
	switch {
	case p.isKw("in"):
		return p.in(pa, false)
	case p.isKw("not"):
		save, saveTok := p.lex, p.tok
		if err := p.advance(); err == nil && p.isKw("in") {
			return p.in(pa, true)
		}
		p.lex, p.tok = save, saveTok
	case p.isKw("contains"):
		at := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != tString && (p.tok.kind != tWord || keywords[p.tok.text]) {
			return nil, p.errAt(p.tok.pos, fmt.Sprintf("contains takes a string, got %s", p.desc()))
		}
		if k := keyKind(pa.key); k == kindNum || k == kindTime || k == kindSecs {
			return nil, p.errAt(at, fmt.Sprintf("contains applies to strings and byte strings, and %s is a %s", pa.key, k))
		}
		l := strLit(p.tok.text, p.tok.kind == tWord)
		return &containsNode{path: pa, lit: l}, p.advance()
	case p.isKw("matches") || p.isOp("~"):
		at := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind != tString {
			return nil, p.errAt(p.tok.pos, fmt.Sprintf("matches takes a regular expression in double quotes, got %s", p.desc()))
		}
		if k := keyKind(pa.key); k == kindNum || k == kindTime || k == kindSecs {
			return nil, p.errAt(at, fmt.Sprintf("matches applies to strings, and %s is a %s", pa.key, k))
		}
		re, err := regexp.Compile(p.tok.text)
		if err != nil {
			msg := err.Error()
			var se *syntax.Error
			if errors.As(err, &se) {
				msg = fmt.Sprintf("%s: %s", se.Code, quote(se.Expr))
			}
			return nil, p.errAt(p.tok.pos, "bad regular expression: "+msg)
		}
		return &matchesNode{path: pa, re: re}, p.advance()
	}
	if pa.key == "" && len(pa.steps) == 0 {
		return &protoNode{proto: pa.proto}, nil
	}
	return &presentNode{path: pa}, nil
}

// literalFirst parses "value relop path", the mirror of a comparison.
func (p *parser) literalFirst() (node, error) {
	vt := p.tok
	if err := p.advance(); err != nil {
		return nil, err
	}
	o, ok := p.relop()
	if !ok {
		return nil, p.errAt(vt.pos, "a test starts with a field or protocol name (a value must be compared with one)")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind != tWord || keywords[p.tok.text] {
		return nil, p.errAt(p.tok.pos, fmt.Sprintf("expected a field name to compare with, got %s", p.desc()))
	}
	pt := p.tok
	pa, err := p.path(pt)
	if err != nil {
		return nil, err
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	l, err := p.value(vt)
	if err != nil {
		return nil, err
	}
	mirror := map[op]op{opLt: opGt, opLe: opGe, opGt: opLt, opGe: opLe}
	if m, ok := mirror[o]; ok {
		o = m
	}
	return p.build(pa, o, vt.pos, l)
}

// comparison parses the right side of "path relop" and builds the test.
func (p *parser) comparison(pa Path, o op, opTok token) (node, error) {
	t := p.tok
	if t.kind == tWord && !keywords[t.text] && (IsRecordKey(t.text) || strings.ContainsAny(t.text, ".[")) {
		pb, err := p.path(t)
		if err != nil {
			return nil, err
		}
		ka, kb := keyKind(pa.key), keyKind(pb.key)
		if ka != kindAny && kb != kindAny && ka != kb {
			return nil, p.errAt(t.pos, fmt.Sprintf("%s is a %s and %s is a %s: they never compare", pa.key, ka, pb.key, kb))
		}
		return &pathCmpNode{a: pa, b: pb, op: o}, p.advance()
	}
	if t.kind == tEOF || t.kind == tOp || t.kind == tWord && keywords[t.text] && t.text != "true" && t.text != "false" {
		return nil, p.errAt(t.pos, fmt.Sprintf("expected a value after %s, got %s", opTok.text, p.desc()))
	}
	var l *lit
	var err error
	if pa.env != nil && pa.env.Addr && t.kind != tWord {
		l, err = p.addr(t)
	} else {
		l, err = p.value(t)
	}
	if err != nil {
		return nil, err
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	return p.build(pa, o, t.pos, l)
}

// addr reads an IP address literal, quoted or not (ip.src == 10.0.0.1), in
// the canonical form the records' endpoints are written in, so that
// 2001:DB8:0::1 finds 2001:db8::1.
func (p *parser) addr(t token) (*lit, error) {
	a, err := netip.ParseAddr(t.text)
	if err != nil {
		return nil, p.errAt(t.pos, fmt.Sprintf("%s is not an IP address (10.0.0.1, \"2001:db8::1\"; prefixes such as /24 are not supported)", quote(t.text)))
	}
	return strLit(a.String(), false), nil
}

// in parses "in {...}" (the current token is "in").
func (p *parser) in(pa Path, negate bool) (node, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if !p.isOp("{") {
		return nil, p.errAt(p.tok.pos, fmt.Sprintf(`expected "{" after in, got %s`, p.desc()))
	}
	n := &inNode{path: pa, negate: negate}
	for {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.isOp("}") && len(n.set) == 0 {
			return nil, p.errAt(p.tok.pos, "empty set")
		}
		t := p.tok
		if t.kind == tEOF || t.kind == tOp || t.kind == tWord && (keywords[t.text] && t.text != "true" && t.text != "false" || strings.ContainsAny(t.text, ".[")) {
			return nil, p.errAt(t.pos, fmt.Sprintf("expected a value in the set, got %s", p.desc()))
		}
		lo, err := p.value(t)
		if err != nil {
			return nil, err
		}
		if err := p.check(pa, opEq, t.pos, lo); err != nil {
			return nil, err
		}
		e := setElem{lo: lo}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.isOp("..") {
			if err := p.advance(); err != nil {
				return nil, err
			}
			ht := p.tok
			if lo.kind != litNum || ht.kind != tNumber {
				return nil, p.errAt(ht.pos, "a range in a set is number..number")
			}
			hi, err := p.value(ht)
			if err != nil {
				return nil, err
			}
			e.hi, e.rng = hi, true
			if err := p.advance(); err != nil {
				return nil, err
			}
		}
		n.set = append(n.set, e)
		if p.isOp("}") {
			return n, p.advance()
		}
		if !p.isOp(",") {
			return nil, p.errAt(p.tok.pos, fmt.Sprintf(`expected "," or "}" in the set, got %s`, p.desc()))
		}
	}
}

// value converts a literal token.
func (p *parser) value(t token) (*lit, error) {
	switch {
	case t.kind == tNumber:
		l, msg := numLit(t.text)
		if msg != "" {
			return nil, p.errAt(t.pos, msg)
		}
		return l, nil
	case t.kind == tString:
		return strLit(t.text, false), nil
	case t.kind == tWord && (t.text == "true" || t.text == "false"):
		return &lit{kind: litBool, b: t.text == "true"}, nil
	case t.kind == tWord:
		return strLit(t.text, true), nil
	}
	return nil, p.errAt(t.pos, fmt.Sprintf("expected a value, got %s", p.desc()))
}

// check rejects comparisons that can never hold, where this is known
// before any record is seen.
func (p *parser) check(pa Path, o op, pos int, l *lit) error {
	if l.kind == litBool && o != opEq && o != opNe && o != opNeAny {
		return p.errAt(pos, "true and false compare only with == and !=")
	}
	k := keyKind(pa.key)
	switch {
	case k == kindStr && l.kind != litStr:
		return p.errAt(pos, fmt.Sprintf("%s is a string: compare it with a string", pa.key))
	case k == kindNum && l.kind != litNum:
		return p.errAt(pos, fmt.Sprintf("%s is a number: compare it with a number", pa.key))
	case k == kindTime && l.kind == litBool:
		return p.errAt(pos, "time is an instant: compare it with seconds since 1970 or an RFC 3339 string")
	case k == kindSecs && l.kind != litNum:
		return p.errAt(pos, fmt.Sprintf("%s is seconds: compare it with a number of seconds (time_relative > 2.5)", pa.key))
	case k == kindTime && l.kind == litStr && !l.hasTime:
		return p.errAt(pos, fmt.Sprintf("%s is not an RFC 3339 time (2026-11-21T08:08:19Z)", quote(l.s)))
	}
	return nil
}

// build makes a comparison of a path with a literal.
func (p *parser) build(pa Path, o op, pos int, l *lit) (node, error) {
	if err := p.check(pa, o, pos, l); err != nil {
		return nil, err
	}
	switch pa.key {
	case "stream", "offset", "length":
		return &keyIntNode{key: pa.key, op: o, lit: l}, nil
	case "proto", "type", "transport", "src", "dst":
		return &keyStrNode{key: pa.key, op: o, lit: l}, nil
	}
	return &cmpNode{path: pa, op: o, lit: l}, nil
}

// The kinds of the record keys, for checks at compile time.
type keyKindT uint8

const (
	kindAny keyKindT = iota // a field: any kind
	kindStr
	kindNum
	kindTime
	kindSecs // time_epoch, time_relative
)

func (k keyKindT) String() string {
	return [...]string{"field", "string", "number", "instant", "number of seconds"}[k]
}

func keyKind(key string) keyKindT {
	k, ok := dissect.LookupEnvelope(key)
	switch {
	case !ok:
		return kindAny
	case k.Kind == dissect.KindInt:
		return kindNum
	case k.Kind == dissect.KindTime && k.Seconds:
		return kindSecs
	case k.Kind == dissect.KindTime:
		return kindTime
	case k.Kind == dissect.KindString:
		return kindStr
	}
	return kindAny
}

// litKind is the kind of a literal.
type litKind uint8

const (
	litNum litKind = iota
	litStr
	litBool
)

// lit is a literal with every form a comparison may need, prepared at
// compile time.
type lit struct {
	kind litKind
	text string // a number as written

	isInt  bool    // integer literal in int64 range: i
	isUint bool    // integer literal above MaxInt64: u
	i      int64   //
	u      uint64  //
	f      float64 // every number, nearest float64
	f32    float64 // f rounded to float32, to compare float32 fields

	hasTime  bool  // a number, or a string in RFC 3339
	tlo, thi int64 // nanoseconds since 1970: floor and ceiling

	s      string // a string
	word   bool   // given as a bare word
	hasHex bool   // s is hex (pairs of digits, optionally ':'-separated): hex
	hex    []byte //

	b bool
}

func (l *lit) String() string {
	switch l.kind {
	case litNum:
		return l.text
	case litBool:
		return strconv.FormatBool(l.b)
	}
	return quote(l.s)
}

func strLit(s string, word bool) *lit {
	l := &lit{kind: litStr, s: s, word: word}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		ns := dissect.Time(t).Int()
		l.hasTime, l.tlo, l.thi = true, ns, ns
	}
	l.hex, l.hasHex = decodeHex(s)
	return l
}

// decodeHex decodes pairs of hex digits, all separated by ':' or none
// ("0a1b", "0a:1b"; "" is no bytes).
func decodeHex(s string) ([]byte, bool) {
	sep := strings.Contains(s, ":")
	out := make([]byte, 0, len(s)/2)
	for i := 0; i < len(s); {
		if i+1 >= len(s) || !isHex(s[i]) || !isHex(s[i+1]) {
			return nil, false
		}
		out = append(out, unhex(s[i])<<4|unhex(s[i+1]))
		i += 2
		if sep && i < len(s) {
			if s[i] != ':' || i+1 == len(s) {
				return nil, false
			}
			i++
		}
	}
	return out, true
}

// numLit parses a number literal; it returns a message when it is bad.
func numLit(text string) (*lit, string) {
	l := &lit{kind: litNum, text: text}
	neg := strings.HasPrefix(text, "-")
	body := strings.TrimPrefix(text, "-")
	bad := fmt.Sprintf("bad number %q", text)
	if strings.ContainsAny(body, ":") || strings.Count(body, ".") > 1 {
		bad += " (quote addresses and other strings)"
	}
	tooLarge := fmt.Sprintf("number %s is too large (integers are 64-bit)", text)
	switch {
	case strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X"):
		u, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			if strings.Contains(err.Error(), "range") {
				return nil, tooLarge
			}
			return nil, bad
		}
		l.setUint(u, neg)
		if neg && u > 1<<63 {
			return nil, tooLarge
		}
	case strings.ContainsAny(body, ".eE"):
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || strings.ContainsAny(body, "_xXpPiInN") {
			if err != nil && strings.Contains(err.Error(), "range") {
				return nil, fmt.Sprintf("number %s is out of the float64 range", text)
			}
			return nil, bad
		}
		l.f, l.f32 = f, float64(float32(f))
		l.tlo, l.thi = floatNanos(text, f)
		l.hasTime = true
		return l, ""
	default:
		for i := 0; i < len(body); i++ {
			if !isDigit(body[i]) {
				return nil, bad
			}
		}
		u, err := strconv.ParseUint(body, 10, 64)
		if err != nil || neg && u > 1<<63 {
			return nil, tooLarge
		}
		l.setUint(u, neg)
	}
	switch {
	case l.isInt:
		l.f = float64(l.i)
		l.tlo = satMul(l.i)
	default:
		l.f = float64(l.u)
		l.tlo = math.MaxInt64
	}
	l.f32 = float64(float32(l.f))
	l.thi, l.hasTime = l.tlo, true
	return l, ""
}

// setUint sets an integer literal of magnitude u.
func (l *lit) setUint(u uint64, neg bool) {
	switch {
	case neg:
		l.isInt, l.i = true, -int64(u) // u == 1<<63 gives MinInt64
	case u <= math.MaxInt64:
		l.isInt, l.i = true, int64(u)
	default:
		l.isUint, l.u = true, u
	}
}

// satMul returns seconds s as nanoseconds, saturated.
func satMul(s int64) int64 {
	const g = int64(1e9)
	switch {
	case s > math.MaxInt64/g:
		return math.MaxInt64
	case s < math.MinInt64/g:
		return math.MinInt64
	}
	return s * g
}

// floatNanos returns floor and ceiling of the decimal number text of
// seconds, as nanoseconds (saturated).
func floatNanos(text string, f float64) (lo, hi int64) {
	switch {
	case f >= 9.3e9:
		return math.MaxInt64, math.MaxInt64
	case f <= -9.3e9:
		return math.MinInt64, math.MinInt64
	}
	if e := strings.IndexAny(text, "eE"); e >= 0 && len(strings.TrimLeft(text[e+1:], "+-0")) > 2 {
		// A tiny exponent: keep it from costing a huge big.Rat.
		x := f * 1e9
		return int64(math.Floor(x)), int64(math.Ceil(x))
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		x := f * 1e9
		return int64(math.Floor(x)), int64(math.Ceil(x))
	}
	r.Mul(r, big.NewRat(1e9, 1))
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	lo = q.Int64()
	hi = lo
	if m.Sign() != 0 {
		hi++
	}
	return lo, hi
}
