package serial

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// TestTapTwoPorts taps a link through two pseudo-terminals standing for two
// USB-UART adapters: what the test writes on the masters is what the wires
// carry. Writes alternate, each waited for, so the merged order is known.
func TestTapTwoPorts(t *testing.T) {
	hostWire, devWire := newPTY(t), newPTY(t)
	tap, err := OpenTap(TapConfig{HostTx: hostWire.Path, DeviceTx: devWire.Path, Mode: DefaultMode(), Interface: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	link := hostWire.Path + "+" + devWire.Path
	if tap.Link() != link {
		t.Fatalf("link %q, want %q", tap.Link(), link)
	}
	steps := []struct {
		wire *PTY
		dir  capture.Direction
		data []byte
	}{
		{hostWire, capture.DirOutbound, []byte("\x01\x30DeltaRVr")},
		{devWire, capture.DirInbound, []byte("\x01\x30DeltaRVr")},
		{hostWire, capture.DirOutbound, allBytes()},
		{devWire, capture.DirInbound, []byte{0x0d, 0x0a, 0x03, 0x04, 0x11, 0x13, 0x1a, 0x7f, 0xff}},
		{hostWire, capture.DirOutbound, []byte{0}},
	}
	var all []capture.Packet
	for i, s := range steps {
		if _, err := s.wire.Master.Write(s.data); err != nil {
			t.Fatal(err)
		}
		want := [2]int{}
		if s.dir == capture.DirOutbound {
			want[0] = len(s.data)
		} else {
			want[1] = len(s.data)
		}
		ps := collect(t, tap, want[0], want[1])
		if got := joined(ps, s.dir); !bytes.Equal(got, s.data) {
			t.Fatalf("step %d: read % x, want % x", i, got, s.data)
		}
		all = append(all, ps...)
	}
	checkPackets(t, all, link, 3)
	if tap.Pending() != 0 {
		t.Fatalf("Pending = %d after every read was taken", tap.Pending())
	}
}

// TestTapOnePort taps only the device's TX line.
func TestTapOnePort(t *testing.T) {
	devWire := newPTY(t)
	tap, err := OpenTap(TapConfig{DeviceTx: devWire.Path, Mode: Mode{Baud: 9600, DataBits: 7, Parity: ParityEven, StopBits: StopBits2}})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	data := []byte("telemetry\r\n")
	devWire.Master.Write(data)
	ps := collect(t, tap, 0, len(data))
	checkPackets(t, ps, devWire.Path, 0)
	if got := joined(ps, capture.DirInbound); !bytes.Equal(got, data) {
		t.Fatalf("read %q, want %q", got, data)
	}
}

// TestTapDisconnect unplugs the "device" (closes the pseudo-terminal's
// master) in the middle of a run: the reads before are returned, then an
// error naming the port.
func TestTapDisconnect(t *testing.T) {
	wire := newPTY(t)
	tap, err := OpenTap(TapConfig{HostTx: wire.Path, Mode: DefaultMode()})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	wire.Master.Write([]byte("before"))
	ps := collect(t, tap, 6, 0)
	if string(joined(ps, capture.DirOutbound)) != "before" {
		t.Fatalf("read %q", joined(ps, capture.DirOutbound))
	}
	wire.Master.Close()
	_, err = nextWithin(t, tap)
	if !isPortError(err, wire.Path, ErrDisconnected) {
		t.Fatalf("after the master closed: %v, want a disconnected error naming %s", err, wire.Path)
	}
	if !strings.HasPrefix(err.Error(), wire.Path+": disconnected") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error text %q", err)
	}
	t.Logf("error: %v", err)
	// The error sticks.
	if _, err2 := tap.Next(); err2 != err {
		t.Fatalf("second Next: %v, want the same error", err2)
	}
}

// TestTapCloseDrains checks that Close unblocks a waiting Next and that
// reads queued before Close are still handed out.
func TestTapCloseDrains(t *testing.T) {
	wire := newPTY(t)
	tap, err := OpenTap(TapConfig{HostTx: wire.Path, Mode: DefaultMode()})
	if err != nil {
		t.Fatal(err)
	}
	wire.Master.Write([]byte("queued"))
	deadline := time.Now().Add(waitTime)
	for tap.Pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing was queued")
		}
		time.Sleep(time.Millisecond)
	}
	if err := tap.Close(); err != nil {
		t.Fatal(err)
	}
	var data []byte
	for {
		p, err := nextWithin(t, tap)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, p.Data...)
	}
	if string(data) != "queued" {
		t.Fatalf("drained %q, want %q", data, "queued")
	}
	if err := tap.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	// Close while Next waits.
	tap2, err := OpenTap(TapConfig{HostTx: wire.Path, Mode: DefaultMode()})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		tap2.Close()
	}()
	if _, err := nextWithin(t, tap2); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v, want io.EOF", err)
	}
}

func TestOpenErrors(t *testing.T) {
	missing := "/nonexistent/ttyUSB9"
	_, err := OpenTap(TapConfig{HostTx: missing, Mode: DefaultMode()})
	if !isPortError(err, missing, ErrNotFound) || err.Error() != missing+": no such device" {
		t.Fatalf("missing port: %v", err)
	}

	// A second port that fails: the error names it.
	wire := newPTY(t)
	_, err = OpenTap(TapConfig{HostTx: wire.Path, DeviceTx: missing, Mode: DefaultMode()})
	if !isPortError(err, missing, ErrNotFound) {
		t.Fatalf("missing second port: %v", err)
	}

	plain := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(plain, []byte("x"), 0o600)
	_, err = OpenTap(TapConfig{DeviceTx: plain, Mode: DefaultMode()})
	if !isPortError(err, plain, ErrNotSerial) || !strings.HasPrefix(err.Error(), plain+": not a serial port") {
		t.Fatalf("regular file: %v", err)
	}

	if _, err := OpenTap(TapConfig{HostTx: wire.Path, DeviceTx: wire.Path, Mode: DefaultMode()}); err == nil {
		t.Fatal("the same port twice was accepted")
	}
	if _, err := OpenTap(TapConfig{Mode: DefaultMode()}); err == nil {
		t.Fatal("a tap with no port was accepted")
	}
	if _, err := OpenTap(TapConfig{HostTx: wire.Path, Mode: Mode{Baud: 115200, DataBits: 9}}); err == nil {
		t.Fatal("9 data bits were accepted")
	}
}

// TestOpenBusyAndPermission needs an unprivileged user: root bypasses both
// the exclusive-open lock and file permissions.
func TestOpenBusyAndPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which ignores exclusive opens and file modes")
	}
	wire := newPTY(t)
	p, err := Open(wire.Path, DefaultMode())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = Open(wire.Path, DefaultMode())
	if !isPortError(err, wire.Path, ErrBusy) || !strings.HasPrefix(err.Error(), wire.Path+": busy") {
		t.Fatalf("second open: %v", err)
	}

	wire2 := newPTY(t)
	if err := os.Chmod(wire2.Path, 0); err != nil {
		t.Skip("cannot chmod the pseudo-terminal:", err)
	}
	_, err = Open(wire2.Path, DefaultMode())
	if !isPortError(err, wire2.Path, ErrPermission) || !strings.Contains(err.Error(), "dialout") {
		t.Fatalf("unreadable port: %v", err)
	}
}

// TestNewTapReaders drives a tap with in-memory readers: both inputs end
// with io.EOF, so the tap ends with io.EOF after every byte.
func TestNewTapReaders(t *testing.T) {
	out := &chunkReader{chunks: [][]byte{[]byte("ab"), []byte("c"), bytes.Repeat([]byte{7}, ReadSize+10)}}
	in := &chunkReader{chunks: [][]byte{[]byte("xyz")}}
	tap, err := NewTap("mem", 1, Input{Name: "out", R: out, Dir: capture.DirOutbound}, Input{Name: "in", R: in, Dir: capture.DirInbound})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	ps := collect(t, tap, 3+ReadSize+10, 3)
	checkPackets(t, ps, "mem", 1)
	wantOut := append([]byte("abc"), bytes.Repeat([]byte{7}, ReadSize+10)...)
	if !bytes.Equal(joined(ps, capture.DirOutbound), wantOut) || string(joined(ps, capture.DirInbound)) != "xyz" {
		t.Fatal("bytes differ")
	}
	if _, err := nextWithin(t, tap); !errors.Is(err, io.EOF) {
		t.Fatalf("after both inputs ended: %v, want io.EOF", err)
	}

	if _, err := NewTap("x", 0); err == nil {
		t.Fatal("no inputs accepted")
	}
	if _, err := NewTap("x", 0, Input{Name: "a", R: in, Dir: capture.DirUnknown}); err == nil {
		t.Fatal("unknown direction accepted")
	}
}

// TestTapReaderErrors: a read error ends the tap with an error naming the
// input, after the data before it; so do endless empty reads.
func TestTapReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	tap, err := NewTap("mem", 0, Input{Name: "port-a", R: &chunkReader{chunks: [][]byte{[]byte("ok")}, err: boom}, Dir: capture.DirInbound})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	collect(t, tap, 0, 2)
	_, err = nextWithin(t, tap)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "port-a: read: boom") {
		t.Fatalf("got %v", err)
	}

	tap2, err := NewTap("mem", 0, Input{Name: "lazy", R: zeroReader{}, Dir: capture.DirInbound})
	if err != nil {
		t.Fatal(err)
	}
	defer tap2.Close()
	if _, err := nextWithin(t, tap2); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("endless empty reads: %v", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestModeFlags(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Parity
	}{{"none", ParityNone}, {"N", ParityNone}, {"odd", ParityOdd}, {"Even", ParityEven}, {"e", ParityEven}, {"mark", ParityMark}, {"space", ParitySpace}, {"s", ParitySpace}} {
		p, err := ParseParity(c.in)
		if err != nil || p != c.want {
			t.Errorf("ParseParity(%q) = %v, %v; want %v", c.in, p, err, c.want)
		}
	}
	for _, bad := range []string{"", "x", "nones", "1"} {
		if _, err := ParseParity(bad); err == nil {
			t.Errorf("ParseParity(%q) accepted", bad)
		}
	}
	for in, want := range map[string]StopBits{"1": StopBits1, "1.5": StopBits1_5, "2": StopBits2} {
		s, err := ParseStopBits(in)
		if err != nil || s != want {
			t.Errorf("ParseStopBits(%q) = %v, %v", in, s, err)
		}
	}
	for _, bad := range []string{"", "0", "3", "1.0", "one"} {
		if _, err := ParseStopBits(bad); err == nil {
			t.Errorf("ParseStopBits(%q) accepted", bad)
		}
	}
	if s := DefaultMode().String(); s != "115200 8N1" {
		t.Errorf("DefaultMode() = %q", s)
	}
	if s := (Mode{Baud: 9600, DataBits: 7, Parity: ParityEven, StopBits: StopBits1_5}).String(); s != "9600 7E1.5" {
		t.Errorf("mode = %q", s)
	}
	for _, m := range []Mode{{Baud: 0, DataBits: 8}, {Baud: 9600, DataBits: 4}, {Baud: 9600, DataBits: 8, Parity: 9}, {Baud: 9600, DataBits: 8, StopBits: 3}} {
		if m.Validate() == nil {
			t.Errorf("%+v validated", m)
		}
	}
}
