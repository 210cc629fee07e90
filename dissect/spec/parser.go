package spec

import (
	"errors"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
	"github.com/dissect-tools/dissect/dissect/framing"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// parser frames and decodes one stream; it keeps only its decoder's
// scratch space.
type parser struct {
	p   *Protocol
	dec *layout.Decoder
	rec dissect.Record   // for Sync's trial frames
	ex  exchange.Matcher // the requests not yet answered
}

// Parse decodes the message at b[0].
func (ps *parser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	if ps.p.frameFix {
		n, need := ps.p.fast(c, b)
		if n > 0 {
			return n, nil
		}
		if need > 0 && !c.Final {
			// the start of a message the fast path frames: as frameAt
			// would say, without its decoder's error for the short read
			return need, dissect.ErrNeedMore
		}
	}
	n, t, err := ps.p.frameAt(ps.dec, c.Rec, b, c.Final)
	if err != nil {
		return n, err
	}
	if ps.p.meta[t].Exchange.Role != dissect.NoExchange {
		if req, ok := ps.p.ex.Record(&ps.ex, c.Rec, c.Dir, c.Time, c.Offset); ok {
			c.Rec.Add(LatencyField, dissect.Float(exchange.Millis(c.Time.Sub(req.Time))))
		}
	}
	if !c.Decode {
		c.Rec.Fields = c.Rec.Fields[:0]
	}
	return n, nil
}

// fast frames and decodes the message at b[0] when the frame's fields
// and the message's are numbers at fixed offsets, every byte is there
// and nothing else is to say (no bytes after the fields, no request or
// reply to match): the records are frameAt's. It returns (n, 0) for a
// message of n bytes; (0, need) when b is the start of a message of need
// bytes that the fast path would frame (only where framing is by the
// fields alone, so that nothing before their end can fail); (0, 0) when
// frameAt is to decide.
func (p *Protocol) fast(c *dissect.Ctx, b []byte) (int, int) {
	fp := &p.fp
	if len(b) < fp.head {
		if fp.bare {
			return 0, fp.head
		}
		return 0, 0
	}
	// The message type first, from the frame's fields: a frame whose
	// message is not of numbers at fixed offsets is framed (and its check
	// computed) once, by frameAt.
	f := fp.caseOf(fp.on.Read(b[fp.from:]))
	if f == nil {
		return 0, 0
	}
	n := f.end
	if !fp.bare {
		if n = p.framed(b, n); n == 0 {
			return 0, 0
		}
	}
	if n > len(b) {
		return 0, n
	}
	c.Rec.Type = f.name
	if c.Decode {
		f.whole.Decode(c.Rec.Extend(f.whole.Len()), b[fp.from:])
	}
	return n, 0
}

// framed returns the size of the frame at b[0] whose fields end at end,
// for fast, when the framing (a size, a check) agrees; 0 when it does
// not, or cannot tell yet.
func (p *Protocol) framed(b []byte, end int) int {
	m, err := p.fr.Frame(b)
	switch {
	case err != nil:
		return 0
	case m > 0: // the framing's size: the fields fill the body exactly
		if m+p.s.Body.To != end {
			return 0
		}
		return m
	case len(b) < end || p.fr.Verify(b[:end]) != nil:
		return 0
	}
	return end
}

// fastPath is what fast reads for every message, in one place.
type fastPath struct {
	from, head int          // where the frame's fields start and end
	on         layout.IntAt // reads the field Messages switches on
	bare       bool         // no sync word, size, length or check: the fields alone frame
	// the messages fast takes, by the value switched on: from lo when
	// dense, else in cases
	lo    int64
	dense []*fixedType
	cases map[int64]*fixedType
}

// compileFast finds the messages of numbers at fixed offsets behind a
// frame of such numbers, for fast.
func (p *Protocol) compileFast(plan *layout.Plan, fr *framing.Framer) {
	p.fixed = make([]fixedType, len(p.s.Schema.Types))
	for t := range p.fixed {
		f := &p.fixed[t]
		f.fx, f.ok = plan.Fixed(t)
		f.name = plan.Name(t)
	}
	head := &p.fixed[p.frame]
	on, ok := head.fx.Int(p.on)
	if p.cases == nil || !head.ok || !ok {
		return
	}
	fp := fastPath{from: p.s.Body.From, head: p.s.Body.From + head.fx.Size(), on: on, lo: p.lo,
		bare: len(p.s.Framing.Sync) == 0 && !fr.Sized() && !fr.HasCheck()}
	take := func(t int) *fixedType {
		f := &p.fixed[t]
		// a request or a reply is matched: not by the fast path
		if !f.ok || p.meta[t].Exchange.Role != dissect.NoExchange {
			return nil
		}
		f.whole = head.fx.Then(f.fx)
		f.end = fp.from + f.whole.Size()
		if f.end > p.max {
			return nil
		}
		p.frameFix = true
		return f
	}
	if p.dense != nil {
		fp.dense = make([]*fixedType, len(p.dense))
		for i, t := range p.dense {
			if t >= 0 {
				fp.dense[i] = take(int(t))
			}
		}
	} else {
		fp.cases = make(map[int64]*fixedType)
		for v, t := range p.cases {
			if f := take(t); f != nil {
				fp.cases[v] = f
			}
		}
	}
	p.fp = fp
}

func (fp *fastPath) caseOf(on int64) *fixedType {
	if i := uint64(on - fp.lo); i < uint64(len(fp.dense)) {
		return fp.dense[i]
	}
	return fp.cases[on]
}

// caseOf returns the message type of the value switched on.
func (p *Protocol) caseOf(on int64) (int, bool) {
	if i := uint64(on - p.lo); i < uint64(len(p.dense)) {
		t := int(p.dense[i])
		return t, t >= 0
	}
	t, ok := p.cases[on]
	return t, ok
}

// End notes the requests forgotten past the bound (dissect.Ender).
func (ps *parser) End(c *dissect.Ctx) { exchange.NoteLost(c, ps.p.s.Name, &ps.ex) }

// Sync finds where frames start again.
func (ps *parser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	return ps.p.fr.Resync(b, c.Last, ps.p.trial(ps.dec, &ps.rec))
}

// trial frames a candidate for Resync and Judge: into rec, thrown away.
func (p *Protocol) trial(dec *layout.Decoder, rec *dissect.Record) framing.FrameFunc {
	return func(b []byte) (int, error) {
		rec.Reset()
		n, _, err := p.frameAt(dec, rec, b, false)
		if errors.Is(err, dissect.ErrNeedMore) {
			return n, framing.ErrShort
		}
		return n, err
	}
}

// frameAt frames and decodes the message at b[0] into rec: (n, the
// layout type of the message, nil); (need, 0, dissect.ErrNeedMore); or
// (0, 0, *dissect.Error). final: b ends where the transport ends a unit
// (a datagram).
func (p *Protocol) frameAt(dec *layout.Decoder, rec *dissect.Record, b []byte, final bool) (int, int, error) {
	name := p.s.Name
	n, err := p.fr.Frame(b)
	if err != nil {
		if err == framing.ErrShort {
			return n, 0, dissect.ErrNeedMore
		}
		if bad, ok := err.(*framing.Bad); ok {
			return 0, 0, dissect.Malformed(name, "bad_frame", bad.Offset, "%s", bad.Msg)
		}
		return 0, 0, dissect.Malformed(name, "bad_frame", 0, "%v", err)
	}
	from := p.s.Body.From
	sized := n > 0
	var body []byte
	if sized {
		body = b[from : n+p.s.Body.To]
	} else if len(b) < from {
		return 0, 0, dissect.ErrNeedMore
	} else {
		// a frame its fields size is at most max bytes: reading is
		// bounded by it, and so is each resync candidate's work
		body = b[from:min(len(b), p.max)]
	}
	typ, t := MessageType, p.frame
	k, err := dec.Decode(rec, p.frame, body)
	if err == nil && p.cases != nil {
		on := dec.Raw(p.on)
		var ok bool
		if t, ok = p.caseOf(on); !ok {
			if p.def < 0 {
				return 0, 0, dissect.Malformed(name, "unknown_type", from, "message type %d is not described", on)
			}
			t = p.def
		}
		typ = p.plan.Name(t)
		var m int
		m, err = dec.Decode(rec, t, body[k:])
		if de, ok := err.(*layout.DecodeError); ok {
			de.Offset += k
			if de.Need > 0 {
				de.Need += k
			}
		}
		k += m
	}
	if err != nil {
		de, ok := err.(*layout.DecodeError)
		if !ok {
			return 0, 0, dissect.Malformed(name, "bad_body", from, "%v", err)
		}
		if !sized && de.Short && !final && len(body) < p.max-from {
			need := 0
			if de.Need > 0 {
				need = from + de.Need
			}
			return need, 0, dissect.ErrNeedMore
		}
		return 0, 0, dissect.Malformed(name, "bad_body", from+de.Offset, "%s", de.Msg)
	}
	if !sized {
		n = from + k
		if n == 0 {
			return 0, 0, dissect.Malformed(name, "empty", 0, "a message of no bytes")
		}
		if err := p.fr.Verify(b[:n]); err != nil {
			return 0, 0, dissect.Malformed(name, "bad_frame", 0, "%v", err)
		}
	} else if extra := len(body) - k; extra > 0 {
		rec.Warnf("%d bytes after the last field of %s", extra, typ)
	}
	rec.Type = typ
	return n, t, nil
}
