package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/reassembly"
)

// capturer is the capture goroutine's state. It reads the source, writes
// the -w file, applies the stop rules and queues packets for decoding,
// dropping (and counting) what does not fit. It never waits for decoding.
type capturer struct {
	src capture.Source
	cfg *LiveConfig
	q   *queue

	cur   *batch // being filled from the main pool
	loss  *batch // headers of dropped packets, while the main pool is empty
	tails tailRing
	sent  time.Time

	captured   atomic.Int64 // atomic: read by an aborted run
	dropped    atomic.Int64
	untraced   atomic.Int64
	written    int64
	kernel     KernelStats
	hasKernel  bool
	stopWhy    atomic.Pointer[string]
	abort      atomic.Bool // stop at once, without draining
	warnedDrop int64
	warnedKern uint64
	warnedSrc  bool
	lastWarn   time.Time
}

// latency is how long a partly filled batch may wait before it is sent, so
// that live output keeps up with the traffic.
const latency = 20 * time.Millisecond

// housekeepingEvery is how often the kernel's counters are read and the -w
// file flushed.
const housekeepingEvery = time.Second

// run captures until a stop rule, the end of the source, a source error or
// a stop request; then it drains what the source already captured, reads
// the kernel's counters, closes the source and -w, and sends the last
// batch. Stop requests come from stopWatch.
func (c *capturer) run() {
	var srcErr error
	nextHK := time.Now().Add(housekeepingEvery)
	pender, _ := c.src.(interface{ Pending() int })
	var stopAt time.Time
	for {
		if stopAt.IsZero() && c.stopWhy.Load() != nil {
			stopAt = time.Now()
		}
		if c.abort.Load() {
			break
		}
		p, err := c.src.Next()
		if err != nil {
			if c.cfg.TimeoutErr != nil && errors.Is(err, c.cfg.TimeoutErr) {
				if !stopAt.IsZero() {
					break // drained: nothing more was captured before the stop
				}
				c.flushCur(false)
				c.flushSave()
				c.housekeeping(&nextHK)
				continue
			}
			if !errors.Is(err, io.EOF) {
				srcErr = err
			}
			c.setStop("end of input")
			break
		}
		if !stopAt.IsZero() && p.Time.After(stopAt) && p.LinkType != capture.LinkUser0 && p.LinkType != capture.LinkVRPNLog {
			break // captured after the stop: not read, as if still queued
		}
		if p.Dropped && !c.warnedSrc && c.cfg.Warn != nil {
			c.warnedSrc = true
			c.cfg.Warn(fmt.Sprintf("%s: the source could not queue %d bytes for dissect (it reads on, the bytes become gap records)", c.cfg.Name, p.Length))
		}
		n := c.captured.Add(1)
		if err := c.save(p); err != nil {
			srcErr = err
			c.setStop("-w failed")
			break
		}
		c.enqueue(p)
		if c.cfg.Packets > 0 && n >= c.cfg.Packets {
			c.setStop("-c")
			break
		}
		caughtUp := pender != nil && pender.Pending() == 0
		if caughtUp || time.Since(c.sent) > latency {
			c.flushCur(false)
			if caughtUp {
				c.flushSave() // the source is idle: a reader of -w sees everything
			}
			c.housekeeping(&nextHK)
		}
	}
	c.finish(srcErr)
}

// stopWatch asks the capture to stop when ctx ends (Ctrl-C) or the -a
// duration passes, whatever the capture goroutine is doing: a source that
// implements [Stopper] is told at once, the others are checked after each
// read (their reads time out). It returns when done is closed.
func (c *capturer) stopWatch(ctx context.Context, done <-chan struct{}) {
	var timer <-chan time.Time
	if c.cfg.Duration > 0 {
		t := time.NewTimer(c.cfg.Duration)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		c.setStop("interrupted")
	case <-timer:
		c.setStop("-a duration")
	case <-done:
		return
	}
	if s, ok := c.src.(Stopper); ok {
		s.Stop()
	}
}

// setStop records why the capture stops; the first reason wins.
func (c *capturer) setStop(why string) {
	c.stopWhy.CompareAndSwap(nil, &why)
}

func (c *capturer) save(p *capture.Packet) error {
	if c.cfg.Save == nil {
		return nil
	}
	if err := c.cfg.Save.WritePacket(p); err != nil {
		return err
	}
	c.written++
	return nil
}

// enqueue copies p into the current batch, or, when the queue is full,
// keeps its headers for reassembly (or only counts it).
func (c *capturer) enqueue(p *capture.Packet) {
	if !c.catchUp() {
		c.drop(p)
		return
	}
	for {
		if c.cur == nil {
			if c.cur = c.q.get(); c.cur == nil {
				c.drop(p)
				return
			}
		}
		if c.cur.fits(len(p.Data)) {
			c.cur.add(p, len(p.Data), false)
			return
		}
		c.send(c.cur)
		c.cur = nil
	}
}

// catchUp queues what drops left behind, in capture order: the loss batch,
// then the tail ring. It reports false while there is no room for it yet;
// until then, newer packets are dropped too, so that order is kept.
func (c *capturer) catchUp() bool {
	if c.loss == nil && c.tails.n == 0 {
		return true
	}
	if c.cur == nil {
		if c.cur = c.q.get(); c.cur == nil {
			return false
		}
	}
	if c.loss != nil {
		c.send(c.loss) // the channel has room for every batch
		c.loss = nil
	}
	for c.tails.n > 0 {
		p := c.tails.oldest()
		if !c.cur.fits(len(p.Data)) {
			c.send(c.cur)
			if c.cur = c.q.get(); c.cur == nil {
				return false
			}
		}
		c.cur.add(p, len(p.Data), true)
		c.tails.pop()
	}
	return true
}

// drop keeps the headers of p for reassembly, which turns its payload into
// a gap; packets that are not TCP, UDP or serial are only counted.
func (c *capturer) drop(p *capture.Packet) {
	n := c.dropped.Add(1)
	if n == 1 || time.Since(c.lastWarn) >= 5*time.Second {
		c.warnDrops(n)
	}
	keep := 0
	if p.LinkType != capture.LinkUser0 && p.LinkType != capture.LinkVRPNLog {
		keep = reassembly.HeaderLen(p.LinkType, p.Data)
		if keep == 0 {
			c.untraced.Add(1)
			return
		}
	}
	if c.tails.n == 0 { // else the ring holds older headers: keep the order
		for range 2 {
			if c.loss == nil {
				c.loss = c.q.getLoss()
			}
			if c.loss == nil {
				break
			}
			if c.loss.fits(keep) {
				c.loss.add(p, keep, true)
				return
			}
			c.send(c.loss)
			c.loss = nil
		}
	}
	if !c.tails.push(p, keep) {
		c.untraced.Add(1)
	}
}

func (c *capturer) warnDrops(n int64) {
	c.lastWarn = time.Now()
	if c.cfg.Warn == nil || n == c.warnedDrop {
		return
	}
	c.warnedDrop = n
	c.cfg.Warn(fmt.Sprintf("decoding is not keeping up on %s: %d packets dropped by dissect so far (written to -w all the same); their bytes become gap records", c.cfg.Name, n))
}

// send queues b for decoding; the channel has room for every batch.
func (c *capturer) send(b *batch) {
	b.now = time.Now()
	c.sent = b.now
	c.q.full <- b
}

// flushCur sends the current batch if it holds packets, so that live
// output is prompt; with empty, also an empty batch, so that the decoder
// does its housekeeping (idle streams) while no traffic comes.
func (c *capturer) flushCur(empty bool) {
	if !c.catchUp() {
		return
	}
	if c.cur == nil && empty {
		c.cur = c.q.get()
	}
	if c.cur != nil && (len(c.cur.pkts) > 0 || empty) {
		c.send(c.cur)
		c.cur = nil
	}
}

// housekeeping reads the kernel's counters (warning at the first drop) and
// flushes -w, about once a second.
func (c *capturer) housekeeping(next *time.Time) {
	now := time.Now()
	if now.Before(*next) {
		return
	}
	*next = now.Add(housekeepingEvery)
	c.flushCur(true)
	c.readKernel()
	c.flushSave()
}

// flushSave writes what -w has buffered; an error is warned (the next
// write reports it as the capture's error).
func (c *capturer) flushSave() {
	if c.cfg.Save != nil {
		if err := c.cfg.Save.Flush(); err != nil && c.cfg.Warn != nil {
			c.cfg.Warn(err.Error())
		}
	}
}

func (c *capturer) readKernel() {
	if c.cfg.Kernel == nil {
		return
	}
	st, err := c.cfg.Kernel()
	if err != nil {
		return
	}
	c.kernel, c.hasKernel = st, true
	if st.Dropped > c.warnedKern && c.cfg.Warn != nil {
		if c.warnedKern == 0 || time.Since(c.lastWarn) >= 5*time.Second {
			c.lastWarn = time.Now()
			c.cfg.Warn(fmt.Sprintf("the kernel dropped %d packets on %s so far (its buffer was full: raise -B, narrow -f or use -q); TCP bytes lost show as gap records", st.Dropped, c.cfg.Name))
			c.warnedKern = st.Dropped
		}
	}
}

// finish reads the kernel's counters after the last packet, closes the
// source and -w, and sends what is left with the last batch. Headers of
// dropped packets still held wait for room in the queue (decoding frees
// it), unless the run was aborted.
func (c *capturer) finish(srcErr error) {
	c.readKernel()
	c.src.Close()
	if c.cfg.Save != nil {
		if err := c.cfg.Save.Close(c.saveStats()); err != nil && srcErr == nil {
			srcErr = err
		}
	}
	for !c.catchUp() {
		if c.abort.Load() {
			c.untraced.Add(int64(c.tails.n))
			break
		}
		time.Sleep(time.Millisecond)
	}
	if c.cur != nil && len(c.cur.pkts) > 0 {
		c.send(c.cur)
	} else if c.cur != nil {
		c.q.put(c.cur)
	}
	c.cur = nil
	c.q.full <- &batch{last: true, err: srcErr, now: time.Now()}
}

func (c *capturer) saveStats() SaveStats {
	return SaveStats{
		HasKernel:      c.hasKernel,
		PassedFilter:   c.kernel.PassedFilter,
		KernelDropped:  c.kernel.Dropped,
		Captured:       uint64(c.captured.Load()),
		DissectDropped: uint64(c.dropped.Load()),
	}
}
