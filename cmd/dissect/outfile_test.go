package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutFileTextForms: with -o table, json and fields, --out FILE gets
// exactly what stdout gets without it (the records, then the -z
// statistics), stdout gets nothing, and an existing file is truncated.
func TestOutFileTextForms(t *testing.T) {
	in := filepath.Join(pcapDir, "deltarobot_session.pcap")
	dir := t.TempDir()
	for _, form := range [][]string{
		{"-o", "table", "--wide"},
		{"-o", "json"},
		{"-o", "fields", "-e", "time", "-e", "type", "-e", "deltarobot.x"},
		{"-o", "table", "--wide", "-z", "rate"},
		{"-q", "-z", "conv"},
	} {
		name := strings.Join(form, " ")
		want, _, code := cli(t, append(append([]string{}, form...), "--no-summary", in)...)
		if code != 0 || len(want) < 100 {
			t.Fatalf("%s: without --out: exit %d, %d bytes", name, code, len(want))
		}
		path := filepath.Join(dir, "out.txt")
		if err := os.WriteFile(path, []byte(strings.Repeat("old contents\n", 10000)), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := cli(t, append(append([]string{}, form...), "--no-summary", "--out", path, in)...)
		if code != 0 {
			t.Fatalf("%s --out: exit %d: %s", name, code, stderr)
		}
		if stdout != "" {
			t.Errorf("%s --out: stdout not empty: %.200q", name, stdout)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s --out: the file (%d bytes) differs from stdout without --out (%d bytes)", name, len(got), len(want))
		}
	}
}

// TestOutFileErrors: a file that cannot be created is an error naming
// it (exit 1); --out where nothing would be written, or with a bad flag,
// is a usage error (exit 2) that leaves an existing file alone.
func TestOutFileErrors(t *testing.T) {
	in := filepath.Join(pcapDir, "deltarobot_session.pcap")
	dir := t.TempDir()
	bad := filepath.Join(dir, "no", "such", "dir", "out.json")
	_, stderr, code := cli(t, "-o", "json", "--out", bad, in)
	if code != exitError || !strings.Contains(stderr, bad) {
		t.Errorf("--out in a missing directory: exit %d, stderr %q; want 1 naming %s", code, stderr, bad)
	}
	keep := filepath.Join(dir, "keep.txt")
	if err := os.WriteFile(keep, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-q", "--out", keep, in},
		{"-q", "-o", "json", "--out", keep, in},
		{"-o", "fields", "--out", keep, in},                  // no -e
		{"-o", "json", "-Y", "((", "--out", keep, in},        // bad filter
		{"-q", "-o", "mcap", "--out", keep, in},              // -q: no records for the file
		{"-t", "nonsense", "-o", "table", "--out", keep, in}, // bad -t
	} {
		_, stderr, code := cli(t, args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d (%s), want %d", args, code, stderr, exitUsage)
		}
		if b, _ := os.ReadFile(keep); string(b) != "keep me\n" {
			t.Fatalf("%q: the --out file was touched: %q", args, b)
		}
	}
}
