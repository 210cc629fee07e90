package query

import (
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestTSharkNames: tshark's names select as tshark's filters do on the
// endpoints (either end for ip.addr and tcp.port; != true when no end
// equals); addresses unquoted and in any spelling of the same address.
func TestTSharkNames(t *testing.T) {
	a := &dissect.Record{Proto: "p", Type: "x", Transport: dissect.TCP, Src: "10.0.0.1:4000", Dst: "10.0.0.2:50514", Frame: 7, Stream: 1, TransportStream: 0}
	b := &dissect.Record{Proto: "p", Type: "y", Transport: dissect.UDP, Src: "[2001:db8::1]:3883", Dst: "[2001:db8::2]:3883", Frame: 9, Stream: 0, TransportStream: 0}
	c := &dissect.Record{Proto: "p", Type: "z", Transport: dissect.Serial, Src: "host", Dst: "/dev/ttyUSB0", Frame: 12, Stream: 2}
	for _, tc := range []struct {
		expr string
		want string // the types that match
	}{
		{"tcp", "x"}, {"udp", "y"}, {"!tcp && !udp", "z"},
		{"tcp.port == 4000", "x"}, {"tcp.port == 50514", "x"}, {"tcp.srcport == 50514", ""}, {"tcp.dstport == 50514", "x"},
		{"udp.port == 3883", "y"}, {"tcp.port == 3883", ""}, {"tcp.port != 4000", "yz"},
		{"ip.src == 10.0.0.1", "x"}, {"ip.src == \"10.0.0.1\"", "x"}, {"ip.dst == 10.0.0.1", ""}, {"ip.addr == 10.0.0.2", "x"},
		{"ip.addr != 10.0.0.2", "yz"}, {"ipv6.addr == \"2001:DB8:0::2\"", "y"}, {"ipv6.src == 2001:db8::1", "y"},
		{"ip.addr", "x"}, {"ipv6.addr", "y"}, {"tcp.port >= 4000 && tcp.port < 5000", "x"},
		{"frame.number == 9", "y"}, {"frame.number >= 7 && frame.number < 12", "xy"}, {"frame == 12", "z"},
		{"tcp.stream == 0", "x"}, {"udp.stream == 0", "y"}, {"tcp.stream", "x"}, {"udp.stream != 0", "xz"}, {"stream == 0", "y"},
	} {
		f, err := Compile(tc.expr, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		got := ""
		for _, r := range []*dissect.Record{a, b, c} {
			if f.Match(r) {
				got += r.Type
			}
		}
		if got != tc.want {
			t.Errorf("%s matched %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// TestTSharkHints: a tshark name dissect answers another way is an error
// that says what to use; a bad address names itself.
func TestTSharkHints(t *testing.T) {
	known := func(proto, field string) bool { return proto == "vrpn" }
	for _, c := range []struct{ expr, want string }{
		{"eth.src == 1", "capture filter"},
		{"frame.len > 10", "use length"},
		{"tcp.flags.syn == 1", "tcp.port"},
		{"_ws.col.Protocol == \"vrpn\"", "use proto"},
		{"ip.src == 10.0.0.300", "not an IP address"},
		{"udp.length == 3", "udp.port"},
		{"tcp.analysis.flags", "tcp.stream"},
	} {
		_, err := Compile(c.expr, known)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.expr, err, c.want)
		}
	}
}
