package roboid_test

import (
	"bytes"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/roboid"
	"github.com/dissect-tools/dissect/output"
)

// TestJSON checks the JSON line of a Pose against the output contract
// (section "roboid"), written by hand: a 0x62 value (90°, float16 1.5), a
// 0x22 value holding the float16 NaN 0x7e00 (written as the string "NaN"),
// and a 0xb1 value cut short.
func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	j := output.NewJSON(&buf, false)
	s := dissect.NewStream(streamInfo(roboid.Port), registry(t, roboid.New()), j, dissect.StreamOptions{Decode: true})
	s.DatagramAt(0, dissect.Stamp{Time: t0, Frame: 1}, h("10 01 02 62 40 00 3e 22 00 7e b1 40"))
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2024-05-01T12:00:00.000000000Z","frame":1,"proto":"roboid","transport":"udp","stream":2,` +
		`"src":"198.51.100.10:50000","dst":"192.0.2.1:7681","offset":0,"length":12,"type":"Pose","fields":{` +
		`"network_id":1,"thing_id":2,"values":[` +
		`{"data_type":"0x62","semantics":"linear_velocity","angular_bytes":1,"linear_bytes":2,"raw":"40003e","angles_deg":[90.0],"magnitude_uint":15872,"magnitude_f16":1.5},` +
		`{"data_type":"0x22","semantics":"linear_velocity","angular_bytes":0,"linear_bytes":2,"raw":"007e","magnitude_uint":32256,"magnitude_f16":"NaN"},` +
		`{"data_type":"0xb1","semantics":"position","angular_bytes":2,"linear_bytes":4,"raw":"40","truncated":true}]},` +
		`"warnings":["Pose: value 2 (data type 0xb1 at byte 10) needs 6 bytes, the datagram ends after 1"]}` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
