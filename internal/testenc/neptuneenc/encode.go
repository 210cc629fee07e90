// Package neptuneenc is an encoder for the Neptune ROV protocol, written
// from the wiki page "Communication Protocol" (neptune-communication-
// protocol.txt) and the verified facts (protocols.md §2) only, separately
// from the decoder in dissect/neptune. Tests use it as an independent source
// of truth: every function here knows what it put on the wire, so the
// records a decoder should produce can be listed without running the
// decoder.
//
// Two wire formats are written.
//
// The device framing (protocols.md §2.3, the only framing that ran on
// hardware; TCP port 1493, host → device, the device never answers): each
// message is a length byte n, then n bytes whose first is the type:
//
//	0 abort       [0] (the device does not check the length)
//	1 set_motor   [1, motor, direction, magnitude]   n == 4
//	2 translate   [2, axis, sign]                     n == 3
//	3 rotate      [3, axis, sign]                     n == 3
//	4 stabilize   [4, enable]                         n == 2
//	5 lamp        [5, on]                             n == 2
//
// A length of 100 or more is not a message (the device drops that byte and
// reads the next as a length); a length 0 reruns the previous type;
// a known type with another length is ignored by the device; other types
// are unknown.
//
// The wiki format (protocols.md §2.7, for a caller-supplied frame such as a
// UDP datagram): a 3-byte header (packet type, priority, sequence, each a
// u8), then the body of the type: 1 speed (raw) motor {motor_id u8,
// direction bool, speed float32, duration int}, 2 position motor {motor_id
// u8, degree float32, speed float32}, 3 relay {relay_id u8, enable bool}, 4
// sensor data {sensor_type int, sensor_id int, data: the rest}. Numbers are
// little-endian, floats IEEE-754 binary32, bool one byte; "int" is int32 by
// default and int16 on request ([IntWidth]).
package neptuneenc

import (
	"encoding/binary"
	"math"
)

// Port is the device's TCP port (nep_network.ino, packet_test.py).
const Port = 1493

// MaxLength is the largest length byte the device accepts; it drops a
// byte of 100 or more alone (its client.flush() discards nothing).
const MaxLength = 99

// Device message types (the type byte, payload[0]).
const (
	CodeAbort     byte = 0
	CodeSetMotor  byte = 1
	CodeTranslate byte = 2
	CodeRotate    byte = 3
	CodeStabilize byte = 4
	CodeLamp      byte = 5
)

// Axes of translate and rotate.
const (
	AxisX byte = 0
	AxisY byte = 1
	AxisZ byte = 2
)

// WantLength returns the length byte the device requires for a known type
// (set_motor 4, translate and rotate 3, stabilize and lamp 2), and false
// for abort (any length is accepted) and unknown types.
func WantLength(code byte) (int, bool) {
	switch code {
	case CodeSetMotor:
		return 4, true
	case CodeTranslate, CodeRotate:
		return 3, true
	case CodeStabilize, CodeLamp:
		return 2, true
	}
	return 0, false
}

// Raw returns the length byte n followed by payload, verbatim: n need not be
// len(payload) (for broken forms).
func Raw(n byte, payload []byte) []byte {
	b := make([]byte, 0, 1+len(payload))
	b = append(b, n)
	return append(b, payload...)
}

// Frame returns payload with its length byte. payload must be 1..255
// bytes; a longer one is cut to 255 (Frame is for tests).
func Frame(payload []byte) []byte {
	if len(payload) > 255 {
		payload = payload[:255]
	}
	return Raw(byte(len(payload)), payload)
}

// Command returns a framed message of type code with args.
func Command(code byte, args ...byte) []byte {
	p := make([]byte, 0, 1+len(args))
	p = append(p, code)
	return Frame(append(p, args...))
}

// Abort returns an abort message: 01 00.
func Abort() []byte { return Command(CodeAbort) }

// SetMotor returns a set_motor message: 04 01 motor dir magnitude. dir 0 is
// forward, any other value reverse; magnitude is the PWM duty 0..255. On
// the device ids 0-4 are motors and 5-6 relays (dir 0 off, else on).
func SetMotor(motor, dir, magnitude byte) []byte {
	return Command(CodeSetMotor, motor, dir, magnitude)
}

// Translate returns a translate message: 03 02 axis sign.
func Translate(axis, sign byte) []byte { return Command(CodeTranslate, axis, sign) }

// Rotate returns a rotate message: 03 03 axis sign.
func Rotate(axis, sign byte) []byte { return Command(CodeRotate, axis, sign) }

// Stabilize returns an auto-stabilize message: 02 04 b.
func Stabilize(b byte) []byte { return Command(CodeStabilize, b) }

// Lamp returns a lamp message: 02 05 b.
func Lamp(b byte) []byte { return Command(CodeLamp, b) }

// BoolByte returns 1 for true and 0 for false.
func BoolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// Wiki packet types (NepPacketTypes.h numbering, protocols.md §2.2).
const (
	WikiRawMotor      byte = 1 // the wiki's "Speed Motor"
	WikiPositionMotor byte = 2
	WikiRelay         byte = 3
	WikiSensorData    byte = 4
)

// IntWidth is the size of the wiki's "int" in bytes: 4 (the default, a PC
// build) or 2 (the AVR device).
type IntWidth int

// Int widths.
const (
	Int32 IntWidth = 4
	Int16 IntWidth = 2
)

// WikiHeaderLen is the length of the wiki header.
const WikiHeaderLen = 3

// Wiki is an encoder for the wiki format with one width of "int".
type Wiki struct {
	Int IntWidth // Int32 when zero
}

func (w Wiki) width() IntWidth {
	if w.Int == Int16 {
		return Int16
	}
	return Int32
}

// appendInt appends v as a little-endian int of the encoder's width (int16:
// the low 16 bits).
func (w Wiki) appendInt(b []byte, v int32) []byte {
	if w.width() == Int16 {
		return binary.LittleEndian.AppendUint16(b, uint16(int16(v)))
	}
	return binary.LittleEndian.AppendUint32(b, uint32(v))
}

func appendF32(b []byte, f float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
}

// Header returns the 3-byte wiki header.
func Header(typ, priority, seq byte) []byte { return []byte{typ, priority, seq} }

// Packet returns a header followed by body, verbatim.
func Packet(typ, priority, seq byte, body []byte) []byte {
	return append(Header(typ, priority, seq), body...)
}

// RawMotorBody returns the body of a speed (raw) motor packet: motor id,
// direction (a bool byte: true forward), speed, duration in cycles.
func (w Wiki) RawMotorBody(motor byte, forward bool, speed float32, duration int32) []byte {
	b := []byte{motor, BoolByte(forward)}
	b = appendF32(b, speed)
	return w.appendInt(b, duration)
}

// PositionMotorBody returns the body of a position motor packet: motor id,
// degree (rotation, may be negative or over a turn), speed.
func (w Wiki) PositionMotorBody(motor byte, degree, speed float32) []byte {
	return appendF32(appendF32([]byte{motor}, degree), speed)
}

// RelayBody returns the body of a relay control packet.
func (w Wiki) RelayBody(relay byte, enable bool) []byte { return []byte{relay, BoolByte(enable)} }

// SensorDataBody returns the body of a sensor data packet: sensor type,
// sensor id (each an int of the encoder's width), then data.
func (w Wiki) SensorDataBody(sensorType, sensorID int32, data []byte) []byte {
	b := w.appendInt(nil, sensorType)
	b = w.appendInt(b, sensorID)
	return append(b, data...)
}

// BodyLen returns the fixed body length of a wiki type (raw motor 6 + int,
// position motor 9, relay 2), the minimum for sensor data (two ints), and
// false for other types.
func (w Wiki) BodyLen(typ byte) (int, bool) {
	n := int(w.width())
	switch typ {
	case WikiRawMotor:
		return 6 + n, true
	case WikiPositionMotor:
		return 9, true
	case WikiRelay:
		return 2, true
	case WikiSensorData:
		return 2 * n, true
	}
	return 0, false
}
