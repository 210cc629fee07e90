package pipeline

import (
	"math"
	"strconv"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/reassembly"
)

// A Cut tells, over a file run (Config.Cut), which packets carried the
// bytes of the records given to [Cut.Keep], so that a second reading of
// the same files copies those packets ([CopyCut]): the evidence of a bug
// report cut out of a long capture (-r FILE -Y FILTER -w OUT).
//
// The rule (docs/display-filters.md, "Cutting a capture"): a packet is kept when
// it carried a byte of a kept record, and with it what makes the record
// decode the same again:
//   - the first packet of every stream, kept or not, so that streams
//     keep their numbers (a stream is numbered by its first packet);
//   - TCP, for a stream with a kept record: the handshake (SYN, SYN-ACK
//     and the ACK after them), the packets with each direction's first
//     bytes (offset 0: a capture begun mid-connection has no handshake)
//     and those that end the connection (FIN, RST): a reader reassembles
//     the stream from its start, offsets are the original ones and the
//     bytes left out become gaps;
//   - context: each direction's first cutFirstMessages messages (content
//     detection), and the records of types declared
//     [dissect.TypeDecl.Context] (VRPN's cookie and names), of every
//     stream of the kept record's protocol (a VRPN UDP channel is named
//     by its TCP connection);
//   - the lead-in: the cutLeadIn records before a kept one in its
//     direction, and the last ones of the other direction (resync on a
//     chain of messages, state kept from message to message or between
//     a request and its reply);
//   - for a kept reply, the request it answers (the latest one of the
//     other direction of the type it answers, with the same request key
//     when the type has one) with its lead-in: its round trip is the same;
//   - for each kept TCP packet, the latest bare ACK of the other
//     direction before it: read again, a hole the peer acknowledged is
//     known lost when the packet comes (reassembly), not at the end.
//
// Memory is bounded: the marks cost a run of marked packets each
// (cutmarks.go), whatever the number of packets read; at most maxCutSegs
// packet positions in all (48 bytes each, forgotten as records pass over them
// but for the lead-in), and per open stream at most maxCutContext
// context and end packets and maxCutRequests requests; maxCutClosed
// context packets of streams that ended unkept. A position forgotten over
// the bound is counted ([Cut.Forgotten]).
type Cut struct {
	// Decl returns the declaration of a record's type (context types,
	// replies); nil: none known.
	Decl func(r *dissect.Record) *dissect.TypeDecl

	n       int64  // packets seen; the current packet's index is n-1
	fp      uint64 // the current packet's fingerprint
	marks   marks
	streams map[int]*cutStream
	// closedCtx holds, per protocol, the context packets of streams that
	// ended before a record of theirs was kept (at most maxCutClosed in
	// all): a protocol's context may serve other streams (VRPN's UDP
	// channel is named by its TCP connection).
	closedCtx map[string][]pktRef
	nClosed   int
	segs      int // positions held, all streams
	maxSegs   int // their bound (maxCutSegs)
	// the last declaration looked up (decl)
	lastProto, lastType string
	lastDecl            *dissect.TypeDecl
	forgot              int64 // positions forgotten over maxCutSegs
}

// Bounds of a Cut's memory.
const (
	maxCutSegs     = 1 << 20
	maxCutContext  = 256
	maxCutClosed   = 1 << 16
	maxCutRequests = 16
	maxCutReqPkts  = 16
	// cutFirstMessages is how many first messages of each direction are
	// context: content detection recognises a protocol by them, and a
	// protocol may trust a direction only after some (deltarobot: 2).
	cutFirstMessages = 4
	// cutLeadIn is how many records before a kept one, in its direction,
	// are kept with it: a protocol that resynchronises after a gap on a
	// chain of messages (deltarobot: 3) finds the kept one, and one whose
	// message decodes by the previous one (neptune) decodes it the same.
	cutLeadIn = 3
)

// cutSeg says that packet pkt carried offsets [off, end) of a direction;
// ack is the latest bare ACK of the other direction before it (noPkt:
// none).
type cutSeg struct {
	off, end int64
	pkt, ack pktRef
}

type cutDir struct {
	segs []cutSeg // in the order the packets came
	head int      // segs[:head] are forgotten
	next int64    // UDP and serial: the offset of the next bytes
	msgs int      // messages seen, up to cutFirstMessages
	ack  pktRef   // TCP: the latest bare ACK this direction sent (noPkt: none)
	// recent holds the offsets of the direction's last cutLeadIn+1
	// records (recent[n%len] the next to replace): a kept record's
	// lead-in starts at the oldest.
	recent [cutLeadIn + 1]int64
	n      int
}

// leadFrom is the offset from which a record just seen is kept: the start
// of the cutLeadIn records before it (0 near the start).
func (d *cutDir) leadFrom() int64 {
	if d.n < len(d.recent) {
		return 0
	}
	return d.recent[d.n%len(d.recent)]
}

type cutStream struct {
	proto   string // of its records
	dirs    [2]cutDir
	kept    bool     // a record of the stream was kept
	ends    []pktRef // handshake and end packets, kept with the stream
	context []pktRef // packets of context records
	synAck  bool     // a SYN-ACK was seen: the next bare ACK of dir 0 ends the handshake
	acked   bool
	closed  [2]bool
	reqs    [maxCutRequests]cutRequest
	nreq    int
}

type cutRequest struct {
	typ  string
	dir  dissect.Dir
	key  string
	pkts [maxCutReqPkts]pktRef
	n    int
}

// NewCut returns an empty Cut.
func NewCut() *Cut {
	return &Cut{streams: map[int]*cutStream{}, closedCtx: map[string][]pktRef{}, maxSegs: maxCutSegs}
}

// Packets is the number of packets the run read; Kept how many are
// marked.
func (c *Cut) Packets() int64 { return c.n }

// Kept is the number of packets marked to be copied.
func (c *Cut) Kept() int64 { return c.marks.n }

// Forgotten is the number of packet positions, context and end packets
// forgotten over the bounds: non-zero, a record kept may miss some of its
// packets or of what decodes it.
func (c *Cut) Forgotten() int64 { return c.forgot }

// Marked reports whether packet i (from 0, in the order read) is kept.
func (c *Cut) Marked(i int64) bool { return c.marks.has(i) }

func (c *Cut) mark(p pktRef) {
	if p.i >= 0 && p.i < c.n {
		c.marks.add(p)
	}
}

// packet is called with each packet before it is decoded.
func (c *Cut) packet(p *capture.Packet) {
	c.fp = fingerprint(c.n, p)
	c.n++
}

func (c *Cut) cur() pktRef { return pktRef{c.n - 1, c.fp} }

func (c *Cut) stream(id int) *cutStream {
	st := c.streams[id]
	if st == nil {
		st = &cutStream{}
		st.dirs[0].ack, st.dirs[1].ack = noPkt, noPkt
		c.streams[id] = st
	}
	return st
}

// open: the current packet opened stream s; it is kept whatever follows.
func (c *Cut) open(s *reassembly.Stream) {
	c.stream(s.ID)
	c.mark(c.cur())
}

// addSeg remembers that the current packet carried [off, off+n) of d.
func (c *Cut) addSeg(d *cutDir, off, n int64, ack pktRef) {
	if c.segs >= c.maxSegs && len(d.segs) > d.head {
		d.head++ // over the bound: this direction forgets its oldest
		c.segs--
		c.forgot++
		d.compact()
	}
	d.segs = append(d.segs, cutSeg{off: off, end: off + n, pkt: c.cur(), ack: ack})
	c.segs++
}

// segment is reassembly's report of a TCP packet.
func (c *Cut) segment(s *reassembly.Stream, dir reassembly.Dir, seg reassembly.Segment) {
	st := c.stream(s.ID)
	d := &st.dirs[dir&1]
	switch {
	case seg.SYN, seg.FIN, seg.RST:
		c.end(st, c.cur())
		if seg.SYN && seg.ACK {
			st.synAck = true
		}
	case seg.N == 0 && st.synAck && !st.acked && dir == 0:
		st.acked = true // the handshake's last ACK
		c.end(st, c.cur())
	}
	if seg.N > 0 {
		if seg.Off == 0 {
			c.end(st, c.cur()) // a direction's first bytes
		}
		c.addSeg(d, seg.Off, seg.N, st.dirs[dir&1^1].ack)
	} else if seg.ACK && !seg.SYN && !seg.FIN && !seg.RST {
		d.ack = c.cur()
	}
}

// end remembers packet i among those kept with the stream.
func (c *Cut) end(st *cutStream, i pktRef) {
	if st.kept {
		c.mark(i)
		return
	}
	if len(st.ends) < maxCutContext {
		st.ends = append(st.ends, i)
	} else {
		c.forgot++
	}
}

// keepStream marks the handshake, end and context packets of st and
// those that come later.
func (c *Cut) keepStream(st *cutStream) {
	st.kept = true
	for _, p := range st.ends {
		c.mark(p)
	}
	for _, p := range st.context {
		c.mark(p)
	}
	st.ends, st.context = nil, nil
}

// unit is a UDP datagram or a serial read of n bytes (or a gap of n, when
// gap) of direction dir, from the current packet.
func (c *Cut) unit(s *reassembly.Stream, dir reassembly.Dir, n int64, gap bool) {
	if s.Transport == reassembly.TCP {
		return // told by segment
	}
	st := c.stream(s.ID)
	d := &st.dirs[dir&1]
	if !gap && n > 0 {
		c.addSeg(d, d.next, n, noPkt)
	}
	d.next += n
}

// closed: direction dir of s ended (after its last records).
func (c *Cut) closed(s *reassembly.Stream, dir reassembly.Dir) {
	st := c.streams[s.ID]
	if st == nil {
		return
	}
	st.closed[dir&1] = true
	if st.closed[0] && st.closed[1] {
		if !st.kept && st.proto != "" && len(st.context) > 0 {
			// Its handshake and context, for a later stream of its
			// protocol that needs them.
			for _, p := range append(st.ends, st.context...) {
				if c.nClosed < maxCutClosed {
					c.closedCtx[st.proto] = append(c.closedCtx[st.proto], p)
					c.nClosed++
				} else {
					c.forgot++
				}
			}
		}
		for i := range st.dirs {
			c.segs -= len(st.dirs[i].segs) - st.dirs[i].head
		}
		delete(c.streams, s.ID)
	}
}

// packets calls f with each packet that carried a byte of [lo, hi) of
// direction d, and with the peer's bare ACK before each (TCP), which makes
// a hole before it a gap at once when read again, not at the end.
func (c *Cut) packets(d *cutDir, lo, hi int64, f func(pktRef)) {
	for _, s := range d.segs[d.head:] {
		if s.off < hi && s.end > lo {
			f(s.pkt)
			if s.ack.i >= 0 {
				f(s.ack)
			}
		}
	}
}

// seen is called with every record of the run, before the filter: the
// positions before it are forgotten, and context records and requests
// remembered.
func (c *Cut) seen(r *dissect.Record) {
	st := c.streams[r.Stream]
	if st == nil {
		return
	}
	d := &st.dirs[r.Dir&1]
	if r.Proto != "" {
		st.proto = r.Proto
	}
	var td *dissect.TypeDecl
	if c.Decl != nil && r.Type != dissect.TypeGap && r.Type != dissect.TypeSkipped {
		td = c.decl(r)
	}
	first := d.msgs < cutFirstMessages
	if first && r.Type != dissect.TypeGap && r.Type != dissect.TypeSkipped {
		d.msgs++
	}
	if first || td != nil && td.Context {
		c.packets(d, r.Offset, r.Offset+r.Length, func(p pktRef) {
			if st.kept {
				c.mark(p)
			} else if len(st.context) < maxCutContext {
				st.context = append(st.context, p)
			} else {
				c.forgot++
			}
		})
	}
	if td != nil && td.Exchange.Role == dissect.Request {
		q := &st.reqs[st.nreq%maxCutRequests]
		st.nreq++
		*q = cutRequest{typ: r.Type, dir: r.Dir, key: requestKey(td, r)}
		// With its lead-in, as a kept record's; the last packets when
		// there are more.
		c.packets(d, d.leadFrom(), r.Offset+r.Length, func(p pktRef) {
			if q.n == maxCutReqPkts {
				copy(q.pkts[:], q.pkts[1:])
				q.n--
			}
			q.pkts[q.n] = p
			q.n++
		})
	}
	// Records of a direction come in offset order: nothing before the
	// lead-in of this one is asked for again.
	d.recent[d.n%len(d.recent)] = r.Offset
	d.n++
	low := d.leadFrom()
	for d.head < len(d.segs) && d.segs[d.head].end <= low {
		d.head++
		c.segs--
	}
	d.compact()
}

// compact drops the forgotten positions from the slice when they are
// most of it.
func (d *cutDir) compact() {
	if d.head > 64 && d.head*2 > len(d.segs) {
		d.segs = d.segs[:copy(d.segs, d.segs[d.head:])]
		d.head = 0
	}
}

// decl is Decl(r), the last answer kept: records of a type come in runs.
// A type with variants is looked up each time (the variant is a field).
func (c *Cut) decl(r *dissect.Record) *dissect.TypeDecl {
	if c.lastDecl != nil && c.lastDecl.Variant == nil && r.Type == c.lastType && r.Proto == c.lastProto {
		return c.lastDecl
	}
	td := c.Decl(r)
	c.lastProto, c.lastType, c.lastDecl = r.Proto, r.Type, td
	return td
}

// requestKey is the value of r's request key field, "" when none.
func requestKey(td *dissect.TypeDecl, r *dissect.Record) string {
	fd := td.FieldWith(dissect.RoleRequestKey)
	if fd == nil {
		return ""
	}
	v, ok := r.Fields.Get(fd.Name)
	if !ok {
		return ""
	}
	return strconv.FormatUint(v.Uint(), 10) + "/" + v.Str() // an id is a number or a string
}

// Keep marks the packets of r, a record that passed the filter, and what
// its stream needs to decode it the same again (see [Cut]).
func (c *Cut) Keep(r *dissect.Record) {
	st := c.streams[r.Stream]
	if st == nil {
		return
	}
	d := &st.dirs[r.Dir&1]
	c.packets(d, d.leadFrom(), r.Offset+r.Length, c.mark)
	// The other direction's last records too: a request and its reply
	// make a state both directions share (one request in flight).
	od := &st.dirs[r.Dir&1^1]
	c.packets(od, od.leadFrom(), math.MaxInt64, c.mark)
	if !st.kept {
		// The stream's handshake and context, and those of every other
		// stream of its protocol: context may be shared between streams
		// (VRPN's UDP channel is named by its TCP connection).
		c.keepStream(st)
		for _, o := range c.streams {
			if o.proto == st.proto && len(o.context) > 0 {
				c.keepStream(o)
			}
		}
		for _, p := range c.closedCtx[st.proto] {
			c.mark(p)
		}
		c.nClosed -= len(c.closedCtx[st.proto])
		delete(c.closedCtx, st.proto)
	}
	if c.Decl == nil {
		return
	}
	td := c.decl(r)
	if td == nil || td.Exchange.Role != dissect.Reply {
		return
	}
	key := requestKey(td, r)
	for i := 1; i <= min(st.nreq, maxCutRequests); i++ {
		q := &st.reqs[(st.nreq-i)%maxCutRequests]
		if q.dir == r.Dir || td.Exchange.Answers != "" && q.typ != td.Exchange.Answers || key != "" && q.key != key {
			continue
		}
		for _, p := range q.pkts[:q.n] {
			c.mark(p)
		}
		return
	}
}

// cutHandler passes reassembly's events to the decoder and tells the Cut
// what they carried; the Cut hears of a stream's end after the decoder
// (its last records).
type cutHandler struct {
	h   reassembly.Handler
	cut *Cut
}

func (x cutHandler) Open(s *reassembly.Stream, t reassembly.Stamp) {
	x.cut.open(s)
	x.h.Open(s, t)
}

func (x cutHandler) Data(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, data []byte) {
	x.cut.unit(s, dir, int64(len(data)), false)
	x.h.Data(s, dir, t, data)
}

func (x cutHandler) Datagram(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, data []byte) {
	x.cut.unit(s, dir, int64(len(data)), false)
	x.h.Datagram(s, dir, t, data)
}

func (x cutHandler) Gap(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, n int64) {
	x.cut.unit(s, dir, n, true)
	x.h.Gap(s, dir, t, n)
}

func (x cutHandler) Conflict(s *reassembly.Stream, dir reassembly.Dir, t time.Time, off, n int64) {
	x.h.Conflict(s, dir, t, off, n)
}

func (x cutHandler) Close(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp) {
	x.h.Close(s, dir, t)
	x.cut.closed(s, dir)
}
