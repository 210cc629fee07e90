package exchange

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Plan is a protocol's exchanges as its declarations give them: a number
// for each request type (declaration order), the request types each reply
// type answers (its Exchange.Answers), and each type's request-key field
// (the field of role request_key). A Plan is read-only once built; each
// stream has its own Matcher (Plan.Matcher).
type Plan struct {
	Rules   Rules
	types   map[string]int32
	answers map[string][]int32
	keys    map[string]string
}

// NewPlan builds the plan of decls under rules. A reply whose Answers
// names no declared request answers nothing.
func NewPlan(decls []dissect.TypeDecl, rules Rules) *Plan {
	p := &Plan{Rules: rules, types: map[string]int32{}, answers: map[string][]int32{}, keys: map[string]string{}}
	for i := range decls {
		d := &decls[i]
		if d.Exchange.Role == dissect.Request {
			p.request(d.Type)
		}
		if f := d.FieldWith(dissect.RoleRequestKey); f != nil {
			p.keys[d.Type] = f.Name
		}
	}
	for i := range decls {
		d := &decls[i]
		if d.Exchange.Role != dissect.Reply || d.Exchange.Answers == "" {
			continue
		}
		if n, ok := p.types[d.Exchange.Answers]; ok {
			p.answers[d.Type] = append(p.answers[d.Type], n)
		}
	}
	return p
}

// request returns the number of request type typ, numbering it if new.
func (p *Plan) request(typ string) int32 {
	n, ok := p.types[typ]
	if !ok {
		n = int32(len(p.types))
		p.types[typ] = n
	}
	return n
}

// AlsoAnswers makes reply answer request too, besides what its
// declaration names (a hook for what a declaration cannot say: VRPN's
// logging response answers a status request no declaration calls a
// request). Call it while building the plan only.
func (p *Plan) AlsoAnswers(reply, request string) {
	n := p.request(request)
	p.answers[reply] = append(p.answers[reply], n)
}

// Request returns the number of request type typ.
func (p *Plan) Request(typ string) (int32, bool) {
	n, ok := p.types[typ]
	return n, ok
}

// Answers returns the request types reply answers, its declared one
// first (nil: reply is no reply).
func (p *Plan) Answers(reply string) []int32 { return p.answers[reply] }

// KeyField returns the request-key field of type typ ("" for none).
func (p *Plan) KeyField(typ string) string { return p.keys[typ] }

// Matcher returns a stream's matcher under the plan's rules.
func (p *Plan) Matcher() Matcher { return Matcher{Rules: p.Rules} }

// Record notes the record rec of type typ sent in direction dir at time t
// and offset off: a request waits, keyed by its request-key field; a
// reply takes its request. ok is set when rec is a reply that took one.
func (p *Plan) Record(m *Matcher, rec *dissect.Record, dir dissect.Dir, t time.Time, off int64) (req Entry, ok bool) {
	var key Key
	if name := p.keys[rec.Type]; name != "" {
		if v, has := rec.Fields.Get(name); has {
			key = ValueKey(v)
		}
	}
	if n, isReq := p.types[rec.Type]; isReq {
		m.Request(dir, n, key, t, off)
		return Entry{}, false
	}
	if a := p.answers[rec.Type]; a != nil {
		req, ok, _ = m.Reply(dir, key, t, a...)
	}
	return req, ok
}

// Millis is a round trip in milliseconds, as rtt_ms and latency_ms give
// it.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
