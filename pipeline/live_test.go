package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
)

func liveConfig(t testing.TB, sink dissect.Sink, lc *LiveConfig) Config {
	lc.TimeoutErr = errTimeout
	if lc.Name == "" {
		lc.Name = "fake0"
	}
	return Config{Registry: registry(t), Sink: sink, Live: lc}
}

// countFile returns the packets of the capture file at path, read back with
// our reader.
func countFile(t testing.TB, path string) int {
	t.Helper()
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n := 0
	for {
		if _, err := src.Next(); err != nil {
			return n
		}
		n++
	}
}

// goroutines waits briefly for the goroutine count to drop back to want.
func checkGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after the run, %d before:\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// background runs Run in a goroutine until the traffic of src is all
// served, then cancels (Ctrl-C) and returns a function that waits for the
// run's result. lc.Save is created at save.
func background(t *testing.T, src *fakeLive, sink *gateSink, lc *LiveConfig, save string) (wait func() (*dissect.Summary, error)) {
	t.Helper()
	var err error
	if lc.Save, err = CreateSave(save, "fake0", capture.LinkEthernet, 65535, Ring{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var sum *dissect.Summary
	var runErr error
	go func() {
		defer close(done)
		sum, runErr = Run(ctx, src, liveConfig(t, sink, lc))
	}()
	// The traffic is over long before the reader reads: what was not
	// dropped is in the queue, and everything is in the file.
	deadline := time.Now().Add(10 * time.Second)
	for src.served.Load() < int64(len(src.frames)) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	cancel() // Ctrl-C while the output is still blocked
	return func() (*dissect.Summary, error) {
		<-done
		return sum, runErr
	}
}

// A reader of the output that does not read for a while loses nothing: the
// capture goroutine keeps reading and saving, the queue holds the packets,
// and a stop after the traffic decodes every one of them.
func TestSlowReaderLosesNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newSession(t, 3000, 1000)
	src := &fakeLive{frames: s.frames}
	sink := newGateSink(false)
	lc := &LiveConfig{}
	wait := background(t, src, sink, lc, filepath.Join(t.TempDir(), "x.pcapng"))
	time.Sleep(300 * time.Millisecond)
	if at := src.closeAt.Load(); at == 0 {
		t.Errorf("the capture did not stop while the output was blocked")
	}
	close(sink.gate)
	sum, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	tl := tallyRecords(t, sink.records())
	for d := range 2 {
		if tl.msgs[d] != s.msgs[d] || tl.msgBytes[d] != s.bytes[d] || tl.gap[d] != 0 || tl.skipped[d] != 0 {
			t.Errorf("direction %d: %d messages (%d bytes), %d gap, %d skipped bytes; want %d messages, %d bytes, nothing lost", d, tl.msgs[d], tl.msgBytes[d], tl.gap[d], tl.skipped[d], s.msgs[d], s.bytes[d])
		}
	}
	c := sum.Capture
	if c.Captured != int64(len(s.frames)) || c.DissectDropped != 0 || c.Written != c.Captured || c.Stopped != "interrupted" {
		t.Errorf("capture counters %+v; want %d captured and written, none dropped, stopped by interrupt", *c, len(s.frames))
	}
	if n := countFile(t, lc.Save.Path()); n != len(s.frames) {
		t.Errorf("-w file holds %d packets, want %d", n, len(s.frames))
	}
	checkGoroutines(t, before)
}

// When decoding falls behind and the queue is full, packets are still
// written to -w, and the payload of every packet dropped from the queue is
// a gap record of its stream: messages + skipped + gaps tile each
// direction exactly, and gaps appear only with drops.
func TestQueueFullBecomesGaps(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newSession(t, 40000, 1400)
	src := &fakeLive{frames: s.frames}
	sink := newGateSink(false)
	lc := &LiveConfig{QueueBytes: 64 << 10}
	var warned []string
	lc.Warn = func(m string) { warned = append(warned, m) }
	wait := background(t, src, sink, lc, filepath.Join(t.TempDir(), "x.pcapng"))
	close(sink.gate)
	sum, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capture
	if c.DissectDropped == 0 {
		t.Fatalf("no packet was dropped with a 64 KiB queue and a blocked reader: the test does not test loss (%+v)", *c)
	}
	if c.Untraced != 0 {
		t.Errorf("%d dropped packets were not traced to their stream", c.Untraced)
	}
	if len(warned) == 0 {
		t.Errorf("no warning at the first drop")
	}
	tl := tallyRecords(t, sink.records())
	for d := range 2 {
		if got := tl.msgBytes[d] + tl.skipped[d] + tl.gap[d]; got != s.bytes[d] {
			t.Errorf("direction %d: %d message + %d skipped + %d gap bytes = %d, want %d", d, tl.msgBytes[d], tl.skipped[d], tl.gap[d], got, s.bytes[d])
		}
	}
	if tl.gap[1] == 0 {
		t.Errorf("packets were dropped but the leader's direction has no gap record")
	}
	if sum.GapBytes != tl.gap[0]+tl.gap[1] {
		t.Errorf("summary counts %d gap bytes, the records %d", sum.GapBytes, tl.gap[0]+tl.gap[1])
	}
	if n := countFile(t, lc.Save.Path()); n != len(s.frames) || c.Written != int64(n) {
		t.Errorf("-w file holds %d packets (counted %d), want every captured packet, %d", n, c.Written, len(s.frames))
	}
	checkGoroutines(t, before)
}

// -a duration stops the capture on time even while the output is blocked;
// the -w file is closed then, and the records follow when the reader reads.
func TestDurationFiresWhileOutputBlocked(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newSession(t, 200, 500)
	src := &fakeLive{frames: s.frames, endless: true}
	sink := newGateSink(false)
	lc := &LiveConfig{Duration: 300 * time.Millisecond}
	start := time.Now()
	done := make(chan struct{})
	var sum *dissect.Summary
	go func() {
		defer close(done)
		sum, _ = Run(context.Background(), src, liveConfig(t, sink, lc))
	}()
	time.Sleep(1500 * time.Millisecond)
	at := src.closeAt.Load()
	if at == 0 {
		t.Fatalf("-a duration:0.3 had not stopped the capture after 1.5 s of blocked output")
	}
	if took := time.Unix(0, at).Sub(start); took > time.Second {
		t.Errorf("the capture stopped after %v, want about 300 ms", took)
	}
	close(sink.gate)
	<-done
	if sum.Capture.Stopped != "-a duration" {
		t.Errorf("stopped: %q", sum.Capture.Stopped)
	}
	checkGoroutines(t, before)
}

// -c N captures exactly N packets and decodes them all.
func TestCountStopsExactly(t *testing.T) {
	s := newSession(t, 100, 200)
	src := &fakeLive{frames: s.frames, endless: true}
	sink := newGateSink(true)
	sum, err := Run(context.Background(), src, liveConfig(t, sink, &LiveConfig{Packets: 17}))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Capture.Captured != 17 || sum.Packets != 17 || sum.Capture.Stopped != "-c" {
		t.Errorf("captured %d, decoded %d, stopped %q; want 17, 17, -c", sum.Capture.Captured, sum.Packets, sum.Capture.Stopped)
	}
}

// A second Ctrl-C (Abort) ends the run at once although the output never
// unblocks.
func TestAbortReturnsAtOnce(t *testing.T) {
	s := newSession(t, 100, 200)
	src := &fakeLive{frames: s.frames, endless: true}
	sink := newGateSink(false) // never opened
	abort := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, src, liveConfig(t, sink, &LiveConfig{Abort: abort}))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	time.Sleep(100 * time.Millisecond)
	close(abort)
	select {
	case err := <-done:
		if !errors.Is(err, ErrAborted) {
			t.Errorf("Run returned %v, want ErrAborted", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return within 2 s of the abort")
	}
	close(sink.gate) // let the abandoned decoding goroutine end
}

// When the reader of the output goes away (EPIPE), the capture stops as on
// Ctrl-C, -w is complete, and Run reports the output error.
func TestOutputClosedStopsCapture(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newSession(t, 100, 200)
	src := &fakeLive{frames: s.frames, endless: true}
	sink := newGateSink(true)
	sink.err = syscall.EPIPE
	save := filepath.Join(t.TempDir(), "x.pcapng")
	lc := &LiveConfig{}
	var err error
	if lc.Save, err = CreateSave(save, "fake0", capture.LinkEthernet, 65535, Ring{}); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), src, liveConfig(t, sink, lc))
	var oe *OutputError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Run returned %v, want an OutputError wrapping EPIPE", err)
	}
	if sum.Capture.Stopped != "output closed" {
		t.Errorf("stopped: %q", sum.Capture.Stopped)
	}
	if n := countFile(t, save); int64(n) != sum.Capture.Written || n == 0 {
		t.Errorf("-w holds %d packets, %d written", n, sum.Capture.Written)
	}
	checkGoroutines(t, before)
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
