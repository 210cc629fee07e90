package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Pipes stream (issue 24): a capture written into dissect's stdin or a
// named pipe one packet every 200 ms, as tcpdump -U -w - writes it, has
// each packet's record on dissect's stdout within 0.5 s of the packet
// being written (the bound; it takes a few milliseconds), in JSON,
// fields and the table. Before, nothing came out until the input ended.

// streamPacketGap is the pause between packets, as in the issue.
const streamPacketGap = 200 * time.Millisecond

// streamLatencyBound is the bound on a record's delay.
const streamLatencyBound = 500 * time.Millisecond

// pcapRecords splits a little-endian microsecond pcap into its file header
// and the first n records (each with its 16-byte header), and gives each
// record's time. It is read here by hand, not by the capture package.
func pcapRecords(t *testing.T, path string, n int) (hdr []byte, recs [][]byte, times []time.Time) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 24 || !bytes.Equal(raw[:4], []byte{0xd4, 0xc3, 0xb2, 0xa1}) {
		t.Fatalf("%s: not a little-endian microsecond pcap", path)
	}
	le := binary.LittleEndian
	off := 24
	for range n {
		if off+16 > len(raw) {
			t.Fatalf("%s: fewer than %d packets", path, n)
		}
		sec, usec, incl := le.Uint32(raw[off:]), le.Uint32(raw[off+4:]), int(le.Uint32(raw[off+8:]))
		end := off + 16 + incl
		recs = append(recs, raw[off:end])
		times = append(times, time.Unix(int64(sec), int64(usec)*1000).UTC())
		off = end
	}
	return raw[:24], recs, times
}

// streamLine is a line dissect wrote and when the test read it.
type streamLine struct {
	text string
	at   time.Time
}

func TestPipeStreamsRecords(t *testing.T) {
	// Roboid over UDP: each datagram holds whole messages, so each packet's
	// record can be written before the next packet comes. The first eight
	// packets have eight distinct times, one record each.
	hdr, recs, times := pcapRecords(t, filepath.Join("..", "..", "pcaps", "roboid_session.pcap"), 8)
	forms := []struct {
		name string
		args []string
		// text is how a packet's time appears in its record's line.
		text func(time.Time) string
	}{
		{"json", []string{"-o", "json"}, func(tm time.Time) string { return tm.Format("2006-01-02T15:04:05.000000000Z") }},
		{"fields", []string{"-o", "fields", "-e", "time", "-e", "type"}, func(tm time.Time) string { return tm.Format("2006-01-02T15:04:05.000000000Z") + "\t" }},
		{"table", []string{"-t", "e"}, func(tm time.Time) string { return fmt.Sprintf("%d.%06d ", tm.Unix(), tm.Nanosecond()/1000) }},
	}
	for _, input := range []string{"stdin", "fifo"} {
		for _, f := range forms {
			t.Run(input+"/"+f.name, func(t *testing.T) {
				lines, write, finish := startStreaming(t, input, append(f.args, "--no-summary"))
				var worst time.Duration
				var seen []string
				for k := range recs {
					if k == 0 {
						write(hdr)
					} else {
						time.Sleep(streamPacketGap)
					}
					wrote := time.Now()
					write(recs[k])
					want := f.text(times[k])
					// The first packet also waits for the process to start.
					wait := 5 * time.Second
					if k == 0 {
						wait = 15 * time.Second
					}
					var got streamLine
					found := false
					timeout := time.After(wait)
					for !found {
						select {
						case l, ok := <-lines:
							if !ok {
								t.Fatalf("packet %d: dissect ended its output before the record; lines so far:\n%s", k+1, strings.Join(seen, "\n"))
							}
							seen = append(seen, l.text)
							if strings.Contains(l.text, want) {
								got, found = l, true
							}
						case <-timeout:
							t.Fatalf("packet %d: no record containing %q %v after it was written (nothing is written until the input ends?); lines so far:\n%s", k+1, want, wait, strings.Join(seen, "\n"))
						}
					}
					d := got.at.Sub(wrote)
					if k > 0 {
						worst = max(worst, d)
					}
					if k > 0 && d > streamLatencyBound {
						t.Errorf("packet %d: its record came %v after the packet, want at most %v", k+1, d, streamLatencyBound)
					}
				}
				if f.name == "table" && (len(seen) == 0 || !strings.HasPrefix(seen[0], "TIME")) {
					t.Errorf("table: first line %q, want the header", seen)
				}
				finish()
				t.Logf("%s, %s: the slowest record came %v after its packet (packets 2 to %d)", input, f.name, worst, len(recs))
			})
		}
	}
}

// startStreaming starts dissect reading a capture from input ("stdin": a
// pipe as its stdin; "fifo": a named pipe given as its file) with args. It
// returns the lines of its stdout as they come, a function that writes
// bytes into the pipe, and one that closes the pipe and checks that
// dissect exits with status 0.
func startStreaming(t *testing.T, input string, args []string) (<-chan streamLine, func([]byte), func()) {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	var in *os.File
	switch input {
	case "stdin":
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := child(t, append(args, "-"), pr, outW, &stderr)
		pr.Close()
		in = pw
		return readLines(outR, outW), writer(t, in), finisher(t, in, cmd, &stderr)
	case "fifo":
		path := filepath.Join(t.TempDir(), "capture.fifo")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skipf("no named pipe: %v", err)
		}
		cmd := child(t, append(args, path), nil, outW, &stderr)
		in = openFIFOWriter(t, path, &stderr)
		return readLines(outR, outW), writer(t, in), finisher(t, in, cmd, &stderr)
	}
	t.Fatalf("input %q", input)
	return nil, nil, nil
}

// openFIFOWriter opens the named pipe for writing once dissect has opened
// it for reading (until then, a non-blocking open fails with ENXIO).
func openFIFOWriter(t *testing.T, path string, stderr *bytes.Buffer) *os.File {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f
		}
		if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			t.Fatalf("opening the named pipe: %v; dissect's stderr:\n%s", err, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readLines reads dissect's stdout (outR; outW is the child's copy, closed
// here) line by line, each stamped with when it was read.
func readLines(outR, outW *os.File) <-chan streamLine {
	outW.Close()
	lines := make(chan streamLine, 1024)
	go func() {
		defer close(lines)
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- streamLine{text: sc.Text(), at: time.Now()}
		}
	}()
	return lines
}

func writer(t *testing.T, in *os.File) func([]byte) {
	return func(b []byte) {
		t.Helper()
		if _, err := in.Write(b); err != nil {
			t.Fatalf("writing into the pipe: %v", err)
		}
	}
}

func finisher(t *testing.T, in *os.File, cmd interface{ Wait() error }, stderr *bytes.Buffer) func() {
	return func() {
		t.Helper()
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("dissect: %v; stderr:\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatal("dissect did not end after its input did")
		}
	}
}

// Which inputs stream (and get no progress bar in --progress auto): stdin
// when it is not a regular file, named pipes; not regular files.
func TestStreamingInput(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "a.pcap")
	if err := os.WriteFile(reg, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	regFile, err := os.Open(reg)
	if err != nil {
		t.Fatal(err)
	}
	defer regFile.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	fifo := filepath.Join(dir, "p.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files []string
		stdin io.Reader
		want  bool
	}{
		{"regular file", []string{reg}, nil, false},
		{"stdin a regular file", []string{"-"}, regFile, false},
		{"stdin a pipe", []string{"-"}, pr, true},
		{"stdin not a file", []string{"-"}, bytes.NewReader(nil), true},
		{"named pipe after a file", []string{reg, fifo}, nil, true},
		{"missing file", []string{filepath.Join(dir, "none")}, nil, false},
	} {
		if got := streamingInput(tc.files, tc.stdin); got != tc.want {
			t.Errorf("%s: streaming %v, want %v", tc.name, got, tc.want)
		}
	}
}
