package parquetout

import "sync"

// pool is the goroutines that write row groups (encode, compress, write
// to the part's file) while the caller goes on collecting records. submit
// blocks while every worker is busy, so at most Workers row groups are
// being written besides those being collected. stop waits for them all
// and ends the goroutines: none outlives the writer's Close.
type pool struct {
	jobs chan job
	wg   sync.WaitGroup
}

type job struct {
	p *part
	b *batch
}

func newPool(n int) *pool {
	pl := &pool{jobs: make(chan job)}
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
