// Package handcontrolenc is an encoder for the HandControl prosthesis link
// ("Bluetooth API"), written from the verified facts of protocols.md §1
// (framing §1.3, CRC §1.4, codes §1.5, protobuf schemas §1.6 and §1.7) and
// the output contract's "handcontrol" section, separately from the decoder
// in dissect/handcontrol. Tests use it as an independent source of truth:
// every function here knows what it put on the wire, so the records a
// decoder should produce can be listed without running the decoder.
//
// A frame is
//
//	fd ba dc 01 50 b4 11 ff   start-of-frame delimiter (SFD)
//	type                      u8, the command or response code
//	size                      u16 little-endian, payload bytes only
//	payload                   size bytes: a protobuf message, or nothing
//	crc                       CRC-8/SMBUS over type, size and payload
//
// CRC-8/SMBUS is polynomial 0x07, initial value 0, no reflection, no final
// XOR; the SFD is not covered by the C#, Python and C implementations. The
// Android host app covers it too (SFD, type, size and payload; protocols.md
// §1.4): [SFDInCRC] writes that convention, and a frame is valid under
// either ([CRCScope]). Payloads are protobuf (proto3) messages
// written by the small writer in this package from the field numbers of
// protocols.md §1.6 (schema v2) and §1.7 (schema v1), not from any .proto
// file or protobuf library.
//
// The host (master: the PC configurator, the MQTT proxy) sends requests;
// the device (the prosthesis) answers each with ACK (1), ERR (2) or a data
// reply carrying the request's code (4, 6, 13; GetMioPatterns (16) is
// answered with type 13, a known device quirk), and pushes Telemetry (3)
// on its own after StartTelemetry.
package handcontrolenc

import (
	"encoding/binary"
	"fmt"
)

// SFD is the start-of-frame delimiter that begins every frame.
var SFD = [8]byte{0xfd, 0xba, 0xdc, 0x01, 0x50, 0xb4, 0x11, 0xff}

// HeaderLen is the bytes before the payload: SFD, type and size.
const HeaderLen = 11

// MaxPayload is the largest payload a frame can carry (the size is a u16).
const MaxPayload = 65535

// Codes of the type byte (protocols.md §1.5).
const (
	CodeEmpty              byte = 0
	CodeACK                byte = 1
	CodeERR                byte = 2
	CodeTelemetry          byte = 3
	CodeGetSettings        byte = 4
	CodeSetSettings        byte = 5
	CodeGetGestures        byte = 6
	CodeSaveGesture        byte = 7
	CodeDeleteGesture      byte = 8
	CodePerformGestureID   byte = 9
	CodePerformGestureRaw  byte = 10
	CodeSetPositions       byte = 11
	CodeUpdateLastTimeSync byte = 12
	CodeGetTelemetry       byte = 13
	CodeStartTelemetry     byte = 14
	CodeStopTelemetry      byte = 15
	CodeGetMioPatterns     byte = 16
	CodeSetMioPatterns     byte = 17
)

// Record types of the output contract ("handcontrol"), and the stream
// events.
const (
	TypeUnknown = "unknown"
	TypeSkipped = "skipped"
	TypeGap     = "gap"
)

var typeNames = [...]string{
	"Empty", "ACK", "ERR", "Telemetry", "GetSettings", "SetSettings", "GetGestures",
	"SaveGesture", "DeleteGesture", "PerformGestureId", "PerformGestureRaw", "SetPositions",
	"UpdateLastTimeSync", "GetTelemetry", "StartTelemetry", "StopTelemetry", "GetMioPatterns",
	"SetMioPatterns",
}

// TypeName returns the contract's record type for a code: the code's name
// for 0-17, "unknown" for any other.
func TypeName(code byte) string {
	if int(code) < len(typeNames) {
		return typeNames[code]
	}
	return TypeUnknown
}

// CRC8 returns the CRC-8/SMBUS of b: polynomial 0x07, initial value 0,
// most significant bit first, no final XOR (check("123456789") = 0xf4).
func CRC8(b []byte) byte {
	var crc byte
	for _, c := range b {
		crc ^= c
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x07
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// FrameOption changes how [Frame] writes a frame.
type FrameOption func(*frameCfg)

type frameCfg struct {
	crc    byte
	setCRC bool
	invert bool
	sfd    bool
}

// CRC scopes: what a valid frame's CRC covers (the decoder's crc_scope).
const (
	ScopeHeader = "header+payload"     // type, size, payload: C#, Python, C
	ScopeSFD    = "sfd+header+payload" // SFD too: the Android host app
)

// SFDInCRC makes the frame's CRC cover the SFD too (SFD, code, size and
// payload), as the Android host app computes it (protocols.md §1.4).
// With [CorruptCRC] the CRC is wrong under both conventions.
func SFDInCRC() FrameOption {
	return func(c *frameCfg) { c.sfd = true }
}

// WithCRC makes the frame carry crc instead of the correct CRC (a wrong
// CRC when they differ).
func WithCRC(crc byte) FrameOption {
	return func(c *frameCfg) { c.crc, c.setCRC, c.invert = crc, true, false }
}

// CorruptCRC makes the frame carry the correct CRC with all bits flipped
// (and, should that be the CRC of the other convention, the lowest bit
// restored), which is always wrong.
func CorruptCRC() FrameOption {
	return func(c *frameCfg) { c.invert, c.setCRC = true, false }
}

// Frame returns a whole frame: SFD, code, the payload's size (u16 LE), the
// payload and the CRC-8 over code, size and payload (or the CRC the
// options give). It fails when the payload is over 65535 bytes.
func Frame(code byte, payload []byte, opts ...FrameOption) ([]byte, error) {
	if len(payload) > MaxPayload {
		return nil, fmt.Errorf("handcontrolenc: payload of %d bytes is over %d", len(payload), MaxPayload)
	}
	var cfg frameCfg
	for _, o := range opts {
		o(&cfg)
	}
	b := make([]byte, 0, HeaderLen+len(payload)+1)
	b = append(b, SFD[:]...)
	b = append(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(payload)))
	b = append(b, payload...)
	hdr, all := CRC8(b[len(SFD):]), CRC8(b)
	crc := hdr
	if cfg.sfd {
		crc = all
	}
	switch {
	case cfg.invert:
		crc = ^crc
		if crc == hdr || crc == all {
			crc ^= 1
		}
	case cfg.setCRC:
		crc = cfg.crc
	}
	return append(b, crc), nil
}

// MustFrame is [Frame] for payloads known to fit; it panics otherwise.
func MustFrame(code byte, payload []byte, opts ...FrameOption) []byte {
	b, err := Frame(code, payload, opts...)
	if err != nil {
		panic(err)
	}
	return b
}

// CRCScope returns what the CRC of a whole frame covers when it is valid:
// [ScopeHeader] when its last byte is the CRC-8 of its bytes after the
// SFD, else [ScopeSFD] when it is the CRC-8 of all the bytes before it;
// "" when it is neither (a wrong CRC).
func CRCScope(frame []byte) string {
	if len(frame) < HeaderLen+1 {
		return ""
	}
	crc := frame[len(frame)-1]
	switch {
	case CRC8(frame[len(SFD):len(frame)-1]) == crc:
		return ScopeHeader
	case CRC8(frame[:len(frame)-1]) == crc:
		return ScopeSFD
	}
	return ""
}

// CRCOK reports whether a whole frame's CRC is valid under either
// convention (see [CRCScope]).
func CRCOK(frame []byte) bool { return CRCScope(frame) != "" }
