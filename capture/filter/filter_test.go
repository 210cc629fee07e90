package filter

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// unitPackets are the frames of the hand-checked verdict table.
func unitPackets() map[string]pktbuild.Frame {
	eth := pktbuild.Encap{Type: capture.LinkEthernet}
	frag := pktbuild.IP{Src: a4("10.0.0.1"), Dst: a4("10.0.0.2"), Proto: pktbuild.ProtoTCP, ID: 3, FragOffset: 100,
		Payload: fakePorts(3883, 3883)}
	opt := pktbuild.TCPPacket(ap("10.0.0.3:80"), ap("10.0.0.4:1234"), pktbuild.TCP{Flags: pktbuild.ACK})
	opt.Options = []byte{1, 1, 1, 0}
	return map[string]pktbuild.Frame{
		"t4":   eth.Wrap(tcp4("10.0.0.1:40000", "10.0.0.2:3883", pktbuild.SYN)),
		"u4":   eth.Wrap(udp("10.0.0.2:53", "192.168.1.10:5353", "answer")),
		"i4":   eth.Wrap(pktbuild.ICMPEcho(a4("10.0.0.1"), a4("1.2.3.4"), 1, 1).Encode()),
		"t6":   eth.Wrap(pktbuild.TCPPacket(ap("[2001:db8::1]:443"), ap("[2001:db8::2]:50000"), pktbuild.TCP{Flags: pktbuild.ACK}).Encode()),
		"u6":   eth.Wrap(udp("[2001:db8::2]:53", "[fe80::1]:546", "x")),
		"arp":  eth.Ether(pktbuild.EtherTypeARP, arpBody("10.0.0.1", "10.0.0.2")),
		"frag": eth.Wrap(frag.Encode()),
		"opt":  eth.Wrap(opt.Encode()),
		"v100": pktbuild.Encap{Type: capture.LinkEthernet, VLANs: []uint16{100}}.Wrap(tcp4("10.0.0.1:40000", "10.0.0.2:3883", pktbuild.SYN)),
		"qinq": pktbuild.Encap{Type: capture.LinkEthernet, VLANs: []uint16{10, 200}}.Wrap(udp("10.0.0.2:53", "192.168.1.10:5353", "answer")),
	}
}

// verdictTable was worked out by hand from pcap-filter(7) (not by running
// the code): the packets of unitPackets each expression accepts.
var verdictTable = []struct {
	expr string
	want string // space-separated packet names
}{
	{"", "arp frag i4 opt qinq t4 t6 u4 u6 v100"},
	{"tcp", "frag opt t4 t6"}, // the protocol test alone matches every fragment
	{"udp", "u4 u6"},
	{"icmp", "i4"},
	{"ip", "frag i4 opt t4 u4"},
	{"ip6", "t6 u6"},
	{"arp", "arp"},
	{"not ip", "arp qinq t6 u6 v100"},
	{"ip6 or arp", "arp t6 u6"},
	{"icmp6", ""},
	{"host 10.0.0.1", "arp frag i4 t4"}, // ARP sender counts
	{"src host 10.0.0.2", "u4"},
	{"dst host 10.0.0.2", "arp frag t4"}, // ARP target counts
	{"ip dst host 10.0.0.2", "frag t4"},
	{"host 2001:db8::2", "t6 u6"},
	{"net 10.0.0.0/30", "arp frag i4 opt t4 u4"},
	{"net 192.168.0.0 mask 255.255.0.0", "u4"},
	{"net 2001:db8::/32", "t6 u6"},
	{"port 53", "u4 u6"},
	{"port 3883", "t4"}, // not the later fragment, not behind the VLAN tag
	{"tcp dst port 3883", "t4"},
	{"udp port 3883", ""},
	{"src port 80", "opt"}, // after 24 bytes of IPv4 header
	{"portrange 1-1024", "opt t6 u4 u6"},
	{"port 80 or 443", "opt t6"},
	{"port 80 or 443 or 3883", "opt t4 t6"},
	{"tcp or udp and host 10.0.0.1", "frag t4"}, // (tcp or udp) and host
	{"host 10.0.0.1 and (port 3883 or icmp)", "i4 t4"},
	{"not port 53 and udp", ""},
	{"vlan", "qinq v100"},
	{"vlan 100 and tcp port 3883", "v100"},
	{"vlan 10 and vlan 200 and udp port 53", "qinq"},
	{"vlan 200", ""},
	{"vlan and ip", "v100"},
}

func names(set map[string]bool) string {
	var s []string
	for k, v := range set {
		if v {
			s = append(s, k)
		}
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

func run(t *testing.T, prog []bpf.Instruction, data []byte) bool {
	t.Helper()
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatalf("VM refuses the program: %v", err)
	}
	n, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return n != 0
}

func TestVerdicts(t *testing.T) {
	pkts := unitPackets()
	for _, tc := range verdictTable {
		prog, err := Compile(tc.expr, capture.LinkEthernet, 65535)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		got := map[string]bool{}
		for name, f := range pkts {
			got[name] = run(t, prog, f.Data)
		}
		if g := names(got); g != tc.want {
			t.Errorf("%q accepts [%s], want [%s]", tc.expr, g, tc.want)
		}
	}
}

func TestReturnValues(t *testing.T) {
	prog, err := Compile("tcp", capture.LinkEthernet, 1234)
	if err != nil {
		t.Fatal(err)
	}
	pkts := unitPackets()
	vm, _ := bpf.NewVM(prog)
	if n, _ := vm.Run(pkts["t4"].Data); n != 1234 {
		t.Errorf("accept returns %d, want the snap length 1234", n)
	}
	if n, _ := vm.Run(pkts["u4"].Data); n != 0 {
		t.Errorf("reject returns %d, want 0", n)
	}
	all, err := Compile("  ", capture.LinkType(9999), 7)
	if err != nil || len(all) != 1 || all[0] != (bpf.RetConstant{Val: 7}) {
		t.Errorf("blank expression: %v, %v; want [ret #7] for any link type", all, err)
	}
}

func TestLinkTypes(t *testing.T) {
	seg := tcp4("10.0.0.1:40000", "10.0.0.2:3883", pktbuild.SYN)
	seg6 := pktbuild.TCPPacket(ap("[2001:db8::1]:40000"), ap("[2001:db8::2]:3883"), pktbuild.TCP{}).Encode()
	cases := []struct {
		lt   capture.LinkType
		ip   []byte
		expr string
		want bool
	}{
		{capture.LinkLinuxSLL, seg, "tcp dst port 3883 and src host 10.0.0.1", true},
		{capture.LinkLinuxSLL, seg, "udp", false},
		{capture.LinkLinuxSLL, seg6, "ip6 and tcp port 3883", true},
		{capture.LinkLinuxSLL2, seg, "tcp dst port 3883 and src host 10.0.0.1", true},
		{capture.LinkLinuxSLL2, seg6, "ip", false},
		{capture.LinkRaw, seg, "ip and tcp port 3883", true},
		{capture.LinkRaw, seg6, "ip6 and dst host 2001:db8::2 and port 3883", true},
		{capture.LinkRaw, seg6, "ip", false},
		{capture.LinkIPv4, seg, "tcp port 3883 and net 10.0.0.0/24", true},
		{capture.LinkIPv4, seg, "port 3884", false},
		{capture.LinkIPv6, seg6, "tcp port 3883 and net 2001:db8::/64", true},
	}
	for _, tc := range cases {
		f := pktbuild.Encap{Type: tc.lt}.Wrap(tc.ip)
		prog, err := Compile(tc.expr, tc.lt, 65535)
		if err != nil {
			t.Errorf("link %d %q: %v", tc.lt, tc.expr, err)
			continue
		}
		if got := run(t, prog, f.Data); got != tc.want {
			t.Errorf("link %d %q: %v, want %v", tc.lt, tc.expr, got, tc.want)
		}
	}
	// Tests that cannot hold on the link type fold to constants.
	if prog, err := Compile("ip", capture.LinkIPv4, 9); err != nil || len(prog) != 1 || prog[0] != (bpf.RetConstant{Val: 9}) {
		t.Errorf("ip on LinkIPv4: %v %v, want [ret #9]", prog, err)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		expr string
		lt   capture.LinkType
		want string // the whole message
	}{
		{"tcp prot 80", capture.LinkEthernet, `filter "tcp prot 80": at 5: unknown primitive "prot"`},
		{"host example.com", capture.LinkEthernet, `filter "host example.com": at 6: host names are not resolved: use an address, not "example.com"`},
		{"port http", capture.LinkEthernet, `filter "port http": at 6: port names are not resolved: use a number, not "http"`},
		{"port 80-90", capture.LinkEthernet, `filter "port 80-90": at 6: "80-90" is a range: use "portrange 80-90"`},
		{"tcp or 80", capture.LinkEthernet, `filter "tcp or 80": at 8: "80" needs a qualifier such as host, net, port or portrange`},
		{"port 70000", capture.LinkEthernet, `filter "port 70000": at 6: port number 70000 is greater than 65535`},
		{"ether host 1:2:3:4:5:6", capture.LinkEthernet, `filter "ether host 1:2:3:4:5:6": at 1: "ether" is not supported`},
		{"tcp and less 100", capture.LinkEthernet, `filter "tcp and less 100": at 9: "less" is not supported`},
		{"tcp[13] & 2 != 0", capture.LinkEthernet, `filter "tcp[13] & 2 != 0": at 4: packet-data and arithmetic expressions (such as "tcp[13] & 2 != 0") are not supported`},
		{"(tcp", capture.LinkEthernet, `filter "(tcp": at 5: expected "and", "or" or ")", not end of expression`},
		{"tcp)", capture.LinkEthernet, `filter "tcp)": at 4: unbalanced ")"`},
		{"tcp and", capture.LinkEthernet, `filter "tcp and": at 8: the expression ends where a primitive is expected`},
		{"tcp udp", capture.LinkEthernet, `filter "tcp udp": at 5: expected "and", "or" or the end, not "udp"`},
		{"net 10.1.2.3/8", capture.LinkEthernet, `filter "net 10.1.2.3/8": at 5: non-network bits set in "10.1.2.3/8"`},
		{"host 10.0.0.0/8", capture.LinkEthernet, `filter "host 10.0.0.0/8": at 6: mask syntax is for networks only: use "net 10.0.0.0/8"`},
		{"tcp host 1.2.3.4", capture.LinkEthernet, `filter "tcp host 1.2.3.4": at 10: 'tcp' modifier applied to host`},
		{"ip host ::1", capture.LinkEthernet, `filter "ip host ::1": at 9: 'ip' modifier applied to an IPv6 address`},
		{"icmp port 7", capture.LinkEthernet, `filter "icmp port 7": at 11: 'icmp' modifier applied to port: only tcp, udp and sctp have ports`},
		{"src or 1.2.3.4", capture.LinkEthernet, `filter "src or 1.2.3.4": at 8: expected "dst" after "src or"`},
		{"vlan 5000", capture.LinkEthernet, `filter "vlan 5000": at 1: VLAN ID 5000 is greater than the maximum 4095`},
		{"vlan", capture.LinkRaw, `filter "vlan": at 1: "vlan" needs Ethernet framing, not link type 101`},
		{"port 08", capture.LinkEthernet, `filter "port 08": at 6: number 08 contains non-octal digit`},
		{"host 1.2.3.256", capture.LinkEthernet, `filter "host 1.2.3.256": at 6: invalid IPv4 address "1.2.3.256"`},
		{"host fe80::1%eth0", capture.LinkEthernet, `filter "host fe80::1%eth0": at 13: unexpected character '%'`},
		{"arp", capture.LinkRaw, `filter "arp": expression rejects every packet of link type 101`},
		{"tcp", capture.LinkNull, `filter "tcp": link type 0 is not supported (Ethernet, Linux SLL/SLL2 and raw IP are)`},
		{"ip proto 300", capture.LinkEthernet, `filter "ip proto 300": at 10: protocol number 300 is greater than 255`},
	}
	for _, tc := range cases {
		_, err := Compile(tc.expr, tc.lt, 65535)
		if err == nil {
			t.Errorf("%q: no error, want %s", tc.expr, tc.want)
			continue
		}
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("%q: error %T, want *Error", tc.expr, err)
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.expr, err, tc.want)
		}
	}
	if _, err := Compile("tcp", capture.LinkEthernet, 0); err == nil {
		t.Error("snap length 0: no error")
	}
	deep := strings.Repeat("(", 300) + "tcp" + strings.Repeat(")", 300)
	if _, err := Compile(deep, capture.LinkEthernet, 65535); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("300 nested parentheses: %v", err)
	}
	nots := strings.Repeat("not ", 250) + "tcp"
	if _, err := Compile(nots, capture.LinkEthernet, 65535); err != nil {
		t.Errorf("250 negations: %v", err)
	}
	if _, err := Compile(strings.Repeat(" ", MaxExprLen+1), capture.LinkEthernet, 65535); err == nil {
		t.Error("over-long expression: no error")
	}
}

// TestImpliedPrimitives checks the tcpdump rule that a bare value repeats
// the previous qualifiers, by comparing with the spelled-out expression.
func TestImpliedPrimitives(t *testing.T) {
	pairs := [][2]string{
		{"port 80 or 443", "port 80 or port 443"},
		{"tcp port 80 or 443", "tcp port 80 or tcp port 443"},
		{"src host 10.0.0.1 or 10.0.0.2", "src host 10.0.0.1 or src host 10.0.0.2"},
		{"port 53 and not 5353", "port 53 and not port 5353"},
		{"port (80 or 443)", "port 80 or port 443"},
		{"port not 53", "not port 53"},
		{"host 10.0.0.1 and (tcp) or 10.0.0.2", "host 10.0.0.1 and tcp or host 10.0.0.2"},
		{"udp dst port 53 or 5353", "udp dst port 53 or udp dst port 5353"},
		{"net 10.0.0.0/24 or 192.168.1.0/24", "net 10.0.0.0/24 or net 192.168.1.0/24"},
	}
	for _, p := range pairs {
		a, err := Compile(p[0], capture.LinkEthernet, 65535)
		if err != nil {
			t.Errorf("%q: %v", p[0], err)
			continue
		}
		b, err := Compile(p[1], capture.LinkEthernet, 65535)
		if err != nil {
			t.Fatalf("%q: %v", p[1], err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%q and %q compile differently", p[0], p[1])
		}
	}
}

// TestLongJumps builds a program whose conditional jumps reach further
// than 255 instructions, which needs unconditional trampolines.
func TestLongJumps(t *testing.T) {
	var hosts []string
	for i := 1; i <= 60; i++ {
		hosts = append(hosts, fmt.Sprintf("10.0.1.%d", i))
	}
	expr := "host " + strings.Join(hosts, " or ")
	prog, err := Compile(expr, capture.LinkEthernet, 65535)
	if err != nil {
		t.Fatal(err)
	}
	if len(prog) < 300 {
		t.Fatalf("program of %d instructions: too short to test long jumps", len(prog))
	}
	jumps := 0
	for _, ins := range prog {
		if _, ok := ins.(bpf.Jump); ok {
			jumps++
		}
	}
	if jumps == 0 {
		t.Error("no unconditional jump in a program with jumps beyond 255")
	}
	for _, tc := range []struct {
		src  string
		want bool
	}{{"10.0.1.1", true}, {"10.0.1.30", true}, {"10.0.1.60", true}, {"10.0.1.61", false}} {
		f := pktbuild.Encap{Type: capture.LinkEthernet}.Wrap(tcp4(tc.src+":1", "192.168.0.1:2", pktbuild.ACK))
		if got := run(t, prog, f.Data); got != tc.want {
			t.Errorf("source %s: %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestTooLong(t *testing.T) {
	var ports []string
	for i := 1; i <= 400; i++ {
		ports = append(ports, fmt.Sprint(i))
	}
	_, err := Compile("tcp port "+strings.Join(ports, " or "), capture.LinkEthernet, 65535)
	if err == nil || !strings.Contains(err.Error(), "more than 4096 instructions") {
		t.Errorf("400 ports: %v, want the 4096-instruction limit", err)
	}
}

func TestAssemble(t *testing.T) {
	for _, expr := range []string{"tcp port 3883", "vlan and udp", ""} {
		prog, err := Compile(expr, capture.LinkEthernet, 65535)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := Assemble(expr, capture.LinkEthernet, 65535)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := bpf.Assemble(prog)
		if !slices.Equal(raw, want) {
			t.Errorf("%q: Assemble differs from Compile", expr)
		}
	}
	if _, err := Assemble("tcp prot", capture.LinkEthernet, 65535); err == nil {
		t.Error("Assemble of a bad expression: no error")
	}
	// Without vlan, the socket program is the file program.
	for _, expr := range []string{"tcp port 3883", "host 10.0.0.1 and not arp", "ip6"} {
		a, _ := Compile(expr, capture.LinkEthernet, 65535)
		b, _ := CompileSocket(expr, capture.LinkEthernet, 65535)
		if !slices.Equal(a, b) {
			t.Errorf("%q: socket and file programs differ", expr)
		}
	}
}

// TestSocketVLAN checks socket programs on frames as a Linux packet socket
// presents them: the outer tag either stripped into the metadata or left in
// the frame. Expected verdicts follow libpcap's documented live behaviour.
func TestSocketVLAN(t *testing.T) {
	pkts := unitPackets()
	strip := func(f pktbuild.Frame) []byte { return append(append([]byte(nil), f.Data[:12]...), f.Data[16:]...) }
	cases := []struct {
		expr    string
		data    []byte
		present bool
		tci     uint16
		want    bool
	}{
		{"vlan", strip(pkts["v100"]), true, 100, true},
		{"vlan", pkts["v100"].Data, false, 0, true},
		{"vlan", pkts["t4"].Data, false, 0, false},
		{"vlan 100", strip(pkts["v100"]), true, 0x2064, true}, // priority bits ignored
		{"vlan 100", strip(pkts["v100"]), true, 200, false},
		{"vlan 100", pkts["v100"].Data, false, 0, true},
		{"vlan 100 and tcp port 3883", strip(pkts["v100"]), true, 100, true},
		{"vlan 100 and tcp port 3883", pkts["v100"].Data, false, 0, true},
		{"vlan 100 and udp", strip(pkts["v100"]), true, 100, false},
		{"vlan 10 and vlan 200 and udp port 53", strip(pkts["qinq"]), true, 10, true},
		{"vlan 10 and vlan 200 and udp port 53", pkts["qinq"].Data, false, 0, true},
		{"vlan 200", strip(pkts["qinq"]), true, 10, false}, // the inner tag is not the first
		{"tcp port 3883", strip(pkts["v100"]), true, 100, true},
	}
	for _, tc := range cases {
		raw, err := AssembleSocket(tc.expr, capture.LinkEthernet, 65535)
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		vm, err := bpf.NewVM(withVLANMeta(raw, tc.present, tc.tci))
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		n, _ := vm.Run(tc.data)
		if (n != 0) != tc.want {
			t.Errorf("%q (tag in metadata %v, tci %#x): %v, want %v", tc.expr, tc.present, tc.tci, n != 0, tc.want)
		}
	}
}
