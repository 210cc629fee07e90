package layout

import (
	"errors"
	"slices"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// boolSchema: a relay command (id u1, on bool) and a move (direction
// bool named by an enum, then a u2le).
func boolSchema() *Schema {
	return &Schema{
		Endian: LittleEndian,
		Types: []Type{
			{Name: "relay", Seq: []Field{{ID: "id", Type: "u1"}, {ID: "on", Type: "bool"}}},
			{Name: "move", Seq: []Field{{ID: "dir", Type: "bool", Enum: "dir", Doc: "which way"}, {ID: "steps", Type: "u2le"}}},
		},
		Enums: []Enum{{Name: "dir", Values: []EnumValue{{0, "reverse"}, {1, "forward"}}}},
	}
}

func TestBool(t *testing.T) {
	p := compile(t, boolSchema())
	for _, tc := range []struct {
		in   []byte
		on   bool
		warn string
	}{
		{[]byte{7, 0}, false, ""},
		{[]byte{7, 1}, true, ""},
		{[]byte{7, 2}, true, "relay: on byte 0x02 is not 0 or 1, taken as true"},
		{[]byte{7, 0xff}, true, "relay: on byte 0xff is not 0 or 1, taken as true"},
	} {
		r := &dissect.Record{Type: "relay"}
		if _, err := p.NewDecoder().Decode(r, p.Type("relay"), tc.in); err != nil {
			t.Fatal(err)
		}
		want(t, r, "on", dissect.Bool(tc.on))
		if tc.warn == "" && len(r.Warnings) > 0 || tc.warn != "" && (len(r.Warnings) != 1 || r.Warnings[0] != tc.warn) {
			t.Errorf("% x: warnings %q, want %q", tc.in, r.Warnings, tc.warn)
		}
		if tc.warn == "" {
			roundTrip(t, p, "relay", r, tc.in)
		}
	}
	// 0x05 0x00 0x01: forward (with a warning), 256 steps; 0x00: reverse
	r := &dissect.Record{Type: "move"}
	if _, err := p.NewDecoder().Decode(r, p.Type("move"), []byte{5, 0, 1}); err != nil {
		t.Fatal(err)
	}
	want(t, r, "dir", dissect.Str("forward"))
	want(t, r, "steps", dissect.Uint(256))
	if len(r.Warnings) != 1 {
		t.Errorf("warnings %q", r.Warnings)
	}
	r = &dissect.Record{Type: "move"}
	if _, err := p.NewDecoder().Decode(r, p.Type("move"), []byte{0, 3, 0}); err != nil {
		t.Fatal(err)
	}
	want(t, r, "dir", dissect.Str("reverse"))
	roundTrip(t, p, "move", r, []byte{0, 3, 0})

	fs := p.Fields(p.Type("relay"))
	if fs[1].Kind != dissect.KindBool {
		t.Errorf("relay.on declared %v", fs[1].Kind)
	}
	fs = p.Fields(p.Type("move"))
	if fs[0].Kind != dissect.KindString || !slices.Equal(fs[0].Enum, []string{"forward", "reverse"}) || fs[0].Doc != "which way" {
		t.Errorf("move.dir declared %+v", fs[0])
	}
}

func TestBoolRefused(t *testing.T) {
	for name, f := range map[string]Field{
		"scale":        {ID: "x", Type: "bool", Scale: 2},
		"enum lacks 1": {ID: "x", Type: "bool", Enum: "half"},
	} {
		s := &Schema{Types: []Type{{Name: "t", Seq: []Field{f}}}, Enums: []Enum{{Name: "half", Values: []EnumValue{{0, "off"}, {2, "on"}}}}}
		if _, err := Compile(s, Limits{}); err == nil {
			t.Errorf("%s: compiled", name)
		}
	}
}

// TestPartialDecode: a short error names the field of the type given to
// Decode that failed, and r.Fields keeps exactly the fields before it
// (even when the record's scratch held other fields before).
func TestPartialDecode(t *testing.T) {
	s := &Schema{Endian: LittleEndian, Types: []Type{
		{Name: "inner", Seq: []Field{{ID: "a", Type: "u1"}, {ID: "b", Type: "u2"}}},
		{Name: "msg", Seq: []Field{
			{Type: "u1"}, // not recorded
			{ID: "x", Type: "u1"},
			{ID: "f", Type: "f4"},
			{ID: "in", Type: "inner"},
			{ID: "rest", SizeEOS: true},
		}},
	}}
	p := compile(t, s)
	if got := p.MinSize(p.Type("msg")); got != 1+1+4+3 {
		t.Errorf("MinSize = %d, want 9", got)
	}
	stale := dissect.Record{}
	for _, tc := range []struct {
		in    []byte
		field string
		off   int
		keys  []string
	}{
		{[]byte{}, "", 0, nil},
		{[]byte{9}, "x", 1, nil},
		{[]byte{9, 1, 0, 0}, "f", 2, []string{"x"}},
		{[]byte{9, 1, 0, 0, 0x80, 0x3f, 7, 1}, "in", 7, []string{"x", "f"}}, // inner's b cut after 1 byte, at offset 7
	} {
		r := &stale
		r.Fields = r.Fields[:0]
		for range 5 { // leave stale keys in the scratch area
			r.Add("stale", dissect.Uint(1))
		}
		r.Fields = r.Fields[:0]
		_, err := p.NewDecoder().Decode(r, p.Type("msg"), tc.in)
		var de *DecodeError
		if !errors.As(err, &de) || !de.Short || de.Field != tc.field || de.Offset != tc.off {
			t.Errorf("% x: %#v, want field %q at %d", tc.in, err, tc.field, tc.off)
			continue
		}
		var keys []string
		for _, f := range r.Fields {
			keys = append(keys, f.Key)
		}
		if !slices.Equal(keys, tc.keys) {
			t.Errorf("% x: fields %q, want %q", tc.in, keys, tc.keys)
		}
	}
}
