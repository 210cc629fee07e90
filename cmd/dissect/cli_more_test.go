package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// CLI tests of errors, flags and inputs; cli_test.go has the decoding ones.

func TestNotACaptureFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(f, []byte("<!DOCTYPE html><html></html>\n"), 0o644)
	out, errOut, code := cli(t, f)
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	if out != "" {
		t.Errorf("stdout %q", out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, f) || !strings.Contains(last, "not a pcap, pcapng or VRPN log file") {
		t.Errorf("error line %q does not name the file and the problem", last)
	}
}

func TestMissingFile(t *testing.T) {
	_, errOut, code := cli(t, "/nonexistent/x.pcap")
	if code != exitError || !strings.Contains(errOut, "/nonexistent/x.pcap") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestTruncatedFilePrintsWhatCameBefore cuts a real capture in the middle of
// a packet record: the records of the packets before it are printed, the
// error names the file and the byte offset, and the exit code is 1.
func TestTruncatedFilePrintsWhatCameBefore(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "vrpn_tcp_only.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	full, _, _ := cli(t, "-o", "json", filepath.Join(pcapDir, "vrpn_tcp_only.pcap"))
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	os.WriteFile(cut, raw[:len(raw)/2], 0o644)
	out, errOut, code := cli(t, "-o", "json", cut)
	if code != exitError {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitError, errOut)
	}
	recs := parseJSONL(t, out)
	if len(recs) == 0 || len(recs) >= len(parseJSONL(t, full)) {
		t.Errorf("%d records from the cut file, want some but fewer than the full file's", len(recs))
	}
	tiling(t, recs)
	lastLine := strings.TrimSpace(errOut[strings.LastIndex(strings.TrimSpace(errOut), "\n")+1:])
	if !strings.Contains(lastLine, cut) || !strings.Contains(lastLine, "at byte ") {
		t.Errorf("error line %q does not name the file and the offset", lastLine)
	}
	if !strings.Contains(errOut, "== dissect summary ==") {
		t.Error("no summary after the error")
	}
}

func TestSeveralFilesAreOneCapture(t *testing.T) {
	a := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	b := filepath.Join(pcapDir, "deltarobot_session.pcap")
	out, errOut, code := cli(t, "-o", "json", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	streams := map[int]string{}
	for _, r := range parseJSONL(t, out) {
		streams[*r.Stream] = *r.Proto
	}
	if streams[0] != "vrpn" || streams[1] != "deltarobot" || len(streams) != 2 {
		t.Errorf("streams %v, want 0: vrpn, 1: deltarobot", streams)
	}
}

func TestQuietPrintsOnlyTheSummary(t *testing.T) {
	out, errOut, code := cli(t, "-q", filepath.Join(pcapDir, "vrpn_udp_tcp.pcapng"))
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	// counts from the truth file of b_udp_tcp: 32 of each tracker report
	for _, want := range []string{"messages: 167", "vrpn_Tracker Pos_Quat", "│ 32 ", "streams:  3 (1 tcp, 2 udp)", "skipped:  0 records"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("summary lacks %q:\n%s", want, errOut)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-o", "xml", "x.pcap"},
		{"-d", "tcp.port==4000,nosuch", "x.pcap"},
		{"-d", "tcp.port=4000,deltarobot", "x.pcap"},
		{"-t", "q", "x.pcap"},
		{"--nosuchflag"},
	} {
		_, errOut, code := cli(t, args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", args, code, exitUsage, errOut)
		}
		if !strings.HasPrefix(errOut, "dissect: ") {
			t.Errorf("%q: stderr %q", args, errOut)
		}
	}
}

// TestProgressBar: with --progress always, stderr shows a bar with the
// file's name and a percentage, and clears it before the summary.
func TestProgressBar(t *testing.T) {
	f := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	_, errOut, code := cli(t, "-q", "--progress", "always", f)
	if code != 0 {
		t.Fatal(code)
	}
	if !strings.Contains(errOut, f+" [") || !strings.Contains(errOut, "%") || !strings.Contains(errOut, "\r\x1b[K\n== dissect summary") {
		t.Errorf("no progress bar in stderr: %q", errOut)
	}
	_, errOut, _ = cli(t, "-q", "--progress", "never", f)
	if strings.Contains(errOut, "\x1b[K") {
		t.Errorf("--progress never drew a bar: %q", errOut)
	}
}

// TestTimeFormats checks the table's TIME column against the first record's
// JSON time (2026-11-22T00:08:19.477060000Z for this capture, whose first
// packet is at .472623: the truth file's first_frame_epoch).
func TestTimeFormats(t *testing.T) {
	t.Setenv("TZ", "") // UTC: -t a and ad are local times
	f := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	for _, tc := range []struct{ flag, want string }{
		{"r", "0.004437 "},
		{"a", "00:08:19.477060 "},
		{"ad", "2026-11-22 00:08:19.477060 "},
		{"e", "1795306099.477060 "},
	} {
		out, _, code := cli(t, "--no-summary", "-t", tc.flag, f)
		if code != 0 {
			t.Fatal(code)
		}
		lines := strings.SplitN(out, "\n", 3)
		if len(lines) < 2 || !strings.HasPrefix(lines[1], tc.want) {
			t.Errorf("-t %s: first line %q, want it to start with %q", tc.flag, lines[1], tc.want)
		}
	}
}

// TestStdin reads a capture from standard input ("-").
func TestStdin(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "vrpn_tcp_only.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"-o", "json", "--no-summary", "-"}, bytes.NewReader(raw), &out, &errb)
	file, _, _ := cli(t, "-o", "json", "--no-summary", filepath.Join(pcapDir, "vrpn_tcp_only.pcap"))
	if code != 0 || out.String() != file || file == "" {
		t.Errorf("stdin: exit %d, %d bytes of output, want the file's %d bytes (stderr %q)", code, out.Len(), len(file), errb.String())
	}
}

// epipeWriter takes n bytes, then fails as a pipe whose reader went away.
type epipeWriter struct{ n int }

func (w *epipeWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, syscall.EPIPE
	}
	w.n -= len(p)
	return len(p), nil
}

// TestClosedStdoutEndsQuietly: dissect FILE | head. The reader going away
// ends the run with exit status 0 and the summary still on stderr, as
// tshark does.
func TestClosedStdoutEndsQuietly(t *testing.T) {
	var stderr bytes.Buffer
	f := filepath.Join(pcapDir, "vrpn_udp_tcp.pcapng")
	code := run([]string{"-o", "json", f}, strings.NewReader(""), &epipeWriter{n: 100}, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "== dissect summary ==") || strings.Contains(stderr.String(), "broken pipe") {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
}

// TestErrorLineIsEscaped: an error that quotes a hostile name (here a
// file name carrying a terminal title sequence) reaches the terminal
// escaped, on one line.
func TestErrorLineIsEscaped(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a\x1b]0;pwned\x07\u202e.pcap")
	_, stderr, code := cli(t, name)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if strings.ContainsAny(stderr, "\x1b\x07\u202e") || !strings.Contains(stderr, `a\x1b]0;pwned\x07\u{202e}.pcap`) {
		t.Fatalf("stderr %q", stderr)
	}
}
