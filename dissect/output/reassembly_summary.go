package output

import (
	"fmt"
	"io"
	"strings"

	"dissect/dissect"
)

// writeProblems writes the reassembly counters that point at capture
// problems (the summary leaves out zero counters).
func writeProblems(w io.Writer, ps []dissect.Count) {
	if len(ps) == 0 {
		return
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%d %s", p.N, escapeText(p.What, maxSummaryText))
	}
	fmt.Fprintf(w, "capture:  %s\n", strings.Join(parts, "; "))
}

// writeCapture writes where the packets of a live capture or serial tap
// went: nothing is lost without being counted here.
func writeCapture(w io.Writer, c *dissect.CaptureCounts) {
	fmt.Fprintf(w, "live:     %s: %d packets captured", escapeText(c.Source, maxSummaryText), c.Captured)
	if c.HasKernel {
		fmt.Fprintf(w, ", %d passed the filter in the kernel, %d dropped by the kernel", c.PassedFilter, c.KernelDropped)
		if c.KernelDropped > 0 {
			fmt.Fprint(w, " (its buffer was full: raise -B, narrow -f or use -q)")
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "          %d decoded, %d dropped by dissect", c.Captured-c.DissectDropped, c.DissectDropped)
	if c.DissectDropped > 0 {
		fmt.Fprint(w, " (decoding fell behind: their payload bytes are gap records")
		if c.Untraced > 0 {
			fmt.Fprintf(w, "; %d of them known only by later sequence numbers", c.Untraced)
		}
		fmt.Fprint(w, ")")
	}
	if c.WritePath != "" {
		fmt.Fprintf(w, "; %d written to %s", c.Written, escapeText(c.WritePath, maxSummaryText))
	}
	fmt.Fprintln(w)
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
