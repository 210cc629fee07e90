package dissect_test

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// BenchmarkStreamCountOnly frames toy messages of three types in a
// summary-only stream: the cost of the driver and of counting per type.
func BenchmarkStreamCountOnly(b *testing.B) { benchStream(b, dissect.StreamOptions{CountOnly: true}) }

// BenchmarkStreamRecords is BenchmarkStreamCountOnly with every message
// sent to a sink as a record (what -o json asks of the driver).
func BenchmarkStreamRecords(b *testing.B) { benchStream(b, dissect.StreamOptions{}) }

// benchStream feeds 1000 toy messages a pass, in one unit of 4000 bytes,
// to a stream with options opt.
func benchStream(b *testing.B, opt dissect.StreamOptions) {
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
	n := 0
	sink := dissect.SinkFunc(func(*dissect.Record) error { n++; return nil })
	s := dissect.NewStream(tcpInfo(7000), reg, sink, opt)
	t0 := time.Unix(1, 0)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		s.Data(0, t0, chunk)
	}
	if want := 1000 * b.N; !opt.CountOnly && n != want {
		b.Fatalf("%d records, want %d", n, want)
	}
}
