package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestPaired: the ratios are taken round by round, not of medians: B
// twice as slow as A in a slow round and 0.9 of it in three fast ones
// gives the quartiles of 0.9, 0.9, 0.9, 2 and B no longer in three
// rounds, where the medians' ratio would be 1.
func TestPaired(t *testing.T) {
	s := func(ms ...int) []sample {
		var out []sample
		for _, m := range ms {
			out = append(out, sample{wall: time.Duration(m) * time.Millisecond})
		}
		return out
	}
	a, b := s(100, 100, 100, 500), s(90, 90, 90, 1000)
	q, le := paired(a, b, func(x sample) float64 { return x.wall.Seconds() })
	near := func(x, y float64) bool { return x-y < 1e-9 && y-x < 1e-9 }
	if !near(q[0], 0.9) || !near(q[1], 0.9) || !near(q[2], 0.9+0.25*(2-0.9)) || le != 3 {
		t.Errorf("quartiles %v, %d rounds no longer; want 0.9 0.9 1.175, 3", q, le)
	}
}
