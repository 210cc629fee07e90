package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/leakcheck"
	"github.com/dissect-tools/dissect/internal/testenc/interleave"
	"github.com/dissect-tools/dissect/output"
)

// logSink writes down, in order, everything it is told: each record as
// its -o json line (with -x), and the epoch, the streams opened, the
// records a filter hid, the flushes and the close. It is used by one
// goroutine at a time, as a sink is; the mutex only lets a test read the
// log while Beside's goroutine writes it.
type logSink struct {
	mu     sync.Mutex
	log    []string
	app    *output.JSONLines
	delay  time.Duration // slept in every Record
	failAt int           // Record number (1-based) that fails; 0: none
	n      int
	flushE error // returned by Flush
}

var errSink = errors.New("sink: no space left on device")

func (s *logSink) add(e string) {
	s.mu.Lock()
	s.log = append(s.log, e)
	s.mu.Unlock()
}

func (s *logSink) Record(r *dissect.Record) error {
	s.n++
	if s.n == s.failAt {
		return errSink
	}
	time.Sleep(s.delay)
	if s.app == nil {
		s.app = output.NewJSONLines(true)
	}
	s.add(string(s.app.AppendRecord(nil, r)))
	return nil
}

func (s *logSink) SetEpoch(t time.Time)             { s.add("epoch " + t.String()) }
func (s *logSink) StreamOpened(id dissect.StreamID) { s.add(fmt.Sprintf("opened %+v", id)) }
func (s *logSink) Seen(t time.Time)                 { s.add("seen " + t.String()) }
func (s *logSink) Flush() error                     { s.add("flush"); return s.flushE }
func (s *logSink) Close() error                     { s.add("close"); return nil }

func (s *logSink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// interleavedSource is 64 interleaved Deltarobot connections with gaps
// and skipped bytes: more records than several batches.
func interleavedSource(t *testing.T) func() capture.Source {
	pkts, err := interleave.Deltarobot(64, 40)
	if err != nil {
		t.Fatal(err)
	}
	return func() capture.Source { return &sliceSource{pkts: pkts} }
}

// Behind Beside, a sink is told what it is told alone, in the same order:
// every record (its bytes with -x, every envelope key), the epoch, every
// stream opened, the flush and the close, whatever the batch size.
func TestBesideTellsTheSinkWhatItIsToldAlone(t *testing.T) {
	src := interleavedSource(t)
	reg := deltaRegistry(t)
	run := func(s dissect.Sink) {
		if _, err := Run(context.Background(), src(), Config{Registry: reg, Sink: s, Raw: true}); err != nil {
			t.Fatal(err)
		}
		if err := s.(interface{ Close() error }).Close(); err != nil {
			t.Fatal(err)
		}
	}
	alone := &logSink{}
	run(alone)
	want := alone.lines()
	for _, k := range []string{`"type":"gap"`, `"type":"skipped"`, `"stream":63,`, "epoch ", "opened ", `"raw":"`} {
		if !strings.Contains(strings.Join(want, "\n"), k) {
			t.Fatalf("the sink alone is told nothing with %s", k)
		}
	}
	if len(want) < 2*1024 {
		t.Fatalf("%d things told: too few for several batches", len(want))
	}
	before := runtime.NumGoroutine()
	for _, batch := range []int{1, 7, 1024, 100000} {
		s := &logSink{}
		run(NewBeside(s, batch))
		if got := s.lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("batch %d: %d things told, alone %d; first difference at %d", batch, len(got), len(want), i)
		}
	}
	leakcheck.Settled(t, before, "Close")
}

// A slow sink gets every record, in order; Record waits for a free batch
// rather than queueing more than the pool holds; no goroutine is left.
func TestBesideSlowSink(t *testing.T) {
	before := runtime.NumGoroutine()
	s := &logSink{delay: 200 * time.Microsecond}
	b := NewBeside(s, 3)
	const n = 200
	for i := range n {
		if err := b.Record(&dissect.Record{Proto: "p", Type: "t", Frame: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		// What Record has taken and the sink has not: at most the pool.
		if queued := i + 1 - len(s.lines()); queued > besideBatches*3 {
			t.Fatalf("after record %d, %d records queued: more than %d batches of 3", i+1, queued, besideBatches)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	got := s.lines()
	if len(got) != n+1 || got[n] != "close" {
		t.Fatalf("the sink was told %d things, want %d records and a close; the last: %q", len(got), n, got[max(0, len(got)-2):])
	}
	for i, l := range got[:n] {
		if !strings.Contains(l, fmt.Sprintf(`"frame":%d,`, i+1)) {
			t.Fatalf("record %d reached the sink as %s", i+1, l)
		}
	}
	leakcheck.Settled(t, before, "Close")
}

// blockSink holds its first Record until released.
type blockSink struct {
	got     atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func (s *blockSink) Record(*dissect.Record) error {
	if s.got.Add(1) == 1 {
		close(s.entered)
		<-s.release
	}
	return nil
}

// While the sink is stuck, Record stops taking records once the pool is
// full: the queue is bounded.
func TestBesideQueueIsBounded(t *testing.T) {
	s := &blockSink{entered: make(chan struct{}), release: make(chan struct{})}
	const batch = 2
	b := NewBeside(s, batch)
	var taken atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 1000 {
			b.Record(&dissect.Record{Type: "t"})
			taken.Add(1)
		}
	}()
	<-s.entered
	time.Sleep(50 * time.Millisecond) // lets Record run on, if it would
	if n := taken.Load(); n >= besideBatches*batch {
		t.Errorf("%d records taken while the sink was stuck on its first; the pool holds %d", n, besideBatches*batch)
	}
	close(s.release)
	<-done
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.got.Load(); n != 1000 {
		t.Errorf("the sink got %d records, want 1000", n)
	}
}

// The sink's error comes back: Record returns it soon after, Flush and
// Close return it, the sink is closed all the same, nothing after the
// failed record reaches the sink, and no goroutine is left. Through Run,
// it is an output error.
func TestBesideSinkError(t *testing.T) {
	before := runtime.NumGoroutine()
	s := &logSink{failAt: 50}
	b := NewBeside(s, 10)
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		err = b.Record(&dissect.Record{Type: "t"})
	}
	if !errors.Is(err, errSink) {
		t.Fatalf("Record: %v, want the sink's error", err)
	}
	if err := b.Flush(); !errors.Is(err, errSink) {
		t.Errorf("Flush: %v", err)
	}
	if err := b.Close(); !errors.Is(err, errSink) {
		t.Errorf("Close: %v", err)
	}
	if got := s.lines(); len(got) != 50 || got[49] != "close" {
		t.Errorf("the sink was told %d things (last %q), want its 49 records and the close", len(got), got[len(got)-1])
	}
	leakcheck.Settled(t, before, "Close")

	s = &logSink{failAt: 2000}
	b = NewBeside(s, 7)
	_, err = Run(context.Background(), interleavedSource(t)(), Config{Registry: deltaRegistry(t), Sink: b})
	var oe *OutputError
	if !errors.As(err, &oe) || !errors.Is(err, errSink) {
		t.Errorf("Run: %v, want an OutputError with the sink's error", err)
	}
	if err := b.Close(); !errors.Is(err, errSink) {
		t.Errorf("Close after Run: %v", err)
	}
	leakcheck.Settled(t, before, "Close")
}

// A failing Flush of the sink is Flush's error, before and after the
// goroutine has started.
func TestBesideFlushError(t *testing.T) {
	for _, records := range []int{1, 5} {
		s := &logSink{flushE: errSink}
		b := NewBeside(s, 2)
		for range records {
			b.Record(&dissect.Record{Type: "t"})
		}
		if err := b.Flush(); !errors.Is(err, errSink) {
			t.Errorf("%d records: Flush: %v", records, err)
		}
		if err := b.Close(); !errors.Is(err, errSink) {
			t.Errorf("%d records: Close: %v", records, err)
		}
	}
}

// Flush returns once every record before it has reached the sink and the
// sink has flushed; a call given to Do runs between the records it came
// between; before and after the goroutine starts, which it does only
// once a batch is full (a small input stays in the caller's goroutine).
func TestBesideFlushOrder(t *testing.T) {
	for _, batch := range []int{1024, 2} {
		s := &logSink{}
		b := NewBeside(s, batch)
		rec := func(f int64) {
			if err := b.Record(&dissect.Record{Type: "t", Frame: f}); err != nil {
				t.Fatal(err)
			}
		}
		rec(1)
		b.Do(func() { s.add("do") })
		rec(2)
		rec(3)
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		got := s.lines()
		want := []string{`"frame":1,`, "do", `"frame":2,`, `"frame":3,`, "flush"}
		ok := len(got) == len(want)
		for i := range want {
			ok = ok && strings.Contains(got[i], want[i])
		}
		if !ok {
			t.Errorf("batch %d: before Flush returned the sink was told %q, want %q", batch, got, want)
		}
		if b.started != (batch == 2) {
			t.Errorf("batch %d: the goroutine started: %v; want it only once a batch is full", batch, b.started)
		}
		rec(4)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if got := s.lines(); len(got) != 7 || !strings.Contains(got[5], `"frame":4,`) || got[6] != "close" {
			t.Errorf("batch %d: after Close the sink was told %q", batch, got)
		}
	}
}

// Close with nothing written closes the sink, starts nothing and tells the
// sink nothing else.
func TestBesideCloseWithNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	s := &logSink{}
	b := NewBeside(s, 0)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := s.lines(); strings.Join(got, ",") != "close" {
		t.Errorf("the sink was told %q, want a close", got)
	}
	if b.Sink() != dissect.Sink(s) {
		t.Error("Sink is not the wrapped sink")
	}
	leakcheck.Settled(t, before, "Close")
}
