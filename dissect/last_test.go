package dissect_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// lastToy is the toy protocol whose Sync, given the last look (Ctx.Last),
// drops a candidate whose message the data cannot hold and goes on past
// it, instead of waiting for bytes that will not come.
type lastToy struct{ toy }

func (*lastToy) NewParser(s *dissect.StreamInfo) dissect.Parser { return lastParser{} }

type lastParser struct{ toyParser }

func (p lastParser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	if !c.Last {
		return p.toyParser.Sync(c, b)
	}
	for i := 0; i < len(b); i++ {
		l := int(b[i])
		if l == 0 || l > toyMax || i+1+l > len(b) {
			continue
		}
		if end := i + 1 + l; end == len(b) || (b[end] > 0 && int(b[end]) <= toyMax) {
			return i, true
		}
	}
	return len(b), false
}

// TestStreamLastLook: a resync candidate that never completes (0x50, a
// message of 80 bytes) is held until the end or a gap; then the parser's
// last look (Ctx.Last) decodes the messages after it, the byte it waited
// on is skipped, and an incomplete message at the very end is skipped
// with its reason. A parser that ignores Last skips all it held, as before.
func TestStreamLastLook(t *testing.T) {
	in := []byte{1, 'a', 0x00, 0x50, 2, 'b', 'c', 1, 'd', 5, 'x'}
	src := "10.0.0.1:5000"
	for _, gap := range []bool{false, true} {
		for _, aware := range []bool{true, false} {
			var p dissect.Protocol = &toy{}
			if aware {
				p = &lastToy{}
			}
			reg, err := dissect.NewRegistry(p)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := reg.ParseDecodeAs("tcp.port==7000,toy")
			reg.AddRule(r)
			col := &collector{}
			s := dissect.NewStream(tcpInfo(7000), reg, col, dissect.StreamOptions{Decode: true})
			t0 := time.Unix(1, 0)
			for i := range in { // one byte at a time: the candidate waits
				s.Data(0, t0, in[i:i+1])
			}
			w := []want{{"msg", 0, 2}, {dissect.TypeSkipped, 2, 2}, {"msg", 4, 3}, {"msg", 7, 2}, {dissect.TypeSkipped, 9, 2}}
			if !aware {
				w = []want{{"msg", 0, 2}, {dissect.TypeSkipped, 2, 9}}
			}
			if gap {
				s.Gap(0, t0, 3)
				w = append(w, want{dissect.TypeGap, 11, 3})
			}
			s.End(0, t0)
			checkRecords(t, col.recs, src, w)
			if aware {
				last := col.recs[4]
				reason, _ := last.Fields.Get("reason")
				wantReason := dissect.ReasonIncomplete
				if gap {
					wantReason = dissect.ReasonBeforeGap
				}
				if !strings.Contains(reason.Str(), wantReason) || !strings.Contains(reason.Str(), "offset 9") {
					t.Errorf("gap %v: last skipped record's reason %q, want %q at offset 9", gap, reason.Str(), wantReason)
				}
			}
		}
	}
}
