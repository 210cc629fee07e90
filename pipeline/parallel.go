package pipeline

import (
	"io"

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
	batcher
	w       io.Writer
	newApp  func() Appender
	workers int

	inline Appender // formats at Flush before the pool starts
	inBuf  []byte

	work chan *job // to the workers
}

// NewParallel returns a Parallel writing to w with workers goroutines
// (at least 1) formatting batches of batch records (default 1024).
func NewParallel(w io.Writer, newApp func() Appender, workers, batch int) *Parallel {
	workers = max(workers, 1)
	p := &Parallel{w: w, newApp: newApp, workers: workers}
	p.init(2*workers+2, batch)
	return p
}

// Record copies r into the current batch, handing the batch on when full.
func (p *Parallel) Record(r *dissect.Record) error {
	if err := p.failed(); err != nil {
		return err
	}
	if p.add(r) {
		p.start()
		p.submit()
	}
	return nil
}

// start starts the workers and the writer.
func (p *Parallel) start() {
	if p.started {
		return
	}
	p.startOrder()
	p.work = make(chan *job, cap(p.free))
	p.wg.Add(p.workers + 1)
	for range p.workers {
		go p.worker(p.newApp())
	}
	go p.consume(p.write)
}

// submit hands the current batch to a worker and the writer, and takes a
// free one.
func (p *Parallel) submit() {
	j := p.cur
	p.order <- j
	p.work <- j
	p.next()
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

// write writes a batch its worker formatted (the writer goroutine).
func (p *Parallel) write(j *job) error {
	<-j.done
	if p.failed() != nil {
		return nil
	}
	_, err := p.w.Write(j.out)
	return err
}

// writeInline formats and writes a batch in the caller's goroutine,
// before the pool starts.
func (p *Parallel) writeInline(j *job) error {
	if p.inline == nil {
		p.inline = p.newApp()
	}
	p.inBuf = format(p.inline, p.inBuf[:0], &j.batch)
	_, err := p.w.Write(p.inBuf)
	return err
}

// Flush writes every record received so far, then flushes w if it is a
// Flusher, and returns the first write error.
func (p *Parallel) Flush() error {
	f, _ := p.w.(Flusher)
	return p.flush(p.writeInline, p.submit, f)
}

// Close flushes, then ends the workers and the writer and waits for them.
func (p *Parallel) Close() error {
	err := p.Flush()
	if p.started {
		close(p.work)
		p.stop()
		p.work = nil
	}
	return err
}
