package output

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"

	"dissect/dissect"
)

// WriteSummary writes the end-of-run summary for humans (on stderr): what
// was read, how many messages of each protocol and type were decoded, and
// every byte that was not (gaps, skipped), with sample warnings.
func WriteSummary(w io.Writer, s *dissect.Summary) {
	elapsed := s.Elapsed
	fmt.Fprintf(w, "\n== dissect summary ==\n")
	span := ""
	if s.Packets > 0 {
		span = fmt.Sprintf(", %s of capture", s.Last.Sub(s.First).Round(time.Microsecond))
	}
	rate := ""
	if sec := elapsed.Seconds(); sec > 0.05 {
		rate = fmt.Sprintf(" (%s/s)", humanBytes(float64(s.Bytes)/sec))
	}
	fmt.Fprintf(w, "packets:  %d, %s%s, read in %s%s\n", s.Packets, humanBytes(float64(s.Bytes)), span, elapsed.Round(time.Millisecond), rate)
	fmt.Fprintf(w, "streams:  %s\n", streamCounts(s.Streams))
	fmt.Fprintf(w, "messages: %d\n", s.MessageCount())
	if len(s.Messages) > 0 {
		rows := append([]dissect.TypeCount(nil), s.Messages...)
		sort.SliceStable(rows, func(i, j int) bool {
			if rows[i].Proto != rows[j].Proto {
				return rows[i].Proto < rows[j].Proto
			}
			return rows[i].Type < rows[j].Type
		})
		t := tablewriter.NewWriter(w)
		t.Header("Protocol", "Type", "Messages")
		for _, r := range rows {
			_ = t.Append(r.Proto, r.Type, strconv.FormatInt(r.Count, 10))
		}
		_ = t.Render()
	}
	what := "never captured"
	if s.Capture != nil && s.Capture.DissectDropped > 0 {
		what = "never captured, or dropped by dissect (see live: below)"
	}
	fmt.Fprintf(w, "gaps:     %d (%d bytes %s)\n", s.Gaps, s.GapBytes, what)
	fmt.Fprintf(w, "skipped:  %d records (%d bytes not decoded)\n", s.Skipped, s.SkippedBytes)
	fmt.Fprintf(w, "warnings: %d records\n", s.Warned)
	for _, m := range s.Warnings {
		fmt.Fprintf(w, "  - %s\n", string(appendText(nil, m)))
	}
	if int64(len(s.Warnings)) < s.Warned {
		fmt.Fprintf(w, "  (the first %d distinct warnings are shown; every one is in the output)\n", len(s.Warnings))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", string(appendText(nil, n)))
	}
	writeProblems(w, s.Problems)
	if s.Capture != nil {
		writeCapture(w, s.Capture)
	}
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
