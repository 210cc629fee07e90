package stats

import "testing"

// ScaleMemory scales every bound by memory / DefaultMemory: twice the
// default doubles them, 1/64 of it divides them by 64, a tiny budget keeps
// at least one of each, and the largest SIZE (1 TiB) does not overflow.
func TestScaleMemory(t *testing.T) {
	r, q := NewRate(nil), NewRTT(nil)
	r.ScaleMemory(2 * DefaultMemory)
	q.ScaleMemory(2 * DefaultMemory)
	if r.bytes.max != 32<<20 || r.maxKeys != 1<<17 || q.keyBytes.max != 8<<20 || q.maxKeys != 8192 || q.nameBytes.max != 16<<20 || q.maxNames != 1<<17 {
		t.Errorf("×2: rate %d bytes %d keys, rtt %d bytes %d keys, names %d bytes %d", r.bytes.max, r.maxKeys, q.keyBytes.max, q.maxKeys, q.nameBytes.max, q.maxNames)
	}
	r.ScaleMemory(DefaultMemory / 64)
	if r.bytes.max != 256<<10 || r.maxKeys != 1024 {
		t.Errorf("/64: rate %d bytes %d keys", r.bytes.max, r.maxKeys)
	}
	q.ScaleMemory(1)
	if q.keyBytes.max != 1 || q.maxKeys != 1 || q.nameBytes.max != 1 || q.maxNames != 1 {
		t.Errorf("1 byte: rtt %d bytes %d keys, names %d bytes %d", q.keyBytes.max, q.maxKeys, q.nameBytes.max, q.maxNames)
	}
	r.ScaleMemory(1 << 40)
	if r.bytes.max <= maxRateBytes || r.maxKeys <= maxRateKeys {
		t.Errorf("1 TiB: rate %d bytes %d keys, want more than the default", r.bytes.max, r.maxKeys)
	}
}
