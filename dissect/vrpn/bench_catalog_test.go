package vrpn

import "testing"

// BenchmarkParseCatalogue measures Parse over one message of every
// catalogued type (catalogueSamples: the test encoders' bodies, 7 of them
// decoded by a hook, the others by the catalogue's layout), with fields
// (decode) and types only (types).
func BenchmarkParseCatalogue(b *testing.B) {
	samples := catalogueSamples()
	head := append([]byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"), encDescription(-1, 0, "Device0", 0)...)
	var body []byte
	for i, s := range samples {
		head = append(head, encDescription(-2, int32(i), s.name, uint32(1+i))...)
		body = append(body, encMsg(1795306101, uint32(i), 0, int32(i), uint32(len(samples)+1+i), s.body)...)
	}
	for _, bc := range benchModes {
		b.Run(bc.name, func(b *testing.B) {
			h := newTCP(b)
			h.feed(b, 0, head, false)
			h.decode = bc.decode
			start := h.off[0]
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				h.off[0] = start
				for i, rest := 0, body; len(rest) > 0; i++ {
					n, err := h.parse(0, rest, false)
					if err != nil || h.rec.Type != samples[i].name {
						b.Fatalf("Parse = %d, %v, type %q", n, err, h.rec.Type)
					}
					rest = rest[n:]
				}
			}
		})
	}
}
