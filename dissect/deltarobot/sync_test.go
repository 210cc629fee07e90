package deltarobot_test

import (
	"math/rand/v2"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

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
			k, ok := s.P.Sync(&s.Ctx, tc.in)
			if k != tc.k || ok != tc.ok {
				t.Errorf("Sync = %d, %v; want %d, %v", k, ok, tc.k, tc.ok)
			}
		})
	}
}

// TestImplausibleLengthResync: after the handshake, a curve header claiming
// 0xFFFFFFFF content bytes is one skipped record naming the length, and the
// 1000 messages after it (vectors of helpers_test.go) are all decoded, for
// any segmentation.
func TestImplausibleLengthResync(t *testing.T) {
	reg := dissecttest.Registry(t, []string{rule}, deltarobot.New())
	body := []byte{}
	cycle := [][]byte{vPosition, vDirection, vDesired, vPing, vPong, vEOTBye, vCurve}
	wants := []want{
		{dir: 0, typ: "protocol_magic", off: 0, len: 10},
		{dir: 0, typ: "protocol_version", off: 10, len: 6},
		{dir: 0, typ: dissect.TypeSkipped, off: 16, len: 6, reason: "4294967295 content bytes, over the 1048576-byte plausibility limit"},
	}
	off := int64(22)
	for i := range 1000 {
		m := cycle[i%len(cycle)]
		typ := map[int]string{0: "actuator_position", 1: "current_direction", 2: "desired_direction", 3: "ping", 4: "pong", 5: "end_of_transmission", 6: "curve"}[i%len(cycle)]
		wants = append(wants, want{dir: 0, typ: typ, off: off, len: int64(len(m))})
		body = append(body, m...)
		off += int64(len(m))
	}
	in := cat(vMagic, vVersion, h("09 f0 ff ff ff ff"), body)
	evs := []event{{Dir: 0, At: t0, Data: in}, {Dir: 0, At: t0}}
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 20 {
		var r *rand.Rand
		if i > 0 {
			r = rng
		}
		recs := feedStream(t, reg, true, evs, r)
		dissecttest.CheckTiling(t, recs, [2]int64{int64(len(in)), 0}, dirOf)
		checkRecords(t, recs, wants, false)
	}
}
