package pipeline

import (
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/reassembly"
)

// TestProblemsResetsIgnored: resets ignored for being outside the window
// (issue 21) reach the summary, and a zero count is left out.
func TestProblemsResetsIgnored(t *testing.T) {
	got := problems(&reassembly.Stats{TCPResetsIgnored: 3})
	if len(got) != 1 || got[0].N != 3 || !strings.Contains(got[0].What, "resets outside the window") {
		t.Errorf("problems = %+v, want one count of 3 resets outside the window", got)
	}
	if got := problems(&reassembly.Stats{}); len(got) != 0 {
		t.Errorf("problems of zero stats = %+v", got)
	}
}
