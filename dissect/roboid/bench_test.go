package roboid_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/roboid"
)

// benchDatagrams is a plausible mix: mostly Poses with a polar velocity
// (0x62), a 3D direction (0x88) and a spherical position (0xb1), some
// single-value Poses, and the occasional control message.
var benchDatagrams = [][]byte{
	h("10 01 02 62 40 00 3e 88 c0 ff b1 40 20 00 00 c0 3f"),
	h("10 01 03 62 80 00 3c"),
	h("10 01 02 62 40 00 3e 88 c0 ff b1 40 20 00 00 c0 3f"),
	h("10 01 04 f5 00 40 80 00 00 80 3f"),
	h("81 01 05"),
	h("80 01 05 07"),
}

type countSink struct{ n int }

func (s *countSink) Record(*dissect.Record) error { s.n++; return nil }

// BenchmarkParse measures datagrams through dissect.Stream and through
// Parse directly, with and without decoding.
func BenchmarkParse(b *testing.B) {
	var total int64
	for _, d := range benchDatagrams {
		total += int64(len(d))
	}
	for _, decode := range []bool{true, false} {
		name := "decode"
		if !decode {
			name = "nodecode"
		}
		b.Run("stream/"+name, func(b *testing.B) {
			var sink countSink
			s := dissect.NewStream(streamInfo(roboid.Port), registry(b, roboid.New()), &sink, dissect.StreamOptions{Decode: decode})
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range benchDatagrams {
					s.Datagram(0, t0, d)
				}
			}
			b.ReportMetric(float64(len(benchDatagrams))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			if sink.n != len(benchDatagrams)*b.N {
				b.Fatalf("%d records, want %d", sink.n, len(benchDatagrams)*b.N)
			}
		})
		b.Run("direct/"+name, func(b *testing.B) {
			s := newSession(decode)
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range benchDatagrams {
					s.Rec.Reset()
					if n, err := s.P.Parse(&s.Ctx, d); n != len(d) || err != nil {
						b.Fatal(n, err)
					}
				}
			}
			b.ReportMetric(float64(len(benchDatagrams))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
