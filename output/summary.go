package output

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// WriteSummary writes the end-of-run summary for humans (on stderr): what
// was read, how many messages of each protocol and type were decoded, and
// every byte that was not (gaps, skipped), with sample warnings. It is
// [WriteSummaryWith] with the zero [SummaryOptions] (UTF-8).
func WriteSummary(w io.Writer, s *dissect.Summary) {
	WriteSummaryWith(w, s, SummaryOptions{})
}

// SummaryOptions say how a summary is written.
type SummaryOptions struct {
	// ASCII writes the summary in ASCII only, for terminals whose locale
	// is not UTF-8 (LANG=C): the type table is drawn with +, - and |, and
	// every other character that is not ASCII is replaced as in the
	// table ([ASCII]).
	ASCII bool
	// Width fits the type table to that many columns (0: unlimited); a
	// type name is cut in its middle, not below 16 columns.
	Width int
}

// WriteSummaryWith writes the summary of [WriteSummary] as o says.
func WriteSummaryWith(w io.Writer, s *dissect.Summary, o SummaryOptions) {
	if !o.ASCII {
		writeSummary(w, s, false, o.Width)
		return
	}
	var buf bytes.Buffer
	writeSummary(&buf, s, true, o.Width)
	w.Write(appendASCII(nil, buf.Bytes()))
}

func writeSummary(w io.Writer, s *dissect.Summary, ascii bool, width int) {
	elapsed := s.Elapsed
	fmt.Fprintf(w, "\n== dissect summary ==\n")
	span := ""
	if s.Packets > 0 {
		span = fmt.Sprintf(", %s of capture", spanText(s.First, s.Last))
	}
	rate := ""
	if sec := elapsed.Seconds(); sec > 0.05 {
		rate = fmt.Sprintf(" (%s/s)", humanBytes(float64(s.Bytes)/sec))
	}
	fmt.Fprintf(w, "packets:  %d, %s%s, read in %s%s\n", s.Packets, humanBytes(float64(s.Bytes)), span, elapsed.Round(time.Millisecond), rate)
	fmt.Fprintf(w, "streams:  %s\n", streamCounts(s.Streams))
	fmt.Fprintf(w, "messages: %d\n", s.MessageCount())
	if len(s.Messages) > 0 {
		g := &Grid{Cols: []GridColumn{{Name: "PROTOCOL"}, {Name: "TYPE", Middle: true, Min: 16}, {Name: "MESSAGES"}}}
		for _, r := range typeRows(s.Messages) {
			g.Add(r[0], r[1], r[2])
		}
		_ = g.Write(w, GridOptions{Width: width, ASCII: ascii, Boxed: true})
		writeFolded(w, s.Messages)
	}
	what := "never captured"
	if s.Capture != nil && s.Capture.DissectDropped > 0 {
		what = "never captured or dropped by dissect"
	}
	fmt.Fprintf(w, "gaps:     %d (%d bytes %s)\n", s.Gaps, s.GapBytes, what)
	fmt.Fprintf(w, "skipped:  %d records (%d bytes not decoded)\n", s.Skipped, s.SkippedBytes)
	fmt.Fprintf(w, "warnings: %d records\n", s.Warned)
	shown := min(len(s.Warnings), maxSummaryLines)
	for _, m := range s.Warnings[:shown] {
		fmt.Fprintf(w, "  - %s\n", escapeText(m, maxSummaryText))
	}
	if int64(shown) < s.Warned {
		fmt.Fprintf(w, "  (the first %d distinct warnings are shown; every one is in the output)\n", shown)
	}
	shown = min(len(s.Notes), maxSummaryLines)
	for _, n := range s.Notes[:shown] {
		fmt.Fprintf(w, "note: %s\n", escapeText(n, maxSummaryText))
	}
	if more := len(s.Notes) - shown; more > 0 {
		fmt.Fprintf(w, "note: (%d more notes not shown)\n", more)
	}
	writeProblems(w, s.Problems)
	if s.Capture != nil {
		writeCapture(w, s.Capture)
	}
}

// The summary stays short whatever the capture holds: at most
// maxTypesPerProto types per protocol in the type table, maxSummaryLines
// warnings and notes, maxSummaryText bytes of (escaped) text in a line and
// maxSummaryCell in a cell of the type table.
const (
	maxTypesPerProto = 20
	maxSummaryLines  = 20
	maxSummaryText   = 200
	maxSummaryCell   = 100
)

// writeFolded says how many distinct types the type table counted as
// dissect.OtherTypes because it was full (nothing when none).
func writeFolded(w io.Writer, counts []dissect.TypeCount) {
	var n int64
	atLeast := ""
	for _, c := range counts {
		n += c.Folded
		if c.FoldedAtLeast {
			atLeast = "at least "
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "types:    %s%d distinct types past the type table's cap are counted as %q (every record keeps its real type)\n", atLeast, n, dissect.OtherTypes)
	}
}

// typeRows returns the rows of the type table: protocols by name; in each,
// the maxTypesPerProto most frequent types (ties by name), then one row
// "… and K more types" with the messages of the others, then the row of
// the types folded past the cap (dissect.OtherTypes), if any. Text is
// escaped.
func typeRows(counts []dissect.TypeCount) [][3]string {
	rows := append([]dissect.TypeCount(nil), counts...)
	sort.Slice(rows, func(i, j int) bool {
		a, b := &rows[i], &rows[j]
		if a.Proto != b.Proto {
			return a.Proto < b.Proto
		}
		if (a.Folded > 0) != (b.Folded > 0) {
			return b.Folded > 0 // the folded row last
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Type < b.Type
	})
	var out [][3]string
	for i := 0; i < len(rows); {
		proto := rows[i].Proto
		j := i
		for j < len(rows) && rows[j].Proto == proto {
			j++
		}
		p := escapeText(proto, maxSummaryCell)
		var folded []dissect.TypeCount
		if rows[j-1].Folded > 0 {
			folded = rows[j-1 : j]
			j--
		}
		n := min(j-i, maxTypesPerProto)
		for _, r := range rows[i : i+n] {
			out = append(out, [3]string{p, escapeText(r.Type, maxSummaryCell), strconv.FormatInt(r.Count, 10)})
		}
		if rest := rows[i+n : j]; len(rest) > 0 {
			var total int64
			for _, r := range rest {
				total += r.Count
			}
			out = append(out, [3]string{p, fmt.Sprintf("… and %d more types", len(rest)), strconv.FormatInt(total, 10)})
		}
		for _, r := range folded {
			at := ""
			if r.FoldedAtLeast {
				at = "≥ "
			}
			out = append(out, [3]string{p, fmt.Sprintf("%s (%s%d types)", dissect.OtherTypes, at, r.Folded), strconv.FormatInt(r.Count, 10)})
			j++
		}
		i = j
	}
	return out
}

func streamCounts(c dissect.StreamCounts) string {
	var parts []string
	for _, t := range []struct {
		n    int64
		name string
	}{{c.TCP, "tcp"}, {c.UDP, "udp"}, {c.Serial, "serial"}} {
		if t.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", t.n, t.name))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", c.Total(), strings.Join(parts, ", "))
}

func humanBytes(n float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for n >= 1000 && i < len(units)-1 {
		n /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", n, units[i])
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
