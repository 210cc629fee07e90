package query

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// benchRecords is a realistic mix: mostly Deltarobot positions, some VRPN
// trackers and HandControl acknowledgements.
func benchRecords() []*dissect.Record {
	var rs []*dissect.Record
	for i := range 8 {
		d := deltaRecord()
		d.Stream = i % 3
		rs = append(rs, d)
	}
	return append(rs, vrpnRecord(), vrpnRecord(), handRecord(), oddRecord())
}

// BenchmarkMatch reports ns per record (records/s = 1e9 / ns/op).
func BenchmarkMatch(b *testing.B) {
	for _, bc := range []struct{ name, expr string }{
		{"3term", "deltarobot && deltarobot.x > 0.1 && stream == 0"},
		{"keys", "stream == 0 && type == actuator_position"},
		{"nested", "vrpn.quat.w > 0.5 || vrpn.pos[1] < 0 || handcontrol.payload.battery in {80..90}"},
		{"anyElement", "roboid.values.semantics == orientation"},
		{"regexp", `vrpn.sender matches "^Track" || type matches "(?i)ack"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := Compile(bc.expr, known)
			if err != nil {
				b.Fatal(err)
			}
			rs := benchRecords()
			b.ReportAllocs()
			i, n := 0, 0
			for b.Loop() {
				if f.Match(rs[i]) {
					n++
				}
				if i++; i == len(rs) {
					i = 0
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("deltarobot && deltarobot.x > 0.1 && stream == 0", known); err != nil {
			b.Fatal(err)
		}
	}
}
