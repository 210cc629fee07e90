package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture/serial"
)

// Serial taps with a reader of the output that does not read at first:
// the ports are still read at line speed, what fits in the queues is
// decoded, and what does not is a gap record, counted in the summary.

// serialSlow runs 'dissect serial' in-process with stdout going to a reader
// that waits before reading, and returns once the tap is open.
func serialSlow(t *testing.T, out *slowReader, args ...string) (cancel func() error, stderr *syncBuffer) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	root := newRootCmd(strings.NewReader(""), out.pw, stderr)
	root.SetArgs(append([]string{"serial"}, args...))
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		out.pw.Close()
		done <- err
	}()
	waitFor(t, "the tap to start", func() bool { return strings.Contains(stderr.String(), "Ctrl-C to stop") })
	t.Cleanup(stop)
	return func() error {
		stop()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("the command did not stop")
			return nil
		}
	}, stderr
}

// positions is the Deltarobot handshake followed by n actuator positions.
func positions(t *testing.T, n int) []byte {
	var b bytes.Buffer
	b.Write(lvHex(t, lvDRMagic))
	b.Write(lvHex(t, lvDRVersion))
	pos := lvHex(t, lvDRPos123)
	for range n {
		b.Write(pos)
	}
	return b.Bytes()
}

// writeTimed writes b to the wire in 4 KiB writes and fails if that takes
// long: the tap must drain the port whatever the output does.
func writeTimed(t *testing.T, w *serial.PTY, b []byte) {
	t.Helper()
	start := time.Now()
	for off := 0; off < len(b); off += 4096 {
		write(t, w.Master, b[off:min(off+4096, len(b))])
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("writing %d bytes to the port took %v: the tap did not keep reading", len(b), d)
	}
}

func TestSerialSlowReaderLosesNothing(t *testing.T) {
	hostWire := wire(t)
	out := newSlowReader(t, 3*time.Second)
	stop, stderr := serialSlow(t, out, "-o", "json", "-d", "serial,deltarobot", "--host-tx", hostWire.Path)
	const n = 5000
	data := positions(t, n)
	writeTimed(t, hostWire, data)
	time.Sleep(500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	recs := <-out.recs
	dirs := tallyJSON(t, recs)
	d := dirs["host"]
	if d == nil || d.msgs != n+2 || d.msg != int64(len(data)) || d.gap != 0 || d.skip != 0 {
		t.Fatalf("host→device: %+v; want %d messages, %d bytes, nothing lost\n%s", d, n+2, len(data), stderr.String())
	}
	if !strings.Contains(stderr.String(), " 0 dropped by dissect") {
		t.Errorf("summary:\n%s", stderr.String())
	}
}

func TestSerialSlowReaderForcedLoss(t *testing.T) {
	hostWire := wire(t)
	out := newSlowReader(t, 3*time.Second)
	stop, stderr := serialSlow(t, out, "-o", "json", "-d", "serial,deltarobot", "--decode-queue", "16384", "--host-tx", hostWire.Path)
	data := positions(t, 120000) // 2.1 MB
	writeTimed(t, hostWire, data)
	time.Sleep(500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	recs := <-out.recs
	d := tallyJSON(t, recs)["host"]
	if d == nil {
		t.Fatalf("no record\n%s", stderr.String())
	}
	if got := d.msg + d.skip + d.gap; got != int64(len(data)) {
		t.Errorf("%d message + %d skipped + %d gap bytes = %d, want the %d bytes written", d.msg, d.skip, d.gap, got, len(data))
	}
	if d.gap == 0 {
		t.Fatalf("nothing was lost with 16 KiB queues and a reader that waits: the test did not force loss\n%s", stderr.String())
	}
	s := stderr.String()
	t.Logf("stderr:\n%s", s)
	if !strings.Contains(s, "warning:") || !strings.Contains(s, "gaps:     ") || strings.Contains(s, "gaps:     0 ") {
		t.Errorf("the loss is not shown on stderr:\n%s", s)
	}
}
