package deltarobot_test

import "testing"

// Expected offsets worked out by hand: Sync wants three complete known
// messages, or a complete "DeltaRVr" magic, and stops at the first offset it
// cannot yet judge.
func TestSync(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		k    int
		ok   bool
	}{
		{"empty", nil, 0, false},
		{"nothing can start", h("ff ee dd 00 0a 10"), 6, false},
		{"junk then magic alone", cat(h("ff ee"), vMagic), 2, true},
		{"magic at 0", vMagic, 0, true},
		{"wrong magic alone", cat(h("ff"), h("01 30 44 65 6c 74 61 52 56 58")), 1, false},
		{"three vectors", cat(h("ff"), vPosition, vDirection, vDesired), 1, true},
		{"two vectors ending the buffer", cat(h("ff"), vPosition, vDirection), 1, false},
		{"vector cut", cat(h("ff"), vPosition[:5]), 1, false},
		{"var header cut", cat(h("ee"), vEOTBye[:4]), 1, false},
		{"trailing known low byte", h("ff 03"), 1, false},
		{"trailing unknown low byte", h("ff 0a"), 2, false},
		{"unknown id skipped", cat(h("03 41"), vPosition, vDirection, vDesired), 2, true},
		{"var over 1 MiB skipped", cat(h("06 f0 00 00 20 00"), vPosition, vDirection, vDesired), 6, true},
		{"var of 1 MiB waits", cat(h("06 f0 00 00 10 00"), vPosition, vDirection, vDesired), 0, false},
		{"chain broken by unknown id", cat(vPosition, h("0a 20 00 00 00 00"), vDirection, vDesired, vPing), 24, true},
		{"chain broken by bad size id", cat(vPing, h("04 70"), vDirection, vDesired, vCurve), 12, true},
		{"mismatched id", cat(h("01 20 44 65 6c 74"), vPosition, vDirection, vDesired), 6, true},
		{"mid-message start", cat(vPosition[5:], vDirection, vDesired, vPosition), 13, true},
		{"variable-length chain", cat(h("ff"), vEOTEmpty, vCurve, vEOTBye), 1, true},
		{"magic second in chain", cat(h("ff"), vPing, vMagic), 1, true},
		{"pong then version ending the buffer", cat(vPong, vVersion), 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(true)
			k, ok := s.p.Sync(&s.c, tc.in)
			if k != tc.k || ok != tc.ok {
				t.Errorf("Sync = %d, %v; want %d, %v", k, ok, tc.k, tc.ok)
			}
		})
	}
}
