package output

import (
	"strconv"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Display width. Text reaching a table is escaped ([appendText]), so every
// rune is printable. Every table dissect draws (records, statistics, the
// summary, the protocol list) measures text with this one rule:
// go-runewidth's (Unicode's East Asian Width and emoji data, combining
// marks 0 columns) under a fixed condition, not the locale's, so that a
// table is laid out the same whatever LANG says: ambiguous-width characters
// take one column, as on every Western terminal.

// runeWidth returns the number of columns r takes on a terminal.
func runeWidth(r rune) int {
	if r < 0x300 {
		return 1
	}
	var c runewidth.Condition // EastAsianWidth false: ambiguous is narrow
	return c.RuneWidth(r)
}

// textWidth returns the display width of b.
func textWidth(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		n += runeWidth(r)
		i += size
	}
	return n
}

// DisplayWidth returns the number of terminal columns s takes (the rule
// above): what every table of dissect measures text with.
func DisplayWidth(s string) int { return stringWidth(s) }

// CutWidth shortens s to at most n columns, ending it in an ellipsis ("…",
// or "..." with ascii) when it is cut.
func CutWidth(s string, n int, ascii bool) string {
	if stringWidth(s) <= n {
		return s
	}
	ell := "…"
	if ascii {
		ell = "..."[:min(3, max(n, 0))]
	}
	ew := stringWidth(ell)
	if n <= ew {
		return ell
	}
	k, _ := headLen([]byte(s), n-ew)
	return s[:k] + ell
}

// stringWidth is textWidth of a string.
func stringWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// headLen returns the length in bytes of the longest prefix of b at most
// n columns wide, and its width.
func headLen(b []byte, n int) (int, int) {
	w := 0
	for i := 0; i < len(b); {
		r, size := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(b[i:])
		}
		rw := runeWidth(r)
		if w+rw > n {
			return i, w
		}
		w += rw
		i += size
	}
	return len(b), w
}

// tailLen returns the length in bytes of the longest suffix of b at most
// n columns wide, and its width.
func tailLen(b []byte, n int) (int, int) {
	w := 0
	for i := len(b); i > 0; {
		r, size := rune(b[i-1]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeLastRune(b[:i])
		}
		rw := runeWidth(r)
		if w+rw > n {
			return len(b) - i, w
		}
		w += rw
		i -= size
	}
	return len(b), w
}

// ellipsis returns the mark of cut text: "…", or "..." in ASCII, shortened
// to n columns when the column is narrower than that.
func (t *Table) ellipsis(n int) string {
	if !t.ascii {
		return "…"
	}
	return "..."[:min(3, n)]
}

// cutHead cuts b[from:] to at most n columns, keeping its beginning and
// ending it in an ellipsis. It returns b and the column's width.
func (t *Table) cutHead(b []byte, from, n int) ([]byte, int) {
	w := textWidth(b[from:])
	if w <= n {
		return b, w
	}
	ell := t.ellipsis(n)
	ew := stringWidth(ell)
	k, kw := headLen(b[from:], n-ew)
	return append(b[:from+k], ell...), kw + ew
}

// cutTail cuts b[from:] to at most n columns keeping its end, after an
// ellipsis (stream numbers, device paths: the end tells them apart).
func (t *Table) cutTail(b []byte, from, n int) ([]byte, int) {
	w := textWidth(b[from:])
	if w <= n {
		return b, w
	}
	ell := t.ellipsis(n)
	ew := stringWidth(ell)
	k, kw := tailLen(b[from:], n-ew)
	t.tmp = append(t.tmp[:0], b[len(b)-k:]...)
	b = append(append(b[:from], ell...), t.tmp...)
	return b, kw + ew
}

// cutMiddle shortens b[from:] to at most n columns by replacing its middle
// by an ellipsis (an address: its start and end both matter, its end more:
// a third of the room goes to the start, the rest to the end).
func (t *Table) cutMiddle(b []byte, from, n int) ([]byte, int) {
	w := textWidth(b[from:])
	if w <= n {
		return b, w
	}
	ell := t.ellipsis(n)
	ew := stringWidth(ell)
	room := n - ew
	seg := b[from:]
	h, hw := headLen(seg, max(room/3, min(room, 1)))
	k, kw := tailLen(seg[h:], room-hw)
	t.tmp = append(t.tmp[:0], seg[len(seg)-k:]...)
	b = append(append(b[:from+h], ell...), t.tmp...)
	return b, hw + ew + kw
}

// asciiFor are the replacements of the non-ASCII characters that dissect
// itself writes; any other character becomes \u{NNNN}, like the
// characters [appendText] escapes.
func asciiFor(r rune) string {
	switch r {
	case '→':
		return "->"
	case '←':
		return "<-"
	case '↔':
		return "<->"
	case '…':
		return "..."
	case '°':
		return "deg"
	case 'µ':
		return "u"
	case '—', '–':
		return "-"
	}
	return ""
}

// appendASCII appends s with every character that is not ASCII replaced
// ([asciiFor]).
func appendASCII(b []byte, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		i += size
		if a := asciiFor(r); a != "" {
			b = append(b, a...)
			continue
		}
		if r == utf8.RuneError && size == 1 {
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
			continue
		}
		b = append(b, `\u{`...)
		b = strconv.AppendUint(b, uint64(r), 16)
		b = append(b, '}')
	}
	return b
}

// asciiOnly reports whether b is ASCII.
func asciiOnly(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// ASCII returns s with every character that is not ASCII replaced: the
// arrows and the ellipsis by "->", "<-" and "...", others by \u{NNNN}.
// For terminals whose locale is not UTF-8.
func ASCII(s string) string {
	if asciiOnly([]byte(s)) {
		return s
	}
	return string(appendASCII(nil, []byte(s)))
}
