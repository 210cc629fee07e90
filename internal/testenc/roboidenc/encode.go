// Package roboidenc is an encoder for the Roboid Control network sync
// messages with the typed values of MessageFormat.md, written from the spec
// (roboid-message-format.txt) and the verified facts (protocols.md §3) only,
// separately from the decoder in dissect/roboid. Tests use it as an
// independent source of truth: every function here knows what it put on
// the wire, so the records a decoder should produce can be listed without
// running the decoder.
//
// # Messages
//
// The README's "Network Sync Protocol" names the message ids (first byte)
// but not their bodies. This encoder writes, one message per UDP datagram:
//
//	0xA0 Client       [0xA0]                                  (no network id yet)
//	0xA1 NetworkId    [0xA1, network_id]
//	0x10 Pose         [0x10, network_id, thing_id, typed values...]
//	0x80 NewThing     [0x80, network_id, thing_id, thing_type]
//	0x81 Investigate  [0x81, network_id, thing_id]
//	0x90 ModelURL     [0x90, network_id, thing_id, URL bytes]
//
// The ids after the message id follow protocols.md §3.5 ("networkId/thingId
// bytes after the id"); the thing type byte and the URL as plain bytes to
// the end are this encoder's reading, not documented. A Pose's typed values
// run to the end of the datagram (a Pose has no count).
//
// # Typed values
//
// A typed value is a data-type byte, bits 7-6 the angular part (0-3 angle
// bytes, one per dimension), bits 5-4 the linear part (0, 1, 2 or 4
// magnitude bytes), bits 3-0 the semantics; then the angle bytes, then the
// magnitude bytes. The order "angles first" is this encoder's reading of
// "the angular and linear part" (the spec does not fix it). The spec says
// only how many bytes there are; the encodings of [Angle8], [Float16] and
// the little-endian magnitudes are the unverified leads of protocols.md
// §3.4 and §3.5, used to give the bytes meaningful values.
package roboidenc

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Port is the UDP port of the sessions (an unverified lead, protocols.md
// §3.4).
const Port = 7681

// Message ids (README "Network Sync Protocol").
const (
	IDPose        byte = 0x10
	IDNewThing    byte = 0x80
	IDInvestigate byte = 0x81
	IDModelURL    byte = 0x90
	IDClient      byte = 0xA0
	IDNetworkID   byte = 0xA1
)

// Contract type names (output-contract.md, "roboid").
const (
	TypePose        = "Pose"
	TypeNewThing    = "NewThing"
	TypeInvestigate = "Investigate"
	TypeModelURL    = "ModelURL"
	TypeClient      = "Client"
	TypeNetworkID   = "NetworkId"
	TypeUnknown     = "unknown"
	TypeSkipped     = "skipped"
	TypeGap         = "gap"
)

// TypeName returns the contract type name of a message id, and false for
// ids that are not one of the six.
func TypeName(id byte) (string, bool) {
	switch id {
	case IDPose:
		return TypePose, true
	case IDNewThing:
		return TypeNewThing, true
	case IDInvestigate:
		return TypeInvestigate, true
	case IDModelURL:
		return TypeModelURL, true
	case IDClient:
		return TypeClient, true
	case IDNetworkID:
		return TypeNetworkID, true
	}
	return TypeUnknown, false
}

// Semantics codes (the low nibble of a data type).
const (
	SemPosition            byte = 0x1
	SemLinearVelocity      byte = 0x2
	SemLinearAcceleration  byte = 0x3
	SemOrientation         byte = 0x5
	SemAngularVelocity     byte = 0x6
	SemAngularAcceleration byte = 0x7
	SemDirection           byte = 0x8
)

// SemUndefined is the name of semantics codes the spec does not define
// (0, 4, 9-15).
const SemUndefined = "undefined"

// SemanticsName returns the name of a semantics code (low 4 bits used):
// the spec's words in lower case joined by underscores ("Orientation or
// rotation" is "orientation"), and false with [SemUndefined] for 0, 4 and
// 9-15.
func SemanticsName(code byte) (string, bool) {
	switch code & 0xF {
	case SemPosition:
		return "position", true
	case SemLinearVelocity:
		return "linear_velocity", true
	case SemLinearAcceleration:
		return "linear_acceleration", true
	case SemOrientation:
		return "orientation", true
	case SemAngularVelocity:
		return "angular_velocity", true
	case SemAngularAcceleration:
		return "angular_acceleration", true
	case SemDirection:
		return "direction", true
	}
	return SemUndefined, false
}

// DataType returns the data-type byte of a value with angular angle bytes
// (0-3), linear magnitude bytes (0, 1, 2 or 4) and semantics (0-15).
func DataType(angular, linear int, semantics byte) (byte, error) {
	if angular < 0 || angular > 3 {
		return 0, fmt.Errorf("roboidenc: %d angle bytes (want 0-3)", angular)
	}
	var l byte
	switch linear {
	case 0:
		l = 0
	case 1:
		l = 1
	case 2:
		l = 2
	case 4:
		l = 3
	default:
		return 0, fmt.Errorf("roboidenc: %d magnitude bytes (want 0, 1, 2 or 4)", linear)
	}
	if semantics > 15 {
		return 0, fmt.Errorf("roboidenc: semantics %d (want 0-15)", semantics)
	}
	return byte(angular)<<6 | l<<4 | semantics, nil
}

// Syntax returns the number of angle bytes and magnitude bytes a data type
// announces.
func Syntax(dt byte) (angular, linear int) {
	angular = int(dt >> 6)
	linear = [4]int{0, 1, 2, 4}[dt>>4&3]
	return angular, linear
}

// Angle8 returns the byte of an angle in degrees as a binary angle of 256
// steps per turn: round(deg × 256/360) mod 256 (halves round away from
// zero; negative angles wrap).
func Angle8(deg float64) byte {
	r := math.Round(deg * 256 / 360)
	m := math.Mod(r, 256)
	if m < 0 {
		m += 256
	}
	return byte(int(m))
}

// Angle8Degrees returns the unsigned reading of an angle byte: b × 360/256
// degrees (protocols.md §3.5).
func Angle8Degrees(b byte) float64 { return float64(b) * 360 / 256 }

// Float16 returns the IEEE 754 binary16 bits nearest to f (round to nearest,
// ties to even; overflow gives an infinity, NaN a quiet NaN keeping the
// sign).
func Float16(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23) & 0xFF
	man := bits & 0x7FFFFF
	switch {
	case exp == 0xFF && man != 0:
		return sign | 0x7E00
	case exp == 0xFF:
		return sign | 0x7C00
	}
	// The value is (1.man) × 2^(exp-127) for normal floats, (0.man) ×
	// 2^-126 for subnormal ones. As a 24-bit integer significand m the
	// value is m × 2^(e) with:
	m := man
	e := exp - 127 - 23
	if exp == 0 {
		e = -126 - 23
	} else {
		m |= 1 << 23
	}
	if m == 0 {
		return sign
	}
	// Normalise m to exactly 24 bits so that its top bit is bit 23.
	for m < 1<<23 {
		m <<= 1
		e--
	}
	// Now the value is 1.xxx × 2^(e+23). Half floats: normal exponents
	// -14..15 (11-bit significand), subnormals step 2^-24.
	p := e + 23 // unbiased exponent
	var shift int
	var hexp int
	if p >= -14 {
		shift = 13 // keep 11 bits of the 24
		hexp = p + 15
	} else {
		// subnormal: the value in units of 2^-24 is m × 2^(e+24).
		shift = -(e + 24)
		hexp = 0
	}
	if shift > 24 {
		return sign // rounds to zero
	}
	q := m >> uint(shift)
	rem := m & (1<<uint(shift) - 1)
	half := uint32(1) << uint(shift-1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	if hexp == 0 {
		// q is the subnormal significand (may have carried into the
		// smallest normal, which the bit layout handles).
		return sign | uint16(q)
	}
	// q is 11 bits (1.xxxxxxxxxx) or 12 bits after a carry.
	if q == 1<<11 {
		q >>= 1
		hexp++
	}
	if hexp >= 31 {
		return sign | 0x7C00
	}
	return sign | uint16(hexp)<<10 | uint16(q&0x3FF)
}

// Float16Value returns the value of binary16 bits h, exactly, as a float32.
func Float16Value(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1F
	man := int(h & 0x3FF)
	switch exp {
	case 0:
		return sign * float32(math.Ldexp(float64(man), -24))
	case 31:
		if man != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(float64(man|0x400), exp-25))
}

// Mag8 returns a 1-byte magnitude.
func Mag8(v byte) []byte { return []byte{v} }

// Mag16 returns a 2-byte magnitude as an unsigned little-endian integer.
func Mag16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }

// MagF16 returns a 2-byte magnitude as a little-endian IEEE 754 half float.
func MagF16(f float32) []byte { return Mag16(Float16(f)) }

// Mag32 returns a 4-byte magnitude as an unsigned little-endian integer.
func Mag32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// MagF32 returns a 4-byte magnitude as a little-endian IEEE 754 single.
func MagF32(f float32) []byte { return Mag32(math.Float32bits(f)) }

// Value is one typed value of a Pose: its data-type byte, then angle
// bytes and magnitude bytes as written on the wire.
type Value struct {
	DataType  byte
	Angles    []byte
	Magnitude []byte
}

// NewValue returns the value with the given angle and magnitude bytes and
// semantics; its data type follows from their sizes. It panics when the
// sizes cannot be expressed (more than 3 angle bytes, a magnitude of 3 or
// more than 4 bytes): values are written by tests.
func NewValue(semantics byte, angles, magnitude []byte) Value {
	dt, err := DataType(len(angles), len(magnitude), semantics)
	if err != nil {
		panic(err)
	}
	return Value{DataType: dt, Angles: append([]byte{}, angles...), Magnitude: append([]byte{}, magnitude...)}
}

// RawValue returns a value with an explicit data-type byte and value bytes
// (angle bytes first, per the data type's syntax). It panics when the byte
// count does not match the data type.
func RawValue(dt byte, data []byte) Value {
	a, l := Syntax(dt)
	if len(data) != a+l {
		panic(fmt.Sprintf("roboidenc: data type %#02x needs %d bytes, got %d", dt, a+l, len(data)))
	}
	return Value{DataType: dt, Angles: append([]byte{}, data[:a]...), Magnitude: append([]byte{}, data[a:]...)}
}

// Raw returns the value bytes (angles, then magnitude).
func (v Value) Raw() []byte { return append(append([]byte{}, v.Angles...), v.Magnitude...) }

// Bytes returns the value as on the wire: data type, angles, magnitude.
func (v Value) Bytes() []byte { return append([]byte{v.DataType}, v.Raw()...) }

// Msg returns a message id followed by body.
func Msg(id byte, body ...byte) []byte { return append([]byte{id}, body...) }

// PoseMsg returns a Pose message.
func PoseMsg(networkID, thingID byte, values ...Value) []byte {
	b := []byte{IDPose, networkID, thingID}
	for _, v := range values {
		b = append(b, v.Bytes()...)
	}
	return b
}

// ClientMsg returns a Client message (no body).
func ClientMsg() []byte { return Msg(IDClient) }

// NetworkIDMsg returns a NetworkId message assigning id.
func NetworkIDMsg(id byte) []byte { return Msg(IDNetworkID, id) }

// NewThingMsg returns a NewThing message carrying the thing type.
func NewThingMsg(networkID, thingID, thingType byte) []byte {
	return Msg(IDNewThing, networkID, thingID, thingType)
}

// InvestigateMsg returns an Investigate message.
func InvestigateMsg(networkID, thingID byte) []byte { return Msg(IDInvestigate, networkID, thingID) }

// ModelURLMsg returns a ModelURL message carrying url.
func ModelURLMsg(networkID, thingID byte, url string) []byte {
	return Msg(IDModelURL, append([]byte{networkID, thingID}, url...)...)
}
