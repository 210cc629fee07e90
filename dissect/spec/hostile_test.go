package spec

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestHostileFiles loads every file of testdata/hostile: each must fail
// with one line that names the file and where (FILE:LINE:COL) and holds
// the text of its "# want:" first line.
func TestHostileFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/hostile/*.yaml")
	if len(files) < 30 {
		t.Fatalf("only %d hostile files", len(files))
	}
	for _, f := range files {
		want := firstLineWant(t, f)
		_, err := LoadFile(f)
		if err == nil {
			t.Errorf("%s: loaded", f)
			continue
		}
		msg := err.Error()
		where := regexp.MustCompile(`^` + regexp.QuoteMeta(f) + `:\d+:\d+: `)
		switch {
		case strings.ContainsAny(msg, "\n\r\x1b"):
			t.Errorf("%s: error is not one clean line: %q", f, msg)
		case !where.MatchString(msg):
			t.Errorf("%s: error does not start with the file and its place: %q", f, msg)
		case !strings.Contains(msg, want):
			t.Errorf("%s: error %q does not say %q", f, msg, want)
		}
	}
}

// A file that is not YAML is reported at the line and column where the
// YAML library found the problem (places counted by hand, 1-based).
func TestYAMLErrorsHaveColumns(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"meta: {id: x}\nseq: [a, b\nc: 1\n", "y.yaml:3:2: not YAML: did not find expected ',' or ']' (while parsing a flow sequence from 2:6)"},
		{"meta:\n  id: x\n   title: y\n", "y.yaml:3:9: not YAML: mapping values are not allowed in this context"},
		{"meta: {id: x}\nseq:\n\t- id: a\n", "y.yaml:3:1: not YAML: found character that cannot start any token"},
		{"meta: {id: 'x}\n", "y.yaml:2:1: not YAML: found unexpected end of stream (while scanning a quoted scalar from 1:12)"},
		{"meta: {id: x} seq: []\n", "y.yaml:1:18: not YAML: "},
	} {
		_, err := Load("y.yaml", []byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %s…", c.text, err, c.want)
		}
	}
}

func firstLineWant(t *testing.T, path string) string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan()
	want, ok := strings.CutPrefix(s.Text(), "# want: ")
	if !ok {
		t.Fatalf("%s: no # want: line", path)
	}
	return want
}

// TestFileTooLarge: a file over MaxFileSize is refused before parsing.
func TestFileTooLarge(t *testing.T) {
	_, err := Load("big.yaml", make([]byte, MaxFileSize+1))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("%v", err)
	}
}

// TestHostileGenerated: files too large to keep in testdata, made here.
func TestHostileGenerated(t *testing.T) {
	head := "meta: {id: h}\nseq:\n  - id: v\n    type: u1\n"
	var many strings.Builder
	many.WriteString(head + "types:\n")
	for i := range 300 {
		fmt.Fprintf(&many, "  t%d:\n    seq: []\n", i)
	}
	var fields strings.Builder
	fields.WriteString("meta: {id: h}\nseq:\n")
	for i := range 5000 {
		fmt.Fprintf(&fields, "  - {id: f%d, type: u1}\n", i)
	}
	cases := map[string]string{
		many.String():   "more than 256 types",
		fields.String(): "more than 4096 fields",
		"meta: {id: h}\nframe: {sync: [" + strings.Repeat("1, ", 64) + "1]}\n" + head[len("meta: {id: h}\n"):]: "frame.sync: 65 bytes: at most 64",
	}
	for text, want := range cases {
		s, err := Load("gen.yaml", []byte(text))
		if err == nil {
			_, err = New(s)
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "gen.yaml:") {
			t.Errorf("%.40q…: %v, want %q", text, err, want)
		}
	}
}

// TestUnsizedFrameBounded: a protocol whose frames end where their fields
// do reads at most frame.max bytes for one: a text with no terminator in
// sight is malformed there, not waited on.
func TestUnsizedFrameBounded(t *testing.T) {
	s, err := Load("u.yaml", []byte("meta: {id: u}\nframe: {sync: [0x55], max: 64}\nseq:\n  - id: text\n    type: strz\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	info := benchInfo()
	ps := p.NewParser(&info)
	var rec dissect.Record
	c := &dissect.Ctx{Stream: &info, Decode: true, Rec: &rec}
	long := append([]byte{0x55}, bytes.Repeat([]byte{'a'}, 200)...)
	if n, err := ps.Parse(c, long[:40]); !errors.Is(err, dissect.ErrNeedMore) {
		t.Errorf("40 bytes: %d, %v; want need more", n, err)
	}
	if _, err := ps.Parse(c, long); err == nil || errors.Is(err, dissect.ErrNeedMore) {
		t.Errorf("200 bytes without a NUL: %v; want malformed", err)
	}
	if n, err := ps.Parse(c, []byte{0x55, 'h', 'i', 0, 0x55}); n != 4 || err != nil || rec.Type != MessageType {
		t.Errorf("a frame: %d, %v, %q", n, err, rec.Type)
	}
}
