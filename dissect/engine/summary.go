package engine

import (
	"time"

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
	last     int
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
	s.last = -1
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

// countType is on the hot path: the type of the previous record is checked
// first (string comparison of the same constant is a pointer check).
func (s *Summary) countType(proto, typ string) {
	if s.last >= 0 {
		c := &s.Messages[s.last]
		if c.Type == typ && c.Proto == proto {
			c.Count++
			return
		}
	}
	k := typeKey{proto, typ}
	i, ok := s.index[k]
	if !ok {
		i = len(s.Messages)
		s.index[k] = i
		s.Messages = append(s.Messages, TypeCount{Proto: proto, Type: typ})
	}
	s.Messages[i].Count++
	s.last = i
}

func (s *Summary) sample(w string) {
	if len(s.Warnings) >= maxSampleWarnings || s.seenWarn[w] {
		return
	}
	s.seenWarn[w] = true
	s.Warnings = append(s.Warnings, w)
}

func (s *Summary) streamDone(ds *dissect.Stream) {
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
