package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/dissect-tools/dissect/capture/serial"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/pipeline"
)

// closingSink is an output whose Close fails with err (nil: succeeds).
type closingSink struct {
	err    error
	closed bool
}

func (s *closingSink) Record(*dissect.Record) error { return nil }
func (s *closingSink) Flush() error                 { return nil }
func (s *closingSink) Close() error                 { s.closed = true; return s.err }

// TestEndRun checks how a run ends, for files and live sources alike:
// whether the summary is written, what is returned (and so the exit code)
// and what goes to stderr besides, from the rules in endRun's doc comment.
func TestEndRun(t *testing.T) {
	diskFull := errors.New("no space left on device")
	damaged := errors.New("b.pcap: at byte 24: truncated")
	missing := errors.New("a.pcap: no such file")
	unplugged := &serial.PortError{Port: "/dev/ttyUSB0", Op: "read", Kind: serial.ErrDisconnected, Err: errors.New("EOF")}
	file := func(packets int64) *dissect.Summary { return &dissect.Summary{Packets: packets} }
	live := func(packets int64) *dissect.Summary {
		return &dissect.Summary{Packets: packets, Capture: &dissect.CaptureCounts{Source: "lo", Captured: packets}}
	}
	for _, c := range []struct {
		name     string
		sum      *dissect.Summary
		runErr   error
		closeErr error
		summary  bool   // the summary is written
		want     error  // errors.Is the returned error; nil: none returned
		silent   bool   // the error returned is silentError (already reported)
		stderr   string // written to stderr after the summary
		sig      os.Signal
		status   int // the exitStatus returned (0: none)
	}{
		{name: "file", sum: file(3), summary: true},
		{name: "file, nothing read", sum: file(0), runErr: missing, want: missing},
		{name: "file, damaged after some packets", sum: file(3), runErr: damaged, summary: true, want: damaged},
		// A full disk: the summary says what was read, then one line.
		{name: "file, output failed", sum: file(3), runErr: &pipeline.OutputError{Err: diskFull}, summary: true, want: diskFull},
		{name: "file, output failed to close", sum: file(3), closeErr: diskFull, summary: true, want: diskFull},
		// A signal: the summary, a line, exit status 128 + its number.
		{name: "file, SIGINT", sum: file(3), sig: syscall.SIGINT, summary: true, status: 130,
			stderr: "dissect: interrupted by SIGINT: stopped reading after 3 packets\n"},
		{name: "file, SIGTERM and a full disk", sum: file(4), sig: syscall.SIGTERM, runErr: &pipeline.OutputError{Err: diskFull}, summary: true, status: 143,
			stderr: "dissect: interrupted by SIGTERM: stopped reading after 4 packets\ndissect: writing output: no space left on device\n"},
		{name: "file, SIGHUP and the reader gone", sum: file(5), sig: syscall.SIGHUP, closeErr: syscall.EPIPE, summary: true, status: 129,
			stderr: "dissect: interrupted by SIGHUP: stopped reading after 5 packets\n"},
		{name: "files, SIGINT after two damaged", sum: file(3), sig: syscall.SIGINT, runErr: errors.Join(missing, damaged), summary: true, status: 130,
			stderr: "dissect: interrupted by SIGINT: stopped reading after 3 packets\ndissect: a.pcap: no such file\ndissect: b.pcap: at byte 24: truncated\n"},
		{name: "file, reader of the output gone", sum: file(3), runErr: &pipeline.OutputError{Err: syscall.EPIPE}, summary: true},
		{name: "file, reader gone at close", sum: file(3), closeErr: syscall.EPIPE, summary: true},
		{name: "files, two damaged", sum: file(3), runErr: errors.Join(missing, damaged), summary: true, silent: true,
			stderr: "dissect: a.pcap: no such file\ndissect: b.pcap: at byte 24: truncated\n"},
		{name: "live", sum: live(0), summary: true},
		{name: "live, output failed", sum: live(5), runErr: &pipeline.OutputError{Err: diskFull}, summary: true, want: diskFull},
		{name: "live, output failed to close", sum: live(5), closeErr: diskFull, summary: true, want: diskFull},
		{name: "live, reader of the output gone", sum: live(5), runErr: &pipeline.OutputError{Err: syscall.EPIPE}, summary: true},
		// A PortError unwraps to its kind and cause: one error all the same.
		{name: "serial, unplugged", sum: live(0), runErr: unplugged, summary: true, want: serial.ErrDisconnected},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			out := &closingSink{err: c.closeErr}
			err := (&readOpts{interrupted: c.sig}).endRun(&stderr, out, c.sum, c.runErr)
			if !out.closed {
				t.Error("the output was not closed")
			}
			if got := strings.Contains(stderr.String(), "== dissect summary =="); got != c.summary {
				t.Errorf("summary written: %v, want %v; stderr:\n%s", got, c.summary, stderr.String())
			}
			var silent silentError
			var status exitStatus
			switch {
			case c.status != 0:
				if !errors.As(err, &status) || status.code != c.status {
					t.Errorf("returned %v, want exit status %d", err, c.status)
				}
			case c.silent:
				if !errors.As(err, &silent) {
					t.Errorf("returned %v, want the silent error", err)
				}
			case c.want == nil && err != nil:
				t.Errorf("returned %v, want nil (exit 0)", err)
			case c.want != nil && (!errors.Is(err, c.want) || errors.As(err, &silent)):
				t.Errorf("returned %v, want %v itself", err, c.want)
			}
			// Nothing before the summary; the errors reported come after it.
			got := stderr.String()
			if c.summary && !strings.HasPrefix(strings.TrimLeft(got, "\n"), "== dissect summary ==") ||
				!c.summary && got != c.stderr || !strings.HasSuffix(got, c.stderr) {
				t.Errorf("stderr:\n%s\nwant the summary (%v), then:\n%s", got, c.summary, c.stderr)
			}
		})
	}
}

// TestEndRunAborted: a second Ctrl-C ends a live run at once. The output
// is left alone (the decoder may still write to it), no summary is written,
// one line says how far the capture got, and the exit code is 1.
func TestEndRunAborted(t *testing.T) {
	for _, c := range []struct {
		counts dissect.CaptureCounts
		want   string
	}{
		{dissect.CaptureCounts{Source: "lo", Captured: 7}, "dissect: stopped at once: 7 packets captured; records still queued for output were not written\n"},
		{dissect.CaptureCounts{Source: "lo", Captured: 7, Written: 6, WritePath: "rig.pcapng"},
			"dissect: stopped at once: 7 packets captured, 6 written to rig.pcapng; records still queued for output were not written\n"},
	} {
		var stderr bytes.Buffer
		out := &closingSink{}
		err := (&readOpts{}).endRun(&stderr, out, &dissect.Summary{Packets: 7, Capture: &c.counts}, pipeline.ErrAborted)
		if out.closed {
			t.Error("the output was closed while the decoder may still write to it")
		}
		if got := stderr.String(); got != c.want {
			t.Errorf("stderr:\n%s\nwant\n%s", got, c.want)
		}
		var silent silentError
		if !errors.As(err, &silent) {
			t.Errorf("returned %v, want the silent error (exit 1, nothing more printed)", err)
		}
	}
}
