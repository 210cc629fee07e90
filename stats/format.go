package stats

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/output"
)

// column is one column of a table.
type column struct {
	name  string
	right bool // numbers: aligned right
	// drop orders the columns dropped when the table is too wide: the
	// highest first; 0 is never dropped. Columns from keyDrop up are
	// dropped before text is cut, the others after.
	drop int
	// whole: text that loses its meaning when cut (endpoints with their
	// ports): cut only when the columns that can be dropped are gone and
	// the table is still too wide.
	whole bool
}

const keyDrop = 10

// table is a plain aligned table: a title line, a header, rows and notes.
type table struct {
	title string
	cols  []column
	rows  [][]string
	notes []string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// width counts terminal columns approximately: one per rune.
func width(s string) int { return utf8.RuneCountInString(s) }

// cut shortens s to n columns, ending in the ellipsis.
func cut(s string, n int, ascii bool) string {
	if width(s) <= n {
		return s
	}
	ell := "…"
	if ascii {
		ell = "..."
	}
	keep := n - width(ell)
	if keep <= 0 {
		return ell[:min(len(ell), max(n, 0))]
	}
	i := 0
	for j := range s {
		if keep == 0 {
			i = j
			break
		}
		keep--
	}
	return s[:i] + ell
}

// write renders the table fitted to o.Width: the secondary columns (drop
// from keyDrop up) are dropped, highest drop first, while the table is too
// wide; then the widest text column not marked whole is cut (not below 8
// columns); then the other droppable columns go; only then are the whole
// columns cut (not below 8).
func (t *table) write(w io.Writer, o TableOptions) error {
	conv := func(s string) string {
		if o.ASCII {
			s = strings.ReplaceAll(s, "≈", "~")
			return output.ASCII(s)
		}
		return s
	}
	bw := bufio.NewWriter(w)
	if t.title != "" {
		title := conv(t.title)
		if o.Width > 0 {
			title = cut(title, o.Width, o.ASCII)
		}
		bw.WriteString(title)
		bw.WriteByte('\n')
	}
	cells := make([][]string, len(t.rows)+1)
	head := make([]string, len(t.cols))
	for i, c := range t.cols {
		head[i] = conv(c.name)
	}
	cells[0] = head
	for i, r := range t.rows {
		row := make([]string, len(t.cols))
		for j := range row {
			if j < len(r) {
				row[j] = conv(r[j])
			}
		}
		cells[i+1] = row
	}
	widths := make([]int, len(t.cols))
	for _, r := range cells {
		for j, c := range r {
			widths[j] = max(widths[j], width(c))
		}
	}
	keep := make([]bool, len(t.cols))
	for i := range keep {
		keep[i] = true
	}
	const sep = 2
	total := func() int {
		n, k := 0, 0
		for i, ok := range keep {
			if ok {
				n += widths[i]
				k++
			}
		}
		return n + sep*max(k-1, 0)
	}
	if o.Width > 0 {
		// Columns with drop >= keyDrop go first, then text is cut, then
		// the key columns (drop below keyDrop) go.
		dropFrom := func(least int) {
			for total() > o.Width {
				best := -1
				for i, c := range t.cols {
					if keep[i] && c.drop >= least && (best < 0 || c.drop > t.cols[best].drop) {
						best = i
					}
				}
				if best < 0 {
					return
				}
				keep[best] = false
			}
		}
		cutText := func(whole bool) {
			for total() > o.Width {
				best := -1
				for i, c := range t.cols {
					if keep[i] && !c.right && c.whole == whole && widths[i] > 8 && (best < 0 || widths[i] > widths[best]) {
						best = i
					}
				}
				if best < 0 {
					return
				}
				widths[best] = max(8, widths[best]-(total()-o.Width))
			}
		}
		dropFrom(keyDrop)
		cutText(false)
		dropFrom(1)
		cutText(true)
		// Dropping goes by rank, not by width: a column dropped to make
		// room that a later drop made anyway comes back, the most
		// important (lowest drop) first.
		for {
			best := -1
			for i, c := range t.cols {
				if !keep[i] && total()+sep+widths[i] <= o.Width && (best < 0 || c.drop < t.cols[best].drop) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			keep[best] = true
		}
	}
	var line []byte
	for _, r := range cells {
		line = line[:0]
		last := -1
		for i := range keep {
			if keep[i] {
				last = i
			}
		}
		first := true
		for i, c := range r {
			if !keep[i] {
				continue
			}
			if !first {
				line = append(line, "  "...)
			}
			first = false
			c = cut(c, widths[i], o.ASCII)
			pad := widths[i] - width(c)
			if t.cols[i].right {
				line = appendSpaces(line, pad)
				line = append(line, c...)
			} else {
				line = append(line, c...)
				if i != last {
					line = appendSpaces(line, pad)
				}
			}
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	for _, n := range t.notes {
		if n = shownClauses(n, t.cols, keep); n == "" {
			continue
		}
		for _, l := range wrap(conv(n), o.Width, o.ASCII) {
			bw.WriteString(l)
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// shownClauses leaves out the clauses of a note ("; " between them) that
// explain a column the fitting dropped: a clause that starts with the
// first word of a dropped column's name, in any case ("WARNED: records
// with warnings", "jitter = ...").
func shownClauses(note string, cols []column, keep []bool) string {
	clauses := strings.Split(note, "; ")
	out := clauses[:0]
	for _, c := range clauses {
		lead, _, _ := strings.Cut(c, " ")
		lead = strings.TrimSuffix(lead, ":")
		dropped := false
		for i, col := range cols {
			name, _, _ := strings.Cut(col.name, " ")
			if !keep[i] && strings.EqualFold(name, lead) {
				dropped = true
				break
			}
		}
		if !dropped {
			out = append(out, c)
		}
	}
	return strings.Join(out, "; ")
}

// wrap breaks s at spaces into lines of at most n columns (0: no limit);
// a word longer than n is cut.
func wrap(s string, n int, ascii bool) []string {
	if n <= 0 || width(s) <= n {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case width(line)+1+width(w) <= n:
			line += " " + w
		default:
			lines = append(lines, cut(line, n, ascii))
			line = w
		}
	}
	return append(lines, cut(line, n, ascii))
}

func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// text escapes wire text for the terminal.
func text(s string) string { return output.Escape(s) }

// Times are measured to the microsecond (capture timestamps): a time in
// milliseconds is written with 3 decimals, one in seconds with 6, in the
// table and in JSON alike, so no digit beyond what was measured is shown.
const (
	msDecimals   = 3
	secsDecimals = 6
)

// ms formats milliseconds for the table: 3 decimals.
func ms(v float64) string {
	if v != v {
		return "-"
	}
	return string(appendFixed(nil, v, msDecimals, false))
}

// secs formats a number of seconds for the table (6 decimals).
func secs(v float64) string { return string(appendFixed(nil, v, secsDecimals, false)) }

// appendFixed appends v rounded to prec decimals; a value that rounds to
// zero is written without a sign. With trim (JSON), trailing zeros are
// dropped but one decimal is kept (1.5, 2.0), so that a typed reader reads
// a float; the literal is the shortest that reads back as the rounded
// value. NaN and the infinities are left to output.AppendFloat.
func appendFixed(b []byte, v float64, prec int, trim bool) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return output.AppendFloat(b, v)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'f', prec, 64)
	if b[start] == '-' && strings.Trim(string(b[start+1:]), "0.") == "" {
		b = append(b[:start], b[start+1:]...)
	}
	if trim && prec > 0 {
		for b[len(b)-1] == '0' && b[len(b)-2] != '.' {
			b = b[:len(b)-1]
		}
	}
	return b
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// row builds one JSON Lines row.
type row struct{ b []byte }

func newRow(b []byte, stat string) row {
	b = append(b[:0], `{"stat":`...)
	b = appendJSONString(b, stat)
	return row{b}
}

func (r *row) key(k string) {
	r.b = append(r.b, ',')
	r.b = appendJSONString(r.b, k)
	r.b = append(r.b, ':')
}

func (r *row) str(k, v string) { r.key(k); r.b = appendJSONString(r.b, v) }
func (r *row) int(k string, v int64) {
	r.key(k)
	r.b = strconv.AppendInt(r.b, v, 10)
}
func (r *row) float(k string, v float64) { r.key(k); r.b = output.AppendFloat(r.b, v) }

// ms writes a time in milliseconds rounded to the microsecond (3
// decimals); secs one in seconds (6 decimals).
func (r *row) ms(k string, v float64)   { r.key(k); r.b = appendFixed(r.b, v, msDecimals, true) }
func (r *row) secs(k string, v float64) { r.key(k); r.b = appendFixed(r.b, v, secsDecimals, true) }
func (r *row) null(k string)            { r.key(k); r.b = append(r.b, "null"...) }
func (r *row) bool(k string, v bool)    { r.key(k); r.b = strconv.AppendBool(r.b, v) }
func (r *row) time(k string, t time.Time) {
	r.key(k)
	r.b = append(r.b, '"')
	r.b = t.UTC().AppendFormat(r.b, "2006-01-02T15:04:05.000000000Z")
	r.b = append(r.b, '"')
}

// raw appends already formatted JSON for key k.
func (r *row) raw(k string, v []byte) { r.key(k); r.b = append(r.b, v...) }

func (r *row) end(w *bufio.Writer) {
	r.b = append(r.b, '}', '\n')
	w.Write(r.b)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string: invalid UTF-8 as U+FFFD,
// controls and hidden characters as \uNNNN.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case output.Hidden(r):
			b = output.AppendJSONEscape(b, r)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
