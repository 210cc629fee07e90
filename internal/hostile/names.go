package main

import (
	"encoding/binary"
	"fmt"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// The wire-named types and VRPN name tables of issue 21:
//
//	go run ./internal/hostile typenames 400 4096 > typenames.pcap  # C connections, one after the other, each naming N types
//	go run ./internal/hostile vrpnnames 100 4096 > vrpnnames.pcap  # C connections kept open, each naming N senders and N types
//
// An optional third number is the names' length in bytes (default 200; a
// VRPN name table keeps 255 at most). Every name is distinct across the
// capture. Each connection: handshake, both cookies, then the client
// describes its names and sends one 8-byte message of each type (from
// sender i for type i); typenames then closes the connection (FIN both
// ways), vrpnnames leaves every connection open to the end of the capture.

// namesDefaultLen is the names' length when none is given.
const namesDefaultLen = 200

// typenames: c connections in turn, each describing n type names and
// sending one message of each, then closed. dissect's per-type counters
// see c × n distinct types.
func (g *gen) typenames(c, n, ln int) {
	for i := range c {
		g.namesConn(i, n, ln, false, true)
	}
}

// vrpnnames: c connections, each describing n senders and n types and
// sending one message of each type; none is closed, so every name table
// is held at once.
func (g *gen) vrpnnames(c, n, ln int) {
	for i := range c {
		g.namesConn(i, n, ln, true, false)
	}
}

// namesConn writes connection i: n type names (and n sender names when
// senders), one message per type, and a close when closing.
func (g *gen) namesConn(i, n, ln int, senders, closing bool) {
	cl := client(i)
	g.tcp(cl, vrpnServer, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
	g.tcp(vrpnServer, cl, pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
	cs := uint32(1)
	ss := g.halfSend(vrpnServer, cl, 1, cs, halfCookie)
	buf := append([]byte(nil), halfCookie...)
	flush := func(force bool) {
		for len(buf) >= 1400 || force && len(buf) > 0 {
			k := min(len(buf), 1400)
			g.tcp(cl, vrpnServer, pktbuild.TCP{Seq: cs, Ack: ss, Flags: pktbuild.ACK | pktbuild.PSH, Payload: buf[:k]})
			cs += uint32(k)
			buf = buf[k:]
		}
		buf = append([]byte(nil), buf...)
	}
	seq := uint32(0)
	describe := func(kind int32, id int, name string) {
		body := binary.BigEndian.AppendUint32(nil, uint32(len(name)+1))
		body = append(append(body, name...), 0)
		buf = vrpnMessage(buf, seq, int32(id), kind, seq, body) // the header's sender field is the id
		seq++
		flush(false)
	}
	for id := range n {
		if senders {
			describe(-1, id, namesName(i, id, 's', ln))
		}
		describe(-2, id, namesName(i, id, 't', ln))
	}
	for id := range n {
		buf = vrpnMessage(buf, seq, int32(id), int32(id), seq, []byte{1, 2, 3, 4, 5, 6, 7, 8})
		seq++
		flush(false)
	}
	flush(true)
	if closing {
		g.tcp(cl, vrpnServer, pktbuild.TCP{Seq: cs, Ack: ss, Flags: pktbuild.FIN | pktbuild.ACK})
		g.tcp(vrpnServer, cl, pktbuild.TCP{Seq: ss, Ack: cs + 1, Flags: pktbuild.FIN | pktbuild.ACK})
	}
}

// namesName is the name of id on connection conn (kind 's': sender, 't':
// type), ln bytes long (at least its digits): distinct across a capture.
func namesName(conn, id int, kind byte, ln int) string {
	b := fmt.Appendf(nil, "%c%d.%d ", kind, conn, id)
	for len(b) < ln {
		b = append(b, 'a'+byte(len(b)%26))
	}
	return string(b)
}
