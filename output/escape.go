package output

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Text from the wire (type and sender names, reasons, addresses, warnings
// that quote the wire) is hostile: it may hold terminal escape sequences
// (ESC, CSI as U+009B), bell, carriage return, line breaks, bidirectional
// overrides that reorder what is shown, or invisible characters (zero
// width, tags, fillers) that make two different names look alike. Every
// rendering passes it through
// one rule, [hidden]: the table and the summary through [appendText], JSON
// through appendString (json.go).

// hidden reports whether r must never reach a terminal as it is: C0
// controls, DEL, C1 controls (U+0080–U+009F), the Unicode line and
// paragraph separators (U+2028, U+2029), and Unicode's
// Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15):
// characters shown as nothing, among them the bidirectional formatting
// characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), zero
// width space, joiners and word joiner (U+200B–U+200D, U+2060), the byte
// order mark U+FEFF, soft hyphen U+00AD, variation selectors, Hangul
// fillers and the tag characters (U+E0000–U+E007F).
func hidden(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r < 0xa0:
		return true
	case r < 0xad:
		return false
	}
	switch {
	case r == 0xad, r == 0x34f, r == 0x61c, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5,
		r >= 0x180b && r <= 0x180f,
		r >= 0x200b && r <= 0x200f,
		r >= 0x2028 && r <= 0x202e, // separators, bidi embeddings and overrides
		r >= 0x2060 && r <= 0x206f,
		r == 0x3164,
		r >= 0xfe00 && r <= 0xfe0f,
		r == 0xfeff, r == 0xffa0,
		r >= 0xfff0 && r <= 0xfff8,
		r >= 0x1bca0 && r <= 0x1bca3,
		r >= 0x1d173 && r <= 0x1d17a,
		r >= 0xe0000 && r <= 0xe0fff:
		return true
	}
	return false
}

// Hidden reports whether r is escaped in every output ([Escape], JSON):
// a control, a line or paragraph separator, or a default-ignorable
// (invisible) character.
func Hidden(r rune) bool { return hidden(r) }

// ValidUTF8 returns s with every byte that is not part of valid UTF-8
// replaced by U+FFFD, one for each, as the JSON writer writes text: s
// itself when it is valid. Every output that must hold valid UTF-8 (the
// Parquet lake's strings and partition names) uses it, so that each
// reads as the JSON of the same record.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(AppendValidUTF8(make([]byte, 0, len(s)+2*utf8.UTFMax), s))
}

// AppendValidUTF8 appends s to b as ValidUTF8 returns it.
func AppendValidUTF8(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// AppendJSONEscape appends r as a JSON \uNNNN escape, a UTF-16 surrogate
// pair for a rune past U+FFFF.
func AppendJSONEscape(b []byte, r rune) []byte {
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		b = AppendJSONEscape(b, r1)
		return AppendJSONEscape(b, r2)
	}
	return append(b, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}

// appendText appends s for a terminal: every byte of invalid UTF-8, C0
// control and DEL is written \xNN; every other [hidden] character
// \u{NNNN} (lower-case hex). Everything else is copied as it is, so the
// result is valid UTF-8 without a hidden character.
func appendText(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		bad := r == utf8.RuneError && size == 1
		if !bad && !hidden(r) {
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		if bad || r < 0x80 {
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		} else {
			b = append(b, `\u{`...)
			b = strconv.AppendUint(b, uint64(r), 16)
			b = append(b, '}')
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

// escapeText returns s escaped by [appendText], at most max bytes of it:
// a longer result is cut at a character boundary and ends in "…".
func escapeText(s string, max int) string {
	b := appendText(make([]byte, 0, min(len(s), max)+8), s)
	if len(b) <= max {
		return string(b)
	}
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(append(b[:n], "…"...))
}

// Escape returns s as it may be written to a terminal: controls, bidi
// characters and invalid UTF-8 escaped as in the table and the summary.
// The command line uses it for error messages, which can quote file names
// and text from the wire.
func Escape(s string) string { return string(appendText(nil, s)) }
