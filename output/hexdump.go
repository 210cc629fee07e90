package output

// This file writes the bytes of a record as tshark's -x does: lines of an
// offset, the bytes in hex in groups of 8, and the same bytes as ASCII,
// '.' for each byte that is not printable:
//
//	0000  01 30 44 65 6c 74 61 52 56 72                     .0DeltaRVr
//
// Sixteen bytes a line need 73 columns (77 for a record of more than
// 64 KiB, whose offsets have 8 digits); a table narrower than that gets 8
// bytes a line (40 columns). The dump is ASCII whatever the bytes, so it
// cannot drive a terminal.

// hexDumpWidth is the width of a dump line of per bytes (8 or 16) whose
// offsets have digits digits.
func hexDumpWidth(per, digits int) int {
	// offset, 2 spaces, per bytes as "xx" one space apart with one more
	// between groups of 8, 3 spaces, per ASCII characters
	return digits + 2 + per*3 - 1 + (per/8 - 1) + 3 + per
}

// hexDumpDigits is how many hex digits the offsets of a dump of n bytes
// have: 4, or 8 past 64 KiB.
func hexDumpDigits(n int) int {
	if n > 1<<16 {
		return 8
	}
	return 4
}

// hexDumpPerLine returns how many bytes a line of a dump of n bytes holds
// in a table width columns wide (0: unlimited): 16 when they fit, else 8.
func hexDumpPerLine(width, n int) int {
	if width > 0 && width < hexDumpWidth(16, hexDumpDigits(n)) {
		return 8
	}
	return 16
}

// appendHexDump appends data as dump lines of per bytes (8 or 16), each
// ending in a newline; nothing for no data.
func appendHexDump(b, data []byte, per int) []byte {
	digits := hexDumpDigits(len(data))
	for off := 0; off < len(data); off += per {
		line := data[off:min(off+per, len(data))]
		for sh := (digits - 1) * 4; sh >= 0; sh -= 4 {
			b = append(b, hexDigits[off>>sh&15])
		}
		b = append(b, ' ')
		for i := range per {
			if i%8 == 0 {
				b = append(b, ' ')
			}
			if i < len(line) {
				b = append(b, hexDigits[line[i]>>4], hexDigits[line[i]&15], ' ')
			} else {
				b = append(b, ' ', ' ', ' ')
			}
		}
		b = append(b, ' ', ' ')
		for _, c := range line {
			if c < 0x20 || c >= 0x7f {
				c = '.'
			}
			b = append(b, c)
		}
		b = append(b, '\n')
	}
	return b
}
