// Package exchange matches replies to the requests they answer, for every
// protocol: one matcher, driven by what a protocol declares of its
// exchanges (the request type a reply answers, the request key, how many
// requests may wait and for how long).
//
// A request waits in its direction. A reply in the other direction takes
// the oldest waiting request of a type it answers whose key equals the
// reply's (an unkeyed request is answered only by an unkeyed reply); the
// round trip is the reply's capture time minus the request's. Order is
// arrival order, whatever the capture times say. What the matcher gives
// up on is handed back and counted, never silently lost:
//   - Forgotten: a request past a bound (Rules.Bound, Rules.PerKey);
//     the oldest is forgotten.
//   - Expired: a request that waited longer than Rules.Timeout.
//   - Skipped: under Rules.InOrder, the requests before the one a reply
//     answers.
//
// Memory is bounded by the rules whatever the input; in steady state no
// call allocates (a direction's list grows to its high-water mark, then
// is reused).
package exchange

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Rules are what a protocol declares of its exchanges.
type Rules struct {
	// Bound is how many requests of one type may wait in one direction
	// (of every type together, when Shared); past it the oldest is
	// forgotten. 0 or less: 1.
	Bound int
	// Shared makes Bound count every request type of the direction
	// together.
	Shared bool
	// PerKey, when positive, is how many requests of one type and key may
	// wait in one direction; past it the oldest of them is forgotten.
	PerKey int
	// Timeout, when positive, is how long a request may wait: one that
	// waited longer is dropped as expired.
	Timeout time.Duration
	// InOrder says replies come in the order of their requests: a reply
	// skips (drops) the requests of its direction that came before the
	// one it answers.
	InOrder bool
}

// Key identifies a request among the waiting requests of its type: the
// value of its request-key field. The zero Key is "no key".
type Key struct {
	kind dissect.Kind // 0: none; otherwise the value's kind + 1
	n    uint64
	s    string
}

// Uint is the key of an unsigned integer (a ping's id).
func Uint(n uint64) Key { return Key{kind: dissect.KindUint + 1, n: n} }

// Str is the key of a string (a sender's name).
func Str(s string) Key { return Key{kind: dissect.KindString + 1, s: s} }

// Keyed reports whether k is a key (not the zero Key).
func (k Key) Keyed() bool { return k.kind != 0 }

// ValueKey is the key of a field's value: two values give equal keys
// exactly when [dissect.Value.Equal] holds. Bytes, arrays and objects are
// copied (the value may alias a stream's buffer); scalars are not.
func ValueKey(v dissect.Value) Key {
	k := Key{kind: v.Kind() + 1}
	switch v.Kind() {
	case dissect.KindFloat, dissect.KindFloat32:
		f := v.Float()
		if math.IsNaN(f) {
			f = math.NaN()
		}
		k.n = math.Float64bits(f)
	case dissect.KindString:
		k.s = v.Str()
	case dissect.KindBytes:
		k.s = strings.Clone(v.Str())
	case dissect.KindArray, dissect.KindObject:
		k.s = string(appendItems(nil, v.Items()))
	case dissect.KindBool:
		if v.Bool() {
			k.n = 1
		}
	case dissect.KindTime:
		k.n = uint64(v.Time().UnixNano())
	default:
		k.n = v.Uint()
	}
	return k
}

// appendItems writes an array's or object's items so that two equal ones
// (and only they) write the same bytes: each item's key and value, each
// length-prefixed.
func appendItems(b []byte, items []dissect.Field) []byte {
	b = appendLen(b, len(items))
	for _, f := range items {
		k := ValueKey(f.Value)
		b = appendLen(b, len(f.Key))
		b = append(b, f.Key...)
		b = append(b, byte(k.kind))
		for i := range 8 {
			b = append(b, byte(k.n>>(8*i)))
		}
		b = appendLen(b, len(k.s))
		b = append(b, k.s...)
	}
	return b
}

func appendLen(b []byte, n int) []byte {
	return append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// Entry is a waiting request: its type (the caller's number for it), key,
// capture time and stream offset. On an entry handed back as dropped, Why
// says why.
type Entry struct {
	Type int32
	Key  Key
	Time time.Time
	Off  int64
	Why  Why
}

// Why a request stopped waiting without a reply.
type Why uint8

// Reasons a request is dropped.
const (
	Waiting   Why = iota // not dropped
	Forgotten            // past a bound (Rules.Bound, Rules.PerKey)
	Expired              // waited longer than Rules.Timeout
	Skipped              // a later request was answered first (Rules.InOrder)
)

// Counts says what became of the requests and replies a matcher saw.
type Counts struct {
	Requests, Replies uint64
	Matched           uint64 // replies that took a request
	Unmatched         uint64 // replies that found none
	Forgotten         uint64
	Expired           uint64
	Skipped           uint64
}

// Matcher matches the replies of one stream to its requests. Its zero
// value with Rules set is ready to use.
type Matcher struct {
	Rules   Rules
	waiting [2][]Entry // per direction of the request, oldest first
	dropped []Entry    // what the last call dropped
	counts  Counts
}

// Counts returns what the matcher has seen so far.
func (m *Matcher) Counts() Counts { return m.counts }

// Waiting returns the requests waiting in direction dir, oldest first
// (valid until the next call).
func (m *Matcher) Waiting(dir dissect.Dir) []Entry { return m.waiting[dir&1] }

// Request notes a request of type typ with key sent in direction dir at
// time t and stream offset off. It returns the requests it dropped, in
// the order they were dropped (expired, then forgotten; valid until the
// next call).
func (m *Matcher) Request(dir dissect.Dir, typ int32, key Key, t time.Time, off int64) []Entry {
	m.dropped = m.dropped[:0]
	if m.Rules.Timeout > 0 {
		m.expire(t)
	}
	m.counts.Requests++
	q := &m.waiting[dir&1]
	// One pass: how many requests share each bound, and the oldest of each.
	nType, firstType, nKey, firstKey := 0, 0, 0, 0
	for i := range *q {
		e := &(*q)[i]
		if e.Type != typ {
			if m.Rules.Shared {
				if nType == 0 {
					firstType = i
				}
				nType++
			}
			continue
		}
		if nType == 0 {
			firstType = i
		}
		nType++
		if e.Key == key {
			if nKey == 0 {
				firstKey = i
			}
			nKey++
		}
	}
	if m.Rules.PerKey > 0 && nKey >= m.Rules.PerKey {
		m.drop(q, firstKey, Forgotten)
		// the dropped request was of typ: firstType <= firstKey
		if nType--; firstKey == firstType {
			firstType = m.oldest(*q, typ) // the next of the bound's group
		}
	}
	if nType >= max(m.Rules.Bound, 1) {
		m.drop(q, firstType, Forgotten)
	}
	*q = append(*q, Entry{Type: typ, Key: key, Time: t, Off: off})
	return m.dropped
}

// Reply matches a reply sent in direction dir at time t with key to the
// oldest request waiting in the other direction whose type is one of
// answers and whose key equals key, and removes that request. ok is false
// when none waits. dropped is what the call dropped: expired requests,
// and under Rules.InOrder the requests skipped (valid until the next
// call).
func (m *Matcher) Reply(dir dissect.Dir, key Key, t time.Time, answers ...int32) (req Entry, ok bool, dropped []Entry) {
	m.dropped = m.dropped[:0]
	if m.Rules.Timeout > 0 {
		m.expire(t)
	}
	m.counts.Replies++
	q := &m.waiting[(dir^1)&1]
	for i := range *q {
		e := &(*q)[i]
		if e.Key != key || !has(answers, e.Type) {
			continue
		}
		req = *e
		if m.Rules.InOrder {
			for k := 0; k < i; k++ {
				m.drop(q, 0, Skipped)
			}
			i = 0
		}
		m.remove(q, i)
		m.counts.Matched++
		return req, true, m.dropped
	}
	m.counts.Unmatched++
	return Entry{}, false, m.dropped
}

// Expire drops the requests that waited longer than Rules.Timeout at time
// t and returns them (valid until the next call). The matcher expires
// requests on every Request and Reply; a protocol that reports expiry on
// every message calls Expire first.
func (m *Matcher) Expire(t time.Time) []Entry {
	m.dropped = m.dropped[:0]
	m.expire(t)
	return m.dropped
}

// Forget drops every waiting request without counting it (the stream has
// ended and the caller has reported them).
func (m *Matcher) Forget() {
	m.waiting[0], m.waiting[1] = m.waiting[0][:0], m.waiting[1][:0]
}

func (m *Matcher) expire(t time.Time) {
	if m.Rules.Timeout <= 0 {
		return
	}
	for d := range m.waiting {
		q := &m.waiting[d]
		for i := 0; i < len(*q); {
			if t.Sub((*q)[i].Time) > m.Rules.Timeout {
				m.drop(q, i, Expired)
				continue
			}
			i++
		}
	}
}

// oldest returns the index of the oldest request in q that counts
// towards the bound of typ (len(q) when none).
func (m *Matcher) oldest(q []Entry, typ int32) int {
	for i := range q {
		if m.Rules.Shared || q[i].Type == typ {
			return i
		}
	}
	return len(q)
}

func (m *Matcher) drop(q *[]Entry, i int, why Why) {
	e := (*q)[i]
	e.Why = why
	m.dropped = append(m.dropped, e)
	switch why {
	case Forgotten:
		m.counts.Forgotten++
	case Expired:
		m.counts.Expired++
	case Skipped:
		m.counts.Skipped++
	}
	m.remove(q, i)
}

func (m *Matcher) remove(q *[]Entry, i int) {
	last := len(*q) - 1
	if i < last {
		copy((*q)[i:], (*q)[i+1:])
	}
	(*q)[last].Key.s = "" // the list no longer holds the key's string
	*q = (*q)[:last]
}

func has(types []int32, t int32) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

// Lost says in one line how many requests the matcher forgot past its
// bounds, and how many expired or were skipped ("" when none): the note a
// protocol gives at a stream's end when it does not warn of each.
func (m *Matcher) Lost() string {
	c := m.counts
	if c.Forgotten+c.Expired+c.Skipped == 0 {
		return ""
	}
	var parts []string
	if c.Forgotten > 0 {
		parts = append(parts, requests(c.Forgotten)+" forgotten unanswered past the bound of "+m.bounds())
	}
	if c.Expired > 0 {
		parts = append(parts, requests(c.Expired)+" unanswered within "+m.Rules.Timeout.String())
	}
	if c.Skipped > 0 {
		parts = append(parts, requests(c.Skipped)+" skipped by the reply to a later one")
	}
	return strings.Join(parts, ", ")
}

func requests(n uint64) string {
	if n == 1 {
		return "1 request"
	}
	return strconv.FormatUint(n, 10) + " requests"
}

// NoteLost notes at a stream's end what m lost (Lost), if anything, as
// "PROTO: stream N: ...".
func NoteLost(c *dissect.Ctx, proto string, m *Matcher) {
	if s := m.Lost(); s != "" {
		id := 0
		if c.Stream != nil {
			id = c.Stream.ID
		}
		c.Note("%s: stream %d: %s", proto, id, s)
	}
}

// bounds names the bounds of the rules: "64 per direction and type".
func (m *Matcher) bounds() string {
	s := strconv.Itoa(max(m.Rules.Bound, 1)) + " per direction"
	if !m.Rules.Shared {
		s += " and type"
	}
	if m.Rules.PerKey > 0 {
		s += " (" + strconv.Itoa(m.Rules.PerKey) + " per key)"
	}
	return s
}
