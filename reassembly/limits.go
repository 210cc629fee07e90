package reassembly

import "time"

// This file keeps the state of an Assembler bounded however many flows
// and held segments the input carries: open streams are kept in a list by
// last activity, so that the least recently active is found in O(1) when
// the stream count is over [Config].MaxStreams and idle streams are found
// in O(1) per packet ([Config].IdleTimeout); TCP directions holding
// out-of-order data are kept in a queue by when they started holding, so
// that the oldest hole is declared lost when all of them together hold
// more than [Config].MaxHeldBytes.

// Config bounds the memory of an [Assembler]. Zero fields take the
// values of [DefaultConfig].
type Config struct {
	// MaxBuffered is how many out-of-order bytes one TCP direction may
	// hold; past it the first hole is declared lost (a Gap event) and the
	// held data after it is delivered. Each held segment counts 64 bytes
	// besides its captured bytes, for its bookkeeping.
	MaxBuffered int
	// MaxHeldBytes is the same bound on the bytes held by all TCP
	// directions together (counted the same way); past it the first hole
	// of the direction that has been holding data the longest, whatever
	// its connection, is declared lost, and so on until under the bound.
	MaxHeldBytes int
	// MaxStreams bounds the open streams (TCP connections not finished,
	// UDP flows, serial links). A stream that would exceed it first ends
	// the least recently active one, as idle expiry does
	// ([Stats].Evicted). Negative: no bound.
	MaxStreams int
	// IdleTimeout ends the streams that had no packet for that long, in
	// capture time: packet timestamps, so files are bounded as live
	// captures are ([Stats].Expired). Negative: never.
	IdleTimeout time.Duration
	// MaxFinished is how many finished TCP connections (both directions
	// closed, or reset) are remembered so that their trailing ACKs and
	// retransmissions do not open new streams. The oldest are forgotten
	// first.
	MaxFinished int
}

// DefaultConfig returns the values used for zero fields of [Config]:
// 4 MiB held per TCP direction and 16 MiB in all, 8192 open streams,
// 5 minutes idle, 4096 finished connections remembered.
func DefaultConfig() Config {
	return Config{
		MaxBuffered:  4 << 20,
		MaxHeldBytes: 16 << 20,
		MaxStreams:   8192,
		IdleTimeout:  5 * time.Minute,
		MaxFinished:  4096,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MaxBuffered <= 0 {
		c.MaxBuffered = d.MaxBuffered
	}
	if c.MaxHeldBytes <= 0 {
		c.MaxHeldBytes = d.MaxHeldBytes
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = d.MaxStreams
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.MaxFinished <= 0 {
		c.MaxFinished = d.MaxFinished
	}
	return c
}

// pieceOverhead is what one held piece costs besides its captured bytes
// (its entry in the held slice and the allocation of its copy), counted
// against the held-byte limits so that many tiny segments cannot use much
// more memory than the limits say.
const pieceOverhead = 88

// maxPieces bounds the pieces one TCP direction holds whatever their
// size: inserting into the sorted held slice moves the pieces after the
// insertion point, so a direction's insertion cost grows with its piece
// count. At this bound a direction filled in reverse order moves about
// 1.3 GB of piece headers in total; 5,000 tiny segments in reverse
// order still fit.
const maxPieces = 8192

// holder is an entry of Assembler.holders: direction d of c started
// holding data when its gen was gen. Entries whose direction has since
// delivered all it held (or been forgotten) are stale and skipped.
type holder struct {
	c   *conn
	gen uint32
	d   Dir
}

// linked reports whether c is in the activity list.
func (a *Assembler) linked(c *conn) bool { return c.prev != nil || a.lruHead == c }

// link puts c at the front (most recent end) of the activity list.
func (a *Assembler) link(c *conn) {
	c.prev, c.next = nil, a.lruHead
	if a.lruHead != nil {
		a.lruHead.prev = c
	} else {
		a.lruTail = c
	}
	a.lruHead = c
	a.nLive++
}

// unlink removes c from the activity list, if it is there.
func (a *Assembler) unlink(c *conn) {
	if !a.linked(c) {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		a.lruHead = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		a.lruTail = c.prev
	}
	c.prev, c.next = nil, nil
	a.nLive--
}

// touch records activity of c at time t.
func (a *Assembler) touch(c *conn, t time.Time) {
	c.last = t
	if a.lruHead != c && a.linked(c) {
		a.unlink(c)
		a.link(c)
	}
}

// makeRoom evicts the least recently active streams until one more fits
// under [Config].MaxStreams, ending each as idle expiry does, at time t.
func (a *Assembler) makeRoom(t Stamp) {
	if a.cfg.MaxStreams <= 0 {
		return
	}
	n := 0
	for a.nLive >= a.cfg.MaxStreams && a.lruTail != nil {
		c := a.lruTail
		a.end(c, t)
		a.forget(c)
		a.stats.Evicted++
		n++
	}
	if n > 0 {
		a.maybeCompact()
	}
}

// expireIdle ends the streams that had no packet for [Config].IdleTimeout
// before now, oldest activity first.
func (a *Assembler) expireIdle(now Stamp) {
	if a.cfg.IdleTimeout <= 0 {
		return
	}
	n := 0
	for c := a.lruTail; c != nil && now.Time.Sub(c.last) > a.cfg.IdleTimeout; c = a.lruTail {
		a.end(c, now)
		a.forget(c)
		a.stats.Expired++
		n++
	}
	if n > 0 {
		a.maybeCompact()
	}
}

// addHeld accounts for n more bytes held by h (n < 0: fewer).
func (a *Assembler) addHeld(h *half, n int) {
	h.heldLen += n
	a.heldBytes += n
}

// release drops everything h holds.
func (a *Assembler) release(h *half) {
	a.heldBytes -= h.heldLen
	h.held = nil
	h.heldLen = 0
	h.hist = nil
}

// startHolding queues direction d of c, which has just started holding
// data, behind the directions that started before it.
func (a *Assembler) startHolding(c *conn, d Dir) {
	h := &c.h[d]
	h.gen++
	a.holders = append(a.holders, holder{c: c, gen: h.gen, d: d})
	if len(a.holders) > 64 && len(a.holders) > 2*a.holdersLive {
		n := 0
		for _, e := range a.holders {
			if a.holding(e) {
				a.holders[n] = e
				n++
			}
		}
		clear(a.holders[n:])
		a.holders = a.holders[:n]
		a.holdersLive = n
	}
}

// holding reports whether e is not stale.
func (a *Assembler) holding(e holder) bool {
	h := &e.c.h[e.d]
	return !e.c.gone && h.gen == e.gen && len(h.held) > 0 && !h.closed
}

// enforceHeld declares lost the oldest holes of any TCP direction while
// all of them together hold more than [Config].MaxHeldBytes; the held
// data behind each is delivered, at time t.
func (a *Assembler) enforceHeld(t Stamp) {
	for a.heldBytes > a.cfg.MaxHeldBytes && len(a.holders) > 0 {
		e := a.holders[0]
		a.holders[0] = holder{}
		a.holders = a.holders[1:]
		if !a.holding(e) {
			continue
		}
		h := &e.c.h[e.d]
		a.lose(e.c, e.d, h, t, h.held[0].start-h.off)
		if len(h.held) > 0 && !h.closed {
			// Its next hole is younger than the others'.
			a.startHolding(e.c, e.d)
		}
		if e.c.h[0].closed && e.c.h[1].closed && !e.c.tomb {
			// Both FINs were in: the connection has finished.
			a.tombstone(e.c)
		}
	}
	if len(a.holders) == 0 {
		a.holders = nil // let the backing array go
	}
}
