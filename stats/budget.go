package stats

// byteBudget bounds the bytes a statistic keeps for its keys when they hold
// wire strings (type names, senders, request keys): a bound on the number
// of keys alone lets a long name times the count grow to gigabytes (a 4 KB
// string in each of 65,536 keys is 268 MB). Each key is charged its
// strings' lengths plus a fixed cost for its entry.
type byteBudget struct {
	held int64
	max  int64
}

// take charges n bytes; false, charging nothing, when they do not fit.
func (b *byteBudget) take(n int) bool {
	if b.held+int64(n) > b.max {
		return false
	}
	b.held += int64(n)
	return true
}

// Byte bounds of the keyed statistics, with the fixed cost charged per key:
// about the size of the accumulator, its map entry and its place in the
// order slice.
const (
	maxRateBytes = 16 << 20
	rateKeyCost  = 224

	maxRTTKeyBytes  = 4 << 20
	rttKeyCost      = 160
	maxRTTNameBytes = 8 << 20
	rttNameCost     = 64
)
