package foxstudio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/internal/childtest"
	"github.com/dissect-tools/dissect/internal/longtest"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Deltarobot messages (docs/protocols.md §4.3): the handshake, an
// actuator position (x, y, z, u as float32), end of transmission.
var (
	drHello = []byte{0x01, 0x30, 'D', 'e', 'l', 't', 'a', 'R', 'V', 'r', 0x02, 0x20, 0x01, 0x00, 0x00, 0x00}
	drEOT   = []byte{0x06, 0xf0, 0x00, 0x00, 0x00, 0x00}
)

func drPosition(x, y, z, u float32) []byte {
	b := []byte{0x03, 0x40}
	for _, f := range []float32{x, y, z, u} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// livePositions: how many positions the live test sends once Studio
// plots, 150 ms apart, each with its own z (exact in float32 and
// float64); before them, warm-up positions (z >= 0.25) until Studio plots
// one.
const livePositions = 10

func liveZ(i int) float32   { return -0.25 - float32(i)/64 }
func warmUpZ(i int) float32 { return 0.25 + float32(i)/64 }

// TestStudioLiveCaptureTime captures a Deltarobot session live on lo
// with -o foxglove while a real Foxglove Studio shows it, and checks that
// the Plot draws each actuator position at the capture time of the
// packet that carried it, as tcpdump, capturing the same packets beside
// dissect, stamped it. A live capture is not kept: a topic's records
// before Studio subscribes to it (as it learns of it) may be missed, so
// the leader sends warm-up positions until Studio plots one, then the
// positions that must all be plotted. Two captures of one packet are
// stamped by the kernel separately (a few microseconds apart), so times
// agree within 1 ms, far below the 150 ms between packets; Studio's own
// clock (what it uses without the server's time) counts whole
// milliseconds, so at least one point must have a finer time. Studio's
// time axis must start and end within the capture.
func TestStudioLiveCaptureTime(t *testing.T) {
	longtest.Skip(t)
	if runtime.GOOS != "linux" {
		t.Skip("live capture is Linux only")
	}
	if os.Geteuid() != 0 {
		t.Skip("live capture on lo needs root (CAP_NET_RAW); CI runs this test as root")
	}
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Skip("tcpdump is not installed (it stamps the packets beside dissect): apt-get install tcpdump")
	}
	root := ModuleRoot(t)
	bin := buildDissect(t, root)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	filter := fmt.Sprintf("tcp port %d", port)

	began := time.Now() // the capture's clock is the kernel's real-time clock, as time.Now
	pcapFile := filepath.Join(t.TempDir(), "lo.pcap")
	td := startTcpdump(t, tcpdump, pcapFile, filter)
	run := startDissect(t, bin, "-i", "lo", "-f", filter, "-d", fmt.Sprintf("tcp.port==%d,deltarobot", port), "-o", "foxglove", "--out", freeAddr(t))
	s := Start(t, Options{URL: run.url, Expect: map[string]int{plotTopic: 1}, Timeout: 150 * time.Second, Out: t.ArtifactDir(), Hold: true})
	s.WaitShown(t, 90*time.Second)
	liveSession(t, ln, s)
	s.Release()
	r := s.Wait(t, 120*time.Second)
	summary := run.stop(t)
	ended := time.Now()
	td.stop(t)
	t.Logf("Studio: reported %d ms after its panels were shown; %d seeks; screenshots in %s\ndissect:\n%s", r.Waited.ShowToDoneMs, r.Seeks, t.ArtifactDir(), summary)
	if r.TimedOut {
		t.Errorf("drive.mjs timed out")
	}

	stamped := positionTimes(t, pcapFile, port)
	for i := range livePositions {
		if _, ok := stamped[math.Float32bits(liveZ(i))]; !ok {
			t.Fatalf("tcpdump did not capture position %d (z %v) as a packet of its own", i, liveZ(i))
		}
	}
	if len(r.Plots) != 1 || len(r.Plots[0].Datasets) != 1 {
		t.Fatalf("want one Plot of one series, got %d plots", len(r.Plots))
	}
	pts := r.Plots[0].Datasets[0].Points
	for i := range livePositions {
		if n := len(slices.DeleteFunc(slices.Clone(pts), func(p point) bool { return p.Y != float64(liveZ(i)) })); n != 1 {
			t.Errorf("the Plot draws %d points of position %d (z %v), want 1", n, i, liveZ(i))
		}
	}
	fine := false
	var worst time.Duration
	for i, p := range pts {
		want, ok := stamped[math.Float32bits(float32(p.Y))]
		got, okGot := new(big.Int).SetString(p.ReceiveTime, 10)
		if !ok || !okGot || float64(float32(p.Y)) != p.Y {
			t.Errorf("Plot point %d: z %v at %s, not a position tcpdump saw sent", i, p.Y, p.ReceiveTime)
			continue
		}
		d := time.Duration(new(big.Int).Sub(got, big.NewInt(want)).Int64())
		worst = max(worst, d.Abs())
		if d.Abs() > time.Millisecond {
			t.Errorf("Plot point %d (z %v) is at %s; its packet was captured at %s (%v apart)", i, p.Y, nsDate(p.ReceiveTime), nsDate(fmt.Sprint(want)), d)
		}
		fine = fine || got.Int64()%int64(time.Millisecond) != 0
	}
	if !fine {
		t.Errorf("every plotted time is a whole millisecond: Studio's own clock, not the capture's")
	}
	t.Logf("plotted times differ from tcpdump's by at most %v", worst)
	// Studio's time axis (every panel's, the Plot's x axis) runs from its
	// start time: within the capture, not before it began (not 1970).
	if len(pts) > 0 {
		start, end := fmt.Sprint(began.UnixNano()), fmt.Sprint(ended.UnixNano())
		if r.StartTime == "" || nsLess(r.StartTime, start) || nsLess(pts[0].ReceiveTime, r.StartTime) {
			t.Errorf("Studio's start time is %s (%s); want one within the capture, from %s (dissect started) to the first point %s",
				r.StartTime, nsDate(r.StartTime), nsDate(start), nsDate(pts[0].ReceiveTime))
		}
		if r.EndTime == "" || nsLess(r.EndTime, pts[len(pts)-1].ReceiveTime) || nsLess(end, r.EndTime) {
			t.Errorf("Studio's end time is %s (%s); want one from the last point %s to %s (dissect stopped)",
				r.EndTime, nsDate(r.EndTime), nsDate(pts[len(pts)-1].ReceiveTime), nsDate(end))
		}
	}
}

// liveSession plays both ends of a Deltarobot connection to ln: the
// handshake, warm-up positions from the leader until Studio plots one,
// then livePositions positions, 150 ms apart (each read by the follower
// before the next, so that each is its own packet), until Studio plots
// the last; end of transmission both ways.
func liveSession(t *testing.T, ln net.Listener, s *Studio) {
	t.Helper()
	follower, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	leader, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	exchange := func(from, to net.Conn, b []byte) {
		t.Helper()
		if _, err := from.Write(b); err != nil {
			t.Fatal(err)
		}
		to.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(to, make([]byte, len(b))); err != nil {
			t.Fatal(err)
		}
	}
	exchange(follower, leader, drHello)
	exchange(leader, follower, drHello)
	// Studio subscribes to the position topic once it learns of it, with
	// the first position; on a loaded machine that can take seconds.
	for i := 0; ; i++ {
		if n, _ := s.Plot(); n > 0 {
			break
		}
		if i == 600 {
			t.Fatalf("Studio plotted none of %d warm-up positions sent over 90 s:\n%s", i, s.Stderr())
		}
		exchange(leader, follower, drPosition(0.1, 0.2, warmUpZ(i), 0))
		time.Sleep(150 * time.Millisecond)
	}
	for i := range livePositions {
		time.Sleep(150 * time.Millisecond)
		exchange(leader, follower, drPosition(0.1, 0.2, liveZ(i), 0))
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, last := s.Plot()
		if y, err := strconv.ParseFloat(last, 64); err == nil && y == float64(liveZ(livePositions-1)) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("Studio had not plotted the last position 60 s after it was sent (its last point: %s)", last)
			break
		}
	}
	exchange(leader, follower, drEOT)
	exchange(follower, leader, drEOT)
}

// positionTimes reads tcpdump's file: the capture time (nanoseconds) of
// each position the leader (port) sent, by the float32 bits of its z.
func positionTimes(t *testing.T, file string, port int) map[uint32]int64 {
	t.Helper()
	times := map[uint32]int64{}
	eachPacket(t, file, func(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) {
		tcp, _ := gopacket.NewPacket(data, link, gopacket.Default).Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tcp != nil && int(tcp.SrcPort) == port && len(tcp.Payload) == 18 && tcp.Payload[0] == 0x03 {
			times[binary.LittleEndian.Uint32(tcp.Payload[10:14])] = ci.Timestamp.UnixNano()
		}
	})
	return times
}

// tcpdumpRun is tcpdump writing a file.
type tcpdumpRun struct{ p *childtest.Process }

// startTcpdump captures the packets of filter on lo into file, stamped
// to the nanosecond, each written as it comes; it returns once tcpdump
// listens.
func startTcpdump(t *testing.T, tcpdump, file, filter string) *tcpdumpRun {
	t.Helper()
	listening := make(chan struct{})
	once := sync.Once{}
	td := &tcpdumpRun{childtest.Start(t, childtest.Options{Line: func(line string) {
		if strings.Contains(line, "listening on") {
			once.Do(func() { close(listening) })
		}
	}}, tcpdump, "-i", "lo", "-n", "-U", "--immediate-mode", "--time-stamp-precision=nano", "-w", file, filter)}
	select {
	case <-listening:
	case <-td.p.Ended():
		t.Fatalf("tcpdump ended before listening: %v\n%s", td.p.Err(), td.p.Stderr())
	case <-time.After(30 * time.Second):
		t.Fatal("tcpdump: not listening after 30 s")
	}
	return td
}

// stop ends tcpdump (it writes out what it has).
func (td *tcpdumpRun) stop(t *testing.T) {
	t.Helper()
	td.p.Cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-td.p.Ended():
	case <-time.After(30 * time.Second):
		t.Error("tcpdump did not stop in 30 s")
	}
}
