package output

import (
	"fmt"
	"io"

	"github.com/dissect-tools/dissect/dissect"
)

// writeProblems writes the reassembly counters that point at capture
// problems (the summary leaves out zero counters).
func writeProblems(w io.Writer, ps []dissect.Count) {
	if len(ps) == 0 {
		return
	}
	label := "capture:  "
	for _, p := range ps {
		fmt.Fprintf(w, "%s%d %s\n", label, p.N, escapeText(p.What, maxSummaryText))
		label = "          "
	}
}

// writeCapture writes where the packets of a live capture or serial tap
// went: nothing is lost without being counted here.
func writeCapture(w io.Writer, c *dissect.CaptureCounts) {
	// One fact per line, so the lines fit an 80-column terminal.
	fmt.Fprintf(w, "live:     %s: %d packets captured\n", escapeText(c.Source, maxSummaryText), c.Captured)
	if c.HasKernel {
		fmt.Fprintf(w, "          %d passed the filter in the kernel, %d dropped by the kernel\n", c.PassedFilter, c.KernelDropped)
		if c.KernelDropped > 0 {
			fmt.Fprintln(w, "          (its buffer was full: raise -B, narrow -f or use -q)")
		}
	}
	fmt.Fprintf(w, "          %d decoded, %d dropped by dissect\n", c.Captured-c.DissectDropped, c.DissectDropped)
	if c.DissectDropped > 0 {
		fmt.Fprintln(w, "          (decoding fell behind: their payload bytes are gap records)")
		if c.Untraced > 0 {
			fmt.Fprintf(w, "          (%d of them known only by later sequence numbers)\n", c.Untraced)
		}
	}
	switch n := len(c.WriteFiles); {
	case n > 1:
		fmt.Fprintf(w, "          %d written to %d files, %s to %s\n", c.Written, n,
			escapeText(c.WriteFiles[0], maxSummaryText), escapeText(c.WritePath, maxSummaryText))
	case c.WritePath != "":
		fmt.Fprintf(w, "          %d written to %s\n", c.Written, escapeText(c.WritePath, maxSummaryText))
	}
	if c.WriteDeleted > 0 {
		fmt.Fprintf(w, "          (%d older files deleted: -b files:N keeps the newest)\n", c.WriteDeleted)
	}
	if c.HasKernel {
		if unread := int64(c.PassedFilter) - int64(c.KernelDropped) - c.Captured; unread > 0 {
			fmt.Fprintf(w, "          %d packets arrived after the stop and were not read\n", unread)
		}
	}
	if c.SerialDroppedBytes > 0 {
		fmt.Fprintf(w, "          %d bytes read from the ports could not be queued (gap records)\n", c.SerialDroppedBytes)
	}
	if c.Stopped != "" {
		fmt.Fprintf(w, "          stopped: %s\n", escapeText(c.Stopped, maxSummaryText))
	}
}
