package stats

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Bounds of io,stat.
const (
	// maxIntervals bounds the intervals kept: past it, the interval is
	// doubled (neighbours merged) until the capture fits.
	maxIntervals = 1 << 18
	// maxProtoCols bounds the protocol columns; more protocols are added
	// up under "(other)".
	maxProtoCols = 16
	// maxEmptyRun is the longest run of empty intervals written as rows
	// of their own; a longer run is one row, which says how many
	// intervals it spans. The rows then number at most
	// (maxEmptyRun+1)·(non-empty intervals + 1): two records 136 years
	// apart are 3 rows, not 262,144.
	maxEmptyRun = 10
)

type ioCol struct {
	name          string
	msgs, bytes   []int64 // per interval; shorter than the intervals: zeros
	totMsgs, totB int64
}

func (c *ioCol) add(i int, n, b int64) {
	if i >= len(c.msgs) {
		c.msgs = grow(c.msgs, i+1)
		c.bytes = grow(c.bytes, i+1)
	}
	c.msgs[i] += n
	c.bytes[i] += b
	c.totMsgs += n
	c.totB += b
}

func grow(s []int64, n int) []int64 {
	if n <= cap(s) {
		return s[:n]
	}
	t := make([]int64, n, max(n, 2*cap(s)))
	copy(t, s)
	return t
}

// merge halves the slice: interval i gets the sum of 2i and 2i+1.
func mergePairs(s []int64) []int64 {
	n := (len(s) + 1) / 2
	for i := range n {
		v := s[2*i]
		if 2*i+1 < len(s) {
			v += s[2*i+1]
		}
		s[i] = v
	}
	clear(s[n:])
	return s[:n]
}

func (c *ioCol) at(i int) (int64, int64) {
	if i < len(c.msgs) {
		return c.msgs[i], c.bytes[i]
	}
	return 0, 0
}

// IOStat is -z io,stat: messages and bytes per interval, per protocol.
type IOStat struct {
	interval   int64 // ns, as asked
	cur        int64 // ns, after merges
	filterText string
	filter     func(*dissect.Record) bool
	first      time.Time
	started    bool
	n          int // intervals seen
	protos     []*ioCol
	other      *ioCol
	byName     map[string]*ioCol
	gap, skip  ioCol // bytes in gap and skipped records
	matched    ioCol // messages matching the filter
	maxIv      int
	buf        []byte
}

// NewIOStat returns io,stat with an interval in nanoseconds and an
// optional filter (its text for the column's name).
func NewIOStat(interval int64, filterText string, filter func(*dissect.Record) bool) *IOStat {
	return &IOStat{interval: interval, cur: interval, filterText: filterText, filter: filter,
		byName: map[string]*ioCol{}, maxIv: maxIntervals}
}

// Name returns "io,stat".
func (s *IOStat) Name() string { return "io,stat" }

func (s *IOStat) col(proto string) *ioCol {
	if c := s.byName[proto]; c != nil {
		return c
	}
	if len(s.protos) >= maxProtoCols {
		if s.other == nil {
			s.other = &ioCol{name: "(other)"}
		}
		return s.other
	}
	c := &ioCol{name: strings.Clone(proto)}
	s.byName[c.name] = c
	s.protos = append(s.protos, c)
	return c
}

// Record counts r in its interval.
func (s *IOStat) Record(r *dissect.Record) {
	if !s.started {
		s.first, s.started = r.Time, true
	}
	d := r.Time.Sub(s.first)
	idx := 0
	if d > 0 {
		for int64(d)/s.cur >= int64(s.maxIv) {
			s.merge()
		}
		idx = int(int64(d) / s.cur)
	}
	s.n = max(s.n, idx+1)
	switch r.Type {
	case dissect.TypeGap:
		s.gap.add(idx, 1, r.Length)
		return
	case dissect.TypeSkipped:
		s.skip.add(idx, 1, r.Length)
		return
	}
	s.col(r.Proto).add(idx, 1, r.Length)
	if s.filter != nil && s.filter(r) {
		s.matched.add(idx, 1, r.Length)
	}
}

func (s *IOStat) merge() {
	s.cur *= 2
	s.n = (s.n + 1) / 2
	cols := append([]*ioCol{&s.gap, &s.skip, &s.matched}, s.protos...)
	if s.other != nil {
		cols = append(cols, s.other)
	}
	for _, c := range cols {
		c.msgs = mergePairs(c.msgs)
		c.bytes = mergePairs(c.bytes)
	}
}

// empty reports whether interval i counts nothing in any column.
func (s *IOStat) empty(i int) bool {
	zero := func(c *ioCol) bool {
		m, b := c.at(i)
		return m == 0 && b == 0
	}
	if !zero(&s.gap) || !zero(&s.skip) || !zero(&s.matched) || (s.other != nil && !zero(s.other)) {
		return false
	}
	for _, c := range s.protos {
		if !zero(c) {
			return false
		}
	}
	return true
}

// rows calls row for each row of the output: an interval [i, i+1), or a
// run [i, j) of more than maxEmptyRun empty intervals.
func (s *IOStat) rows(row func(i, j int)) {
	for i := 0; i < s.n; {
		j := i
		for j < s.n && s.empty(j) {
			j++
		}
		if j-i > maxEmptyRun {
			row(i, j)
			i = j
			continue
		}
		row(i, i+1)
		i++
	}
}

func (s *IOStat) cols() []*ioCol {
	if s.other != nil {
		return append(append([]*ioCol(nil), s.protos...), s.other)
	}
	return s.protos
}

func fmtSecs(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64)
}

// WriteTable writes one row per interval and a total row.
func (s *IOStat) WriteTable(w io.Writer, o TableOptions) error {
	t := &table{Title: "io,stat: messages and bytes per " + fmtSecs(s.cur) + " s interval, from the first record"}
	t.Cols = append(t.Cols, column{Name: "INTERVAL s"})
	cols := s.cols()
	for _, c := range cols {
		name := text(c.name)
		if name == "" {
			name = "(none)"
		}
		t.Cols = append(t.Cols, column{Name: name + " msgs", Right: true}, column{Name: name + " bytes", Right: true, Drop: 12})
	}
	t.Cols = append(t.Cols, column{Name: "gap bytes", Right: true, Drop: 13}, column{Name: "skipped bytes", Right: true, Drop: 13})
	if s.filter != nil {
		t.Cols = append(t.Cols, column{Name: "filter msgs", Right: true}, column{Name: "filter bytes", Right: true, Drop: 11})
	}
	// The bar: each interval's messages (the filter's, with one) against
	// the busiest interval's.
	barOf := func(i int) int64 {
		if s.filter != nil {
			m, _ := s.matched.at(i)
			return m
		}
		var n int64
		for _, c := range cols {
			m, _ := c.at(i)
			n += m
		}
		return n
	}
	var most int64
	if o.Graph {
		t.Cols = append(t.Cols, column{Name: "MESSAGES", Drop: 9})
		s.rows(func(i, _ int) { most = max(most, barOf(i)) })
	}
	prec := decimals(s.cur)
	runs := 0
	s.rows(func(i, j int) {
		from, to := int64(i)*s.cur, int64(j)*s.cur
		cells := []string{strconv.FormatFloat(float64(from)/1e9, 'f', prec, 64) + "-" + strconv.FormatFloat(float64(to)/1e9, 'f', prec, 64)}
		if j > i+1 {
			cells[0] += " (" + itoa(int64(j-i)) + " empty)"
			runs++
		}
		for _, c := range cols {
			m, b := c.at(i)
			cells = append(cells, itoa(m), itoa(b))
		}
		_, gb := s.gap.at(i)
		_, sb := s.skip.at(i)
		cells = append(cells, itoa(gb), itoa(sb))
		if s.filter != nil {
			m, b := s.matched.at(i)
			cells = append(cells, itoa(m), itoa(b))
		}
		if o.Graph {
			cells = append(cells, bar(barOf(i), most, barWidth, o.ASCII))
		}
		t.Add(cells...)
	})
	cells := []string{"total"}
	for _, c := range cols {
		cells = append(cells, itoa(c.totMsgs), itoa(c.totB))
	}
	cells = append(cells, itoa(s.gap.totB), itoa(s.skip.totB))
	if s.filter != nil {
		cells = append(cells, itoa(s.matched.totMsgs), itoa(s.matched.totB))
	}
	t.Add(cells...)
	if s.filter != nil {
		t.Notes = append(t.Notes, "filter: "+text(s.filterText))
	}
	if runs > 0 {
		t.Notes = append(t.Notes, "a run of more than "+itoa(maxEmptyRun)+" empty intervals is one row (\"(N empty)\")")
	}
	if s.cur != s.interval {
		t.Notes = append(t.Notes, "interval widened from "+fmtSecs(s.interval)+" s to "+fmtSecs(s.cur)+
			" s to keep at most "+itoa(int64(s.maxIv))+" intervals")
	}
	return write(t, w, o)
}

// decimals is the number of decimals that show interval bounds exactly
// (at most 6).
func decimals(ns int64) int {
	d := 0
	for unit := int64(1e9); d < 6 && ns%unit != 0; unit /= 10 {
		d++
	}
	return d
}

// WriteJSON writes one row per interval (a run of more than maxEmptyRun
// empty intervals as one row with "empty_intervals"), then a row with
// "interval":"total".
func (s *IOStat) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	cols := s.cols()
	emit := func(total bool, i, j int) {
		r := newRow(s.buf, "io,stat")
		if total {
			r.str("interval", "total")
		} else {
			r.float("start_s", float64(int64(i)*s.cur)/1e9)
			r.float("end_s", float64(int64(j)*s.cur)/1e9)
			if j > i+1 {
				r.int("empty_intervals", int64(j-i))
			}
		}
		r.key("protocols")
		r.b = append(r.b, '{')
		for j, c := range cols {
			if j > 0 {
				r.b = append(r.b, ',')
			}
			m, b := c.at(i)
			if total {
				m, b = c.totMsgs, c.totB
			}
			r.b = appendJSONString(r.b, c.name)
			r.b = append(r.b, `:{"messages":`...)
			r.b = strconv.AppendInt(r.b, m, 10)
			r.b = append(r.b, `,"bytes":`...)
			r.b = strconv.AppendInt(r.b, b, 10)
			r.b = append(r.b, '}')
		}
		r.b = append(r.b, '}')
		gm, gb := s.gap.at(i)
		sm, sb := s.skip.at(i)
		fm, fb := s.matched.at(i)
		if total {
			gm, gb, sm, sb, fm, fb = s.gap.totMsgs, s.gap.totB, s.skip.totMsgs, s.skip.totB, s.matched.totMsgs, s.matched.totB
		}
		r.int("gaps", gm)
		r.int("gap_bytes", gb)
		r.int("skipped", sm)
		r.int("skipped_bytes", sb)
		if s.filter != nil {
			r.str("filter", s.filterText)
			r.int("filter_messages", fm)
			r.int("filter_bytes", fb)
		}
		r.float("interval_s", float64(s.cur)/1e9)
		r.end(bw)
		s.buf = r.b
	}
	s.rows(func(i, j int) { emit(false, i, j) })
	emit(true, 0, 0)
	return bw.Flush()
}
