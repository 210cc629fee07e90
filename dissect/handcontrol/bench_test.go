package handcontrol

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// telemetryStream returns n v2 Telemetry frames whose values change from
// frame to frame, as a device streaming at 100 Hz would send them.
func telemetryStream(n int) []byte {
	var out []byte
	for i := range n {
		k := uint64(i)
		p := cat(pvar(1, 1), pvar(2, 1), pvar(3, 4), pvar(4, 4), pvar(5, 1620000000+k/100), pvar(6, 100+k%900),
			pbytes(7, pstr(1, "97f72d84-b856-4934-8d80-2b3ff5ad41d5")), pvar(8, 80),
			pvar(9, k%100), pvar(10, (k+10)%100), pvar(11, (k+20)%100), pvar(12, (k+30)%100), pvar(13, (k+40)%100))
		out = append(out, frame(codeTelemetry, p)...)
	}
	return out
}

var benchModes = []struct {
	name   string
	decode bool
}{{"decode", true}, {"types", false}}

// BenchmarkParse measures Parse over 1000 telemetry frames.
func BenchmarkParse(b *testing.B) {
	for _, bc := range benchModes {
		b.Run(bc.name, func(b *testing.B) {
			in := telemetryStream(1000)
			s := newSession(b, Options{}, bc.decode)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				for rest := in; len(rest) > 0; {
					n, err := s.parse(1, t0, rest)
					if err != nil || s.Rec.Type != TypeTelemetry || len(s.Rec.Warnings) != 0 {
						b.Fatalf("Parse = %d, %v, %q %q", n, err, s.Rec.Type, s.Rec.Warnings)
					}
					rest = rest[n:]
				}
			}
		})
	}
}

// BenchmarkStream measures the device direction of a serial link through
// dissect.Stream in 64-byte reads, to a sink that drops the records.
func BenchmarkStream(b *testing.B) {
	for _, bc := range benchModes {
		b.Run(bc.name, func(b *testing.B) {
			in := telemetryStream(1000)
			reg := registry(b, Options{})
			sink := dissect.SinkFunc(func(*dissect.Record) error { return nil })
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				st := dissect.NewStream(serialInfo(), reg, sink, dissect.StreamOptions{Decode: bc.decode})
				for rest := in; len(rest) > 0; {
					n := min(64, len(rest))
					st.Data(1, t0, rest[:n])
					rest = rest[n:]
				}
				st.End(1, t0)
			}
		})
	}
}

// BenchmarkResync measures the device direction through dissect.Stream in
// 1-byte reads: garbage without an SFD after a frame (Sync), and a header
// declaring 65535 payload bytes followed by 64 KiB without an SFD (a frame
// waiting for its bytes, searched for valid frames inside), each ending
// with 100 telemetry frames.
func BenchmarkResync(b *testing.B) {
	tail := telemetryStream(100)
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(i*7 + 1) // never 0xfd: no SFD
		if garbage[i] == 0xfd {
			garbage[i] = 0x5a
		}
	}
	cases := []struct {
		name string
		in   []byte
	}{
		{"garbage", cat(tail[:100], garbage, tail)},
		{"waiting", cat(h("fd ba dc 01 50 b4 11 ff 03 ff ff"), garbage, tail)},
	}
	reg := registry(b, Options{})
	sink := dissect.SinkFunc(func(*dissect.Record) error { return nil })
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				st := dissect.NewStream(serialInfo(), reg, sink, dissect.StreamOptions{})
				for i := range bc.in {
					st.Data(1, t0, bc.in[i:i+1])
				}
				st.End(1, t0)
			}
		})
	}
}
