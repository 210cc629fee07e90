package neptuneenc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// usualLen is the length byte of each known type in its usual shape,
// written out again from the table of docs/neptune.md (abort 1, set_motor
// 4, translate and rotate 3, stabilize and lamp 2) rather than taken from
// WantLength, so that the fuzz target below checks FirstSync against a
// second reading of the rule.
var usualLen = map[byte]byte{0: 1, 1: 4, 2: 3, 3: 3, 4: 2, 5: 2}

// refChain reports whether three messages of their usual shape start at
// b[0] and lie wholly in b.
func refChain(b []byte) bool {
	p := 0
	for range 3 {
		if p+1 >= len(b) {
			return false
		}
		if l, ok := usualLen[b[p+1]]; !ok || b[p] != l || p+1+int(l) > len(b) {
			return false
		}
		p += 1 + int(b[p])
	}
	return true
}

// FuzzApplyGap cuts a gap into a pilot session and checks ApplyGap's
// answer against the gap rule: the records tile the stream with one gap at
// [from,to) and no two skipped runs side by side; every message that ends
// by from is kept as it was; after the gap the first message starts three
// usual-shaped messages of the session, with a length of 1 or more, and no
// offset between the gap and it starts such a run; every message after it
// is kept as it was.
func FuzzApplyGap(f *testing.F) {
	f.Add(uint64(2), uint64(221), uint8(1))
	f.Add(uint64(0), uint64(40), uint8(0))
	f.Add(uint64(7), uint64(3<<32|95), uint8(1))
	f.Fuzz(func(t *testing.T, seed, cut uint64, mode uint8) {
		s := NewPilotSession(Options{Seed: seed, Ticks: 20 + int(seed%20), Broken: mode&1 != 0})
		n := int64(len(s.Stream))
		from := 1 + int64(cut%uint64(n-2))
		to := min(n-1, from+1+int64(cut>>32%60))
		g, err := ApplyGap(s.Stream, s.Truth, from, to)
		if err != nil {
			if !errors.Is(err, ErrAmbiguous) && !strings.Contains(err.Error(), "inside a message") {
				t.Fatalf("gap [%d,%d): %v", from, to, err)
			}
			return
		}
		truthAt := map[int64]Message{}
		for _, m := range s.Truth {
			truthAt[m.Offset] = m
		}
		off, gaps, after := int64(0), 0, int64(-1)
		for i, m := range g {
			if m.Offset != off || m.Length <= 0 {
				t.Fatalf("record %d %s: not at %d", i, m.String(), off)
			}
			off = m.End()
			if i > 0 && m.Type == TypeSkipped && g[i-1].Type == TypeSkipped {
				t.Fatalf("record %d: two skipped runs side by side", i)
			}
			switch {
			case m.Type == TypeGap:
				gaps++
				if m.Offset != from || m.End() != to {
					t.Fatalf("gap %s, want [%d,%d)", m.String(), from, to)
				}
				continue
			case m.IsEvent():
				continue
			}
			w, ok := truthAt[m.Offset]
			if !ok || w.Type != m.Type || !bytes.Equal(w.Wire, m.Wire) || w.Length != m.Length {
				t.Fatalf("record %s is not the session's message there", m.String())
			}
			if m.Offset < from && m.End() > from {
				t.Fatalf("record %s runs into the gap", m.String())
			}
			if m.Offset >= to && after < 0 {
				after = m.Offset
			}
		}
		if off != n || gaps != 1 {
			t.Fatalf("records end at %d of %d, %d gaps", off, n, gaps)
		}
		for _, m := range s.Truth {
			if !m.IsEvent() && m.End() <= from {
				found := false
				for _, r := range g {
					if r.Offset == m.Offset && r.Type == m.Type {
						found = true
						break
					}
				}
				if !found {
					t.Fatalf("message %s before the gap is lost", m.String())
				}
			}
		}
		if after < 0 {
			after = n
		}
		if after < n && (s.Stream[after] == 0 || !refChain(s.Stream[after:])) {
			t.Fatalf("decoding resumes at %d, which starts no run of three usual messages", after)
		}
		for j := to; j < after; j++ {
			if refChain(s.Stream[j:]) {
				t.Fatalf("three usual messages start at %d, before the resume point %d", j, after)
			}
		}
		var tail, want []Message
		for _, r := range g {
			if r.Offset >= after {
				tail = append(tail, r)
			}
		}
		for _, m := range s.Truth {
			if m.Offset >= after {
				want = append(want, m)
			}
		}
		if len(tail) != len(want) {
			t.Fatalf("%d records from the resume point %d, the session has %d", len(tail), after, len(want))
		}
		for i := range tail {
			if tail[i].Type != want[i].Type || tail[i].Offset != want[i].Offset || tail[i].Length != want[i].Length {
				t.Fatalf("from the resume point: %s, want %s", tail[i].String(), want[i].String())
			}
		}
	})
}
