package main

import (
	"bytes"
	"errors"
	"github.com/dissect-tools/dissect/internal/longtest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

const wantExtcapInterfaces = `extcap {version=1.0}{help=https://github.com/dissect-tools/dissect/blob/main/docs/serial.md}
interface {value=dissect-serial}{display=dissect serial tap}
`

const wantExtcapDLTs = "dlt {number=147}{name=USER0}{display=Serial link (dissect: one packet per read, direction flags)}\n"

const wantExtcapConfig = `arg {number=0}{call=--host-tx}{display=Host TX port}{type=string}{tooltip=Port whose RX is wired to the host's TX line: hears host to device bytes (empty: not tapped). Serial ports: /dev/ttyUSB0, /dev/ttyUSB1}{placeholder=/dev/ttyUSB0}{group=Ports}
arg {number=1}{call=--device-tx}{display=Device TX port}{type=string}{tooltip=Port whose RX is wired to the device's TX line: hears device to host bytes (empty: not tapped). Serial ports: /dev/ttyUSB0, /dev/ttyUSB1}{placeholder=/dev/ttyUSB1}{group=Ports}
arg {number=2}{call=--baud}{display=Baud rate}{type=integer}{range=1,100000000}{default=115200}{tooltip=Line speed in bits per second}{group=Line}
arg {number=3}{call=--data-bits}{display=Data bits}{type=selector}{tooltip=Data bits per character}{group=Line}
value {arg=3}{value=5}{display=5}
value {arg=3}{value=6}{display=6}
value {arg=3}{value=7}{display=7}
value {arg=3}{value=8}{display=8}{default=true}
arg {number=4}{call=--parity}{display=Parity}{type=selector}{tooltip=Parity bit}{group=Line}
value {arg=4}{value=none}{display=none}{default=true}
value {arg=4}{value=odd}{display=odd}
value {arg=4}{value=even}{display=even}
value {arg=4}{value=mark}{display=mark}
value {arg=4}{value=space}{display=space}
arg {number=5}{call=--stop-bits}{display=Stop bits}{type=selector}{tooltip=Stop bits per character}{group=Line}
value {arg=5}{value=1}{display=1}{default=true}
value {arg=5}{value=1.5}{display=1.5}
value {arg=5}{value=2}{display=2}
`

// TestExtcapPhases runs the discovery phases as Wireshark does, in order,
// with the flags Wireshark adds, with two serial ports present.
func TestExtcapPhases(t *testing.T) {
	ports := func() []string { return []string{"/dev/ttyUSB0", "/dev/ttyUSB1"} }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--extcap-interfaces", "--extcap-version=4.0"}, wantExtcapInterfaces},
		{[]string{"--extcap-interfaces"}, wantExtcapInterfaces},
		{[]string{"--extcap-dlts", "--extcap-interface=dissect-serial", "--extcap-version=4.0"}, wantExtcapDLTs},
		{[]string{"--extcap-dlts", "--extcap-interface", "dissect-serial"}, wantExtcapDLTs},
		{[]string{"--extcap-config", "--extcap-interface", "dissect-serial", "--extcap-version=4.0"}, wantExtcapConfig},
		// Flags of newer Wireshark versions are ignored.
		{[]string{"--extcap-config", "--extcap-interface=dissect-serial", "--extcap-reload-option", "x", "--extcap-future"}, wantExtcapConfig},
	} {
		var stdout bytes.Buffer
		cmd := newExtcapCmd(&stdout, ports)
		cmd.SetArgs(c.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("extcap %q: %v", c.args, err)
		}
		if out := stdout.String(); out != c.want {
			t.Fatalf("extcap %q: %s\ngot:\n%s\nwant:\n%s", c.args, firstDiff(c.want, out), out, c.want)
		}
	}
}

// TestExtcapUsage checks the errors Wireshark shows when it runs the
// interface wrongly.
func TestExtcapUsage(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "never")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "no extcap phase given"},
		{[]string{"--extcap-dlts"}, "--extcap-interface not given"},
		{[]string{"--extcap-config", "--extcap-interface=eth0"}, `--extcap-interface "eth0": unknown interface`},
		{[]string{"--capture", "--extcap-interface=dissect-serial"}, "--capture needs --fifo PATH"},
		{[]string{"--capture", "--extcap-interface=dissect-serial", "--fifo", fifo}, "set Host TX port and/or Device TX port"},
		{[]string{"--capture", "--extcap-interface=dissect-serial", "--fifo", fifo, "--host-tx", "/dev/x", "--parity", "weird"}, `--parity "weird"`},
	} {
		_, errOut, code := cli(t, append([]string{"extcap"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.msg) {
			t.Fatalf("extcap %q: exit %d, stderr:\n%s\nwant exit 2 and %q", c.args, code, errOut, c.msg)
		}
	}
	// A port that cannot be opened: exit 1, the port named.
	missing := filepath.Join(t.TempDir(), "ttyNONE")
	_, errOut, code := cli(t, "extcap", "--capture", "--extcap-interface=dissect-serial", "--fifo", fifo, "--host-tx", missing)
	if code != exitError || !strings.Contains(errOut, missing) {
		t.Fatalf("missing port: exit %d, stderr:\n%s", code, errOut)
	}
	if _, err := os.Stat(fifo); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a failed capture created the fifo path")
	}
}

// extcapFifo makes the fifo Wireshark would make.
func extcapFifo(t *testing.T) string {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "wireshark_extcap_dissect-serial")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo
}

// nextPacket reads the next packet of src, failing after serialWait.
func nextPacket(t *testing.T, src capture.Source) (*capture.Packet, error) {
	t.Helper()
	type res struct {
		p   *capture.Packet
		err error
	}
	ch := make(chan res, 1)
	go func() {
		p, err := src.Next()
		if p != nil {
			q := *p
			q.Data = bytes.Clone(p.Data)
			p = &q
		}
		ch <- res{p, err}
	}()
	select {
	case r := <-ch:
		return r.p, r.err
	case <-time.After(serialWait):
		t.Fatal("timed out waiting for a packet on the fifo")
		return nil, nil
	}
}

// openFifoReader opens the fifo as Wireshark does (waiting for the
// writer) and reads its pcapng header.
func openFifoReader(t *testing.T, fifo string) (*os.File, capture.Source) {
	t.Helper()
	type res struct {
		f   *os.File
		src capture.Source
		err error
	}
	ch := make(chan res, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			ch <- res{err: err}
			return
		}
		src, err := capture.NewReader(f, fifo)
		ch <- res{f, src, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		t.Cleanup(func() { r.f.Close() })
		return r.f, r.src
	case <-time.After(serialWait):
		t.Fatal("timed out opening the fifo")
		return nil, nil
	}
}

// TestExtcapCapture runs the capture phase as Wireshark does: a child
// process writing pcapng to a fifo the test reads, two pty "adapters",
// stopped with SIGTERM.
func TestExtcapCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	hostWire, devWire := wire(t), wire(t)
	link := hostWire.Path + "+" + devWire.Path
	fifo := extcapFifo(t)
	cmd, stdout, stderr := startProcess(t, "extcap", "--capture", "--extcap-interface", "dissect-serial",
		"--fifo", fifo, "--extcap-version=4.0", "--host-tx", hostWire.Path, "--device-tx", devWire.Path,
		"--baud", "9600", "--data-bits", "8", "--parity", "even", "--stop-bits", "1")
	_, src := openFifoReader(t, fifo)

	sent := [2][]byte{[]byte("host says hi"), []byte("device answers")}
	var got [2][]byte
	for d, w := range [2]*os.File{hostWire.Master, devWire.Master} {
		write(t, w, sent[d])
		for len(got[d]) < len(sent[d]) {
			p, err := nextPacket(t, src)
			if err != nil {
				t.Fatalf("reading the fifo: %v; stderr:\n%s", err, stderr.String())
			}
			wantDir := []capture.Direction{capture.DirOutbound, capture.DirInbound}[d]
			if p.Direction != wantDir || p.LinkType != capture.LinkUser0 || p.InterfaceName != link || p.Dropped {
				t.Fatalf("packet: direction %d (want %d), link type %d, interface %q (want %q), dropped %v",
					p.Direction, wantDir, p.LinkType, p.InterfaceName, link, p.Dropped)
			}
			got[d] = append(got[d], p.Data...)
		}
		if !bytes.Equal(got[d], sent[d]) {
			t.Fatalf("direction %d: read %q, want %q", d, got[d], sent[d])
		}
	}
	// Wireshark stops an extcap with SIGTERM.
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit %d after SIGTERM; stderr:\n%s", code, stderr.String())
	}
	if stdout.String() != "" || stderr.String() != "" {
		t.Fatalf("the capture printed:\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
	}
	// The rest of the file is complete: the statistics block, then the end.
	if p, err := nextPacket(t, src); !errors.Is(err, io.EOF) {
		t.Fatalf("after the stop: packet %v, error %v; want a clean end of file", p, err)
	}
}

// TestExtcapReaderGone stops the capture when Wireshark closes the fifo.
func TestExtcapReaderGone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	w := wire(t)
	fifo := extcapFifo(t)
	cmd, _, stderr := startProcess(t, "extcap", "--capture", "--extcap-interface=dissect-serial", "--fifo", fifo, "--device-tx", w.Path)
	f, src := openFifoReader(t, fifo)
	write(t, w.Master, []byte("one"))
	if p, err := nextPacket(t, src); err != nil || string(p.Data) != "one" || p.Direction != capture.DirInbound {
		t.Fatalf("first packet %v, %v", p, err)
	}
	f.Close()
	// The next read is written to a fifo without a reader: EPIPE ends the
	// capture quietly.
	deadline := time.Now().Add(serialWait)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		write(t, w.Master, []byte("more"))
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%v after the reader went away; stderr:\n%s", err, stderr.String())
			}
			return
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the capture did not stop after the fifo's reader went away")
		}
	}
}

// TestExtcapInstall writes the wrapper into --dir.
func TestExtcapInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "extcap")
	out, errOut, code := cli(t, "extcap", "--install", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := filepath.Join(dir, "dissect-extcap")
	if !strings.Contains(out, "installed "+path) || !strings.Contains(out, "chosen by: --dir") || !strings.Contains(out, "dissect-serial") {
		t.Fatalf("output does not say where:\n%s", out)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o111 != 0o111 {
		t.Fatalf("%s is not executable: %v", path, fi.Mode())
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	b, _ := os.ReadFile(path)
	if want := "#!/bin/sh\n"; !strings.HasPrefix(string(b), want) || !strings.Contains(string(b), "exec '"+exe+"' extcap \"$@\"\n") {
		t.Fatalf("wrapper:\n%s", b)
	}
	// Installing again replaces it.
	if _, errOut, code := cli(t, "extcap", "--install", "--dir", dir); code != 0 {
		t.Fatalf("second install: exit %d: %s", code, errOut)
	}
}

// TestExtcapTshark installs a built dissect into a fresh home's personal
// extcap folder (found from tshark -G folders) and checks that tshark -D
// lists the interface, then captures through tshark.
func TestExtcapTshark(t *testing.T) {
	longtest.Skip(t)
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed: tshark -D is not checked")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not in PATH: cannot build dissect for tshark")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin", "dissect")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := filepath.Join(tmp, "home")
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	install := exec.Command(bin, "extcap", "--install")
	install.Env = env
	out, err := install.CombinedOutput()
	if err != nil {
		t.Fatalf("dissect extcap --install: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "installed "+home) {
		t.Fatalf("not installed under the home %s:\n%s", home, out)
	}
	list := exec.Command("tshark", "-D")
	list.Env = env
	lout, err := list.Output()
	if err != nil {
		t.Fatalf("tshark -D: %v", err)
	}
	if !strings.Contains(string(lout), ". dissect-serial (dissect serial tap)\n") {
		t.Fatalf("tshark -D does not list dissect-serial (installed: %s):\n%s", out, lout)
	}

	// Capture through tshark: the port given as the interface's
	// preference (extcap.IFACE.CALL with "-" made "_" and the call's
	// dashes dropped), two packets of the host's wire, then tshark stops
	// the extcap.
	w := wire(t)
	tsh := exec.Command("tshark", "-i", "dissect-serial", "-o", "extcap.dissect_serial.hosttx:"+w.Path, "-a", "packets:2",
		"-T", "fields", "-e", "frame.p2p_dir", "-e", "data.data", "-e", "frame.interface_name", "-e", "frame.encap_type")
	tsh.Env = env
	var capOut, capErr syncBuffer
	tsh.Stdout, tsh.Stderr = &capOut, &capErr
	if err := tsh.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tsh.Wait() }()
	deadline := time.After(4 * serialWait)
	for stop := false; !stop; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("tshark -i dissect-serial: %v\n%s", err, capErr.String())
			}
			stop = true
		case <-deadline:
			tsh.Process.Kill()
			<-done
			t.Fatalf("tshark did not capture 2 packets; stdout:\n%s\nstderr:\n%s", capOut.String(), capErr.String())
		case <-time.After(200 * time.Millisecond):
			write(t, w.Master, []byte("x")) // one read, one packet
		}
	}
	lines := strings.Split(strings.TrimSpace(capOut.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("tshark printed %d packets, want 2:\n%s", len(lines), capOut.String())
	}
	for _, line := range lines {
		// frame.p2p_dir 0: sent (outbound, host→device); encap 45 is
		// WTAP_ENCAP_USER0.
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[0] != "0" || strings.Trim(f[1], "78") != "" || f[1] == "" || f[2] != w.Path || f[3] != "45" {
			t.Fatalf("tshark fields %q, want direction 0, bytes 78.., interface %s, encapsulation 45", line, w.Path)
		}
	}
}
