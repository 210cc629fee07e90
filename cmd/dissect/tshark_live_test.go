package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// trees counts the records of a -V output.
func trees(out string) int { return strings.Count("\n"+out, "\nRecord ") }

// -V on a serial tap: the trees come as the messages do, are those that
// reading the saved file back with -V writes, and hold every key and
// field of the file's JSON records, wrapped at COLUMNS.
func TestSerialTapDetails(t *testing.T) {
	t.Setenv("COLUMNS", "60")
	hostWire, devWire := wire(t), wire(t)
	pcap := filepath.Join(t.TempDir(), "link.pcapng")
	r := startLive(t, "serial", "-V", "-d", "serial,deltarobot", "-w", pcap, hostWire.Path, devWire.Path)
	waitFor(t, "the tap to start", func() bool { return strings.Contains(r.stderr.String(), "Ctrl-C to stop") })
	recs := 0
	for _, s := range drSteps {
		w := hostWire
		if s.dir == 1 {
			w = devWire
		}
		for _, p := range s.parts {
			write(t, w.Master, p)
		}
		recs += len(s.recs)
		waitFor(t, fmt.Sprintf("%d trees", recs), func() bool { return trees(r.stdout.String()) >= recs })
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("after cancellation: %v", err)
	}
	live := r.stdout.String()
	if n := trees(live); n != recs {
		t.Fatalf("%d trees, want %d", n, recs)
	}
	checkReadBack(t, pcap, live, "-V", "-d", "serial,deltarobot")
	js, _, code := cli(t, "-o", "json", "--no-summary", "-d", "serial,deltarobot", pcap)
	if code != 0 {
		t.Fatalf("-o json: exit %d", code)
	}
	checkTree(t, js, live, 60)
}

// -V on a live capture (root only): the same checks.
func TestLiveDetails(t *testing.T) {
	lvNeedCapture(t)
	t.Setenv("COLUMNS", "60")
	ln, port := lvListenTCP(t)
	saved := filepath.Join(t.TempDir(), "live.pcapng")
	rule := fmt.Sprintf("tcp.port==%d,deltarobot", port)
	r := lvStart(t, "-i", "lo", "-V", "-w", saved, "-f", fmt.Sprintf("tcp port %d", port), "-d", rule)
	lvDeltarobotSession(t, ln)
	const total = 11 // as in TestLiveLoopback
	lvWaitFor(t, r, "the trees of every message", func() bool { return trees(r.stdout.String()) >= total })
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGINT\nstderr:\n%s", code, r.stderr.String())
	}
	live := r.stdout.String()
	checkReadBack(t, saved, live, "-V", "-d", rule)
	js, _, code := cli(t, "-o", "json", "--no-summary", "-d", rule, saved)
	if code != 0 {
		t.Fatalf("-o json: exit %d", code)
	}
	if n := len(lines(js)); n != total || trees(live) != total {
		t.Fatalf("%d JSON records, %d trees, want %d", n, trees(live), total)
	}
	checkTree(t, js, live, 60)
}
