// Package deltaenc is an encoder for the Deltarobot VR protocol, written from
// the protocol text (deltarobot-protocol-v6) and the verified facts
// (protocols.md §4) only, separately from the decoder in dissect/deltarobot.
// Tests use it as an independent source of truth: every function here knows
// what it put on the wire, so the records a decoder should produce can be
// listed without running the decoder.
//
// Wire format, as the encoder writes it: each message is a 16-bit
// little-endian id whose top 4 bits are a size code (0x0..0x4: 1, 2, 4, 8,
// 16 content bytes; 0xF: a little-endian uint32 byte count follows the id)
// and whose low 12 bits are the type; then the content. All numbers are
// little-endian, floats are IEEE-754 binary32.
package deltaenc

import (
	"encoding/binary"
	"math"
)

// Message ids of the protocol (size code in bits 15-12, type in bits 11-0).
const (
	IDMagic             uint16 = 0x3001 // protocol magic, 8 bytes "DeltaRVr"
	IDVersion           uint16 = 0x2002 // protocol version, uint32
	IDActuatorPosition  uint16 = 0x4003 // current actuator position, 4 × float32
	IDPing              uint16 = 0x3004 // ping, 64-bit random number
	IDPong              uint16 = 0x3005 // pong, the id of the answered ping
	IDEndOfTransmission uint16 = 0xF006 // end of transmission, optional ASCII reason
	IDCurrentDirection  uint16 = 0x4007 // current direction vector, 4 × float32
	IDDesiredDirection  uint16 = 0x4008 // desired direction vector, 4 × float32
	IDCurve             uint16 = 0xF009 // curve, N × 3 float32
)

// SizeVariable is the size code of messages whose content length follows the
// id as a uint32.
const SizeVariable = 0xF

// MagicValue is the content of the protocol magic message.
const MagicValue = "DeltaRVr"

// ProtocolVersion is the version number this protocol text describes.
const ProtocolVersion = 1

// Type names of the output contract (output-contract.md, "deltarobot").
const (
	TypeMagic             = "protocol_magic"
	TypeVersion           = "protocol_version"
	TypeActuatorPosition  = "actuator_position"
	TypePing              = "ping"
	TypePong              = "pong"
	TypeEndOfTransmission = "end_of_transmission"
	TypeCurrentDirection  = "current_direction"
	TypeDesiredDirection  = "desired_direction"
	TypeCurve             = "curve"
	TypeUnknown           = "unknown"
	TypeSkipped           = "skipped" // stream event: bytes seen but not decoded
	TypeGap               = "gap"     // stream event: bytes never captured
)

// known maps every message id of the protocol to its contract type name.
var known = map[uint16]string{
	IDMagic:             TypeMagic,
	IDVersion:           TypeVersion,
	IDActuatorPosition:  TypeActuatorPosition,
	IDPing:              TypePing,
	IDPong:              TypePong,
	IDEndOfTransmission: TypeEndOfTransmission,
	IDCurrentDirection:  TypeCurrentDirection,
	IDDesiredDirection:  TypeDesiredDirection,
	IDCurve:             TypeCurve,
}

// TypeName returns the contract type name of a full 16-bit message id, and
// false when the id is not one of the protocol's nine (an unknown type, or a
// known type with another size code).
func TypeName(id uint16) (string, bool) {
	name, ok := known[id]
	return name, ok
}

// MakeID builds a message id from a size code (low 4 bits used) and a type
// (low 12 bits used).
func MakeID(size uint8, typ uint16) uint16 {
	return uint16(size&0xF)<<12 | typ&0x0FFF
}

// ContentSize returns the number of content bytes of a fixed size code
// (0x0..0x4), and false for the variable code 0xF and the undefined codes
// 0x5..0xE.
func ContentSize(size uint8) (int, bool) {
	if size <= 4 {
		return 1 << size, true
	}
	return 0, false
}

// Raw returns id followed by content, verbatim. It is the form of every
// fixed-size message; with content of the wrong length for the id's size
// code it gives a deliberately inconsistent message.
func Raw(id uint16, content []byte) []byte {
	b := make([]byte, 0, 2+len(content))
	b = binary.LittleEndian.AppendUint16(b, id)
	return append(b, content...)
}

// VarRaw returns id, the uint32 length of content and content: the form of
// messages with size code 0xF. It writes the length whatever the id's size
// code says.
func VarRaw(id uint16, content []byte) []byte {
	b := make([]byte, 0, 6+len(content))
	b = binary.LittleEndian.AppendUint16(b, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(content)))
	return append(b, content...)
}

// Magic returns the protocol magic message (0x3001, "DeltaRVr").
func Magic() []byte { return Raw(IDMagic, []byte(MagicValue)) }

// Version returns a protocol version message (0x2002) carrying v.
func Version(v uint32) []byte {
	return Raw(IDVersion, binary.LittleEndian.AppendUint32(nil, v))
}

func vec4(id uint16, x, y, z, u float32) []byte {
	c := make([]byte, 0, 16)
	for _, f := range [4]float32{x, y, z, u} {
		c = binary.LittleEndian.AppendUint32(c, math.Float32bits(f))
	}
	return Raw(id, c)
}

// ActuatorPosition returns a current actuator position message (0x4003):
// x, y, z and the unused u.
func ActuatorPosition(x, y, z, u float32) []byte { return vec4(IDActuatorPosition, x, y, z, u) }

// CurrentDirection returns a current direction vector message (0x4007).
func CurrentDirection(x, y, z, u float32) []byte { return vec4(IDCurrentDirection, x, y, z, u) }

// DesiredDirection returns a desired direction vector message (0x4008).
func DesiredDirection(x, y, z, u float32) []byte { return vec4(IDDesiredDirection, x, y, z, u) }

// Ping returns a ping message (0x3004) with the 64-bit number id.
func Ping(id uint64) []byte { return Raw(IDPing, binary.LittleEndian.AppendUint64(nil, id)) }

// Pong returns a pong message (0x3005) answering the ping id.
func Pong(id uint64) []byte { return Raw(IDPong, binary.LittleEndian.AppendUint64(nil, id)) }

// EndOfTransmission returns an end of transmission message (0xF006) with an
// optional reason ("" for none).
func EndOfTransmission(reason string) []byte { return VarRaw(IDEndOfTransmission, []byte(reason)) }

// CurveContent returns the content of a curve message: 12 bytes per point.
func CurveContent(points [][3]float32) []byte {
	c := make([]byte, 0, 12*len(points))
	for _, p := range points {
		for _, f := range p {
			c = binary.LittleEndian.AppendUint32(c, math.Float32bits(f))
		}
	}
	return c
}

// Curve returns a curve message (0xF009) with the given points.
func Curve(points [][3]float32) []byte { return VarRaw(IDCurve, CurveContent(points)) }

// BadCurve returns a curve message whose length is not a multiple of 12: the
// points, then trailing (which should be 1..11 bytes long to be broken).
func BadCurve(points [][3]float32, trailing []byte) []byte {
	return VarRaw(IDCurve, append(CurveContent(points), trailing...))
}

// BadSize returns a message id with size code size (meant for the undefined
// codes 0x5..0xE) and type typ, followed by junk. No decoder can know its
// length.
func BadSize(size uint8, typ uint16, junk []byte) []byte {
	return Raw(MakeID(size, typ), junk)
}

// Truncated returns the first keep bytes of msg (all of it when keep is out
// of range): a message cut short, as at the end of a stream.
func Truncated(msg []byte, keep int) []byte {
	if keep < 0 || keep > len(msg) {
		keep = len(msg)
	}
	return append([]byte(nil), msg[:keep]...)
}
