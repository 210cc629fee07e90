package serial

import (
	"testing"

	"github.com/dissect-tools/dissect/capture"
)

// endless returns size-byte reads for ever.
type endless struct{ size int }

func (e endless) Read(b []byte) (int, error) {
	n := min(e.size, len(b))
	for i := range b[:n] {
		b[i] = byte(i)
	}
	return n, nil
}

// BenchmarkTap measures the tap's own cost per read (64-byte reads, about
// what a USB-UART adapter returns at 115200 baud): queueing, time stamping
// and handing out. The queue's buffer is reused, so there is no allocation
// per read.
func BenchmarkTap(b *testing.B) {
	const size = 64
	r := &closingReader{endless: endless{size}, closed: make(chan struct{})}
	tap, err := NewTap("bench", 0, Input{Name: "bench", R: r, Dir: capture.DirInbound})
	if err != nil {
		b.Fatal(err)
	}
	defer tap.Close()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		p, err := tap.Next()
		if err != nil || (len(p.Data) != size && !p.Dropped) {
			b.Fatal(err)
		}
	}
	// The reader never waits: when this loop falls behind, reads are
	// dropped (and handed out as markers).
	b.ReportMetric(float64(tap.Stats().Inbound.Dropped)/float64(b.N), "dropped-B/op")
}

// closingReader is endless until closed.
type closingReader struct {
	endless
	closed chan struct{}
}

func (c *closingReader) Read(b []byte) (int, error) {
	select {
	case <-c.closed:
		return 0, errClosedForBench
	default:
		return c.endless.Read(b)
	}
}

func (c *closingReader) Close() error {
	close(c.closed)
	return nil
}

var errClosedForBench = capture.ErrNotCapture // any error: the tap is closing
