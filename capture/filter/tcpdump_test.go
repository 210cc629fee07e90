package filter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/bpf"

	"github.com/dissect-tools/dissect/capture"
)

// These tests compare the compiler with libpcap's, through tcpdump:
//
//   - TestAgainstTcpdump: for every expression of compareExprs and every
//     packet of the corpus (written to a pcap file per link type), the
//     verdict of tcpdump -r FILE EXPR must equal the verdict of our program
//     run in golang.org/x/net/bpf's VM. tcpdump is the reference.
//   - TestAgainstLibpcapPrograms: libpcap's own programs (tcpdump -ddd) and
//     ours must agree on many mutated and truncated variants of the corpus.
//   - TestSocketAgainstLibpcap: for a live Linux capture (tcpdump -ddd -i
//     lo, which uses the kernel's VLAN metadata) against CompileSocket, on
//     frames with the outer tag in the frame and with it stripped into the
//     metadata.
//
// They skip when tcpdump is not installed (or, for the last one, cannot
// open the loopback interface).

// compareExprs covers every primitive, the qualifier combinations,
// negation, precedence, parentheses, implied primitives and vlan.
var compareExprs = []string{
	"",
	"tcp", "udp", "icmp", "ip", "ip6", "arp", "rarp", "sctp", "icmp6",
	"host 10.0.0.1", "src host 10.0.0.1", "dst host 10.0.0.2",
	"host 2001:db8::1", "src host 2001:db8::2", "dst host 2001:db8::2",
	"ip host 1.2.3.4", "arp host 10.0.0.2", "rarp src host 10.0.0.3", "ip6 host ::ffff:1.2.3.4",
	"ip6 dst host ::1", "host 10.0.0.1 or 10.0.0.2", "src or dst host 10.0.0.1",
	"src and dst net 10.0.0.0/8", "src 10.0.0.1", "dst 2001:db8::2", "host 10.1",
	"net 10.0.0.0/8", "src net 192.168.0.0/16", "dst net 10.0.0.0 mask 255.255.255.0",
	"net 192.168", "net 10", "net 10.0.0.0", "net 2001:db8::/32", "dst net 2001:db8:1::/48",
	"net 0.0.0.0/0", "net ::/0", "ip net 10.0.0.0/31", "arp net 192.168.1.0/24",
	"port 80", "src port 3883", "dst port 53", "tcp port 80", "udp port 53",
	"udp dst port 53", "tcp src port 443", "sctp port 5000", "sctp dst port 80",
	"port 80 or 443", "port (80 or 443)", "port not 80", "tcp port 3883 or 53",
	"tcp src or dst port 3883", "src and dst port 3883", "port 0x50", "port 0",
	"portrange 1000-2000", "src portrange 1-1023", "dst portrange 3883-3884",
	"tcp portrange 40000-65535", "portrange 53", "udp portrange 2001-1500",
	"proto 17", "ip proto 6", "ip6 proto 17", "ip proto 6 or 17", "ip6 proto 44", "proto 47",
	"not tcp", "! udp", "not not ip6", "tcp or udp", "tcp and not port 80",
	"not (tcp or udp)", "ip and tcp or ip6 and udp", "tcp or udp and host 10.0.0.1",
	"host 10.0.0.1 and (port 53 or port 3883)", "(tcp or icmp) and net 10.0.0.0/8",
	"host 10.0.0.1 and not port 22", "port 80 and not 443", "host 10.0.0.1 and not 10.0.0.2",
	"port 80 or (443)", "port 53 and (5353 or 33333)", "tcp && port 80 || icmp", "!(ip6)",
	"ip and ip6", "arp and tcp",
	"vlan", "vlan 100", "vlan 10", "vlan 200 and udp", "vlan and tcp port 80", "vlan 10 and vlan 200",
	"vlan and vlan", "vlan 200 and vlan 10", "not vlan", "vlan or tcp", "tcp or vlan",
	"vlan 100 and host 10.0.0.1", "vlan and ip6", "vlan and arp", "(vlan and ip) or ip",
	"vlan 0", "vlan 4095", "vlan 7 and tcp", "vlan 100 and port 80", "vlan and not vlan",
	"vlan (100) and src port 53", "udp or vlan 200 and udp",
}

// compareErrors are expressions tcpdump refuses; so must we.
var compareErrors = []string{
	"tcp or 80", "1.2.3.4", "vlan 100 and 200", "TCP", "tcp prot 80", "port 70000",
	"vlan 5000", "net 10.1.2.3/8", "host 10.0.0.0/8", "net 10.0.0.0/33", "ip6 host 1.2.3.4",
	"tcp host 1.2.3.4", "ip host ::1", "icmp port 80", "ip port 80", "port 1.2.3.4",
	"net ::1/64", "host ::/64", "port 08", "host 1.2.3.256", "portrange 80-70000",
	"src or 1.2.3.4", "port (80 or tcp)", "ip6 net 2001:db8::1/129", "port 4294967296",
	"not", "tcp and", "(tcp", "tcp)", "tcp proto 6", "src proto 6", "net 10/8",
	"src 10.0.0.0/8", "port 80 and ::1", "tcp net ::/0", "ip6 net 10.0.0.0/8", "port 80-90",
	"arp host ::1", "icmp6 host ::1", "tcp src 80", "proto tcp", "portrange 80-",
	"host fe80::1%eth0", "net 10 mask 255.0.0.0", "ip6 net ::1 mask ::1", "vlan and 100",
}

func tcpdumpPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Skip("tcpdump is not installed: skipping the comparison with libpcap's compiler (apt-get install tcpdump)")
	}
	return p
}

// t0 is the timestamp of packet 0; packet i is written at t0 + i seconds so
// that tcpdump's output identifies it.
var t0 = time.Unix(1_000_000, 0).UTC()

func writePcap(t *testing.T, path string, lt capture.LinkType, samples []sample) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewPcapWriter(f, lt, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		p := s.frame.Packet(t0.Add(time.Duration(i) * time.Second))
		if p.LinkType != lt {
			t.Fatalf("sample %q has link type %d in a file of %d", s.name, p.LinkType, lt)
		}
		if err := w.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

var errRejectsAll = errors.New("expression rejects all packets")

// runTcpdump filters file with expr and returns the accepted packets'
// indexes. An expression libpcap optimizes to "reject" is errRejectsAll.
func runTcpdump(tcpdump, file, expr string, n int) ([]bool, error) {
	cmd := exec.Command(tcpdump, "-r", file, "-w", "-", expr)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "expression rejects all packets") {
			return make([]bool, n), errRejectsAll
		}
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	src, err := capture.NewReader(&stdout, "tcpdump output")
	if err != nil {
		return nil, err
	}
	got := make([]bool, n)
	for {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		i := int(p.Time.Sub(t0) / time.Second)
		if i < 0 || i >= n {
			return nil, fmt.Errorf("tcpdump returned a packet at %v, not in the file", p.Time)
		}
		got[i] = true
	}
	return got, nil
}

// ourVerdicts runs Compile(expr) over the samples in the x/net VM. A
// "rejects every packet" compile error counts as rejecting all.
func ourVerdicts(expr string, lt capture.LinkType, samples []sample) ([]bool, error) {
	prog, err := Compile(expr, lt, 262144)
	if err != nil {
		if strings.Contains(err.Error(), "rejects every packet") {
			return make([]bool, len(samples)), nil
		}
		return nil, err
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		return nil, fmt.Errorf("VM refuses the program: %v", err)
	}
	out := make([]bool, len(samples))
	for i, s := range samples {
		n, err := vm.Run(s.frame.Data)
		if err != nil {
			return nil, err
		}
		out[i] = n != 0
	}
	return out, nil
}

type linkCase struct {
	name    string
	lt      capture.LinkType
	samples []sample
}

func comparisonLinks() []linkCase {
	return []linkCase{
		{"ethernet", capture.LinkEthernet, ethernetCorpus()},
		{"sll", capture.LinkLinuxSLL, linkCorpus(capture.LinkLinuxSLL)},
		{"sll2", capture.LinkLinuxSLL2, linkCorpus(capture.LinkLinuxSLL2)},
		{"raw", capture.LinkRaw, linkCorpus(capture.LinkRaw)},
		{"ipv4", capture.LinkIPv4, linkCorpus(capture.LinkIPv4)},
		{"ipv6", capture.LinkIPv6, linkCorpus(capture.LinkIPv6)},
	}
}

// parallel runs f(i) for i in [0, n) on a few goroutines (tcpdump runs
// spend most of their time waiting).
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func TestAgainstTcpdump(t *testing.T) {
	tcpdump := tcpdumpPath(t)
	dir := t.TempDir()
	links := comparisonLinks()
	files := make([]string, len(links))
	for i, l := range links {
		files[i] = filepath.Join(dir, l.name+".pcap")
		writePcap(t, files[i], l.lt, l.samples)
	}

	type job struct {
		link int
		expr string
		bad  bool // from compareErrors
	}
	var jobs []job
	for li := range links {
		for _, e := range compareExprs {
			jobs = append(jobs, job{li, e, false})
		}
	}
	for _, e := range compareErrors {
		jobs = append(jobs, job{0, e, true})
	}
	type result struct {
		verdicts []bool
		err      error
	}
	results := make([]result, len(jobs))
	parallel(len(jobs), func(i int) {
		j := jobs[i]
		v, err := runTcpdump(tcpdump, files[j.link], j.expr, len(links[j.link].samples))
		results[i] = result{v, err}
	})

	compared, exprsRun, bothRefused := 0, 0, 0
	for i, j := range jobs {
		l := links[j.link]
		ref := results[i]
		ours, err := ourVerdicts(j.expr, l.lt, l.samples)
		if ref.err != nil && ref.err != errRejectsAll {
			if err == nil {
				t.Errorf("%s %q: tcpdump refuses it (%v) but it compiles", l.name, j.expr, ref.err)
			} else {
				bothRefused++
			}
			continue
		}
		if j.bad {
			t.Errorf("%q is in compareErrors but tcpdump accepts it", j.expr)
			continue
		}
		if err != nil {
			t.Errorf("%s %q: tcpdump accepts it, we give %v", l.name, j.expr, err)
			continue
		}
		exprsRun++
		for k, s := range l.samples {
			compared++
			if ours[k] != ref.verdicts[k] {
				t.Errorf("%s %q on %q: tcpdump %v, ours %v", l.name, j.expr, s.name, ref.verdicts[k], ours[k])
			}
		}
	}
	var sizes []string
	for _, l := range links {
		sizes = append(sizes, fmt.Sprintf("%s %d", l.name, len(l.samples)))
	}
	t.Logf("compared %d verdicts: %d expression×link-type pairs, packets per link type: %s; %d expressions refused by both",
		compared, exprsRun, strings.Join(sizes, ", "), bothRefused)
}

// libpcapProgram returns the program tcpdump -ddd prints for expr (args
// select the link: -r FILE or -i IFACE).
func libpcapProgram(tcpdump string, expr string, args ...string) ([]bpf.RawInstruction, error) {
	cmd := exec.Command(tcpdump, append(append([]string{"-ddd"}, args...), expr)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "expression rejects all packets") {
			return nil, errRejectsAll
		}
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	n, err := strconv.Atoi(lines[0])
	if err != nil || n != len(lines)-1 {
		return nil, fmt.Errorf("unexpected tcpdump -ddd output %q", stdout.String())
	}
	prog := make([]bpf.RawInstruction, n)
	for i, l := range lines[1:] {
		var op, jt, jf, k uint64
		if _, err := fmt.Sscanf(l, "%d %d %d %d", &op, &jt, &jf, &k); err != nil {
			return nil, fmt.Errorf("line %q: %v", l, err)
		}
		prog[i] = bpf.RawInstruction{Op: uint16(op), Jt: uint8(jt), Jf: uint8(jf), K: uint32(k)}
	}
	return prog, nil
}

// variant is a test packet: data, and for a truncated packet the whole
// frame it was cut from.
type variant struct {
	data []byte
	full []byte // nil when data is not truncated
}

// mutate returns variants of b: random byte changes biased towards the
// header fields filters read, and truncations of b and of the changed
// frames (every length up to 70 bytes for b itself).
func mutate(rng *rand.Rand, b []byte, count int) []variant {
	var out []variant
	for n := 0; n < len(b) && n <= 70; n++ {
		out = append(out, variant{data: b[:n], full: b})
	}
	interesting := []byte{0x00, 0x01, 0x06, 0x11, 0x2c, 0x3a, 0x84, 0x08, 0x86, 0xdd, 0x81, 0x88, 0xa8, 0x91,
		0x45, 0x46, 0x4f, 0x60, 0x50, 0x35, 0x0f, 0x1f, 0x20, 0xff, 0x0a, 0x64, 0xc8}
	for range count {
		if len(b) == 0 {
			break
		}
		c := append([]byte(nil), b...)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(min(len(c), 80))
			if rng.IntN(2) == 0 {
				c[i] = interesting[rng.IntN(len(interesting))]
			} else {
				c[i] = byte(rng.Uint32())
			}
		}
		out = append(out, variant{data: c})
		if rng.IntN(3) == 0 {
			out = append(out, variant{data: c[:rng.IntN(len(c))], full: c})
		}
	}
	return out
}

func TestAgainstLibpcapPrograms(t *testing.T) {
	tcpdump := tcpdumpPath(t)
	dir := t.TempDir()
	links := comparisonLinks()
	links = []linkCase{links[0], links[3]} // Ethernet and raw IP
	rng := rand.New(rand.NewPCG(1, 2))
	packets := make([][]variant, len(links))
	for li, l := range links {
		writePcap(t, filepath.Join(dir, l.name+".pcap"), l.lt, l.samples[:1])
		for _, s := range l.samples {
			packets[li] = append(packets[li], mutate(rng, s.frame.Data, 40)...)
		}
	}
	type job struct {
		link int
		expr string
	}
	var jobs []job
	for li := range links {
		for _, e := range compareExprs {
			jobs = append(jobs, job{li, e})
		}
	}
	progs := make([][]bpf.RawInstruction, len(jobs))
	errs := make([]error, len(jobs))
	parallel(len(jobs), func(i int) {
		progs[i], errs[i] = libpcapProgram(tcpdump, jobs[i].expr, "-r", filepath.Join(dir, links[jobs[i].link].name+".pcap"))
	})
	compared, progsRun, truncOrder := 0, 0, 0
	for i, j := range jobs {
		l := links[j.link]
		ours, err := Compile(j.expr, l.lt, 262144)
		if errs[i] != nil {
			if errs[i] != errRejectsAll && err == nil {
				t.Errorf("%s %q: tcpdump refuses it (%v) but it compiles", l.name, j.expr, errs[i])
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", l.name, j.expr, err)
			continue
		}
		ref, err := bpf.NewVM(disassemble(progs[i]))
		if err != nil {
			t.Fatalf("%s %q: libpcap's program in the VM: %v", l.name, j.expr, err)
		}
		vm, err := bpf.NewVM(ours)
		if err != nil {
			t.Fatalf("%s %q: our program in the VM: %v", l.name, j.expr, err)
		}
		progsRun++
		bad := 0
		for _, p := range packets[j.link] {
			a, _ := ref.Run(p.data)
			b, _ := vm.Run(p.data)
			compared++
			if (a != 0) == (b != 0) {
				continue
			}
			// libpcap's optimizer merges and reorders loads, so on a
			// packet cut short inside the headers it may accept before
			// reaching a load past the end that our program makes
			// first. That is the only difference allowed: libpcap
			// accepts the cut packet, we reject it, and we accept the
			// whole frame (so our rejection came from reading past
			// the cut).
			if p.full != nil && a != 0 {
				if whole, _ := vm.Run(p.full); whole != 0 {
					truncOrder++
					continue
				}
			}
			if bad++; bad <= 3 {
				t.Errorf("%s %q on % x: libpcap %v, ours %v", l.name, j.expr, p.data, a != 0, b != 0)
			}
		}
	}
	t.Logf("compared %d verdicts: %d programs × %d (Ethernet) / %d (raw) mutated and truncated packets; %d differ only by libpcap's load order on truncated packets",
		compared, progsRun, len(packets[0]), len(packets[1]), truncOrder)
}

func disassemble(raw []bpf.RawInstruction) []bpf.Instruction {
	out := make([]bpf.Instruction, len(raw))
	for i, r := range raw {
		out[i] = r.Disassemble()
	}
	return out
}

// withVLANMeta replaces the kernel's VLAN ancillary loads (ld
// [SKF_AD_OFF+SKF_AD_VLAN_TAG_PRESENT] and [...+SKF_AD_VLAN_TAG], of any
// width) by constants, so that the x/net VM can run a socket program for a
// packet with that metadata.
func withVLANMeta(raw []bpf.RawInstruction, present bool, tci uint16) []bpf.Instruction {
	const skfAdOff = 0xfffff000
	out := make([]bpf.Instruction, len(raw))
	for i, r := range raw {
		if r.Op&0x07 == 0x00 && r.Op&0xe0 == 0x20 && r.K >= skfAdOff { // BPF_LD|BPF_ABS ancillary
			var v uint32
			switch r.K - skfAdOff {
			case uint32(bpf.ExtVLANTagPresent):
				if present {
					v = 1
				}
			case uint32(bpf.ExtVLANTag):
				v = uint32(tci)
			default:
				panic(fmt.Sprintf("unexpected ancillary load %#x", r.K))
			}
			out[i] = bpf.LoadConstant{Dst: bpf.RegA, Val: v}
			continue
		}
		out[i] = r.Disassemble()
	}
	return out
}

// socketView is a frame as a Linux packet socket's filter sees it: with
// the outer 802.1Q/802.1ad tag moved into the metadata when strip is set.
type socketView struct {
	data    []byte
	present bool
	tci     uint16
}

func socketViews(b []byte) []socketView {
	views := []socketView{{data: b}}
	if len(b) >= 18 {
		tpid := uint16(b[12])<<8 | uint16(b[13])
		if tpid == 0x8100 || tpid == 0x88a8 {
			s := append(append([]byte(nil), b[:12]...), b[16:]...)
			views = append(views, socketView{data: s, present: true, tci: uint16(b[14])<<8 | uint16(b[15])})
		}
	}
	return views
}

func TestSocketAgainstLibpcap(t *testing.T) {
	tcpdump := tcpdumpPath(t)
	if _, err := libpcapProgram(tcpdump, "vlan", "-i", "lo"); err != nil {
		t.Skipf("tcpdump cannot compile for the loopback interface (needs CAP_NET_RAW): %v", err)
	}
	var exprs []string
	for _, e := range compareExprs {
		if strings.Contains(e, "vlan") || e == "tcp port 80" || e == "host 10.0.0.1" {
			exprs = append(exprs, e)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var views []socketView
	for _, s := range ethernetCorpus() {
		for _, m := range mutate(rng, s.frame.Data, 10) {
			views = append(views, socketViews(m.data)...)
		}
		views = append(views, socketViews(s.frame.Data)...)
	}
	progs := make([][]bpf.RawInstruction, len(exprs))
	errs := make([]error, len(exprs))
	parallel(len(exprs), func(i int) { progs[i], errs[i] = libpcapProgram(tcpdump, exprs[i], "-i", "lo") })
	compared := 0
	for i, e := range exprs {
		if errs[i] != nil {
			t.Fatalf("%q: %v", e, errs[i])
		}
		ours, err := AssembleSocket(e, capture.LinkEthernet, 262144)
		if err != nil {
			t.Fatalf("%q: %v", e, err)
		}
		bad := 0
		for _, v := range views {
			ref, err := bpf.NewVM(withVLANMeta(progs[i], v.present, v.tci))
			if err != nil {
				t.Fatalf("%q: libpcap's program: %v", e, err)
			}
			vm, err := bpf.NewVM(withVLANMeta(ours, v.present, v.tci))
			if err != nil {
				t.Fatalf("%q: our program: %v", e, err)
			}
			a, _ := ref.Run(v.data)
			b, _ := vm.Run(v.data)
			compared++
			if (a != 0) != (b != 0) {
				if bad++; bad <= 3 {
					t.Errorf("%q on % x (tag in metadata %v, tci %#x): libpcap %v, ours %v", e, v.data, v.present, v.tci, a != 0, b != 0)
				}
			}
		}
	}
	t.Logf("compared %d verdicts: %d expressions × %d socket views", compared, len(exprs), len(views))
}
