package roboid_test

import (
	"math"
	"testing"
)

// The data-type layout, written out by hand from roboid-message-format.txt
// ("Syntax" and "Semantics" tables) independently of the package's tables.
var (
	// angle bytes for bits 7-6: 00 none, 01 1-byte 1D, 10 2-byte 2D, 11 3-byte 3D.
	handAngular = [4]int{0, 1, 2, 3}
	// magnitude bytes for bits 5-4: 00 none, 01 1 byte, 10 2 bytes, 11 4 bytes.
	handLinear = [4]int{0, 1, 2, 4}
	// semantics for bits 3-0; absent: undefined.
	handSemantics = map[int]string{
		1: "position", 2: "linear_velocity", 3: "linear_acceleration",
		5: "orientation", 6: "angular_velocity", 7: "angular_acceleration", 8: "direction",
	}
)

// handSizes lists data types whose size was counted by hand, from the spec's
// examples (protocols.md §3.3 table) and a few more.
var handSizes = map[byte]struct {
	ang, lin int
	sem      string
}{
	0x62: {1, 2, "linear_velocity"},
	0x48: {1, 0, "direction"},
	0x88: {2, 0, "direction"},
	0x83: {2, 0, "linear_acceleration"},
	0xd4: {3, 1, "undefined"},
	0xe5: {3, 2, "orientation"},
	0xf5: {3, 4, "orientation"},
	0xb1: {2, 4, "position"},
	0xa1: {2, 2, "position"},
	0xd5: {3, 1, "orientation"},
	0xe6: {3, 2, "angular_velocity"},
	0xf6: {3, 4, "angular_velocity"},
	0x17: {0, 1, "angular_acceleration"},
	0xff: {3, 4, "undefined"},
	0x01: {0, 0, "position"},
	0x40: {1, 0, "undefined"},
}

// TestAllDataTypes decodes a Pose holding one value of each of the 256
// data types. The value bytes are the angles 0x40, 0x80, 0xc0 (90°, 180°,
// 270°) as far as the type has angles, then a magnitude of 0x2a (1 byte,
// 42), 00 3c (2 bytes: 15360, float16 1.0) or 00 00 80 3f (4 bytes:
// 1065353216, float32 1.0).
func TestAllDataTypes(t *testing.T) {
	angleBytes := []byte{0x40, 0x80, 0xc0}
	angleDegs := []float64{90, 180, 270}
	mags := map[int][]kv{
		1: {{"magnitude_uint", u(42)}},
		2: {{"magnitude_uint", u(15360)}, {"magnitude_f16", fl(1)}},
		4: {{"magnitude_uint", u(1065353216)}, {"magnitude_f32", f32(1)}},
	}
	magBytes := map[int][]byte{1: {0x2a}, 2: {0x00, 0x3c}, 4: {0x00, 0x00, 0x80, 0x3f}}
	s := newSession(true)
	for dt := 0; dt < 256; dt++ {
		ang, lin := handAngular[dt>>6], handLinear[dt>>4&3]
		sem, defined := handSemantics[dt&15]
		if !defined {
			sem = "undefined"
		}
		if hs, ok := handSizes[byte(dt)]; ok && (hs.ang != ang || hs.lin != lin || hs.sem != sem) {
			t.Fatalf("test tables disagree on 0x%02x", dt)
		}
		body := append([]byte{}, angleBytes[:ang]...)
		body = append(body, magBytes[lin]...)
		in := append([]byte{0x10, 9, 8, byte(dt)}, body...)
		r := s.parse(t, in)
		if r.Type != "Pose" {
			t.Fatalf("0x%02x: type %q", dt, r.Type)
		}
		name := "0x" + hexByte(byte(dt))
		if dt == 0 {
			checkFields(t, r.Fields, append(pose(9, 8), kv{"rest", hx("00")}))
			checkWarnings(t, r.Warnings, []string{"data type 0x00 at byte 3 announces an extension byte"})
			continue
		}
		var extra []kv
		if ang > 0 {
			extra = append(extra, kv{"angles_deg", degs(angleDegs[:ang]...)})
		}
		extra = append(extra, mags[lin]...)
		checkFields(t, r.Fields, pose(9, 8, val(name, sem, uint64(ang), uint64(lin), hexOf(body), extra...)))
		var warn []string
		if !defined {
			warn = []string{"has undefined semantics"}
		}
		checkWarnings(t, r.Warnings, warn)
		if t.Failed() {
			t.Fatalf("data type %s", name)
		}
		// One byte short: truncated, the partial bytes shown.
		if n := ang + lin; n > 0 {
			r = s.parse(t, in[:len(in)-1])
			checkFields(t, r.Fields, pose(9, 8, val(name, sem, uint64(ang), uint64(lin), hexOf(body[:n-1]), truncated)))
			if len(r.Warnings) != len(warn)+1 {
				t.Fatalf("data type %s cut short: warnings %q", name, r.Warnings)
			}
		}
	}
}

func hexOf(b []byte) string {
	s := ""
	for _, c := range b {
		s += hexByte(c)
	}
	return s
}

// TestFloat16Exhaustive compares the float16 reading of every 2-byte
// magnitude with a conversion done another way: rebuilding the float32 bit
// pattern (rebias the exponent, normalise subnormals by shifting).
func TestFloat16Exhaustive(t *testing.T) {
	s := newSession(true)
	in := []byte{0x10, 1, 2, 0x22, 0, 0}
	for x := 0; x < 1<<16; x++ {
		in[4], in[5] = byte(x), byte(x>>8)
		r := s.parse(t, in)
		v, _ := r.Fields.Get("values")
		got, _ := v.Items()[0].Value.Get("magnitude_f16")
		want := halfBits(uint16(x))
		g := got.Float()
		if !(g == want && math.Signbit(g) == math.Signbit(want) || math.IsNaN(g) && math.IsNaN(want)) {
			t.Fatalf("0x%04x: got %v, want %v", x, g, want)
		}
	}
}

// halfBits converts binary16 to float64 through a float32 bit pattern.
func halfBits(x uint16) float64 {
	sign := uint32(x>>15) << 31
	exp := uint32(x>>10) & 0x1f
	frac := uint32(x) & 0x3ff
	var bits uint32
	switch {
	case exp == 0 && frac == 0:
		bits = sign
	case exp == 0:
		// Subnormal: shift the fraction up until its leading 1 reaches
		// bit 10, lowering the exponent once per shift.
		e := int32(-14)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		bits = sign | uint32(e+127)<<23 | (frac&0x3ff)<<13
	case exp == 0x1f:
		bits = sign | 0xff<<23 | frac<<13
	default:
		bits = sign | (exp-15+127)<<23 | frac<<13
	}
	return float64(math.Float32frombits(bits))
}
