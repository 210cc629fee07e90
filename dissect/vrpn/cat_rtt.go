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

// exchangeKey is the waiting-list key of a request of type typ from sender.
func exchangeKey(sender, typ string) string { return sender + "\x00" + typ }

// exchangeRTT keeps a catalogued request or gives a catalogued reply its
// round trip (whether or not c.Decode is set, requests are kept and taken).
func (p *parser) exchangeRTT(c *dissect.Ctx, d *msgDef, sender string, named bool) {
	if !named {
		return
	}
	switch {
	case d.exchange.Role == dissect.Request:
		p.dirs[c.Dir].pings.add(exchangeKey(sender, d.name), c.Time)
	case d.exchange.Role == dissect.Reply && d.exchange.Answers != "":
		t, ok := p.dirs[c.Dir.Other()].pings.take(exchangeKey(sender, d.exchange.Answers))
		if !ok || !c.Decode {
			return
		}
		ms := float64(c.Time.Sub(t)) / float64(time.Millisecond)
		c.Rec.Add("rtt_ms", dissect.Float(ms))
		p.summary(c, func(s []byte) []byte { return appendFloat(append(s, " rtt_ms="...), ms) })
	}
}

// exchangeLatency declares the rtt_ms of a reply that names its request.
func exchangeLatency(answers string) dissect.FieldDecl {
	return dissect.FieldDecl{Name: "rtt_ms", Kind: dissect.KindFloat, Unit: "ms", Role: dissect.RoleLatency,
		Doc: "capture time of this reply minus that of the oldest unanswered " + answers + " of the same sender in the other direction (absent when none was seen)"}
}
