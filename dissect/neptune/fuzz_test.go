package neptune_test

import (
	"errors"
	"math/rand/v2"
	"slices"
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
// get.
func deviceType(payload []byte) string {
	if len(payload) == 0 || int(payload[0]) >= len(deviceTypes) {
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

// checked wraps a protocol so that every Parse and Sync result is checked
// against the Parser contract.
type checked struct {
	dissect.Protocol
	t testing.TB
}

func (p checked) NewParser(s *dissect.StreamInfo) dissect.Parser {
	return checkedParser{p.Protocol.NewParser(s), p.Info().Name, p.t}
}

type checkedParser struct {
	p    dissect.Parser
	name string
	t    testing.TB
}

func (p checkedParser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	n, err := p.p.Parse(c, b)
	var e *dissect.Error
	switch {
	case err == nil:
		if n <= 0 || n > len(b) {
			p.t.Fatalf("%s: Parse(%x) = %d, nil: out of range", p.name, b, n)
		}
		if p.name == "neptune" && (b[0] >= 100 || n != 1+int(b[0]) || c.Rec.Type != deviceType(b[1:n])) {
			p.t.Fatalf("neptune: Parse(%x) = %d, type %q", b, n, c.Rec.Type)
		}
		if p.name == "neptune-wiki" && (!c.Final || n != len(b) || c.Rec.Type != wikiType(b)) {
			p.t.Fatalf("neptune-wiki: Parse(%x, final %v) = %d, type %q", b, c.Final, n, c.Rec.Type)
		}
	case errors.Is(err, dissect.ErrNeedMore):
		if n != 0 && n <= len(b) {
			p.t.Fatalf("%s: Parse(%x) = %d, ErrNeedMore: the message is all there", p.name, b, n)
		}
		if p.name == "neptune-wiki" && c.Final && len(b) > 0 {
			p.t.Fatalf("neptune-wiki: Parse(%x) asks for more at the end of a datagram", b)
		}
	case errors.As(err, &e):
		if p.name != "neptune" || n != 0 || e.Proto != "neptune" || e.Code != "bad_length" || e.Offset != 0 || b[0] < 100 {
			p.t.Fatalf("%s: Parse(%x) = %d, %+v", p.name, b, n, e)
		}
	default:
		p.t.Fatalf("%s: Parse(%x): error %v is neither ErrNeedMore nor *dissect.Error", p.name, b, err)
	}
	return n, err
}

func (p checkedParser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	k, ok := p.p.Sync(c, b)
	if k < 0 || k > len(b) || ok && k == len(b) {
		p.t.Fatalf("%s: Sync(%x) = %d, %v", p.name, b, k, ok)
	}
	return k, ok
}

func checkedRegistry(t testing.TB, int16 bool, rules ...string) *dissect.Registry {
	return dissecttest.Registry(t, rules, checked{neptune.New(), t}, checked{neptune.NewWiki(neptune.WikiOptions{Int16: int16}), t})
}

// line is what a record must keep across chunkings and decode modes.
type line struct {
	dir      dissect.Dir
	typ      string
	off, len int64
	warn     string
}

func lines(recs []*dissect.Record) []line {
	out := make([]line, len(recs))
	for i, r := range recs {
		out[i] = line{dirOf(r), r.Type, r.Offset, r.Length, ""}
		for _, w := range r.Warnings {
			out[i].warn += w + "\n"
		}
	}
	return out
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
		evs := []event{{dir: 0, data: data}}
		size := [2]int64{int64(len(data)), int64(len(data))}
		if g := int(gapAt); g > 0 && g < len(data) {
			evs = append(evs, event{dir: 1, data: data[:g]}, event{dir: 1, gap: 5}, event{dir: 1, data: data[g:]})
			size[1] += 5
		} else {
			evs = append(evs, event{dir: 1, data: data})
		}
		if len(data) == 0 {
			evs, size = evs[:0], [2]int64{}
		}
		evs = append(evs, event{dir: 0}, event{dir: 1})
		rng := rand.New(rand.NewPCG(seed, 0))
		chunked := feed(t, info, reg, true, false, evs, rng)
		dissecttest.CheckTiling(t, chunked, size, dirOf)
		whole := feed(t, info, reg, false, false, evs, nil)
		dissecttest.CheckTiling(t, whole, size, dirOf)
		if len(data) <= dissect.DefaultLimits().MaxSync/2 && !slices.Equal(lines(chunked), lines(whole)) {
			t.Fatalf("chunked (decode) and whole (no decode) records differ:\n%v\n%v", lines(chunked), lines(whole))
		}

		// Wiki format.
		int16 := gapAt&1 != 0
		winfo := streamInfo(dissect.UDP, wikiTo)
		wreg := checkedRegistry(t, int16, "udp.port==9000,neptune-wiki")
		var dgs []event
		var want []line
		var off int64
		for p := data; len(p) > 0; {
			n := min(len(p), rng.IntN(24))
			d := p[:n]
			p = p[n:]
			dgs = append(dgs, event{dir: 0, data: d})
			if n > 0 {
				want = append(want, line{0, wikiType(d), off, int64(n), ""})
				off += int64(n)
			}
		}
		dec := feed(t, winfo, wreg, true, true, dgs, nil)
		nodec := feed(t, winfo, wreg, false, true, dgs, nil)
		got := lines(dec)
		if !slices.Equal(got, lines(nodec)) {
			t.Fatalf("wiki: decode and no decode differ:\n%v\n%v", got, lines(nodec))
		}
		for i := range got {
			got[i].warn = ""
		}
		if !slices.Equal(got, want) {
			t.Fatalf("wiki: records %v, want %v", got, want)
		}
	})
}
