package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestPartIDFlag checks that --part-id names the lake's parts
// part-ID-N.parquet, that a second run with it leaves the same files, and
// that an ID that could leave the partition's directory is a usage error.
func TestPartIDFlag(t *testing.T) {
	lake := t.TempDir()
	capture := filepath.Join(pcapDir, "deltarobot_session.pcap")
	list := func() []string {
		var out []string
		filepath.WalkDir(lake, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(lake, p)
				out = append(out, rel)
			}
			return err
		})
		sort.Strings(out)
		return out
	}
	for run := 1; run <= 2; run++ {
		if _, errOut, code := cli(t, "-o", "parquet", "--out", lake, "--part-id", "ab_C-9", "--no-summary",
			"-d", "tcp.port==4000,deltarobot", capture); code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, errOut)
		}
		files := list()
		// pcaps/README.md: the session has magic, version, curve,
		// positions, directions, pings, pongs and end_of_transmission.
		if len(files) != 9 {
			t.Fatalf("run %d: %d files, want 9 (one per type): %v", run, len(files), files)
		}
		for _, f := range files {
			if !strings.HasPrefix(f, "proto=deltarobot/type=") || !strings.HasSuffix(f, "/part-ab_C-9-1.parquet") {
				t.Errorf("run %d: %s is not proto=deltarobot/type=T/part-ab_C-9-1.parquet", run, f)
			}
		}
	}
	for _, id := range []string{"../x", "a/b", "a.b", strings.Repeat("x", 65)} {
		_, errOut, code := cli(t, "-o", "parquet", "--out", filepath.Join(lake, "other"), "--part-id", id, capture)
		if code != 2 || !strings.Contains(errOut, "--part-id") {
			t.Errorf("--part-id %q: exit %d, stderr %q; want a usage error (2) naming --part-id", id, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(lake, "other")); err == nil {
		t.Error("a rejected --part-id made the lake")
	}
}
