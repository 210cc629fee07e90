package pipeline

import (
	"io"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Beside is a sink that runs another sink's Record on a goroutine of its
// own, beside the decoder, as [Parallel] formats JSON beside it: records
// are copied into batches (dissect.Batch), and one goroutine gives them
// to the wrapped sink in order, so that it sees exactly the records, in
// the order, it would see alone. For writers (MCAP, Parquet) whose
// per-record work is as large as decoding.
//
// Everything else the pipeline and the CLI ask of a sink reaches the
// wrapped sink in order with the records: SetEpoch ([EpochSetter]),
// StreamOpened ([StreamOpener]), Seen (the table's count of records a
// display filter hides), and any call given to Do. Flush returns once
// every record before it has reached the wrapped sink and the sink is
// flushed; Close then closes it (when it is an io.Closer), and Sink
// gives it back for what it tells after the run. The wrapped sink's
// first error is returned by the next Record, Flush or Close, and
// nothing more is given to it.
//
// The queue is bounded: at most four batches exist, and Record waits for
// one to be free. Until the first batch is full, nothing starts: a small
// input reaches the wrapped sink in the caller's goroutine at Flush.
// Close must be called; it waits for the goroutine to end.
type Beside struct {
	batcher
	sink   dissect.Sink
	epoch  EpochSetter
	opened StreamOpener
	seen   interface{ Seen(time.Time) }
}

// besideBatches is the size of Beside's pool: one being filled, up to
// three queued or in use.
const besideBatches = 4

// NewBeside returns a Beside giving s batches of batch records (0: 1024).
func NewBeside(s dissect.Sink, batch int) *Beside {
	b := &Beside{sink: s}
	b.epoch, _ = s.(EpochSetter)
	b.opened, _ = s.(StreamOpener)
	b.seen, _ = s.(interface{ Seen(time.Time) })
	b.init(besideBatches, batch)
	return b
}

// Sink returns the wrapped sink. Its methods are for after Close (or
// before the first record): until then it belongs to Beside's goroutine.
func (b *Beside) Sink() dissect.Sink { return b.sink }

// Record copies r into the current batch, handing the batch on when full.
func (b *Beside) Record(r *dissect.Record) error {
	if err := b.failed(); err != nil {
		return err
	}
	if b.add(r) {
		b.submit()
	}
	return nil
}

// Do runs fn in the wrapped sink's goroutine after the records received
// so far and before those received later: a setting that applies to the
// records that follow (the lake's capture name).
func (b *Beside) Do(fn func()) {
	b.cur.calls = append(b.cur.calls, call{at: b.cur.batch.Len(), fn: fn})
	if b.full() {
		b.submit()
	}
}

// SetEpoch passes t on, in order, when the wrapped sink is an EpochSetter.
func (b *Beside) SetEpoch(t time.Time) {
	if e := b.epoch; e != nil {
		b.Do(func() { e.SetEpoch(t) })
	}
}

// StreamOpened passes id on, in order, when the wrapped sink is a
// StreamOpener.
func (b *Beside) StreamOpened(id dissect.StreamID) {
	if o := b.opened; o != nil {
		b.Do(func() { o.StreamOpened(id) })
	}
}

// Seen passes t on, in order, when the wrapped sink counts the records a
// display filter hides (the table's -t d).
func (b *Beside) Seen(t time.Time) {
	if s := b.seen; s != nil {
		b.Do(func() { s.Seen(t) })
	}
}

// submit hands the current batch to the goroutine, starting it with the
// first, and takes a free batch.
func (b *Beside) submit() {
	if !b.started {
		b.startOrder()
		b.wg.Add(1)
		go b.consume(b.play)
	}
	b.order <- b.cur
	b.next()
}

// play gives j's records to the wrapped sink, with the calls between
// them, until the sink fails; nothing once it has failed.
func (b *Beside) play(j *job) error {
	if b.failed() != nil {
		return nil
	}
	calls := j.calls
	for i := range j.batch.Records {
		for len(calls) > 0 && calls[0].at == i {
			calls[0].fn()
			calls = calls[1:]
		}
		if err := b.sink.Record(&j.batch.Records[i]); err != nil {
			return err
		}
	}
	for _, c := range calls {
		c.fn()
	}
	return nil
}

// Flush returns once every record received so far has reached the
// wrapped sink and the sink is flushed (when it is a [Flusher]), with the
// first error.
func (b *Beside) Flush() error {
	f, _ := b.sink.(Flusher)
	return b.flush(b.play, b.submit, f)
}

// Close gives the wrapped sink every record left, ends the goroutine,
// and closes the sink when it is an io.Closer, also after an error (it
// is not flushed first: a sink's Close completes its output). It returns
// the first error.
func (b *Beside) Close() error {
	err := b.flush(b.play, b.submit, nil)
	if b.started {
		b.stop()
	}
	if c, ok := b.sink.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
