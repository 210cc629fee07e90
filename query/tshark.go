package query

import "strings"

// tsharkHints answer tshark's names that dissect has no key for: what to
// use instead. A name matches an entry equal to it, or one ending in "."
// that it starts with. The names dissect does take (ip.src, tcp.port,
// frame.number, tcp.stream, frame.time_epoch, ...) are keys of
// dissect.Envelope.
var tsharkHints = [...][2]string{
	{"frame.len", "use length, the record's bytes on the wire (a record is a message, not a frame)"},
	{"frame.cap_len", "use length, the record's bytes on the wire (a record is a message, not a frame)"},
	{"frame.time", "use time, the capture time (time > \"2026-01-02T03:04:05Z\"), or time_epoch and time_relative in seconds"},
	{"frame.protocols", "use proto, the record's protocol; tcp and udp are true for records carried by them"},
	{"_ws.col.Protocol", "use proto"},
	{"_ws.col.Source", "use ip.src (ipv6.src), or src (address and port)"},
	{"_ws.col.Destination", "use ip.dst (ipv6.dst), or dst (address and port)"},
	{"_ws.col.Time", "use time, time_epoch or time_relative"},
	{"_ws.col.", "the columns dissect has are info (_ws.col.Info), proto, src, dst and time"},
	{"eth.", "records are messages, not frames: select packets by their Ethernet header with a capture filter (-f 'ether host 00:11:22:33:44:55')"},
	{"vlan.", "records are messages, not frames: select packets by VLAN with a capture filter (-f 'vlan 10')"},
	{"ip.", "dissect has ip.src, ip.dst and ip.addr; for other IPv4 header fields use a capture filter (-f 'ip[8] < 5')"},
	{"ipv6.", "dissect has ipv6.src, ipv6.dst and ipv6.addr; for other IPv6 header fields use a capture filter (-f)"},
	{"tcp.", "dissect has tcp, tcp.port, tcp.srcport, tcp.dstport and tcp.stream; streams are reassembled (-z follow,tcp,ascii,N shows one), and a capture filter (-f) selects segments by their header"},
	{"udp.", "dissect has udp, udp.port, udp.srcport, udp.dstport and udp.stream"},
}

// TSharkHint returns what to use for tshark's name, or "" when name is not
// one of tshark's names that dissect answers another way.
func TSharkHint(name string) string {
	for _, h := range tsharkHints {
		if name == h[0] || strings.HasSuffix(h[0], ".") && strings.HasPrefix(name, h[0]) {
			return h[1]
		}
	}
	return ""
}
