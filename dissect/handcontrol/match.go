package handcontrol

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

const (
	// replyTimeout is how long a request may wait for its reply: the C#
	// master's 10 s (protocols.md §1.5, §1.10 #5).
	replyTimeout = 10 * time.Second
	// maxPending bounds the requests kept in flight per stream.
	maxPending = 8
)

// pending is a request waiting for its reply.
type pending struct {
	code byte
	t    time.Time
	off  int64
}

// queue holds the requests in flight of one stream, oldest first. The
// protocol allows one at a time; a host that sends more is warned about,
// and their replies are matched in order.
type queue struct {
	q [maxPending]pending
	n int
}

func (q *queue) remove(i int) {
	copy(q.q[i:q.n], q.q[i+1:q.n])
	q.n--
}

// expire drops the requests older than replyTimeout at time t, with a
// warning on r.
func (q *queue) expire(r *dissect.Record, t time.Time) {
	for i := 0; i < q.n; {
		if t.Sub(q.q[i].t) > replyTimeout {
			r.Warnf("request %s at offset %d got no response within %v", typeName(q.q[i].code), q.q[i].off, replyTimeout)
			q.remove(i)
			continue
		}
		i++
	}
}

// request records a request sent at time t and offset off, with a warning
// on r when another is still in flight.
func (q *queue) request(r *dissect.Record, code byte, t time.Time, off int64) {
	if q.n > 0 {
		last := q.q[q.n-1]
		r.Warnf("request sent while %s at offset %d is still in flight (the protocol allows one request at a time)", typeName(last.code), last.off)
	}
	if q.n == maxPending {
		r.Warnf("more than %d requests in flight: %s at offset %d is no longer matched", maxPending, typeName(q.q[0].code), q.q[0].off)
		q.remove(0)
	}
	q.q[q.n] = pending{code: code, t: t, off: off}
	q.n++
}

// isResponse reports whether the device sends code as a reply.
func isResponse(code byte) bool {
	switch code {
	case codeACK, codeERR, codeGetSettings, codeGetGestures, codeGetTelemetry, codeGetMioPatterns:
		return true
	}
	return false
}

// answers reports whether a reply with code resp can answer request req.
// ERR answers anything; ACK answers the commands that return no data; data
// replies reuse the request's code, except that the device answers
// GetMioPatterns (16) with type 13 (protocols.md §1.5).
func answers(resp, req byte) bool {
	switch resp {
	case codeERR:
		return true
	case codeACK:
		switch req {
		case codeSetSettings, codeSaveGesture, codeDeleteGesture, codePerformById, codePerformRaw,
			codeSetPositions, codeUpdateTimeSync, codeStartTelemetry, codeStopTelemetry, codeSetMioPatterns:
			return true
		}
		return false
	case codeGetTelemetry:
		return req == codeGetTelemetry || req == codeGetMioPatterns
	}
	return resp == req
}

// response matches a reply with code to the oldest request in flight it
// can answer; requests before that one are dropped as unanswered. Warnings
// go to r.
func (q *queue) response(r *dissect.Record, code byte) (pending, bool) {
	if q.n == 0 {
		r.Warn("response with no request in flight")
		return pending{}, false
	}
	for i := 0; i < q.n; i++ {
		if !answers(code, q.q[i].code) {
			continue
		}
		for k := 0; k < i; k++ {
			r.Warnf("request %s at offset %d got no response", typeName(q.q[k].code), q.q[k].off)
		}
		m := q.q[i]
		copy(q.q[:], q.q[i+1:q.n])
		q.n -= i + 1
		return m, true
	}
	r.Warnf("response %s does not answer the request in flight (%s at offset %d)", typeName(code), typeName(q.q[0].code), q.q[0].off)
	return pending{}, false
}
