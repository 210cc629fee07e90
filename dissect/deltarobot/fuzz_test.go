package deltarobot_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

var messageTypes = []string{
	"protocol_magic", "protocol_version", "actuator_position", "ping", "pong",
	"end_of_transmission", "current_direction", "desired_direction", "curve", "unknown",
}

// codes checks what Parse adds to the contract (dissecttest.Checked): a
// message has a type of the protocol, and an error one of its codes.
func codes(c *dissect.Ctx, _ []byte, _ int, err error) string {
	var e *dissect.Error
	switch {
	case err == nil && !slices.Contains(messageTypes, c.Rec.Type):
		return "type " + c.Rec.Type
	case errors.As(err, &e) && e.Code != "bad_size_id" && e.Code != "no_sync" && e.Code != "implausible_length":
		return "code " + e.Code
	}
	return ""
}

// FuzzParse feeds arbitrary bytes to both directions of a stream, in chunks
// chosen by seed, with a gap in dir 1 when gapAt falls inside the data.
// Invariants: no panic; Parse and Sync keep their contract; the records of
// each direction tile the bytes exactly; message records have known types;
// types, offsets, lengths and warnings depend neither on the chunking (for
// inputs under the framework's limits) nor on decoding.
func FuzzParse(f *testing.F) {
	f.Add(cat(vMagic, vVersion, vPosition, vDirection, vDesired, vPing, vEOTBye), uint64(1), uint16(0))
	f.Add(cat(vMagic, vVersion, vPong, vCurve, vEOTEmpty), uint64(2), uint16(20))
	f.Add(cat(vMagic, vVersion, vPosition, h("0a 77"), vDirection, vDesired, vPing), uint64(3), uint16(0))
	f.Add(cat(vPosition[5:], vDirection, vDesired, vPosition, vPing), uint64(4), uint16(0))
	f.Add(cat(vMagic, vVersion, h("0a 20 01 02 03 04 01 20 44 65 6c 74 00 00 00"), vPosition), uint64(5), uint16(7))
	f.Add(h("09 f0 0e 00 00 00 00 00 80 3f 00 00 00 3f 00 00 80 bf aa bb"), uint64(6), uint16(0))
	f.Add(h("06 f0 ff ff ff ff 01 30"), uint64(7), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, gapAt uint16) {
		reg := dissecttest.Registry(t, []string{rule}, dissecttest.Checked(t, deltarobot.New(), codes))
		evs := []event{{Dir: 0, At: t0, Data: data}}
		size := [2]int64{int64(len(data)), int64(len(data))}
		if g := int(gapAt); g > 0 && g < len(data) {
			evs = append(evs, event{Dir: 1, At: t0, Data: data[:g]}, event{Dir: 1, At: t0, Gap: 5}, event{Dir: 1, At: t0, Data: data[g:]})
			size[1] += 5
		} else {
			evs = append(evs, event{Dir: 1, At: t0.Add(time.Millisecond), Data: data})
		}
		if len(data) == 0 {
			evs = evs[:0]
			size = [2]int64{}
		}
		evs = append(evs, event{Dir: 0, At: t0}, event{Dir: 1, At: t0})

		rng := rand.New(rand.NewPCG(seed, 0))
		chunked := feedStream(t, reg, true, evs, rng)
		dissecttest.CheckTiling(t, chunked, size, dirOf)
		for _, r := range chunked {
			switch r.Type {
			case dissect.TypeGap, dissect.TypeSkipped:
			default:
				if !slices.Contains(messageTypes, r.Type) {
					t.Fatalf("record type %q", r.Type)
				}
			}
		}
		whole := feedStream(t, reg, false, evs, nil)
		dissecttest.CheckTiling(t, whole, size, dirOf)
		// Past MaxSync/2 bytes the framework's sync buffer may be cut at
		// points that depend on the chunking.
		if len(data) <= dissect.DefaultLimits().MaxSync/2 {
			if d := dissecttest.DiffLines(chunked, whole); d != "" {
				t.Fatalf("chunked (decode) and whole (no decode) records differ: %s", d)
			}
		}
	})
}
