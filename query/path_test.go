package query

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

func pathRecord() *dissect.Record {
	r := &dissect.Record{Proto: "roboid", Type: "Pose", Stream: 3, Src: "a:1", Dst: "b:2", Offset: 10, Length: 12}
	r.Add("network_id", dissect.Uint(1))
	r.Add("pos", dissect.Array([]dissect.Field{dissect.Elem(dissect.Float(0.5)), dissect.Elem(dissect.Float(-1))}))
	r.Add("quat", dissect.Object([]dissect.Field{{Key: "w", Value: dissect.Float(1)}}))
	r.Add("values", dissect.Array([]dissect.Field{
		dissect.Elem(dissect.Object([]dissect.Field{{Key: "semantics", Value: dissect.Str("position")}})),
		dissect.Elem(dissect.Object([]dissect.Field{{Key: "semantics", Value: dissect.Str("orientation")}})),
	}))
	return r
}

func TestPathLookup(t *testing.T) {
	r := pathRecord()
	for _, tc := range []struct {
		path string
		want []string // the values named, by their Go form
	}{
		{"stream", []string{"3"}},
		{"length", []string{"12"}},
		{"src", []string{"a:1"}},
		{"roboid", []string{"true"}},
		{"vrpn", nil},
		{"roboid.network_id", []string{"1"}},
		{"roboid.pos[1]", []string{"-1"}},
		{"roboid.pos[2]", nil},
		{"roboid.pos", []string{"array"}},
		{"roboid.quat.w", []string{"1"}},
		{"roboid.values[1].semantics", []string{"orientation"}},
		{"roboid.values.semantics", []string{"position", "orientation"}},
		{"roboid.nosuch", nil},
		{"vrpn.network_id", nil},
	} {
		p, err := ParsePath(tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		var got []string
		p.Each(r, func(v dissect.Value) bool {
			got = append(got, goForm(v))
			return true
		})
		if len(got) != len(tc.want) {
			t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: got %q, want %q", tc.path, got, tc.want)
			}
		}
	}
}

func goForm(v dissect.Value) string {
	switch v.Kind() {
	case dissect.KindInt:
		return itoa(v.Int())
	case dissect.KindUint:
		return itoa(int64(v.Uint()))
	case dissect.KindFloat:
		return itoa(int64(v.Float()))
	case dissect.KindString:
		return v.Str()
	case dissect.KindBool:
		if v.Bool() {
			return "true"
		}
		return "false"
	case dissect.KindArray:
		return "array"
	}
	return "?"
}

func itoa(n int64) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestParsePathErrors(t *testing.T) {
	for _, s := range []string{"", ".x", "vrpn..x", "vrpn.pos[", "vrpn.pos[x]", "vrpn.pos[-1]", "vrpn.pos[0]x", "1abc", "vrpn.", "time.", "vrpn.pos.", "vrpn.pos[0]."} {
		if _, err := ParsePath(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
	p, err := ParsePath("roboid.values[0][1].x")
	if err != nil || len(p.steps) != 4 {
		t.Errorf("nested index: %v %v", p.steps, err)
	}
}

func TestPathLookupAllocatesNothing(t *testing.T) {
	r := pathRecord()
	p, _ := ParsePath("roboid.values.semantics")
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		p.Each(r, func(dissect.Value) bool { n++; return true })
		if _, ok := p.Lookup(r); !ok {
			t.Fatal("not found")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per lookup", allocs)
	}
}
