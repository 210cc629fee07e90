package pipeline

import (
	"context"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
)

// runLive runs the capture goroutine and decodes what it queues in another
// goroutine, until the capture has ended and every queued packet is
// decoded, or until LiveConfig.Abort.
func runLive(ctx context.Context, src capture.Source, cfg *Config, d *decoder, sum *dissect.Summary) error {
	lc := cfg.Live
	c := &capturer{src: src, cfg: lc, q: newQueue(lc.QueueBytes), sent: time.Now()}
	if lc.Save != nil {
		lc.Save.SetStats(c.saveStats)
	}
	capDone := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		c.stopWatch(ctx, capDone)
	}()
	go func() {
		defer close(capDone)
		c.run()
	}()
	decDone := make(chan error, 1)
	go func() {
		flusher, _ := cfg.Sink.(Flusher)
		decDone <- decodeLive(c.q, d, lc.Idle, flusher, func() {
			// The reader of the output is gone (dissect -i eth0 | head):
			// the capture ends as on Ctrl-C, so -w is complete.
			c.setStop("output closed")
			if s, ok := src.(Stopper); ok {
				s.Stop()
			}
		})
	}()

	var err error
	select {
	case err = <-decDone:
	case <-lc.Abort:
		c.abort.Store(true)
		c.setStop("stopped at once")
		if s, ok := src.(Stopper); ok {
			s.Stop()
		}
		<-capDone // bounded by the source's read timeout
		<-watchDone
		c.counts(sum)
		return ErrAborted
	}
	<-capDone
	<-watchDone
	c.counts(sum)
	return err
}

// decodeLive decodes the queued batches until the last one. After an
// output error it stops decoding but still takes the batches, so that the
// capture goroutine can finish (and -w is complete).
//
// The sink is flushed whenever decoding has caught up with the capture (no
// batch waiting), so live output is prompt without a write per record.
func decodeLive(q *queue, d *decoder, idle time.Duration, sink Flusher, onErr func()) error {
	var outErr error
	fail := func(err error) {
		outErr = &OutputError{err}
		onErr()
	}
	for b := range q.full {
		if outErr == nil {
			for i := range b.pkts {
				if err := d.packet(&b.pkts[i]); err != nil {
					fail(err)
					break
				}
			}
		}
		if outErr == nil && !b.now.IsZero() {
			if err := d.expire(b.now, idle); err != nil {
				fail(err)
			}
		}
		if outErr == nil && sink != nil && len(q.full) == 0 {
			if err := sink.Flush(); err != nil {
				fail(err)
			}
		}
		if b.last {
			if outErr != nil {
				return outErr
			}
			return b.err
		}
		q.put(b)
	}
	return outErr
}

// counts fills the capture counters of the summary.
func (c *capturer) counts(sum *dissect.Summary) {
	cc := &dissect.CaptureCounts{
		Source:         c.cfg.Name,
		HasKernel:      c.hasKernel,
		PassedFilter:   c.kernel.PassedFilter,
		KernelDropped:  c.kernel.Dropped,
		Captured:       c.captured.Load(),
		DissectDropped: c.dropped.Load(),
		Untraced:       c.untraced.Load(),
		Written:        c.written,
	}
	if c.cfg.Save != nil {
		cc.WritePath = c.cfg.Save.Path()
		cc.WriteFiles, cc.WriteDeleted = c.cfg.Save.Files()
	}
	if c.cfg.SerialDropped != nil {
		cc.SerialDroppedBytes = c.cfg.SerialDropped()
	}
	if p := c.stopWhy.Load(); p != nil {
		cc.Stopped = *p
	}
	sum.Capture = cc
}
