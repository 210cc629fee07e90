package filter

import (
	"fmt"
	"net/netip"
	"strings"
)

// tokKind is the lexical class of a token.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tLParen         // (
	tRParen         // )
	tNot            // not, !
	tAnd            // and, &&
	tOr             // or, ||
	tSlash          // /
	tNum            // number: decimal, 0x hex or 0 octal, as in C
	tHID            // dotted IPv4 address or prefix: 2 to 4 decimal parts
	tHID6           // IPv6 address
	tWord           // keyword or name
	tErr            // a lexical error (text is the message); ends the tokens
)

// token is one lexical token; pos is its 1-based byte position.
type token struct {
	kind tokKind
	pos  int
	text string
	num  uint32     // tNum
	addr netip.Addr // tHID6
}

func (t token) describe() string {
	if t.kind == tEOF {
		return "end of expression"
	}
	return fmt.Sprintf("%q", t.text)
}

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':'
}

func isWordByte(c byte) bool {
	return isWordStart(c) || c == '.' || c == '-' || c == '_'
}

// lex splits expr into tokens, ending with a tEOF token. A lexical error
// becomes a tErr token followed by tEOF, so that the parser reports the
// first error in the text, whether lexical or not.
func lex(expr string) []token {
	var toks []token
	fail := func(pos int, format string, args ...any) []token {
		return append(toks, token{kind: tErr, pos: pos, text: fmt.Sprintf(format, args...)}, token{kind: tEOF, pos: len(expr) + 1})
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		pos := i + 1
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			toks = append(toks, token{kind: tLParen, pos: pos, text: "("})
			i++
		case c == ')':
			toks = append(toks, token{kind: tRParen, pos: pos, text: ")"})
			i++
		case c == '/':
			toks = append(toks, token{kind: tSlash, pos: pos, text: "/"})
			i++
		case c == '!' && !strings.HasPrefix(expr[i:], "!="):
			toks = append(toks, token{kind: tNot, pos: pos, text: "!"})
			i++
		case strings.HasPrefix(expr[i:], "&&"):
			toks = append(toks, token{kind: tAnd, pos: pos, text: "&&"})
			i += 2
		case strings.HasPrefix(expr[i:], "||"):
			toks = append(toks, token{kind: tOr, pos: pos, text: "||"})
			i += 2
		case c == '[' || c == ']' || c == '<' || c == '>' || c == '=' || c == '!' ||
			c == '&' || c == '|' || c == '+' || c == '*' || c == '^' || c == '-':
			return fail(pos, "packet-data and arithmetic expressions (such as \"tcp[13] & 2 != 0\") are not supported")
		case isWordStart(c):
			j := i
			for j < len(expr) && isWordByte(expr[j]) {
				j++
			}
			t, msg := classify(expr[i:j], pos)
			if msg != "" {
				return fail(pos, "%s", msg)
			}
			toks = append(toks, t)
			i = j
		default:
			if c >= 0x80 || c < 0x20 {
				return fail(pos, "unexpected byte 0x%02x", c)
			}
			return fail(pos, "unexpected character %q", c)
		}
	}
	return append(toks, token{kind: tEOF, pos: len(expr) + 1})
}

// classify turns a word into a number, an address or a word token, or
// returns an error message.
func classify(w string, pos int) (token, string) {
	t := token{pos: pos, text: w}
	fail := func(format string, args ...any) (token, string) {
		return t, fmt.Sprintf(format, args...)
	}
	switch {
	case w == "and":
		t.kind = tAnd
	case w == "or":
		t.kind = tOr
	case w == "not":
		t.kind = tNot
	case strings.IndexByte(w, ':') >= 0:
		a, err := netip.ParseAddr(w)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return fail("invalid IPv6 address %q", w)
		}
		t.kind, t.addr = tHID6, a
	case isNumber(w):
		v, err := parseNumber(w)
		if err != nil {
			return fail("%s", err)
		}
		t.kind, t.num = tNum, v
	case strings.Trim(w, "0123456789.") == "":
		if _, _, ok := parseDotted(w); !ok {
			return fail("invalid IPv4 address %q", w)
		}
		t.kind = tHID
	default:
		t.kind = tWord
	}
	return t, ""
}

// isNumber reports whether w is a number token: decimal digits, or 0x
// followed by hex digits.
func isNumber(w string) bool {
	if len(w) > 2 && (w[:2] == "0x" || w[:2] == "0X") {
		return strings.Trim(w[2:], "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(w, "0123456789") == ""
}

// parseNumber reads a number as libpcap does: 0x hex, leading-zero octal,
// else decimal, at most 32 bits.
func parseNumber(w string) (uint32, error) {
	base, digits := uint64(10), w
	switch {
	case len(w) > 2 && (w[:2] == "0x" || w[:2] == "0X"):
		base, digits = 16, w[2:]
	case len(w) > 1 && w[0] == '0':
		base, digits = 8, w[1:]
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			d = uint64(c-'A') + 10
		}
		if d >= base {
			return 0, fmt.Errorf("number %s contains non-octal digit", w)
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, fmt.Errorf("number %s overflows 32 bits", w)
		}
	}
	return uint32(v), nil
}

// parseDotted reads a dotted IPv4 address or prefix of 2 to 4 decimal parts
// (each at most 255), as libpcap does: the value of the parts read
// big-endian, and the number of bits they give (8 per part).
func parseDotted(w string) (v uint32, bits int, ok bool) {
	parts := strings.Split(w, ".")
	if len(parts) < 2 || len(parts) > 4 {
		return 0, 0, false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 {
			return 0, 0, false
		}
		n := 0
		for i := 0; i < len(p); i++ {
			n = n*10 + int(p[i]-'0')
		}
		if n > 255 {
			return 0, 0, false
		}
		v = v<<8 | uint32(n)
	}
	return v, 8 * len(parts), true
}
