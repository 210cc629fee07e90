package pipeline

import (
	"slices"
	"sort"

	"github.com/dissect-tools/dissect/capture"
)

// pktRef is a packet of the first reading: its index (from 0, in the
// order read) and its fingerprint (fingerprint), which the second
// reading checks before it trusts that packet i is the same packet.
type pktRef struct {
	i  int64
	fp uint64
}

// noPkt is the pktRef of no packet.
var noPkt = pktRef{i: -1}

// fingerprint digests what a second reading of the same file must find
// again in packet i: its time, lengths, link type and interface (a
// packet's bytes are not read twice for it; a file changed in place
// with the same lengths and times is told by its identity, Files).
func fingerprint(i int64, p *capture.Packet) uint64 {
	h := mix64(uint64(i))
	h = mix64(h ^ uint64(p.Time.UnixNano()))
	h = mix64(h ^ uint64(len(p.Data))<<32 ^ uint64(uint32(p.Length)))
	return mix64(h ^ uint64(p.LinkType)<<32 ^ uint64(uint32(p.Interface)))
}

// mix64 is splitmix64's finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// markRun is a run of marked packets [lo, hi) and the sum of their
// fingerprints.
type markRun struct {
	lo, hi int64
	sum    uint64
}

// marks are the packets a Cut marked, as sorted disjoint runs, so that
// they cost memory by runs of marked packets, whatever the number of
// packets read: marks come mostly in order (a record's packets, just
// read), and earlier ones (a stream's handshake, a lead-in) join or
// precede them.
type marks struct {
	runs []markRun
	n    int64 // packets marked
}

// add marks p; false when it was marked already.
func (m *marks) add(p pktRef) bool {
	i := p.i
	k := len(m.runs)
	if k == 0 || m.runs[k-1].hi <= i {
		// The common case: at or after the last run.
		if k > 0 && m.runs[k-1].hi == i {
			r := &m.runs[k-1]
			r.hi++
			r.sum += p.fp
		} else {
			m.runs = append(m.runs, markRun{lo: i, hi: i + 1, sum: p.fp})
		}
		m.n++
		return true
	}
	// k: the first run that ends after i.
	k = sort.Search(len(m.runs), func(j int) bool { return m.runs[j].hi > i })
	if m.runs[k].lo <= i {
		return false
	}
	joinPrev := k > 0 && m.runs[k-1].hi == i
	joinNext := m.runs[k].lo == i+1
	switch {
	case joinPrev && joinNext:
		m.runs[k-1].hi = m.runs[k].hi
		m.runs[k-1].sum += p.fp + m.runs[k].sum
		m.runs = slices.Delete(m.runs, k, k+1)
	case joinPrev:
		m.runs[k-1].hi++
		m.runs[k-1].sum += p.fp
	case joinNext:
		m.runs[k].lo--
		m.runs[k].sum += p.fp
	default:
		m.runs = slices.Insert(m.runs, k, markRun{lo: i, hi: i + 1, sum: p.fp})
	}
	m.n++
	return true
}

// has reports whether packet i is marked.
func (m *marks) has(i int64) bool {
	k := sort.Search(len(m.runs), func(j int) bool { return m.runs[j].hi > i })
	return k < len(m.runs) && m.runs[k].lo <= i
}
