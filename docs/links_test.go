package docs_test

import (
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestLinks checks every relative link of the repository's Markdown files
// (README.md, docs/, and any other but node_modules'): the file it names
// exists, and its #anchor, when it has one, is a heading of that file as
// GitHub makes heading anchors. A section moved or renamed without its
// links fails here.
func TestLinks(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 10 {
		t.Fatalf("found %d Markdown files under %s: the walk lost them", len(docs), root)
	}
	anchors := map[string]map[string]bool{} // by file, slash-separated from root
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(b))
		anchors[file] = a
		return a, nil
	}
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(b)) {
			file, anchor, _ := strings.Cut(l.target, "#")
			target := doc
			if file != "" {
				target = path.Join(path.Dir(doc), file)
			}
			checked++
			info, err := os.Stat(filepath.Join(root, filepath.FromSlash(target)))
			if err != nil || strings.HasPrefix(target, "../") {
				t.Errorf("%s:%d: link %q: no file %s in the repository", doc, l.line, l.target, target)
				continue
			}
			if anchor == "" || info.IsDir() || !strings.HasSuffix(target, ".md") {
				continue
			}
			a, err := anchorsOf(target)
			if err != nil {
				t.Fatal(err)
			}
			if !a[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", doc, l.line, l.target, target, anchor)
			}
		}
	}
	t.Logf("%d relative links in %d Markdown files", checked, len(docs))
}

// markdownFiles returns the repository's Markdown files, slash-separated
// from root, but those of node_modules and hidden directories.
func markdownFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out, err
}

type mdLink struct {
	line   int
	target string
}

// inlineLink is a Markdown inline link or image, [text](target "title");
// the text may hold code spans but no brackets.
var inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// markdownLinks returns the relative links of a document: not in fenced
// code blocks or code spans, not to a URL (scheme:) and not empty.
func markdownLinks(text string) []mdLink {
	var out []mdLink
	for n, line := range proseLines(text) {
		for _, m := range inlineLink.FindAllStringSubmatchIndex(withoutCodeSpans(line), -1) {
			target := line[m[2]:m[3]]
			if strings.Contains(target, ":") && !strings.HasPrefix(target, "#") {
				continue // a URL (https:, mailto:); a relative path here has no colon
			}
			out = append(out, mdLink{line: n, target: target})
		}
	}
	return out
}

// proseLines yields a document's lines outside fenced code blocks, with
// their 1-based numbers.
func proseLines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fenced := false
		for i, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if !fenced && !yield(i+1, line) {
				return
			}
		}
	}
}

// withoutCodeSpans blanks what is between backticks, keeping the length
// so that offsets into it are offsets into s.
func withoutCodeSpans(s string) string {
	b := []byte(s)
	in := false
	for i, c := range b {
		if c == '`' {
			in = !in
			continue
		}
		if in {
			b[i] = ' '
		}
	}
	return string(b)
}

// headingAnchors returns the anchors GitHub gives a document's headings
// (ATX headings outside fenced code): the heading's text lowercased,
// links reduced to their text, every character but letters, digits,
// spaces, hyphens and underscores dropped, spaces made hyphens; a repeated
// anchor gets -1, -2, ... Explicit <a name="..."> and id="..." count too.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range proseLines(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		h := strings.TrimLeft(line, "#")
		if len(h) == len(line) || len(line)-len(h) > 6 || (h != "" && h[0] != ' ') {
			continue
		}
		slug := slugOf(strings.TrimSpace(h))
		anchor := slug
		for n := 1; out[anchor]; n++ {
			anchor = fmt.Sprintf("%s-%d", slug, n)
		}
		out[anchor] = true
	}
	return out
}

var (
	htmlAnchor  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	headingLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

func slugOf(heading string) string {
	heading = headingLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestSlugOf holds slugOf to anchors GitHub gives headings, checked by
// hand against GitHub's rule (lowercase; only letters, digits, spaces,
// hyphens and underscores kept; spaces made hyphens).
func TestSlugOf(t *testing.T) {
	for heading, want := range map[string]string{
		"Record channels per direction, and the bar measured over 100 rounds (issue 35, 2026-12-02 11:00–12:06 UTC)": "record-channels-per-direction-and-the-bar-measured-over-100-rounds-issue-35-2026-12-02-11001206-utc",
		"Two builds side by side: `internal/sidebyside` (issue 35)":                                                  "two-builds-side-by-side-internalsidebyside-issue-35",
		"Component benchmarks (`go test -run=^$ -bench=. ./...`)":                                                    "component-benchmarks-go-test--run--bench-",
		"See [mcap.md](mcap.md) first":                                                                               "see-mcapmd-first",
		"snake_case and CamelCase":                                                                                   "snake_case-and-camelcase",
	} {
		if got := slugOf(heading); got != want {
			t.Errorf("slugOf(%q) = %q, want %q", heading, got, want)
		}
	}
	a := headingAnchors("# A\n## A\n```\n# not a heading\n```\n#nospace\n## A\n")
	for _, want := range []string{"a", "a-1", "a-2"} {
		if !a[want] {
			t.Errorf("headingAnchors: no #%s in %v", want, a)
		}
	}
	if len(a) != 3 {
		t.Errorf("headingAnchors: %v, want a, a-1, a-2 only", a)
	}
}

// TestPerformanceIndex: docs/performance.md links every section of the
// files its figures are kept in (docs/performance-*.md), so that a
// section added there is found from the index.
func TestPerformanceIndex(t *testing.T) {
	index, err := os.ReadFile("performance.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("performance-*.md")
	if len(files) == 0 {
		t.Fatal("no docs/performance-*.md")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range proseLines(string(b)) {
			h, ok := strings.CutPrefix(line, "## ")
			if !ok {
				continue
			}
			if link := "(" + f + "#" + slugOf(strings.TrimSpace(h)) + ")"; !strings.Contains(string(index), link) {
				t.Errorf("%s:%d: section %q is not linked from performance.md (want a link %s)", f, n, h, link)
			}
		}
	}
}
