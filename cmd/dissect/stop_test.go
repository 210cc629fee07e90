package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dissect-tools/dissect/internal/longtest"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

// Every way a file run can stop early, through the command: a signal, a
// reader of the output that goes away, a full disk; for every output form.
// The runs are child processes (TestHelperProcess) so that signals and
// SIGPIPE are real.

// stopForm is one output form and how to find what it wrote.
type stopForm struct {
	name string
	args func(dir string) []string // the output flags, given a fresh directory
	file string                    // --out's name in dir ("": stdout)
}

var stopForms = []stopForm{
	{name: "table", args: func(string) []string { return []string{"-o", "table", "--wide"} }},
	{name: "json", args: func(string) []string { return []string{"-o", "json"} }},
	{name: "fields", args: func(string) []string { return []string{"-o", "fields", "-e", "type", "-e", "deltarobot.x"} }},
	{name: "mcap", file: "run.mcap", args: func(dir string) []string { return []string{"-o", "mcap", "--out", filepath.Join(dir, "run.mcap")} }},
	{name: "parquet", file: "lake", args: func(dir string) []string { return []string{"-o", "parquet", "--out", filepath.Join(dir, "lake")} }},
}

// bigCapture returns a Deltarobot session of n actuator positions (all
// different, so that no output compresses them to nothing) as pcap bytes.
func bigCapture(t *testing.T, n int) []byte {
	t.Helper()
	var fb, lb deltaenc.Builder
	fb.Magic()
	fb.Version(1)
	lb.Magic()
	lb.Version(1)
	for i := range n {
		f := float32(i) * 1.0001
		lb.ActuatorPosition(f, -f, f/3, f*7)
	}
	fw, _, err := fb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	lw, _, err := lb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	c := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:4000"), 1000, 5000000)
	segs := append(c.Handshake(), c.Send(pktbuild.Client, fw))
	for off := 0; off < len(lw); off += 1400 {
		segs = append(segs, c.Send(pktbuild.Server, lw[off:min(off+1400, len(lw))]), c.Ack(pktbuild.Client))
	}
	segs = append(segs, c.Fin(pktbuild.Server), c.Fin(pktbuild.Client))
	var buf bytes.Buffer
	w, err := capture.NewPcapWriter(&buf, capture.LinkEthernet, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pktbuild.Packets(pktbuild.Encap{Type: capture.LinkEthernet}, time.Unix(1_700_000_000, 0), time.Microsecond, segs...) {
		if err := w.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// child is dissect run as a child process with args; stdin, stdout and
// stderr as given (nil: none).
func child(t *testing.T, args []string, stdin io.Reader, stdout, stderr io.Writer) *exec.Cmd {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(js))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// exitOf waits for cmd: its exit status, or -1 when a signal killed it.
// A run that never ends fails the test after a minute (a hang, not a
// measure of speed).
func exitOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("dissect did not stop")
		return 0
	}
}

// summaryRecords returns the records the summary on stderr counts:
// messages, gap records and skipped records.
func summaryRecords(t *testing.T, stderr string) int64 {
	t.Helper()
	var total int64
	for _, re := range []string{`(?m)^messages: +(\d+)`, `(?m)^gaps: +(\d+)`, `(?m)^skipped: +(\d+) records`} {
		m := regexp.MustCompile(re).FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("no %s in the summary:\n%s", re, stderr)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		total += n
	}
	return total
}

// checkComplete checks what form wrote in dir (stdout: out) after a run
// that ended early: complete, readable, and holding the want records the
// summary counts (want < 0: only that it holds some).
func checkComplete(t *testing.T, f stopForm, dir, out string, want int64) {
	t.Helper()
	lines := int64(strings.Count(out, "\n"))
	switch f.name {
	case "table":
		if lines == 0 || !strings.HasSuffix(out, "\n") {
			t.Errorf("table: %d lines, the last one cut", lines)
		}
	case "json", "fields":
		if want >= 0 && lines != want || !strings.HasSuffix(out, "\n") {
			t.Errorf("%s: %d lines (the last one whole: %v), want the summary's %d records", f.name, lines, strings.HasSuffix(out, "\n"), want)
		}
		if f.name == "json" {
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if !json.Valid(sc.Bytes()) {
					t.Fatalf("json: line %q is not JSON", sc.Text())
				}
			}
		}
	case "mcap":
		fh, err := os.Open(filepath.Join(dir, f.file))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		msgs, info := readMCAP(t, fh) // through the summary and indexes: the footer is there
		if len(msgs) == 0 || info.Statistics == nil || info.Statistics.MessageCount != uint64(len(msgs)) {
			t.Errorf("mcap: %d messages read, statistics %+v", len(msgs), info.Statistics)
		}
	case "parquet":
		rows := lakeRows(t, filepath.Join(dir, f.file))
		if want >= 0 && rows != want || rows == 0 {
			t.Errorf("parquet: %d rows, want the summary's %d records", rows, want)
		}
	}
}

// lakeRows reads every part of a lake with parquet-go and returns its
// rows; a part left .inprogress fails the test.
func lakeRows(t *testing.T, lake string) int64 {
	t.Helper()
	var rows int64
	for _, p := range readLake(t, lake) {
		rows += int64(len(p.rows))
	}
	return rows
}

// openParquet opens the Parquet file at path (its footer read).
func openParquet(path string) (*parquet.File, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return pf, f, nil
}

// A signal while a file is read (here stdin, a pipe that has sent part of
// a capture and stays open) stops the run cleanly: every output complete
// and holding every record the summary counts, the summary with a line
// naming the signal, exit status 128 + its number.
func TestSignalStopsFileRun(t *testing.T) {
	raw := bigCapture(t, 400_000)
	quiet := stopForm{name: "quiet", args: func(string) []string { return []string{"-q"} }} // decoding on two goroutines
	for _, f := range append(stopForms, quiet) {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
			if sig != syscall.SIGINT && f.name != "json" && f.name != "mcap" {
				continue // every signal takes the same path
			}
			if !longtest.On() && (sig != syscall.SIGTERM || f.name != "json") && (sig != syscall.SIGINT || f.name != "quiet") {
				continue // DISSECT_LONG: every form and signal
			}
			t.Run(f.name+"/"+signalName(sig), func(t *testing.T) {
				dir := t.TempDir()
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer pw.Close()
				var stdout, stderr bytes.Buffer
				cmd := child(t, append(f.args(dir), "-"), pr, &stdout, &stderr)
				pr.Close()
				// A pipe holds 64 KiB: once 1 MiB is written, dissect is
				// reading, its signal handlers in place. The rest is never
				// sent, and the pipe stays open.
				if _, err := pw.Write(raw[:1<<20]); err != nil {
					t.Fatal(err)
				}
				cmd.Process.Signal(sig)
				code := exitOf(t, cmd)
				if want := 128 + int(sig); code != want {
					t.Fatalf("exit %d, want %d; stderr:\n%s", code, want, stderr.String())
				}
				e := stderr.String()
				if !strings.Contains(e, "== dissect summary ==") || !strings.Contains(e, "dissect: interrupted by "+signalName(sig)) {
					t.Fatalf("stderr, want the summary and the interruption:\n%s", e)
				}
				checkComplete(t, f, dir, stdout.String(), summaryRecords(t, e))
			})
		}
	}
}

// A second Ctrl-C ends a run at once, even one whose first stop cannot
// finish (its reader stopped reading): exit status 130, one line, no
// summary. Ctrl-C is pressed until dissect exits, as a user would.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	raw := bigCapture(t, 400_000)
	in, err := os.CreateTemp(t.TempDir(), "*.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Write(raw); err != nil {
		t.Fatal(err)
	}
	in.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var stderr bytes.Buffer
	cmd := child(t, []string{"-o", "json", in.Name()}, nil, pw, &stderr)
	pw.Close()
	if _, err := io.ReadFull(pr, make([]byte, 1)); err != nil { // dissect is writing
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	code := 0
	for press := 0; ; press++ {
		if press == 600 {
			t.Fatal("dissect did not stop")
		}
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-done:
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				code = ee.ExitCode()
			}
		case <-time.After(100 * time.Millisecond): // signals of one kind may merge: press again
			continue
		}
		break
	}
	e := stderr.String()
	if code != 130 || !strings.Contains(e, "dissect: stopped at once (a second SIGINT)") || strings.Contains(e, "== dissect summary ==") {
		t.Fatalf("exit %d, want 130, one line and no summary; stderr:\n%s", code, e)
	}
}

// bigInput writes a capture of 200,000 messages to a temporary file.
func bigInput(t *testing.T) string {
	in := filepath.Join(t.TempDir(), "big.pcap")
	if err := os.WriteFile(in, bigCapture(t, 200_000), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// stdoutForms are the output forms that write to stdout: the first three
// stop forms, MCAP to stdout and statistics alone.
func stdoutForms() []stopForm {
	return append(stopForms[:3:3], stopForm{name: "mcap to stdout", args: func(string) []string { return []string{"-o", "mcap", "--out", "-"} }},
		stopForm{name: "statistics", args: func(string) []string { return []string{"-q", "-z", "io,stat,0.00001"} }})
}

// A reader of the output that goes away (dissect | head -c 10) ends every
// form that writes to stdout the same way: the summary, exit 0, no death
// by SIGPIPE, no error line.
func TestClosedReaderEveryForm(t *testing.T) {
	in := bigInput(t)
	forms := stdoutForms()
	for _, f := range forms {
		// The reader takes 10 bytes (head -c 10), or none: then even the
		// first write fails (-o mcap's header).
		for _, take := range []int{10, 0} {
			t.Run(f.name+"/"+strconv.Itoa(take), func(t *testing.T) {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				if take == 0 {
					pr.Close()
				}
				var stderr bytes.Buffer
				cmd := child(t, append(f.args(""), in), nil, pw, &stderr)
				pw.Close()
				if take > 0 {
					io.ReadFull(pr, make([]byte, take))
					pr.Close()
				}
				code := exitOf(t, cmd)
				e := stderr.String()
				if code != 0 || !strings.Contains(e, "== dissect summary ==") || strings.Contains(e, "dissect:") {
					t.Fatalf("exit %d, want 0, the summary and no error; stderr:\n%s", code, e)
				}
			})
		}
	}
}

// A full disk ends every form the same way: the summary, then one line
// naming the path, exit 1, no .inprogress left. Stdout forms write to
// /dev/full; --out forms to a tmpfs of 256 KiB (root only).
func TestFullDiskEveryForm(t *testing.T) {
	in := bigInput(t)
	forms := stdoutForms()
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skipf("no /dev/full: %v", err)
			}
			defer full.Close()
			var stderr bytes.Buffer
			cmd := child(t, append(f.args(""), in), nil, full, &stderr)
			checkFull(t, exitOf(t, cmd), stderr.String(), "/dev/stdout")
		})
	}
	for _, f := range stopForms[3:] {
		t.Run(f.name+" on a full file system", func(t *testing.T) {
			dir := tinyFS(t)
			var stderr bytes.Buffer
			cmd := child(t, append(f.args(dir), in), nil, io.Discard, &stderr)
			checkFull(t, exitOf(t, cmd), stderr.String(), filepath.Join(dir, f.file))
			if f.name == "parquet" {
				lakeRows(t, filepath.Join(dir, f.file)) // no .inprogress, every part readable
			}
		})
	}
}

func checkFull(t *testing.T, code int, stderr, path string) {
	t.Helper()
	var errLines []string
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if strings.HasPrefix(l, "dissect:") {
			errLines = append(errLines, l)
		}
	}
	summary := strings.Index(stderr, "== dissect summary ==")
	if code != 1 || summary < 0 || len(errLines) != 1 || !strings.Contains(errLines[0], path) ||
		!strings.Contains(errLines[0], "no space left on device") || !strings.HasSuffix(stderr, errLines[0]+"\n") {
		t.Fatalf("exit %d, want 1, the summary, then one line naming %s; stderr:\n%s", code, path, stderr)
	}
}

// tinyFS mounts a tmpfs of 256 KiB for the test; it skips the test when
// it cannot (not root, no mount).
func tinyFS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full file system needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}
