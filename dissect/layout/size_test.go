package layout

import "testing"

// MinSize by hand: a u1, a u4 and three f8 are 1 + 4 + 24 = 29 bytes; a
// type holding it twice and a 2-byte contents 60; text to a terminator
// at least its terminator, 1.
func TestMinSize(t *testing.T) {
	nul := byte(0)
	p, err := Compile(&Schema{Types: []Type{
		{Name: "a", Seq: []Field{{ID: "x", Type: "u1"}, {ID: "y", Type: "u4le"}, {ID: "v", Type: "f8", Repeat: RepeatExpr, RepeatExpr: Num(3)}}},
		{Name: "b", Seq: []Field{{ID: "one", Type: "a"}, {ID: "two", Type: "a"}, {Contents: []byte{1, 2}}}},
		{Name: "c", Seq: []Field{{ID: "s", Type: "str", Terminator: &nul}}},
	}}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"a": 29, "b": 60, "c": 1} {
		if got := p.MinSize(p.Type(name)); got != want {
			t.Errorf("MinSize(%s) = %d, want %d", name, got, want)
		}
	}
}
