//go:build linux

package serial

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/dissect-tools/dissect/capture"
)

// startProxy runs a proxy in front of a pseudo-terminal standing for the
// device, and opens its link as the host application would.
func startProxy(t *testing.T) (p *Proxy, dev *PTY, host *os.File, link string) {
	t.Helper()
	dev = newPTY(t)
	link = filepath.Join(t.TempDir(), "ttyPROSTHESIS")
	p, err := OpenProxy(ProxyConfig{Device: dev.Path, Link: link, Mode: DefaultMode()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	target, err := os.Readlink(link)
	if err != nil || target != p.PTYPath() || !strings.HasPrefix(target, "/dev/pts/") {
		t.Fatalf("link %s -> %q (%v), want the proxy's terminal %s", link, target, err, p.PTYPath())
	}
	// The host opens the link like a serial port and changes nothing in
	// the terminal's settings: the proxy's raw mode must be enough.
	host, err = os.OpenFile(link, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	return p, dev, host, link
}

// TestProxyForwardsUnchanged sends every byte value both ways through the
// proxy: each side receives exactly what the other sent, and the tap
// yields the same bytes with the right directions.
func TestProxyForwardsUnchanged(t *testing.T) {
	p, dev, host, link := startProxy(t)
	if p.Link() != dev.Path || p.LinkPath() != link {
		t.Fatalf("link name %q, path %q", p.Link(), p.LinkPath())
	}

	toDev := allBytes()
	if _, err := host.Write(toDev); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(toDev))
	readFull(t, dev.Master, got)
	if !bytes.Equal(got, toDev) {
		t.Fatalf("device received % x\nwant % x", got, toDev)
	}
	ps := collect(t, p, len(toDev), 0)

	toHost := allBytes()
	slices.Reverse(toHost)
	if _, err := dev.Master.Write(toHost); err != nil {
		t.Fatal(err)
	}
	got = make([]byte, len(toHost))
	readFull(t, host, got)
	if !bytes.Equal(got, toHost) {
		t.Fatalf("host received % x\nwant % x", got, toHost)
	}
	ps = append(ps, collect(t, p, 0, len(toHost))...)

	checkPackets(t, ps, dev.Path, 0)
	if !bytes.Equal(joined(ps, capture.DirOutbound), toDev) || !bytes.Equal(joined(ps, capture.DirInbound), toHost) {
		t.Fatal("tapped bytes differ from the forwarded bytes")
	}

	// The host may close and reopen the link while the proxy runs.
	host.Close()
	host2, err := os.OpenFile(link, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer host2.Close()
	host2.Write([]byte("again"))
	got = make([]byte, 5)
	readFull(t, dev.Master, got)
	if string(got) != "again" {
		t.Fatalf("after reopening, the device got %q", got)
	}
	collect(t, p, 5, 0)

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("link still there after Close: %v", err)
	}
	if _, err := nextWithin(t, p); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v", err)
	}
}

// TestProxyDeviceGone: the device disappears; the error names it, and
// Close still removes the link.
func TestProxyDeviceGone(t *testing.T) {
	p, dev, host, link := startProxy(t)
	host.Write([]byte("hi"))
	collect(t, p, 2, 0)
	dev.Master.Close()
	_, err := nextWithin(t, p)
	if !isPortError(err, dev.Path, ErrDisconnected) {
		t.Fatalf("got %v, want the device disconnected", err)
	}
	p.Close()
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("link still there after Close: %v", err)
	}
}

func TestProxyLinkPath(t *testing.T) {
	dev := newPTY(t)
	dir := t.TempDir()

	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, nil, 0o600)
	if _, err := OpenProxy(ProxyConfig{Device: dev.Path, Link: plain, Mode: DefaultMode()}); err == nil || !strings.HasPrefix(err.Error(), plain+": ") {
		t.Fatalf("a regular file at the link path: %v", err)
	}
	if b, err := os.ReadFile(plain); err != nil || len(b) != 0 {
		t.Fatal("the regular file was touched")
	}

	live := filepath.Join(dir, "live")
	os.Symlink(plain, live)
	if _, err := OpenProxy(ProxyConfig{Device: dev.Path, Link: live, Mode: DefaultMode()}); err == nil {
		t.Fatal("a live symlink was replaced")
	}

	stale := filepath.Join(dir, "stale")
	os.Symlink(filepath.Join(dir, "gone"), stale)
	p, err := OpenProxy(ProxyConfig{Device: dev.Path, Link: stale, Mode: DefaultMode()})
	if err != nil {
		t.Fatalf("a stale symlink was not replaced: %v", err)
	}
	if target, _ := os.Readlink(stale); target != p.PTYPath() {
		t.Fatalf("link -> %q", target)
	}
	p.Close()

	// A missing device: no link is left behind.
	missing := filepath.Join(dir, "ttyUSB9")
	link := filepath.Join(dir, "link")
	if _, err := OpenProxy(ProxyConfig{Device: missing, Link: link, Mode: DefaultMode()}); !isPortError(err, missing, ErrNotFound) {
		t.Fatalf("missing device: %v", err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a link was made for a missing device")
	}

	// A link whose directory does not exist.
	bad := filepath.Join(dir, "no", "such", "dir")
	if _, err := OpenProxy(ProxyConfig{Device: dev.Path, Link: bad, Mode: DefaultMode()}); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Fatalf("link in a missing directory: %v", err)
	}
}

// TestProxyForwardError: a side that cannot be written ends the proxy with
// an error naming it.
func TestProxyForwardError(t *testing.T) {
	host := &rw{r: io.NopCloser(&chunkReader{chunks: [][]byte{[]byte("cmd")}}), w: io.Discard}
	dev := &rw{r: newBlockReader(), w: failWriter{}}
	tap, err := NewProxy("mem", 0, host, "host", dev, "dev0")
	if err != nil {
		t.Fatal(err)
	}
	_, err = nextWithin(t, tap)
	if !strings.HasPrefix(err.Error(), "dev0: write: ") {
		t.Fatalf("got %v", err)
	}
	tap.Close()
}

type rw struct {
	r io.ReadCloser
	w io.Writer
}

func (x *rw) Read(b []byte) (int, error)  { return x.r.Read(b) }
func (x *rw) Write(b []byte) (int, error) { return x.w.Write(b) }
func (x *rw) Close() error                { return x.r.Close() }

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no room") }

// blockReader blocks every Read until it is closed.
type blockReader struct{ closed chan struct{} }

func newBlockReader() blockReader { return blockReader{closed: make(chan struct{})} }

func (r blockReader) Read([]byte) (int, error) {
	<-r.closed
	return 0, os.ErrClosed
}

func (r blockReader) Close() error {
	close(r.closed)
	return nil
}

// TestOpenPTYRaw checks the pair on its own: raw both ways, and closing the
// master ends a Read in progress.
func TestOpenPTYRaw(t *testing.T) {
	p := newPTY(t)
	data := allBytes()
	p.Master.Write(data)
	got := make([]byte, len(data))
	readFull(t, p.Slave, got)
	if !bytes.Equal(got, data) {
		t.Fatalf("slave read % x", got)
	}
	p.Slave.Write(data)
	readFull(t, p.Master, got)
	if !bytes.Equal(got, data) {
		t.Fatalf("master read % x", got)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Master.Read(make([]byte, 1))
		done <- err
	}()
	p.Master.Close()
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
}
