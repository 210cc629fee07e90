package deltarobot_test

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// TestPingsForgottenNoted sends 66 pings with distinct ids and no pong:
// past the 64 a direction keeps (package doc), the 2 oldest are
// forgotten, the stream's end says so, and the pong of the oldest has no
// rtt_ms while the pong of the third has one.
func TestPingsForgottenNoted(t *testing.T) {
	reg := dissecttest.Registry(t, []string{rule}, deltarobot.New())
	col := &dissecttest.Collector{}
	s := dissect.NewStream(streamInfo(), reg, col, dissect.StreamOptions{Decode: true})
	ping := func(op byte, id uint64) []byte {
		b := []byte{op, 0x30, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.LittleEndian.PutUint64(b[2:], id)
		return b
	}
	s.Data(0, t0, cat(vMagic, vVersion))
	s.Data(1, t0, cat(vMagic, vVersion))
	for id := range uint64(66) {
		s.Data(0, t0, ping(0x04, id))
	}
	s.Data(1, t0, cat(ping(0x05, 0), ping(0x05, 2)))
	s.End(0, t0)
	s.End(1, t0)
	n := len(col.Records)
	if n < 2 || col.Records[n-2].Type != "pong" || col.Records[n-1].Type != "pong" {
		t.Fatalf("last records %v, want two pongs", col.Records[max(0, n-2):])
	}
	if _, ok := col.Records[n-2].Fields.Get("rtt_ms"); ok {
		t.Error("the pong of the forgotten ping 0 has rtt_ms")
	}
	if _, ok := col.Records[n-1].Fields.Get("rtt_ms"); !ok {
		t.Error("the pong of ping 2 has no rtt_ms")
	}
	want := "deltarobot: stream " + strconv.Itoa(streamInfo().ID) + ": 2 requests forgotten unanswered past the bound of 64 per direction and type"
	if notes := s.Notes(); len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want %q", notes, want)
	}
}
