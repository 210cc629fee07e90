// Package engine wires the pipeline: captured packets go through
// reassembly into one dissect.Stream per TCP connection, UDP flow or serial
// link, whose records go to a sink and are counted for the summary. The same
// engine serves files, live interfaces and serial ports.
package engine

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"dissect/capture"
	"dissect/dissect"
	"dissect/reassembly"
)

// Config configures an [Engine].
type Config struct {
	Registry *dissect.Registry
	// Decode asks dissectors for fields; false decodes types only, which is
	// all a summary-only run (-q) needs.
	Decode bool
	// CountOnly sends to the sink only gaps, skipped bytes and messages with
	// warnings; other messages are only counted (summary-only runs).
	CountOnly  bool
	Limits     dissect.Limits
	Reassembly reassembly.Config
}

// Engine runs packets through reassembly and the dissectors.
type Engine struct {
	cfg  Config
	out  dissect.Sink
	asm  *reassembly.Assembler
	sum  Summary
	last time.Time
	err  error
}

type streamState struct {
	ds     *dissect.Stream
	closed [2]bool
}

// New returns an engine that writes records to out.
func New(cfg Config, out dissect.Sink) *Engine {
	e := &Engine{cfg: cfg, out: out}
	e.sum.init()
	e.asm = reassembly.New((*handler)(e), cfg.Reassembly)
	return e
}

// Packet processes one captured packet. It returns the first error a sink
// returned (for example a closed pipe), after which the run should stop.
func (e *Engine) Packet(p *capture.Packet) error {
	if e.err != nil {
		return e.err
	}
	if e.sum.Packets == 0 {
		e.sum.First = p.Time
		if es, ok := e.out.(EpochSetter); ok {
			es.SetEpoch(p.Time)
		}
	}
	e.sum.Packets++
	e.sum.Bytes += int64(len(p.Data))
	e.last = p.Time
	e.sum.Last = p.Time
	e.asm.Packet(p)
	return e.err
}

// Expire ends streams idle for longer than idle (live capture), so memory
// stays bounded over long runs.
func (e *Engine) Expire(now time.Time, idle time.Duration) error {
	if e.err == nil {
		e.asm.Expire(now, idle)
	}
	return e.err
}

// Finish ends every stream at the end of input: held bytes become gap or
// skipped records. Call it once, also after a read error, so that everything
// decoded so far is written.
func (e *Engine) Finish() error {
	if e.err == nil {
		e.asm.Flush(e.last)
	}
	e.sum.Reassembly = e.asm.Stats()
	return e.err
}

// EpochSetter is implemented by sinks that show times relative to the first
// packet (the table); the engine calls SetEpoch with that packet's time.
type EpochSetter interface {
	SetEpoch(t time.Time)
}

// Summary returns the counts so far.
func (e *Engine) Summary() *Summary { return &e.sum }

// record counts r and passes it on.
func (e *Engine) record(r *dissect.Record) error {
	e.sum.count(r)
	if e.out == nil {
		return nil
	}
	return e.out.Record(r)
}

// handler adapts the engine to reassembly.Handler without exporting the
// methods on Engine.
type handler Engine

func (h *handler) Open(s *reassembly.Stream, t time.Time) {
	e := (*Engine)(h)
	info := dissect.StreamInfo{ID: s.ID, Transport: s.Transport, Addr: s.Addr, Link: s.Link}
	if info.Transport == dissect.Serial {
		info.Name = [2]string{"host", s.Link}
	} else {
		info.Name = [2]string{addrString(s.Addr[0]), addrString(s.Addr[1])}
	}
	e.sum.Streams[info.Transport]++
	sink := dissect.SinkFunc(e.record)
	s.User = &streamState{ds: dissect.NewStream(info, e.cfg.Registry, sink, dissect.StreamOptions{Limits: e.cfg.Limits, Decode: e.cfg.Decode, CountOnly: e.cfg.CountOnly})}
}

func addrString(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func (h *handler) stream(s *reassembly.Stream) *streamState {
	st, _ := s.User.(*streamState)
	return st
}

func (h *handler) check(st *streamState) {
	if err := st.ds.Err(); err != nil && h.err == nil {
		h.err = err
	}
}

func (h *handler) Data(s *reassembly.Stream, dir reassembly.Dir, t time.Time, data []byte) {
	if st := h.stream(s); st != nil {
		st.ds.Data(dir, t, data)
		h.check(st)
	}
}

func (h *handler) Datagram(s *reassembly.Stream, dir reassembly.Dir, t time.Time, data []byte) {
	if st := h.stream(s); st != nil {
		st.ds.Datagram(dir, t, data)
		h.check(st)
	}
}

func (h *handler) Gap(s *reassembly.Stream, dir reassembly.Dir, t time.Time, n int64) {
	if st := h.stream(s); st != nil {
		st.ds.Gap(dir, t, n)
		h.check(st)
	}
}

func (h *handler) Close(s *reassembly.Stream, dir reassembly.Dir, t time.Time) {
	st := h.stream(s)
	if st == nil || st.closed[dir&1] {
		return
	}
	st.ds.End(dir, t)
	st.closed[dir&1] = true
	h.check(st)
	if st.closed[0] && st.closed[1] {
		(*Engine)(h).sum.streamDone(st.ds)
		s.User = nil
	}
}

// RunFile decodes the capture file at path. Everything decoded before a read
// error is written before the error is returned; the error names the file
// and the byte offset.
func RunFile(path string, cfg Config, out dissect.Sink) (*Summary, error) {
	src, err := capture.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	e := New(cfg, out)
	err = Run(src, e, nil)
	return e.Summary(), err
}

// Run feeds every packet of src to e, then finishes e. progress, when not
// nil, is called after each packet. Read errors are returned after Finish,
// so that what was decoded before them is complete.
func Run(src capture.Source, e *Engine, progress func()) error {
	var readErr error
	for {
		p, err := src.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		if err := e.Packet(p); err != nil {
			return err
		}
		if progress != nil {
			progress()
		}
	}
	if err := e.Finish(); err != nil {
		return err
	}
	return readErr
}

// ErrSink wraps an error a sink returned, so callers can tell output
// failures from input failures.
type ErrSink struct{ Err error }

func (e *ErrSink) Error() string { return fmt.Sprintf("writing output: %v", e.Err) }
func (e *ErrSink) Unwrap() error { return e.Err }
