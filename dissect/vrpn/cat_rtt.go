package vrpn

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Round trips of the catalogue's request/reply pairs (a msgDef's
// exchange), kept as ping and pong are (rtt.go): a request's capture time
// waits in its direction under its sender name and type; a reply whose
// exchange names the request it answers takes the oldest waiting request
// of that type and the same sender name in the other direction, and gets
// rtt_ms. A reply of a request that was not seen (or that an earlier reply
// took: one Request_Unit_To_Sensor is answered by one Unit_To_Sensor per
// sensor) has none, and senders never described take no part. The waiting
// requests share the pings' bounds.
//
// One reply type answers two requests: the auxiliary logger's
// Logging_response answers Logging_request and Logging_status_request
// alike, in the order they came. Only Logging_request is declared a
// request (-z rtt files a reply's round trip under the one request its
// declaration names); the status request waits all the same, and a
// response that takes it gets no rtt_ms. Requests of the two kinds that
// share a capture time wait 1 ns apart, in the order they came.

// alsoAnswered is the request that reply answers besides its exchange's
// Answers, undeclared as a request ("" for none).
func alsoAnswered(reply string) string {
	if reply == nameAuxLogReport {
		return nameAuxLogStatus
	}
	return ""
}

// exchangeKey is the waiting-list key of a request of type typ from sender.
func exchangeKey(sender, typ string) string { return sender + "\x00" + typ }

// exchangeRTT keeps a catalogued request or gives a catalogued reply its
// round trip (whether or not c.Decode is set, requests are kept and taken).
func (p *parser) exchangeRTT(c *dissect.Ctx, d *msgDef, sender string, named bool) {
	if !named {
		return
	}
	switch {
	case d.exchange.Role == dissect.Request || d.name == nameAuxLogStatus:
		q := &p.dirs[c.Dir].pings
		t := c.Time
		if d.name == nameAuxLogRequest || d.name == nameAuxLogStatus {
			// Keep the two kinds' times strictly in arrival order (messages
			// of one segment share a capture time), so that a response
			// takes the one that came first.
			for _, k := range [2]string{nameAuxLogRequest, nameAuxLogStatus} {
				if last, ok := q.last(exchangeKey(sender, k)); ok && !t.After(last) {
					t = last.Add(time.Nanosecond)
				}
			}
		}
		q.add(exchangeKey(sender, d.name), t)
	case d.exchange.Role == dissect.Reply && d.exchange.Answers != "":
		q := &p.dirs[c.Dir.Other()].pings
		key := exchangeKey(sender, d.exchange.Answers)
		if also := alsoAnswered(d.name); also != "" {
			k := exchangeKey(sender, also)
			t1, ok1 := q.peek(key)
			t2, ok2 := q.peek(k)
			if ok2 && (!ok1 || t2.Before(t1)) {
				q.take(k) // it answers the undeclared request: not timed
				return
			}
		}
		t, ok := q.take(key)
		if !ok || !c.Decode {
			return
		}
		ms := float64(c.Time.Sub(t)) / float64(time.Millisecond)
		c.Rec.Add("rtt_ms", dissect.Float(ms))
		p.summary(c, func(s []byte) []byte { return appendFloat(append(s, " rtt_ms="...), ms) })
	}
}

// peek returns the time of the oldest waiting entry of key, leaving it.
func (q *pending) peek(key string) (time.Time, bool) {
	i := q.find(key)
	if i < 0 {
		return time.Time{}, false
	}
	return q.senders[i].times[q.senders[i].head], true
}

// last returns the time of the newest waiting entry of key.
func (q *pending) last(key string) (time.Time, bool) {
	i := q.find(key)
	if i < 0 {
		return time.Time{}, false
	}
	s := &q.senders[i]
	return s.times[(s.head+s.n-1)%maxPings], true
}

// exchangeLatency declares the rtt_ms of a reply that names its request.
func exchangeLatency(answers string) dissect.FieldDecl {
	return dissect.FieldDecl{Name: "rtt_ms", Kind: dissect.KindFloat, Unit: "ms", Role: dissect.RoleLatency,
		Doc: "capture time of this reply minus that of the oldest unanswered " + answers + " of the same sender in the other direction (absent when none was seen)"}
}
