package engine

import (
	"time"
	"unsafe"

	"dissect/dissect"
	"dissect/reassembly"
)

// Summary counts what a run saw and decoded.
type Summary struct {
	Packets int64 // packets read
	Bytes   int64 // captured bytes read
	First   time.Time
	Last    time.Time
	Streams map[dissect.Transport]int

	Messages     []TypeCount // per protocol and type, in order of first appearance
	Gaps         int64       // gap records
	GapBytes     int64
	Skipped      int64 // skipped records
	SkippedBytes int64
	Warned       int64    // records that carry warnings
	Warnings     []string // the first distinct warnings, for the summary
	Notes        []string // stream-level warnings (requests never answered, ...)
	Reassembly   reassembly.Stats

	index    map[typeKey]int
	cache    [32]int32 // direct-mapped: hash of the type string's address → index+1
	seenWarn map[string]bool
}

// TypeCount is the number of messages of one type of one protocol.
type TypeCount struct {
	Proto string
	Type  string
	Count int64
}

type typeKey struct{ proto, typ string }

// maxSampleWarnings bounds the distinct warnings kept for the summary.
const maxSampleWarnings = 20

func (s *Summary) init() {
	s.Streams = map[dissect.Transport]int{}
	s.index = map[typeKey]int{}
	s.seenWarn = map[string]bool{}
}

func (s *Summary) count(r *dissect.Record) {
	switch r.Type {
	case dissect.TypeGap:
		s.Gaps++
		s.GapBytes += r.Length
	case dissect.TypeSkipped:
		s.Skipped++
		s.SkippedBytes += r.Length
	default:
		s.countType(r.Proto, r.Type)
	}
	if len(r.Warnings) > 0 {
		s.Warned++
		for _, w := range r.Warnings {
			s.sample(w)
		}
	}
}

// countType is on the hot path. Protocols name their types with string
// constants, so the address of a type's bytes identifies it almost always: a
// small cache keyed by that address avoids hashing the strings; a hit is
// confirmed by comparing the strings, a miss falls back to the map.
func (s *Summary) countType(proto, typ string) {
	slot := uint64(uintptr(unsafe.Pointer(unsafe.StringData(typ)))) * 0x9E3779B97F4A7C15 >> 59 // top 5 bits: 32 slots
	if i := s.cache[slot] - 1; i >= 0 {
		c := &s.Messages[i]
		if c.Type == typ && c.Proto == proto {
			c.Count++
			return
		}
	}
	s.cache[slot] = int32(s.addType(proto, typ, 1) + 1)
}

// addType adds n messages of a type and returns its index in Messages.
func (s *Summary) addType(proto, typ string, n int64) int {
	k := typeKey{proto, typ}
	i, ok := s.index[k]
	if !ok {
		i = len(s.Messages)
		s.index[k] = i
		s.Messages = append(s.Messages, TypeCount{Proto: proto, Type: typ})
	}
	s.Messages[i].Count += n
	return i
}

func (s *Summary) sample(w string) {
	if len(s.Warnings) >= maxSampleWarnings || s.seenWarn[w] {
		return
	}
	s.seenWarn[w] = true
	s.Warnings = append(s.Warnings, w)
}

func (s *Summary) streamDone(ds *dissect.Stream) {
	proto, counts := ds.Counts()
	for _, c := range counts {
		s.addType(proto, c.Type, c.Count)
	}
	for _, n := range ds.Notes() {
		if len(s.Notes) < 100 {
			s.Notes = append(s.Notes, n)
		}
	}
}

// MessageCount returns the total number of decoded messages.
func (s *Summary) MessageCount() int64 {
	var n int64
	for _, c := range s.Messages {
		n += c.Count
	}
	return n
}
