package pipeline

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/dissect-tools/dissect/dissect"
)

// An Appender formats records: AppendRecord appends r's output (a JSON
// line, say) to b. Each worker of a [Parallel] has its own.
type Appender interface {
	AppendRecord(b []byte, r *dissect.Record) []byte
}

// Parallel is a sink that formats records on a pool of goroutines and
// writes their output to w in the order the records came, so the output is
// byte for byte what one Appender would write alone. Records are copied
// into batches (dissect.Batch); a batch is formatted by one worker; a
// writer goroutine writes the batches in order. Queues are bounded: at
// most 2×workers+2 batches exist, and Record waits for one to be free.
//
// Until the first batch is full, nothing starts: a small input is
// formatted in the caller's goroutine at Flush. Close must be called; it
// waits for every goroutine to end.
type Parallel struct {
	w       io.Writer
	newApp  func() Appender
	workers int
	size    int // records per batch

	cur     *job
	started bool
	inline  Appender // formats at Flush before the pool starts
	inBuf   []byte

	free  chan *job // batches not in use
	work  chan *job // to the workers
	order chan *job // to the writer, in record order
	wg    sync.WaitGroup
	err   atomic.Pointer[error] // the first write error
}

type job struct {
	batch dissect.Batch
	out   []byte
	done  chan struct{} // the worker formatted it
	flush chan error    // not nil: a flush marker, answered by the writer
}

// NewParallel returns a Parallel writing to w with workers goroutines
// (at least 1) formatting batches of batch records (default 1024).
func NewParallel(w io.Writer, newApp func() Appender, workers, batch int) *Parallel {
	workers = max(workers, 1)
	if batch <= 0 {
		batch = 1024
	}
	p := &Parallel{w: w, newApp: newApp, workers: workers, size: batch}
	n := 2*workers + 2
	p.free = make(chan *job, n)
	for range n {
		p.free <- &job{done: make(chan struct{}, 1)}
	}
	p.cur = <-p.free
	return p
}

// Record copies r into the current batch, handing the batch on when full.
func (p *Parallel) Record(r *dissect.Record) error {
	if err := p.failed(); err != nil {
		return err
	}
	p.cur.batch.Add(r)
	if p.cur.batch.Len() >= p.size || p.cur.batch.Size() >= 4<<20 {
		p.start()
		p.submit()
	}
	return nil
}

func (p *Parallel) failed() error {
	if e := p.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (p *Parallel) fail(err error) { p.err.CompareAndSwap(nil, &err) }

// start starts the workers and the writer.
func (p *Parallel) start() {
	if p.started {
		return
	}
	p.started = true
	p.work = make(chan *job, cap(p.free))
	p.order = make(chan *job, cap(p.free))
	p.wg.Add(p.workers + 1)
	for range p.workers {
		go p.worker(p.newApp())
	}
	go p.writer()
}

// submit hands the current batch to a worker and the writer, and takes a
// free one.
func (p *Parallel) submit() {
	j := p.cur
	p.order <- j
	p.work <- j
	p.cur = <-p.free
}

func (p *Parallel) worker(app Appender) {
	defer p.wg.Done()
	for j := range p.work {
		j.out = format(app, j.out[:0], &j.batch)
		j.done <- struct{}{}
	}
}

func format(app Appender, b []byte, batch *dissect.Batch) []byte {
	for i := range batch.Records {
		b = app.AppendRecord(b, &batch.Records[i])
	}
	return b
}

func (p *Parallel) writer() {
	defer p.wg.Done()
	for j := range p.order {
		if j.flush != nil {
			err := p.failed()
			if f, ok := p.w.(Flusher); ok && err == nil {
				if err = f.Flush(); err != nil {
					p.fail(err)
				}
			}
			j.flush <- err
			continue
		}
		<-j.done
		if p.failed() == nil {
			if _, err := p.w.Write(j.out); err != nil {
				p.fail(err)
			}
		}
		j.batch.Reset()
		p.free <- j
	}
}

// Flush writes every record received so far, then flushes w if it is a
// Flusher, and returns the first write error.
func (p *Parallel) Flush() error {
	if !p.started {
		if p.cur.batch.Len() > 0 && p.failed() == nil {
			if p.inline == nil {
				p.inline = p.newApp()
			}
			p.inBuf = format(p.inline, p.inBuf[:0], &p.cur.batch)
			p.cur.batch.Reset()
			if _, err := p.w.Write(p.inBuf); err != nil {
				p.fail(err)
			}
		}
		if f, ok := p.w.(Flusher); ok && p.failed() == nil {
			if err := f.Flush(); err != nil {
				p.fail(err)
			}
		}
		return p.failed()
	}
	if p.cur.batch.Len() > 0 {
		p.submit()
	}
	marker := &job{flush: make(chan error, 1)}
	p.order <- marker
	return <-marker.flush
}

// Close flushes, then ends the workers and the writer and waits for them.
func (p *Parallel) Close() error {
	err := p.Flush()
	if p.started {
		close(p.work)
		close(p.order)
		p.wg.Wait()
		p.started = false
		p.work, p.order = nil, nil
	}
	return err
}
