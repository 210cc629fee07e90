package dissect_test

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// BenchmarkStreamCountOnly frames toy messages of three types in a
// summary-only stream: the cost of the driver and of counting per type.
func BenchmarkStreamCountOnly(b *testing.B) {
	reg, err := dissect.NewRegistry(&toy{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := reg.ParseDecodeAs("tcp.port==7000,toy")
	if err != nil {
		b.Fatal(err)
	}
	reg.AddRule(r)
	var chunk []byte
	for i := 0; i < 1000; i++ {
		chunk = append(chunk, 3, 'a', 'b', 'c')
	}
	sink := dissect.SinkFunc(func(*dissect.Record) error { return nil })
	s := dissect.NewStream(tcpInfo(7000), reg, sink, dissect.StreamOptions{CountOnly: true})
	t0 := time.Unix(1, 0)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		s.Data(0, t0, chunk)
	}
}
