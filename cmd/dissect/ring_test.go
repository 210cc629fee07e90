package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// ringSummary reads "N written to M files, FIRST to LAST" and "(K older
// files deleted" from the summary.
func ringSummary(t *testing.T, stderr string) (written, files, deleted int) {
	t.Helper()
	m := regexp.MustCompile(`(\d+) written to (\d+) files, `).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no \"written to N files\" in the summary:\n%s", stderr)
	}
	written, _ = strconv.Atoi(m[1])
	files, _ = strconv.Atoi(m[2])
	if d := regexp.MustCompile(`\((\d+) older files deleted`).FindStringSubmatch(stderr); d != nil {
		deleted, _ = strconv.Atoi(d[1])
	}
	return written, files, deleted
}

// ringDir lists dir, checks every file is named as dumpcap names ring
// files (stem_NNNNN_YYYYMMDDhhmmss.pcapng) and returns them in order.
func ringDir(t *testing.T, dir, stem string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(stem) + `_\d{5}_\d{14}\.pcapng$`)
	var names []string
	for _, e := range ents {
		if !re.MatchString(e.Name()) {
			t.Fatalf("%s is not named %s_NNNNN_YYYYMMDDhhmmss.pcapng", e.Name(), stem)
		}
		names = append(names, filepath.Join(dir, e.Name()))
	}
	sort.Strings(names)
	return names
}

// packetsIn reads a file with our reader and returns each packet's data.
func packetsIn(t *testing.T, path string) [][]byte {
	t.Helper()
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatalf("%s does not open on its own: %v", path, err)
	}
	defer src.Close()
	var data [][]byte
	for {
		p, err := src.Next()
		if err != nil {
			return data
		}
		data = append(data, bytes.Clone(p.Data))
	}
}

// A serial tap with -w and -b packets:2 -b files:3 keeps the newest three
// files; each opens on its own (our reader, and tshark when installed),
// holds at most two reads, and together they hold the end of what was
// sent, in order; the summary counts the files and the deleted ones.
func TestSerialRingBuffer(t *testing.T) {
	hostWire := wire(t)
	dir := t.TempDir()
	r := startLive(t, "serial", "-q", "-w", filepath.Join(dir, "link.pcapng"), "-b", "packets:2", "-b", "files:3", "--host-tx", hostWire.Path)
	waitFor(t, "the tap to start", func() bool { return strings.Contains(r.stderr.String(), "Ctrl-C to stop") })
	var sent []byte
	for i := range 12 {
		b := []byte(fmt.Sprintf("<read %02d>", i))
		write(t, hostWire.Master, b)
		sent = append(sent, b...)
		time.Sleep(30 * time.Millisecond) // a read of its own, most likely
	}
	time.Sleep(100 * time.Millisecond)
	if err := r.stop(t); err != nil {
		t.Fatalf("after cancellation: %v\n%s", err, r.stderr.String())
	}
	written, files, deleted := ringSummary(t, r.stderr.String())
	names := ringDir(t, dir, "link")
	if len(names) != 3 || files != 3 || deleted < 1 {
		t.Fatalf("%d files in the directory, the summary says %d kept and %d deleted; want 3 kept and some deleted\n%s", len(names), files, deleted, r.stderr.String())
	}
	var kept []byte
	n := 0
	for i, name := range names {
		data := packetsIn(t, name)
		if len(data) > 2 || i < len(names)-1 && len(data) != 2 || len(data) == 0 {
			t.Fatalf("%s holds %d reads, want 2 (the last 1 or 2)", name, len(data))
		}
		checkTshark(t, name, len(data))
		for _, d := range data {
			kept = append(kept, d...)
		}
		n += len(data)
	}
	if n != written-2*deleted {
		t.Fatalf("the kept files hold %d reads; the summary says %d written and %d files of 2 deleted", n, written, deleted)
	}
	if !bytes.HasSuffix(sent, kept) || len(kept) == 0 {
		t.Fatalf("the kept files hold %q, not the end of what was sent %q", kept, sent)
	}
}

// Live on loopback: -c 10 with -b packets:3 -b files:2 writes four files
// (3, 3, 3, 1 packets) and keeps the last two, holding datagrams 6 to 9.
func TestLiveRingBuffer(t *testing.T) {
	lvNeedCapture(t)
	rx, port := lvListenUDP(t)
	_ = rx
	dir := t.TempDir()
	r := lvStart(t, "-i", "lo", "-q", "-c", "10", "-f", fmt.Sprintf("udp dst port %d", port),
		"-w", filepath.Join(dir, "lo.pcapng"), "-b", "packets:3", "-b", "files:2")
	tx := lvDialUDP(t, port)
	for i := range 12 {
		lvWriteAll(t, tx, []byte(fmt.Sprintf("datagram %02d", i)))
		time.Sleep(5 * time.Millisecond)
	}
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	written, files, deleted := ringSummary(t, r.stderr.String())
	if written != 10 || files != 2 || deleted != 2 {
		t.Fatalf("summary: %d written, %d files kept, %d deleted; want 10, 2, 2\n%s", written, files, deleted, r.stderr.String())
	}
	names := ringDir(t, dir, "lo")
	if len(names) != 2 || !strings.Contains(names[0], "lo_00003_") || !strings.Contains(names[1], "lo_00004_") {
		t.Fatalf("files %q, want numbers 3 and 4", names)
	}
	next := 6
	for i, name := range names {
		data := packetsIn(t, name)
		if want := []int{3, 1}[i]; len(data) != want {
			t.Fatalf("%s: %d packets, want %d", name, len(data), want)
		}
		for _, d := range data {
			if want := fmt.Sprintf("datagram %02d", next); !bytes.HasSuffix(d, []byte(want)) {
				t.Fatalf("%s: a packet ends %q, want %q", name, d[max(0, len(d)-11):], want)
			}
			next++
		}
	}
}

// -b needs -w, and its options are checked before anything is opened.
func TestRingBufferUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serial", "-b", "packets:3", "/dev/null"}, "-b needs -w"},
		{[]string{"serial", "-w", "x.pcapng", "-b", "files:3", "/dev/null"}, "-b files:N needs"},
		{[]string{"serial", "-w", "x.pcapng", "-b", "size:3", "/dev/null"}, `option "size" is not supported`},
		{[]string{"-i", "lo", "-b", "packets:3"}, "-b needs -w"},
		{[]string{"-b", "packets:3", "x.pcap"}, "--ring-buffer applies to live capture"},
	} {
		_, errOut, code := cli(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("dissect %q: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
