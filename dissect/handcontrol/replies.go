package handcontrol

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
)

// Requests and their replies, matched by dissect/exchange: the host sends
// requests (their code is the request type), the device answers. The
// protocol allows one request at a time; a host that sends more is warned
// about, and their replies are matched in order: a reply takes the oldest
// request in flight it can answer (answers), and the requests before it
// are dropped as unanswered.
func exchangeRules() exchange.Rules {
	return exchange.Rules{
		// the C# master's 10 s (protocols.md §1.5, §1.10 #5)
		Timeout: 10 * time.Second,
		// requests kept in flight per stream
		Bound: 8, Shared: true,
		InOrder: true,
	}
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

// warnDropped warns on r about each request the matcher gave up on.
func warnDropped(r *dissect.Record, dropped []exchange.Entry, rules exchange.Rules) {
	for _, e := range dropped {
		switch e.Why {
		case exchange.Expired:
			r.Warnf("request %s at offset %d got no response within %v", typeName(byte(e.Type)), e.Off, rules.Timeout)
		case exchange.Forgotten:
			r.Warnf("more than %d requests in flight: %s at offset %d is no longer matched", rules.Bound, typeName(byte(e.Type)), e.Off)
		case exchange.Skipped:
			r.Warnf("request %s at offset %d got no response", typeName(byte(e.Type)), e.Off)
		}
	}
}

// request notes a request sent by the host, with a warning on r when
// another is still in flight.
func (p *parser) request(c *dissect.Ctx, code byte) {
	if w := p.ex.Waiting(c.Dir); len(w) > 0 {
		last := w[len(w)-1]
		c.Rec.Warnf("request sent while %s at offset %d is still in flight (the protocol allows one request at a time)", typeName(byte(last.Type)), last.Off)
	}
	warnDropped(c.Rec, p.ex.Request(c.Dir, int32(code), exchange.Key{}, c.Time, c.Offset), p.ex.Rules)
}

// response matches a reply with code to the oldest request in flight it
// can answer. Warnings go to c.Rec.
func (p *parser) response(c *dissect.Ctx, code byte) (exchange.Entry, bool) {
	r := c.Rec
	w := p.ex.Waiting(c.Dir.Other())
	if len(w) == 0 {
		r.Warn("response with no request in flight")
		return exchange.Entry{}, false
	}
	first := w[0]
	p.ans = p.ans[:0]
	for req := range byte(numCodes) {
		if answers(code, req) {
			p.ans = append(p.ans, int32(req))
		}
	}
	req, ok, dropped := p.ex.Reply(c.Dir, exchange.Key{}, c.Time, p.ans...)
	warnDropped(r, dropped, p.ex.Rules)
	if !ok {
		r.Warnf("response %s does not answer the request in flight (%s at offset %d)", typeName(code), typeName(byte(first.Type)), first.Off)
	}
	return req, ok
}
