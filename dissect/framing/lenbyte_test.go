package framing

import (
	"errors"
	"testing"
)

// TestLengthByteFastPath: a frame that is a length byte and what it
// counts (no sync word, no check) is framed on Frame's fast path, and it
// agrees with the rule worked out here for every length byte, adjustment
// and bytes available (Frame, and Whole for a whole valid frame): n =
// byte + adjust; refused outside 1 … max; short
// while fewer than n bytes are there.
func TestLengthByteFastPath(t *testing.T) {
	for _, c := range []struct {
		adjust int64
		max    int
	}{{1, 100}, {0, 64}, {2, 300}, {-1, 255}} {
		fr, err := New(Framing{Length: &Length{Width: 1, Adjust: c.adjust}, Max: c.max})
		if err != nil {
			t.Fatal(err)
		}
		if !fr.lenByte {
			t.Fatalf("%+v: not on the fast path", c)
		}
		b := make([]byte, 400)
		for v := range 256 {
			b[0] = byte(v)
			n := int64(v) + c.adjust
			for _, have := range []int{1, int(max(n-1, 1)), int(max(n, 1)), 400} {
				got, err := fr.Frame(b[:have])
				if w := fr.Whole(b[:have]); err == nil && w != got || err != nil && w != 0 {
					t.Errorf("%+v byte %d, %d bytes: Whole = %d, Frame = %d, %v", c, v, have, w, got, err)
				}
				var bad *Bad
				switch {
				case n < 1 || n > int64(c.max):
					if !errors.As(err, &bad) || got != 0 {
						t.Errorf("%+v byte %d: Frame = %d, %v; want refused", c, v, got, err)
					}
				case int64(have) < n:
					if err != ErrShort || got != int(n) {
						t.Errorf("%+v byte %d, %d bytes: Frame = %d, %v; want %d, short", c, v, have, got, err, n)
					}
				default:
					if err != nil || got != int(n) {
						t.Errorf("%+v byte %d, %d bytes: Frame = %d, %v; want %d", c, v, have, got, err, n)
					}
				}
			}
		}
		if n, err := fr.Frame(nil); n != 0 || err != ErrShort {
			t.Errorf("Frame(nil) = %d, %v", n, err)
		}
	}
	// A sync word, a check or a wider length takes the general path.
	for _, f := range []Framing{
		{Sync: []byte{0xaa}, Length: &Length{Offset: 1, Width: 1}},
		{Length: &Length{Width: 2}},
		{Length: &Length{Width: 1, Adjust: 2}, Check: &Check{Kind: Sum8, At: -1}},
	} {
		fr, err := New(f)
		if err != nil || fr.lenByte {
			t.Errorf("%+v: %v, fast path %v", f, err, fr != nil && fr.lenByte)
			continue
		}
		if w := fr.Whole([]byte{0xaa, 2, 0, 0, 0, 0}); w != 0 {
			t.Errorf("%+v: Whole = %d, want 0 (not a length byte framing)", f, w)
		}
	}
}
