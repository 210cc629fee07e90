package dissect_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// fieldsProto is a protocol that only describes itself.
type fieldsProto struct{ info dissect.Info }

func (p fieldsProto) Info() dissect.Info { return p.info }
func (fieldsProto) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict {
	return dissect.No
}
func (fieldsProto) NewParser(*dissect.StreamInfo) dissect.Parser { return nil }

func f32(name string) dissect.FieldDecl {
	return dissect.FieldDecl{Name: name, Kind: dissect.KindFloat32}
}

func TestKnownField(t *testing.T) {
	reg, err := dissect.NewRegistry(
		fieldsProto{dissect.Info{Name: "vr", Proto: "vr", Types: []dissect.TypeDecl{
			{Type: "a", Fields: []dissect.FieldDecl{
				f32("x"),
				{Name: "quat", Kind: dissect.KindObject, Fields: []dissect.FieldDecl{f32("w")}},
				{Name: "pos", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat32}},
			}},
			{Type: "b", Fields: []dissect.FieldDecl{
				{Name: "values", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindObject, Fields: []dissect.FieldDecl{
					{Name: "semantics", Kind: dissect.KindString}}}},
			}},
		}}},
		fieldsProto{dissect.Info{Name: "hc", Proto: "hc", Types: []dissect.TypeDecl{
			{Type: "t", Fields: []dissect.FieldDecl{{Name: "payload", Kind: dissect.KindObject, Fields: []dissect.FieldDecl{
				{Name: "emg_status", Kind: dissect.KindInt}}}}},
		}}},
		// two decode-as names sharing one proto key
		fieldsProto{dissect.Info{Name: "nep", Proto: "nep", Types: []dissect.TypeDecl{{Type: "m", Fields: []dissect.FieldDecl{{Name: "motor", Kind: dissect.KindUint}}}}}},
		fieldsProto{dissect.Info{Name: "nep-wiki", Proto: "nep", Types: []dissect.TypeDecl{{Type: "w", Fields: []dissect.FieldDecl{{Name: "motor_id", Kind: dissect.KindUint}}}}}},
		fieldsProto{dissect.Info{Name: "bare", Proto: "bare"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		proto, field string
		want         bool
	}{
		{"vr", "", true},
		{"vr", "x", true},
		{"vr", "quat", true},
		{"vr", "quat.w", true},
		{"vr", "pos", true},
		{"vr", "pos[0]", true},
		{"vr", "values", true},
		{"vr", "values[1].semantics", true},
		{"vr", "xx", false},
		{"vr", "qua", false},
		{"vr", "payload", false},
		{"hc", "payload", true},
		{"hc", "payload.emg_status", true},
		{"hc", "code", false},
		{"nep", "motor", true},
		{"nep", "motor_id", true},
		{"nep", "", true},
		{"nep-wiki", "", false}, // a decode-as name, not a proto key
		{"bare", "", true},
		{"bare", "x", false},
		{"nosuch", "", false},
		{"nosuch", "x", false},
		{"", "", false},
		{"", "x", false},
	} {
		if got := reg.KnownField(c.proto, c.field); got != c.want {
			t.Errorf("KnownField(%q, %q) = %v, want %v", c.proto, c.field, got, c.want)
		}
	}
}

// TestKnownFieldRules checks that decode-as rules add no names: a rule's
// protocol is one of the registry's.
func TestKnownFieldRules(t *testing.T) {
	vr := fieldsProto{dissect.Info{Name: "vr", Proto: "vr", Transports: []dissect.Transport{dissect.TCP},
		Types: []dissect.TypeDecl{{Type: "a", Fields: []dissect.FieldDecl{f32("x")}}}}}
	reg, err := dissect.NewRegistry(vr)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := reg.ParseDecodeAs("tcp.port==4000,vr")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(rule)
	if !reg.KnownField("vr", "x") || reg.KnownField("vr", "y") {
		t.Error("KnownField changed by a rule")
	}
}
