package vrpn

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// The types of mainline's vrpn_Imager.C: an imager server describes its
// image and channels, then sends regions of pixels between begin and end
// frame messages; a client may throttle it. vrpn_ImagerPose places the
// image in space.

const (
	nameImagerDescription = "vrpn_Imager Description"
	nameImagerPose        = "vrpn_ImagerPose Description"
)

const (
	// imagerNameLen is mainline's vrpn_CNAME_LENGTH: a channel's name and
	// units are each sent as a fixed buffer of this many bytes.
	imagerNameLen = 100
	// imagerChannelLen is one channel of a description, as
	// vrpn_Imager_Channel::buffer writes it: float32 minVal, maxVal,
	// offset, scale, uint32 compression, name, units.
	imagerChannelLen = 4*4 + 4 + 2*imagerNameLen
	// imagerMaxChannels is mainline's vrpn_IMAGER_MAX_CHANNELS: a client
	// holds no more.
	imagerMaxChannels = 100
	// imagerRegionHead is a region's header: int16 channel, uint16
	// dMin, dMax, rMin, rMax, cMin, cMax, valType.
	imagerRegionHead = 16
)

// imagerFrame is the body of Begin_Frame and End_Frame: the region the
// frame covers, depths first.
func imagerFrame() []layout.Field {
	return []layout.Field{
		u16f("depth_min", "first depth slice of the frame"),
		u16f("depth_max", "last depth slice of the frame"),
		u16f("row_min", "first row of the frame"),
		u16f("row_max", "last row of the frame"),
		u16f("col_min", "first column of the frame"),
		u16f("col_max", "last column of the frame"),
	}
}

// imagerDefs lists the catalogued types of mainline's vrpn_Imager.C.
func imagerDefs() []msgDef {
	return []msgDef{
		{
			name: nameImagerDescription,
			doc:  "server report: the image's size and its channels (vrpn_Imager_Server send_description, on each new connection and ping, and before the first region)",
			body: []layout.Field{
				i32f("depth", "depth slices of the image"),
				i32f("rows", "rows of the image"),
				i32f("cols", "columns of the image"),
				i32f("num_channels", "how many channels follow"),
				{ID: "channels", Type: imagerChannel, Repeat: layout.RepeatExpr, RepeatExpr: layout.FieldRef("num_channels"), Doc: "the channels, in index order"},
			},
			decode: imagerDescription,
		},
		imagerRegion("vrpn_Imager Regionu8", "u1", 1, "uint8"),
		imagerRegion("vrpn_Imager Regionu16", "u2le", 4, "uint16"),
		imagerRegion("vrpn_Imager Regionu12in16", "u2le", 5, "uint12in16"),
		imagerRegion("vrpn_Imager Regionf32", "f4le", 6, "float32"),
		{name: "vrpn_Imager Begin_Frame", doc: "server report: a frame starts (vrpn_Imager_Server send_begin_frame)", body: imagerFrame()},
		{name: "vrpn_Imager End_Frame", doc: "server report: a frame is complete (vrpn_Imager_Server send_end_frame)", body: imagerFrame()},
		{name: "vrpn_Imager Discarded_Frames", doc: "server report: frames were dropped (vrpn_Imager_Server send_discarded_frames)", body: []layout.Field{
			u16f("count", "how many frames were dropped; 0: some, how many unknown"),
		}},
		{name: "vrpn_Imager Throttle_Frames", doc: "client request: how many more frames the server may send (vrpn_Imager_Remote throttle_sender)", body: []layout.Field{
			i32f("frames", "frames the server may send before dropping (added to a limit already set); negative: no limit"),
		}},
		{
			name: nameImagerPose,
			doc:  "server report: where the image lies in space (vrpn_ImagerPose_Server send_description, on each new connection and ping)",
			// Mainline writes origin, dDepth, dRow, dCol, in that order.
			body: []layout.Field{
				vec3f("origin", "m", "corner of pixel (0,0,0)"),
				vec3f("d_depth", "m", "span of the image in depth, from the origin (stale memory of the server when it was given none)"),
				vec3f("d_row", "m", "span of the image along its rows (its height), from the origin"),
				vec3f("d_col", "m", "span of the image along its columns (its width), from the origin"),
			},
		},
	}
}

// imagerChannel is the layout type of one channel of a description, as
// vrpn_Imager_Channel::buffer writes it.
const imagerChannel = "imager_channel"

func imagerChannelType() layout.Type {
	return layout.Type{Name: imagerChannel, Doc: "one channel of an imager description", Seq: []layout.Field{
		f32f("min_val", "", "least value a pixel of the channel may take"),
		f32f("max_val", "", "greatest value a pixel of the channel may take"),
		f32f("offset", "", "value in units = raw value × scale + offset"),
		f32f("scale", "", "value in units = raw value × scale + offset"),
		enumf("compression", "compression of the channel's regions (mainline's only one is none)", "imager_compression"),
		textf("name", imagerNameLen, "the channel's name, up to its NUL"),
		textf("units", imagerNameLen, "the channel's units, up to their NUL"),
	}}
}

// imagerDescription decodes a description: int32 depth, rows, cols,
// channel count, then each channel as vrpn_Imager_Channel::buffer writes
// it.
func imagerDescription(c *dissect.Ctx, b []byte) ([]byte, bool) {
	r := c.Rec
	const name = nameImagerDescription
	if len(b) < 16 {
		r.Warnf("body of %d bytes too short for %s: the sizes at offset 0 need 16 bytes", len(b), name)
		return nil, false
	}
	n := int64(i32(b[12:]))
	if n < 0 {
		r.Warnf("%s: num_channels %d at offset 12 is negative", name, n)
		return nil, false
	}
	need := 16 + n*imagerChannelLen
	if int64(len(b)) < need {
		r.Warnf("body of %d bytes too short for %s: %d channels at offset 16 need %d bytes", len(b), name, n, need-16)
		return nil, false
	}
	if n > imagerMaxChannels {
		r.Warnf("%s: %d channels, more than mainline's %d (a mainline client overruns its table)", name, n, imagerMaxChannels)
	}
	long(c, b, int(need), name)
	// Warnings first: a run without Decode warns the same.
	for i := range int(n) {
		off := 16 + i*imagerChannelLen
		if comp := be.Uint32(b[off+16:]); comp != 0 {
			r.Warnf("%s: channel %d compression %d at offset %d is not one mainline names", name, i, comp, off+16)
		}
		for j, what := range [2]string{"name", "units"} {
			at := off + 20 + j*imagerNameLen
			if indexNUL(b[at:at+imagerNameLen]) < 0 {
				r.Warnf("%s: channel %d %s at offset %d fills its %d bytes with no NUL", name, i, what, at, imagerNameLen)
			}
		}
	}
	if !c.Decode {
		return nil, true
	}
	mark := len(r.Fields)
	for i, k := range [4]string{"depth", "rows", "cols", "num_channels"} {
		r.Add(k, dissect.Int(int64(i32(b[4*i:]))))
	}
	chans := r.Alloc(int(n))
	for i := range chans {
		cb := b[16+i*imagerChannelLen:][:imagerChannelLen]
		f := r.Alloc(7)
		for j, k := range [4]string{"min_val", "max_val", "offset", "scale"} {
			f[j] = dissect.Field{Key: k, Value: dissect.Float32(math.Float32frombits(be.Uint32(cb[4*j:])))}
		}
		comp := be.Uint32(cb[16:])
		cv, ok := enumName("imager_compression", int64(comp))
		if !ok {
			cv = strconv.FormatUint(uint64(comp), 10)
		}
		f[4] = dissect.Field{Key: "compression", Value: dissect.Str(cv)}
		f[5] = dissect.Field{Key: "name", Value: fixedText(cb[20 : 20+imagerNameLen])}
		f[6] = dissect.Field{Key: "units", Value: fixedText(cb[20+imagerNameLen:])}
		chans[i].Value = dissect.Object(f)
	}
	r.Add("channels", dissect.Array(chans))
	sum := appendSummary(nil, r.Fields[mark:mark+4])
	sum = append(sum, " channels=["...)
	for i, ch := range chans {
		if i == summaryItems {
			sum = append(sum, " …"...)
			break
		}
		if i > 0 {
			sum = append(sum, ' ')
		}
		sum = appendValue(sum, ch.Value.Items()[5].Value)
	}
	return append(sum, ']'), true
}

// fixedText is a fixed buffer's text up to its NUL (all of it when it has
// none).
func fixedText(b []byte) dissect.Value {
	if n := indexNUL(b); n >= 0 {
		b = b[:n]
	}
	return dissect.Str(string(b))
}

// imagerValueType names a mainline vrpn_IMAGER_VALTYPE value ("" for
// another).
func imagerValueType(v uint16) string {
	name, _ := enumName("imager_value_type", int64(v))
	return name
}

// imagerRegion is a region type whose pixels are of layout type pixel
// (u1, u2le or f4le) and whose header says valType (typeName).
//
// The header is int16 channel, uint16 dMin, dMax, rMin, rMax, cMin, cMax
// and valType; the pixels follow, (dMax-dMin+1)×(rMax-rMin+1)×(cMax-cMin+1)
// of them, depth by depth, row by row. The server copies its own memory
// into the message, so multi-byte pixels are little-endian (mainline
// refuses to send them from a big-endian host).
func imagerRegion(name, pixel string, valType uint16, typeName string) msgDef {
	return msgDef{
		name: name,
		doc:  "server report: the " + typeName + " pixels of a region of one channel (vrpn_Imager_Server send_region_using_base_pointer)",
		body: []layout.Field{
			{ID: "channel", Type: "s2", Doc: "index of the channel the pixels belong to"},
			u16f("depth_min", "first depth slice of the region"),
			u16f("depth_max", "last depth slice of the region"),
			u16f("row_min", "first row of the region"),
			u16f("row_max", "last row of the region"),
			u16f("col_min", "first column of the region"),
			u16f("col_max", "last column of the region"),
			{ID: "value_type", Type: "u2", Enum: "imager_value_type", Doc: "pixel type the header names"},
			{ID: "values", Type: pixel, Repeat: layout.RepeatEOS, Doc: "the pixels, raw (value in units = raw × scale + offset of the channel), depth by depth, row by row, column by column"},
		},
		decode: func(c *dissect.Ctx, b []byte) ([]byte, bool) {
			return decodeRegion(c, b, name, pixel, valType)
		},
	}
}

func decodeRegion(c *dissect.Ctx, b []byte, name, pixel string, valType uint16) ([]byte, bool) {
	r := c.Rec
	if len(b) < imagerRegionHead {
		r.Warnf("body of %d bytes too short for %s: the region header at offset 0 needs %d bytes", len(b), name, imagerRegionHead)
		return nil, false
	}
	count := int64(1)
	for i, axis := range [3]string{"depth", "row", "col"} {
		lo, hi := be.Uint16(b[2+4*i:]), be.Uint16(b[4+4*i:])
		if hi < lo {
			r.Warnf("%s: %s range %d..%d at offset %d is empty", name, axis, lo, hi, 2+4*i)
			return nil, false
		}
		count *= int64(hi-lo) + 1
	}
	w := int64(pixel[1] - '0') // u1, u2le, f4le
	if room := int64(len(b) - imagerRegionHead); count*w > room {
		r.Warnf("body of %d bytes too short for %s: %d pixels at offset %d need %d bytes", len(b), name, count, imagerRegionHead, count*w)
		return nil, false
	}
	vt := be.Uint16(b[14:])
	vtName := imagerValueType(vt)
	if vtName == "" {
		vtName = strconv.FormatUint(uint64(vt), 10)
	}
	if vt != valType {
		r.Warnf("%s: value_type %s at offset 14 is not this type's %s; pixels read as %s", name, vtName, imagerValueType(valType), imagerValueType(valType))
	}
	long(c, b, imagerRegionHead+int(count*w), name)
	if !c.Decode {
		return nil, true
	}
	r.Add("channel", dissect.Int(int64(int16(be.Uint16(b)))))
	for i, k := range [6]string{"depth_min", "depth_max", "row_min", "row_max", "col_min", "col_max"} {
		r.Add(k, dissect.Uint(uint64(be.Uint16(b[2+2*i:]))))
	}
	r.Add("value_type", dissect.Str(vtName))
	vals := r.Alloc(int(count))
	px := b[imagerRegionHead:]
	for i := range vals {
		switch w {
		case 1:
			vals[i].Value = dissect.Uint(uint64(px[i]))
		case 2:
			vals[i].Value = dissect.Uint(uint64(binary.LittleEndian.Uint16(px[2*i:])))
		default:
			vals[i].Value = dissect.Float32(math.Float32frombits(binary.LittleEndian.Uint32(px[4*i:])))
		}
	}
	r.Add("values", dissect.Array(vals))
	sum := []byte(" channel=")
	sum = strconv.AppendInt(sum, int64(int16(be.Uint16(b))), 10)
	for i, axis := range [3]string{"depths", "rows", "cols"} {
		sum = append(sum, ' ')
		sum = append(sum, axis...)
		sum = append(sum, '=')
		sum = strconv.AppendUint(sum, uint64(be.Uint16(b[2+4*i:])), 10)
		sum = append(sum, ".."...)
		sum = strconv.AppendUint(sum, uint64(be.Uint16(b[4+4*i:])), 10)
	}
	sum = append(sum, " values="...)
	return appendValue(sum, dissect.Array(vals)), true
}
