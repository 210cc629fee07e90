package output

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestSummaryFoldedTypes: the row of the types past the type table's cap
// is shown after the protocol's others, with how many types it holds, and
// a line says how many were folded in all.
func TestSummaryFoldedTypes(t *testing.T) {
	s := &dissect.Summary{}
	for i := range 30 {
		s.Messages = append(s.Messages, dissect.TypeCount{Proto: "vrpn", Type: fmt.Sprintf("t%02d", i), Count: int64(100 + i)})
	}
	// the folded row comes first in Messages and has the largest count:
	// still printed last, never among the top types
	s.Messages = append([]dissect.TypeCount{{Proto: "vrpn", Type: dissect.OtherTypes, Count: 9000, Folded: 3072}}, s.Messages...)
	s.Messages = append(s.Messages, dissect.TypeCount{Proto: "roboid", Type: dissect.OtherTypes, Count: 4, Folded: 2, FoldedAtLeast: true})
	out := summaryText(s)
	for _, want := range []string{
		"│ vrpn     │ … and 10 more types        │ 1045     │\n│ vrpn     │ (other types) (3072 types) │ 9000     │",
		"│ roboid   │ (other types) (≥ 2 types)  │ 4        │",
		"types:    at least 3074 distinct types past the type table's cap are counted as \"(other types)\" (every record keeps its real type)\n",
		fmt.Sprintf("messages: %d\n", 9000+4+30*100+29*30/2),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	s.Messages = s.Messages[1:31]
	if out := summaryText(s); strings.Contains(out, "types:") || strings.Contains(out, dissect.OtherTypes) {
		t.Errorf("nothing folded, yet:\n%s", out)
	}
}
