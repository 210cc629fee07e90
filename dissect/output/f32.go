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
// The three scaled points 4(c-½), 4c, 4(c+½) times 2^q·10^-k are computed with
// one 64×64→128-bit multiply each against g, an upper approximation of 10^-k
// scaled into [2^63, 2^64). Only the high 64 bits of the product are kept: 32
// integer bits and 32 fraction bits, and the fraction bits are folded into one
// "inexact" bit (round to odd), which is all the comparisons above need. The
// table of g is computed exactly with math/big at start-up; the whole method is
// checked against strconv for all 2^32 bit patterns by TestFloat32Exhaustive
// (DISSECT_EXHAUSTIVE=1).

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"sync"
)

// f32Scale is the scaling for one binary exponent: g·2^(h-96) approximates
// 2^q·10^-k from above.
type f32Scale struct {
	g uint64 // ceil(10^-k · 2^r), in [2^63, 2^64)
	h uint8  // 96 + q - r: left shift of the scaled significand
	k int8   // decimal exponent of the unit the scaled values are counted in
}

// f32Scales returns the table indexed by [asymmetric interval][biased
// exponent]; subnormals use exponent 1 (same q = -149). It is built on first
// use (about 0.75 ms), so runs that write no JSON do not pay for it.
var f32Scales = sync.OnceValue(func() *[2][255]f32Scale {
	t := makeF32Scales()
	return &t
})

func makeF32Scales() (t [2][255]f32Scale) {
	ten := big.NewInt(10)
	for asym := range 2 {
		for e := 1; e <= 254; e++ {
			q := e - 150
			// Interval width w = 2^q (or ¾·2^q) as num/den; k is the largest
			// integer with 10^k <= w.
			num, den := big.NewInt(1), big.NewInt(1)
			if q >= 0 {
				num.Lsh(num, uint(q))
			} else {
				den.Lsh(den, uint(-q))
			}
			if asym == 1 {
				num.Mul(num, big.NewInt(3))
				den.Mul(den, big.NewInt(4))
			}
			k := int(math.Floor(float64(q) * math.Log10(2)))
			// le reports whether 10^k <= num/den.
			le := func(k int) bool {
				p := new(big.Int).Exp(ten, big.NewInt(int64(abs(k))), nil)
				if k >= 0 {
					return p.Mul(p, den).Cmp(num) <= 0
				}
				return new(big.Int).Mul(num, p).Cmp(den) >= 0
			}
			for !le(k) {
				k--
			}
			for le(k + 1) {
				k++
			}
			// 10^-k as pn/pd; find r with 2^63 <= 10^-k·2^r < 2^64.
			pn, pd := big.NewInt(1), big.NewInt(1)
			if k <= 0 {
				pn.Exp(ten, big.NewInt(int64(-k)), nil)
			} else {
				pd.Exp(ten, big.NewInt(int64(k)), nil)
			}
			r := 63 - (pn.BitLen() - pd.BitLen())
			var g *big.Int
			for {
				n, d := new(big.Int).Set(pn), new(big.Int).Set(pd)
				if r >= 0 {
					n.Lsh(n, uint(r))
				} else {
					d.Lsh(d, uint(-r))
				}
				var rem big.Int
				g, _ = new(big.Int).QuoRem(n, d, &rem)
				if rem.Sign() != 0 {
					g.Add(g, big.NewInt(1))
				}
				switch {
				case g.BitLen() < 64:
					r++
					continue
				case g.BitLen() > 64:
					r--
					continue
				}
				break
			}
			t[asym][e] = f32Scale{g: g.Uint64(), h: uint8(96 + q - r), k: int8(k)}
		}
	}
	return t
}

func abs(k int) int {
	if k < 0 {
		return -k
	}
	return k
}

// f32Scaled returns floor(cp·g / 2^96) with its lowest bit set when the
// 32 fraction bits below it are not all zero (round to odd).
func f32Scaled(g, cp uint64) uint64 {
	hi, _ := bits.Mul64(g, cp)
	return hi>>32 | (hi&0xffffffff+0xffffffff)>>32
}

// f32Shortest returns the shortest decimal d·10^k that reads back as the
// finite, non-zero float32 with the given bits (sign ignored); d has no
// trailing zeros and at most 9 digits.
func f32Shortest(x uint32) (d uint64, k int) {
	e := x >> 23 & 0xff
	f := uint64(x & (1<<23 - 1))
	c := f | 1<<23
	asym := 0
	if e == 0 {
		c, e = f, 1
	} else if f == 0 && e > 1 {
		asym = 1
	}
	sc := &f32Scales()[asym][e]
	out := c & 1 // 1: interval ends excluded
	cb := c << 2
	vb := f32Scaled(sc.g, cb<<sc.h)
	vbl := f32Scaled(sc.g, (cb-2+uint64(asym))<<sc.h)
	vbr := f32Scaled(sc.g, (cb+2)<<sc.h)
	k = int(sc.k)

	s := vb >> 2
	u := s / 10 * 10
	w := u + 10
	uin := vbl+out <= u<<2
	win := w<<2+out <= vbr
	switch {
	case uin && !win:
		d = u
	case win && !uin:
		d = w
	default:
		t := s + 1
		uin = vbl+out <= s<<2
		win = t<<2+out <= vbr
		switch {
		case uin && !win:
			d = s
		case win && !uin:
			d = t
		default:
			// A tie goes to the even digit, except when c is a power of
			// two (asymmetric interval): there strconv (Go 1.26) takes the
			// upper one. For float32 this happens only at 2^-12, whose exact
			// 0.000244140625 strconv writes as 0.00024414063.
			mid := (s + t) << 1
			if vb < mid || vb == mid && s&1 == 0 && asym == 0 {
				d = s
			} else {
				d = t
			}
		}
	}
	for d%10 == 0 {
		d /= 10
		k++
	}
	return d, k
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

// appendFloat32 appends the finite float32 x with the fewest digits that read
// back as x: as strconv.AppendFloat(b, float64(x), 'e', -1, 32) when exp is
// set, else as with format 'f'. Negative zero is written as -0. Whole values
// have no point here; appendFloat adds the ".0" the JSON contract asks for.
func appendFloat32(b []byte, x float32, exp bool) []byte {
	// The longest text is a sign and 21 integer digits (just below 1e21);
	// the 8-byte digit stores below may write up to 7 bytes past the text.
	const room = 32
	if cap(b)-len(b) < room {
		b = slices.Grow(b, room)
	}
	start := len(b)
	o := b[start : start+room]
	xb := math.Float32bits(x)
	p := 0 // bytes written to o
	if xb>>31 != 0 {
		o[0] = '-'
		p = 1
		xb &^= 1 << 31
	}
	if xb == 0 {
		if exp {
			return append(b[:start+p], "0e+00"...)
		}
		o[p] = '0'
		return b[:start+p+1]
	}
	d, k := f32Shortest(xb)

	// n = number of digits of d (1 to 9).
	n := (bits.Len64(d) * 1233) >> 12
	if d >= f32Pow10[n] {
		n++
	}
	dp := n + k // the value is 0.digits × 10^dp
	if exp {
		dp = 1 // d.ddd, then the exponent
	}

	// The digits: w holds the last min(n, 8) of them, first digit in the
	// lowest byte; a ninth, leading digit (top) is written on its own.
	top := d / 1e8
	w := f32Digits8(d - top*1e8)
	m := n // digits in w
	if n == 9 {
		m = 8
	} else {
		w >>= 8 * (8 - n)
	}
	switch {
	case dp <= 0: // 0.000ddd (at most 5 zeros: |x| >= 1e-6)
		o[p], o[p+1] = '0', '.'
		p += 2
		for ; dp < 0; dp++ {
			o[p] = '0'
			p++
		}
		if n == 9 {
			o[p] = byte('0' + top)
			p++
		}
		binary.LittleEndian.PutUint64(o[p:], w)
		p += m
	case dp >= n: // ddd000 (at most 21 digits: |x| < 1e21)
		if n == 9 {
			o[p] = byte('0' + top)
			p++
		}
		binary.LittleEndian.PutUint64(o[p:], w)
		p += m
		for ; dp > n; dp-- {
			o[p] = '0'
			p++
		}
	default: // dd.ddd
		if n == 9 {
			o[p] = byte('0' + top)
			p++
			dp--
		}
		// With dp == 0 the point goes first and w's lowest byte is
		// overwritten by the second store.
		binary.LittleEndian.PutUint64(o[p:], w)
		o[p+dp] = '.'
		binary.LittleEndian.PutUint64(o[p+dp+1:], w>>(8*dp))
		p += m + 1
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
