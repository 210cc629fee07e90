package stats

// DefaultMemory is the sum of the keyed statistics' byte bounds on the
// wire strings they keep (budget.go): rate's keys 16 MiB, rtt's keys
// 4 MiB and its remembered request names 8 MiB.
const DefaultMemory = maxRateBytes + maxRTTKeyBytes + maxRTTNameBytes

// MemoryScaler is a statistic whose bounds on what the wire makes it keep
// can be scaled: [Rate] and [RTT].
type MemoryScaler interface {
	// ScaleMemory multiplies the statistic's byte bounds and key counts by
	// memory / DefaultMemory (each at least 1). Call it before the first
	// record.
	ScaleMemory(memory int64)
}

// scaled is n × memory / DefaultMemory, at least 1.
func scaled(n, memory int64) int64 {
	if memory <= 0 {
		return n
	}
	// In floating point: n × memory may pass an int64 (16 Mi × 1 Ti).
	f := float64(n) * float64(memory) / DefaultMemory
	return int64(max(min(f, 1<<50), 1))
}

// ScaleMemory scales the bounds on the keys: maxRateKeys and maxRateBytes.
func (s *Rate) ScaleMemory(memory int64) {
	s.bytes.max = scaled(maxRateBytes, memory)
	s.maxKeys = int(scaled(maxRateKeys, memory))
}

// ScaleMemory scales the bounds on the keys (maxRTTKeys, maxRTTKeyBytes)
// and on the remembered request names (maxCodeNames, maxRTTNameBytes).
func (s *RTT) ScaleMemory(memory int64) {
	s.keyBytes.max = scaled(maxRTTKeyBytes, memory)
	s.maxKeys = int(scaled(maxRTTKeys, memory))
	s.nameBytes.max = scaled(maxRTTNameBytes, memory)
	s.maxNames = int(scaled(maxCodeNames, memory))
}
