package reassembly

// Segment is what one TCP packet carried of its connection, as told to
// the observer set with [Assembler.ObserveSegments]: the stream offsets
// of its payload in its direction, and its flags.
type Segment struct {
	// Off is the stream offset of the payload's first byte in the
	// packet's direction (the offsets of Handler.Data, of the records
	// made from them); N is the payload's declared length, so the
	// packet carried offsets [Off, Off+N) (those cut by the snap length
	// become a gap). Off is 0 in a direction whose start is not known
	// yet (a bare ACK before any data).
	Off int64
	N   int64
	// SYN, ACK, FIN and RST are the packet's TCP flags.
	SYN, ACK, FIN, RST bool
}

// ObserveSegments sets f to be told, for every TCP packet of an open
// connection, which bytes of which stream it carried, before they are
// delivered: so that whoever keeps the packets of some records (-w with a
// display filter) can tell which packets carried a record's bytes, also
// when they were held out of order. Trailing packets of a finished
// connection are not told. nil stops it.
func (a *Assembler) ObserveSegments(f func(s *Stream, d Dir, seg Segment)) { a.observe = f }

// observeTCP tells the observer about pk, of direction d of c, before it
// is processed.
func (a *Assembler) observeTCP(c *conn, d Dir, h *half, pk *packet) {
	seg := Segment{
		N:   int64(pk.plen),
		SYN: pk.flags&flagSYN != 0,
		ACK: pk.flags&flagACK != 0,
		FIN: pk.flags&flagFIN != 0,
		RST: pk.flags&flagRST != 0,
	}
	seq := pk.seq
	if seg.SYN {
		seq++ // the SYN's own sequence number comes before offset 0
	}
	if h.started {
		seg.Off = h.offset(seq)
	}
	a.observe(&c.s, d, seg)
}
