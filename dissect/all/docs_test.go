package all_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/handcontrol"
)

// TestDocsNameEveryDeclaration checks that docs/ names, in backticks,
// every declared record type and every top-level field of every protocol
// (docs/protocols.md, output.md and the protocols' own pages), so a type
// or field added to a declaration without a word in the docs fails here.
func TestDocsNameEveryDeclaration(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	var docs strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	text := docs.String()
	named := func(s string) bool { return strings.Contains(text, "`"+s+"`") }
	if named("no such type of any protocol") {
		t.Fatal("the check cannot fail")
	}
	for _, opt := range []all.Options{{}, {HandControl: handcontrol.Options{Raw: true}}} {
		reg, err := all.Registry(opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, proto := range append([]string{"*"}, reg.Protos()...) {
			for _, d := range reg.Types(proto) {
				if d.Type != "*" && !named(d.Type) {
					t.Errorf("%s %s: the type is named nowhere in docs/", proto, d.Type)
				}
				for _, f := range d.Fields {
					if !named(f.Name) {
						t.Errorf("%s %s: field %s is named nowhere in docs/", proto, d.Table(), f.Name)
					}
				}
			}
		}
	}
}
