package output

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// A Grid is a table measured whole before it is written (statistics, the
// summary's type table, the protocol list), fitted to a width by one rule:
// columns whose cells are all empty go first (they say nothing); then the
// secondary columns (Drop from [KeyDrop] up), highest Drop first; then the
// text column not marked Whole with the most to spare is cut (not below
// its Min); then
// the other droppable columns; only then are the Whole columns cut. Every
// column it leaves out is named in a note below the table. The records' table ([Table]) streams and cannot measure
// its rows first; both measure text with [DisplayWidth].
type Grid struct {
	Title string
	Cols  []GridColumn
	Rows  [][]string
	// Notes are written under the table, wrapped to the width. A note's
	// clauses ("; " between them) that explain a column the fitting left
	// out are left out with it: a clause that starts with the first word
	// of that column's name, in any case ("WARNED: …", "jitter = …").
	Notes []string
}

// GridColumn is one column of a [Grid].
type GridColumn struct {
	Name  string
	Right bool // numbers: aligned right
	// Drop orders the columns left out when the table is too wide: the
	// highest first; 0 is never left out. Columns from KeyDrop up go
	// before text is cut, the others after.
	Drop int
	// Whole: text that loses its meaning when cut (endpoints with their
	// ports): cut only when the columns that can go are gone and the
	// table is still too wide.
	Whole bool
	// Middle cuts the text's middle, not its end: names whose end tells
	// them apart ("vrpn_Tracker Pos_Quat", "vrpn_Tracker Velocity").
	Middle bool
	// Min is the least width the text is cut to (0: 8 columns).
	Min int
}

// least returns the width c's text is not cut below.
func (c GridColumn) least() int {
	if c.Min > 0 {
		return c.Min
	}
	return 8
}

// KeyDrop is the least [GridColumn.Drop] of a secondary column.
const KeyDrop = 10

// GridOptions say how a [Grid] is written.
type GridOptions struct {
	// Width to fit in, in columns; 0: unlimited.
	Width int
	// ASCII writes only ASCII ([ASCII]; "~" for "≈").
	ASCII bool
	// Hint follows the list of the columns left out ("--wide shows
	// every column"); no list is written without one.
	Hint string
	// Boxed draws the table in a box, the header centred, a cell's text
	// one space from its walls (the summary's type table); ASCII draws it
	// with + - |.
	Boxed bool
}

// box holds the glyphs of a boxed grid: the walls, then the corners and
// joints of the top, header and bottom lines (each glyph one string).
type box struct {
	h, v                               string
	tl, tm, tr, ml, mm, mr, bl, bm, br string
}

func boxOf(ascii bool) box {
	if ascii {
		return box{"-", "|", "+", "+", "+", "+", "+", "+", "+", "+", "+"}
	}
	return box{"─", "│", "┌", "┬", "┐", "├", "┼", "┤", "└", "┴", "┘"}
}

// Add appends a row.
func (g *Grid) Add(cells ...string) { g.Rows = append(g.Rows, cells) }

const gridSep = 2

// Write writes the grid fitted as [GridOptions] say.
func (g *Grid) Write(w io.Writer, o GridOptions) error {
	conv := func(s string) string {
		if o.ASCII {
			return ASCII(strings.ReplaceAll(s, "≈", "~"))
		}
		return s
	}
	bw := bufio.NewWriter(w)
	if g.Title != "" {
		title := conv(g.Title)
		if o.Width > 0 {
			title = CutWidth(title, o.Width, o.ASCII)
		}
		bw.WriteString(title)
		bw.WriteByte('\n')
	}
	cells := make([][]string, len(g.Rows)+1)
	head := make([]string, len(g.Cols))
	for i, c := range g.Cols {
		head[i] = conv(c.Name)
	}
	cells[0] = head
	empty := make([]bool, len(g.Cols))
	for i := range empty {
		empty[i] = len(g.Rows) > 0
	}
	for i, r := range g.Rows {
		row := make([]string, len(g.Cols))
		for j := range row {
			if j < len(r) {
				row[j] = conv(r[j])
				empty[j] = empty[j] && row[j] == ""
			}
		}
		cells[i+1] = row
	}
	widths := make([]int, len(g.Cols))
	for _, r := range cells {
		for j, c := range r {
			widths[j] = max(widths[j], stringWidth(c))
		}
	}
	sep := gridSep
	if o.Boxed {
		sep = 3 // " │ "
	}
	width := o.Width
	if o.Boxed && width > 0 {
		width = max(width-4, 1) // "│ " and " │"
	}
	keep := g.fit(widths, empty, width, sep)
	if o.Boxed {
		g.writeBoxed(bw, cells, widths, keep, o.ASCII)
	}
	var line []byte
	last := -1
	for i := range keep {
		if keep[i] {
			last = i
		}
	}
	for _, r := range cells {
		if o.Boxed {
			break
		}
		line = line[:0]
		first := true
		for i, c := range r {
			if !keep[i] {
				continue
			}
			if !first {
				line = append(line, "  "...)
			}
			first = false
			c = g.cell(c, i, widths[i], o.ASCII)
			pad := widths[i] - stringWidth(c)
			if g.Cols[i].Right {
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
	notes := g.Notes
	if o.Hint != "" {
		var left []string
		for i, c := range g.Cols {
			if !keep[i] {
				left = append(left, c.Name)
			}
		}
		if len(left) > 0 {
			notes = append(notes[:len(notes):len(notes)], "not shown to fit "+strconv.Itoa(o.Width)+" columns: "+strings.Join(left, ", ")+" ("+o.Hint+")")
		}
	}
	for _, n := range notes {
		if n = shownClauses(n, g.Cols, keep); n == "" {
			continue
		}
		for _, l := range wrapWords(conv(n), o.Width, o.ASCII) {
			bw.WriteString(l)
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// cell returns c cut to w columns as column i says.
func (g *Grid) cell(c string, i, w int, ascii bool) string {
	if g.Cols[i].Middle {
		return cutMiddleWidth(c, w, ascii)
	}
	return CutWidth(c, w, ascii)
}

// writeBoxed writes the header and rows of a boxed grid: the header
// centred between rules, numbers and text both from the left as the
// summary has always shown them.
func (g *Grid) writeBoxed(bw *bufio.Writer, cells [][]string, widths []int, keep []bool, ascii bool) {
	b := boxOf(ascii)
	rule := func(l, m, r string) {
		bw.WriteString(l)
		first := true
		for i, k := range keep {
			if !k {
				continue
			}
			if !first {
				bw.WriteString(m)
			}
			first = false
			bw.WriteString(strings.Repeat(b.h, widths[i]+2))
		}
		bw.WriteString(r)
		bw.WriteByte('\n')
	}
	row := func(r []string, centre bool) {
		for i, k := range keep {
			if !k {
				continue
			}
			c := g.cell(r[i], i, widths[i], ascii)
			pad := widths[i] - stringWidth(c)
			left := 0
			if centre {
				left = pad / 2
			}
			bw.WriteString(b.v)
			bw.WriteString(strings.Repeat(" ", 1+left))
			bw.WriteString(c)
			bw.WriteString(strings.Repeat(" ", 1+pad-left))
		}
		bw.WriteString(b.v)
		bw.WriteByte('\n')
	}
	rule(b.tl, b.tm, b.tr)
	row(cells[0], true)
	rule(b.ml, b.mm, b.mr)
	for _, r := range cells[1:] {
		row(r, false)
	}
	rule(b.bl, b.bm, b.br)
}

// cutMiddleWidth shortens s to at most n columns by replacing its middle
// by an ellipsis: a third of the room for its start, the rest for its end.
func cutMiddleWidth(s string, n int, ascii bool) string {
	if stringWidth(s) <= n {
		return s
	}
	t := Table{ascii: ascii}
	b, _ := t.cutMiddle([]byte(s), 0, n)
	return string(b)
}

// fit returns the columns kept at width (0: all), cutting widths of text
// columns where it must ([Grid]'s rule).
func (g *Grid) fit(widths []int, empty []bool, width, sep int) []bool {
	keep := make([]bool, len(g.Cols))
	for i := range keep {
		keep[i] = true
	}
	if width <= 0 {
		return keep
	}
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
	for i := range keep {
		if empty[i] && total() > width {
			keep[i] = false
		}
	}
	dropFrom := func(least int) {
		for total() > width {
			best := -1
			for i, c := range g.Cols {
				if keep[i] && c.Drop >= least && c.Drop > 0 && (best < 0 || c.Drop > g.Cols[best].Drop) {
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
		for total() > width {
			best := -1
			for i, c := range g.Cols {
				if keep[i] && !c.Right && c.Whole == whole && widths[i] > c.least() && (best < 0 || widths[i]-c.least() > widths[best]-g.Cols[best].least()) {
					best = i
				}
			}
			if best < 0 {
				return
			}
			widths[best] = max(g.Cols[best].least(), widths[best]-(total()-width))
		}
	}
	dropFrom(KeyDrop)
	cutText(false)
	dropFrom(1)
	cutText(true)
	// Dropping goes by rank, not by width: a column dropped to make room
	// that a later drop made anyway comes back, the most important
	// (lowest Drop) first; an empty one never does.
	for {
		best := -1
		for i, c := range g.Cols {
			if !keep[i] && !empty[i] && total()+sep+widths[i] <= width && (best < 0 || c.Drop < g.Cols[best].Drop) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		keep[best] = true
	}
	return keep
}

// shownClauses leaves out the clauses of a note that explain a column
// the fitting left out ([Grid.Notes]).
func shownClauses(note string, cols []GridColumn, keep []bool) string {
	clauses := strings.Split(note, "; ")
	out := clauses[:0]
	for _, c := range clauses {
		lead, _, _ := strings.Cut(c, " ")
		lead = strings.TrimSuffix(lead, ":")
		dropped := false
		for i, col := range cols {
			name, _, _ := strings.Cut(col.Name, " ")
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

// wrapWords breaks s at spaces into lines of at most n columns (0: no
// limit); a word longer than n is cut.
func wrapWords(s string, n int, ascii bool) []string {
	if n <= 0 || stringWidth(s) <= n {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case stringWidth(line)+1+stringWidth(w) <= n:
			line += " " + w
		default:
			lines = append(lines, CutWidth(line, n, ascii))
			line = w
		}
	}
	return append(lines, CutWidth(line, n, ascii))
}
