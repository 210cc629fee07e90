package exchange_test

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
)

// model is a plain restatement of the matcher's rules (the package doc),
// written apart from it: every request of the stream in one list in
// arrival order, each step a filter over the whole list.
type model struct {
	rules exchange.Rules
	reqs  []modelReq
	drops [4]int // by exchange.Why
}

type modelReq struct {
	dir  dissect.Dir
	typ  int32
	key  exchange.Key
	t    time.Time
	id   int64
	gone bool
}

func (m *model) live() []*modelReq {
	var out []*modelReq
	for i := range m.reqs {
		if !m.reqs[i].gone {
			out = append(out, &m.reqs[i])
		}
	}
	return out
}

func (m *model) expire(t time.Time) {
	if m.rules.Timeout <= 0 {
		return
	}
	for _, r := range m.live() {
		if t.Sub(r.t) > m.rules.Timeout {
			r.gone = true
			m.drops[exchange.Expired]++
		}
	}
}

func (m *model) request(dir dissect.Dir, typ int32, key exchange.Key, t time.Time, id int64) {
	m.expire(t)
	if m.rules.PerKey > 0 {
		var same []*modelReq
		for _, r := range m.live() {
			if r.dir == dir && r.typ == typ && r.key == key {
				same = append(same, r)
			}
		}
		if len(same) >= m.rules.PerKey {
			same[0].gone = true
			m.drops[exchange.Forgotten]++
		}
	}
	var group []*modelReq
	for _, r := range m.live() {
		if r.dir == dir && (m.rules.Shared || r.typ == typ) {
			group = append(group, r)
		}
	}
	if len(group) >= max(m.rules.Bound, 1) {
		group[0].gone = true
		m.drops[exchange.Forgotten]++
	}
	m.reqs = append(m.reqs, modelReq{dir: dir, typ: typ, key: key, t: t, id: id})
}

func (m *model) reply(dir dissect.Dir, key exchange.Key, t time.Time, answers []int32) (int64, bool) {
	m.expire(t)
	var before []*modelReq
	for _, r := range m.live() {
		if r.dir == dir {
			continue
		}
		answered := false
		for _, a := range answers {
			answered = answered || a == r.typ
		}
		if !answered || r.key != key {
			before = append(before, r)
			continue
		}
		r.gone = true
		if m.rules.InOrder {
			for _, b := range before {
				b.gone = true
				m.drops[exchange.Skipped]++
			}
		}
		return r.id, true
	}
	return 0, false
}

// FuzzExchange drives the matcher and the model with the same requests,
// replies and clock, and wants the same matches, the same losses, the
// same requests left waiting, and the bounds held at every step.
func FuzzExchange(f *testing.F) {
	f.Add([]byte{0x03, 0x00, 0x00, 0x00, 0x10, 0x91, 0x20})
	f.Add([]byte{0x1f, 0x02, 0x05, 0x01, 0x00, 0x01, 0x00, 0x02, 0x81, 0x83, 0xc0})
	f.Add([]byte{0x22, 0x13, 0x03, 0x00, 0x04, 0x08, 0x0c, 0x85, 0x85, 0x85, 0xff, 0x40})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		rules := exchange.Rules{
			Bound:   int(data[0] & 7),
			Shared:  data[0]&8 != 0,
			InOrder: data[0]&16 != 0,
			PerKey:  int(data[1] & 3),
			Timeout: time.Duration(data[2]) * time.Millisecond,
		}
		data = data[3:]
		m := exchange.Matcher{Rules: rules}
		ref := model{rules: rules}
		now := time.Unix(0, 0)
		keys := []exchange.Key{{}, exchange.Uint(1), exchange.Uint(2), exchange.Str("\x01")}
		byID := map[time.Time]int64{} // a request's id from its unique time
		for i, op := range data {
			// op: bit 7 reply, bit 6 "time passes" only, bits 5-4 key,
			// bit 3 direction, bits 2-0 type (a reply answers types
			// type and type+1 when bit 2 is set).
			now = now.Add(time.Millisecond + time.Duration(op&0x3f)*time.Microsecond)
			dir := dissect.Dir(op >> 3 & 1)
			key := keys[op>>4&3]
			typ := int32(op & 3)
			switch {
			case op&0xc0 == 0x40:
				now = now.Add(time.Duration(op&0x3f) * time.Millisecond)
				m.Expire(now)
				ref.expire(now)
			case op&0x80 == 0:
				byID[now] = int64(i)
				for _, d := range m.Request(dir, typ, key, now, int64(i)) {
					if d.Why == exchange.Waiting {
						t.Fatalf("op %d: dropped %+v without a reason", i, d)
					}
				}
				ref.request(dir, typ, key, now, int64(i))
			default:
				answers := []int32{typ}
				if op&4 != 0 {
					answers = append(answers, typ+1)
				}
				req, ok, _ := m.Reply(dir, key, now, answers...)
				id, wantOK := ref.reply(dir, key, now, answers)
				if ok != wantOK || ok && (req.Off != id || byID[req.Time] != id) {
					t.Fatalf("op %d: reply took %+v %v, model %d %v", i, req, ok, id, wantOK)
				}
			}
			// The bounds hold, and the same requests wait.
			var live [2][]int64
			for _, r := range ref.live() {
				live[r.dir] = append(live[r.dir], r.id)
			}
			for d := range dissect.Dir(2) {
				w := m.Waiting(d)
				if len(w) != len(live[d]) {
					t.Fatalf("op %d: dir %d waits %d, model %d", i, d, len(w), len(live[d]))
				}
				per := map[int32]int{}
				for k, e := range w {
					if e.Off != live[d][k] {
						t.Fatalf("op %d: dir %d waiting[%d] is %d, model %d", i, d, k, e.Off, live[d][k])
					}
					per[e.Type]++
					if rules.Shared && len(w) > max(rules.Bound, 1) || !rules.Shared && per[e.Type] > max(rules.Bound, 1) {
						t.Fatalf("op %d: past the bound: %+v", i, w)
					}
				}
			}
		}
		c := m.Counts()
		if int(c.Forgotten) != ref.drops[exchange.Forgotten] || int(c.Expired) != ref.drops[exchange.Expired] || int(c.Skipped) != ref.drops[exchange.Skipped] {
			t.Fatalf("counts %+v, model %v", c, ref.drops)
		}
		// Every request is accounted for.
		if c.Requests != c.Matched+c.Forgotten+c.Expired+c.Skipped+uint64(len(m.Waiting(0))+len(m.Waiting(1))) || c.Replies != c.Matched+c.Unmatched {
			t.Fatalf("counts do not add up: %+v, %d and %d waiting", c, len(m.Waiting(0)), len(m.Waiting(1)))
		}
	})
}
