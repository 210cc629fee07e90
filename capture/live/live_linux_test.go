package live

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dissect-tools/dissect/capture"
)

// openLoopback opens lo with cfg, or skips the test when that is not
// possible here (not root, no AF_PACKET).
func openLoopback(t testing.TB, cfg Config) *Source {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW); CI runs this as root")
	}
	lo := loopbackName(t)
	s, err := Open(lo, cfg)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("AF_PACKET unavailable: %v", err)
	}
	if err != nil {
		t.Fatalf("Open(%s): %v", lo, err)
	}
	t.Cleanup(func() { s.Close() })
	if cfg.Method != MethodAuto && s.Method() != cfg.Method {
		t.Fatalf("Open with %v reads with %v", cfg.Method, s.Method())
	}
	return s
}

// methods are the ways of reading packets that the live tests run with.
var methods = []Method{MethodRing, MethodSocket}

// forMethods runs f as one subtest per method.
func forMethods(t *testing.T, f func(t *testing.T, m Method)) {
	for _, m := range methods {
		t.Run(m.String(), func(t *testing.T) { f(t, m) })
	}
}

func loopbackName(t testing.TB) string {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, ni := range ifs {
		if ni.Flags&net.FlagLoopback != 0 && ni.Flags&net.FlagUp != 0 {
			return ni.Name
		}
	}
	t.Skip("no loopback interface that is up")
	return ""
}

// udpPair returns a UDP socket bound to a free loopback port and a socket
// connected to it.
func udpPair(t testing.TB) (*net.UDPConn, *net.UDPConn) {
	t.Helper()
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rx.Close(); tx.Close() })
	return rx, tx
}

// ethUDPPayload returns the UDP payload of an Ethernet/IPv4/UDP frame,
// parsed here independently of the reassembly package.
func ethUDPPayload(t *testing.T, f []byte) (dport uint16, payload []byte) {
	t.Helper()
	if len(f) < 14+20+8 || binary.BigEndian.Uint16(f[12:]) != 0x0800 {
		t.Fatalf("not an Ethernet IPv4 frame: % x", f[:min(len(f), 40)])
	}
	ip := f[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[9] != 17 {
		t.Fatalf("IP protocol %d, want UDP", ip[9])
	}
	udp := ip[ihl:]
	return binary.BigEndian.Uint16(udp[2:]), udp[8:binary.BigEndian.Uint16(udp[4:])]
}

func TestLoopbackUDPWithFilter(t *testing.T) { forMethods(t, testLoopbackUDPWithFilter) }

func testLoopbackUDPWithFilter(t *testing.T, m Method) {
	rx, tx := udpPair(t)
	port := rx.LocalAddr().(*net.UDPAddr).Port
	// A second flow that the filter must keep out.
	rx2, tx2 := udpPair(t)
	_ = rx2
	s := openLoopback(t, Config{Filter: fmt.Sprintf("udp port %d", port), Timeout: 2 * time.Second, Method: m})
	if s.LinkType() != capture.LinkEthernet {
		t.Fatalf("loopback link type %d, want Ethernet", s.LinkType())
	}
	before := time.Now()
	const n = 5
	for i := range n {
		if _, err := tx2.Write([]byte("other flow")); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Write(fmt.Appendf(nil, "datagram %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		p, err := s.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		dport, payload := ethUDPPayload(t, p.Data)
		if int(dport) != port {
			t.Fatalf("packet %d: to port %d, the filter lets only %d through", i, dport, port)
		}
		if want := fmt.Sprintf("datagram %d", i); string(payload) != want {
			t.Fatalf("packet %d: payload %q, want %q (each datagram exactly once, in order)", i, payload, want)
		}
		if m == MethodSocket && (!s.ctl.hasTime || !s.ctl.hasAux) {
			t.Errorf("packet %d: kernel timestamp %v, auxdata %v; want both", i, s.ctl.hasTime, s.ctl.hasAux)
		}
		if p.Direction != capture.DirInbound {
			t.Errorf("packet %d: direction %d, want inbound (loopback)", i, p.Direction)
		}
		if !bytes.Equal(p.Data[:12], make([]byte, 12)) {
			t.Errorf("loopback MACs % x, want zeros", p.Data[:12])
		}
		if p.Length != len(p.Data) || p.InterfaceName != s.Interface().Name || p.LinkType != capture.LinkEthernet {
			t.Errorf("packet %d: length %d/%d, interface %q, link %d", i, len(p.Data), p.Length, p.InterfaceName, p.LinkType)
		}
		if p.Time.Before(before.Add(-time.Second)) || p.Time.After(time.Now().Add(time.Second)) || p.Time.Location() != time.UTC {
			t.Errorf("packet %d: time %v, sent at about %v", i, p.Time, before)
		}
	}
	// Nothing else came through: the next read times out.
	s.SetTimeout(200 * time.Millisecond)
	if p, err := s.Next(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("after the %d datagrams: %v, %v; want ErrTimeout", n, p, err)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Delivered != n || st.Received < n || st.Dropped != 0 {
		t.Fatalf("stats %+v, want %d delivered, none dropped", st, n)
	}
	// The kernel counters are read-and-reset; Stats adds them up.
	st2, _ := s.Stats()
	if st2.Received != st.Received {
		t.Fatalf("second Stats: received %d, first %d", st2.Received, st.Received)
	}
}

// TestAnyCooked captures on the pseudo-interface "any": packets come with
// a Linux cooked v2 header, the filter runs on the IP packet, and each
// loopback datagram is seen once, not once going out and once coming in.
func TestAnyCooked(t *testing.T) {
	rx, tx := udpPair(t)
	port := rx.LocalAddr().(*net.UDPAddr).Port
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root")
	}
	s, err := Open(AnyInterface, Config{Filter: fmt.Sprintf("udp dst port %d", port), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.LinkType() != capture.LinkLinuxSLL2 || s.Method() != MethodSocket {
		t.Fatalf("link type %d read with %v, want SLL2 with the socket", s.LinkType(), s.Method())
	}
	if _, err := Open(AnyInterface, Config{Method: MethodRing}); err == nil {
		t.Fatal("the ring opened on any: it cannot build the cooked header")
	}
	lo, _ := net.InterfaceByName(loopbackName(t))
	for i := range 3 {
		tx.Write(fmt.Appendf(nil, "any %d", i))
	}
	for i := range 3 {
		p, err := s.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		d := p.Data
		if len(d) < sll2Len+28 {
			t.Fatalf("packet %d: %d bytes", i, len(d))
		}
		if proto, ifindex := binary.BigEndian.Uint16(d), binary.BigEndian.Uint32(d[4:]); proto != 0x0800 || int(ifindex) != lo.Index {
			t.Fatalf("packet %d: SLL2 protocol %#x on interface %d, want IPv4 on %d", i, proto, ifindex, lo.Index)
		}
		if hatype := binary.BigEndian.Uint16(d[8:]); hatype != unix.ARPHRD_LOOPBACK || d[10] == unix.PACKET_OUTGOING {
			t.Fatalf("packet %d: ARPHRD %d, packet type %d", i, hatype, d[10])
		}
		ip := d[sll2Len:]
		if got := string(ip[28:]); got != fmt.Sprintf("any %d", i) || p.Length != len(d) {
			t.Fatalf("packet %d: payload %q, length %d/%d", i, got, len(d), p.Length)
		}
	}
	if _, err := s.Next(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a 4th packet (a loopback duplicate?): %v", err)
	}
}

func TestSnaplenCutsAndKeepsLength(t *testing.T) { forMethods(t, testSnaplenCutsAndKeepsLength) }

func testSnaplenCutsAndKeepsLength(t *testing.T, m Method) {
	rx, tx := udpPair(t)
	port := rx.LocalAddr().(*net.UDPAddr).Port
	s := openLoopback(t, Config{Filter: fmt.Sprintf("udp dst port %d", port), Snaplen: 60, Timeout: 2 * time.Second, Method: m})
	payload := bytes.Repeat([]byte{0xab}, 1000)
	if _, err := tx.Write(payload); err != nil {
		t.Fatal(err)
	}
	p, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Data) != 60 || p.Length != 14+20+8+1000 {
		t.Fatalf("captured %d of %d bytes, want 60 of %d", len(p.Data), p.Length, 14+20+8+1000)
	}
}

func TestTimeoutThenPacket(t *testing.T) { forMethods(t, testTimeoutThenPacket) }

func testTimeoutThenPacket(t *testing.T, m Method) {
	rx, tx := udpPair(t)
	port := rx.LocalAddr().(*net.UDPAddr).Port
	s := openLoopback(t, Config{Filter: fmt.Sprintf("udp dst port %d", port), Timeout: 100 * time.Millisecond, Method: m})
	start := time.Now()
	if _, err := s.Next(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("no traffic: %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d < 80*time.Millisecond || d > 2*time.Second {
		t.Fatalf("timed out after %v, want about 100ms", d)
	}
	// A timeout leaves the source usable, and a deadline left from it does
	// not cut the next wait short. The sender writes 50 ms into the wait;
	// on a loaded machine it may write after the 100 ms timeout, so a wait
	// may time out again: that is right as long as each wait lasted its
	// full timeout and none timed out with the packet long sent.
	var sent atomic.Int64 // UnixNano of the write; 0 before it
	go func() {
		time.Sleep(50 * time.Millisecond)
		tx.Write([]byte("late"))
		sent.Store(time.Now().UnixNano())
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		begin := time.Now()
		p, err := s.Next()
		if errors.Is(err, ErrTimeout) {
			if d := time.Since(begin); d < 80*time.Millisecond {
				t.Fatalf("a wait after a timeout ended after %v, want the full 100ms", d)
			}
			if w := sent.Load(); w != 0 && begin.Sub(time.Unix(0, w)) > time.Second {
				t.Fatalf("timed out %v after the packet was sent", time.Since(time.Unix(0, w)))
			}
			if time.Now().After(deadline) {
				t.Fatal("no packet within 10 s after a timeout")
			}
			continue
		}
		if err != nil {
			t.Fatalf("after a timeout: %v", err)
		}
		if _, pl := ethUDPPayload(t, p.Data); string(pl) != "late" {
			t.Fatalf("payload %q", pl)
		}
		return
	}
}

func TestCloseWakesNext(t *testing.T) { forMethods(t, testCloseWakesNext) }

func testCloseWakesNext(t *testing.T, m Method) {
	s := openLoopback(t, Config{Filter: "udp port 9", Method: m}) // no timeout: Next blocks
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != io.EOF {
			t.Fatalf("Next after Close: %v, want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake Next")
	}
	if _, err := s.Stats(); err != nil {
		t.Fatalf("Stats after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestLookupErrors(t *testing.T) {
	_, err := Open("nosuchif0", Config{})
	if !errors.Is(err, ErrNoSuchInterface) {
		t.Fatalf("unknown interface: %v", err)
	}
	lo := loopbackName(t)
	_, err = Open(lo, Config{Filter: "tcp prot 80"})
	var fe *FilterError
	if !errors.As(err, &fe) || fe.Expr != "tcp prot 80" {
		t.Fatalf("bad filter: %v, want a *FilterError", err)
	}
	if _, err := Open(lo, Config{Snaplen: DefaultSnaplen + 1}); err == nil {
		t.Fatal("snaplen over the maximum accepted")
	}
	if os.Geteuid() != 0 {
		_, err := Open(lo, Config{})
		if !errors.Is(err, os.ErrPermission) {
			t.Fatalf("not root: %v, want a permission error", err)
		}
	}
}

func TestInterfaces(t *testing.T) {
	ifs, err := Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	sys, _ := net.Interfaces()
	if len(ifs) != len(sys)+1 || ifs[len(ifs)-1].Name != AnyInterface || ifs[len(ifs)-1].LinkType != capture.LinkLinuxSLL2 {
		t.Fatalf("got %d interfaces (last %q), want the %d of the system and any", len(ifs), ifs[len(ifs)-1].Name, len(sys))
	}
	for i, ni := range sys {
		if ifs[i].Name != ni.Name || ifs[i].Index != ni.Index {
			t.Fatalf("interface %d: %s/%d, want %s/%d", i, ifs[i].Name, ifs[i].Index, ni.Name, ni.Index)
		}
		if ni.Flags&net.FlagLoopback != 0 && ifs[i].LinkType != capture.LinkEthernet {
			t.Errorf("loopback %s: link type %d, want Ethernet", ni.Name, ifs[i].LinkType)
		}
	}
}

func TestLinkTypeOfARPHRD(t *testing.T) {
	for _, c := range []struct {
		hw   uint16
		want capture.LinkType
	}{
		{1, capture.LinkEthernet},       // ARPHRD_ETHER
		{772, capture.LinkEthernet},     // ARPHRD_LOOPBACK
		{0xfffe, capture.LinkRaw},       // ARPHRD_NONE (tun, wireguard)
		{519, capture.LinkRaw},          // ARPHRD_RAWIP
		{512, capture.LinkLinuxSLL2},    // ARPHRD_PPP
		{776, capture.LinkLinuxSLL2},    // ARPHRD_SIT
		{778, capture.LinkLinuxSLL2},    // ARPHRD_IPGRE
		{801, capture.LinkLinuxSLL2},    // ARPHRD_IEEE80211
		{280, capture.LinkLinuxSLL2},    // ARPHRD_CAN
		{0xffff, capture.LinkLinuxSLL2}, // ARPHRD_VOID
	} {
		if got := linkTypeOfARPHRD(c.hw); got != c.want {
			t.Errorf("ARPHRD %#x: link type %d, want %d", c.hw, got, c.want)
		}
	}
}

// BenchmarkNextLoopback measures Next on loopback UDP datagrams of 1000
// bytes sent by another goroutine (root only), with each method.
func BenchmarkNextLoopback(b *testing.B) {
	for _, m := range methods {
		b.Run(m.String(), func(b *testing.B) { benchmarkNextLoopback(b, m) })
	}
}

func benchmarkNextLoopback(b *testing.B, m Method) {
	rx, tx := udpPair(b)
	port := rx.LocalAddr().(*net.UDPAddr).Port
	s := openLoopback(b, Config{Filter: fmt.Sprintf("udp dst port %d", port), Timeout: time.Second, Method: m})
	go func() {
		buf := make([]byte, 1000)
		for {
			if _, err := tx.Write(buf); err != nil {
				return
			}
		}
	}()
	go func() { // keep the receiving socket's buffer from filling
		buf := make([]byte, 2000)
		for {
			if _, err := rx.Read(buf); err != nil {
				return
			}
		}
	}()
	b.SetBytes(14 + 20 + 8 + 1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Next(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st, _ := s.Stats()
	b.ReportMetric(float64(st.Dropped), "kernel-drops")
}

// TestVLANTagPutBack sends 802.1Q-tagged frames into one end of a veth pair
// and captures on the other. Linux moves the tag out of the frame into
// packet metadata on receive; the captured frame must have it back in
// place, byte for byte, and the "vlan" filter must see it. Needs root and
// the ip command (iproute2); skipped otherwise.
func TestVLANTagPutBack(t *testing.T) { forMethods(t, testVLANTagPutBack) }

func testVLANTagPutBack(t *testing.T, m Method) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	ipCmd, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("no ip command (iproute2)")
	}
	// One pair per method: names are not reused at once.
	a, b := fmt.Sprintf("lvt%d%sa", os.Getpid()%100000, m.String()[:1]), fmt.Sprintf("lvt%d%sb", os.Getpid()%100000, m.String()[:1])
	if out, err := exec.Command(ipCmd, "link", "add", a, "type", "veth", "peer", "name", b).CombinedOutput(); err != nil {
		t.Skipf("cannot create a veth pair here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command(ipCmd, "link", "del", a).Run() })
	for _, n := range []string{a, b} {
		if out, err := exec.Command(ipCmd, "link", "set", n, "up").CombinedOutput(); err != nil {
			t.Fatalf("ip link set %s up: %v: %s", n, err, out)
		}
	}
	// Frames sent before the kernel has seen the carrier (linkwatch, which
	// may wait up to a second) are dropped: wait for both ends.
	for _, n := range []string{a, b} {
		for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			st, _ := os.ReadFile("/sys/class/net/" + n + "/operstate")
			if string(bytes.TrimSpace(st)) == "up" || time.Now().After(deadline) {
				break
			}
		}
	}
	s, err := Open(b, Config{Filter: "vlan 100 and udp port 2222", Timeout: 500 * time.Millisecond, Method: m})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// Ethernet broadcast, 802.1Q priority 3 VLAN 100, IPv4 10.99.0.1:1111
	// -> 10.99.0.2:2222, UDP payload "hello vlan" (checksums zero).
	frame := func(tci uint16) []byte {
		f := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x01}
		if tci != 0 {
			f = binary.BigEndian.AppendUint16(f, 0x8100)
			f = binary.BigEndian.AppendUint16(f, tci)
		}
		f = append(f, 0x08, 0x00,
			0x45, 0, 0, 38, 0, 1, 0, 0, 64, 17, 0, 0, 10, 99, 0, 1, 10, 99, 0, 2,
			0x04, 0x57, 0x08, 0xae, 0, 18, 0, 0)
		return append(f, "hello vlan"...)
	}
	ifA, err := net.InterfaceByName(a)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	to := &unix.SockaddrLinklayer{Ifindex: ifA.Index, Halen: 6, Addr: [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	tagged := frame(0x6064)                                       // priority 3, VLAN 100
	for _, f := range [][]byte{frame(0x00c8), frame(0), tagged} { // VLAN 200 and untagged are filtered out
		if err := unix.Sendto(fd, f, 0, to); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.Data, tagged) || p.Length != len(tagged) {
		t.Fatalf("captured (%d of %d bytes)\n% x\nwant\n% x", len(p.Data), p.Length, p.Data, tagged)
	}
	if p, err := s.Next(); !errors.Is(err, ErrTimeout) {
		if p != nil {
			t.Fatalf("a frame the filter should reject came through: % x", p.Data)
		}
		t.Fatal(err)
	}
}
