package framing

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
)

// CheckKind is the algorithm of a check.
type CheckKind uint8

// Checks.
const (
	CRCCheck   CheckKind = iota + 1
	Sum8                 // the bytes added, modulo 256
	Sum8Neg              // the two's complement of Sum8: the bytes and the check add to 0
	Xor8                 // the bytes XORed
	Fletcher8            // RFC 1145's 8-bit Fletcher (u-blox UBX's CK_A, CK_B): two sums modulo 256, CK_A in the high byte
	Fletcher16           // two 8-bit sums modulo 255, the second in the high byte
)

var checkNames = map[string]CheckKind{"sum8": Sum8, "sum8-neg": Sum8Neg, "xor8": Xor8, "fletcher8": Fletcher8, "fletcher16": Fletcher16}

// ParseSum returns the check named name ("sum8", "sum8-neg", "xor8",
// "fletcher8", "fletcher16").
func ParseSum(name string) (CheckKind, bool) {
	k, ok := checkNames[name]
	return k, ok
}

// SumNames lists the names ParseSum knows.
func SumNames() []string { return sortedKeys(checkNames) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CRC is a CRC in the parameters of Ross Williams' model (the CRC
// catalogue's): width, polynomial (without its top bit), initial
// register, input and output reflected, final XOR.
type CRC struct {
	Width         int
	Poly, Init    uint64
	RefIn, RefOut bool
	XorOut        uint64
}

// crcPresets are the catalogue's parameters of common CRCs.
var crcPresets = map[string]CRC{
	"crc-8":              {Width: 8, Poly: 0x07},
	"crc-8/maxim":        {Width: 8, Poly: 0x31, RefIn: true, RefOut: true},
	"crc-16/arc":         {Width: 16, Poly: 0x8005, RefIn: true, RefOut: true},
	"crc-16/ibm-3740":    {Width: 16, Poly: 0x1021, Init: 0xffff},
	"crc-16/ccitt-false": {Width: 16, Poly: 0x1021, Init: 0xffff},
	"crc-16/xmodem":      {Width: 16, Poly: 0x1021},
	"crc-16/kermit":      {Width: 16, Poly: 0x1021, RefIn: true, RefOut: true},
	"crc-16/modbus":      {Width: 16, Poly: 0x8005, Init: 0xffff, RefIn: true, RefOut: true},
	"crc-16/mcrf4xx":     {Width: 16, Poly: 0x1021, Init: 0xffff, RefIn: true, RefOut: true},
	"crc-32":             {Width: 32, Poly: 0x04c11db7, Init: 0xffffffff, RefIn: true, RefOut: true, XorOut: 0xffffffff},
	"crc-32c":            {Width: 32, Poly: 0x1edc6f41, Init: 0xffffffff, RefIn: true, RefOut: true, XorOut: 0xffffffff},
}

// CRCPreset returns the parameters of a catalogue CRC by name
// ("crc-16/ibm-3740", "crc-32", ...; case does not matter).
func CRCPreset(name string) (CRC, bool) {
	c, ok := crcPresets[strings.ToLower(name)]
	return c, ok
}

// CRCPresetNames lists the names CRCPreset knows.
func CRCPresetNames() []string { return sortedKeys(crcPresets) }

func (c CRC) mask() uint64 {
	if c.Width >= 64 {
		return ^uint64(0)
	}
	return 1<<c.Width - 1
}

func (c CRC) validate() error {
	if c.Width < 1 || c.Width > 64 {
		return fmt.Errorf("CRC width %d: want 1 to 64", c.Width)
	}
	m := c.mask()
	if c.Poly&^m != 0 || c.Init&^m != 0 || c.XorOut&^m != 0 {
		return fmt.Errorf("CRC poly, init and xorout must fit its %d bits", c.Width)
	}
	if c.Poly&1 == 0 {
		return fmt.Errorf("CRC poly 0x%x: a generator polynomial has its constant term (an odd poly)", c.Poly)
	}
	return nil
}

// crcTable is a compiled CRC: a table of 256 entries, one byte at a time.
type crcTable struct {
	c     CRC
	t     [256]uint64
	t8    [256]byte // t as bytes, for a one-byte register (w 8, not reflected)
	shift int       // non-reflected widths below 8 run as 8-bit CRCs shifted up
	w     int       // the register's width as run
}

func reflect(v uint64, w int) uint64 { return bits.Reverse64(v) >> (64 - w) }

func newCRCTable(c CRC) *crcTable {
	t := &crcTable{c: c, w: c.Width}
	if c.RefIn {
		rp := reflect(c.Poly, c.Width)
		for i := range t.t {
			v := uint64(i)
			for range 8 {
				if v&1 != 0 {
					v = v>>1 ^ rp
				} else {
					v >>= 1
				}
			}
			t.t[i] = v
		}
		return t
	}
	if c.Width < 8 {
		t.shift, t.w = 8-c.Width, 8
	}
	poly := c.Poly << t.shift
	top := uint64(1) << (t.w - 1)
	mask := CRC{Width: t.w}.mask()
	for i := range t.t {
		v := uint64(i) << (t.w - 8)
		for range 8 {
			if v&top != 0 {
				v = v<<1 ^ poly
			} else {
				v <<= 1
			}
		}
		t.t[i] = v & mask
		t.t8[i] = byte(v)
	}
	return t
}

// sum returns the CRC of b.
func (t *crcTable) sum(b []byte) uint64 {
	c := t.c
	if c.RefIn {
		reg := reflect(c.Init, c.Width)
		for _, x := range b {
			reg = reg>>8 ^ t.t[byte(reg)^x]
		}
		if !c.RefOut {
			reg = reflect(reg, c.Width)
		}
		return (reg ^ c.XorOut) & c.mask()
	}
	reg := c.Init << t.shift
	if t.w == 8 { // a one-byte register: nothing of reg<<8 stays
		r := byte(reg)
		for _, x := range b {
			r = t.t8[r^x]
		}
		reg = uint64(r)
	} else {
		mask := CRC{Width: t.w}.mask()
		sh := t.w - 8
		for _, x := range b {
			reg = (reg<<8 ^ t.t[byte(reg>>sh)^x]) & mask
		}
	}
	reg >>= t.shift
	if c.RefOut {
		reg = reflect(reg, c.Width)
	}
	return (reg ^ c.XorOut) & c.mask()
}

// sumOf computes a check of kind k (not a CRC) over b.
func sumOf(k CheckKind, b []byte) uint64 {
	switch k {
	case Sum8, Sum8Neg:
		var s byte
		for _, x := range b {
			s += x
		}
		if k == Sum8Neg {
			s = -s
		}
		return uint64(s)
	case Xor8:
		var s byte
		for _, x := range b {
			s ^= x
		}
		return uint64(s)
	case Fletcher8:
		var a, c byte
		for _, x := range b {
			a += x
			c += a
		}
		return uint64(a)<<8 | uint64(c)
	case Fletcher16:
		var a, c uint32
		for _, x := range b {
			a = (a + uint32(x)) % 255
			c = (c + a) % 255
		}
		return uint64(c<<8 | a)
	}
	return 0
}
