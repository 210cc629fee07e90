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

// checked wraps the protocol so that every Parse and Sync result is checked
// against the Parser contract.
type checked struct {
	dissect.Protocol
	t testing.TB
}

func (p checked) NewParser(s *dissect.StreamInfo) dissect.Parser {
	return checkedParser{p.Protocol.NewParser(s), p.t}
}

type checkedParser struct {
	p dissect.Parser
	t testing.TB
}

func (p checkedParser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	n, err := p.p.Parse(c, b)
	var e *dissect.Error
	switch {
	case err == nil:
		if n <= 0 || n > len(b) {
			p.t.Fatalf("Parse(%x) = %d, nil: out of range", b, n)
		}
		if !slices.Contains(messageTypes, c.Rec.Type) {
			p.t.Fatalf("Parse(%x): type %q", b, c.Rec.Type)
		}
	case errors.Is(err, dissect.ErrNeedMore):
		if n != 0 && n <= len(b) {
			p.t.Fatalf("Parse(%x) = %d, ErrNeedMore: the message is all there", b, n)
		}
	case errors.As(err, &e):
		if n != 0 || e.Proto != "deltarobot" || (e.Code != "bad_size_id" && e.Code != "no_sync") || e.Offset < 0 || e.Offset >= int64(len(b)) {
			p.t.Fatalf("Parse(%x) = %d, %+v", b, n, e)
		}
	default:
		p.t.Fatalf("Parse(%x): error %v is neither ErrNeedMore nor *dissect.Error", b, err)
	}
	return n, err
}

func (p checkedParser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	k, ok := p.p.Sync(c, b)
	if k < 0 || k > len(b) || ok && k == len(b) {
		p.t.Fatalf("Sync(%x) = %d, %v", b, k, ok)
	}
	return k, ok
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
		reg := dissecttest.Registry(t, []string{rule}, checked{deltarobot.New(), t})
		evs := []event{{dir: 0, at: t0, data: data}}
		size := [2]int64{int64(len(data)), int64(len(data))}
		if g := int(gapAt); g > 0 && g < len(data) {
			evs = append(evs, event{dir: 1, at: t0, data: data[:g]}, event{dir: 1, at: t0, gap: 5}, event{dir: 1, at: t0, data: data[g:]})
			size[1] += 5
		} else {
			evs = append(evs, event{dir: 1, at: t0.Add(time.Millisecond), data: data})
		}
		if len(data) == 0 {
			evs = evs[:0]
			size = [2]int64{}
		}
		evs = append(evs, event{dir: 0, at: t0}, event{dir: 1, at: t0})

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
		if len(data) <= dissect.DefaultLimits().MaxSync/2 && !slices.Equal(lines(chunked), lines(whole)) {
			t.Fatalf("chunked (decode) and whole (no decode) records differ:\n%v\n%v", lines(chunked), lines(whole))
		}
	})
}
