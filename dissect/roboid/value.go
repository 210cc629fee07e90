package roboid

import (
	"encoding/binary"
	"math"
	"strconv"
)

// SemUndefined is the semantics name of the nibbles the spec leaves
// undefined: 0, 4 and 9-15.
const SemUndefined = "undefined"

// semNames names each semantics nibble, as written in the "semantics" field.
var semNames = [16]string{
	SemUndefined,           // 0
	"position",             // 1
	"linear_velocity",      // 2
	"linear_acceleration",  // 3
	SemUndefined,           // 4
	"orientation",          // 5: "orientation or rotation"
	"angular_velocity",     // 6
	"angular_acceleration", // 7
	"direction",            // 8
	// 9-15
	SemUndefined, SemUndefined, SemUndefined, SemUndefined, SemUndefined, SemUndefined, SemUndefined,
}

// angularSizes and linearSizes give the byte counts of the two 2-bit syntax
// fields: angular 00 none, 01 one byte (1D), 10 two bytes (2D), 11 three
// bytes (3D); linear 00 none, 01 one byte, 10 two bytes, 11 four bytes.
var (
	angularSizes = [4]uint8{0, 1, 2, 3}
	linearSizes  = [4]uint8{0, 1, 2, 4}
)

// DataType is the data-type byte that precedes each value of a Pose:
// bits 7-6 the angular syntax, bits 5-4 the linear syntax, bits 3-0 the
// semantics.
type DataType uint8

// AngularBytes returns the number of angle bytes (0-3), one per dimension.
func (t DataType) AngularBytes() int { return int(angularSizes[t>>6]) }

// LinearBytes returns the number of magnitude bytes (0, 1, 2 or 4).
func (t DataType) LinearBytes() int { return int(linearSizes[t>>4&3]) }

// Size returns the number of value bytes after the data-type byte: angular
// plus linear bytes.
func (t DataType) Size() int { return t.AngularBytes() + t.LinearBytes() }

// Semantics returns the semantics nibble's name ("position",
// "linear_velocity", ...), or [SemUndefined].
func (t DataType) Semantics() string { return semNames[t&15] }

// Defined reports whether the semantics nibble is one the spec defines.
func (t DataType) Defined() bool { return semNames[t&15] != SemUndefined }

// String returns the byte as written in the "data_type" field, e.g. "0x62".
func (t DataType) String() string { return typeHex[t] }

// typeHex holds "0x00" ... "0xff", so that data_type fields cost nothing.
var typeHex = func() (s [256]string) {
	for i := range s {
		s[i] = "0x" + strconv.FormatUint(uint64(i)|0x100, 16)[1:]
	}
	return s
}()

// AngleDegrees converts one angle byte to degrees, unsigned: b × 360/256,
// so 0x00 is 0°, 0x40 is 90° and 0xff is 358.59375°. The result is exact.
func AngleDegrees(b byte) float64 { return float64(b) * (360.0 / 256.0) }

// Half converts an IEEE 754 binary16 value to float64 (exactly: every half
// is a float64). Subnormals, signed zeros and infinities are kept; every NaN
// becomes a NaN.
func Half(h uint16) float64 {
	exp := int(h >> 10 & 0x1f)
	frac := float64(h & 0x3ff)
	var v float64
	switch exp {
	case 0: // zero or subnormal: frac × 2^-24
		v = frac * 0x1p-24
	case 0x1f:
		if h&0x3ff != 0 {
			return math.NaN()
		}
		v = math.Inf(1)
	default: // (1024 + frac) × 2^(exp-15-10)
		v = math.Ldexp(1024+frac, exp-25)
	}
	if h&0x8000 != 0 {
		v = math.Copysign(v, -1)
	}
	return v
}

// magnitude returns the unsigned little-endian value of a 1-, 2- or 4-byte
// magnitude.
func magnitude(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return 0
}
