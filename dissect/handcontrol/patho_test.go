package handcontrol

import (
	"bytes"
	"testing"
	"time"

	"dissect/dissect"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestPathological bounds the time of hostile 64 KiB payloads.
func TestPathological(t *testing.T) {
	var distinct []byte
	for i := 0; len(distinct) < 65000; i++ {
		distinct = protowire.AppendTag(distinct, protowire.Number(1+i%300), protowire.VarintType)
		distinct = append(distinct, 1)
	}
	nested := []byte("x")
	for len(nested) < 60000 {
		nested = pbytes(1, cat(nested, nested[:min(len(nested), 100)]))
	}
	groups := cat(bytes.Repeat([]byte{0x0b}, 31), bytes.Repeat([]byte{0x0c}, 31))
	groups = bytes.Repeat(groups, 1000)
	for _, p := range [][]byte{distinct, nested, groups, bytes.Repeat(h("08 01"), 32000), bytes.Repeat(h("12 00"), 32000)} {
		for _, m := range []*msgInfo{nil, emptyMsg} {
			var rec dissect.Record
			d := decoder{rec: &rec, strs: map[string]string{}, build: true, warn: true}
			start := time.Now()
			_, ok, e := d.decode(m, p)
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("%d bytes took %v (ok %v %s)", len(p), el, ok, e)
			}
		}
	}
}
