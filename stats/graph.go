package stats

import (
	"strings"
	"time"
)

// Pictures in the table: io,stat draws a bar per interval (its messages
// against the busiest interval's), rate a sparkline per row (its messages
// over the run, in sparkBuckets slices of time). Both are drawn only when
// TableOptions.Graph asks (a terminal, or --graph).

// barWidth is the width of io,stat's bar column, in columns.
const barWidth = 20

// bar draws v of most in w columns: eighths of a block, or '#' per
// column with ascii. A v above zero always shows (at least an eighth, or
// one '#'), so a quiet interval is told from an empty one.
func bar(v, most int64, w int, ascii bool) string {
	if v <= 0 || most <= 0 {
		return ""
	}
	if ascii {
		n := max(int(v*int64(w)/most), 1)
		return strings.Repeat("#", n)
	}
	eighths := max(int(v*int64(w)*8/most), 1)
	return strings.Repeat("█", eighths/8) + glyph(partBlocks, eighths%8)
}

// partBlocks are the blocks of 1 to 7 eighths, after a space for none;
// sparkBlocks those of a sparkline, the least first; each glyph is 3 bytes.
const (
	partBlocks  = "   ▏▎▍▌▋▊▉"
	sparkBlocks = "▁▂▃▄▅▆▇█"
	sparkASCII  = ".-=#"
)

// glyph returns the i-th 3-byte glyph of set ("   " for a space is cut
// to nothing).
func glyph(set string, i int) string {
	if i == 0 && set == partBlocks {
		return ""
	}
	return set[3*i : 3*i+3]
}

// sparkBuckets is the number of slices of time rate's sparkline has.
const sparkBuckets = 16

// spark draws counts scaled to their own maximum, one glyph a slice
// from the least to the most messages; a slice with none is a space, so
// that a stall shows as a hole.
func spark(counts []uint32, ascii bool) string {
	levels, size := sparkBlocks, 3
	if ascii {
		levels, size = sparkASCII, 1
	}
	n := uint64(len(levels) / size)
	var most uint32
	for _, c := range counts {
		most = max(most, c)
	}
	var b strings.Builder
	for _, c := range counts {
		if c == 0 || most == 0 {
			b.WriteByte(' ')
			continue
		}
		i := int((uint64(c)*n - 1) / uint64(most))
		b.WriteString(levels[i*size : i*size+size])
	}
	return b.String()
}

// timeSlices counts events per slice of a span that grows with the run:
// sparkBuckets slices of width w from the first event; an event past the
// last slice doubles w (adjacent slices merged in every row), so the
// slices always cover the run so far with at least half of them used.
type timeSlices struct {
	first time.Time
	w     time.Duration // 0 until the first event
	used  int           // slices up to the last event's
}

// minSlice is the first slice width: finer than any capture's clock.
const minSlice = time.Microsecond

// slot returns the slice of t; grow is called with each doubling, before
// it returns, to merge the rows' counts.
func (s *timeSlices) slot(t time.Time, grow func()) int {
	if s.w == 0 {
		s.first, s.w = t, minSlice
	}
	d := t.Sub(s.first)
	if d < 0 {
		return 0 // a time going back (another stream's reorder): the first slice
	}
	for d >= s.w*sparkBuckets && s.w < time.Duration(1)<<56 {
		s.w *= 2
		s.used = (s.used + 1) / 2
		grow()
	}
	i := min(int(d/s.w), sparkBuckets-1)
	s.used = max(s.used, i+1)
	return i
}

// mergeSlices halves the resolution of c: slice i becomes slices 2i and
// 2i+1.
func mergeSlices(c *[sparkBuckets]uint32) {
	for i := range sparkBuckets / 2 {
		c[i] = c[2*i] + c[2*i+1]
	}
	clear(c[sparkBuckets/2:])
}
