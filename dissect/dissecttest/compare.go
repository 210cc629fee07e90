package dissecttest

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dissect-tools/dissect/dissect"
)

// This file holds the comparisons of Conformance: two runs of the same
// bytes, and Detect's verdict on a prefix against longer inputs.

// diffRuns returns "" when a and b hold the same records (every key,
// fields and warnings included) and notes, else the first difference.
func diffRuns(a, b *result) string {
	for i := range max(len(a.recs), len(b.recs)) {
		switch {
		case i >= len(a.recs):
			return fmt.Sprintf("record %d is extra: %s", i, DescribeRecord(b.recs[i]))
		case i >= len(b.recs):
			return fmt.Sprintf("record %d is missing: %s", i, DescribeRecord(a.recs[i]))
		}
		if !sameRecord(a.recs[i], b.recs[i]) {
			return fmt.Sprintf("record %d:\n\t%s\nbecomes\n\t%s", i, describeFull(a.recs[i]), describeFull(b.recs[i]))
		}
	}
	if !slices.Equal(a.notes, b.notes) {
		return fmt.Sprintf("stream notes %q become %q", a.notes, b.notes)
	}
	return ""
}

func sameRecord(x, y *dissect.Record) bool {
	return x.Time.Equal(y.Time) && x.Proto == y.Proto && x.Transport == y.Transport && x.Stream == y.Stream &&
		x.Src == y.Src && x.Dst == y.Dst && x.Offset == y.Offset && x.Length == y.Length && x.Type == y.Type &&
		dissect.Object(x.Fields).Equal(dissect.Object(y.Fields)) && slices.Equal(x.Warnings, y.Warnings) && x.Summary == y.Summary
}

// describeFull renders a record with its source, time and summary too.
func describeFull(r *dissect.Record) string {
	return fmt.Sprintf("%s %s %s %s summary %q", r.Src, r.Time.Format("15:04:05.000"), r.Proto, DescribeRecord(r), r.Summary)
}

// DiffLines returns "" when a and b hold records of the same sources,
// types, places, warnings and (for skipped records) reasons, else the
// first difference: what must not change when the bytes are cut
// differently or decoded without fields.
func DiffLines(a, b []*dissect.Record) string {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) {
			return fmt.Sprintf("%d records, then %d", len(a), len(b))
		}
		x, y := a[i], b[i]
		if x.Src != y.Src || x.Type != y.Type || x.Offset != y.Offset || x.Length != y.Length || !slices.Equal(x.Warnings, y.Warnings) || reason(x) != reason(y) {
			return fmt.Sprintf("record %d: %s %s@%d+%d warnings %q %s, then %s %s@%d+%d warnings %q %s",
				i, x.Src, x.Type, x.Offset, x.Length, x.Warnings, reason(x), y.Src, y.Type, y.Offset, y.Length, y.Warnings, reason(y))
		}
	}
	return ""
}

// reason returns a skipped record's reason, "" for other records.
func reason(r *dissect.Record) string {
	if r.Type != dissect.TypeSkipped {
		return ""
	}
	v, _ := r.Fields.Get("reason")
	return v.Str()
}

// detectTail is the longest run of bytes checkDetect puts after the bound.
const detectTail = 70000

// checkDetect calls Detect, checked by the contract, on the first bytes of
// each direction of every input (each datagram's on UDP), so that no input
// makes it panic. On a byte stream it also checks the bound: the verdict
// on the first DetectBound bytes (padded with random bytes when the
// direction is shorter) stands when random bytes, zeros or a copy of the
// prefix follow them.
func (c *checker) checkDetect(tr dissect.Transport, inputs []Input, rng *rand.Rand) {
	info := c.streamInfo(tr)
	buf := make([]byte, c.bound+detectTail)
	noise := make([]byte, 2*len(buf)) // random bytes, made once: tails are copied from it
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	for _, in := range inputs {
		if c.stopped() {
			return
		}
		where := fmt.Sprintf("%s input %q, Detect", tr, in.Name)
		c.try(where, func() {
			p := newChecked(c.s.New(), c.info, func(format string, args ...any) {
				c.errorf("%s: %s", where, fmt.Sprintf(format, args...))
				panic(abortRun{})
			}, false)
			for d := dissect.Dir(0); d < 2; d++ {
				if tr == dissect.UDP {
					for _, u := range in.Units {
						if u.Dir == d && len(u.Data) > 0 {
							p.Detect(&info, d, u.Data)
						}
					}
					continue
				}
				pre := firstBytes(in.Units, d, c.bound)
				if len(pre) == 0 {
					continue
				}
				for n := 1; n <= len(pre) && n <= 32; n++ {
					p.Detect(&info, d, pre[:n])
				}
				n := copy(buf, pre)
				copy(buf[n:c.bound], noise[rng.IntN(len(buf)):])
				v := p.Detect(&info, d, buf[:c.bound])
				for k, fill := range []func([]byte){
					func(b []byte) { b[0] = byte(rng.Uint32()) },
					func(b []byte) { clear(b) },
					func(b []byte) { copy(b, noise[rng.IntN(len(buf)):]) },
					func(b []byte) {
						for i := 0; i < len(b); i += c.bound {
							copy(b[i:], buf[:c.bound])
						}
					},
				} {
					size := [...]int{1, detectTail, detectTail, detectTail}[k]
					fill(buf[c.bound : c.bound+size])
					if w := p.Detect(&info, d, buf[:c.bound+size]); w != v {
						c.errorf("%s: dir %d: the verdict on the first %d bytes is %s, on %d bytes (tail %d) %s: Detect must look at a bounded prefix (Suite.DetectBound)",
							where, d, c.bound, verdict(v), c.bound+size, k, verdict(w))
						return
					}
				}
			}
		})
	}
}

// firstBytes returns up to n of the first bytes of direction d, up to its
// first gap.
func firstBytes(units []Unit, d dissect.Dir, n int) []byte {
	var out []byte
	for _, u := range units {
		if u.Dir != d {
			continue
		}
		if u.Gap > 0 || len(out) >= n {
			break
		}
		out = append(out, u.Data...)
	}
	return out[:min(len(out), n)]
}

func verdict(v dissect.Verdict) string {
	switch v {
	case dissect.No:
		return "No"
	case dissect.Maybe:
		return "Maybe"
	case dissect.Yes:
		return "Yes"
	}
	return fmt.Sprintf("verdict %d", v)
}
