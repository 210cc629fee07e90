package query

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a token of a display filter.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tWord           // a name: a field path, a keyword, or a bare string
	tNumber         // text as written, checked by the parser
	tString         // a quoted string, its escapes decoded
	tOp             // an operator or punctuation: == != !== < <= > >= && || ! ~ ( ) { } , ..
)

type token struct {
	kind tokKind
	pos  int    // byte offset in the expression
	text string // tWord, tNumber, tOp: as written; tString: the decoded value
}

// lexer splits a display filter into tokens.
type lexer struct {
	src string
	pos int
}

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isWordByte(c byte) bool {
	return isWordStart(c) || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '[' || c == ']'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next returns the next token, or an error at the offending byte.
func (l *lexer) next() (token, error) {
	s := l.src
	for l.pos < len(s) && (s[l.pos] == ' ' || s[l.pos] == '\t' || s[l.pos] == '\n' || s[l.pos] == '\r') {
		l.pos++
	}
	start := l.pos
	if start == len(s) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := s[start]
	switch {
	case isWordStart(c):
		i := start + 1
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
		l.pos = i
		return token{kind: tWord, pos: start, text: s[start:i]}, nil
	case isDigit(c) || (c == '-' || c == '.') && start+1 < len(s) && isDigit(s[start+1]):
		i := start + 1
		for i < len(s) {
			d := s[i]
			if d == '.' && i+1 < len(s) && s[i+1] == '.' {
				break // a range: 1..5
			}
			if (d == '+' || d == '-') && (s[i-1] == 'e' || s[i-1] == 'E') && !strings.HasPrefix(strings.TrimPrefix(s[start:], "-"), "0x") {
				i++
				continue
			}
			if !(isDigit(d) || d == '.' || d == '_' || d == ':' || isWordStart(d)) {
				break
			}
			i++
		}
		l.pos = i
		return token{kind: tNumber, pos: start, text: s[start:i]}, nil
	case c == '"':
		return l.str()
	}
	for _, op := range [...]string{"!==", "==", "!=", "<=", ">=", "&&", "||", "..", "<", ">", "!", "~", "(", ")", "{", "}", ","} {
		if strings.HasPrefix(s[start:], op) {
			l.pos += len(op)
			return token{kind: tOp, pos: start, text: op}, nil
		}
	}
	switch c {
	case '=':
		return token{}, &Error{Expr: s, Pos: start, Msg: `unknown operator "=" (use == to compare)`}
	case '&':
		return token{}, &Error{Expr: s, Pos: start, Msg: `unknown operator "&" (use && or and)`}
	case '|':
		return token{}, &Error{Expr: s, Pos: start, Msg: `unknown operator "|" (use || or or)`}
	case '\'':
		return token{}, &Error{Expr: s, Pos: start, Msg: `strings are in double quotes ("...")`}
	}
	r, _ := utf8.DecodeRuneInString(s[start:])
	if r == utf8.RuneError {
		return token{}, &Error{Expr: s, Pos: start, Msg: fmt.Sprintf("unexpected byte 0x%02x", c)}
	}
	return token{}, &Error{Expr: s, Pos: start, Msg: fmt.Sprintf("unexpected character %q", r)}
}

// str reads a double-quoted string with the escapes \" \\ \n \t \r \xNN.
func (l *lexer) str() (token, error) {
	s := l.src
	start := l.pos
	var b strings.Builder
	i := start + 1
	for i < len(s) {
		c := s[i]
		switch c {
		case '"':
			l.pos = i + 1
			return token{kind: tString, pos: start, text: b.String()}, nil
		case '\\':
			if i+1 >= len(s) {
				return token{}, &Error{Expr: s, Pos: start, Msg: "unterminated string"}
			}
			switch s[i+1] {
			case '"', '\\':
				b.WriteByte(s[i+1])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x':
				if i+3 < len(s) && isHex(s[i+2]) && isHex(s[i+3]) {
					b.WriteByte(unhex(s[i+2])<<4 | unhex(s[i+3]))
					i += 4
					continue
				}
				return token{}, &Error{Expr: s, Pos: i, Msg: `bad escape: \x takes two hex digits`}
			default:
				r, _ := utf8.DecodeRuneInString(s[i+1:])
				esc := `\` + string(r)
				if !unicode.IsPrint(r) {
					esc = fmt.Sprintf(`\ before %U`, r)
				}
				return token{}, &Error{Expr: s, Pos: i, Msg: fmt.Sprintf(`unknown escape %s (use \" \\ \n \t \r \xNN)`, esc)}
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return token{}, &Error{Expr: s, Pos: start, Msg: "unterminated string"}
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// quote writes s as a string literal the lexer reads back: printable UTF-8
// as is, \" \\ \n \t \r, and \xNN for every other byte below 0x20, DEL and
// every byte of invalid UTF-8.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c >= 0x80:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		default:
			b.WriteByte(c)
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}
