package vrpn

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Round trips of vrpn_Base ping_message and pong_message: a pong answers
// the oldest unanswered ping of the same sender name in the other
// direction of its stream (see the package doc, "Round trips").

// Bounds of the pings kept per direction of a stream.
const (
	// maxPingSenders is how many senders may have pings waiting; a ping of
	// one more sender forgets the sender that began waiting first.
	maxPingSenders = 64
	// maxPings is how many pings of one sender may wait; a newer one
	// forgets the oldest. vrpn_print_devices opens 5 remote objects per
	// device, each with its own ping, sent together.
	maxPings = 8
)

// pending holds the capture times of the pings that one direction sent and
// no pong answered yet, per sender name, senders in the order they began
// waiting (a sender whose pings are all answered leaves).
type pending struct {
	senders []pingQueue
}

// pingQueue is a ring of the waiting pings of one sender, oldest first.
type pingQueue struct {
	sender  string
	times   [maxPings]time.Time
	head, n int
}

// add records a ping of sender at t.
func (q *pending) add(sender string, t time.Time) {
	i := q.find(sender)
	if i < 0 {
		if len(q.senders) >= maxPingSenders {
			q.remove(0)
		}
		q.senders = append(q.senders, pingQueue{sender: sender})
		i = len(q.senders) - 1
	}
	s := &q.senders[i]
	if s.n == maxPings {
		s.head = (s.head + 1) % maxPings
		s.n--
	}
	s.times[(s.head+s.n)%maxPings] = t
	s.n++
}

// take removes the oldest waiting ping of sender and returns its time.
func (q *pending) take(sender string) (time.Time, bool) {
	i := q.find(sender)
	if i < 0 {
		return time.Time{}, false
	}
	s := &q.senders[i]
	t := s.times[s.head]
	s.head = (s.head + 1) % maxPings
	if s.n--; s.n == 0 {
		q.remove(i)
	}
	return t, true
}

func (q *pending) find(sender string) int {
	for i := range q.senders {
		if q.senders[i].sender == sender {
			return i
		}
	}
	return -1
}

func (q *pending) remove(i int) {
	q.senders = append(q.senders[:i], q.senders[i+1:]...)
}

// pingPong finishes a ping or pong record: it keeps the ping, or gives the
// pong its round trip, rtt_ms (whether or not c.Decode is set, the pings
// are kept and taken). Both have an empty body; another body is written
// as hex with a warning.
func (p *parser) pingPong(c *dissect.Ctx, k kind, sender string, named bool, body []byte) {
	r := c.Rec
	var rtt time.Duration
	matched := false
	if named {
		if k == kindPing {
			p.dirs[c.Dir].pings.add(sender, c.Time)
		} else if t, ok := p.dirs[c.Dir.Other()].pings.take(sender); ok {
			rtt, matched = c.Time.Sub(t), true
		}
	}
	if len(body) > 0 {
		r.Warnf("unexpected %d-byte body for %s", len(body), r.Type)
		p.raw(c, body, r.Type, -1)
	} else {
		p.summary(c, func(s []byte) []byte {
			if k == kindPing {
				return append(s, " ping"...)
			}
			return append(s, " pong"...)
		})
	}
	if matched && c.Decode {
		ms := float64(rtt) / float64(time.Millisecond)
		r.Add("rtt_ms", dissect.Float(ms))
		p.summary(c, func(s []byte) []byte { return appendFloat(append(s, " rtt_ms="...), ms) })
	}
}
