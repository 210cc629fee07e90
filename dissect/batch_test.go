package dissect

import (
	"reflect"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/reassembly"
)

// A copy is the record for every writer: every envelope member as it
// was, and Raw present or not as it was, also when it holds no bytes (a
// skipped run whose bytes were all cut: the lake's raw column is then ""
// where a record without Raw has null), in a new batch and in one reused.
// (reflect.DeepEqual tells a nil slice from an empty one.)
func TestBatchCopyIsTheRecord(t *testing.T) {
	when := time.Date(2026, 12, 2, 5, 0, 0, 7, time.UTC)
	base := Record{Time: when, Frame: 42, Proto: "vrpn", Transport: reassembly.UDP, Stream: 3, TransportStream: 2,
		Src: "10.0.0.1:3883", Dst: "10.0.0.2:3883", Offset: 100, Length: 20, Type: "vrpn_Tracker Pos_Quat",
		Summary: "s", Epoch: when.Add(-time.Second), Dir: 1}
	var b Batch
	for round := range 2 {
		b.Reset()
		var want []Record
		for _, raw := range [][]byte{nil, {}, {1, 2}} {
			r := base
			r.Raw = raw
			b.Add(&r)
			want = append(want, r)
		}
		for i := range want {
			if !reflect.DeepEqual(b.Records[i], want[i]) {
				t.Errorf("round %d: copy\n%#v\nwant\n%#v", round, b.Records[i], want[i])
			}
		}
	}
}
