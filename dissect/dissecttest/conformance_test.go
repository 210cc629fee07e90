package dissecttest

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// toy is a small protocol for testing Conformance: a message is a length
// byte L (1-16) and L bytes; its type is "even" or "odd" after its first
// byte. A direction starting with 0xAA is the protocol. Each fault makes
// it break one rule the harness checks.
type toy struct{ fault string }

const toyDetect = "a direction starting with 0xaa"

func (p toy) Info() dissect.Info {
	msg := []dissect.FieldDecl{{Name: "first", Kind: dissect.KindUint, Required: true}}
	in := dissect.Info{Name: "toy", Proto: "toy", Transports: []dissect.Transport{dissect.TCP, dissect.UDP}, Detection: toyDetect,
		Types: []dissect.TypeDecl{{Type: "even", Fields: msg}, {Type: "odd", Fields: msg}}}
	switch p.fault {
	case "declares more":
		in.Types = append(in.Types, dissect.TypeDecl{Type: "never"})
	case "no detection":
		in.Detection = ""
	}
	return in
}

func (p toy) Detect(_ *dissect.StreamInfo, _ dissect.Dir, b []byte) dissect.Verdict {
	if p.fault == "unbounded detect" && len(b) > 5000 {
		return dissect.Maybe
	}
	if b[0] == 0xaa {
		return dissect.Yes
	}
	return dissect.No
}

func (p toy) NewParser(*dissect.StreamInfo) dissect.Parser { return &toyParser{fault: p.fault} }

type toyParser struct {
	fault string
	kept  []byte
	n     int
}

func (p *toyParser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	l := int(b[0])
	if l == 0 || l > 16 {
		off := 0
		if p.fault == "error offset" {
			off = len(b)
		}
		return 0, dissect.Malformed("toy", "bad_length", off, "length %d", l)
	}
	if len(b) < 1+l {
		return 1 + l, dissect.ErrNeedMore
	}
	p.n++
	if p.fault == "panics" && p.n == 3 {
		var m map[string]int
		m["x"]++
	}
	c.Rec.Type = "even"
	if b[1]&1 != 0 {
		c.Rec.Type = "odd"
	}
	if p.fault == "undeclared" && b[1] == 7 {
		c.Rec.Type = "seven"
	}
	if c.Decode {
		first := uint64(b[1])
		if p.fault == "keeps input" && p.kept != nil {
			first = uint64(p.kept[0])
		}
		c.Rec.Add("first", dissect.Uint(first))
	}
	if p.fault == "warns at buffer end" && len(b) == 1+l {
		c.Rec.Warn("the message ends the buffer")
	}
	if p.fault == "warns when decoding" && c.Decode {
		c.Rec.Warn("decoded")
	}
	p.kept = b
	if p.fault == "long n" {
		return len(b) + 1, nil
	}
	return 1 + l, nil
}

func (p *toyParser) Sync(_ *dissect.Ctx, b []byte) (int, bool) {
	for i, x := range b {
		if x >= 1 && x <= 16 {
			return i, true
		}
	}
	if p.fault == "sync past the end" {
		return len(b) + 1, false
	}
	return len(b), false
}

// toyValid is a conversation of even and odd messages.
func toyValid() []Input {
	return []Input{{Name: "two ways", Units: []Unit{
		{Dir: 0, Data: Hex("aa 02 03 04 01 05")},
		{Dir: 1, Data: Hex("01 02 03 04 05 06 01 07")},
		{Dir: 0, Data: Hex("02 0a 0b 02 0c 0d")},
	}}}
}

// collectTB is a testing.TB that keeps every failure message.
type collectTB struct {
	testing.TB
	msgs []string
}

func (c *collectTB) Helper()             {}
func (c *collectTB) Logf(string, ...any) {}
func (c *collectTB) Errorf(format string, args ...any) {
	c.msgs = append(c.msgs, fmt.Sprintf(format, args...))
}
func (c *collectTB) Fatalf(format string, args ...any) {
	c.Errorf(format, args...)
	runtime.Goexit()
}
func (c *collectTB) Fatal(args ...any) { c.Fatalf("%s", fmt.Sprint(args...)) }

// conform runs Conformance on its own goroutine and returns the failures.
func conform(t *testing.T, s Suite) []string {
	c := &collectTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Conformance(c, s)
	}()
	<-done
	return c.msgs
}

func TestConformanceToy(t *testing.T) {
	if msgs := conform(t, Suite{New: func() dissect.Protocol { return toy{} }, Valid: toyValid(), Random: 16, Mutated: 32}); len(msgs) > 0 {
		t.Fatalf("a conforming protocol fails:\n%s", strings.Join(msgs, "\n"))
	}
	for _, c := range []struct {
		fault       string
		notProduced map[string]string
		want        string // a substring of one failure
	}{
		{"long n", nil, "want 0 < n <= "},
		{"error offset", nil, "an offset within the"},
		{"sync past the end", nil, "Sync("},
		{"panics", nil, "panicked: assignment to entry in nil map"},
		{"keeps input", nil, "Parse or Sync keeps its input"},
		{"undeclared", nil, "no declaration matches this record"},
		{"declares more", nil, `declared type "never" is never produced`},
		{"", map[string]string{"odd": "not made"}, `"odd" is listed in Suite.NotProduced`},
		{"", map[string]string{"nothing": "x"}, `lists "nothing", which the protocol does not declare`},
		{"declares more", map[string]string{"never": " "}, "without a reason"},
		{"no detection", nil, "Info.Detection is empty"},
		{"unbounded detect", nil, "Detect must look at a bounded prefix"},
		{"warns when decoding", nil, "with Decode false the records differ"},
		{"warns at buffer end", nil, "the records differ from those of the same bytes given in the input's units"},
	} {
		s := Suite{New: func() dissect.Protocol { return toy{c.fault} }, Valid: toyValid(), NotProduced: c.notProduced, Random: 16, Mutated: 32}
		msgs := conform(t, s)
		found := false
		for _, m := range msgs {
			found = found || strings.Contains(m, c.want)
		}
		if !found {
			t.Errorf("fault %q %v: no failure says %q; failures:\n%s", c.fault, c.notProduced, c.want, strings.Join(msgs, "\n"))
		}
	}
}

// TestPlans checks the deliveries: every plan gives the input's bytes in
// order per direction (a gap standing for the bytes it replaces), and the
// chunks of a unit mark only its last piece.
func TestPlans(t *testing.T) {
	in := toyValid()[0]
	want := [2]string{}
	for _, u := range in.Units {
		want[u.Dir] += string(u.Data)
	}
	for _, d := range deliveries(dissect.TCP) {
		for seed := range uint64(20) {
			p := d.plan(in.Units, newRand(seed))
			var got [2]string
			for _, s := range p.steps {
				if s.Gap > 0 {
					got[s.Dir] += strings.Repeat("?", int(s.Gap))
					continue
				}
				got[s.Dir] += string(s.Data)
			}
			for dir := range 2 {
				if len(got[dir]) != len(want[dir]) {
					t.Fatalf("%s seed %d dir %d: %x, want %x", d.name, seed, dir, got[dir], want[dir])
				}
				for i := range got[dir] {
					if got[dir][i] != '?' && got[dir][i] != want[dir][i] || got[dir][i] == '?' && d.name != withGap {
						t.Fatalf("%s seed %d dir %d: %x, want %x", d.name, seed, dir, got[dir], want[dir])
					}
				}
			}
			if n := p.size(); n[0] != int64(len(want[0])) || n[1] != int64(len(want[1])) {
				t.Fatalf("%s: size %v", d.name, n)
			}
		}
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

// TestSpans: one unit per piece, in the pieces' order, each the bytes of
// its direction that its span names.
func TestSpans(t *testing.T) {
	type piece struct {
		dir        int
		start, end int64
	}
	stream := [2][]byte{[]byte("abcdef"), []byte("XYZ")}
	got := Spans(stream, []piece{{0, 0, 2}, {1, 0, 3}, {0, 2, 6}, {0, 6, 6}}, func(p piece) (int, int64, int64) { return p.dir, p.start, p.end })
	want := []Unit{{Dir: 0, Data: []byte("ab")}, {Dir: 1, Data: []byte("XYZ")}, {Dir: 0, Data: []byte("cdef")}, {Dir: 0, Data: []byte{}}}
	if !slices.EqualFunc(got, want, func(a, b Unit) bool { return a.Dir == b.Dir && string(a.Data) == string(b.Data) && a.Gap == b.Gap }) {
		t.Errorf("units %+v, want %+v", got, want)
	}
}
