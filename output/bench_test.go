package output

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// benchRecord is a decoded message with a string field that is not ASCII
// (the slow path of the escapers).
func benchRecord() *dissect.Record {
	r := record()
	r.Type = "vrpn_Tracker Pos_Quat"
	r.Add("sensor", dissect.Int(1))
	r.Add("name", dissect.Str("Tracker0@localhost — main rig, caméra"))
	r.Add("pos", dissect.Float(0.125))
	return r
}

func BenchmarkTableRecord(b *testing.B) {
	r := benchRecord()
	t := NewTable(io.Discard, TableOptions{})
	t.SetEpoch(r.Time.Add(-time.Second))
	b.ReportAllocs()
	for b.Loop() {
		_ = t.Record(r)
	}
}

func BenchmarkJSONRecordText(b *testing.B) {
	r := benchRecord()
	j := NewJSON(io.Discard, false)
	b.ReportAllocs()
	for b.Loop() {
		_ = j.Record(r)
	}
}

// BenchmarkSummaryManyTypes writes a summary with 5000 types of one
// protocol (a capture full of distinct VRPN type names).
func BenchmarkSummaryManyTypes(b *testing.B) {
	s := &dissect.Summary{Packets: 1, First: time.Unix(0, 0), Last: time.Unix(5, 0)}
	for i := range 5000 {
		s.Messages = append(s.Messages, dissect.TypeCount{Proto: "vrpn", Type: fmt.Sprintf("type %05d", i), Count: int64(i%7 + 1)})
	}
	b.ReportAllocs()
	for b.Loop() {
		WriteSummary(io.Discard, s)
	}
}

// BenchmarkJSONRecordPackets writes Deltarobot-like records as a capture
// gives them: several messages complete in one packet (the generated
// capture averages 45), so they share a time and a frame number, and each
// has its own offset.
func BenchmarkJSONRecordPackets(b *testing.B) {
	r := record()
	r.Proto, r.Type = "deltarobot", "actuator_position"
	r.Frame, r.Offset, r.Length = 123456, 98765432, 18
	for _, k := range []string{"x", "y", "z", "u"} {
		r.Add(k, dissect.Float32(0.123456))
	}
	l := NewJSONLines(false)
	buf := l.AppendRecord(nil, r)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%45 == 0 {
			r.Frame++
			r.Time = r.Time.Add(time.Millisecond)
		}
		r.Offset += r.Length
		buf = l.AppendRecord(buf[:0], r)
	}
}
