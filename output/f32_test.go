package output

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// refFloat is the strconv-based formatting that appendFloat used before the
// float32 formatter existed, plus the contract's float rule applied to the
// text: a number without a point or an exponent gets ".0". The float32 path
// must match it byte for byte.
func refFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(b, f, 'e', -1, bits)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, bits)
	if !bytes.ContainsAny(b[start:], ".eE") {
		b = append(b, ".0"...)
	}
	return b
}

// checkF32 compares appendFloat with refFloat for the float32 with bits x.
func checkF32(t testing.TB, x uint32, got, want []byte) ([]byte, []byte) {
	f := float64(math.Float32frombits(x))
	got = appendFloat(got[:0], f, 32)
	want = refFloat(want[:0], f, 32)
	if !bytes.Equal(got, want) {
		t.Errorf("float32 bits %#08x: got %s, want %s", x, got, want)
	}
	return got, want
}

// TestFloat32Vectors: expected strings written by hand (each is the shortest
// decimal that rounds to the float32, in the notation the contract asks for).
func TestFloat32Vectors(t *testing.T) {
	for _, tc := range []struct {
		x    float32
		want string
	}{
		{0, "0.0"},
		{float32(math.Copysign(0, -1)), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{0.1, "0.1"},
		{0.123456, "0.123456"},
		{-0.2, "-0.2"},
		{1.5, "1.5"},
		{100, "100.0"},
		{16777216, "16777216.0"},
		{16777217, "16777216.0"}, // not representable: rounds to 2^24
		{3e9, "3000000000.0"},
		{1e20, "100000000000000000000.0"},
		{1e21, "1e+21"},
		{1e-6, "1e-06"}, // the float32 nearest 1e-6 is just below it
		{2e-6, "0.000002"},
		{1e-7, "1e-07"},
		{1.17549435e-38, "1.1754944e-38"},          // smallest normal
		{math.MaxFloat32, "3.4028235e+38"},         // largest finite
		{math.SmallestNonzeroFloat32, "1e-45"},     // smallest subnormal
		{2 * math.SmallestNonzeroFloat32, "3e-45"}, // 2.8e-45: "3e-45" reads back
		{0.3, "0.3"},
		{1.0 / 3, "0.33333334"},
		{8388608.5, "8388608.0"}, // ties to even on conversion: 2^23
		{123456789, "123456790.0"},
		// 2^-12 = 0.000244140625 is exactly halfway between the two
		// shortest candidates; strconv (Go 1.26) takes the upper one.
		{1.0 / 4096, "0.00024414063"},
	} {
		got := string(appendFloat(nil, float64(tc.x), 32))
		if got != tc.want {
			t.Errorf("%g: got %s, want %s", tc.x, got, tc.want)
		}
	}
}

// deltaTables returns the coordinates of the shared benchmark generator
// (shared/bench/gen_deltarvr_pcap.py: make_table(4096) and the 250-point
// curve), rounded to float32 as struct.pack("<f") does.
func deltaTables() []float32 {
	var out []float32
	n := 4096
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		x, y, z := 0.2*math.Cos(a), 0.2*math.Sin(a), 0.05*math.Sin(3*a)
		dx, dy, dz := -math.Sin(a), math.Cos(a), 0.15*math.Cos(3*a)
		out = append(out, float32(x), float32(y), float32(z), 0,
			float32(dx*0.9), float32(dy*1.1), float32(dz), float32(dx), float32(dy))
	}
	for i := range 250 {
		a := 2 * math.Pi * float64(i) / 250
		out = append(out, float32(0.2*math.Cos(a)), float32(0.2*math.Sin(a)), float32(0.05*math.Sin(3*a)))
	}
	return out
}

// TestFloat32MatchesStrconv compares a few million chosen float32 values
// with strconv; the exhaustive comparison is TestFloat32Exhaustive.
func TestFloat32MatchesStrconv(t *testing.T) {
	var got, want []byte
	check := func(x uint32) {
		got, want = checkF32(t, x, got, want)
		got, want = checkF32(t, x|1<<31, got, want)
	}
	near := func(x uint32, span uint32) {
		for d := uint32(0); d <= span; d++ {
			check(x + d)
			check(x - d)
		}
	}
	// Random bit patterns.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		check(rng.Uint32())
	}
	// Every power of two and its neighbours; every binary exponent.
	for e := uint32(0); e < 255; e++ {
		near(e<<23, 64)
		near(e<<23|1<<22, 4)
	}
	// The float32 values nearest each power of ten, and their neighbours.
	for p := -45; p <= 38; p++ {
		near(math.Float32bits(float32(math.Pow(10, float64(p)))), 64)
	}
	// Around the notation switch points 1e-6 and 1e21.
	near(math.Float32bits(1e-6), 5000)
	near(math.Float32bits(1e21), 5000)
	// Subnormals: the first ones, then a stride through the rest.
	for x := uint32(0); x < 1<<16; x++ {
		check(x)
	}
	for x := uint32(1 << 16); x < 1<<23; x += 37 {
		check(x)
	}
	// Integers.
	for i := range 1 << 17 {
		check(math.Float32bits(float32(i)))
	}
	for i := 1<<24 - 1000; i < 1<<24+1000; i++ {
		check(math.Float32bits(float32(i)))
	}
	// Decimal fractions as typed by people.
	for i := range 100000 {
		check(math.Float32bits(float32(i) / 10000))
		check(math.Float32bits(float32(i) / 1000))
	}
	// The benchmark capture's coordinates.
	for _, v := range deltaTables() {
		near(math.Float32bits(v), 2)
	}
}

// TestFloat32Exhaustive compares every one of the 2^32 float32 bit patterns
// with strconv. It takes minutes, so it runs only with DISSECT_EXHAUSTIVE=1.
func TestFloat32Exhaustive(t *testing.T) {
	if os.Getenv("DISSECT_EXHAUSTIVE") != "1" {
		t.Skip("set DISSECT_EXHAUSTIVE=1 to compare all 2^32 float32 values")
	}
	const chunk = 1 << 20
	var next, diffs atomic.Uint64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var got, want []byte
			for {
				lo := next.Add(chunk) - chunk
				if lo >= 1<<32 {
					return
				}
				for x := lo; x < lo+chunk; x++ {
					f := float64(math.Float32frombits(uint32(x)))
					got = appendFloat(got[:0], f, 32)
					want = refFloat(want[:0], f, 32)
					if !bytes.Equal(got, want) {
						if diffs.Add(1) <= 20 {
							t.Errorf("float32 bits %#08x: got %s, want %s", x, got, want)
						}
					}
				}
			}
		})
	}
	wg.Wait()
	t.Logf("compared %d float32 bit patterns, %d differences", uint64(1)<<32, diffs.Load())
	if diffs.Load() != 0 {
		t.Fatalf("%d differences", diffs.Load())
	}
}

// makeF32Scales computes f32Tab exactly with math/big: for each binary
// exponent, k and the normalised, rounded-up g. It wrote f32tab.go (run
// TestF32Tab with DISSECT_WRITE_F32TAB=1 to write it again).
func makeF32Scales() (t [2][256]f32Scale) {
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

// TestF32Tab checks the table in f32tab.go against makeF32Scales.
func TestF32Tab(t *testing.T) {
	want := makeF32Scales()
	if os.Getenv("DISSECT_WRITE_F32TAB") == "1" {
		var b bytes.Buffer
		b.WriteString("// Code generated by TestF32Tab (DISSECT_WRITE_F32TAB=1); DO NOT EDIT.\n\npackage output\n\n")
		b.WriteString("// f32Tab is the scaling for each [asymmetric interval][biased exponent]\n" +
			"// (subnormals use exponent 1, the same q = -149), computed exactly with\n" +
			"// math/big by makeF32Scales (f32_test.go).\n")
		b.WriteString("var f32Tab = [2][256]f32Scale{\n")
		for asym := range 2 {
			b.WriteString("\t{\n")
			for e := range 256 {
				s := want[asym][e]
				fmt.Fprintf(&b, "\t\t{%#016x, %d, %d}, // e=%d\n", s.g, s.h, s.k, e)
			}
			b.WriteString("\t},\n")
		}
		b.WriteString("}\n")
		src, err := format.Source(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("f32tab.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if f32Tab != want {
		t.Fatal("f32tab.go differs from makeF32Scales: run TestF32Tab with DISSECT_WRITE_F32TAB=1")
	}
}

// TestF32Scales checks the table's invariants: g normalised, the shifted
// significand (below 2^26) fits in 64 bits, and 10^k within the interval width.
func TestF32Scales(t *testing.T) {
	for asym := range 2 {
		for e := 1; e <= 254; e++ {
			s := f32Tab[asym][e]
			if s.g>>63 != 1 || s.h > 38 {
				t.Errorf("asym %d e %d: g %#x h %d", asym, e, s.g, s.h)
			}
			q := float64(e - 150)
			w := q * math.Log10(2)
			if asym == 1 {
				w += math.Log10(0.75)
			}
			if k := float64(s.k); k > w+1e-9 || k+1 < w-1e-9 {
				t.Errorf("asym %d e %d: k %d, log10 width %f", asym, e, s.k, w)
			}
		}
	}
}

// FuzzFloat32 compares the formatter with strconv for any bit pattern, and
// checks that the text reads back as the same float32.
func FuzzFloat32(f *testing.F) {
	for _, v := range []float32{0, 1, 0.1, 0.123456, -0.2, 1e-6, 1e21, math.MaxFloat32,
		math.SmallestNonzeroFloat32, 1.17549435e-38, 16777216, 0.19999999} {
		f.Add(math.Float32bits(v))
	}
	f.Fuzz(func(t *testing.T, x uint32) {
		got, _ := checkF32(t, x, nil, nil)
		v := math.Float32frombits(x)
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return
		}
		r, err := strconv.ParseFloat(string(got), 32)
		if err != nil || math.Float32bits(float32(r)) != x {
			t.Errorf("float32 bits %#08x: %s reads back as %v (%v)", x, got, r, err)
		}
	})
}

// coords returns typical coordinates: log-uniform in 0.0001–1000, both signs.
func coords() []float32 {
	rng := rand.New(rand.NewPCG(3, 4))
	v := make([]float32, 4096)
	for i := range v {
		v[i] = float32(math.Pow(10, -4+7*rng.Float64()))
		if i%2 == 1 {
			v[i] = -v[i]
		}
	}
	return v
}

// BenchmarkFloat32 compares the formatter with strconv per value.
func BenchmarkFloat32(b *testing.B) {
	vs := coords()
	run := func(b *testing.B, fn func([]byte, float64) []byte) {
		var buf []byte
		size := 0
		for _, v := range vs {
			size += len(fn(nil, float64(v)))
		}
		b.SetBytes(int64(size / len(vs)))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			buf = fn(buf[:0], float64(vs[i&(len(vs)-1)]))
			i++
		}
	}
	b.Run("f32", func(b *testing.B) {
		run(b, func(buf []byte, f float64) []byte { return appendFloat(buf, f, 32) })
	})
	b.Run("strconv", func(b *testing.B) {
		run(b, func(buf []byte, f float64) []byte { return refFloat(buf, f, 32) })
	})
}
