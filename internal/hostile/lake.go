package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// The capture of issue 21 that names as many types as it likes: -o
// parquet makes a partition per type name a "*" declaration matches and
// -o mcap a topic per name (docs/performance-12-23.md, "Bounded memory").
//
//	go run ./internal/hostile wirenames 82000 8 > names.pcap

var vrpnServer = netip.MustParseAddrPort("192.0.2.1:3883")

// wireIDs is how many type ids the sender reuses: each is described again
// with the next name before each message, so the receiver's name table
// stays small whatever n is and every name is used by one message.
const wireIDs = 16

// wirenames: one VRPN connection whose client describes n distinct type
// names of about ln bytes (at least the digits that make them distinct)
// and sends one 8-byte message of each. Past their number, the names
// hold the bytes "-", "/" (which a Hive partition escapes to %2F) and "é"
// (two bytes in UTF-8) in turn: a name of more than 84 bytes makes an
// escaped partition name longer than 255 bytes.
func (g *gen) wirenames(n, ln int) {
	v := g.vrpnOpen(3)
	for i := range n {
		id := int32(i % wireIDs)
		name := wireName(i, ln)
		body := binary.BigEndian.AppendUint32(nil, uint32(len(name)+1))
		body = append(append(body, name...), 0)
		v.buf = vrpnMessage(v.buf, uint32(i), id, -2, uint32(2*i), body) // type_description: sender field = the id
		v.buf = vrpnMessage(v.buf, uint32(i), 0, id, uint32(2*i+1), []byte{1, 2, 3, 4, 5, 6, 7, 8})
		v.send(false)
	}
	v.send(true)
}

// A vrpnConn is a VRPN client's connection to vrpnServer: its bytes not
// sent yet, and the sequence number of the next.
type vrpnConn struct {
	g   *gen
	c   netip.AddrPort
	seq uint32
	buf []byte
}

// vrpnOpen opens the connection of client i, its version banner in buf.
func (g *gen) vrpnOpen(i int) *vrpnConn {
	v := &vrpnConn{g: g, c: client(i), seq: 1}
	g.tcp(v.c, vrpnServer, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
	g.tcp(vrpnServer, v.c, pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
	v.buf = append(v.buf, "vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"...)
	return v
}

// send sends buf in segments of 1400 bytes, and with force the rest.
func (v *vrpnConn) send(force bool) {
	for len(v.buf) >= 1400 || force && len(v.buf) > 0 {
		k := min(len(v.buf), 1400)
		v.g.tcp(v.c, vrpnServer, pktbuild.TCP{Seq: v.seq, Ack: 1, Flags: pktbuild.ACK | pktbuild.PSH, Payload: v.buf[:k]})
		v.seq += uint32(k)
		v.buf = v.buf[k:]
	}
	v.buf = append([]byte(nil), v.buf...)
}

// wireName is the i-th name: "w" and i's digits, then "-", "/" and "é"
// in turn up to at least ln bytes.
func wireName(i, ln int) string {
	b := fmt.Appendf(nil, "w%d", i)
	for k := 0; len(b) < ln; k++ {
		b = append(b, [3]string{"-", "/", "é"}[k%3]...)
	}
	return string(b)
}

// vrpnMessage appends a framed VRPN message: six big-endian words (length
// = 24 + body, seconds, microseconds, sender, type, sequence), the body
// and its padding to a multiple of 8.
func vrpnMessage(b []byte, sec uint32, sender, typ int32, seq uint32, body []byte) []byte {
	for _, v := range []uint32{uint32(24 + len(body)), 1_700_000_000 + sec/1000, sec % 1000 * 1000, uint32(sender), uint32(typ), seq} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	b = append(b, body...)
	for pad := len(body); pad%8 != 0; pad++ {
		b = append(b, 0)
	}
	return b
}

// widelake: one VRPN connection whose client describes types type names
// and then sends n messages of size random bytes, each type in turn: as
// many lake tables busy at once as a part's row groups can fill, each row
// all but incompressible (the lake writer's memory with every table it
// keeps open full; docs/performance-35-channels.md, "Many tables busy at once").
func (g *gen) widelake(types, n, size int) {
	v := g.vrpnOpen(4)
	for i := range types {
		name := fmt.Sprintf("wide%d", i)
		body := binary.BigEndian.AppendUint32(nil, uint32(len(name)+1))
		body = append(append(body, name...), 0)
		v.buf = vrpnMessage(v.buf, 0, int32(i), -2, uint32(i), body) // type_description: sender field = the id
	}
	rng := rand.New(rand.NewPCG(uint64(types), uint64(size)))
	body := make([]byte, size)
	for i := range n {
		for k := range body {
			body[k] = byte(rng.Uint32())
		}
		v.buf = vrpnMessage(v.buf, uint32(i/100), 0, int32(i%types), uint32(types+i), body)
		v.send(false)
	}
	v.send(true)
}
