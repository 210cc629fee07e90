package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutPath: the --out a command names is found in both spellings, and
// one that exists is refused (sidebyside removes it before each run).
func TestOutPath(t *testing.T) {
	dir := t.TempDir()
	fresh, old := filepath.Join(dir, "new.mcap"), filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
		err  string
	}{
		{[]string{"-o", "mcap", "--out", fresh, "-r", "x.pcap"}, fresh, ""},
		{[]string{"-o", "mcap", "--out=" + fresh}, fresh, ""},
		{[]string{"-o", "json", "-r", "x.pcap"}, "", ""},
		{[]string{"--out", old}, "", "exists"},
	} {
		got, err := outPath(c.args)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one saying %q", c.args, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %q, %v; want %q", c.args, got, err, c.want)
		}
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the existing file was touched: %v", err)
	}
}
