package vrpn

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// TestConformance runs the checks every protocol passes (dissecttest.Conformance)
// over the connections and datagrams of the real captures (truth.json,
// rebuilt as in TestStreamChunkings), and over a connection written with
// the test encoder (encMsg) that carries every type the captures lack.
// Each input is one stream, so UDP datagrams are decoded without the TCP
// connection that names their ids; TestStreamChunkings covers that.
func TestConformance(t *testing.T) {
	tf := loadTruth(t)
	var valid []dissecttest.Input
	for _, name := range tf.captureNames() {
		c := tf.Captures[name]
		for i, conn := range c.TCP {
			valid = append(valid, dissecttest.Input{Name: fmt.Sprintf("%s connection %d", name, i), Transport: dissect.TCP, Units: []dissecttest.Unit{
				{Dir: 0, Data: buildDirStream(t, c, conn.Directions[0]).data},
				{Dir: 1, Data: buildDirStream(t, c, conn.Directions[1]).data},
			}})
		}
		udp := dissecttest.Input{Name: name + " datagrams", Transport: dissect.UDP}
		for _, l := range c.Lobs {
			udp.Units = append(udp.Units, dissecttest.Unit{Data: mustHex(t, l.Hex)})
		}
		frames := map[int]int{} // frame -> unit
		for _, m := range c.Examples {
			if m.Transport != "udp" {
				continue
			}
			i, ok := frames[m.Frame]
			if !ok {
				i = len(udp.Units)
				frames[m.Frame] = i
				udp.Units = append(udp.Units, dissecttest.Unit{})
			}
			udp.Units[i].Data = append(udp.Units[i].Data, m.bytes(t)...)
		}
		if len(udp.Units) > 0 {
			valid = append(valid, udp)
		}
	}
	valid = append(valid, everyTypeInput())
	dissecttest.Conformance(t, dissecttest.Suite{New: New, Valid: valid,
		ChunkedResync: "Sync accepts a candidate whose message ends the bytes held (doc.go, Resynchronisation)"})
}

// everyTypeInput is a TCP connection written with encMsg from the
// package documentation's body layouts: dir 1 describes a sender and the
// decoded types, then sends one message of each, one of a described type
// that is not decoded (vrpn_Text), one of an undescribed type id,
// LOG_DESCRIPTION and DISCONNECT.
func everyTypeInput() dissecttest.Input {
	cookie := []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")
	names := []string{"vrpn_Tracker Pos_Quat", "vrpn_Tracker Velocity", "vrpn_Tracker Acceleration",
		"vrpn_Button Change", "vrpn_Button States", "vrpn_Analog Channel", "vrpn_Dial update",
		"vrpn_Base ping_message", "vrpn_Base pong_message", "vrpn_Text"}
	d1 := append([]byte(nil), cookie...)
	d1 = append(d1, encDescription(-1, 0, "Tracker0", 0)...)
	for i, n := range names {
		d1 = append(d1, encDescription(-2, int32(i), n, uint32(1+i))...)
	}
	be := func(vs ...any) []byte {
		var b []byte
		for _, v := range vs {
			switch v := v.(type) {
			case int32:
				b = binary.BigEndian.AppendUint32(b, uint32(v))
			case float64:
				b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
			case string:
				b = append(b, v...)
			}
		}
		return b
	}
	bodies := [][]byte{
		be(int32(1), int32(1), 0.5, -1.0, 2.0, 0.0, 0.0, 0.0, 1.0),
		be(int32(0), int32(0), 0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0, 0.01),
		be(int32(0), int32(0), 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 0.02),
		be(int32(3), int32(1)),
		be(int32(3), int32(1), int32(0), int32(1)),
		be(2.0, 0.25, -0.75),
		be(0.125, int32(2)),
		nil,
		nil,
		be("hello\x00"),
	}
	seq := uint32(len(names) + 1)
	for i, b := range bodies {
		d1 = append(d1, encMsg(1795306101, uint32(i), 0, int32(i), seq, b)...)
		seq++
	}
	d1 = append(d1, encMsg(1795306102, 0, 0, 99, seq, be(int32(7)))...)                              // undescribed type id
	d1 = append(d1, encMsg(1795306102, 1, 3, -4, seq+1, be(int32(2), int32(2), "in\x00out\x00"))...) // LOG_DESCRIPTION, mode 3
	d1 = append(d1, encMsg(1795306102, 2, 0, -5, seq+2, nil)...)                                     // DISCONNECT
	d0 := append(append([]byte(nil), cookie...), encMsg(1795306100, 0, 4000, -3, 0, []byte("10.0.0.1\x00"))...)
	d0 = append(d0, catalogueStream(catalogueSamples())...) // the catalogue, in the other direction
	return dissecttest.Input{Name: "every type", Transport: dissect.TCP, Units: []dissecttest.Unit{{Dir: 0, Data: d0}, {Dir: 1, Data: d1}}}
}
