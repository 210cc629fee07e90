package spec

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// The requests a parser waits on the answer of: a reply type that says
// which request type it answers (TypeMeta.Exchange.Answers) is matched to
// the oldest unanswered request of that type from the other direction
// with the same request key (the field of role request_key, when both
// have one), and gets its round trip as rtt_ms.

// maxInflight bounds the requests a direction keeps per type: the
// oldest is forgotten past it.
const maxInflight = 64

type inflight struct {
	key   dissect.Value
	keyed bool
	t     time.Time
}

// exchange notes a request, or matches a reply and adds its rtt_ms; m
// is the record type's meaning.
func (ps *parser) exchange(c *dissect.Ctx, rec *dissect.Record, m *TypeMeta) {
	key, keyed := dissect.Value{}, false
	if name := ps.p.keys[rec.Type]; name != "" {
		key, keyed = rec.Fields.Get(name)
	}
	if m.Exchange.Role == dissect.Request {
		if ps.waiting == nil {
			ps.waiting = map[string]*[2][]inflight{}
		}
		w := ps.waiting[rec.Type]
		if w == nil {
			w = &[2][]inflight{}
			ps.waiting[rec.Type] = w
		}
		q := &w[c.Dir]
		if len(*q) == maxInflight {
			*q = append((*q)[:0], (*q)[1:]...)
		}
		*q = append(*q, inflight{key: key, keyed: keyed, t: c.Time})
		return
	}
	w := ps.waiting[m.Exchange.Answers]
	if w == nil {
		return
	}
	q := &w[1-c.Dir]
	for i, r := range *q {
		if r.keyed != keyed || keyed && !r.key.Equal(key) {
			continue
		}
		*q = append((*q)[:i], (*q)[i+1:]...)
		rec.Add(LatencyField, dissect.Float(float64(c.Time.Sub(r.t).Nanoseconds())/1e6))
		return
	}
}
