package output

// layout is where the table's columns are: fixed for a whole run, so
// every row lines up with the header.
type layout struct {
	show  [numCols]bool
	width [numCols]int // columns of each shown column; INFO's is the rest of the line
	start [numCols]int // where each shown column starts
	gap   int          // spaces between columns
}

// timeWidth is the width of the TIME column: a relative time up to
// 999.999999 s (also a delta), a time of day, a date and time, epoch seconds up to 2286.
func timeWidth(f TimeFormat) int {
	switch f {
	case TimeAbsolute, TimeUTC:
		return len("15:04:05.000000")
	case TimeAbsoluteDate, TimeUTCDate:
		return len("2006-01-02 15:04:05.000000")
	case TimeAbsoluteDoy, TimeUTCDoy:
		return len("2006/002 15:04:05.000000")
	case TimeEpoch:
		return len("1700000000.000000")
	}
	return len("999.999999")
}

// The columns' widths. Unlimited (width 0): wideWidths, two spaces
// between columns, and a longer value pushes the rest of its line. Limited:
// each column starts at minWidths; a column is dropped, in dropOrder,
// while the shown ones do not fit; then half of what is left grows TYPE and
// SOURCE → DESTINATION (to their grow steps) and the rest goes to INFO.
var (
	wideWidths = [numCols]int{0, 6, 39, 11, 22, 0} // TIME: timeWidth
	minWidths  = [numCols]int{0, 6, 33, 11, 16, 30}
	dropOrder  = [...]int{colProto, colAddr, colStream, colTime, colType}
	growSteps  = [...]struct{ col, to int }{{colType, 22}, {colAddr, 47}}
)

// newLayout lays out a table limit columns wide (0: unlimited) with
// times in format f.
func newLayout(limit int, f TimeFormat) layout {
	var l layout
	for c := range l.show {
		l.show[c] = true
	}
	if limit == 0 {
		l.gap = 2
		l.width = wideWidths
		l.width[colTime] = timeWidth(f)
		return l.place()
	}
	l.gap = 1
	if limit >= 120 {
		l.gap = 2
	}
	l.width = minWidths
	l.width[colTime] = timeWidth(f)
	for _, c := range dropOrder {
		if l.need() <= limit {
			break
		}
		l.show[c] = false
	}
	if l.need() > limit {
		// Narrower than INFO's least width: INFO alone, cut to the line.
		l.width[colInfo] = limit
		return l.place()
	}
	extra := limit - l.need()
	give := extra / 2
	extra -= give
	for _, g := range growSteps {
		if l.show[g.col] && l.width[g.col] < g.to {
			d := min(give, g.to-l.width[g.col])
			l.width[g.col] += d
			give -= d
		}
	}
	l.width[colInfo] += extra + give
	return l.place()
}

// need returns the width of the shown columns at their present widths.
func (l *layout) need() int {
	n, cols := 0, 0
	for c, ok := range l.show {
		if ok {
			n += l.width[c]
			cols++
		}
	}
	return n + l.gap*(cols-1)
}

// place computes the start of each shown column.
func (l layout) place() layout {
	pos, first := 0, true
	for c, ok := range l.show {
		if !ok {
			continue
		}
		if !first {
			pos += l.gap
		}
		first = false
		l.start[c] = pos
		pos += l.width[c]
	}
	return l
}
