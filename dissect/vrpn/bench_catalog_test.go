package vrpn

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

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
	benchParse(b, head, body, func(i int, r *dissect.Record) bool { return r.Type == samples[i].name })
}
