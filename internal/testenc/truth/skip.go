package truth

import "fmt"

// Ops tells [SkipRange] and [MergeSkipped] how to read and make an
// encoder's truth records of type M.
type Ops[M any] struct {
	// Span returns a record's offset and length within its direction.
	Span func(m *M) (offset, length int64)
	// IsSkipped reports whether m is a skipped event.
	IsSkipped func(m *M) bool
	// Grow lengthens a skipped event by n bytes.
	Grow func(m *M, n int64)
	// Skipped makes a skipped event covering [offset, offset+length).
	Skipped func(offset, length int64) M
	// String describes a record for errors.
	String func(m *M) string
}

// SkipRange replaces the records in [from, to) by one skipped record. Both
// ends must be record boundaries (to may be the end of the stream); a
// record cut by either end is an error.
func SkipRange[M any](ops Ops[M], msgs []M, from, to int64) ([]M, error) {
	if to <= from {
		return msgs, nil
	}
	out := make([]M, 0, len(msgs))
	inserted := false
	for i := range msgs {
		off, n := ops.Span(&msgs[i])
		end := off + n
		switch {
		case end <= from || off >= to:
			if off >= to && !inserted {
				out = append(out, ops.Skipped(from, to-from))
				inserted = true
			}
			out = append(out, msgs[i])
		case off < from || end > to:
			return nil, fmt.Errorf("skipped range [%d,%d) cuts the record %s", from, to, ops.String(&msgs[i]))
		}
	}
	if !inserted {
		out = append(out, ops.Skipped(from, to-from))
	}
	return out, nil
}

// MergeSkipped joins adjacent skipped records, returning a new slice.
func MergeSkipped[M any](ops Ops[M], msgs []M) []M {
	out := msgs[:0:0]
	for i := range msgs {
		m := &msgs[i]
		if n := len(out); n > 0 && ops.IsSkipped(m) && ops.IsSkipped(&out[n-1]) {
			lastOff, lastLen := ops.Span(&out[n-1])
			if off, length := ops.Span(m); lastOff+lastLen == off {
				ops.Grow(&out[n-1], length)
				continue
			}
		}
		out = append(out, *m)
	}
	return out
}
