package output

import (
	"testing"
	"unsafe"
)

type oldCache [64]struct {
	ptr *byte
	n   int
	enc []byte
}

func (sc *oldCache) lookup(s string, key bool) []byte {
	if len(s) == 0 {
		return nil
	}
	p := unsafe.StringData(s)
	e := &sc[uint64(uintptr(unsafe.Pointer(p)))*0x9E3779B97F4A7C15>>58]
	if e.ptr != p || e.n != len(s) {
		e.ptr, e.n = p, len(s)
		e.enc = appendString(e.enc[:0], s)
		if key {
			e.enc = append(e.enc, ':')
		}
	}
	return e.enc
}

var keysT = []string{"x", "y", "z", "u", "sensor", "pos", "quat", "reason", "id", "rtt_ms"}
var sinkN int

func BenchmarkTmpCache(b *testing.B) {
	b.Run("old", func(b *testing.B) {
		var c oldCache
		for b.Loop() {
			for _, k := range keysT {
				sinkN += len(c.lookup(k, true))
			}
		}
	})
	b.Run("new", func(b *testing.B) {
		j := NewJSON(nil, false)
		for b.Loop() {
			for _, k := range keysT {
				sinkN += len(j.keys.lookup(k, true))
			}
		}
	})
}
