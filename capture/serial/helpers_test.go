package serial

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// waitTime bounds every wait in these tests.
const waitTime = 5 * time.Second

// got is a packet copied out of a tap.
type got struct {
	p   capture.Packet
	err error
}

// nextWithin calls src.Next, failing the test when it takes longer than
// waitTime. The packet's data is copied.
func nextWithin(t *testing.T, src interface {
	Next() (*capture.Packet, error)
}) (capture.Packet, error) {
	t.Helper()
	ch := make(chan got, 1)
	go func() {
		p, err := src.Next()
		var g got
		g.err = err
		if p != nil {
			g.p = *p
			g.p.Data = bytes.Clone(p.Data)
		}
		ch <- g
	}()
	select {
	case g := <-ch:
		return g.p, g.err
	case <-time.After(waitTime):
		t.Fatal("Next did not return in time")
		return capture.Packet{}, nil
	}
}

// collect reads packets until want[d] bytes have arrived in each direction
// d, and returns the packets.
func collect(t *testing.T, src interface {
	Next() (*capture.Packet, error)
}, wantOut, wantIn int) []capture.Packet {
	t.Helper()
	var ps []capture.Packet
	var nOut, nIn int
	for nOut < wantOut || nIn < wantIn {
		p, err := nextWithin(t, src)
		if err != nil {
			t.Fatalf("after %d packets (%d out, %d in): %v", len(ps), nOut, nIn, err)
		}
		switch p.Direction {
		case capture.DirOutbound:
			nOut += len(p.Data)
		case capture.DirInbound:
			nIn += len(p.Data)
		default:
			t.Fatalf("packet with direction %d", p.Direction)
		}
		ps = append(ps, p)
	}
	if nOut != wantOut || nIn != wantIn {
		t.Fatalf("read %d bytes out, %d in; want %d, %d", nOut, nIn, wantOut, wantIn)
	}
	return ps
}

// joined returns the bytes of the packets of direction d, in order.
func joined(ps []capture.Packet, d capture.Direction) []byte {
	var b []byte
	for _, p := range ps {
		if p.Direction == d {
			b = append(b, p.Data...)
		}
	}
	return b
}

// checkPackets checks what every packet of a link must be.
func checkPackets(t *testing.T, ps []capture.Packet, link string, iface int) {
	t.Helper()
	var last time.Time
	for i, p := range ps {
		if p.LinkType != capture.LinkUser0 || p.InterfaceName != link || p.Interface != iface {
			t.Fatalf("packet %d: link type %d, interface %d %q; want 147, %d %q", i, p.LinkType, p.Interface, p.InterfaceName, iface, link)
		}
		if p.Dropped {
			if len(p.Data) != 0 || p.Length <= 0 {
				t.Fatalf("packet %d: dropped marker with %d bytes, length %d", i, len(p.Data), p.Length)
			}
		} else if len(p.Data) == 0 || len(p.Data) > ReadSize || p.Length != len(p.Data) {
			t.Fatalf("packet %d: %d bytes, length %d", i, len(p.Data), p.Length)
		}
		if p.Time.Location() != time.UTC {
			t.Fatalf("packet %d: time %v is not UTC", i, p.Time)
		}
		if p.Time.Before(last) {
			t.Fatalf("packet %d: time %v before the previous %v", i, p.Time, last)
		}
		if d := time.Since(p.Time); d < 0 || d > time.Minute {
			t.Fatalf("packet %d: time %v is not a read time (now %v)", i, p.Time, time.Now())
		}
		last = p.Time
	}
}

// readFull reads len(b) bytes from f within waitTime.
func readFull(t *testing.T, f *os.File, b []byte) {
	t.Helper()
	if err := f.SetReadDeadline(time.Now().Add(waitTime)); err != nil {
		t.Fatalf("%s: set deadline: %v", f.Name(), err)
	}
	if _, err := io.ReadFull(f, b); err != nil {
		t.Fatalf("%s: read: %v", f.Name(), err)
	}
}

// newPTY opens a pseudo-terminal pair for the test.
func newPTY(t *testing.T) *PTY {
	t.Helper()
	p, err := OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// allBytes returns every byte value once, in order: every control
// character a terminal could act on is among them.
func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// chunkReader yields its chunks one Read at a time, then io.EOF (or err).
type chunkReader struct {
	chunks [][]byte
	err    error
}

func (r *chunkReader) Read(b []byte) (int, error) {
	if len(r.chunks) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	n := copy(b, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

func isPortError(err error, port string, kind error) bool {
	var pe *PortError
	return errors.As(err, &pe) && pe.Port == port && errors.Is(err, kind)
}
