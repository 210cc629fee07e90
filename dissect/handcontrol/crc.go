package handcontrol

import "encoding/binary"

// crcTable is CRC-8 with polynomial 0x07, MSB first (protocols.md §1.4).
var crcTable = func() (t [256]byte) {
	for i := range t {
		c := byte(i)
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc8 is CRC-8/SMBUS: poly 0x07, init 0, no reflection, no final xor.
func crc8(b []byte) byte { return crc8From(0, b) }

// crc8From continues a CRC-8/SMBUS whose value so far is c over b.
func crc8From(c byte, b []byte) byte {
	for _, x := range b {
		c = crcTable[c^x]
	}
	return c
}

// CRC scopes: what the CRC of a valid frame covers (the crc_scope field).
// The C#, Python and C implementations cover type, size and payload; the
// Android host app covers the SFD too (protocols.md §1.4).
const (
	scopeHeader = "header+payload"
	scopeSFD    = "sfd+header+payload"
)

// crcSFD is the CRC-8 of the SFD, where the Android convention's CRC
// stands when it reaches the type byte.
var crcSFD = crc8(sfd)

// checkCRC returns the frame's CRC byte, the CRC computed over type, size
// and payload, and the scope under which the CRC byte is valid ("" when it
// is valid under neither). frame is a whole frame, SFD to CRC.
func checkCRC(frame []byte) (wire, computed byte, scope string) {
	body := frame[sfdLen : len(frame)-1]
	wire, computed = frame[len(frame)-1], crc8(body)
	switch {
	case wire == computed:
		scope = scopeHeader
	case wire == crc8From(crcSFD, body):
		scope = scopeSFD
	}
	return wire, computed, scope
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
