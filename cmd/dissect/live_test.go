package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/capture/live"
)

// Live capture tests. The end-to-end ones capture real loopback traffic
// made by this process: they need root (CAP_NET_RAW) and AF_PACKET, and
// skip with a message otherwise; CI runs them as root. The flag and error
// tests run anywhere.

// lvBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type lvBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lvBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lvBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// lvNeedCapture skips unless live capture works here.
func lvNeedCapture(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("live capture is Linux only")
	}
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW); CI runs these tests as root")
	}
	s, err := live.Open("lo", live.Config{Filter: "udp port 9"})
	if err != nil {
		t.Skipf("cannot capture on lo here: %v", err)
	}
	s.Close()
}

// lvRun is the CLI running in-process in a goroutine.
type lvRun struct {
	stdout, stderr lvBuffer
	done           chan struct{}
	code           int
}

// lvStart runs the command line and returns once the capture socket is
// open (the "capturing on" line), so that traffic sent afterwards is seen.
func lvStart(t *testing.T, args ...string) *lvRun {
	t.Helper()
	r := &lvRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.code = run(args, strings.NewReader(""), &r.stdout, &r.stderr)
	}()
	lvWaitFor(t, r, "the capture to start", func() bool { return strings.Contains(r.stderr.String(), "capturing on") })
	return r
}

func lvWaitFor(t *testing.T, r *lvRun, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		select {
		case <-r.done:
			if cond() {
				return
			}
			t.Fatalf("the command ended (exit %d) before %s\nstderr:\n%s", r.code, what, r.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\nstdout:\n%s\nstderr:\n%s", what, r.stdout.String(), r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *lvRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(15 * time.Second):
		t.Fatalf("the command did not stop\nstderr:\n%s", r.stderr.String())
		return -1
	}
}

func lvHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Deltarobot messages: the test vectors of protocols.md §4.3.
const (
	lvDRMagic    = "01 30 44 65 6c 74 61 52 56 72"
	lvDRVersion  = "02 20 01 00 00 00"
	lvDRPos123   = "03 40 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 00 00" // (1, 2, 3, 0)
	lvDRPing     = "04 30 ef cd ab 89 67 45 23 01"                         // 0x0123456789abcdef
	lvDRPong     = "05 30 ef cd ab 89 67 45 23 01"
	lvDREOTBye   = "06 f0 03 00 00 00 62 79 65"
	lvDREOTEmpty = "06 f0 00 00 00 00"
)

// lvVrpnCookie is README fact 1: "vrpn: ver. 07.38", two spaces, the log
// mode digit, five NULs: 24 bytes.
func lvVrpnCookie() []byte {
	return append([]byte("vrpn: ver. 07.38  0"), 0, 0, 0, 0, 0)
}

// lvVrpnDescription is a SENDER_DESCRIPTION (typ -1) or TYPE_DESCRIPTION
// (typ -2) of name for id (facts 2 and 6): six big-endian words (length =
// 24 + payload, time, sender = the id described, type, sequence), then the
// u32 name length counting the NUL, the name and its NUL, padded to 8.
func lvVrpnDescription(id, typ int32, seq uint32, name string) []byte {
	payload := 4 + len(name) + 1
	b := binary.BigEndian.AppendUint32(nil, uint32(24+payload))
	b = binary.BigEndian.AppendUint32(b, 1795306000) // tv_sec
	b = binary.BigEndian.AppendUint32(b, 250000)     // tv_usec
	b = binary.BigEndian.AppendUint32(b, uint32(id))
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	b = binary.BigEndian.AppendUint32(b, seq)
	b = binary.BigEndian.AppendUint32(b, uint32(len(name)+1))
	b = append(b, name...)
	b = append(b, 0)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

func lvReadN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, b); err != nil {
		t.Errorf("reading %d bytes: %v", n, err)
	}
	return b
}

func lvWriteAll(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Errorf("writing: %v", err)
	}
}

// lvTcpPair returns both ends of a loopback TCP connection to ln.
func lvTcpPair(t *testing.T, ln net.Listener) (client, server net.Conn) {
	t.Helper()
	client, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return client, server
}

func lvListenTCP(t *testing.T) (net.Listener, int) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, ln.Addr().(*net.TCPAddr).Port
}

func lvListenUDP(t *testing.T) (*net.UDPConn, int) {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, c.LocalAddr().(*net.UDPAddr).Port
}

func lvDialUDP(t *testing.T, port int) net.Conn {
	t.Helper()
	c, err := net.Dial("udp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// lvDeltarobotSession plays a leader (server) and a follower (client): the
// handshake both ways, three positions and a ping from the leader, the
// pong, then end_of_transmission both ways and close. It returns the
// client's address.
func lvDeltarobotSession(t *testing.T, ln net.Listener) string {
	client, server := lvTcpPair(t, ln)
	defer client.Close()
	defer server.Close()
	lvWriteAll(t, client, append(lvHex(t, lvDRMagic), lvHex(t, lvDRVersion)...))
	lvWriteAll(t, server, append(lvHex(t, lvDRMagic), lvHex(t, lvDRVersion)...))
	for range 3 {
		lvWriteAll(t, server, lvHex(t, lvDRPos123))
	}
	lvWriteAll(t, server, lvHex(t, lvDRPing))
	lvReadN(t, client, 10+6+3*18+10)
	lvWriteAll(t, client, lvHex(t, lvDRPong))
	lvReadN(t, server, 10+6+10)
	lvWriteAll(t, server, lvHex(t, lvDREOTBye))
	lvReadN(t, client, 9)
	lvWriteAll(t, client, lvHex(t, lvDREOTEmpty))
	lvReadN(t, server, 6)
	return client.LocalAddr().String()
}

// lvVrpnSession: both sides send their cookie at once, then the client
// describes a sender and a type, the server a sender.
func lvVrpnSession(t *testing.T, ln net.Listener) string {
	client, server := lvTcpPair(t, ln)
	defer client.Close()
	defer server.Close()
	lvWriteAll(t, client, lvVrpnCookie())
	lvWriteAll(t, server, lvVrpnCookie())
	lvWriteAll(t, client, append(lvVrpnDescription(0, -1, 0, "VRPN Control"), lvVrpnDescription(5, -2, 1, "vrpn_Tracker Pos_Quat")...))
	lvWriteAll(t, server, lvVrpnDescription(1, -1, 0, "Tracker0"))
	lvReadN(t, client, 24+40)
	lvReadN(t, server, 24+48+56)
	return client.LocalAddr().String()
}

// lvWant is an expected record: who sent it, its type, and fields to check
// (JSON values as text).
type lvWant struct {
	src    string
	typ    string
	fields map[string]string
}

func lvCheck(t *testing.T, recs []jsonRecord, want []lvWant) {
	t.Helper()
	if len(recs) != len(want) {
		for _, r := range recs {
			t.Logf("%s %s %s", r.Src, r.Type, r.Fields)
		}
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		if r.Src != w.src || r.Type != w.typ {
			t.Fatalf("record %d: %s from %s, want %s from %s", i, r.Type, r.Src, w.typ, w.src)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r.Fields, &fields); err != nil {
			t.Fatal(err)
		}
		for k, v := range w.fields {
			if got := string(fields[k]); got != v {
				t.Errorf("record %d (%s): %s = %s, want %s", i, r.Type, k, got, v)
			}
		}
	}
}

// lvByStream splits records by stream, keeping their order.
func lvByStream(recs []jsonRecord) map[int][]jsonRecord {
	m := map[int][]jsonRecord{}
	for _, r := range recs {
		m[*r.Stream] = append(m[*r.Stream], r)
	}
	return m
}

// TestLiveLoopback captures a Deltarobot session, a VRPN session and VRPN
// UDP datagrams made by this process on lo, with a kernel filter on their
// ports, prints the records as they complete, saves the packets with -w,
// and stops on SIGINT like Ctrl-C.
func TestLiveLoopback(t *testing.T) {
	lvNeedCapture(t)
	drLn, p1 := lvListenTCP(t)
	vrLn, p2 := lvListenTCP(t)
	udpRx, p3 := lvListenUDP(t)
	_ = udpRx
	otherLn, _ := lvListenTCP(t) // traffic the filter must keep out
	dir := t.TempDir()
	saved := filepath.Join(dir, "live.pcapng")
	rules := []string{"-d", fmt.Sprintf("tcp.port==%d,deltarobot", p1), "-d", fmt.Sprintf("udp.port==%d,vrpn", p3)}
	args := append([]string{"-i", "lo", "-o", "json", "-w", saved,
		"-f", fmt.Sprintf("tcp port %d or tcp port %d or udp port %d", p1, p2, p3)}, rules...)
	r := lvStart(t, args...)

	drClient := lvDeltarobotSession(t, drLn)
	vrClient := lvVrpnSession(t, vrLn)
	lob := lvDialUDP(t, p3)
	lvWriteAll(t, lob, fmt.Appendf(nil, "127.0.0.1 %d\x00", p2))
	udp := lvDialUDP(t, p3)
	lvWriteAll(t, udp, append(lvVrpnDescription(0, -1, 0, "Tracker0"), lvVrpnDescription(0, -2, 1, "vrpn_Tracker Pos_Quat")...))
	oc, os_ := lvTcpPair(t, otherLn)
	lvWriteAll(t, oc, lvVrpnCookie())
	lvReadN(t, os_, 24)
	oc.Close()
	os_.Close()

	// The records are printed as the messages complete, before the
	// capture ends: 11 Deltarobot, 5 VRPN over TCP, 3 VRPN over UDP.
	const total = 11 + 5 + 3
	lvWaitFor(t, r, "the records of every message", func() bool { return strings.Count(r.stdout.String(), "\n") >= total })
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGINT\nstderr:\n%s", code, r.stderr.String())
	}
	stdout, stderr := r.stdout.String(), r.stderr.String()
	recs := parseJSONL(t, stdout)
	if len(recs) != total {
		t.Fatalf("%d records, want %d:\n%s", len(recs), total, stdout)
	}

	// Every byte of every direction is in exactly one record, and the
	// directions have the lengths sent.
	ends := tiling(t, recs)
	streams := lvByStream(recs)
	if len(streams) != 4 {
		t.Fatalf("%d streams, want 4 (the filter keeps the other connection out)", len(streams))
	}
	drServer := fmt.Sprintf("127.0.0.1:%d", p1)
	vrServer := fmt.Sprintf("127.0.0.1:%d", p2)
	lobSrc, udpSrc := lob.LocalAddr().String(), udp.LocalAddr().String()
	var dr, vr, ulob, udg []jsonRecord
	for _, s := range streams {
		switch {
		case s[0].Dst == drServer || s[0].Src == drServer:
			dr = s
		case s[0].Dst == vrServer || s[0].Src == vrServer:
			vr = s
		case s[0].Src == lobSrc:
			ulob = s
		case s[0].Src == udpSrc:
			udg = s
		}
	}
	for _, c := range []struct {
		src  string
		s    int
		want int64
	}{
		{drClient, *dr[0].Stream, 10 + 6 + 10 + 6},
		{drServer, *dr[0].Stream, 10 + 6 + 3*18 + 10 + 9},
		{vrClient, *vr[0].Stream, 24 + 48 + 56},
		{vrServer, *vr[0].Stream, 24 + 40},
	} {
		if got := ends[dirKey{c.s, c.src}]; got != c.want {
			t.Errorf("stream %d from %s: %d bytes accounted for, %d sent", c.s, c.src, got, c.want)
		}
	}

	pos := map[string]string{"x": "1.0", "y": "2.0", "z": "3.0", "u": "0.0"}
	// Order per direction is the order sent; across directions it follows
	// the conversation.
	lvCheck(t, dr, []lvWant{
		{drClient, "protocol_magic", map[string]string{"magic": `"DeltaRVr"`}},
		{drClient, "protocol_version", map[string]string{"version": "1"}},
		{drServer, "protocol_magic", nil},
		{drServer, "protocol_version", nil},
		{drServer, "actuator_position", pos},
		{drServer, "actuator_position", pos},
		{drServer, "actuator_position", pos},
		{drServer, "ping", map[string]string{"id": "81985529216486895"}},
		{drClient, "pong", map[string]string{"id": "81985529216486895"}},
		{drServer, "end_of_transmission", map[string]string{"reason": `"bye"`}},
		{drClient, "end_of_transmission", map[string]string{"reason": `""`}},
	})
	// The cookies race (fact 1), but each direction keeps its order.
	var vrFromClient, vrFromServer []jsonRecord
	for _, rec := range vr {
		if rec.Src == vrClient {
			vrFromClient = append(vrFromClient, rec)
		} else {
			vrFromServer = append(vrFromServer, rec)
		}
	}
	lvCheck(t, vrFromClient, []lvWant{
		{vrClient, "cookie", nil},
		{vrClient, "sender_description", map[string]string{"name": `"VRPN Control"`}},
		{vrClient, "type_description", map[string]string{"name": `"vrpn_Tracker Pos_Quat"`}},
	})
	lvCheck(t, vrFromServer, []lvWant{
		{vrServer, "cookie", nil},
		{vrServer, "sender_description", map[string]string{"name": `"Tracker0"`}},
	})
	lvCheck(t, ulob, []lvWant{{lobSrc, "udp_callback", map[string]string{"host": `"127.0.0.1"`, "port": fmt.Sprint(p2)}}})
	lvCheck(t, udg, []lvWant{
		{udpSrc, "sender_description", map[string]string{"name": `"Tracker0"`}},
		{udpSrc, "type_description", map[string]string{"name": `"vrpn_Tracker Pos_Quat"`}},
	})
	for _, rec := range recs {
		if rec.Transport != map[bool]string{true: "udp", false: "tcp"}[rec.Src == lobSrc || rec.Src == udpSrc] || len(rec.Warnings) > 0 {
			t.Errorf("record %s from %s: transport %s, warnings %v", rec.Type, rec.Src, rec.Transport, rec.Warnings)
		}
	}

	// Clean shutdown: the summary, with the kernel's counters.
	packets := lvSummaryPackets(t, stderr)
	if !strings.Contains(stderr, "== dissect summary ==") || !strings.Contains(stderr, fmt.Sprintf("live:     lo: %d packets captured", packets)) || !strings.Contains(stderr, " 0 dropped by the kernel") {
		t.Fatalf("summary:\n%s", stderr)
	}
	if !strings.Contains(stderr, "messages: 19") || !strings.Contains(stderr, "gaps:     0") {
		t.Errorf("summary counts:\n%s", stderr)
	}

	// The saved file is complete and closed: it reads back with the same
	// packets, and decoding it gives the same records.
	src, err := capture.OpenFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading back %s: %v", saved, err)
		}
		if p.LinkType != capture.LinkEthernet || p.InterfaceName != "lo" || len(p.Data) != p.Length {
			t.Fatalf("saved packet %d: link type %d, interface %q, %d of %d bytes", n, p.LinkType, p.InterfaceName, len(p.Data), p.Length)
		}
		n++
	}
	src.Close()
	if n != packets {
		t.Fatalf("%s holds %d packets, the summary says %d", saved, n, packets)
	}
	fileOut, fileErr, code := cli(t, append(append([]string{"-o", "json"}, rules...), saved)...)
	if code != 0 {
		t.Fatalf("decoding %s: exit %d: %s", saved, code, fileErr)
	}
	if fileOut != stdout {
		t.Fatalf("decoding the saved file differs from the live output:\n%s", firstDiff(stdout, fileOut))
	}
}

// lvSummaryPackets reads "packets:  N" from the summary.
func lvSummaryPackets(t *testing.T, stderr string) int {
	t.Helper()
	var n int
	for _, line := range strings.Split(stderr, "\n") {
		if _, err := fmt.Sscanf(line, "packets: %d,", &n); err == nil {
			return n
		}
	}
	t.Fatalf("no packet count in the summary:\n%s", stderr)
	return 0
}

// TestLiveCountStops: -c N stops after N packets, by itself, exit 0.
func TestLiveCountStops(t *testing.T) {
	lvNeedCapture(t)
	rx, port := lvListenUDP(t)
	_ = rx
	r := lvStart(t, "-i", "lo", "-o", "json", "-c", "3", "-f", fmt.Sprintf("udp dst port %d", port), "-d", fmt.Sprintf("udp.port==%d,vrpn", port))
	tx := lvDialUDP(t, port)
	for i := range 5 {
		lvWriteAll(t, tx, lvVrpnDescription(int32(i), -1, uint32(i), fmt.Sprintf("Sender%d", i)))
		time.Sleep(5 * time.Millisecond)
	}
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	recs := parseJSONL(t, r.stdout.String())
	src := tx.LocalAddr().String()
	lvCheck(t, recs, []lvWant{
		{src, "sender_description", map[string]string{"name": `"Sender0"`}},
		{src, "sender_description", map[string]string{"name": `"Sender1"`}},
		{src, "sender_description", map[string]string{"name": `"Sender2"`}},
	})
	if n := lvSummaryPackets(t, r.stderr.String()); n != 3 {
		t.Fatalf("summary: %d packets, want 3", n)
	}
}

// TestLiveDurationStops: -a duration:1 stops an idle capture after about a
// second; the -w file is valid and empty; -q prints only the summary.
func TestLiveDurationStops(t *testing.T) {
	lvNeedCapture(t)
	saved := filepath.Join(t.TempDir(), "empty.pcapng")
	start := time.Now()
	r := lvStart(t, "-i", "lo", "-q", "-a", "duration:1", "-w", saved, "-f", "udp port 9 and udp port 10")
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 5*time.Second {
		t.Fatalf("stopped after %v, want about 1s", d)
	}
	if r.stdout.String() != "" || !strings.Contains(r.stderr.String(), "live:     lo: 0 packets captured") {
		t.Fatalf("stdout %q\nstderr:\n%s", r.stdout.String(), r.stderr.String())
	}
	src, err := capture.OpenFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if p, err := src.Next(); err != io.EOF {
		t.Fatalf("empty capture: %v, %v", p, err)
	}
}

// TestLiveContextCancel: cancelling the command's context (what a signal
// does) ends the capture cleanly, streams flushed and summary printed.
func TestLiveContextCancel(t *testing.T) {
	lvNeedCapture(t)
	rx, port := lvListenUDP(t)
	_ = rx
	var out, errb lvBuffer
	root := newRootCmd(strings.NewReader(""), &out, &errb)
	root.SetArgs([]string{"live", "-i", "lo", "-o", "json", "-f", fmt.Sprintf("udp dst port %d", port), "-d", fmt.Sprintf("udp.port==%d,vrpn", port)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), "capturing on") {
		if time.Now().After(deadline) {
			t.Fatalf("capture did not start: %s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	tx := lvDialUDP(t, port)
	lvWriteAll(t, tx, lvVrpnDescription(7, -1, 0, "Dial0"))
	deadline = time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), `"Dial0"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no record: %s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not stop the capture")
	}
	if !strings.Contains(errb.String(), "live:     lo: 1 packets captured") {
		t.Fatalf("summary:\n%s", errb.String())
	}
}

func TestLiveAutostopParsing(t *testing.T) {
	for _, c := range []struct {
		conds []string
		count int64
		want  stopRule
		err   bool
	}{
		{[]string{"duration:5"}, 0, stopRule{duration: 5 * time.Second}, false},
		{[]string{"duration:0.25"}, 0, stopRule{duration: 250 * time.Millisecond}, false},
		{[]string{"duration:1m30s"}, 0, stopRule{duration: 90 * time.Second}, false},
		{[]string{"packets:10"}, 0, stopRule{packets: 10}, false},
		{nil, 7, stopRule{packets: 7}, false},
		{[]string{"packets:10"}, 4, stopRule{packets: 4}, false}, // the first met stops
		{[]string{"duration:9", "duration:3", "packets:2"}, 0, stopRule{duration: 3 * time.Second, packets: 2}, false},
		{nil, 0, stopRule{}, false},
		{[]string{"duration:0"}, 0, stopRule{}, true},
		{[]string{"duration:-1"}, 0, stopRule{}, true},
		{[]string{"duration:"}, 0, stopRule{}, true},
		{[]string{"duration:soon"}, 0, stopRule{}, true},
		{[]string{"packets:0"}, 0, stopRule{}, true},
		{[]string{"filesize:100"}, 0, stopRule{}, true},
		{[]string{"5"}, 0, stopRule{}, true},
		{nil, -1, stopRule{}, true},
	} {
		got, err := parseAutostop(c.conds, c.count)
		if (err != nil) != c.err || (err == nil && got != c.want) {
			t.Errorf("-a %q -c %d: %+v, %v; want %+v (error %v)", c.conds, c.count, got, err, c.want, c.err)
		}
	}
}

func TestLiveUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-w", "out.pcapng", "-b", "packets:3", "x.pcap"}, "--ring-buffer applies to live capture"},
		{[]string{"-f", "tcp port", "x.pcap"}, "-f: "},
		{[]string{"live"}, "no interface given"},
		{[]string{"live", "eth0"}, "unknown command"},
		{[]string{"-i", "lo", "x.pcap"}, `-i captures live and "x.pcap" is a capture file`},
		{[]string{"-i", "lo", "-a", "bogus"}, `-a "bogus"`},
		{[]string{"-i", "lo", "-a", "duration:0"}, `-a "duration:0"`},
		{[]string{"-i", "lo", "-c", "-1"}, "-c -1"},
		{[]string{"-i", "lo", "-s", "300000"}, "-s 300000"},
		{[]string{"-i", "lo", "-B", "0"}, "-B 0"},
		{[]string{"-i", "lo", "--idle", "-1s"}, "--idle"},
		{[]string{"-i", "lo", "-o", "xml"}, "--output"},
		{[]string{"live", "-i", "lo", "-r", "x.pcap"}, "-r reads capture files"},
		{[]string{"-D", "x.pcap"}, "-D lists the interfaces and reads no file"},
	} {
		stdout, stderr, code := cli(t, c.args...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "dissect: ") || !strings.Contains(stderr, c.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.msg)
		}
	}
}

// TestLiveBadFilter: a filter the compiler rejects is one line from the
// compiler and exit 2, before any privilege is needed.
func TestLiveBadFilter(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("live capture is Linux only")
	}
	_, stderr, code := cli(t, "-i", "lo", "-f", "tcp prot 80")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != exitUsage || !strings.HasPrefix(lines[0], `dissect: filter "tcp prot 80": `) || len(lines) != 2 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestLiveUnknownInterface(t *testing.T) {
	stdout, stderr, code := cli(t, "-i", "nosuchif0")
	if code != exitError || stdout != "" || stderr != "dissect: nosuchif0: no such interface (dissect -D lists them)\n" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// The same through the subcommand.
	if _, stderr, code := cli(t, "live", "-i", "nosuchif0", "-o", "json"); code != exitError || !strings.Contains(stderr, "no such interface") {
		t.Fatalf("live: exit %d, stderr %q", code, stderr)
	}
}

// TestLivePermissionMessage: without CAP_NET_RAW the user is told how to
// get it. Run as root, the message is checked on the error mapping only.
func TestLivePermissionMessage(t *testing.T) {
	want := "lo: permission denied: run as root or grant CAP_NET_RAW to the dissect binary (sudo setcap cap_net_raw,cap_net_admin=eip $(which dissect))"
	err := liveError("lo", fmt.Errorf("live: lo: opening an AF_PACKET socket: %w", syscall.EPERM))
	if err == nil || err.Error() != want {
		t.Fatalf("mapped EPERM to %v", err)
	}
	if runtime.GOOS == "linux" && os.Geteuid() != 0 {
		_, stderr, code := cli(t, "-i", "lo")
		if code != exitError || stderr != "dissect: "+want+"\n" {
			t.Fatalf("not root: exit %d, stderr %q", code, stderr)
		}
	}
	var ue usageError
	if !errors.As(liveError("lo", &live.FilterError{Expr: "x", Err: errors.New("filter: bad")}), &ue) {
		t.Fatal("a filter error is not a usage error")
	}
}

func TestLiveListInterfaces(t *testing.T) {
	sys, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-D"}, {"live", "-D"}} {
		stdout, stderr, code := cli(t, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%q: exit %d, stderr %q", args, code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		wantLines := len(sys)
		if runtime.GOOS == "linux" {
			wantLines++
			if lines[len(lines)-1] != fmt.Sprintf("%d. any (pseudo-interface: every interface; Linux cooked v2)", len(lines)) {
				t.Errorf("last line %q, want the any pseudo-interface", lines[len(lines)-1])
			}
		}
		if len(lines) != wantLines {
			t.Fatalf("%q: %d lines, want %d:\n%s", args, len(lines), wantLines, stdout)
		}
		for i, ni := range sys {
			// Numbered by place in the list, as tshark -D; -i N picks
			// the Nth.
			if !strings.HasPrefix(lines[i], fmt.Sprintf("%d. %s (", i+1, ni.Name)) {
				t.Errorf("line %q, want interface %d %s", lines[i], i+1, ni.Name)
			}
			if got := resolveInterface(strconv.Itoa(i + 1)); got != ni.Name {
				t.Errorf("-i %d resolves to %q, want %q (line %d of -D)", i+1, got, ni.Name, i+1)
			}
			if ni.Flags&net.FlagLoopback != 0 && !strings.Contains(lines[i], "loopback") {
				t.Errorf("loopback line %q does not say so", lines[i])
			}
			addrs, _ := ni.Addrs()
			for _, a := range addrs {
				if !strings.Contains(lines[i], " "+a.String()) {
					t.Errorf("line %q lacks the address %s", lines[i], a)
				}
			}
		}
	}
}

// TestLiveIdleExpiresStreams: a connection that goes quiet for longer than
// --idle is ended while the capture runs (memory stays bounded): the bytes
// of its unfinished message come out as a record then, not at the end. The
// -w file is flushed while capturing.
func TestLiveIdleExpiresStreams(t *testing.T) {
	lvNeedCapture(t)
	ln, port := lvListenTCP(t)
	saved := filepath.Join(t.TempDir(), "idle.pcapng")
	r := lvStart(t, "-i", "lo", "-o", "json", "--idle", "1s", "-w", saved,
		"-f", fmt.Sprintf("tcp port %d", port), "-d", fmt.Sprintf("tcp.port==%d,deltarobot", port))
	client, server := lvTcpPair(t, ln)
	defer client.Close()
	defer server.Close()
	// The handshake, then the first 5 bytes of a position message.
	lvWriteAll(t, client, append(append(lvHex(t, lvDRMagic), lvHex(t, lvDRVersion)...), lvHex(t, lvDRPos123)[:5]...))
	lvReadN(t, server, 10+6+5)
	sent := time.Now()
	lvWaitFor(t, r, "the idle stream's held bytes", func() bool { return strings.Count(r.stdout.String(), "\n") >= 3 })
	if d := time.Since(sent); d < 900*time.Millisecond {
		t.Fatalf("the stream was ended after %v idle, --idle is 1s", d)
	}
	select {
	case <-r.done:
		t.Fatal("the command ended by itself")
	default:
	}
	recs := parseJSONL(t, r.stdout.String())
	me := client.LocalAddr().String()
	if len(recs) != 3 || recs[0].Type != "protocol_magic" || recs[1].Type != "protocol_version" ||
		recs[2].Src != me || *recs[2].Offset != 16 || *recs[2].Length != 5 || recs[2].Type == "actuator_position" {
		t.Fatalf("records after expiry:\n%s", r.stdout.String())
	}
	// The file already holds the handshake and the data segment.
	src, err := capture.OpenFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		if _, err := src.Next(); err != nil {
			break
		}
		n++
	}
	src.Close()
	if n < 4 {
		t.Fatalf("the -w file holds %d packets while capturing, want the SYN, SYN-ACK, ACK and data at least", n)
	}
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
}

// lvInterrupt sends SIGINT to this process, as Ctrl-C does; the capture
// under test has a handler for it.
func lvInterrupt(t *testing.T) {
	t.Helper()
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = p.Signal(os.Interrupt)
	}
	if err != nil {
		t.Fatal(err)
	}
}
