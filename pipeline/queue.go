package pipeline

import (
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// The queue between the capture goroutine and decoding holds batches of
// packets copied out of the source. Batches come from two fixed pools: the
// main pool (its size bounds the queue: QueueBytes) and a small loss pool
// that holds only the headers of packets dropped while the main pool is
// empty, so that reassembly can still turn their payload into gaps of the
// right streams. Both pools are allocated lazily, and the channel of full
// batches has room for every batch, so the capture goroutine never blocks
// on it.

const (
	maxBatchBytes = 512 << 10 // bytes of packet data per main batch, at most
	minBatchBytes = 16 << 10
	batchPackets  = 4096
	lossBatches   = 2
	lossBytes     = 512 << 10 // header bytes per loss batch
	lossPackets   = 8192
	// defaultQueueBytes bounds the main pool when LiveConfig.QueueBytes
	// is 0.
	defaultQueueBytes = 64 << 20
)

// batch is a run of packets, in capture order.
type batch struct {
	pkts []capture.Packet // Data points into buf
	buf  []byte
	loss bool // from the loss pool

	// Set on the batch that travels with them.
	now  time.Time // wall clock when the batch was sent (housekeeping)
	last bool      // the capture has ended: no batch follows
	err  error     // the source's error that ended the capture
}

func (b *batch) reset() {
	clear(b.pkts) // drop references to names
	b.pkts = b.pkts[:0]
	b.buf = b.buf[:0]
	b.now, b.last, b.err = time.Time{}, false, nil
}

// fits reports whether n more bytes and one more packet fit in b. An empty
// batch takes any packet: a packet larger than the batch grows it (up to
// the snap length).
func (b *batch) fits(n int) bool {
	return len(b.pkts) == 0 || (len(b.pkts) < cap(b.pkts) && len(b.buf)+n <= cap(b.buf))
}

// add copies p into b; b must have room (fits). Only the first keep bytes
// of p's data are kept; dropped marks p's payload as dropped.
func (b *batch) add(p *capture.Packet, keep int, dropped bool) {
	start := len(b.buf)
	b.buf = append(b.buf, p.Data[:keep]...)
	q := *p
	q.Data = b.buf[start:len(b.buf):len(b.buf)]
	q.Dropped = q.Dropped || dropped
	b.pkts = append(b.pkts, q)
}

// queue is the pools and the channel of full batches.
type queue struct {
	free     chan *batch // main pool
	lossFree chan *batch
	full     chan *batch
	size     int // bytes of a main batch
}

func newQueue(queueBytes int) *queue {
	if queueBytes <= 0 {
		queueBytes = defaultQueueBytes
	}
	size := min(max(queueBytes/8, minBatchBytes), maxBatchBytes)
	n := max(queueBytes/size, 2)
	q := &queue{
		size:     size,
		free:     make(chan *batch, n),
		lossFree: make(chan *batch, lossBatches),
		full:     make(chan *batch, n+lossBatches+1),
	}
	for range n {
		q.free <- &batch{}
	}
	for range lossBatches {
		q.lossFree <- &batch{loss: true}
	}
	return q
}

// get takes a free batch of the main pool without waiting; nil when none.
func (q *queue) get() *batch {
	select {
	case b := <-q.free:
		if b.buf == nil {
			b.buf = make([]byte, 0, q.size)
			b.pkts = make([]capture.Packet, 0, batchPackets)
		}
		return b
	default:
		return nil
	}
}

// getLoss takes a free batch of the loss pool without waiting.
func (q *queue) getLoss() *batch {
	select {
	case b := <-q.lossFree:
		if b.buf == nil {
			b.buf = make([]byte, 0, lossBytes)
			b.pkts = make([]capture.Packet, 0, lossPackets)
		}
		return b
	default:
		return nil
	}
}

// put returns a decoded batch to its pool.
func (q *queue) put(b *batch) {
	b.reset()
	if b.loss {
		q.lossFree <- b
	} else {
		q.free <- b
	}
}
