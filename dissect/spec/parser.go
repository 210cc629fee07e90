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
		if n := ps.p.fast(c, b); n > 0 {
			return n, nil
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
// reply to match): the records are frameAt's. It returns 0 when frameAt
// is to decide.
func (p *Protocol) fast(c *dissect.Ctx, b []byte) int {
	from := p.s.Body.From
	ff := &p.fixed[p.frame].fx
	if len(b) < from+ff.Size() {
		return 0
	}
	// The message type first, from the frame's fields (decoded into the
	// record when decoding, and taken back if the message is not
	// taken): a frame whose message is not of numbers at fixed offsets is
	// framed (and its check computed) once, by frameAt.
	r := c.Rec
	had := len(r.Fields)
	var on int64
	if c.Decode {
		out := r.Extend(ff.Len())
		ff.Decode(out, b[from:])
		on = out[p.on].Value.Int()
	} else {
		on, _ = ff.Raw(b[from:], p.on)
	}
	if n, t := p.fastFrame(b, on); n > 0 {
		r.Type = p.fixed[t].name
		if c.Decode {
			mf := &p.fixed[t].fx
			mf.Decode(r.Extend(mf.Len()), b[from+ff.Size():])
		}
		return n
	}
	r.Fields = r.Fields[:had]
	return 0
}

// fastFrame frames a message whose frame fields switch on on, for fast:
// its length and its message type; 0 when the fast path does not take it.
func (p *Protocol) fastFrame(b []byte, on int64) (int, int) {
	t, ok := p.caseOf(on)
	if !ok || !p.fixed[t].ok {
		return 0, 0
	}
	n := p.s.Body.From + p.fixed[p.frame].fx.Size() + p.fixed[t].fx.Size() // where the fields end
	if n > p.max {
		return 0, 0
	}
	if p.bare {
		if len(b) < n {
			return 0, 0
		}
		return n, t
	}
	m, err := p.fr.Frame(b)
	switch {
	case err != nil:
		return 0, 0
	case m > 0: // the framing's size: the fields fill the body exactly
		if m+p.s.Body.To != n {
			return 0, 0
		}
		return m, t
	case len(b) < n || p.fr.Verify(b[:n]) != nil:
		return 0, 0
	}
	return n, t
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
