package pbwalk

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// allMessage is a t.All with every kind of field, written by protowire.
func allMessage() []byte {
	return cat(tagv(1, 1<<20), tagv(2, 1<<40), tagv(5, 3), tag32(7, 7), tag64(8, 8), tag32(11, 0x3fc00000),
		tagv(13, 1), tags(14, "name_gesture"), tagv(16, 2), tagb(27, cat(tagv(1, 5), tagv(2, 1))),
		tagb(18, packedVarints(1, 2, 3, 300, 70000)), tagv(18, 9), tags(22, "a"), tags(22, "b"),
		tagb(28, tagv(1, 1)), tagb(28, tagv(1, 2)), tagg(24, tagv(1, 5)),
		tagb(25, cat(tags(1, "k"), tagv(2, 1))), tagb(26, tags(1, uuid)), tagv(300, 1))
}

// BenchmarkDecode measures Walk and Decode over the HandControl spec
// vectors (raw) and over messages of the test schema (both decode paths).
func BenchmarkDecode(b *testing.B) {
	msgs := compileTest(b)
	simple := cat(tagv(1, 150), tags(2, "telemetry"), tagb(5, cat(tagv(1, 7), tagb(3, tags(1, uuid)))), tagb(4, tags(1, uuid)))
	cases := []struct {
		name string
		m    *Message
		in   []byte
	}{
		{"raw/GetGestures", nil, h(specVectors[0])},
		{"raw/TelemetryV1", nil, h(specVectors[1])},
		{"schema/All", msgs["t.All"], allMessage()},
		{"schema/Simple", msgs["t.Simple"], simple},
	}
	for _, c := range cases {
		b.Run("walk/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Walk(c.in, func(int, Field) bool { return true }); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, build := range []bool{true, false} {
			name := "decode/" + c.name
			if !build {
				name = "check/" + c.name
			}
			b.Run(name, func(b *testing.B) {
				var d Decoder
				var rec dissect.Record
				b.SetBytes(int64(len(c.in)))
				b.ReportAllocs()
				for b.Loop() {
					rec.Reset()
					if _, _, issues, err := d.Decode(&rec, c.m, c.in, build); err != nil || issues != 0 {
						b.Fatalf("%d issues %v %q", issues, err, rec.Warnings)
					}
				}
			})
		}
	}
}
