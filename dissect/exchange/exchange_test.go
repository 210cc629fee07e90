package exchange_test

import (
	"math"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
)

// Every expectation here is worked out by hand from the rules in the
// package doc: the times are whole milliseconds after t0, so each round
// trip is the difference of two of them.

var t0 = time.Unix(1795306100, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

const ping, status, other int32 = 0, 1, 2

// reply wants a reply at ms to take the request sent at wantMS (-1: none).
func reply(t *testing.T, m *exchange.Matcher, dir dissect.Dir, key exchange.Key, ms, wantMS int, answers ...int32) exchange.Entry {
	t.Helper()
	req, ok, _ := m.Reply(dir, key, at(ms), answers...)
	switch {
	case wantMS < 0 && ok:
		t.Fatalf("reply at %d ms took the request of %v, want none", ms, req.Time.Sub(t0))
	case wantMS >= 0 && !ok:
		t.Fatalf("reply at %d ms took nothing, want the request at %d ms", ms, wantMS)
	case wantMS >= 0 && !req.Time.Equal(at(wantMS)):
		t.Fatalf("reply at %d ms took the request at %v, want %d ms", ms, req.Time.Sub(t0), wantMS)
	}
	return req
}

func counts(t *testing.T, m *exchange.Matcher, want exchange.Counts) {
	t.Helper()
	if got := m.Counts(); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
}

func lost(t *testing.T, m *exchange.Matcher, want string) {
	t.Helper()
	if got := m.Lost(); got != want {
		t.Errorf("Lost() = %q, want %q", got, want)
	}
}

func TestKeyed(t *testing.T) {
	m := exchange.Matcher{Rules: exchange.Rules{Bound: 64}}
	m.Request(0, ping, exchange.Uint(7), at(0), 0)
	m.Request(0, ping, exchange.Uint(8), at(1), 10)
	// Out of order: 8's pong comes first and takes 8, not the older 7.
	if r := reply(t, &m, 1, exchange.Uint(8), 5, 1, ping); r.Off != 10 || r.Type != ping {
		t.Errorf("took %+v", r)
	}
	reply(t, &m, 1, exchange.Uint(7), 6, 0, ping)
	// Each request is answered once: a second pong of 7 has none.
	reply(t, &m, 1, exchange.Uint(7), 7, -1, ping)
	// A reply in the requests' own direction answers nothing.
	m.Request(0, ping, exchange.Uint(9), at(10), 20)
	reply(t, &m, 0, exchange.Uint(9), 11, -1, ping)
	// Nor does a reply of another request type, or another key kind.
	reply(t, &m, 1, exchange.Uint(9), 12, -1, other)
	reply(t, &m, 1, exchange.Str("\x09"), 12, -1, ping)
	reply(t, &m, 1, exchange.Key{}, 12, -1, ping)
	reply(t, &m, 1, exchange.Uint(9), 13, 10, other, ping)
	counts(t, &m, exchange.Counts{Requests: 3, Replies: 8, Matched: 3, Unmatched: 5})
	lost(t, &m, "")
}

func TestUnkeyed(t *testing.T) {
	m := exchange.Matcher{Rules: exchange.Rules{Bound: 64}}
	// A reply without a request takes nothing, and no later request.
	reply(t, &m, 1, exchange.Key{}, 0, -1, ping)
	m.Request(0, ping, exchange.Key{}, at(1), 0)
	m.Request(0, ping, exchange.Key{}, at(2), 0)
	m.Request(0, ping, exchange.Uint(0), at(3), 0) // keyed: not for an unkeyed reply
	reply(t, &m, 1, exchange.Key{}, 4, 1, ping)    // oldest first
	reply(t, &m, 1, exchange.Key{}, 5, 2, ping)
	reply(t, &m, 1, exchange.Key{}, 6, -1, ping)
	reply(t, &m, 1, exchange.Uint(0), 7, 3, ping)
}

func TestDuplicatedRequest(t *testing.T) {
	// A request sent twice waits twice: the first reply takes the first,
	// the second the second, a third none.
	m := exchange.Matcher{Rules: exchange.Rules{Bound: 64}}
	m.Request(0, ping, exchange.Uint(5), at(0), 0)
	m.Request(0, ping, exchange.Uint(5), at(3), 10)
	reply(t, &m, 1, exchange.Uint(5), 4, 0, ping)
	reply(t, &m, 1, exchange.Uint(5), 9, 3, ping)
	reply(t, &m, 1, exchange.Uint(5), 9, -1, ping)
}

func TestBound(t *testing.T) {
	m := exchange.Matcher{Rules: exchange.Rules{Bound: 3}}
	for i := range 5 {
		dropped := m.Request(0, ping, exchange.Uint(uint64(i)), at(i), int64(i))
		if i < 3 && len(dropped) != 0 || i >= 3 && (len(dropped) != 1 || dropped[0].Off != int64(i-3) || dropped[0].Why != exchange.Forgotten) {
			t.Fatalf("request %d dropped %+v", i, dropped)
		}
		if n := len(m.Waiting(0)); n > 3 {
			t.Fatalf("%d waiting past the bound of 3", n)
		}
	}
	// Per type: another type has a bound of its own.
	m.Request(0, other, exchange.Uint(0), at(5), 5)
	if n := len(m.Waiting(0)); n != 4 {
		t.Fatalf("%d waiting, want 3 pings and 1 other", n)
	}
	reply(t, &m, 1, exchange.Uint(0), 6, -1, ping) // forgotten
	reply(t, &m, 1, exchange.Uint(1), 6, -1, ping) // forgotten
	reply(t, &m, 1, exchange.Uint(2), 6, 2, ping)
	reply(t, &m, 1, exchange.Uint(0), 6, 5, other)
	counts(t, &m, exchange.Counts{Requests: 6, Replies: 4, Matched: 2, Unmatched: 2, Forgotten: 2})
	lost(t, &m, "2 requests forgotten unanswered past the bound of 3 per direction and type")
}

func TestBoundSharedAndPerKey(t *testing.T) {
	m := exchange.Matcher{Rules: exchange.Rules{Bound: 4, Shared: true, PerKey: 2}}
	a, b := exchange.Str("A"), exchange.Str("B")
	m.Request(0, ping, a, at(0), 0)
	m.Request(0, ping, a, at(1), 1)
	// A third of A forgets A's oldest (per key), not B's.
	m.Request(0, ping, b, at(2), 2)
	if d := m.Request(0, ping, a, at(3), 3); len(d) != 1 || d[0].Off != 0 {
		t.Fatalf("third A dropped %+v, want the request at offset 0", d)
	}
	// Shared: every type counts towards 4; the fifth forgets the oldest.
	m.Request(0, status, b, at(4), 4)
	if d := m.Request(0, other, b, at(5), 5); len(d) != 1 || d[0].Off != 1 {
		t.Fatalf("fifth dropped %+v, want the request at offset 1", d)
	}
	reply(t, &m, 1, a, 9, 3, ping)
	reply(t, &m, 1, a, 9, -1, ping)
	reply(t, &m, 1, b, 9, 4, status, other) // the older of the two types
	reply(t, &m, 1, b, 9, 5, status, other)
	reply(t, &m, 1, b, 9, 2, ping)
	lost(t, &m, "2 requests forgotten unanswered past the bound of 4 per direction (2 per key)")
}

func TestTimeout(t *testing.T) {
	m := exchange.Matcher{Rules: exchange.Rules{Bound: 8, Timeout: 10 * time.Millisecond}}
	m.Request(0, ping, exchange.Uint(1), at(0), 0)
	m.Request(0, ping, exchange.Uint(2), at(5), 1)
	// Exactly the timeout is still in time.
	if d := m.Expire(at(10)); len(d) != 0 {
		t.Fatalf("expired at 10 ms: %+v", d)
	}
	d := m.Expire(at(11))
	if len(d) != 1 || d[0].Off != 0 || d[0].Why != exchange.Expired {
		t.Fatalf("expired at 11 ms: %+v, want the request at offset 0", d)
	}
	reply(t, &m, 1, exchange.Uint(1), 12, -1, ping)
	// A reply expires what waited too long before it matches.
	req, ok, dropped := m.Reply(1, exchange.Uint(2), at(16), ping)
	if ok || len(dropped) != 1 || dropped[0].Off != 1 {
		t.Fatalf("reply at 16 ms: %+v %v, dropped %+v", req, ok, dropped)
	}
	counts(t, &m, exchange.Counts{Requests: 2, Replies: 2, Unmatched: 2, Expired: 2})
	lost(t, &m, "2 requests unanswered within 10ms")
}

func TestInOrder(t *testing.T) {
	// HandControl's rules: one queue, a reply answers the oldest request
	// it can and skips those before it; a reply that answers none of them
	// leaves them waiting.
	m := exchange.Matcher{Rules: exchange.Rules{Bound: 8, Shared: true, InOrder: true}}
	m.Request(0, 4, exchange.Key{}, at(0), 0)
	m.Request(0, 5, exchange.Key{}, at(1), 24)
	m.Request(0, 6, exchange.Key{}, at(2), 48)
	if _, ok, _ := m.Reply(1, exchange.Key{}, at(3), 7); ok {
		t.Fatal("a reply of type 7 took a request")
	}
	req, ok, dropped := m.Reply(1, exchange.Key{}, at(4), 6, 5)
	if !ok || req.Off != 24 || len(dropped) != 1 || dropped[0].Off != 0 || dropped[0].Why != exchange.Skipped {
		t.Fatalf("reply: %+v %v, dropped %+v; want offset 24, skipping offset 0", req, ok, dropped)
	}
	if w := m.Waiting(0); len(w) != 1 || w[0].Off != 48 {
		t.Fatalf("waiting %+v, want the request at offset 48", w)
	}
	counts(t, &m, exchange.Counts{Requests: 3, Replies: 2, Matched: 1, Unmatched: 1, Skipped: 1})
	lost(t, &m, "1 request skipped by the reply to a later one")
}

func TestValueKey(t *testing.T) {
	// Equal values give equal keys, and only they.
	vals := []dissect.Value{
		dissect.Int(5), dissect.Uint(5), dissect.Int(-1), dissect.Float(5), dissect.Float(0),
		dissect.Float(math.Copysign(0, -1)), dissect.Float32(5), dissect.Float(math.NaN()),
		dissect.Str("5"), dissect.Bytes([]byte("5")), dissect.Bool(true), dissect.Bool(false),
		dissect.Array([]dissect.Field{{Value: dissect.Int(5)}}),
		dissect.Object([]dissect.Field{{Key: "a", Value: dissect.Int(5)}}),
		dissect.Object([]dissect.Field{{Key: "b", Value: dissect.Int(5)}}),
	}
	for i, v := range vals {
		for j, w := range vals {
			if got := exchange.ValueKey(v) == exchange.ValueKey(w); got != (i == j) || got != v.Equal(w) {
				t.Errorf("keys of %v and %v equal: %v; values equal: %v", v, w, got, v.Equal(w))
			}
		}
	}
	// Every NaN equals every other, whatever its bits.
	nan2 := dissect.Float(math.Float64frombits(0x7ff8000000000123))
	if !nan2.Equal(dissect.Float(math.NaN())) || exchange.ValueKey(nan2) != exchange.ValueKey(dissect.Float(math.NaN())) {
		t.Error("two NaNs give different keys")
	}
}

func TestPlan(t *testing.T) {
	decls := []dissect.TypeDecl{
		{Type: "get", Exchange: dissect.Exchange{Role: dissect.Request},
			Fields: []dissect.FieldDecl{{Name: "seq", Kind: dissect.KindUint, Role: dissect.RoleRequestKey}}},
		{Type: "got", Exchange: dissect.Exchange{Role: dissect.Reply, Answers: "get"},
			Fields: []dissect.FieldDecl{{Name: "seq", Kind: dissect.KindUint, Role: dissect.RoleRequestKey}}},
		{Type: "stray", Exchange: dissect.Exchange{Role: dissect.Reply, Answers: "nothing"}},
		{Type: "data"},
	}
	p := exchange.NewPlan(decls, exchange.Rules{Bound: 4})
	if n, ok := p.Request("get"); !ok || n != 0 || len(p.Answers("got")) != 1 || p.Answers("stray") != nil || p.KeyField("got") != "seq" {
		t.Fatalf("plan: get %d %v, got answers %v, stray %v, key %q", n, ok, p.Answers("got"), p.Answers("stray"), p.KeyField("got"))
	}
	m := p.Matcher()
	rec := func(typ string, seq uint64) *dissect.Record {
		r := &dissect.Record{Type: typ}
		r.Add("seq", dissect.Uint(seq))
		return r
	}
	p.Record(&m, rec("get", 1), 0, at(0), 0)
	p.Record(&m, rec("get", 2), 0, at(1), 0)
	if req, ok := p.Record(&m, rec("got", 2), 1, at(5), 0); !ok || !req.Time.Equal(at(1)) {
		t.Fatalf("got 2: %+v %v", req, ok)
	}
	if _, ok := p.Record(&m, rec("data", 1), 1, at(6), 0); ok {
		t.Fatal("data took a request")
	}
	if req, ok := p.Record(&m, rec("got", 1), 1, at(7), 0); !ok || !req.Time.Equal(at(0)) {
		t.Fatalf("got 1: %+v %v", req, ok)
	}
}
