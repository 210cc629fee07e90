package dissect_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// declTypes is a small protocol's declarations: a plain type, a type with
// two variants, and the wildcard.
func declTypes() []dissect.TypeDecl {
	role := dissect.FieldDecl{Name: "role", Kind: dissect.KindString, Required: true, Enum: []string{"request", "response"}}
	return []dissect.TypeDecl{
		{Type: "pose", Fields: []dissect.FieldDecl{
			{Name: "x", Kind: dissect.KindFloat32, Required: true, Unit: "m"},
			{Name: "pos", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat}},
			{Name: "quat", Kind: dissect.KindObject, Fields: []dissect.FieldDecl{{Name: "w", Kind: dissect.KindFloat, Required: true}}},
			{Name: "id", Kind: dissect.KindUint},
		}},
		{Type: "get", Variant: &dissect.Variant{Key: "role", Value: "request"}, Fields: []dissect.FieldDecl{role}},
		{Type: "get", Variant: &dissect.Variant{Key: "role", Value: "response"}, Fields: []dissect.FieldDecl{role,
			{Name: "latency_ms", Kind: dissect.KindFloat, Role: dissect.RoleLatency}}},
		{Type: "*", Fields: []dissect.FieldDecl{{Name: "data", Kind: dissect.KindBytes, Required: true}}},
	}
}

func declRegistry(t *testing.T) *dissect.Registry {
	t.Helper()
	reg, err := dissect.NewRegistry(fieldsProto{dissect.Info{Name: "p", Proto: "p", Types: declTypes()}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func rec(typ string, fs ...dissect.Field) *dissect.Record {
	return &dissect.Record{Proto: "p", Type: typ, Fields: fs}
}

func fld(k string, v dissect.Value) dissect.Field { return dissect.Field{Key: k, Value: v} }

func TestDeclLookup(t *testing.T) {
	reg := declRegistry(t)
	for _, c := range []struct {
		r     *dissect.Record
		table string // "" for no declaration
	}{
		{rec("pose"), "pose"},
		{rec("get", fld("role", dissect.Str("request"))), "get.request"},
		{rec("get", fld("role", dissect.Str("response"))), "get.response"},
		{rec("get", fld("role", dissect.Str("telemetry"))), ""},
		{rec("get"), ""},
		{rec("get", fld("role", dissect.Int(1))), ""},
		{rec("vrpn_Other thing"), "*"},
		{rec(dissect.TypeGap), dissect.TypeGap},
		{&dissect.Record{Proto: "", Type: dissect.TypeSkipped}, dissect.TypeSkipped},
		{&dissect.Record{Proto: "other", Type: "pose"}, ""},
	} {
		d := reg.Decl(c.r)
		got := ""
		if d != nil {
			got = d.Table()
		}
		if got != c.table {
			t.Errorf("Decl(%s %s %v) = %q, want %q", c.r.Proto, c.r.Type, c.r.Fields, got, c.table)
		}
	}
	if n := len(reg.Types("p")); n != 4 {
		t.Errorf("Types(p): %d declarations, want 4", n)
	}
	if got := reg.Protos(); len(got) != 1 || got[0] != "p" {
		t.Errorf("Protos() = %q", got)
	}
}

func TestDeclCheck(t *testing.T) {
	reg := declRegistry(t)
	quat := func(fs ...dissect.Field) dissect.Field { return fld("quat", dissect.Object(fs)) }
	pos := func(vs ...dissect.Value) dissect.Field {
		var items []dissect.Field
		for _, v := range vs {
			items = append(items, dissect.Elem(v))
		}
		return fld("pos", dissect.Array(items))
	}
	x := fld("x", dissect.Float32(1))
	for _, c := range []struct {
		r    *dissect.Record
		path string // "" for valid
	}{
		{rec("pose", x), ""},
		{rec("pose", x, pos(dissect.Float(1), dissect.Float(2)), quat(fld("w", dissect.Float(1))), fld("id", dissect.Uint(3))), ""},
		{rec("pose"), "fields.x"},                                  // required missing
		{rec("pose", fld("x", dissect.Float(1))), "fields.x"},      // float64 where float32 is declared
		{rec("pose", x, fld("y", dissect.Float32(1))), "fields.y"}, // not declared
		{rec("pose", x, x), "fields.x"},                            // repeated
		{rec("pose", x, fld("id", dissect.Int(3))), "fields.id"},   // int where uint is declared
		{rec("pose", x, fld("id", dissect.Value{})), "fields.id"},  // null
		{rec("pose", x, pos(dissect.Float(1), dissect.Int(2))), "fields.pos[1]"},
		{rec("pose", x, quat()), "fields.quat.w"}, // required inside an object
		{rec("pose", x, quat(fld("w", dissect.Float(1)), fld("v", dissect.Float(1)))), "fields.quat.v"},
		{rec("get", fld("role", dissect.Str("response")), fld("latency_ms", dissect.Float(2))), ""},
		{rec("*thing", fld("data", dissect.Bytes([]byte{1}))), ""},
	} {
		d := reg.Decl(c.r)
		if d == nil {
			t.Fatalf("%v: no declaration", c.r.Fields)
		}
		err := d.Check(c.r)
		switch {
		case c.path == "" && err != nil:
			t.Errorf("%s %v: %v", c.r.Type, c.r.Fields, err)
		case c.path != "" && err == nil:
			t.Errorf("%s %v: valid, want an error at %s", c.r.Type, c.r.Fields, c.path)
		case c.path != "" && err.(*dissect.DeclError).Path != c.path:
			t.Errorf("%s %v: error %v, want it at %s", c.r.Type, c.r.Fields, err, c.path)
		}
	}
	// A variant's key must hold its value; an Enum bounds strings.
	resp := &declTypes()[2]
	if err := resp.Check(rec("get", fld("role", dissect.Str("request")))); err == nil {
		t.Error("response variant accepted a request")
	}
	enum := dissect.TypeDecl{Type: "e", Fields: []dissect.FieldDecl{{Name: "s", Kind: dissect.KindString, Enum: []string{"a"}}}}
	if err := enum.Check(&dissect.Record{Type: "e", Fields: dissect.Fields{fld("s", dissect.Str("b"))}}); err == nil {
		t.Error("a string outside its Enum was accepted")
	}
}

func TestValidate(t *testing.T) {
	f := func(fs ...dissect.FieldDecl) []dissect.FieldDecl { return fs }
	for _, c := range []struct {
		name  string
		types []dissect.TypeDecl
		want  string // part of the error; "" for valid
	}{
		{"valid", declTypes(), ""},
		{"twice", []dissect.TypeDecl{{Type: "a"}, {Type: "a"}}, "twice"},
		{"unnamed type", []dissect.TypeDecl{{}}, "unnamed"},
		{"field twice", []dissect.TypeDecl{{Type: "a", Fields: f(dissect.FieldDecl{Name: "x", Kind: dissect.KindInt}, dissect.FieldDecl{Name: "x", Kind: dissect.KindInt})}}, "twice"},
		{"no kind", []dissect.TypeDecl{{Type: "a", Fields: f(dissect.FieldDecl{Name: "x"})}}, "no kind"},
		{"array without items", []dissect.TypeDecl{{Type: "a", Fields: f(dissect.FieldDecl{Name: "x", Kind: dissect.KindArray})}}, "items"},
		{"nameless nested", []dissect.TypeDecl{{Type: "a", Fields: f(dissect.FieldDecl{Name: "o", Kind: dissect.KindObject, Fields: f(dissect.FieldDecl{Kind: dissect.KindInt})})}}, "no name"},
		{"variant key", []dissect.TypeDecl{{Type: "a", Variant: &dissect.Variant{Key: "role", Value: "r"}}}, "variant key"},
		{"variant and plain", []dissect.TypeDecl{{Type: "a"}, {Type: "a", Variant: &dissect.Variant{Key: "k", Value: "v"}, Fields: f(dissect.FieldDecl{Name: "k", Kind: dissect.KindString})}}, "with and without"},
		{"pose field", []dissect.TypeDecl{{Type: "a", Pose: &dissect.Pose{Position: "pos"}}}, "pose field"},
		{"pose xyz", []dissect.TypeDecl{{Type: "a", Pose: &dissect.Pose{}}}, "x, y, z"},
		{"polyline", []dissect.TypeDecl{{Type: "a", Polyline: "points"}}, "polyline"},
	} {
		err := dissect.Validate("p", c.types)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	// The registry refuses gap/skipped and a type two protocols of one proto
	// key both declare.
	if _, err := dissect.NewRegistry(fieldsProto{dissect.Info{Name: "p", Proto: "p", Types: []dissect.TypeDecl{{Type: dissect.TypeGap}}}}); err == nil {
		t.Error("a protocol declaring gap was registered")
	}
	a := func(k dissect.Kind) []dissect.TypeDecl {
		return []dissect.TypeDecl{{Type: "a", Fields: []dissect.FieldDecl{{Name: "x", Kind: k}}}}
	}
	if _, err := dissect.NewRegistry(fieldsProto{dissect.Info{Name: "p", Proto: "p", Types: a(dissect.KindInt)}},
		fieldsProto{dissect.Info{Name: "q", Proto: "p", Types: a(dissect.KindUint)}}); err == nil {
		t.Error("one type of one proto key declared differently by two protocols was registered")
	}
	reg, err := dissect.NewRegistry(fieldsProto{dissect.Info{Name: "p", Proto: "p", Types: a(dissect.KindInt)}},
		fieldsProto{dissect.Info{Name: "q", Proto: "p", Types: a(dissect.KindInt)}})
	if err != nil {
		t.Errorf("one type declared alike by two protocols of a key: %v", err)
	} else if n := len(reg.Types("p")); n != 1 {
		t.Errorf("a type declared alike twice: %d declarations, want 1", n)
	}
}

func TestFieldInfos(t *testing.T) {
	types := []dissect.TypeDecl{
		{Type: "a", Fields: []dissect.FieldDecl{
			{Name: "points", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat32}}},
			{Name: "values", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindObject, Fields: []dissect.FieldDecl{{Name: "raw", Kind: dissect.KindBytes}}}},
		}},
		{Type: "b", Variant: &dissect.Variant{Key: "k", Value: "v"}, Fields: []dissect.FieldDecl{{Name: "k", Kind: dissect.KindString, Doc: "plain"}, {Name: "points", Kind: dissect.KindInt}}},
		{Type: "c", Fields: []dissect.FieldDecl{{Name: "k", Kind: dissect.KindString, Role: dissect.RoleSender, Doc: "sender"}}},
	}
	var got []string
	for _, f := range dissect.FieldInfos(types) {
		got = append(got, f.Name+":"+f.Type+":"+strings.Join(f.Types, "|"))
	}
	want := []string{
		"points:array of array of float32:a|b.v",
		"points[]:array of float32:a",
		"values:array of object:a",
		"values[].raw:bytes:a",
		"k:string:b.v|c",
	}
	infos := dissect.FieldInfos(types)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("FieldInfos:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	} else if k := infos[4]; k.Role != dissect.RoleSender || k.Doc != "sender" {
		t.Errorf("k: role %v doc %q, want the role and doc of the type that gives it a role", k.Role, k.Doc)
	}
}

// TestSchemaLine checks the shape of a --schema line: JSON, the type's
// keys, variants as anyOf, fields closed. Ajv checks records against these
// schemas in cmd/dissect's tests.
func TestSchemaLine(t *testing.T) {
	reg := declRegistry(t)
	ts := reg.Types("p")
	var line struct {
		Proto, Type string
		Schema      map[string]any
	}
	b := dissect.AppendSchemaLine(nil, "p", "pose", ts[:1])
	if err := json.Unmarshal(b, &line); err != nil || !strings.HasSuffix(string(b), "}\n") || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("%s: %v", b, err)
	}
	s := line.Schema
	if line.Proto != "p" || line.Type != "pose" || s["$schema"] != dissect.SchemaURI || s["additionalProperties"] != false {
		t.Errorf("line: %s", b)
	}
	props := s["properties"].(map[string]any)
	fields := props["fields"].(map[string]any)
	if fields["additionalProperties"] != false {
		t.Errorf("fields are not closed: %v", fields)
	}
	if req := fields["required"].([]any); len(req) != 1 || req[0] != "x" {
		t.Errorf("fields required %v, want [x]", req)
	}
	fp := fields["properties"].(map[string]any)
	if d := fp["x"].(map[string]any)["description"]; d != "unit: m" {
		t.Errorf("x description %v", d)
	}
	if it := fp["pos"].(map[string]any)["items"].(map[string]any); it["anyOf"] == nil {
		t.Errorf("pos items %v: floats must allow NaN and infinities as strings", it)
	}
	if props["type"].(map[string]any)["const"] != "pose" || props["proto"].(map[string]any)["const"] != "p" {
		t.Errorf("type/proto not pinned: %v %v", props["type"], props["proto"])
	}

	b = dissect.AppendSchemaLine(nil, "p", "get", ts[1:3])
	if err := json.Unmarshal(b, &line); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if any := line.Schema["anyOf"].([]any); len(any) != 2 {
		t.Fatalf("variants: %s", b)
	}
	if !strings.Contains(string(b), `"role":{"const":"request"}`) || !strings.Contains(string(b), `"role":{"const":"response"}`) {
		t.Errorf("variant keys not pinned: %s", b)
	}
	b = dissect.AppendSchemaLine(nil, "*", dissect.TypeGap, reg.Types("*")[:1])
	if err := json.Unmarshal(b, &line); err != nil || line.Schema["properties"].(map[string]any)["proto"].(map[string]any)["type"] != "string" {
		t.Errorf("gap line leaves proto free: %s (%v)", b, err)
	}
}
