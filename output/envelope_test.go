package output

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// TestJSONWritesTheEnvelope: the JSON writer's hand-written keys are the
// envelope's JSON keys (dissect.Envelope), in its order, then fields
// (and warnings): adding a key to the envelope without writing it, or
// writing one it does not declare, fails here.
func TestJSONWritesTheEnvelope(t *testing.T) {
	r := &dissect.Record{Time: time.Unix(1700000000, 5), Frame: 2, Proto: "deltarobot", Transport: dissect.TCP, Stream: 3,
		Src: "10.0.0.1:4000", Dst: "10.0.0.2:5000", Offset: 7, Length: 9, Type: "ping", Warnings: []string{"w"}}
	r.Add("id", dissect.Uint(1))
	line := NewJSONAppender().AppendRecord(nil, r)
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", line)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, k := range dissect.JSONEnvelope() {
		want = append(want, k.Name)
	}
	want = append(want, "fields", "warnings")
	if len(keys) != len(want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	for i := range keys {
		if keys[i] != want[i] {
			t.Fatalf("keys %v, want %v", keys, want)
		}
	}
}
