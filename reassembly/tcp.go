package reassembly

import "slices"

// piece is a held out-of-order range [start, start+n) of a TCP direction's
// stream offsets. data holds its first len(data) bytes; the rest (from a
// segment cut by the snap length) were never captured.
type piece struct {
	start int64
	n     int64
	data  []byte
	at    Stamp // the segment that brought it
}

// half is one direction of a TCP connection. Stream offsets count bytes
// from the direction's first byte (offset 0); sequence numbers map to
// offsets through base, the sequence number of offset 0, with 32-bit
// modular arithmetic relative to the next expected byte.
type half struct {
	started bool // base is known
	syn     bool // the direction's SYN was seen; its sequence number is base-1
	fin     bool // a FIN was seen; finOff is the offset it follows
	closed  bool // Close was delivered
	base    uint32
	off     int64 // offset of the next byte to deliver
	finOff  int64
	// sent is the highest offset known to have been sent: the end of a
	// segment seen (its declared length, a FIN's slot included) or a
	// sequence number the peer acknowledged. What lies between the last
	// byte delivered and sent when the direction ends is a lost tail.
	sent int64
	// acked is the highest offset the peer acknowledged (0: none): bytes
	// before it reached the peer, so a segment arriving past a hole
	// below it finds the hole lost at once (see segment).
	acked int64
	// win is the window this direction last advertised (its raw field;
	// winSet: one was seen), winSYN whether it came in a SYN (never
	// scaled), ws the window scale its SYN offered (-1: none or no SYN
	// seen). They judge the peer's resets (resetWindow).
	win     uint16
	winSet  bool
	winSYN  bool
	ws      int8
	held    []piece // sorted, disjoint, every start > off
	heldLen int     // captured bytes in held plus pieceOverhead per piece
	gen     uint32  // bumped each time held becomes non-empty (Assembler.holders)

	// hist remembers the last delivered bytes by blocks (history.go), so
	// that a retransmission over them at any range is compared too.
	hist *history
}

// nextSeq is the sequence number of the next byte to deliver.
func (h *half) nextSeq() uint32 { return h.base + uint32(h.off) }

// maxAhead bounds how far past the delivery point a bare sequence or
// acknowledgment number is believed: the largest TCP window (RFC 7323). A
// wilder one (a stale or forged packet) would otherwise turn into a huge
// invented gap.
const maxAhead = 1 << 30

// offset maps sequence number seq to a stream offset, within 2^31 of the
// delivery point.
func (h *half) offset(seq uint32) int64 { return h.off + int64(int32(seq-h.nextSeq())) }

// sentUpTo records that everything before sequence number seq was sent.
func (h *half) sentUpTo(seq uint32) {
	if h.started && !h.closed {
		if o := h.offset(seq); o-h.off <= maxAhead {
			h.sent = max(h.sent, o)
		}
	}
}

// resetInWindow reports whether a reset with sequence number seq sent in
// direction d is accepted, following RFC 5961 section 3.2 as an
// observer: its number must lie in the sequence space seen of d (from the
// next byte to deliver to the highest known sent) or past it by no more
// than the window the receiver last advertised, where known
// ([conn.window]). An exact match of the next expected number is not
// required (as an RFC 5961 receiver would, answering others with a
// challenge ACK): our next expected number lags the receiver's when the
// capture missed packets or holds out-of-order data. A direction with
// nothing seen has no window to judge by (a reset answering a SYN is sent
// from there, its sequence number possibly 0): its reset is accepted.
func (c *conn) resetInWindow(d Dir, seq uint32) bool {
	h := &c.h[d]
	if !h.started {
		return true
	}
	o := h.offset(seq)
	return o >= h.off && o <= max(h.sent, h.off)+c.window(1-d)
}

// window is the receive window direction d last advertised, in bytes: its
// window field scaled by the shift its SYN offered when both SYNs were
// seen and both offered one (RFC 7323; a SYN's own field is not scaled).
// Without both SYNs the shift is unknown and the field is taken as it is,
// which the true window is at least. 0 when d advertised none.
func (c *conn) window(d Dir) int64 {
	h := &c.h[d]
	if !h.winSet {
		return 0
	}
	w := int64(h.win)
	if !h.winSYN && c.h[0].syn && c.h[1].syn && c.h[0].ws >= 0 && c.h[1].ws >= 0 {
		w <<= h.ws
	}
	return w
}

// advertised records the window of a packet of direction h (not a
// reset), and the window scale its SYN offers.
func (h *half) advertised(pk *packet) {
	syn := pk.flags&flagSYN != 0
	h.win, h.winSet, h.winSYN = pk.win, true, syn
	if syn {
		h.ws = pk.wscale
	}
}

// sameSYN reports whether a SYN with sequence number seq belongs to the
// connection this direction is part of: its own SYN again, or a SYN
// captured after the direction's data started right behind it.
func (h *half) sameSYN(seq uint32) bool {
	return seq+1 == h.base
}

func (a *Assembler) tcp(pk *packet, t Stamp) {
	k, srcIsA := pk.key()
	syn := pk.flags&flagSYN != 0
	ack := pk.flags&flagACK != 0
	c := a.flows[k]
	if c != nil {
		h := &c.h[c.dir(srcIsA)]
		switch {
		case c.done && (!syn || (h.started && h.sameSYN(pk.seq))):
			// A trailing packet of a finished connection.
			c.last = t.Time // not in the activity list: MaxFinished bounds these
			a.stats.TCPAfterClose += int64(pk.plen)
			return
		case c.done:
			// A new SYN on a finished connection's 4-tuple.
			a.forget(c)
			c = nil
		case syn && h.started && !h.sameSYN(pk.seq):
			// A SYN with another ISN: the port was reused while the
			// old connection was still open (its end was not seen).
			a.end(c, t)
			a.forget(c)
			c = nil
		}
		a.maybeCompact()
	}
	if c == nil {
		// The SYN sender is direction 0: the receiver of a SYN-ACK seen
		// first, else the sender of the first packet.
		c = a.newFlow(pk, k, srcIsA, !(syn && ack), TCP, t)
	}
	a.touch(c, t.Time)
	d := c.dir(srcIsA)
	h := &c.h[d]
	if a.observe != nil {
		a.observeTCP(c, d, h, pk)
	}

	if pk.flags&flagRST != 0 {
		a.stats.TCPAfterClose += int64(pk.plen) // a reset's text is not stream data
		if !c.resetInWindow(d, pk.seq) {
			// RFC 5961 3.2: a receiver drops it; the connection goes on.
			a.stats.TCPResetsIgnored++
			return
		}
		if ack {
			// Its sequence number may be 0 (RFC 9293 3.10.7.1); its
			// acknowledgment number is what the peer sent.
			a.acked(c, 1-d, pk.ack, t)
		}
		a.complete(c, 0, t)
		a.complete(c, 1, t)
		a.tombstone(c)
		return
	}
	h.advertised(pk)
	seq := pk.seq
	if syn {
		switch {
		case !h.started:
			h.started, h.syn, h.base, h.off = true, true, seq+1, 0
		case !h.syn && seq+1 == h.base:
			h.syn = true
		}
		seq++ // a SYN takes one sequence number before the data
		if ack {
			// A SYN-ACK acknowledges the peer's ISN+1: where the peer's
			// data starts, even if its SYN was not captured.
			if o := &c.h[1-d]; !o.started {
				o.started, o.base, o.off = true, pk.ack, 0
			}
		}
	}
	// The acknowledgment first: it says what the sender had received
	// before it sent this segment's data, so the peer's bytes it releases
	// (a hole known lost, the data held behind it) come before this data,
	// in the order the two ends saw them.
	if ack {
		a.acked(c, 1-d, pk.ack, t)
	}
	fin := pk.flags&flagFIN != 0
	if pk.plen > 0 || fin {
		a.segment(c, d, h, t, seq, pk.payload, pk.plen, fin)
	}
	end := seq + uint32(pk.plen)
	if fin {
		end++
	}
	h.sentUpTo(end) // even a bare ACK's sequence number says what was sent
	if c.h[0].fin && c.h[1].fin {
		// Both sides finished: a hole left before a FIN will not fill.
		a.complete(c, 0, t)
		a.complete(c, 1, t)
	}
	if c.h[0].closed && c.h[1].closed && !c.tomb {
		a.tombstone(c)
	}
}

// segment processes the payload (plen bytes declared, data captured) and
// FIN of one segment of direction d starting at sequence number seq.
func (a *Assembler) segment(c *conn, d Dir, h *half, t Stamp, seq uint32, data []byte, plen int, fin bool) {
	if !h.started {
		h.started, h.base, h.off = true, seq, 0
		c.s.Joined[d] = true
	}
	if len(data) > plen {
		data = data[:plen]
	}
	s := h.offset(seq)
	e := s + int64(plen)
	if h.closed {
		behind := min(max(h.off-s, 0), e-s)
		a.stats.TCPRetransmitted += behind
		a.stats.TCPAfterClose += e - s - behind
		return
	}
	if fin && !h.fin {
		h.fin = true
		h.finOff = max(e, h.off)
		a.trimHeld(h, h.finOff)
	}
	if h.fin && e > h.finOff {
		ne := max(s, h.finOff)
		a.stats.TCPAfterClose += e - ne
		e = ne
	}
	if s < 0 {
		cut := min(-s, e-s)
		a.stats.TCPBeforeStart += cut
		s, data = advance(s, data, cut)
	}
	if s < h.off {
		old := min(e, h.off) - s // of the range, the bytes already delivered or declared lost
		a.checkHistory(c, d, h, t.Time, s, data[:min(int64(len(data)), old)], e <= h.off && int64(len(data)) == e-s)
		cut := min(h.off-s, e-s)
		a.stats.TCPRetransmitted += cut
		s, data = advance(s, data, cut)
	}
	if int64(len(data)) > e-s {
		data = data[:e-s]
	}
	if s < e && s > h.off && h.acked >= s {
		// Past a hole the peer acknowledged before this segment came:
		// the receiver got those bytes, the capture did not (a capture
		// cut down to some packets, as -w with a display filter makes),
		// and no retransmission will fill it. Waiting would only delay
		// this segment's bytes.
		lim := s
		if len(h.held) > 0 {
			lim = min(lim, h.held[0].start)
		}
		a.lose(c, d, h, t, lim-h.off)
	}
	if s < e && s == h.off {
		// In order: deliver straight from the packet, up to the first
		// held piece (which arrived first and wins any overlap).
		lim := e
		if len(h.held) > 0 && h.held[0].start < lim {
			lim = h.held[0].start
		}
		n := lim - s
		a.deliver(c, d, h, t, data[:min(int64(len(data)), n)], n)
		if n == e-s && int64(len(data)) == n && n > 0 {
			// The whole segment went out at once: remember its ends.
			h.hist.addRun(s, data)
		}
		s, data = advance(s, data, n)
	}
	if s < e {
		a.hold(c, d, h, t, s, e, data)
		for (h.heldLen > a.cfg.MaxBuffered || len(h.held) > maxPieces) && len(h.held) > 0 {
			// Too much held: the first hole is declared lost.
			a.lose(c, d, h, t, h.held[0].start-h.off)
		}
	}
	a.pump(c, d, h, t)
	a.enforceHeld(t)
}

// acked declares lost the hole at the front of direction d when the peer
// has acknowledged bytes past it while later bytes of d are already held:
// the receiver got the missing bytes but the capture did not, and no
// retransmission will come, so waiting for them (until the FINs or the
// buffer limit) would only delay the data behind the hole. A hole with
// nothing held behind it is left alone: some captures (tcpdump -i any)
// can show an ACK before the data it acknowledges.
//
// The acknowledged point also counts as sent, for the tail gap.
func (a *Assembler) acked(c *conn, d Dir, ackSeq uint32, t Stamp) {
	h := &c.h[d]
	if !h.started || h.closed {
		return
	}
	ackOff := h.offset(ackSeq)
	if ackOff <= h.off || ackOff-h.off > maxAhead {
		return
	}
	h.sent = max(h.sent, ackOff)
	h.acked = max(h.acked, ackOff)
	if len(h.held) == 0 {
		return
	}
	a.lose(c, d, h, t, min(ackOff, h.held[0].start)-h.off)
}

// advance drops the first n stream bytes of a range starting at s whose
// captured prefix is data.
func advance(s int64, data []byte, n int64) (int64, []byte) {
	return s + n, data[min(int64(len(data)), n):]
}

// deliver emits n bytes at the delivery point: data, then a gap for the
// bytes that were not captured.
func (a *Assembler) deliver(c *conn, d Dir, h *half, t Stamp, data []byte, n int64) {
	if len(data) > 0 {
		a.record(h, h.off, data)
		h.off += int64(len(data))
		a.h.Data(&c.s, d, t, data)
	}
	if m := n - int64(len(data)); m > 0 {
		a.gap(c, d, h, t, m)
	}
}

// gap emits a Gap of n bytes at the delivery point.
func (a *Assembler) gap(c *conn, d Dir, h *half, t Stamp, n int64) {
	if n <= 0 {
		return
	}
	h.off += n
	h.forgetHistory()
	a.stats.TCPGapBytes += n
	a.h.Gap(&c.s, d, t, n)
}

// pump delivers the held pieces that are now contiguous with the delivery
// point, and closes the direction when everything up to its FIN is out.
func (a *Assembler) pump(c *conn, d Dir, h *half, t Stamp) { a.pumpAt(c, d, h, t, false) }

// lose declares the n bytes at the delivery point lost (a Gap) and
// delivers the held data behind them. The receiver had that data when its
// segments came (only the hole was not captured), so each held piece keeps
// the time its segment was captured, and the Gap the time of the first:
// records completed by those segments are stamped as if nothing had been
// held. (Data held behind a hole that a later segment fills is delivered
// at that segment's time, by pump: it completed then.)
func (a *Assembler) lose(c *conn, d Dir, h *half, t Stamp, n int64) {
	gt := t
	if len(h.held) > 0 && !h.held[0].at.Time.IsZero() && h.held[0].at.Before(t) {
		gt = h.held[0].at
	}
	a.gap(c, d, h, gt, n)
	a.pumpAt(c, d, h, t, true)
}

// pumpAt delivers the held pieces that start at the delivery point, at t
// or, with own, each with the stamp of the segment that brought it (never
// later than t).
func (a *Assembler) pumpAt(c *conn, d Dir, h *half, t Stamp, own bool) {
	i := 0
	for i < len(h.held) && h.held[i].start == h.off {
		p := h.held[i]
		a.addHeld(h, -len(p.data)-pieceOverhead)
		pt := t
		if own && !p.at.Time.IsZero() && p.at.Before(t) {
			pt = p.at
		}
		a.deliver(c, d, h, pt, p.data, p.n)
		i++
	}
	if i > 0 {
		n := copy(h.held, h.held[i:])
		clear(h.held[n:])
		h.held = h.held[:n]
	}
	if h.fin && !h.closed && h.off >= h.finOff && len(h.held) == 0 {
		h.closed = true
		h.hist = nil // nothing is compared after the end
		a.h.Close(&c.s, d, t)
	}
}

// hold copies the parts of [s, e) (captured prefix data) that no held
// piece covers yet; bytes already held are dropped (the first copy wins),
// and if some differ from the held copy the differing range is reported
// to Handler.Conflict.
func (a *Assembler) hold(c *conn, d Dir, h *half, t Stamp, s, e int64, data []byte) {
	wasEmpty := len(h.held) == 0
	conflictLo, conflictHi := int64(-1), int64(-1)
	i, _ := slices.BinarySearchFunc(h.held, s, func(p piece, s int64) int {
		if p.start+p.n <= s {
			return -1
		}
		return 1
	})
	pos := s
	added := false
	for pos < e {
		if i < len(h.held) && h.held[i].start <= pos {
			end := min(h.held[i].start+h.held[i].n, e)
			a.stats.TCPRetransmitted += end - pos
			if lo, hi, ok := differ(&h.held[i], s, pos, end, data); ok {
				if conflictLo < 0 {
					conflictLo = lo
				}
				conflictHi = hi
			}
			pos = end
			i++
			continue
		}
		stop := e
		if i < len(h.held) && h.held[i].start < stop {
			stop = h.held[i].start
		}
		lo := min(pos-s, int64(len(data)))
		hi := min(stop-s, int64(len(data)))
		var buf []byte
		if hi > lo {
			buf = make([]byte, hi-lo)
			copy(buf, data[lo:hi])
		}
		h.held = slices.Insert(h.held, i, piece{start: pos, n: stop - pos, data: buf, at: t})
		a.addHeld(h, len(buf)+pieceOverhead)
		i++
		pos = stop
		added = true
	}
	if added {
		a.stats.TCPOutOfOrder++
		if wasEmpty {
			a.startHolding(c, d)
		}
	}
	if conflictLo >= 0 {
		a.conflict(c, d, t.Time, conflictLo, conflictHi)
	}
}

// differ compares the bytes of [pos, end) captured both in held piece p
// and in the new range starting at s (captured prefix data), and returns
// the range from the first differing byte to the last.
func differ(p *piece, s, pos, end int64, data []byte) (lo, hi int64, ok bool) {
	end = min(end, s+int64(len(data)), p.start+int64(len(p.data)))
	if end <= pos {
		return 0, 0, false
	}
	x := data[pos-s : end-s]
	y := p.data[pos-p.start : end-p.start]
	if string(x) == string(y) {
		return 0, 0, false
	}
	i, j := 0, len(x)
	for x[i] == y[i] {
		i++
	}
	for x[j-1] == y[j-1] {
		j--
	}
	return pos + int64(i), pos + int64(j), true
}

// trimHeld drops held bytes at or past end (a FIN's offset).
func (a *Assembler) trimHeld(h *half, end int64) {
	for len(h.held) > 0 {
		p := &h.held[len(h.held)-1]
		if p.start+p.n <= end {
			return
		}
		if p.start >= end {
			a.stats.TCPAfterClose += p.n
			a.addHeld(h, -len(p.data)-pieceOverhead)
			h.held[len(h.held)-1] = piece{}
			h.held = h.held[:len(h.held)-1]
			continue
		}
		keep := end - p.start
		a.stats.TCPAfterClose += p.n - keep
		if int64(len(p.data)) > keep {
			a.addHeld(h, -(len(p.data) - int(keep)))
			p.data = p.data[:keep]
		}
		p.n = keep
		return
	}
}

// complete ends direction d of TCP connection c: each remaining hole
// becomes a Gap before the held data after it, a hole before a FIN too,
// or without a FIN the lost tail up to the highest offset known sent, and
// the direction is closed.
func (a *Assembler) complete(c *conn, d Dir, t Stamp) {
	h := &c.h[d]
	if h.closed {
		return
	}
	for len(h.held) > 0 {
		a.lose(c, d, h, t, h.held[0].start-h.off)
	}
	switch {
	case h.closed:
	case h.fin:
		// sent may count the FIN's slot, and nothing follows a FIN.
		a.gap(c, d, h, t, h.finOff-h.off)
	case h.sent > h.off:
		a.stats.TCPTailGapBytes += h.sent - h.off
		a.gap(c, d, h, t, h.sent-h.off)
	}
	if !h.closed {
		h.closed = true
		a.h.Close(&c.s, d, t)
	}
	a.release(h)
}
