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

// crc8 is CRC-8/SMBUS: poly 0x07, init 0, no reflection, no final xor. A
// frame's CRC covers type, size and payload (not the SFD).
func crc8(b []byte) byte {
	var c byte
	for _, x := range b {
		c = crcTable[c^x]
	}
	return c
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
