package pipeline

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/reassembly"
)

// problems names the reassembly counters that point at capture problems,
// for the summary; zero counters are left out.
func problems(r *reassembly.Stats) []dissect.Count {
	var out []dissect.Count
	add := func(n int64, what string) {
		if n > 0 {
			out = append(out, dissect.Count{What: what, N: n})
		}
	}
	add(r.Malformed, "malformed packets")
	add(r.TSOSegments, "TSO segments (IPv4 total length 0, captured on the sending host: read to the captured length)")
	add(r.FragmentsReassembled, "IP datagrams reassembled from fragments")
	add(r.FragmentsIncomplete, "IP datagrams whose fragments never all arrived (gaps where their stream is known)")
	add(r.FragmentOverlaps, "IP datagrams discarded for overlapping fragments (gaps where their stream is known)")
	add(r.FragmentBytesLost, "IP payload bytes of them not delivered to any stream")
	add(r.FragmentConflicts, "IP datagrams whose overlapping fragments had different bytes (duplicates: first copy kept; else discarded)")
	add(r.TruncatedUDP, "UDP datagrams cut by the snap length")
	add(r.TCPOutOfOrder, "TCP segments out of order")
	add(r.TCPRetransmitted, "TCP bytes retransmitted")
	add(r.TCPGapBytes, "TCP bytes missing (gap records)")
	add(r.TCPTailGapBytes, "of them after a direction's last captured byte (known from later sequence or ACK numbers)")
	add(r.TCPBeforeStart, "TCP bytes from before a stream's first captured byte (ignored)")
	add(r.TCPAfterClose, "TCP bytes after FIN/RST (ignored)")
	add(r.TCPConflicts, "TCP retransmissions whose bytes differed from the first copy (kept; warned on the next record)")
	add(r.TCPResetsIgnored, "TCP resets outside the window (ignored, RFC 5961; the connection goes on)")
	add(r.Evicted, "streams ended early to keep memory bounded (too many open at once)")
	add(r.Expired, "streams ended after being idle")
	add(r.DroppedPackets, "packets whose payload dissect dropped (gap records)")
	for _, o := range r.Other {
		add(o.Packets, "packets of "+o.What+" (not TCP/UDP, not decoded)")
	}
	return out
}
