package vrpn

import (
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
)

// Round trips of vrpn_Base ping_message and pong_message and of the
// catalogue's request/reply pairs (a msgDef's exchange), matched by
// dissect/exchange from the declarations: a request waits in its
// direction under its sender name; a reply takes the oldest waiting
// request of the type it answers with the same sender name in the other
// direction, and gets rtt_ms (see the package doc, "Round trips"). A reply
// of a request that was not seen (or that an earlier reply took: one
// Request_Unit_To_Sensor is answered by one Unit_To_Sensor per sensor) has
// none, and senders never described take no part.
//
// One reply type answers two requests: the auxiliary logger's
// Logging_response answers Logging_request and Logging_status_request
// alike, in the order they came. Only Logging_request is declared a
// request (-z rtt files a reply's round trip under the one request its
// declaration names); the status request waits all the same, and a
// response that takes it gets no rtt_ms.

// exchangeRules bounds the requests kept per direction of a stream: 8
// waiting requests per sender name and type (a newer one forgets the
// oldest: vrpn_print_devices opens 5 remote objects per device, each with
// its own ping, sent together) and 512 in all (the oldest is forgotten).
func exchangeRules() exchange.Rules {
	return exchange.Rules{Bound: 512, Shared: true, PerKey: 8}
}

// exchangePlan is the run's plan of VRPN's exchanges.
func exchangePlan() *exchange.Plan {
	p := exchange.NewPlan(types(), exchangeRules())
	p.AlsoAnswers(nameAuxLogReport, nameAuxLogStatus)
	return p
}

// roundTrip keeps a request of type typ or gives a reply its round trip,
// when sender is named (whether or not c.Decode is set, requests are kept
// and taken). ok: the reply took the request its declaration names.
func (p *parser) roundTrip(c *dissect.Ctx, typ, sender string, named bool) (rtt time.Duration, ok bool) {
	if !named {
		return 0, false
	}
	plan := p.proto.ex
	var answers []int32
	switch typ {
	case namePing:
		p.ex.Request(c.Dir, p.proto.ping, exchange.Str(sender), c.Time, c.Offset)
		return 0, false
	case namePong:
		answers = p.proto.pong
	default:
		if n, isReq := plan.Request(typ); isReq {
			p.ex.Request(c.Dir, n, exchange.Str(sender), c.Time, c.Offset)
			return 0, false
		}
		answers = plan.Answers(typ)
	}
	if answers == nil {
		return 0, false
	}
	req, ok, _ := p.ex.Reply(c.Dir, exchange.Str(sender), c.Time, answers...)
	if !ok || req.Type != answers[0] {
		return 0, false // none, or an undeclared request (Logging_status_request): not timed
	}
	return c.Time.Sub(req.Time), true
}

// addRTT gives a reply its rtt_ms, in its fields and its summary.
func (p *parser) addRTT(c *dissect.Ctx, rtt time.Duration) {
	ms := exchange.Millis(rtt)
	c.Rec.Add("rtt_ms", dissect.Float(ms))
	p.summary(c, func(s []byte) []byte { return appendFloat(append(s, " rtt_ms="...), ms) })
}

// pingPong finishes a ping or pong record: it keeps the ping, or gives the
// pong its round trip, rtt_ms. Both have an empty body; another body is
// written as hex with a warning.
func (p *parser) pingPong(c *dissect.Ctx, k kind, sender string, named bool, body []byte) {
	r := c.Rec
	rtt, matched := p.roundTrip(c, r.Type, sender, named)
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
		p.addRTT(c, rtt)
	}
}

// exchangeRTT keeps a catalogued request or gives a catalogued reply its
// round trip.
func (p *parser) exchangeRTT(c *dissect.Ctx, d *msgDef, sender string, named bool) {
	if rtt, ok := p.roundTrip(c, d.name, sender, named); ok && c.Decode {
		p.addRTT(c, rtt)
	}
}

// exchangeLatency declares the rtt_ms of a reply that names its request.
func exchangeLatency(answers string) dissect.FieldDecl {
	return dissect.FieldDecl{Name: "rtt_ms", Kind: dissect.KindFloat, Unit: "ms", Role: dissect.RoleLatency,
		Doc: "capture time of this reply minus that of the oldest unanswered " + answers + " of the same sender in the other direction (absent when none was seen)"}
}
