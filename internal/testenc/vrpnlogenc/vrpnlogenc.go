// Package vrpnlogenc writes VRPN log files as mainline VRPN 07.38 writes
// them, for tests of dissect's log reader (capture/vrpnlog.go). It is
// written from mainline's source (vrpn_Connection.C: write_vrpn_cookie,
// vrpn_Log::setCookie, vrpn_Log::logMessage, vrpn_Log::saveLogSoFar), not
// from the reader, and builds the payloads of the system messages from
// vrpn_Connection.C's pack_sender_description, pack_type_description and
// pack_udp_description, and the user payloads of a few mainline classes.
package vrpnlogenc

import (
	"encoding/binary"
	"math"
	"time"
)

var be = binary.BigEndian

// Log modes, the digit after the version in the cookie (vrpn_Connection.h
// vrpn_LOG_NONE, vrpn_LOG_INCOMING, vrpn_LOG_OUTGOING).
const (
	LogNone     = 0
	LogIncoming = 1
	LogOutgoing = 2
)

// System message type ids (vrpn_Connection.h).
const (
	SenderDescription = -1
	TypeDescription   = -2
	UDPDescription    = -3
	LogDescription    = -4
	Disconnect        = -5
)

// Cookie is the 24-byte cookie at the start of a log: write_vrpn_cookie's
// "%.16s  %c" of the magic "vrpn: ver. <version>" and the log-mode digit,
// then NULs to 24 bytes (setCookie copies it with strncpy into a zeroed
// buffer; saveLogSoFar writes vrpn_cookie_size() = 24 bytes of it).
func Cookie(version string, mode int) []byte {
	magic := "vrpn: ver. " + version
	if len(magic) > 16 {
		magic = magic[:16]
	}
	b := make([]byte, 24)
	s := magic + "  " + string(rune('0'+mode))
	copy(b, s)
	return b
}

// Entry is one logged message.
type Entry struct {
	Type, Sender int32
	Time         time.Time // written as 32-bit tv_sec and tv_usec
	Payload      []byte
	// Word6 is the sixth header word, which saveLogSoFar writes as 0 (it
	// once held a pointer); set it to test a reader that must ignore it.
	Word6 uint32
}

// AppendEntry appends e as saveLogSoFar writes it: six big-endian 32-bit
// words (type, sender, tv_sec, tv_usec, payload length, the zero word),
// then the payload, unpadded.
func AppendEntry(b []byte, e Entry) []byte {
	return AppendRaw(b, e.Type, e.Sender, uint32(e.Time.Unix()), uint32(e.Time.Nanosecond()/1000), int32(len(e.Payload)), e.Word6, e.Payload)
}

// AppendRaw appends an entry header with any payload length, then payload
// (which may be shorter or longer than plen), for hostile tests.
func AppendRaw(b []byte, typ, sender int32, sec, usec uint32, plen int32, word6 uint32, payload []byte) []byte {
	for _, w := range []uint32{uint32(typ), uint32(sender), sec, usec, uint32(plen), word6} {
		b = be.AppendUint32(b, w)
	}
	return append(b, payload...)
}

// File is a whole log: the cookie, then the entries.
func File(cookie []byte, entries ...Entry) []byte {
	b := append([]byte(nil), cookie...)
	for _, e := range entries {
		b = AppendEntry(b, e)
	}
	return b
}

// NameBody is the payload of a sender or type description: the name's
// length including its NUL as a big-endian 32-bit word, the name, the NUL
// (pack_sender_description, pack_type_description). The id described is
// the message's sender field.
func NameBody(name string) []byte {
	b := be.AppendUint32(nil, uint32(len(name)+1))
	b = append(b, name...)
	return append(b, 0)
}

// UDPBody is the payload of a UDP description: the host's address and a
// NUL (pack_udp_description); the port is the message's sender field.
func UDPBody(host string) []byte { return append([]byte(host), 0) }

// PosQuat is a vrpn_Tracker Pos_Quat payload (vrpn_Tracker::encode_to):
// the sensor as two 32-bit words, three doubles of position, four of the
// quaternion (x, y, z, w), all big-endian.
func PosQuat(sensor int32, pos [3]float64, quat [4]float64) []byte {
	b := be.AppendUint32(nil, uint32(sensor))
	b = be.AppendUint32(b, uint32(sensor))
	for _, v := range pos {
		b = be.AppendUint64(b, math.Float64bits(v))
	}
	for _, v := range quat {
		b = be.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// ButtonChange is a vrpn_Button Change payload: the button and its state,
// two big-endian 32-bit words.
func ButtonChange(button, state int32) []byte {
	return be.AppendUint32(be.AppendUint32(nil, uint32(button)), uint32(state))
}
