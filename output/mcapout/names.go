package mcapout

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The names the writer makes from the wire: kept names, topic segments.

// maxKept is the longest name from the wire the writer keeps.
const maxKept = 128

// kept returns s, or when it is longer than maxKept a prefix of it cut at
// a character, "~" and 16 hex digits of its SHA-256: maxKept bytes at
// most, different for different names.
func kept(s string) string {
	if len(s) <= maxKept {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	suffix := "~" + hex.EncodeToString(sum[:8])
	i := maxKept - len(suffix)
	for k := 0; k < utf8.UTFMax && i > 0 && !utf8.RuneStart(s[i]); k++ {
		i--
	}
	return s[:i] + suffix
}

// senderPath is the part of a topic that k's sender and sensor add:
// "/SENDER", "/SENDER/sensorN" or "".
func senderPath(k topicKey) string {
	if k.sender == "" {
		return ""
	}
	p := "/" + seg(k.sender)
	if k.sensor >= 0 {
		p += "/sensor" + strconv.FormatInt(k.sensor, 10)
	}
	return p
}

// seg makes a name from the wire one segment of a topic name.
func seg(s string) string {
	if s == "" {
		return "_"
	}
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return r
		}
		return '_'
	}, s)
}
