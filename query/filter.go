package query

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
)

// A Filter is a compiled display filter (dissect -Y EXPR): a test of a
// decoded record in the spirit of tshark's display filters. The language
// is described in docs/display-filters.md; in short:
//
//   - Names are record keys (proto, type, stream, transport, src, dst,
//     time, offset, length) and field paths as in JSON, prefixed by the
//     protocol ([ParsePath]): deltarobot.x, vrpn.pos[0], vrpn.quat.w,
//     roboid.values[0].semantics, roboid.values.semantics (every element).
//   - A bare name tests presence: a protocol name is true for its records,
//     a field path when the record has the field, a record key always.
//   - Comparisons == != < <= > >= (and eq ne lt le gt ge), in {a, b, 1..5},
//     not in {...}, contains, matches (Go RE2; ~ is a synonym), and !==.
//   - && and, || or, ! not, parentheses; not binds tighter than and, and
//     tighter than or.
//   - Literals: integers (decimal, 0x hex, negative), floats (1.5, 1e-3),
//     strings in double quotes with \" \\ \n \t \r \xNN, true and false.
//     On the right of a comparison a word that is not a record key and has
//     no dot or bracket is a string: type == ping, proto == vrpn.
//
// A path that names several values (an array, or a step through an array)
// matches when any of them does; a != b is !(a == b) (tshark 4), and
// a !== b is "some value differs". A comparison with an absent field is
// false. Numbers compare exactly across signed, unsigned and float kinds;
// NaN equals nothing and is ordered with nothing. Byte strings compare with
// the lowercase or uppercase hex that JSON shows ("0a1b", also "0a:1b").
// Instants (time, vrpn.sent) compare with a number of seconds since 1970 or
// an RFC 3339 string. A comparison of values of different kinds is false
// (an error at compile time when both sides are record keys or literals of
// known kind).
//
// A Filter is immutable; Match allocates nothing for ordinary filters (a
// regular expression may use its own pooled state), and may be called from
// several goroutines at once.
type Filter struct {
	expr string
	root node
}

// Error is a display filter that does not compile.
type Error struct {
	Expr string // the expression
	Pos  int    // byte offset of the offending place, 0-based
	Msg  string
}

// Column returns the 1-based column of Pos, counted in characters.
func (e *Error) Column() int {
	p := min(max(e.Pos, 0), len(e.Expr))
	return utf8.RuneCountInString(e.Expr[:p]) + 1
}

// Error returns "at column N: MSG".
// Control characters in Msg are written as '?', so the message is one line.
func (e *Error) Error() string {
	msg := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			return '?'
		}
		return r
	}, e.Msg)
	return fmt.Sprintf("at column %d: %s", e.Column(), msg)
}

// Caret returns the expression and, on a second line, a caret under the
// offending place. Control characters of the expression are shown as
// spaces so that the caret stays aligned.
func (e *Error) Caret() string {
	var b strings.Builder
	for _, r := range e.Expr {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			r = ' '
		}
		b.WriteRune(r)
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", e.Column()-1))
	b.WriteByte('^')
	return b.String()
}

// Compile parses expr. known, when not nil, says whether a protocol name
// and a field key exist (field "" asks about the protocol alone); Compile
// then rejects unknown names ("deltarobot.xx is neither a field nor a
// protocol name"). Only the first field key of a path is checked. Errors
// are of type *[Error].
func Compile(expr string, known func(proto, field string) bool) (*Filter, error) {
	return CompileWith(expr, Options{Known: known})
}

// Options say what [CompileWith] knows beyond the expression.
type Options struct {
	// Known is Compile's known.
	Known func(proto, field string) bool
	// Info returns the one-line summary of a record (the table's INFO
	// column), the value of info (tshark's _ws.col.Info); without it, info
	// names no value.
	Info func(*dissect.Record) string
}

// CompileWith is [Compile] with o.
func CompileWith(expr string, o Options) (*Filter, error) {
	p := &parser{lex: lexer{src: expr}, known: o.Known, info: o.Info}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tEOF {
		return nil, &Error{Expr: expr, Pos: 0, Msg: "empty expression"}
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		msg := fmt.Sprintf("unexpected %s after a complete expression", p.desc())
		if p.tok.kind == tOp && p.tok.text == ")" {
			msg = `unbalanced ")"`
		} else if p.tok.kind == tWord || p.tok.kind == tNumber {
			msg += " (quote a string that has spaces, and join tests with && or ||)"
		}
		return nil, p.errAt(p.tok.pos, msg)
	}
	return &Filter{expr: expr, root: n}, nil
}

// Match reports whether r passes the filter.
func (f *Filter) Match(r *dissect.Record) bool { return f.root.eval(r) }

// Func returns f.Match as a function.
func (f *Filter) Func() func(*dissect.Record) bool { return f.Match }

// String returns the filter in a canonical form, which compiles to an
// equivalent filter: fully decided (bare words quoted as strings, keyword
// operators as symbols), with parentheses only where needed.
func (f *Filter) String() string {
	var b strings.Builder
	f.root.write(&b)
	return b.String()
}

// Expr returns the expression as it was given to Compile.
func (f *Filter) Expr() string { return f.expr }
