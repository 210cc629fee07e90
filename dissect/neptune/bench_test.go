package neptune_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// deviceBody is a command stream like a joystick host would send: motor
// settings, with now and then a relay, translate, rotate, stabilize, lamp
// and abort, made by repeating the literal vectors. It returns the bytes
// and the message count.
func deviceBody() ([]byte, int) {
	var b []byte
	msgs := 0
	for i := 1; i <= 4096; i++ {
		b = append(b, vStop...)
		b = append(b, vMotor2...)
		msgs += 2
		if i%8 == 0 {
			b = append(b, cat(vRelay5On, vTranslate, vRotate, vStabilize, vLamp, vAbort)...)
			msgs += 6
		}
	}
	return b, msgs
}

type countSink struct{ n int }

func (s *countSink) Record(*dissect.Record) error {
	s.n++
	return nil
}

func modeName(decode bool) string {
	if decode {
		return "decode"
	}
	return "nodecode"
}

// BenchmarkParse measures both protocols, with and without decoding:
// through dissect.Stream (device: 1448-byte TCP segments; wiki: one
// datagram per packet) and by calling Parse directly.
func BenchmarkParse(b *testing.B) {
	body, msgs := deviceBody()
	dgs := [][]byte{wSpeed, wPosition, wRelayOn, wSensor}
	dgBytes := 0
	for _, d := range dgs {
		dgBytes += len(d)
	}
	for _, decode := range []bool{true, false} {
		b.Run("device/stream/"+modeName(decode), func(b *testing.B) {
			reg := registry(b, false, "tcp.port==1493,neptune")
			var sink countSink
			st := dissect.NewStream(tcpInfo, reg, &sink, dissect.StreamOptions{Decode: decode})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				for p := body; len(p) > 0; {
					n := min(len(p), 1448)
					st.Data(0, t0, p[:n])
					p = p[n:]
				}
			}
			b.ReportMetric(float64(msgs)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			if sink.n != msgs*b.N {
				b.Fatalf("%d records, want %d", sink.n, msgs*b.N)
			}
		})
		b.Run("device/direct/"+modeName(decode), func(b *testing.B) {
			ss := deviceSession(decode)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				for p := body; len(p) > 0; {
					n, err := ss.parse(p, false)
					if err != nil {
						b.Fatal(err)
					}
					p = p[n:]
				}
			}
			b.ReportMetric(float64(msgs)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
		b.Run("wiki/stream/"+modeName(decode), func(b *testing.B) {
			reg := registry(b, false, "udp.port==9000,neptune-wiki")
			var sink countSink
			st := dissect.NewStream(udpInfo, reg, &sink, dissect.StreamOptions{Decode: decode})
			b.SetBytes(int64(dgBytes))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range dgs {
					st.Datagram(0, t0, d)
				}
			}
			b.ReportMetric(float64(len(dgs))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			if sink.n != len(dgs)*b.N {
				b.Fatalf("%d records, want %d", sink.n, len(dgs)*b.N)
			}
		})
		b.Run("wiki/direct/"+modeName(decode), func(b *testing.B) {
			ss := wikiSession(false, decode)
			b.SetBytes(int64(dgBytes))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range dgs {
					if _, err := ss.parse(d, true); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(dgs))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
