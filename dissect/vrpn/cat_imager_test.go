package vrpn

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// A test encoder for vrpn_Imager's messages, written from mainline's
// vrpn_Imager.C and vrpn_Imager.h (893c7496), not from cat_imager.go.

// imgChannel is a vrpn_Imager_Channel's values.
type imgChannel struct {
	name, units                   []byte // the 100-byte buffers, stale bytes after the NUL included
	minVal, maxVal, offset, scale float32
	compression                   uint32
}

// cname is a vrpn_CNAME buffer of 100 bytes holding s and its NUL, with
// stale bytes after it.
func cname(s string) []byte {
	b := padTo([]byte(s+"\x00"), 100)
	for i := len(s) + 1; i < 100; i += 3 {
		b[i] = 'x'
	}
	return b
}

// encImagerDescription writes vrpn_Imager_Server::send_description: int32
// depth, rows, cols, channel count, then each channel as
// vrpn_Imager_Channel::buffer does (minVal, maxVal, offset, scale,
// compression, name[100], units[100]).
func encImagerDescription(depth, rows, cols int32, chans []imgChannel) []byte {
	b := wbe(depth, rows, cols, int32(len(chans)))
	for _, c := range chans {
		b = append(b, wbe(c.minVal, c.maxVal, c.offset, c.scale, c.compression, c.name, c.units)...)
	}
	return b
}

// encRegionHead writes a region's header as send_region_using_base_pointer
// does: chanIndex, dMin, dMax, rMin, rMax, cMin, cMax, value type.
func encRegionHead(ch int16, dMin, dMax, rMin, rMax, cMin, cMax, valType uint16) []byte {
	return wbe(ch, dMin, dMax, rMin, rMax, cMin, cMax, valType)
}

// le16 and le32 are pixels as the server's (little-endian) memory holds
// them.
func le16(vs ...uint16) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

func leF32(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func imagerSamples() []sample {
	// add_channel("red") takes the defaults: units "unsigned8bit", 0..255,
	// scale 1, offset 0.
	red := imgChannel{name: cname("red"), units: cname("unsigned8bit"), maxVal: 255, scale: 1}
	dep := imgChannel{name: cname("depth"), units: cname("mm"), minVal: -10, maxVal: 4000, offset: 0.5, scale: 0.25}
	return []sample{
		{nameImagerDescription, encImagerDescription(1, 480, 640, []imgChannel{red, dep}),
			`{"depth":1,"rows":480,"cols":640,"num_channels":2,"channels":[` +
				`{"min_val":0,"max_val":255,"offset":0,"scale":1,"compression":"none","name":"red","units":"unsigned8bit"},` +
				`{"min_val":-10,"max_val":4000,"offset":0.5,"scale":0.25,"compression":"none","name":"depth","units":"mm"}]}`},
		{nameImagerDescription, encImagerDescription(2, 3, 4, nil), `{"depth":2,"rows":3,"cols":4,"num_channels":0,"channels":[]}`},
		// Rows 1..2, columns 3..5 of depth 0: 6 bytes.
		{"vrpn_Imager Regionu8", wbe(encRegionHead(0, 0, 0, 1, 2, 3, 5, 1), []byte{0, 1, 127, 128, 254, 255}),
			`{"channel":0,"depth_min":0,"depth_max":0,"row_min":1,"row_max":2,"col_min":3,"col_max":5,"value_type":"uint8","values":[0,1,127,128,254,255]}`},
		{"vrpn_Imager Regionu16", wbe(encRegionHead(1, 0, 0, 0, 1, 10, 11, 4), le16(0x1234, 0xffff, 1, 256)),
			`{"channel":1,"depth_min":0,"depth_max":0,"row_min":0,"row_max":1,"col_min":10,"col_max":11,"value_type":"uint16","values":[4660,65535,1,256]}`},
		{"vrpn_Imager Regionu12in16", wbe(encRegionHead(0, 0, 0, 7, 7, 0, 1, 5), le16(4095, 2048)),
			`{"channel":0,"depth_min":0,"depth_max":0,"row_min":7,"row_max":7,"col_min":0,"col_max":1,"value_type":"uint12in16","values":[4095,2048]}`},
		// Two depth slices of one row of two columns.
		{"vrpn_Imager Regionf32", wbe(encRegionHead(2, 0, 1, 0, 0, 0, 1, 6), leF32(1.5, -0.25, 3, 1e6)),
			`{"channel":2,"depth_min":0,"depth_max":1,"row_min":0,"row_max":0,"col_min":0,"col_max":1,"value_type":"float32","values":[1.5,-0.25,3,1000000]}`},
		// send_begin_frame / send_end_frame: dMin, dMax, rMin, rMax, cMin, cMax.
		{"vrpn_Imager Begin_Frame", wbe(uint16(0), uint16(0), uint16(0), uint16(479), uint16(0), uint16(639)),
			`{"depth_min":0,"depth_max":0,"row_min":0,"row_max":479,"col_min":0,"col_max":639}`},
		{"vrpn_Imager End_Frame", wbe(uint16(1), uint16(2), uint16(3), uint16(4), uint16(5), uint16(6)),
			`{"depth_min":1,"depth_max":2,"row_min":3,"row_max":4,"col_min":5,"col_max":6}`},
		{"vrpn_Imager Discarded_Frames", wbe(uint16(3)), `{"count":3}`},
		// throttle_sender: int32 N.
		{"vrpn_Imager Throttle_Frames", wbe(int32(5)), `{"frames":5}`},
		{"vrpn_Imager Throttle_Frames", wbe(int32(-1)), `{"frames":-1}`},
		// vrpn_ImagerPose_Server::send_description: origin, dDepth, dRow,
		// dCol.
		{nameImagerPose, f64s(0, 0, 0.5, 0, 0, 0.01, 0, 0.3, 0, 0.4, 0, 0),
			`{"origin":[0,0,0.5],"d_depth":[0,0,0.01],"d_row":[0,0.3,0],"d_col":[0.4,0,0]}`},
	}
}

// decodeOne decodes one message of type name with body, checking the
// record against the declarations.
func decodeOne(t *testing.T, name string, body []byte) *dissect.Record {
	t.Helper()
	run := fuzzFeed(catalogueStream([]sample{{name: name, body: body}}), 0, 1, true)
	r := run.recs[len(run.recs)-1]
	if r.Type != name {
		t.Fatalf("type %q, want %q", r.Type, name)
	}
	reg, _ := registry(t)
	dissecttest.CheckDeclared(t, reg, []*dissect.Record{r})
	return r
}

// wantWarning fails unless one of r's warnings holds every part.
func wantWarning(t *testing.T, r *dissect.Record, parts ...string) {
	t.Helper()
	for _, w := range r.Warnings {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(w, p)
		}
		if ok {
			return
		}
	}
	t.Errorf("warnings %q, want one with %q", r.Warnings, parts)
}

// TestImagerRegionHostile: a header whose ranges imply more pixels than
// the body holds keeps the body as data and says why with the offset (an
// allocation from its count, 2^48 pixels, would not survive); an empty
// range the same.
func TestImagerRegionHostile(t *testing.T) {
	huge := wbe(encRegionHead(0, 0, 65535, 0, 65535, 0, 65535, 6), leF32(1, 2))
	r := decodeOne(t, "vrpn_Imager Regionf32", huge)
	wantWarning(t, r, "281474976710656 pixels at offset 16")
	if d, ok := r.Fields.Get("data"); !ok || len(d.Raw()) != len(huge) {
		t.Errorf("data %v, want the %d bytes of the body", d, len(huge))
	}
	r = decodeOne(t, "vrpn_Imager Regionu8", wbe(encRegionHead(0, 0, 0, 5, 4, 0, 0, 1), []byte{1}))
	wantWarning(t, r, "row range 5..4 at offset 6 is empty")
	if _, ok := r.Fields.Get("data"); !ok {
		t.Error("empty range: no data")
	}
}

// TestImagerRegionMismatch: a value type other than the message type's is
// warned about, the pixels read as the message type says; pixels beyond
// the header's count are warned about.
func TestImagerRegionMismatch(t *testing.T) {
	r := decodeOne(t, "vrpn_Imager Regionu8", wbe(encRegionHead(0, 0, 0, 0, 0, 0, 1, 6), []byte{9, 8}))
	wantWarning(t, r, "value_type float32 at offset 14")
	if v, _ := r.Fields.Get("value_type"); v.Str() != "float32" {
		t.Errorf("value_type %v", v)
	}
	if v, _ := r.Fields.Get("values"); len(v.Items()) != 2 || v.Items()[1].Value.Uint() != 8 {
		t.Errorf("values %v, want [9 8]", v)
	}
	r = decodeOne(t, "vrpn_Imager Regionu8", wbe(encRegionHead(0, 0, 0, 0, 0, 0, 0, 1), []byte{7, 6}))
	wantWarning(t, r, "body of 18 bytes is longer than the 17 bytes")
	r = decodeOne(t, "vrpn_Imager Regionu16", wbe(encRegionHead(0, 0, 0, 0, 0, 0, 0, 9), le16(7)))
	wantWarning(t, r, "value_type 9 at offset 14")
}

// TestImagerDescriptionHostile: a negative or oversized channel count is
// refused with its offset; more channels than mainline's 100 are decoded
// with a warning; compression other than none and a name with no NUL are
// warned about.
func TestImagerDescriptionHostile(t *testing.T) {
	r := decodeOne(t, nameImagerDescription, wbe(int32(1), int32(1), int32(1), int32(-1)))
	wantWarning(t, r, "num_channels -1 at offset 12")
	r = decodeOne(t, nameImagerDescription, wbe(int32(1), int32(1), int32(1), int32(math.MaxInt32)))
	wantWarning(t, r, "2147483647 channels at offset 16")
	if _, ok := r.Fields.Get("data"); !ok {
		t.Error("oversized count: no data")
	}
	ch := imgChannel{name: cname("c"), units: cname("u"), scale: 1}
	many := make([]imgChannel, 101)
	for i := range many {
		many[i] = ch
	}
	r = decodeOne(t, nameImagerDescription, encImagerDescription(1, 1, 1, many))
	wantWarning(t, r, "101 channels, more than mainline's 100")
	if v, _ := r.Fields.Get("channels"); len(v.Items()) != 101 {
		t.Errorf("%d channels decoded, want 101", len(v.Items()))
	}
	bad := imgChannel{name: []byte(strings.Repeat("n", 100)), units: cname("u"), compression: 3}
	r = decodeOne(t, nameImagerDescription, encImagerDescription(1, 1, 1, []imgChannel{bad}))
	wantWarning(t, r, "channel 0 compression 3 at offset 32")
	wantWarning(t, r, "channel 0 name at offset 36 fills its 100 bytes")
	c := r.Fields
	v, _ := c.Get("channels")
	obj := v.Items()[0].Value.Items()
	if obj[4].Value.Str() != "3" || obj[5].Value.Str() != strings.Repeat("n", 100) {
		t.Errorf("channel %v", obj)
	}
}

// BenchmarkParseImagerRegion measures Parse over 20 Regionu8 messages of
// 200×300 pixels (a camera's band), with fields (decode) and types only.
func BenchmarkParseImagerRegion(b *testing.B) {
	px := make([]byte, 200*300)
	for i := range px {
		px[i] = byte(i)
	}
	region := wbe(encRegionHead(0, 0, 0, 0, 199, 0, 299, 1), px)
	head := append([]byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"), encDescription(-1, 0, "Imager0", 0)...)
	head = append(head, encDescription(-2, 0, "vrpn_Imager Regionu8", 1)...)
	var body []byte
	for i := range 20 {
		body = append(body, encMsg(1795306101, uint32(i), 0, 0, uint32(2+i), region)...)
	}
	benchParse(b, head, body, func(_ int, r *dissect.Record) bool {
		return r.Type == "vrpn_Imager Regionu8" && len(r.Warnings) == 0
	})
}
