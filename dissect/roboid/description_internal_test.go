package roboid

import (
	"bytes"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// TestDescriptionEncodes: the description's encoder gives back the bytes
// of every well-formed message of the shipped capture (written by the
// separate encoder internal/testenc/roboidenc) from the fields its decoder
// reads: all of a message of ids and data, a Pose's ids (its values are
// the Go hook's). Every message id of the description is met.
func TestDescriptionEncodes(t *testing.T) {
	pl := compile()
	dec := pl.p.NewDecoder()
	seen := map[string]bool{}
	for _, m := range dissecttest.CleanWires(t, "../../pcaps/roboid_session.truth.json") {
		typ := pl.ids[m.Bytes[0]].t
		if typ < 0 {
			continue // unknown: the Go hook's
		}
		if pl.record[typ] != m.Type {
			t.Errorf("% x is %s, the truth says %s", m.Bytes, pl.record[typ], m.Type)
			continue
		}
		seen[m.Type] = true
		r := &dissect.Record{Type: m.Type}
		n, err := dec.Decode(r, typ, m.Bytes)
		want := m.Bytes
		if typ == pl.pose {
			want = m.Bytes[:3]
		}
		if err != nil || n != len(want) {
			t.Errorf("% x: Decode = %d, %v", m.Bytes, n, err)
			continue
		}
		// the message id is not recorded: the encoder writes 0 there
		out, err := pl.p.Append(nil, typ, r.Fields)
		if err != nil || len(out) == 0 || !bytes.Equal(out[1:], want[1:]) {
			t.Errorf("% x: Append = % x, %v", m.Bytes, out, err)
		}
	}
	if len(seen) != len(messages()) {
		t.Errorf("the capture's clean messages are of %d types, the description has %d", len(seen), len(messages()))
	}
}
