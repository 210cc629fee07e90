//go:build linux

package main

// The serial tests need no hardware: pseudo-terminal pairs stand for the
// wires and the device. The test writes what a wire carries on a pair's
// master; the command opens the slave side as its "USB-UART adapter".
//
// The byte streams are Deltarobot messages built by hand from the test
// vectors of protocols.md §4.3 (and HandControl frames from §1.9, once that
// dissector is registered), so every expected type, offset, length and
// field value below was checked against the spec, not taken from a run.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/dissect-tools/dissect/internal/longtest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/capture/serial"
)

// Deltarobot messages, protocols.md §4.3.
var (
	drMagic    = unhex("01 30 44 65 6c 74 61 52 56 72")
	drVersion  = unhex("02 20 01 00 00 00")
	drPing     = unhex("04 30 ef cd ab 89 67 45 23 01")
	drPong     = unhex("05 30 ef cd ab 89 67 45 23 01")
	drEOTBye   = unhex("06 f0 03 00 00 00 62 79 65")
	drPosition = unhex("03 40 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 00 00")
	drCurve    = unhex("09 f0 18 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 80 3f 00 00 00 3f 00 00 80 bf")
)

func unhex(s string) []byte {
	var b []byte
	for _, f := range strings.Fields(s) {
		v, err := strconv.ParseUint(f, 16, 8)
		if err != nil {
			panic(err)
		}
		b = append(b, byte(v))
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

const serialWait = 5 * time.Second

// syncBuffer is a bytes.Buffer the command writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until cond holds, failing after serialWait with what.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(serialWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitLines waits until out holds n lines.
func waitLines(t *testing.T, out *syncBuffer, n int) {
	t.Helper()
	waitFor(t, strconv.Itoa(n)+" output lines, have:\n"+out.String(), func() bool {
		return strings.Count(out.String(), "\n") >= n
	})
}

// liveRun is a 'dissect serial' command running in-process under a context
// the test cancels (what Ctrl-C does through signal.NotifyContext).
type liveRun struct {
	stdout, stderr syncBuffer
	cancel         context.CancelFunc
	done           chan struct{} // closed when the command returned
	err            error         // its error, once done is closed
}

func startLive(t *testing.T, args ...string) *liveRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &liveRun{cancel: cancel, done: make(chan struct{})}
	root := newRootCmd(strings.NewReader(""), &r.stdout, &r.stderr)
	root.SetArgs(args)
	go func() {
		r.err = root.ExecuteContext(ctx)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(serialWait):
		}
	})
	return r
}

// stop cancels the run as Ctrl-C would and returns its error.
func (r *liveRun) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		return r.err
	case <-time.After(serialWait):
		t.Fatal("the command did not stop after cancellation")
		return nil
	}
}

// wire is a pseudo-terminal standing for one wire of the link (or for the
// device of a proxy).
func wire(t *testing.T) *serial.PTY {
	t.Helper()
	p, err := serial.OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func write(t *testing.T, f *os.File, b []byte) {
	t.Helper()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// readExactly reads len(want) bytes from f and compares them with want.
func readExactly(t *testing.T, f *os.File, want []byte) {
	t.Helper()
	f.SetReadDeadline(time.Now().Add(serialWait))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(f, got); err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s received % x\nwant % x", f.Name(), got, want)
	}
}

// wantRec is an expected record: type, direction (0 host→device), offset,
// length, and fields that must be present with these JSON values.
type wantRec struct {
	typ    string
	dir    int
	offset int64
	length int64
	fields map[string]string
}

// checkRecords compares the JSON Lines output of a serial run with want.
func checkRecords(t *testing.T, out, proto, link string, want []wantRec) []jsonRecord {
	t.Helper()
	recs := parseJSONL(t, out)
	tiling(t, recs)
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(recs), len(want), out)
	}
	for i, w := range want {
		r := recs[i]
		src, dst := "host", link
		if w.dir == 1 {
			src, dst = link, "host"
		}
		if r.Type != w.typ || r.Transport != "serial" || *r.Proto != proto || *r.Stream != 0 || r.Src != src || r.Dst != dst || *r.Offset != w.offset || *r.Length != w.length {
			t.Fatalf("record %d: %s %s %s stream %d %s -> %s offset %d length %d\nwant %s %s serial stream 0 %s -> %s offset %d length %d",
				i, *r.Proto, r.Type, r.Transport, *r.Stream, r.Src, r.Dst, *r.Offset, *r.Length, proto, w.typ, src, dst, w.offset, w.length)
		}
		if len(r.Warnings) > 0 {
			t.Fatalf("record %d (%s): warnings %q", i, r.Type, r.Warnings)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r.Fields, &fields); err != nil {
			t.Fatal(err)
		}
		for k, v := range w.fields {
			if got := string(fields[k]); got != v {
				t.Fatalf("record %d (%s): field %s = %s, want %s", i, r.Type, k, got, v)
			}
		}
	}
	return recs
}

// Deltarobot conversation over a serial link, in the order the test sends
// it; the records each step must produce (offsets per direction).
var drSteps = []struct {
	dir   int
	parts [][]byte // written one after the other (a message split across reads)
	recs  []wantRec
}{
	{0, [][]byte{drMagic[:4], cat(drMagic[4:], drVersion)}, []wantRec{
		{"protocol_magic", 0, 0, 10, map[string]string{"magic": `"DeltaRVr"`}},
		{"protocol_version", 0, 10, 6, map[string]string{"version": "1"}},
	}},
	{1, [][]byte{cat(drMagic, drVersion)}, []wantRec{
		{"protocol_magic", 1, 0, 10, map[string]string{"magic": `"DeltaRVr"`}},
		{"protocol_version", 1, 10, 6, map[string]string{"version": "1"}},
	}},
	{0, [][]byte{drPing}, []wantRec{
		{"ping", 0, 16, 10, map[string]string{"id": "81985529216486895"}},
	}},
	{1, [][]byte{cat(drPong, drPosition)}, []wantRec{
		{"pong", 1, 16, 10, map[string]string{"id": "81985529216486895"}},
		{"actuator_position", 1, 26, 18, map[string]string{"x": "1.0", "y": "2.0", "z": "3.0", "u": "0.0"}},
	}},
	{0, [][]byte{drCurve}, []wantRec{
		{"curve", 0, 26, 30, map[string]string{"points": "[[0.0,0.0,0.0],[1.0,0.5,-1.0]]"}},
	}},
	{1, [][]byte{drEOTBye}, []wantRec{
		{"end_of_transmission", 1, 44, 9, map[string]string{"reason": `"bye"`}},
	}},
}

// drBytes returns the bytes the conversation sends in direction dir.
func drBytes(dir int) []byte {
	var b []byte
	for _, s := range drSteps {
		if s.dir == dir {
			b = append(b, cat(s.parts...)...)
		}
	}
	return b
}

func drWant() []wantRec {
	var w []wantRec
	for _, s := range drSteps {
		w = append(w, s.recs...)
	}
	return w
}

// checkSaved reads the -w file back and checks it holds the link's reads:
// one interface named link, link type 147, each direction's bytes in order.
func checkSaved(t *testing.T, path, link string, want [2][]byte) int {
	t.Helper()
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got [2][]byte
	n := 0
	var last time.Time
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s after %d packets: %v", path, n, err)
		}
		n++
		if p.LinkType != capture.LinkUser0 || p.InterfaceName != link || p.Interface != 0 {
			t.Fatalf("packet %d: link type %d, interface %d %q", n, p.LinkType, p.Interface, p.InterfaceName)
		}
		if p.Time.Before(last) {
			t.Fatalf("packet %d: time goes back", n)
		}
		last = p.Time
		switch p.Direction {
		case capture.DirOutbound:
			got[0] = append(got[0], p.Data...)
		case capture.DirInbound:
			got[1] = append(got[1], p.Data...)
		default:
			t.Fatalf("packet %d: direction %d", n, p.Direction)
		}
	}
	for d := range 2 {
		if !bytes.Equal(got[d], want[d]) {
			t.Fatalf("%s direction %d: saved % x\nwant % x", path, d, got[d], want[d])
		}
	}
	return n
}

// checkTshark validates the saved file with tshark when it is installed.
func checkTshark(t *testing.T, path string, packets int) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Log("tshark not installed: the saved pcapng is not cross-checked")
		return
	}
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "frame.interface_name", "-e", "frame.p2p_dir", "-e", "frame.encap_type").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", path, err)
	}
	if n := strings.Count(string(out), "\n"); n != packets {
		t.Fatalf("tshark shows %d packets, dissect read %d:\n%s", n, packets, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		// frame.p2p_dir: 0 sent (outbound), 1 received (inbound); encap 45 is
		// Wireshark's WTAP_ENCAP_USER0 (LINKTYPE_USER0 147).
		if len(f) != 3 || f[0] == "" || (f[1] != "0" && f[1] != "1") || f[2] != "45" {
			t.Fatalf("tshark fields %q", line)
		}
	}
}

// checkReadBack decodes the saved file and compares with the live output.
func checkReadBack(t *testing.T, path, live string, args ...string) {
	t.Helper()
	out, errOut, code := cli(t, append(args, "--no-summary", path)...)
	if code != 0 {
		t.Fatalf("dissect %s: exit %d: %s", path, code, errOut)
	}
	if out != live {
		t.Fatalf("reading the saved file back differs from the live run: %s\nlive:\n%s\nfile:\n%s", firstDiff(live, out), live, out)
	}
}

// TestSerialTap taps a Deltarobot link with two "adapters", saves it, and
// reads the file back.
func TestSerialTap(t *testing.T) {
	hostWire, devWire := wire(t), wire(t)
	link := hostWire.Path + "+" + devWire.Path
	pcap := filepath.Join(t.TempDir(), "link.pcapng")
	r := startLive(t, "serial", "-o", "json", "-d", "serial,deltarobot", "-w", pcap, hostWire.Path, devWire.Path)
	waitFor(t, "the tap to start", func() bool { return strings.Contains(r.stderr.String(), "Ctrl-C to stop") })

	lines := 0
	for _, s := range drSteps {
		w := hostWire
		if s.dir == 1 {
			w = devWire
		}
		for i, p := range s.parts {
			write(t, w.Master, p)
			if i < len(s.parts)-1 {
				time.Sleep(20 * time.Millisecond) // let the part be read on its own
			}
		}
		lines += len(s.recs)
		waitLines(t, &r.stdout, lines)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("after cancellation: %v", err)
	}
	if !strings.Contains(r.stderr.String(), "== dissect summary ==") {
		t.Fatalf("no summary on stderr:\n%s", r.stderr.String())
	}
	live := r.stdout.String()
	checkRecords(t, live, "deltarobot", link, drWant())
	n := checkSaved(t, pcap, link, [2][]byte{drBytes(0), drBytes(1)})
	// Each step waited for its records, so its reads are apart from the
	// next step's: at least one packet per step.
	if n < len(drSteps) {
		t.Fatalf("%d packets saved, want at least one per step (%d)", n, len(drSteps))
	}
	checkTshark(t, pcap, n)
	checkReadBack(t, pcap, live, "-o", "json", "-d", "serial,deltarobot")
}

// TestSerialTapDetects runs without -d: the Deltarobot handshake is found
// by content, and one port taps one direction.
func TestSerialTapDetects(t *testing.T) {
	devWire := wire(t)
	r := startLive(t, "serial", "-o", "json", "--device-tx", devWire.Path)
	waitFor(t, "the tap to start", func() bool { return strings.Contains(r.stderr.String(), "Ctrl-C to stop") })
	write(t, devWire.Master, cat(drMagic, drVersion, drPong))
	waitLines(t, &r.stdout, 3)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, r.stdout.String(), "deltarobot", devWire.Path, []wantRec{
		{"protocol_magic", 1, 0, 10, nil},
		{"protocol_version", 1, 10, 6, nil},
		{"pong", 1, 16, 10, map[string]string{"id": "81985529216486895"}},
	})
}

// TestSerialProxy plays the host on the --link path and the device on a
// pseudo-terminal standing for /dev/ttyUSB0.
func TestSerialProxy(t *testing.T) {
	dev := wire(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "ttyPROSTHESIS")
	pcap := filepath.Join(dir, "proxy.pcapng")
	r := startLive(t, "serial", "-o", "json", "-d", "serial,deltarobot", "-w", pcap, "--proxy", dev.Path, "--link", link)
	waitFor(t, "the proxy's link", func() bool { _, err := os.Lstat(link); return err == nil })
	host, err := os.OpenFile(link, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()

	lines := 0
	for _, s := range drSteps {
		from, to := host, dev.Master
		if s.dir == 1 {
			from, to = dev.Master, host
		}
		for _, p := range s.parts {
			write(t, from, p)
			readExactly(t, to, p) // forwarded unchanged
		}
		lines += len(s.recs)
		waitLines(t, &r.stdout, lines)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("after cancellation: %v", err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link is still there after the run: %v", err)
	}
	live := r.stdout.String()
	checkRecords(t, live, "deltarobot", dev.Path, drWant())
	n := checkSaved(t, pcap, dev.Path, [2][]byte{drBytes(0), drBytes(1)})
	checkTshark(t, pcap, n)
	checkReadBack(t, pcap, live, "-o", "json", "-d", "serial,deltarobot")
}

// asyncRun runs the whole command line (run, as main does) in the
// background.
type asyncRun struct {
	stdout, stderr syncBuffer
	code           chan int
}

func startRun(t *testing.T, args ...string) *asyncRun {
	t.Helper()
	r := &asyncRun{code: make(chan int, 1)}
	go func() { r.code <- run(args, strings.NewReader(""), &r.stdout, &r.stderr) }()
	return r
}

func (r *asyncRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case c := <-r.code:
		return c
	case <-time.After(serialWait):
		t.Fatal("the command did not end")
		return 0
	}
}

// TestSerialUnplugged closes the "adapter" mid-run: a one-line error naming
// the port, exit 1, and what was read before is decoded and saved.
func TestSerialUnplugged(t *testing.T) {
	w := wire(t)
	pcap := filepath.Join(t.TempDir(), "cut.pcapng")
	r := startRun(t, "serial", "-o", "json", "-d", "serial,deltarobot", "-w", pcap, w.Path)
	waitFor(t, "the tap to start", func() bool { return strings.Contains(r.stderr.String(), "Ctrl-C to stop") })
	sent := cat(drMagic, drVersion, drPing[:4]) // the ping is cut short by the unplugging
	write(t, w.Master, sent)
	waitLines(t, &r.stdout, 2)
	// The file is flushed once the reads are caught up with: wait until it
	// holds every byte, then unplug.
	waitFor(t, "the saved file to hold every byte", func() bool {
		src, err := capture.OpenFile(pcap)
		if err != nil {
			return false
		}
		defer src.Close()
		n := 0
		for {
			p, err := src.Next()
			if err != nil {
				return n == len(sent)
			}
			n += len(p.Data)
		}
	})
	w.Master.Close()
	if code := r.wait(t); code != exitError {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitError, r.stderr.String())
	}
	errLine := ""
	for _, l := range strings.Split(r.stderr.String(), "\n") {
		if strings.HasPrefix(l, "dissect: "+w.Path+": ") {
			errLine = l
		}
	}
	if !strings.HasPrefix(errLine, "dissect: "+w.Path+": disconnected") {
		t.Fatalf("no one-line error naming the port; stderr:\n%s", r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "== dissect summary ==") {
		t.Fatal("no summary")
	}
	live := r.stdout.String()
	checkRecords(t, live, "deltarobot", w.Path, []wantRec{
		{"protocol_magic", 0, 0, 10, nil},
		{"protocol_version", 0, 10, 6, nil},
		{"skipped", 0, 16, 4, nil},
	})
	checkSaved(t, pcap, w.Path, [2][]byte{sent, nil})
	checkReadBack(t, pcap, live, "-o", "json", "-d", "serial,deltarobot")
}

func TestSerialMissingPort(t *testing.T) {
	missing := "/nonexistent/ttyUSB9"
	pcap := filepath.Join(t.TempDir(), "never.pcapng")
	out, errOut, code := cli(t, "serial", "-w", pcap, missing)
	if code != exitError || out != "" || errOut != "dissect: "+missing+": no such device\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(pcap); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a file was created although no port opened")
	}
	// The second port is missing: it is the one named.
	w := wire(t)
	_, errOut, code = cli(t, "serial", "--host-tx", w.Path, "--device-tx", missing)
	if code != exitError || errOut != "dissect: "+missing+": no such device\n" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// Proxy mode: no link is left behind.
	link := filepath.Join(t.TempDir(), "ttyX")
	_, errOut, code = cli(t, "serial", "--proxy", missing, "--link", link)
	if code != exitError || errOut != "dissect: "+missing+": no such device\n" {
		t.Fatalf("proxy: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a link was made for a missing device")
	}
}

func TestSerialUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serial"},
		{"serial", "/dev/a", "/dev/b", "/dev/c"},
		{"serial", "/dev/a", "/dev/a"},
		{"serial", "--host-tx", "/dev/a", "/dev/b"},
		{"serial", "--proxy", "/dev/a"},
		{"serial", "--link", "/tmp/x"},
		{"serial", "--proxy", "/dev/a", "--link", "/tmp/x", "/dev/b"},
		{"serial", "--parity", "weird", "/dev/a"},
		{"serial", "--stop-bits", "3", "/dev/a"},
		{"serial", "--data-bits", "9", "/dev/a"},
		{"serial", "--baud", "0", "/dev/a"},
		{"serial", "-o", "xml", "/dev/a"},
		{"serial", "-d", "serial,nosuch", "/dev/a"},
		{"serial", "-r", "file.pcap", "/dev/a"},
	} {
		out, errOut, code := cli(t, args...)
		if code != exitUsage || out != "" || !strings.HasPrefix(errOut, "dissect: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestSerialHandControl decodes HandControl frames (protocols.md §1.9,
// each with a correct CRC) through a tap, detected by their SFD.
func TestSerialHandControl(t *testing.T) {
	if protos, _, _ := cli(t, "protocols"); !strings.Contains(protos, "handcontrol") {
		t.Skip("the handcontrol dissector is not registered in dissect/all yet; " +
			"this test runs HandControl frames through the serial tap once it is")
	}
	var (
		startTelemetry = unhex("fd ba dc 01 50 b4 11 ff 0e 02 00 08 64 ed")
		ack            = unhex("fd ba dc 01 50 b4 11 ff 01 00 00 6b")
		setPositions   = unhex("fd ba dc 01 50 b4 11 ff 0b 0a 00 08 0a 10 14 18 1e 20 28 28 32 45")
		errAlready     = unhex("fd ba dc 01 50 b4 11 ff 02 1b 00 0a 19 54 65 6c 65 6d 65 74 72 79 20 61 6c 72 65 61 64 79 20 73 74 61 72 74 65 64 dd")
		stopTelemetry  = unhex("fd ba dc 01 50 b4 11 ff 0f 00 00 47")
	)
	hostWire, devWire := wire(t), wire(t)
	link := hostWire.Path + "+" + devWire.Path
	pcap := filepath.Join(t.TempDir(), "hand.pcapng")
	r := startLive(t, "serial", "-o", "json", "-w", pcap, hostWire.Path, devWire.Path)
	waitFor(t, "the tap to start", func() bool { return strings.Contains(r.stderr.String(), "Ctrl-C to stop") })
	steps := []struct {
		w     *serial.PTY
		frame []byte
	}{
		{hostWire, startTelemetry}, {devWire, ack},
		{hostWire, setPositions}, {devWire, errAlready},
		{hostWire, stopTelemetry}, {devWire, ack},
	}
	for i, s := range steps {
		// Split each frame across two reads, inside the SFD.
		write(t, s.w.Master, s.frame[:5])
		time.Sleep(10 * time.Millisecond)
		write(t, s.w.Master, s.frame[5:])
		waitLines(t, &r.stdout, i+1)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	live := r.stdout.String()
	checkRecords(t, live, "handcontrol", link, []wantRec{
		{"StartTelemetry", 0, 0, 14, map[string]string{"code": "14", "role": `"request"`, "crc": "237", "crc_ok": "true", "payload": `{"interval_ms":100}`}},
		{"ACK", 1, 0, 12, map[string]string{"code": "1", "role": `"response"`, "crc": "107", "crc_ok": "true", "request_code": "14"}},
		{"SetPositions", 0, 14, 22, map[string]string{"code": "11", "role": `"request"`, "crc": "69", "crc_ok": "true"}},
		{"ERR", 1, 12, 39, map[string]string{"code": "2", "role": `"response"`, "crc": "221", "crc_ok": "true", "request_code": "11", "payload": `{"message":"Telemetry already started"}`}},
		{"StopTelemetry", 0, 36, 12, map[string]string{"code": "15", "role": `"request"`, "crc": "71", "crc_ok": "true"}},
		{"ACK", 1, 51, 12, map[string]string{"code": "1", "role": `"response"`, "crc": "107", "crc_ok": "true", "request_code": "15"}},
	})
	var want [2][]byte
	for _, s := range steps {
		d := 0
		if s.w == devWire {
			d = 1
		}
		want[d] = append(want[d], s.frame...)
	}
	n := checkSaved(t, pcap, link, want)
	checkTshark(t, pcap, n)
	checkReadBack(t, pcap, live, "-o", "json")
}

// startProcess runs dissect with args in a child process (this test binary).
func startProcess(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(js))
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &stdout, &stderr
}

// waitExit waits for the child and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(serialWait):
		t.Fatal("the process did not exit")
		return 0
	}
}

// TestSerialSignals sends a real SIGINT to a tap and a real SIGTERM to a
// proxy: both stop cleanly with exit 0, the output and the summary
// written, the file complete and the proxy's link removed.
func TestSerialSignals(t *testing.T) {
	longtest.Skip(t)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			w := wire(t)
			dir := t.TempDir()
			pcap := filepath.Join(dir, "sig.pcapng")
			link := filepath.Join(dir, "ttyLINK")
			args := []string{"serial", "-o", "json", "-d", "serial,deltarobot", "-w", pcap}
			if sig == os.Interrupt {
				args = append(args, w.Path)
			} else {
				args = append(args, "--proxy", w.Path, "--link", link)
			}
			cmd, stdout, stderr := startProcess(t, args...)
			waitFor(t, "the child to start; stderr: "+stderr.String(), func() bool { return strings.Contains(stderr.String(), "Ctrl-C to stop") })
			sent := cat(drMagic, drVersion)
			if sig == os.Interrupt {
				write(t, w.Master, sent) // the host's wire
			} else {
				host, err := os.OpenFile(link, os.O_RDWR|syscall.O_NOCTTY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer host.Close()
				write(t, host, sent)
				readExactly(t, w.Master, sent) // the device got it
			}
			waitLines(t, stdout, 2)
			cmd.Process.Signal(sig)
			if code := waitExit(t, cmd); code != 0 {
				t.Fatalf("exit %d after %v; stderr:\n%s", code, sig, stderr.String())
			}
			if !strings.Contains(stderr.String(), "== dissect summary ==") {
				t.Fatalf("no summary:\n%s", stderr.String())
			}
			checkRecords(t, stdout.String(), "deltarobot", w.Path, []wantRec{
				{"protocol_magic", 0, 0, 10, nil},
				{"protocol_version", 0, 10, 6, nil},
			})
			checkSaved(t, pcap, w.Path, [2][]byte{sent, nil})
			if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("the proxy's link was not removed")
			}
		})
	}
}
