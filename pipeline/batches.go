package pipeline

import (
	"sync"
	"sync/atomic"

	"github.com/dissect-tools/dissect/dissect"
)

// batcher is what [Parallel] and [Beside] share: records are copied into
// batches (dissect.Batch) of a fixed pool, and a full batch is handed on
// to a goroutine that takes the batches in record order (consume). The
// pool bounds the queue: Record waits for a free batch. Nothing starts
// until the first batch is full; before that, Flush uses the batch in
// the caller's goroutine. The first error of the consumer is kept and
// returned by every later Record and Flush.
type batcher struct {
	size    int // records (and calls) per batch
	cur     *job
	started bool
	free    chan *job // batches not in use
	order   chan *job // to the consumer, in record order
	wg      sync.WaitGroup
	err     atomic.Pointer[error] // the first error
}

// job is a batch of the pool, or a flush marker.
type job struct {
	batch dissect.Batch
	calls []call        // Beside: calls to make in order with the records
	out   []byte        // Parallel: the batch formatted
	done  chan struct{} // Parallel: the worker formatted it
	flush chan error    // not nil: a flush marker, answered by the consumer
	f     Flusher       // a marker's target to flush (nil: none)
}

// call is a function to run before the record at index at of its batch
// (after the last record when at is the batch's length).
type call struct {
	at int
	fn func()
}

// init makes the pool of n batches of size records (default 1024) and
// takes the first.
func (q *batcher) init(n, size int) {
	if size <= 0 {
		size = 1024
	}
	q.size = size
	q.free = make(chan *job, n)
	for range n {
		q.free <- &job{done: make(chan struct{}, 1)}
	}
	q.cur = <-q.free
}

// add copies r into the current batch and reports whether the batch is
// full, to be handed on.
func (q *batcher) add(r *dissect.Record) bool {
	q.cur.batch.Add(r)
	return q.full()
}

func (q *batcher) full() bool {
	b := &q.cur.batch
	return b.Len()+len(q.cur.calls) >= q.size || b.Size() >= 4<<20
}

func (q *batcher) pending() bool { return q.cur.batch.Len() > 0 || len(q.cur.calls) > 0 }

func (q *batcher) failed() error {
	if e := q.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (q *batcher) fail(err error) { q.err.CompareAndSwap(nil, &err) }

// startOrder makes the channel to the consumer; the caller starts it.
func (q *batcher) startOrder() {
	q.started = true
	q.order = make(chan *job, cap(q.free))
}

// next takes a free batch as the current one, once the current one is
// handed on.
func (q *batcher) next() { q.cur = <-q.free }

// consume runs in the consumer goroutine until the order channel is
// closed: it gives each batch to use (which skips its work once the
// batcher failed), answers flush markers after flushing their target
// (when they have one and nothing failed), and returns the batches to
// the pool.
func (q *batcher) consume(use func(*job) error) {
	defer q.wg.Done()
	for j := range q.order {
		if j.flush != nil {
			err := q.failed()
			if j.f != nil && err == nil {
				if err = j.f.Flush(); err != nil {
					q.fail(err)
				}
			}
			j.flush <- err
			continue
		}
		if err := use(j); err != nil {
			q.fail(err)
		}
		j.reset()
		q.free <- j
	}
}

// reset empties j for reuse.
func (j *job) reset() {
	j.batch.Reset()
	clear(j.calls) // drop what the calls hold
	j.calls = j.calls[:0]
}

// flush makes everything received so far reach the consumer's target and
// flushes it (f, when not nil), and returns the first error. Before the
// consumer has started, inline uses the current batch in this goroutine;
// after, submit hands it on and a marker waits for the consumer.
func (q *batcher) flush(inline func(*job) error, submit func(), f Flusher) error {
	if !q.started {
		if q.pending() && q.failed() == nil {
			if err := inline(q.cur); err != nil {
				q.fail(err)
			}
		}
		q.cur.reset()
		if f != nil && q.failed() == nil {
			if err := f.Flush(); err != nil {
				q.fail(err)
			}
		}
		return q.failed()
	}
	if q.pending() {
		submit()
	}
	marker := &job{flush: make(chan error, 1), f: f}
	q.order <- marker
	return <-marker.flush
}

// stop ends the consumer (and, with Parallel, its workers: their channel
// is closed first) and waits for every goroutine.
func (q *batcher) stop() {
	close(q.order)
	q.wg.Wait()
	q.started = false
	q.order = nil
}
