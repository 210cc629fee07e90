package output

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
)

// hostile are strings a capture can carry in any text it gives dissect:
// terminal escapes (clear screen, retitle, CSI as C1), bell, CR/LF, bidi
// overrides and isolates, invalid UTF-8.
var hostile = []string{
	"\x1b[2J\x1b[H",
	"\x1b]0;pwned\x07",
	"\u009b31m",
	"evil\u202ecod.exe",
	"a\rb\nc\td\x00e\x7f",
	"\u2066iso\u2069\u200e\u200f\u061c",
	"\xff\xfe\xc3",
	"\u2028\u2029",
	"\xc2\x9b", // U+009B encoded
	"caméra 日本",
	// Invisible characters that make look-alike names: zero width space,
	// BOM, soft hyphen, Hangul filler, variation selector, tag characters.
	"ad\u200bmin\ufeff\u00ad\u3164\ufe0f",
	"admin\U000e0061\U000e007f",
}

// forbidden is the rule the outputs are checked against, written from the
// Unicode tables rather than from the package's own list: controls (C0,
// DEL, C1), bidirectional controls, line and paragraph separators, and
// Default_Ignorable_Code_Point.
func forbidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' ||
		defaultIgnorable(r)
}

// defaultIgnorable is Default_Ignorable_Code_Point as
// DerivedCoreProperties.txt derives it: Other_Default_Ignorable_Code_Point
// + Cf + Variation_Selector - White_Space - FFF9..FFFB (interlinear
// annotation) - 13430..13440 (Egyptian hieroglyph format controls) -
// Prepended_Concatenation_Mark.
func defaultIgnorable(r rune) bool {
	if unicode.Is(unicode.White_Space, r) || (r >= 0xfff9 && r <= 0xfffb) || (r >= 0x13430 && r <= 0x13440) ||
		unicode.Is(unicode.Prepended_Concatenation_Mark, r) {
		return false
	}
	return unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// checkTerminal fails unless out is valid UTF-8 whose only control is the
// newline ending each line.
func checkTerminal(t testing.TB, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s: invalid UTF-8 reached the terminal: %q", what, out)
	}
	for _, r := range out {
		if r != '\n' && forbidden(r) {
			t.Fatalf("%s: %U reached the terminal: %q", what, r, out)
		}
	}
}

func TestHiddenIsTheUnicodeRule(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if hidden(r) != forbidden(r) {
			t.Errorf("hidden(%U) = %v", r, hidden(r))
		}
	}
}

func TestAppendText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"\u009b31m", `\u{9b}31m`},
		{"evil\u202ecod.exe", `evil\u{202e}cod.exe`},
		{"a\rb\nc\td\x00e\x7f", `a\x0db\x0ac\x09d\x00e\x7f`},
		{"\u2066iso\u2069\u200e\u200f\u061c", `\u{2066}iso\u{2069}\u{200e}\u{200f}\u{61c}`},
		{"\xff\xfe\xc3", `\xff\xfe\xc3`},
		{"\u2028\u2029", `\u{2028}\u{2029}`},
		{"ad\u200bmin\u2060", `ad\u{200b}min\u{2060}`},
		{"\ufeffvrpn", `\u{feff}vrpn`},
		{"Tracker0\U000e0041\U000e007f", `Tracker0\u{e0041}\u{e007f}`},
		{"soft\u00adhyphen \u3164 \U000e0100", `soft\u{ad}hyphen \u{3164} \u{e0100}`},
		{"caméra 日本 \u00a0", "caméra 日本 \u00a0"},
	} {
		if got := string(appendText(nil, tc.in)); got != tc.want {
			t.Errorf("appendText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEscapeTextBound(t *testing.T) {
	if got := escapeText("short\x1b", 10); got != `short\x1b` {
		t.Errorf("got %q", got)
	}
	got := escapeText(strings.Repeat("é", 100), 11)
	if got != "ééééé…" {
		t.Errorf("cut mid-character or at the wrong place: %q", got)
	}
}

// hostileRecord puts hostile text in every string a record has.
func hostileRecord(s string) *dissect.Record {
	r := record()
	r.Src, r.Dst, r.Proto, r.Type = s+":1", "dst"+s, "p"+s, "t"+s
	r.Add("k"+s, dissect.Str(s))
	r.Add("n", dissect.Object([]dissect.Field{{Key: s, Value: dissect.Str(s)}}))
	r.Warn("w" + s)
	return r
}

func TestTableEscapesEveryColumn(t *testing.T) {
	for _, s := range hostile {
		for _, kind := range []string{"fields", "summary", dissect.TypeSkipped} {
			r := hostileRecord(s)
			switch kind {
			case "summary":
				r.Summary = "sum" + s
			case dissect.TypeSkipped:
				r.Type = dissect.TypeSkipped
				r.Fields = nil
				r.Add("reason", dissect.Str("why"+s))
			}
			var buf bytes.Buffer
			tb := NewTable(&buf, TableOptions{})
			if err := tb.Record(r); err != nil {
				t.Fatal(err)
			}
			tb.Flush()
			out := buf.String()
			checkTerminal(t, kind, out)
			if n := strings.Count(out, "\n"); n != 2 || !strings.HasSuffix(out, "\n") {
				t.Errorf("%q: %d lines, want the header and one record:\n%s", s, n, out)
			}
			want := string(appendText(nil, s))
			if !strings.Contains(out, "t"+want) || !strings.Contains(out, "p"+want) || !strings.Contains(out, "dst"+want) || !strings.Contains(out, "w"+want) {
				t.Errorf("%q: a column lacks the escaped %q:\n%s", s, want, out)
			}
		}
	}
}

func TestSummaryEscapesEverything(t *testing.T) {
	for _, s := range hostile {
		sum := hostileSummary(s)
		var buf bytes.Buffer
		WriteSummary(&buf, sum)
		out := buf.String()
		checkTerminal(t, "summary", out)
		want := string(appendText(nil, s))
		for _, part := range []string{"type" + want, "proto" + want, "warn" + want, "note" + want, "problem" + want, "src" + want, "path" + want, "stop" + want} {
			if !strings.Contains(out, part) {
				t.Errorf("%q: summary lacks %q:\n%s", s, part, out)
			}
		}
	}
}

func hostileSummary(s string) *dissect.Summary {
	return &dissect.Summary{
		Packets:  2,
		Messages: []dissect.TypeCount{{Proto: "proto" + s, Type: "type" + s, Count: 3}},
		Warned:   1, Warnings: []string{"warn" + s},
		Notes:    []string{"note" + s},
		Problems: []dissect.Count{{What: "problem" + s, N: 1}},
		Capture: &dissect.CaptureCounts{
			Source: "src" + s, Captured: 2, DissectDropped: 1, WritePath: "path" + s, Stopped: "stop" + s,
		},
	}
}

// TestJSONEscapesHidden: C1 controls, separators and bidi characters are
// \u escapes, never raw bytes, and every string reads back as it was.
func TestJSONEscapesHidden(t *testing.T) {
	r := record()
	r.Type = "vrpn\u009b\u202e\x7f"
	r.Add("name", dissect.Str("a\u2066b\u200e\u061c\u2028"))
	r.Add("sender", dissect.Str("ad\u200bmin\ufeff\U000e0041"))
	got := encode(t, r)
	for _, want := range []string{`"type":"vrpn\u009b\u202e\u007f"`, `"name":"a\u2066b\u200e\u061c\u2028"`,
		`"sender":"ad\u200bmin\ufeff\udb40\udc41"`} { // U+E0041 as its UTF-16 surrogate pair
		if !strings.Contains(got, want) {
			t.Errorf("got %s\nwant it to contain %s", got, want)
		}
	}
	checkTerminal(t, "json", got)

	var lines bytes.Buffer
	j := NewJSON(&lines, false)
	for _, s := range hostile {
		if err := j.Record(hostileRecord(s)); err != nil {
			t.Fatal(err)
		}
	}
	j.Flush()
	out := lines.String()
	checkTerminal(t, "json", out)
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		checkJSONLine(t, line, hostileRecord(hostile[i]))
	}
	checkWithPython(t, out)
}

// wireText is what a JSON string must read back as: s with each invalid
// byte replaced by U+FFFD.
func wireText(s string) string { return string([]rune(s)) }

// checkJSONLine parses line with encoding/json and compares its strings
// with those of r.
func checkJSONLine(t testing.TB, line string, r *dissect.Record) {
	t.Helper()
	var m struct {
		Time, Proto, Src, Dst, Type string
		Warnings                    []string
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if m.Proto != wireText(r.Proto) || m.Src != wireText(r.Src) || m.Dst != wireText(r.Dst) || m.Type != wireText(r.Type) {
		t.Fatalf("strings changed: %q %q %q %q from %s", m.Proto, m.Src, m.Dst, m.Type, line)
	}
	for i, w := range r.Warnings {
		if i >= len(m.Warnings) || m.Warnings[i] != wireText(w) {
			t.Fatalf("warning %d changed: %s", i, line)
		}
	}
	// Keys and string values of "fields", in order (keys may repeat, so
	// not through a map); r holds no bytes or times, which are strings too.
	start := strings.Index(line, `"fields":`) + len(`"fields":`)
	dec := json.NewDecoder(strings.NewReader(line[start:]))
	dec.UseNumber()
	var got []string
	for depth := 0; ; {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			got = append(got, v)
		}
		if depth == 0 {
			break
		}
	}
	if want := fieldStrings(nil, r.Fields); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("fields read back as %q, want %q: %s", got, want, line)
	}
}

func fieldStrings(out []string, fs []dissect.Field) []string {
	for _, f := range fs {
		out = append(out, wireText(f.Key))
		out = valueStrings(out, f.Value)
	}
	return out
}

func valueStrings(out []string, v dissect.Value) []string {
	switch v.Kind() {
	case dissect.KindString:
		return append(out, wireText(v.Str()))
	case dissect.KindObject:
		return fieldStrings(out, v.Items())
	case dissect.KindArray:
		for _, it := range v.Items() {
			out = valueStrings(out, it.Value)
		}
	}
	return out
}

// checkWithPython reads the JSON lines back with Python's json module and
// compares with Go's reading.
func checkWithPython(t *testing.T, lines string) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found: the Python read-back is skipped")
		return
	}
	f := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(f, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	// Python re-encodes each line with ASCII-only escapes; Go then reads both.
	out, err := exec.Command(py, "-c", `import json,sys
for l in open(sys.argv[1], encoding="utf-8"):
    print(json.dumps(json.loads(l), ensure_ascii=True))`, f).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	pyLines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	goLines := strings.Split(strings.TrimSuffix(lines, "\n"), "\n")
	if len(pyLines) != len(goLines) {
		t.Fatalf("python read %d lines, Go wrote %d", len(pyLines), len(goLines))
	}
	for i := range goLines {
		var a, b any
		if err := json.Unmarshal([]byte(goLines[i]), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(pyLines[i]), &b); err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("line %d: python read\n%s\nGo read\n%s", i, jb, ja)
		}
	}
}

// TestValidUTF8IsJSONs: ValidUTF8 is what the JSON writer writes, read
// back by encoding/json: each invalid byte one U+FFFD, the rest as it is.
func TestValidUTF8IsJSONs(t *testing.T) {
	for _, s := range []string{"", "plain", "\xff\xfe", "a\xc3(b", "\xe2\x82", "é\x80\x80€", "\ufffd", "ctl\x01\x7f\u2028", "\xf4\x90\x80\x80", "\xed\xa0\x80"} {
		var back string
		if err := json.Unmarshal(AppendString(nil, s), &back); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got := ValidUTF8(s); got != back || !utf8.ValidString(got) {
			t.Errorf("ValidUTF8(%q) = %q; JSON reads back %q", s, got, back)
		}
	}
}
