package output

// Shortest round-trip decimal digits for float32, without strconv.
//
// Method (after Giulietti's Schubfach idea, written from the published
// description): a finite non-zero float32 is v = c·2^q. Every decimal that
// reads back as v lies in the rounding interval [c-½, c+½]·2^q (the lower
// half-width is ¼ when c = 2^23 and the exponent is not the smallest, because
// the float below is twice as close), with the ends included when c is even
// (round-half-even reading). Pick k so that the interval, measured in units of
// 10^k, is between 1 and 10 wide: then the interval holds at most one multiple
// of 10 (a result one digit shorter) and at least one of floor(v/10^k) and
// floor(v/10^k)+1. The shortest result is that multiple of 10 if it is inside;
// otherwise it is whichever of the two neighbours is inside, or the closer one
// to v when both are (ties as strconv breaks them, see f32Shortest). Trailing
// zeros are then removed.
//
// The three scaled points 4(c-½), 4c, 4(c+½) times 2^q·10^-k come from one
// 64×64→128-bit multiply against g, an upper approximation of 10^-k scaled
// into [2^63, 2^64): the ends differ from the middle by a power of two times
// g, added exactly in 128 bits. Only the high 64 bits of each are kept: 32
// integer bits and 32 fraction bits, and the fraction bits are folded into one
// "inexact" bit (round to odd), which is all the comparisons above need. The
// table of g is in f32tab.go; the whole method is checked against strconv for
// all 2^32 bit patterns by TestFloat32Exhaustive (DISSECT_EXHAUSTIVE=1).

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// f32Scale is the scaling for one binary exponent: g·2^(h-96) approximates
// 2^q·10^-k from above.
type f32Scale struct {
	g uint64 // ceil(10^-k · 2^r), in [2^63, 2^64)
	h uint8  // 96 + q - r: left shift of the scaled significand
	k int8   // decimal exponent of the unit the scaled values are counted in
}

// b2u is 1 for true, 0 for false.
func b2u(b bool) uint64 {
	var u uint64
	if b {
		u = 1
	}
	return u
}

// f32Scaled returns floor(P / 2^96) for a product P of g and a shifted
// significand, given P's high 64 bits, with its lowest bit set when the 32
// fraction bits below it are not all zero (round to odd).
func f32Scaled(hi uint64) uint64 {
	return hi>>32 | (hi&0xffffffff+0xffffffff)>>32
}

// f32Shortest returns the shortest decimal d·10^k that reads back as the
// finite, non-zero float32 with the given bits (sign bit clear); d has no
// trailing zeros and n digits, at most 9.
func f32Shortest(x uint32) (d uint64, k, n int) {
	e := x >> 23
	f := uint64(x & (1<<23 - 1))
	c := f | 1<<23
	asym := uint(0)
	if e == 0 {
		c, e = f, 1
	} else if f == 0 && e > 1 {
		asym = 1
	}
	sc := &f32Tab[asym&1][e&0xff]
	g, h := sc.g, uint(sc.h)
	out := c & 1 // 1: interval ends excluded

	// One product gives all three points: the ends are 4c-2 (4c-1 for the
	// lower end of an asymmetric interval) and 4c+2, so their products
	// differ from the middle's by g shifted left by h+1 (or h), exactly.
	ph, pl := bits.Mul64(g, c<<(h+2))
	_, carry := bits.Add64(pl, g<<(h+1), 0)
	vbr := f32Scaled(ph + g>>(63-h) + carry)
	ls := h + 1 - asym
	_, borrow := bits.Sub64(pl, g<<ls, 0)
	vbl := f32Scaled(ph - g>>(64-ls) - borrow)
	vb := f32Scaled(ph)
	k = int(sc.k)

	s := vb >> 2
	q := s / 10
	uin := vbl+out <= q*40     // 10q inside: one digit shorter
	win := (q+1)*40+out <= vbr // 10(q+1) inside; never both
	if uin || win {
		d = q
		if win {
			d = q + 1
		}
		k++
		for d%10 == 0 {
			d /= 10
			k++
		}
		return d, k, digitCount(d)
	}
	t := s + 1
	uin = vbl+out <= s<<2
	win = t<<2+out <= vbr
	switch {
	case uin && !win:
		d = s
	case win && !uin:
		d = t
	default:
		// A tie goes to the even digit, except when c is a power of two
		// (asymmetric interval): there strconv (Go 1.26) takes the upper
		// one. For float32 this happens only at 2^-12, whose exact
		// 0.000244140625 strconv writes as 0.00024414063.
		mid := (s + t) << 1
		if vb < mid || vb == mid && s&1 == 0 && asym == 0 {
			d = s
		} else {
			d = t
		}
	}
	// Neither s nor s+1 is chosen when it is a multiple of 10, so d has no
	// trailing zero. For a normal float32, s is c times the interval's
	// width in units of 10^k, in [2^23, 2^24·40/3): 7 to 9 digits, and s+1
	// has as many (10^n is a multiple of 10).
	if x>>23 == 0 {
		return d, k, digitCount(d)
	}
	return d, k, 7 + int(b2u(d >= 1e7)+b2u(d >= 1e8))
}

// digitCount returns the number of decimal digits of 0 < d < 10^9.
func digitCount(d uint64) int {
	n := (bits.Len64(d) * 1233) >> 12
	if d >= f32Pow10[n] {
		n++
	}
	return n
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// f32Pow10 holds 10^0 to 10^9.
var f32Pow10 = [10]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// f32Digits8 returns the 8 decimal digits of r < 10^8 (with leading zeros)
// as ASCII bytes packed in a word, the first digit in the lowest byte. The
// digits are split in parallel: r into two 4-digit halves (32-bit lanes),
// each half into two 2-digit parts (16-bit lanes), each part into two digits
// (8-bit lanes). A lane quotient v/100 for v < 10^4 is (v·10486)>>20 and v/10
// for v < 100 is (v·103)>>10; the products stay inside their lanes.
func f32Digits8(r uint64) uint64 {
	hi := r / 10000
	x := hi | (r-hi*10000)<<32
	q := (x * 10486 >> 20) & 0x0000007f_0000007f
	x = q | (x-q*100)<<16
	q = (x * 103 >> 10) & 0x000f_000f_000f_000f
	x = q | (x-q*10)<<8
	return x | 0x30303030_30303030
}

// appendFloat32 appends x as the JSON of records writes a float32 (see
// appendFloat): the fewest digits that read back as x, in plain notation
// from 1e-6 up to 1e21 with ".0" after a whole value, as
// strconv.AppendFloat(b, float64(x), 'e', -1, 32) outside that range, and
// the strings "NaN", "Inf" and "-Inf".
func appendFloat32(b []byte, x float32) []byte {
	// The longest text is a sign, 21 integer digits and ".0"; the 8-byte
	// stores below may write up to 13 bytes past the text.
	const room = 40
	if cap(b)-len(b) < room {
		b = slices.Grow(b, room)
	}
	start := len(b)
	o := b[start : start+room]
	xb := math.Float32bits(x)
	p := int(xb >> 31) // bytes written to o
	xb &^= 1 << 31
	switch {
	case xb > 0x7f800000:
		return append(b, `"NaN"`...)
	case xb == 0x7f800000 && p == 0:
		return append(b, `"Inf"`...)
	case xb == 0x7f800000:
		return append(b, `"-Inf"`...)
	}
	o[0] = '-'
	if xb == 0 {
		o[p], o[p+1], o[p+2] = '0', '.', '0'
		return b[:start+p+3]
	}
	a := float64(math.Float32frombits(xb))
	exp := a < 1e-6 || a >= 1e21
	d, k, n := f32Shortest(xb)
	dp := n + k // the value is 0.digits × 10^dp
	if exp {
		dp = 1 // d.ddd, then the exponent
	}

	// The digits: a ninth, leading one (top, when d >= 10^8) is written on
	// its own; w holds the other m, the first in the lowest byte.
	top := d / 1e8
	t9 := int(b2u(top != 0))
	m := n - t9
	w := f32Digits8(d-top*1e8) >> (8 * (8 - m))
	switch {
	case dp <= 0: // 0.000ddd (at most 5 zeros: |x| >= 1e-6)
		binary.LittleEndian.PutUint64(o[p:], 0x30303030_30302e30) // "0.000000"
		p += 2 - dp
		o[p] = byte('0' + top)
		p += t9
		binary.LittleEndian.PutUint64(o[p:], w)
		p += m
	case dp < n: // dd.ddd
		o[p] = byte('0' + top)
		p += t9
		dp -= t9
		// With dp == 0 the point goes first and w's lowest byte is
		// overwritten by the second store.
		binary.LittleEndian.PutUint64(o[p:], w)
		o[p+dp] = '.'
		binary.LittleEndian.PutUint64(o[p+dp+1:], w>>(8*dp))
		p += m + 1
	default: // ddd000.0 (at most 21 digits: |x| < 1e21), or d in exponent form
		o[p] = byte('0' + top)
		p += t9
		binary.LittleEndian.PutUint64(o[p:], w)
		p += m
		const zeros = 0x30303030_30303030
		binary.LittleEndian.PutUint64(o[p:], zeros)
		binary.LittleEndian.PutUint64(o[p+8:], zeros)
		binary.LittleEndian.PutUint64(o[p+16:], zeros)
		p += dp - n
		if !exp {
			o[p], o[p+1] = '.', '0'
			p += 2
		}
	}
	if !exp {
		return b[:start+p]
	}
	e := n + k - 1
	o[p] = 'e'
	o[p+1] = '+'
	if e < 0 {
		o[p+1] = '-'
		e = -e
	}
	p += 2
	if e >= 100 {
		o[p] = byte('0' + e/100)
		e %= 100
		p++
	}
	o[p], o[p+1] = digitPairs[2*e], digitPairs[2*e+1]
	return b[:start+p+2]
}
