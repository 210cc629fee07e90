package handcontrol

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/pbwalk"
)

var recordTypes = append(typeNames[:], TypeUnknown, dissect.TypeSkipped, dissect.TypeGap)

// FuzzFrame feeds arbitrary bytes to both directions of a serial stream
// (whole, and in random chunks), with and without decoding. Invariants:
// Parse and Sync keep their contract (dissecttest.Checked); the records
// tile the bytes; their types, places, warnings and skipped reasons depend
// neither on the chunking nor on decoding; a frame's fields start with
// code, role, crc, crc_ok (crc_scope) and a payload, bounded by its size.
func FuzzFrame(f *testing.F) {
	for _, v := range frameVectors {
		f.Add(h(v.hex), uint64(1))
	}
	f.Add(cat(garbage8, vGetSettingsReq, garbage10, vBadPerform, badSFD, vBadSetSettings, vSetPositions), uint64(2))
	f.Add(cat(frame(codeTelemetry, telemetryV1), frame(codeGetGestures, getGestures118), h("fd ba dc 01 50 b4 11 ff 05 3b 01")), uint64(3))
	f.Add(cat(badFrame(0x20, nil), vACK, frame(codeGetMioPatterns, nil), frame(codeGetTelemetry, h("0a 04 08 05 12 00"))), uint64(4))
	f.Add(frame(0x20, bytes.Repeat(h("08 01"), 150)), uint64(5)) // 150 items of payload_raw
	p, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		reg := dissecttest.Registry(t, []string{"serial,handcontrol"}, dissecttest.Checked(t, p))
		evs := []event{{dir: 0, at: t0, data: data}, {dir: 1, at: t0.Add(ms(1)), data: data}, {dir: 0, at: t0.Add(ms(2))}, {dir: 1, at: t0.Add(ms(2))}}
		if len(data) == 0 {
			evs = evs[2:]
		}
		size := [2]int64{int64(len(data)), int64(len(data))}
		var ref []*dissect.Record
		for k, decode := range []bool{true, false, true} {
			var rng *rand.Rand
			if k > 0 {
				rng = rand.New(rand.NewPCG(seed, uint64(k)))
			}
			recs, _ := feedStream(t, reg, decode, evs, rng)
			dissecttest.CheckTiling(t, recs, size, dirOf)
			for _, r := range recs {
				if !slices.Contains(recordTypes, r.Type) {
					t.Fatalf("type %q", r.Type)
				}
				if len(r.Warnings) > 16 {
					t.Fatalf("%d warnings: %q", len(r.Warnings), r.Warnings)
				}
				if r.Type == dissect.TypeSkipped || !decode {
					continue
				}
				p := 4 // payload after crc_ok, or after crc_scope when the crc is valid
				if len(r.Fields) > 4 && r.Fields[3].Value.Bool() {
					p = 5
				}
				if len(r.Fields) < p+1 || r.Fields[0].Key != "code" || r.Fields[1].Key != "role" || r.Fields[2].Key != "crc" || r.Fields[3].Key != "crc_ok" ||
					(p == 5 && r.Fields[4].Key != "crc_scope") || (r.Fields[p].Key != "payload" && r.Fields[p].Key != "payload_hex") {
					t.Fatalf("fields %s", showFields(r.Fields))
				}
				if n := countOutput(r.Fields); n > 2*int(r.Length)+80 {
					t.Fatalf("%d fields for %d bytes", n, r.Length)
				}
			}
			if k == 0 {
				ref = recs
			} else if d := dissecttest.DiffLines(ref, recs); d != "" {
				t.Fatalf("records differ from those of the whole bytes, decoded (decode %v, chunked): %s", decode, d)
			}
		}
	})
}

// countOutput counts a record's fields as the walker bounds them (see
// pbwalk's bounds): an item of payload_raw counts as one.
func countOutput(fs dissect.Fields) int {
	n := 0
	for _, f := range fs {
		if f.Key == "payload_raw" {
			n += 1 + len(f.Value.Items())
			continue
		}
		n += 1 + dissecttest.CountFields(f.Value)
	}
	return n
}

// FuzzPayload runs the payload decoder over arbitrary bytes against every
// built-in message (v2 and v1) and raw. The walker's own invariants are
// fuzzed in dissect/pbwalk (FuzzWalk).
func FuzzPayload(f *testing.F) {
	f.Add(getGestures118, uint8(0))
	f.Add(telemetryV1, uint8(1))
	f.Add(h("ff ff ff ff ff"), uint8(2))
	f.Add(h("0a 03 0a 01 31"), uint8(3))
	f.Add(h("2b 08 07 2c 0d 01 00 00 00 12 00"), uint8(4))
	f.Add(h("08 0a 10 14 18 1e 20 28 28 32"), uint8(5))
	v2, v1, err := loadBuiltin()
	if err != nil {
		f.Fatal(err)
	}
	msgs := []*pbwalk.Message{nil, emptyMsg}
	for _, set := range []map[string]*pbwalk.Message{v2, v1} {
		names := make([]string, 0, len(set))
		for n := range set {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			msgs = append(msgs, set[n])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		m := msgs[int(pick)%len(msgs)]
		var rec dissect.Record
		d := pbwalk.Decoder{WarnPrefix: "payload: "}
		fields, raw, issues, err := d.Decode(&rec, m, data, true)
		if err != nil {
			var we *pbwalk.Error
			if !errors.As(err, &we) || we.Offset < 0 || we.Offset > len(data) || fields != nil || raw != nil {
				t.Fatalf("decode failed with %v, fields %v", err, fields)
			}
		} else if n := dissecttest.CountFields(dissect.Object(fields)) + len(raw); n > 2*len(data)+64 {
			t.Fatalf("%d fields for %d bytes", n, len(data))
		}
		if len(rec.Warnings) > pbwalk.MaxWarnings+1 {
			t.Fatalf("%d warnings", len(rec.Warnings))
		}
		if m == nil && err == nil && issues != 0 {
			t.Fatalf("raw decoding has issues: %q", rec.Warnings)
		}
		// Building nothing gives the same verdict.
		var rec2 dissect.Record
		d2 := pbwalk.Decoder{WarnPrefix: "payload: "}
		_, _, issues2, err2 := d2.Decode(&rec2, m, data, false)
		if (err2 == nil) != (err == nil) || err != nil && err2.Error() != err.Error() || issues2 != issues || !slices.Equal(rec.Warnings, rec2.Warnings) {
			t.Fatalf("build=false: %v issues %d %q; build=true: %v issues %d %q", err2, issues2, rec2.Warnings, err, issues, rec.Warnings)
		}
		if d2.Check(m, data) != (err == nil && issues == 0) {
			t.Fatal("check disagrees with decode")
		}
	})
}
