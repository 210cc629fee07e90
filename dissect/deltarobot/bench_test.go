package deltarobot_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// benchBody is the bulk of a stream like the one
// /work/shared/bench/gen_deltarvr_pcap.py writes: ticks of three vector
// messages (0x4003, 0x4007, 0x4008) with a ping every 1000 ticks, made by
// repeating the literal vectors. It returns the bytes and the message count.
func benchBody() ([]byte, int) {
	var b []byte
	msgs := 0
	for i := 1; i <= 4096; i++ {
		b = append(b, vPosition...)
		b = append(b, vDirection...)
		b = append(b, vDesired...)
		msgs += 3
		if i%1000 == 0 {
			b = append(b, vPing...)
			msgs++
		}
	}
	return b, msgs
}

type countSink struct{ n int }

func (s *countSink) Record(r *dissect.Record) error {
	s.n++
	return nil
}

// BenchmarkParse measures the vector-heavy bulk of a stream, with and
// without decoding, through dissect.Stream in 1448-byte chunks (one TCP
// segment each) and by calling Parse directly.
func BenchmarkParse(b *testing.B) {
	body, msgs := benchBody()
	for _, decode := range []bool{true, false} {
		name := "decode"
		if !decode {
			name = "nodecode"
		}
		b.Run("stream/"+name, func(b *testing.B) {
			reg := dissecttest.Registry(b, []string{rule}, deltarobot.New())
			var sink countSink
			s := dissect.NewStream(streamInfo(), reg, &sink, dissect.StreamOptions{Decode: decode})
			s.Data(0, t0, cat(vMagic, vVersion))
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				for p := body; len(p) > 0; {
					n := min(len(p), 1448)
					s.Data(0, t0, p[:n])
					p = p[n:]
				}
			}
			b.ReportMetric(float64(msgs)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			if sink.n != 2+msgs*b.N {
				b.Fatalf("%d records, want %d", sink.n, 2+msgs*b.N)
			}
		})
		b.Run("direct/"+name, func(b *testing.B) {
			s := newSession(decode)
			s.prime(b)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				for p := body; len(p) > 0; {
					s.Rec.Reset()
					n, err := s.P.Parse(&s.Ctx, p)
					if err != nil {
						b.Fatal(err)
					}
					p = p[n:]
				}
			}
			b.ReportMetric(float64(msgs)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
