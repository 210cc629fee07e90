package dissect_test

import (
	"fmt"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// typeNames returns n distinct type names built at run time, each at its
// own address, as a wire-named type is.
func typeNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return out
}

// TestTypeCountsCap: past the cap, new types are counted in one OtherTypes
// row per protocol that says how many distinct types it holds; types seen
// before the cap keep their rows; no message is lost.
func TestTypeCountsCap(t *testing.T) {
	var c dissect.TypeCounts
	c.Add("deltarobot", "ping") // one real row of another protocol
	names := typeNames("t", 3000)
	for round := 0; round < 2; round++ {
		for _, n := range names {
			c.Add("vrpn", n)
		}
		// same contents at another address: no new distinct type
		for _, n := range names[2000:] {
			c.Add("vrpn", string([]byte(n)))
		}
	}
	c.Add("deltarobot", "pong") // a new type of another protocol past the cap
	rows := c.Rows()
	var real int
	var other map[string]dissect.TypeCount = map[string]dissect.TypeCount{}
	for _, r := range rows {
		if r.Folded > 0 {
			if r.Type != dissect.OtherTypes {
				t.Errorf("folded row %+v not named %q", r, dissect.OtherTypes)
			}
			if _, dup := other[r.Proto]; dup {
				t.Errorf("two OtherTypes rows for %s", r.Proto)
			}
			other[r.Proto] = r
			continue
		}
		real++
	}
	if real != dissect.MaxTypeRows {
		t.Errorf("%d real rows, want the cap %d", real, dissect.MaxTypeRows)
	}
	// rows: deltarobot ping, then 1,023 vrpn names; 1,977 vrpn names folded,
	// each counted 2 (+2 for the 1,000 sent again by copy).
	v := other["vrpn"]
	if v.Folded != 1977 || v.FoldedAtLeast {
		t.Errorf("vrpn folded %d (at least %v), want exactly 1977", v.Folded, v.FoldedAtLeast)
	}
	if want := int64(2*977 + 4*1000); v.Count != want {
		t.Errorf("vrpn other types count %d, want %d", v.Count, want)
	}
	if d := other["deltarobot"]; d.Folded != 1 || d.Count != 1 {
		t.Errorf("deltarobot other row %+v, want 1 message of 1 type", d)
	}
	if want := int64(1 + 2*3000 + 2*1000 + 1); c.Total() != want {
		t.Errorf("total %d, want every message: %d", c.Total(), want)
	}
	// A real wire type named like the row is not the row.
	c2 := dissect.TypeCounts{}
	c2.SetLimit(1)
	c2.Add("vrpn", "a")
	c2.Add("vrpn", "b")
	c2.Add("vrpn", dissect.OtherTypes)
	if r := c2.Rows(); len(r) != 2 || r[1].Folded != 2 || r[1].Count != 2 {
		t.Errorf("rows %+v, want a and one other row of 2 types", r)
	}
}

// TestTypeCountsFoldedAllocatesNothing: a folded type is found again by
// its address, like any type.
func TestTypeCountsFoldedAllocatesNothing(t *testing.T) {
	var c dissect.TypeCounts
	c.SetLimit(2)
	names := typeNames("x", 5)
	for _, n := range names {
		c.Add("vrpn", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		c.Add("vrpn", names[0])
		c.Add("vrpn", names[4])
	}); n != 0 {
		t.Errorf("Add allocates %v times per run past the cap", n)
	}
}

// TestTypeCountsMergeFolded: merging keeps the distinct folded types apart
// (a type folded on both sides counts once) and every message.
func TestTypeCountsMergeFolded(t *testing.T) {
	var a, b dissect.TypeCounts
	a.SetLimit(2)
	b.SetLimit(2)
	for _, n := range []string{"r1", "r2", "f1", "f2"} {
		a.Add("vrpn", n)
	}
	for _, n := range []string{"s1", "s2", "f2", "f3"} {
		b.Add("vrpn", n)
	}
	a.Merge(&b)
	var got dissect.TypeCount
	var real int
	for _, r := range a.Rows() {
		if r.Folded > 0 {
			got = r
		} else {
			real++
		}
	}
	// a folds f1, f2; b's s1, s2 are real there but new to a (full):
	// folded; b's other row holds f2 (already) and f3.
	if real != 2 || got.Folded != 5 || got.Count != 6 {
		t.Errorf("merged: %d real rows, other %+v; want 2 real, 5 types folded, 6 messages", real, got)
	}
	if a.Total() != 8 {
		t.Errorf("total %d, want 8", a.Total())
	}
}

// TestStreamsShareCounts: with StreamOptions.Counts the streams count there
// (one cap for the run) and their own Counts are empty.
func TestStreamsShareCounts(t *testing.T) {
	reg := dissectRegistryWithRule(t)
	var shared dissect.TypeCounts
	for i := range 3 {
		col := &collector{}
		s := dissect.NewStream(tcpInfo(7000), reg, col, dissect.StreamOptions{CountOnly: true, Counts: &shared})
		s.Data(0, timeAt(1), []byte{1, 'a', 2, 'b', 'c'})
		s.End(0, timeAt(2))
		if s.Counts() != nil {
			t.Errorf("stream %d has its own counts: %v", i, s.Counts().Rows())
		}
	}
	want := []dissect.TypeCount{{Proto: "toy", Type: "msg", Count: 6}}
	if got := shared.Rows(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shared %v, want %v", got, want)
	}
}

// TestTypeCountsKeep: types the keep function names get their own row past
// the cap (a protocol's declared types), others fold.
func TestTypeCountsKeep(t *testing.T) {
	reg, err := dissect.NewRegistry(&declToy{})
	if err != nil {
		t.Fatal(err)
	}
	if !reg.DeclaresType("toy", "msg") || reg.DeclaresType("toy", "wire name") || reg.DeclaresType("nope", "msg") {
		t.Fatal("DeclaresType: want toy/msg only")
	}
	var c dissect.TypeCounts
	c.SetLimit(2)
	c.SetKeep(reg.DeclaresType)
	for _, n := range []string{"w1", "w2", "w3", "msg", "w4", "msg"} {
		c.Add("toy", n)
	}
	want := []dissect.TypeCount{
		{Proto: "toy", Type: "w1", Count: 1}, {Proto: "toy", Type: "w2", Count: 1},
		{Proto: "toy", Type: dissect.OtherTypes, Count: 2, Folded: 2}, {Proto: "toy", Type: "msg", Count: 2},
	}
	if got := c.Rows(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %v\nwant %v", got, want)
	}
}

// declToy is a toy that declares "msg" by name and the rest by "*".
type declToy struct{ toy }

func (declToy) Info() dissect.Info {
	return dissect.Info{Name: "toy", Proto: "toy", Transports: []dissect.Transport{dissect.TCP},
		Types: []dissect.TypeDecl{{Type: "msg", Doc: "a message"}, {Type: "*", Doc: "any other"}}}
}
