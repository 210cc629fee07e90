// Package interleave builds captures of many interleaved streams, with
// gaps and garbage, for tests of ordering and parallel output.
package interleave

import (
	"net/netip"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

// Deltarobot builds a capture of n Deltarobot connections whose segments
// are interleaved one by one; in every fifth connection one leader segment
// is never captured (a gap) and in every seventh a run of garbage precedes
// the leader's messages (skipped bytes). Port 4000 is Deltarobot's.
func Deltarobot(n, msgs int) ([]capture.Packet, error) {
	enc := pktbuild.Encap{Type: capture.LinkEthernet}
	conns := make([][]pktbuild.Segment, n)
	for i := range n {
		c := pktbuild.NewConn(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), uint16(40000+i)),
			netip.MustParseAddrPort("10.0.0.2:4000"), uint32(1000*i), uint32(7000000+i))
		var fb, lb deltaenc.Builder
		fb.Magic()
		fb.Version(6)
		lb.Magic()
		lb.Version(6)
		for m := range msgs {
			f := float32(i*msgs + m)
			switch m % 4 {
			case 0:
				lb.ActuatorPosition(f, -f, f/3, 0.1)
			case 1:
				lb.CurrentDirection(f, 1, 2, 3)
			case 2:
				lb.Ping(uint64(i)<<32 | uint64(m))
			case 3:
				lb.Curve([][3]float32{{f, 0, -0.3}, {0, f, -0.3}})
			}
		}
		fw, _, err := fb.Finish()
		if err != nil {
			return nil, err
		}
		lw, _, err := lb.Finish()
		if err != nil {
			return nil, err
		}
		if i%7 == 3 {
			lw = append([]byte("\xff\xfegarbage that is not a message\x00\x01"), lw...)
		}
		segs := c.Handshake()
		segs = append(segs, c.Send(pktbuild.Client, fw))
		for off, k := 0, 0; off < len(lw); off, k = off+300, k+1 {
			end := min(off+300, len(lw))
			if i%5 == 2 && k == 2 {
				c.Skip(pktbuild.Server, end-off) // never captured
				continue
			}
			segs = append(segs, c.Send(pktbuild.Server, lw[off:end]), c.Ack(pktbuild.Client))
		}
		segs = append(segs, c.Fin(pktbuild.Server), c.Fin(pktbuild.Client))
		conns[i] = segs
	}
	var pkts []capture.Packet
	t0 := time.Unix(1_700_000_000, 0)
	for k := 0; ; k++ {
		added := false
		for i := range conns {
			if k < len(conns[i]) {
				pkts = append(pkts, *conns[i][k].Packet(enc, t0.Add(time.Duration(len(pkts))*time.Microsecond)))
				added = true
			}
		}
		if !added {
			return pkts, nil
		}
	}
}
