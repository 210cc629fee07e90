package parquetout

import "sync"

// pool is the goroutines that write row groups (encode, compress, write
// to the part's file) while the caller goes on collecting records. A
// part hands over a row group only when its previous one is written, so
// the queue holds at most one per open part and submit does not block:
// the tables of a run fill their row groups at about the same time (their
// records interleave), and a submit that waited for a free worker would
// leave the workers idle afterwards while the caller fills the next ones.
// stop waits for them all and ends the goroutines: none outlives the
// writer's Close.
type pool struct {
	jobs chan job
	wg   sync.WaitGroup
}

type job struct {
	p *part
	b *batch
}

// newPool starts n workers with a queue for queue row groups (the open
// parts at most).
func newPool(n, queue int) *pool {
	pl := &pool{jobs: make(chan job, queue)}
	pl.wg.Add(n)
	for range n {
		go func() {
			defer pl.wg.Done()
			var s scratch
			for j := range pl.jobs {
				j.run(&s)
			}
		}()
	}
	return pl
}

// submit hands b, the next row group of p, to a worker; p.busy is closed
// when it is written, p.err set before.
func (pl *pool) submit(p *part, b *batch) { pl.jobs <- job{p, b} }

func (j job) run(s *scratch) {
	p, b := j.p, j.b
	p.err = b.write(p.fw, s)
	b.reset()
	p.spare = b
	close(p.busy)
}

func (pl *pool) stop() {
	close(pl.jobs)
	pl.wg.Wait()
}
