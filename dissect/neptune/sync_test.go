package neptune_test

import "testing"

// Expected offsets worked out by hand: Sync wants three consecutive
// well-formed messages (length 1-99, type 0-5, the length the device acts on
// for the type; an abort only with length 1, its usual shape) and stops at the first offset it cannot
// yet judge.
func TestSync(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		k    int
		ok   bool
	}{
		{"empty", nil, 0, false},
		{"nothing can start", h("00 64 ff c8"), 4, false},
		{"three at 0", cat(vStop, vTranslate, vLamp), 0, true},
		{"three after junk", cat(h("ff 00 80"), vStop, vTranslate, vLamp, vAbort), 3, true},
		{"two ending the buffer", cat(h("ff"), vStop, vTranslate), 1, false},
		{"message cut", cat(h("ff"), vStop[:3]), 1, false},
		{"length byte last", h("ff 04"), 1, false},
		{"abort with arguments not taken", cat(h("05 00 01 02 03 04"), vRotate, vStabilize), 6, false},
		{"aborts", cat(h("ff"), vAbort, vAbort, vAbort), 1, true},
		// The tail 02 00 00 of a set_motor (motor 2, forward, 0) would
		// frame as an abort of length 2 ending on the next real boundary:
		// it is not taken, so no bogus abort follows a gap there.
		{"tail of a set_motor is no abort", cat(h("02 00 00"), vStop, vTranslate, vLamp), 3, true},
		{"wrong length rejected", cat(h("03 01 02 00"), vStop, vTranslate, vLamp), 4, true},
		{"unknown type rejected", cat(h("02 09 01"), vStop, vTranslate, vLamp), 3, true},
		{"empty message rejected", cat(h("00"), vStop, vTranslate, vLamp), 1, true},
		// 02 03 is length 2 with type 3 (needs 3); 03 02 00 01 starts a
		// good translate.
		{"misaligned inside a chain", cat(h("02"), vTranslate, vRotate, vLamp), 1, true},
		// 06 00 (an abort of length 6) is not taken either.
		{"chain broken by a bad third message", cat(vStop, vTranslate, h("02 06 00"), vStop, vTranslate, vLamp), 12, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss := deviceSession(true)
			k, ok := ss.P.Sync(&ss.Ctx, tc.in)
			if k != tc.k || ok != tc.ok {
				t.Errorf("Sync = %d, %v; want %d, %v", k, ok, tc.k, tc.ok)
			}
		})
	}
}
