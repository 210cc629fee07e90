package main

import (
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestMemoryLimit checks that a decoding run sets the soft memory limit
// for its held-message budget, and leaves a GOMEMLIMIT of the user's alone.
func TestMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	if got, want := memoryLimit(0), int64(160<<20); got != want {
		t.Errorf("memoryLimit(default) = %d, want %d", got, want)
	}
	if got, want := memoryLimit(96<<20), int64(160<<20+128<<20); got != want {
		t.Errorf("memoryLimit(96M) = %d, want %d (twice the 64M over the default)", got, want)
	}
	if got, want := memoryLimit(1<<20), int64(160<<20); got != want {
		t.Errorf("memoryLimit(1M) = %d, want %d (never below the base)", got, want)
	}
	capture := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(1 << 40)
	if _, errOut, code := cli(t, "-q", "--max-held-messages", "64M", capture); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, want := debug.SetMemoryLimit(-1), int64(160<<20+64<<20); got != want {
		t.Errorf("after a run with --max-held-messages 64M the limit is %d, want %d", got, want)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 40)
	if _, errOut, code := cli(t, "-q", capture); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("with GOMEMLIMIT set the run changed the limit to %d", got)
	}
}
