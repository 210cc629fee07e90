package stats

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect/all"
)

// TestNoProtocolNames checks that the consumers of records name no
// protocol in code: no string literal of the non-test Go files of stats,
// query and output (its subpackages included) equals a protocol's "proto"
// key or decode-as name, as registered by dissect/all. What a record means
// to them must come from its declaration, so that a new protocol needs no
// change here. Comments are not code and are not read.
func TestNoProtocolNames(t *testing.T) {
	reg, err := all.Registry(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range append(reg.Names(), reg.Protos()...) {
		names[n] = true
	}
	if len(names) == 0 {
		t.Fatal("no protocol names in the registry")
	}
	fset := token.NewFileSet()
	files := 0
	for _, root := range []string{".", "../query", "../output"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files++
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
					t.Errorf("%s: the protocol name %s in code: read the record's declaration instead", fset.Position(lit.Pos()), lit.Value)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 20 {
		t.Fatalf("only %d Go files read", files)
	}
}
