package output

import (
	"fmt"
	"io"
	"strings"

	"dissect/dissect/engine"
)

// writeReassembly writes the reassembly counters that point at capture
// problems; counters that are zero are left out.
func writeReassembly(w io.Writer, s *engine.Summary) {
	r := s.Reassembly
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(r.NonStream, "packets not TCP/UDP (ARP, ICMP, ...)")
	add(r.Malformed, "malformed packets")
	add(r.Fragments, "IP fragments (not reassembled)")
	add(r.TruncatedUDP, "UDP datagrams cut by the snap length")
	add(r.TCPOutOfOrder, "TCP segments out of order")
	add(r.TCPRetransmitted, "TCP bytes retransmitted")
	add(r.TCPGapBytes, "TCP bytes lost before capture")
	add(r.TCPBeforeStart, "TCP bytes from before a stream's first captured byte (ignored)")
	add(r.TCPAfterClose, "TCP bytes after FIN/RST (ignored)")
	if len(parts) > 0 {
		fmt.Fprintf(w, "capture:  %s\n", strings.Join(parts, "; "))
	}
}
