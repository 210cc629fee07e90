package neptune_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/neptune"
)

var (
	deviceTypes = []string{"abort", "set_motor", "translate", "rotate", "stabilize", "lamp"}
	wikiTypes   = []string{"", "speed_motor", "position_motor", "relay", "sensor_data"}
)

// deviceType is the record type a device message with this payload must
// get ("" for an empty payload: a length 0 reruns the previous message's
// type, which a single Parse call cannot tell).
func deviceType(payload []byte) string {
	if len(payload) == 0 {
		return ""
	}
	if int(payload[0]) >= len(deviceTypes) {
		return "unknown"
	}
	return deviceTypes[payload[0]]
}

func wikiType(d []byte) string {
	if t := int(d[0]); t >= 1 && t < len(wikiTypes) {
		return wikiTypes[t]
	}
	return "unknown"
}

// deviceRules checks what the device framing adds to the parser contract
// (dissecttest.Checked): a message is a length byte L < 100 and L bytes,
// typed by its type byte; the one error is a length of 100 or more.
func deviceRules(c *dissect.Ctx, b []byte, n int, err error) string {
	var e *dissect.Error
	switch {
	case err == nil && (b[0] >= 100 || n != 1+int(b[0])):
		return "length"
	case err == nil && n > 1 && c.Rec.Type != deviceType(b[1:n]):
		return "type " + c.Rec.Type
	case errors.As(err, &e) && (e.Code != "bad_length" || e.Offset != 0 || b[0] < 100):
		return "not a bad length byte"
	}
	return ""
}

// wikiRules checks what the wiki format adds: a datagram is one whole
// packet, typed by its first byte, and never asks for more.
func wikiRules(c *dissect.Ctx, b []byte, n int, err error) string {
	switch {
	case err == nil && (!c.Final || n != len(b) || c.Rec.Type != wikiType(b)):
		return "not the whole datagram, or type " + c.Rec.Type
	case err != nil && (!errors.Is(err, dissect.ErrNeedMore) || c.Final && len(b) > 0):
		return "an error within a datagram"
	}
	return ""
}

func checkedRegistry(t testing.TB, int16 bool, rules ...string) *dissect.Registry {
	return dissecttest.Registry(t, rules, dissecttest.Checked(t, neptune.New(), deviceRules),
		dissecttest.Checked(t, neptune.NewWiki(neptune.WikiOptions{Int16: int16}), wikiRules))
}

// FuzzParse runs arbitrary bytes through both protocols.
//
// Device framing: the bytes go to dir 0 of a TCP stream, and to dir 1 with
// a 5-byte gap when gapAt falls inside them, in chunks chosen by seed.
// Invariants: Parse and Sync keep their contract (see checkedParser: a
// message is 1+L bytes with L < 100, typed by its type byte); the records
// of each direction tile the bytes exactly; types, offsets, lengths and
// warnings depend neither on the chunking nor on decoding.
//
// Wiki format: the bytes are cut into datagrams by seed (the int width from
// gapAt's low bit). Invariants: each non-empty datagram is exactly one
// record, typed by its first byte; decoding changes no type or warning.
func FuzzParse(f *testing.F) {
	f.Add(vStop, uint64(1), uint16(0))
	f.Add(cat(vStop, vRelay5On, vTranslate, vRotate, vStabilize, vLamp, vAbort), uint64(2), uint16(7))
	f.Add(cat(vStop, h("64 ff 10 02"), vTranslate, vRotate, vLamp, vStabilize), uint64(3), uint16(0))
	f.Add(cat(h("00 02 09 01 03 01 02 00"), vMotor2, h("c8"), vTranslate), uint64(4), uint16(3))
	f.Add(cat(wSpeed, wPosition, wRelayOn, wSensor, wUnknown), uint64(5), uint16(1))
	f.Add(cat(wSpeed16, wSensor16, h("03 09")), uint64(6), uint16(2))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, gapAt uint16) {
		// Device framing.
		info := streamInfo(dissect.TCP, rov)
		reg := checkedRegistry(t, false, "tcp.port==1493,neptune")
		evs := []event{{Dir: 0, Data: data}}
		size := [2]int64{int64(len(data)), int64(len(data))}
		if g := int(gapAt); g > 0 && g < len(data) {
			evs = append(evs, event{Dir: 1, Data: data[:g]}, event{Dir: 1, Gap: 5}, event{Dir: 1, Data: data[g:]})
			size[1] += 5
		} else {
			evs = append(evs, event{Dir: 1, Data: data})
		}
		if len(data) == 0 {
			evs, size = evs[:0], [2]int64{}
		}
		evs = append(evs, event{Dir: 0}, event{Dir: 1})
		rng := rand.New(rand.NewPCG(seed, 0))
		chunked := feed(t, info, reg, true, evs, rng)
		dissecttest.CheckTiling(t, chunked, size, dirOf)
		whole := feed(t, info, reg, false, evs, nil)
		dissecttest.CheckTiling(t, whole, size, dirOf)
		if len(data) <= dissect.DefaultLimits().MaxSync/2 {
			if d := dissecttest.DiffLines(chunked, whole); d != "" {
				t.Fatalf("chunked (decode) and whole (no decode) records differ: %s", d)
			}
		}

		// Wiki format.
		int16 := gapAt&1 != 0
		winfo := streamInfo(dissect.UDP, wikiTo)
		wreg := checkedRegistry(t, int16, "udp.port==9000,neptune-wiki")
		var dgs []event
		type span struct {
			typ      string
			off, len int64
		}
		var want []span
		var off int64
		for p := data; len(p) > 0; {
			n := min(len(p), rng.IntN(24))
			d := p[:n]
			p = p[n:]
			dgs = append(dgs, event{Dir: 0, Data: d})
			if n > 0 {
				want = append(want, span{wikiType(d), off, int64(n)})
				off += int64(n)
			}
		}
		dec := feed(t, winfo, wreg, true, dgs, nil)
		nodec := feed(t, winfo, wreg, false, dgs, nil)
		if d := dissecttest.DiffLines(dec, nodec); d != "" {
			t.Fatalf("wiki: decode and no decode differ: %s", d)
		}
		if len(dec) != len(want) {
			t.Fatalf("wiki: %d records, want %d", len(dec), len(want))
		}
		for i, r := range dec {
			if w := want[i]; dirOf(r) != 0 || r.Type != w.typ || r.Offset != w.off || r.Length != w.len {
				t.Fatalf("wiki: record %d: dir %d %s@%d+%d, want %+v", i, dirOf(r), r.Type, r.Offset, r.Length, w)
			}
		}
	})
}
