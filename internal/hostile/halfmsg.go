package main

import (
	"encoding/binary"
	"net/netip"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// The half-received messages of issue 21:
//
//	go run ./internal/hostile halfmsg 400 > half.pcap        # N VRPN connections, each holding all but 8 bytes of a message
//	go run ./internal/hostile halfmsg 1500 both > half2.pcap # the same in both directions
//
// Each connection: handshake, both VRPN cookies, then the client (and with
// "both" the server) announces a framed message of 1 MiB − 64 bytes (the
// length field; a multiple of 8, so no padding) and sends all of it but
// the last 8 bytes, in segments of halfSeg bytes. No message ever ends, so
// a decoder that holds every unfinished message holds N (or 2N) × ~1 MiB.
// The body is zeros: the file compresses about 1000 to 1 (gzip -1).

const (
	halfLen = 1<<20 - 64 // the length field of each message
	halfSeg = 32 << 10   // payload bytes per TCP segment
)

// halfServer is a VRPN server (its TCP port).
var halfServer = netip.MustParseAddrPort("192.0.2.1:3883")

var halfCookie = []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")

// halfmsg writes n connections to the VRPN port, one after the other;
// both: each direction holds a half message.
func (g *gen) halfmsg(n int, both bool) {
	hdr := make([]byte, 24) // length, tv_sec, tv_usec, sender, type, sequence
	binary.BigEndian.PutUint32(hdr, halfLen)
	binary.BigEndian.PutUint32(hdr[4:], 1_700_000_000)
	msg := append(hdr, make([]byte, halfLen-len(hdr)-8)...)
	for i := range n {
		c := client(i)
		g.tcp(c, halfServer, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
		g.tcp(halfServer, c, pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
		cs, ss := uint32(1), uint32(1)
		cs = g.halfSend(c, halfServer, cs, ss, halfCookie)
		ss = g.halfSend(halfServer, c, ss, cs, halfCookie)
		cs = g.halfSend(c, halfServer, cs, ss, msg)
		if both {
			g.halfSend(halfServer, c, ss, cs, msg)
		}
	}
}

// halfSend sends data from src to dst from sequence number seq, in
// segments of at most halfSeg bytes, and returns the next sequence number.
func (g *gen) halfSend(src, dst netip.AddrPort, seq, ack uint32, data []byte) uint32 {
	for len(data) > 0 && g.err == nil {
		k := min(len(data), halfSeg)
		g.tcp(src, dst, pktbuild.TCP{Seq: seq, Ack: ack, Flags: pktbuild.ACK | pktbuild.PSH, Payload: data[:k]})
		seq += uint32(k)
		data = data[k:]
	}
	return seq
}
