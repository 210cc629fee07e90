package handcontrol

import (
	"github.com/dissect-tools/dissect/dissect/framing"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// The frame as data (protocols.md §1.3, §1.4): the SFD, the type byte,
// the payload's size (u16 LE at offset 9: the frame is overhead bytes
// more), the payload, and CRC-8/SMBUS (poly 0x07, init 0, no reflection,
// no final xor) in the last byte.
func frameDesc(scopeFrom int) framing.Framing {
	return framing.Framing{
		Sync:   sfd,
		Length: &framing.Length{Offset: sfdLen + 1, Width: 2, Order: layout.LittleEndian, Adjust: overhead},
		Max:    overhead + 0xffff,
		Check: &framing.Check{
			Kind: framing.CRCCheck, CRC: framing.CRC{Width: 8, Poly: 0x07},
			From: scopeFrom, To: -1, At: -1,
		},
	}
}

// CRC scopes: what the CRC of a valid frame covers (the crc_scope field).
// The C#, Python and C implementations cover type, size and payload; the
// Android host app covers the SFD too (protocols.md §1.4): one framer per
// scope, the first tried first.
const (
	scopeHeader = "header+payload"
	scopeSFD    = "sfd+header+payload"
)

// frames are the framers of the two scopes; they are never written.
var frames = [2]*framing.Framer{newFramer(sfdLen), newFramer(0)}

func newFramer(scopeFrom int) *framing.Framer {
	fr, err := framing.New(frameDesc(scopeFrom))
	if err != nil {
		panic(err) // the description above is fixed
	}
	return fr
}

// frameSize returns the size of the frame at b[0], whose SFD is there
// (false: b ends before its size field).
func frameSize(b []byte) (int, bool) {
	n, err := frames[0].Size(b)
	return n, err == nil
}

// checkCRC returns the frame's CRC byte, the CRC computed over type, size
// and payload, and the scope under which the CRC byte is valid ("" when it
// is valid under neither). frame is a whole frame, SFD to CRC.
func checkCRC(frame []byte) (wire, computed byte, scope string) {
	have, want := frames[0].Sums(frame)
	wire, computed = byte(have), byte(want)
	switch {
	case have == want:
		scope = scopeHeader
	case frames[1].Verify(frame) == nil:
		scope = scopeSFD
	}
	return wire, computed, scope
}
