package all

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// BenchmarkHuntUnknown is the cost of a TCP stream of no known protocol
// (random bytes in 1460-byte segments): every content-detected protocol's
// Sync looks at each byte once.
func BenchmarkHuntUnknown(b *testing.B) {
	reg, err := Registry(Options{})
	if err != nil {
		b.Fatal(err)
	}
	data := randomBytes(rand.New(rand.NewPCG(1, 1)), 1<<20)
	sink := dissect.SinkFunc(func(*dissect.Record) error { return nil })
	at := time.Unix(1, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s := dissect.NewStream(tcpStream(4000), reg, sink, dissect.StreamOptions{})
		for p := data; len(p) > 0; {
			n := min(len(p), 1460)
			s.Data(0, at, p[:n])
			p = p[n:]
		}
		s.End(0, at)
	}
}
