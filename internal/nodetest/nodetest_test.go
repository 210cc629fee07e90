package nodetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: the module root holds this package; a package that is not
// installed is named with the command that installs it.
func TestFind(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "nodetest", "nodetest.go")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	_, _, err = Find("internal/nodetest", "nothing", "no-such-package")
	if err == nil {
		t.Fatal("Find found a package that is not installed")
	}
	if msg := err.Error(); !strings.Contains(msg, "npm ci --prefix internal/nodetest") ||
		!strings.Contains(msg, "no-such-package is not installed") && !strings.Contains(msg, "node is not installed: nothing") {
		t.Errorf("error %q does not say what is missing and what to run", msg)
	}
	if _, dir, err := Find("internal/nodetest", "nothing"); err == nil && dir != filepath.Join(root, "internal", "nodetest") {
		t.Errorf("dir %s, want %s", dir, filepath.Join(root, "internal", "nodetest"))
	}
}
