package pipeline

import (
	"errors"
	"io"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/reassembly"
)

// A staged run splits a summary-only file run (no sink: -q) over two
// goroutines: the caller's reads and reassembles, a second one dissects
// and counts. Reassembly's events (a stream opened, its bytes, a gap, a
// close) are copied into batches and handed over in order through a
// bounded queue, so the second goroutine sees exactly the calls one
// goroutine would make, and the summary is the same.

// The batches in flight are kept small enough to stay in the processor's
// caches between the goroutine that fills them and the one that reads
// them: 5 batches of 256 KiB took, on the 50 MB generated capture, less
// than half the last-level cache misses of 5 of 1 MiB (valgrind's cache
// simulation, docs/performance-35-cpu.md), 25% fewer instructions in the
// garbage collector (fewer events to scan) and 10 MB less peak memory.
const (
	stageEvents  = 1024      // events per batch
	stageBytes   = 256 << 10 // bytes of data per batch, unless one event has more
	stageBatches = 4         // batches in flight
)

type stageKind uint8

const (
	evOpen stageKind = iota
	evData
	evDatagram
	evGap
	evConflict
	evClose
)

// stageEvent is one reassembly event: its data is batch.data[off:off+n]
// for evData and evDatagram; off and n are the Gap's or Conflict's
// numbers otherwise.
type stageEvent struct {
	kind   stageKind
	dir    reassembly.Dir
	noTime bool
	joined bool               // evData: the stream's Joined[dir] when it came
	s      *reassembly.Stream // the second goroutine's copy of the stream
	t      reassembly.Stamp
	off, n int64
}

type stageBatch struct {
	ev   []stageEvent
	data []byte
}

// stager is the reassembly.Handler of the reading goroutine: it records
// events into the current batch.
type stager struct {
	cur    *stageBatch
	free   chan *stageBatch
	full   chan *stageBatch
	noTime bool // the packet being reassembled has no timestamp
}

func (g *stager) add(e stageEvent, data []byte) {
	b := g.cur
	if len(b.ev) >= stageEvents || len(b.data) > 0 && len(b.data)+len(data) > stageBytes {
		g.send()
		b = g.cur
	}
	if data != nil {
		e.off, e.n = int64(len(b.data)), int64(len(data))
		b.data = append(b.data, data...)
	}
	e.noTime = g.noTime
	b.ev = append(b.ev, e)
}

// send hands the current batch on and takes a free one.
func (g *stager) send() {
	g.full <- g.cur
	g.cur = <-g.free
	g.cur.ev, g.cur.data = g.cur.ev[:0], g.cur.data[:0]
}

// copyOf is the stream the second goroutine sees for s: made at Open,
// holding the same identity; its User is the decoder's.
func copyOf(s *reassembly.Stream) *reassembly.Stream { return s.User.(*reassembly.Stream) }

func (g *stager) Open(s *reassembly.Stream, t reassembly.Stamp) {
	c := &reassembly.Stream{StreamID: s.StreamID}
	s.User = c
	g.add(stageEvent{kind: evOpen, s: c, t: t}, nil)
}

func (g *stager) Data(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, data []byte) {
	g.add(stageEvent{kind: evData, s: copyOf(s), dir: dir, t: t, joined: s.Joined[dir]}, data)
}

func (g *stager) Datagram(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, data []byte) {
	g.add(stageEvent{kind: evDatagram, s: copyOf(s), dir: dir, t: t}, data)
}

func (g *stager) Gap(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, n int64) {
	g.add(stageEvent{kind: evGap, s: copyOf(s), dir: dir, t: t, n: n}, nil)
}

func (g *stager) Conflict(s *reassembly.Stream, dir reassembly.Dir, t time.Time, off, n int64) {
	g.add(stageEvent{kind: evConflict, s: copyOf(s), dir: dir, t: reassembly.Stamp{Time: t}, off: off, n: n}, nil)
}

func (g *stager) Close(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp) {
	g.add(stageEvent{kind: evClose, s: copyOf(s), dir: dir, t: t}, nil)
}

// dissectEvents is the second goroutine: it replays the events on d's
// handler, returning each batch for reuse, until full is closed.
func dissectEvents(d *decoder, full <-chan *stageBatch, free chan<- *stageBatch) {
	h := (*handler)(d)
	for b := range full {
		for i := range b.ev {
			e := &b.ev[i]
			d.curNoTime = e.noTime
			switch e.kind {
			case evOpen:
				h.Open(e.s, e.t)
			case evData:
				if e.s.Joined[e.dir] != e.joined { // written only when it changes: the reader allocated the copy, near what it writes
					e.s.Joined[e.dir] = e.joined
				}
				h.Data(e.s, e.dir, e.t, b.data[e.off:e.off+e.n])
			case evDatagram:
				h.Datagram(e.s, e.dir, e.t, b.data[e.off:e.off+e.n])
			case evGap:
				h.Gap(e.s, e.dir, e.t, e.n)
			case evConflict:
				h.Conflict(e.s, e.dir, e.t.Time, e.off, e.n)
			case evClose:
				h.Close(e.s, e.dir, e.t)
			}
		}
		free <- b
	}
}

// runStaged is runFile for a run without a sink, on two goroutines. d
// keeps the packet counts and the reassembler, which reports to a stager;
// a second decoder dissects and counts, and its counts are moved into d
// at the end.
func runStaged(src capture.Source, cfg *Config, d *decoder) error {
	g := &stager{free: make(chan *stageBatch, stageBatches+1), full: make(chan *stageBatch, stageBatches)} // free holds them all at the end
	for range stageBatches {
		g.free <- &stageBatch{}
	}
	g.cur = &stageBatch{}
	d.asm = reassembly.New(g, cfg.Reassembly)
	dd := newDecoder(cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		dissectEvents(dd, g.full, g.free)
	}()

	var err error
	for n := 1; ; n++ {
		p, rerr := src.Next()
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				err = rerr
			}
			break
		}
		g.noTime = p.NoTime
		d.packet(p)
		if cfg.Progress != nil && n&1023 == 1 {
			cfg.Progress()
		}
		if int64(n) == cfg.Packets {
			break
		}
	}
	d.asm.Flush(d.last) // what streams hold becomes events too
	g.full <- g.cur
	close(g.full)
	<-done
	d.takeCounts(dd)
	return err
}

// takeCounts moves what o counted from records (messages, gaps, skipped
// bytes, warnings, notes, the held-bytes budget, its first error) into d, which counted packets.
func (d *decoder) takeCounts(o *decoder) {
	d.counts = o.counts
	d.gaps, d.gapBytes = o.gaps, o.gapBytes
	d.skipped, d.skippedBytes = o.skipped, o.skippedBytes
	d.warned, d.warnings, d.seenWarn, d.notes = o.warned, o.warnings, o.seenWarn, o.notes
	d.held = o.held // its streams held the bytes
	if d.err == nil {
		d.err = o.err
	}
}
