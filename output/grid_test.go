package output

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
)

// TestSummaryFitsWidth: the summary's type table goes through the one
// fitter: at 80 columns a 93-character type name is cut in its middle
// (its start and its end kept), every line of the box is at most 80
// columns, and the box's walls line up.
func TestSummaryFitsWidth(t *testing.T) {
	long := "vrpn_" + strings.Repeat("x", 80) + "Pos_Quat"
	s := &dissect.Summary{Messages: []dissect.TypeCount{{Proto: "vrpn", Type: long, Count: 7}, {Proto: "vrpn", Type: "cookie", Count: 2}}}
	for _, width := range []int{80, 0} {
		var b strings.Builder
		WriteSummaryWith(&b, s, SummaryOptions{Width: width})
		var box []string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "┌") || strings.HasPrefix(l, "│") || strings.HasPrefix(l, "├") || strings.HasPrefix(l, "└") {
				box = append(box, l)
			}
		}
		if len(box) != 6 {
			t.Fatalf("width %d: box of %d lines:\n%s", width, len(box), b.String())
		}
		n := utf8.RuneCountInString(box[0])
		for _, l := range box {
			if utf8.RuneCountInString(l) != n || width > 0 && n > width {
				t.Errorf("width %d: line of %d columns (the top is %d): %q", width, utf8.RuneCountInString(l), n, l)
			}
		}
		row := box[3]
		switch {
		case width == 0 && !strings.Contains(row, long):
			t.Errorf("unlimited: the name is not whole: %q", row)
		case width > 0 && (!strings.Contains(row, "vrpn_") || !strings.Contains(row, "xPos_Quat") || !strings.Contains(row, "…")):
			t.Errorf("80 columns: the name is not cut in its middle: %q", row)
		}
	}
}
