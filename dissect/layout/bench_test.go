package layout

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// BenchmarkDecodeVector decodes Deltarobot's vector body (four float32,
// protocols.md §4.2): the run of fixed-width fields read with one bounds
// check.
func BenchmarkDecodeVector(b *testing.B) {
	p, err := Compile(&Schema{Endian: LittleEndian, Types: []Type{{Name: "v", Seq: []Field{
		{ID: "x", Type: "f4"}, {ID: "y", Type: "f4"}, {ID: "z", Type: "f4"}, {ID: "u", Type: "f4"},
	}}}}, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0, 0}
	d := p.NewDecoder()
	r := &dissect.Record{}
	b.ReportAllocs()
	for b.Loop() {
		r.Reset()
		if _, err := d.Decode(r, 0, body); err != nil {
			b.Fatal(err)
		}
	}
}
