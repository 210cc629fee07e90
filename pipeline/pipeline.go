package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/reassembly"
)

// Config configures one run.
type Config struct {
	Registry *dissect.Registry
	// Sink receives the records; nil counts them only (-q).
	Sink dissect.Sink
	// CountOnly is for summary-only runs: parsers give types only, and
	// messages without warnings are counted instead of sent to Sink.
	CountOnly bool
	// TypesOnly asks parsers for types only, no fields (CountOnly implies
	// it); every record still goes to Sink.
	TypesOnly bool
	// Raw gives every record its bytes (dissect.Record.Raw, for -x); see
	// dissect.StreamOptions.Raw.
	Raw        bool
	Limits     dissect.Limits
	Reassembly reassembly.Config
	// MaxTypes caps the summary's distinct (protocol, type) rows; types
	// beyond it are counted in one dissect.OtherTypes row per protocol
	// (dissect.TypeCounts.SetLimit; 0: dissect.MaxTypeRows).
	MaxTypes int

	// Live selects the capture path for sources that capture as they run
	// (network interfaces, serial ports): a capture goroutine reads the
	// source, writes Save and hands packets to decoding through a bounded
	// queue; it never waits for decoding or output. Files are read in the
	// caller's goroutine, packet by packet, and nothing is dropped.
	Live *LiveConfig

	// Progress, when not nil, is called about every thousand packets
	// (files).
	Progress func()
	// Packets, when positive, ends a file run after that many packets
	// (tshark's -c); live runs use LiveConfig.Packets.
	Packets int64
	// Cut, when set (file runs with a sink), is told which packets
	// carried the bytes of each record; the sink calls Cut.Keep with the
	// records whose packets are to be copied ([CopyCut]).
	Cut *Cut
	// Workers is how many goroutines a run may keep busy (0 or 1: one). A
	// file run without a sink (-q) with 2 or more dissects on a second
	// goroutine while the first reads and reassembles; the summary is the
	// same.
	Workers int
}

// LiveConfig configures the capture path of a live run.
type LiveConfig struct {
	// Name names the source in the summary and in warnings ("eth0").
	Name string
	// Stop: the capture ends after Packets packets or after Duration (0:
	// no limit), or when the run's context is cancelled (Ctrl-C).
	Packets  int64
	Duration time.Duration
	// Idle ends streams with no packet for this long, so memory stays
	// bounded over long captures (0: never).
	Idle time.Duration
	// QueueBytes bounds the packets queued for decoding (0: 64 MiB).
	QueueBytes int
	// Save, when not nil, gets every captured packet, written by the
	// capture goroutine before the packet is queued.
	Save *Save
	// Kernel, when not nil, reads the kernel's counters (live interfaces).
	Kernel func() (KernelStats, error)
	// SerialDropped, when not nil, reads the bytes a serial tap could not
	// queue (they reach reassembly as Dropped markers).
	SerialDropped func() int64
	// Warn writes a warning at once (stderr); nil: none.
	Warn func(msg string)
	// Abort, when closed, ends the run at once (a second Ctrl-C): the
	// capture is stopped and Save closed, and Run returns ErrAborted
	// without waiting for decoding or output.
	Abort <-chan struct{}
	// TimeoutErr is the error the source's Next returns when no packet
	// came within its read timeout (live.ErrTimeout); the capture
	// goroutine then does its housekeeping, and after a stop request it
	// ends the drain. Sources without a timeout (serial taps) implement
	// [Stopper] instead.
	TimeoutErr error
}

// KernelStats are a live source's kernel counters since it was opened.
type KernelStats struct {
	PassedFilter uint64 // passed the filter: delivered to dissect, or dropped
	Dropped      uint64 // dropped by the kernel: its buffer was full
}

// Stopper is implemented by live sources: Stop asks the source to capture
// nothing new; Next then returns what was already captured, then io.EOF.
// It may be called from any goroutine. [Files] implements it too: a file
// run whose ctx ends (a signal) stops reading there.
type Stopper interface {
	Stop()
}

// ErrAborted is returned by [Run] when LiveConfig.Abort was closed.
var ErrAborted = errors.New("stopped at once: records still queued were not written")

// OutputError wraps an error the sink returned, so callers can tell output
// failures from input failures.
type OutputError struct{ Err error }

func (e *OutputError) Error() string { return fmt.Sprintf("writing output: %v", e.Err) }
func (e *OutputError) Unwrap() error { return e.Err }

// EpochSetter is implemented by sinks that show times relative to the first
// packet (the table): the pipeline calls SetEpoch with that packet's time.
type EpochSetter interface {
	SetEpoch(t time.Time)
}

// StreamOpener is implemented by sinks that want to know of every stream
// opened, in order, whether or not it gives records: -z follow,tcp,…,N
// finds the stream whose number among its transport's (StreamID.Index,
// tshark's tcp.stream) is N.
type StreamOpener interface {
	StreamOpened(id dissect.StreamID)
}

// Flusher is implemented by sinks that buffer.
type Flusher interface {
	Flush() error
}

// Run reads src to its end (or, for a live run, until a stop rule or ctx
// ends the capture), decodes every packet, ends every stream, flushes the
// sink and returns the summary. Everything decoded before an input error
// is written before Run returns; the error names the input. An output
// error is an [*OutputError]. Several files are read as one capture with
// [Files].
//
// When ctx ends during a file run, a src that is a [Stopper] is stopped:
// the run ends as at the end of its input (every stream ended, the sink
// flushed) and Run returns what that end returns. The caller knows why
// ctx ended and says so.
func Run(ctx context.Context, src capture.Source, cfg Config) (*dissect.Summary, error) {
	start := time.Now()
	if cfg.Live != nil && cfg.Reassembly.IdleTimeout == 0 {
		// Live: streams end after LiveConfig.Idle without a packet, also
		// by packet time; 0 there means never.
		cfg.Reassembly.IdleTimeout = cfg.Live.Idle
		if cfg.Live.Idle <= 0 {
			cfg.Reassembly.IdleTimeout = -1
		}
	}
	d := newDecoder(&cfg)
	var sum dissect.Summary
	var err error
	staged := cfg.Live == nil && cfg.Sink == nil && cfg.Workers > 1
	switch {
	case cfg.Live != nil:
		err = runLive(ctx, src, &cfg, d, &sum)
		if errors.Is(err, ErrAborted) {
			sum.Elapsed = time.Since(start)
			return &sum, err
		}
	case staged:
		stop := stopOnDone(ctx, src)
		err = runStaged(src, &cfg, d) // it ends the streams itself
		stop()
	default:
		stop := stopOnDone(ctx, src)
		unhook := flushWhenIdle(src, cfg.Sink, d)
		err = runFile(src, &cfg, d)
		unhook()
		stop()
	}
	if !staged {
		if ferr := d.finish(); ferr != nil && err == nil {
			err = &OutputError{ferr}
		}
	}
	if f, ok := cfg.Sink.(Flusher); ok {
		if ferr := f.Flush(); ferr != nil && err == nil {
			err = &OutputError{ferr}
		}
	}
	d.summary(&sum)
	sum.Elapsed = time.Since(start)
	return &sum, err
}

// stopOnDone stops src, when it is a [Stopper], once ctx is done; the
// function returned ends the watch.
func stopOnDone(ctx context.Context, src capture.Source) func() {
	s, ok := src.(Stopper)
	if !ok {
		return func() {}
	}
	stop := context.AfterFunc(ctx, s.Stop)
	return func() { stop() }
}

// IdleNotifier is implemented by sources that can tell when their input
// has no bytes ready ([Files]: stdin, a named pipe): SetIdle's function
// is then called in the goroutine that calls Next, before Next waits.
type IdleNotifier interface {
	SetIdle(func())
}

// flushWhenIdle makes a file run stream: when src's input has no bytes
// ready (a pipe between packets), the sink is flushed, so that every
// record decoded so far is written out while the writer of the pipe
// pauses. The flush runs in runFile's goroutine, inside src.Next, between
// two packets. A flush error ends the run as one in Record does: the
// decoder keeps it (finish returns it) and src is stopped, so that a read
// waiting for the pipe gives up. The function returned removes the hook.
func flushWhenIdle(src capture.Source, sink dissect.Sink, d *decoder) func() {
	n, ok := src.(IdleNotifier)
	f, isFlusher := sink.(Flusher)
	if !ok || !isFlusher {
		return func() {}
	}
	n.SetIdle(func() {
		if d.err != nil {
			return
		}
		if err := f.Flush(); err != nil {
			d.err = err
			if s, ok := src.(Stopper); ok {
				s.Stop()
			}
		}
	})
	return func() { n.SetIdle(nil) }
}

// runFile reads src in this goroutine. A read error ends the input but
// not the run: what was decoded is finished and written.
func runFile(src capture.Source, cfg *Config, d *decoder) error {
	for n := 1; ; n++ {
		p, err := src.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := d.packet(p); err != nil {
			return &OutputError{err}
		}
		if cfg.Progress != nil && n&1023 == 1 {
			cfg.Progress()
		}
		if int64(n) == cfg.Packets {
			return nil
		}
	}
}
