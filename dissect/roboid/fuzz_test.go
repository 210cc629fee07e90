package roboid_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/roboid"
)

var messageTypes = []string{"Client", "NetworkId", "Pose", "NewThing", "Investigate", "ModelURL", "unknown"}

// wholeDatagram checks what Roboid adds to the parser contract
// (dissecttest.Checked): a datagram is always one whole message of a known
// type.
func wholeDatagram(c *dissect.Ctx, b []byte, n int, err error) string {
	if !c.Final || n != len(b) || err != nil || !slices.Contains(messageTypes, c.Rec.Type) {
		return "not one whole message of the datagram"
	}
	return ""
}

// split cuts data into datagrams of random sizes (0 to 40 bytes) and
// directions, drawn from seed.
func split(data []byte, seed uint64) []dgram {
	rng := rand.New(rand.NewPCG(seed, 1))
	var ds []dgram
	for len(data) > 0 {
		n := min(len(data), rng.IntN(41))
		ds = append(ds, dgram{dissect.Dir(rng.IntN(2)), data[:n]})
		data = data[n:]
	}
	return ds
}

// checkPoseBytes asserts that a Pose record's fields account for every byte
// of its datagram and that each value is as long as its data type says
// (by the hand tables of datatypes_test.go) unless flagged truncated, which
// only the last value may be.
func checkPoseBytes(t *testing.T, r *dissect.Record, dg []byte) {
	t.Helper()
	got := []byte{0x10}
	for _, k := range []string{"network_id", "thing_id"} {
		if v, ok := r.Fields.Get(k); ok {
			got = append(got, byte(v.Uint()))
		}
	}
	vals, _ := r.Fields.Get("values")
	items := vals.Items()
	for i, it := range items {
		o := it.Value
		dtv, _ := o.Get("data_type")
		dt, err := strconv.ParseUint(dtv.Str()[2:], 16, 8)
		if err != nil || dt == 0 {
			t.Fatalf("value %d: data_type %q", i, dtv.Str())
		}
		ang, lin := handAngular[dt>>6], handLinear[dt>>4&3]
		a, _ := o.Get("angular_bytes")
		l, _ := o.Get("linear_bytes")
		raw, _ := o.Get("raw")
		_, trunc := o.Get("truncated")
		if int(a.Uint()) != ang || int(l.Uint()) != lin {
			t.Fatalf("value %d (0x%02x): angular %d linear %d", i, dt, a.Uint(), l.Uint())
		}
		switch {
		case trunc && (i != len(items)-1 || len(raw.Raw()) >= ang+lin):
			t.Fatalf("value %d of %d (0x%02x): truncated with %d of %d bytes", i, len(items), dt, len(raw.Raw()), ang+lin)
		case !trunc && len(raw.Raw()) != ang+lin:
			t.Fatalf("value %d (0x%02x): raw %d bytes, want %d", i, dt, len(raw.Raw()), ang+lin)
		}
		if ang > 0 && !trunc {
			degs, _ := o.Get("angles_deg")
			if len(degs.Items()) != ang {
				t.Fatalf("value %d (0x%02x): %d angles", i, dt, len(degs.Items()))
			}
		}
		got = append(got, byte(dt))
		got = append(got, raw.Raw()...)
	}
	if rest, ok := r.Fields.Get("rest"); ok {
		got = append(got, rest.Raw()...)
	}
	if string(got) != string(dg) {
		t.Fatalf("Pose fields give %x, datagram %x", got, dg)
	}
}

// FuzzParse feeds arbitrary bytes as datagrams (cut and given directions by
// seed). Invariants: no panic; every non-empty datagram is exactly one
// message record of a known type covering it, so the records of each
// direction tile its bytes; a Pose's fields hold every byte of its datagram
// and each value is as long as its data type declares unless flagged
// truncated; types and warnings do not depend on decoding.
func FuzzParse(f *testing.F) {
	for _, d := range session1 {
		f.Add(d.data, uint64(1))
	}
	f.Add(cat(h("10 01 02 62 40 00 3e 48 80 b1 40 20 00 00 c0 3f f5 00 40 80 00 00 80 3f"), h("a0 a1 01")), uint64(2))
	f.Add(h("10 01 02 48 40 00 05 aa"), uint64(3))
	f.Add(h("10 01 02 04 04 04 04 04 04 04 04 04 04 d4 10 20 30 07 e5 00 40 80 00 3c"), uint64(4))
	f.Add(h("90 01 02 687474703a2f2f6578616d706c652e636f6d2f722e6f626a 42 00"), uint64(5))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		ds := split(data, seed)
		var size [2]int64
		var nonEmpty []dgram
		for _, d := range ds {
			size[d.dir] += int64(len(d.data))
			if len(d.data) > 0 {
				nonEmpty = append(nonEmpty, d)
			}
		}
		reg := registry(t, dissecttest.Checked(t, roboid.New(), wholeDatagram))
		recs := feed(t, reg, streamInfo(roboid.Port), true, ds)
		dissecttest.CheckTiling(t, recs, size, dirOf)
		if len(recs) != len(nonEmpty) {
			t.Fatalf("%d records for %d non-empty datagrams", len(recs), len(nonEmpty))
		}
		for i, r := range recs {
			dg := nonEmpty[i]
			if dirOf(r) != dg.dir || r.Length != int64(len(dg.data)) || !slices.Contains(messageTypes, r.Type) {
				t.Fatalf("record %d: %s dir %d length %d for a %d-byte datagram in dir %d", i, r.Type, dirOf(r), r.Length, len(dg.data), dg.dir)
			}
			if r.Type == "Pose" {
				checkPoseBytes(t, r, dg.data)
			}
		}
		plain := feed(t, reg, streamInfo(roboid.Port), false, ds)
		if len(plain) != len(recs) {
			t.Fatalf("decode=false: %d records, want %d", len(plain), len(recs))
		}
		for i := range plain {
			if plain[i].Type != recs[i].Type || !slices.Equal(plain[i].Warnings, recs[i].Warnings) || len(plain[i].Fields) != 0 {
				t.Fatalf("record %d: decode=false gives %s %q, decode=true %s %q", i, plain[i].Type, plain[i].Warnings, recs[i].Type, recs[i].Warnings)
			}
		}
	})
}

// TestParseErrorsAreTyped: the only error Parse returns is a *dissect.Error
// (outside datagrams) or ErrNeedMore (empty input).
func TestParseErrorsAreTyped(t *testing.T) {
	s := newSession(true)
	if _, err := s.P.Parse(&s.Ctx, nil); !errors.Is(err, dissect.ErrNeedMore) {
		t.Errorf("empty: %v", err)
	}
}
