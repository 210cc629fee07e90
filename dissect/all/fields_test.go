package all_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/pipeline"
)

// notInCaptures lists the declared fields that no shipped capture carries,
// per protocol, each with the reason. A field marked in its Doc with
// "(not in the sample captures)" needs no entry here.
var notInCaptures = map[string]map[string]string{}

// notInCapturesMark ends the Doc of a field that no shipped capture
// carries.
const notInCapturesMark = "(not in the sample captures)"

// capture is one shipped capture and how to decode it.
type captureRun struct {
	files    []string
	decodeAs string
	opt      all.Options
}

// shippedCaptures returns every shipped capture with the decode-as rule of
// its truth file (pcaps/*.truth.json "decode_as", "decoder_options"); the
// VRPN captures need none.
func shippedCaptures(t *testing.T) []captureRun {
	t.Helper()
	var runs []captureRun
	for _, pat := range []string{"../../pcaps/*.pcap*", "../vrpn/testdata/*.pcap*"} {
		names, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			run := captureRun{files: []string{name}}
			base := strings.TrimSuffix(strings.TrimSuffix(name, ".pcapng"), ".pcap")
			if b, err := os.ReadFile(base + ".truth.json"); err == nil {
				var truth struct {
					DecodeAs       string `json:"decode_as"`
					DecoderOptions string `json:"decoder_options"`
				}
				if err := json.Unmarshal(b, &truth); err != nil {
					t.Fatalf("%s.truth.json: %v", base, err)
				}
				run.decodeAs = truth.DecodeAs
				switch truth.DecoderOptions {
				case "":
				case "neptune.WikiOptions{Int16: true}":
					run.opt.NeptuneInt16 = true
				default:
					t.Fatalf("%s.truth.json: decoder_options %q: unknown to this test", base, truth.DecoderOptions)
				}
			} else if !strings.Contains(name, "vrpn") {
				t.Fatalf("%s: no truth file saying how to decode it: %v", name, err)
			}
			runs = append(runs, run)
		}
	}
	if len(runs) < 15 {
		t.Fatalf("found only %d captures", len(runs))
	}
	return runs
}

// fieldKey identifies a seen field path.
type fieldKey struct{ proto, name string }

// seenField is what the captures showed of one path.
type seenField struct {
	kinds map[string]bool // declared-type spelling of each kind seen
	types map[string]bool // record types
	where string          // a capture that carries it
}

// typeOf returns the declared-type spelling of v: "int", "uint",
// "float", "bool", "string", "bytes", "time", "object", "array of T"
// (T: the kind of the first non-null item, "null" for an empty array).
func typeOf(v dissect.Value) string {
	switch v.Kind() {
	case dissect.KindNull:
		return "null"
	case dissect.KindInt:
		return "int"
	case dissect.KindUint:
		return "uint"
	case dissect.KindFloat, dissect.KindFloat32:
		return "float"
	case dissect.KindBool:
		return "bool"
	case dissect.KindString:
		return "string"
	case dissect.KindBytes:
		return "bytes"
	case dissect.KindTime:
		return "time"
	case dissect.KindObject:
		return "object"
	case dissect.KindArray:
		for _, it := range v.Items() {
			if it.Value.Kind() != dissect.KindNull {
				return "array of " + typeOf(it.Value)
			}
		}
		return "array"
	}
	return "?"
}

// walk records the paths of v, a value at path: an array as path+"[]"
// (its items' paths below that), an object's keys as path+".key".
func walk(seen map[fieldKey]*seenField, proto, typ, where, path string, v dissect.Value) {
	if v.Kind() == dissect.KindArray {
		path += "[]"
	}
	k := fieldKey{proto, path}
	s := seen[k]
	if s == nil {
		s = &seenField{kinds: map[string]bool{}, types: map[string]bool{}, where: where}
		seen[k] = s
	}
	s.types[typ] = true
	switch v.Kind() {
	case dissect.KindObject:
		s.kinds["object"] = true
		for _, f := range v.Items() {
			walk(seen, proto, typ, where, path+"."+f.Key, f.Value)
		}
	case dissect.KindArray:
		if len(v.Items()) == 0 {
			s.kinds["array"] = true
		}
		for _, it := range v.Items() {
			s.kinds["array of "+typeOf(it.Value)] = true
			switch it.Value.Kind() {
			case dissect.KindObject:
				for _, f := range it.Value.Items() {
					walk(seen, proto, typ, where, path+"."+f.Key, f.Value)
				}
			case dissect.KindArray:
				walk(seen, proto, typ, where, path, it.Value)
			}
		}
	default:
		s.kinds[typeOf(v)] = true
	}
}

// normalise maps a seen path to the declared name that covers it.
func normalise(proto, path string) string {
	if proto == "handcontrol" && strings.HasPrefix(path, "payload.") {
		return "payload.*"
	}
	return path
}

// collect runs every shipped capture and returns the field paths seen.
func collect(t *testing.T) map[fieldKey]*seenField {
	seen := map[fieldKey]*seenField{}
	for _, run := range shippedCaptures(t) {
		reg, err := all.Registry(run.opt)
		if err != nil {
			t.Fatal(err)
		}
		if run.decodeAs != "" {
			rule, err := reg.ParseDecodeAs(run.decodeAs)
			if err != nil {
				t.Fatalf("%s: %v", run.files[0], err)
			}
			reg.AddRule(rule)
		}
		where := filepath.Base(run.files[0])
		records := 0
		sink := dissect.SinkFunc(func(r *dissect.Record) error {
			if r.Proto == "" {
				return nil
			}
			records++
			for _, f := range r.Fields {
				walk(seen, r.Proto, r.Type, where, f.Key, f.Value)
			}
			return nil
		})
		if _, err := pipeline.Run(context.Background(), pipeline.NewFiles(run.files, nil), pipeline.Config{Registry: reg, Sink: sink}); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if records == 0 {
			t.Errorf("%s: no decoded record", where)
		}
	}
	return seen
}

// declared returns each proto key's declared fields (neptune and
// neptune-wiki share one), and the record types of each proto key.
func declared(t *testing.T) map[string][]dissect.FieldInfo {
	protos, err := all.Protocols(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]dissect.FieldInfo{}
	for _, p := range protos {
		in := p.Info()
		out[in.Proto] = append(out[in.Proto], in.Fields...)
	}
	return out
}

// typeMatches reports whether a seen kind fits the declared type.
func typeMatches(decl, seen string) bool {
	switch {
	case seen == decl, seen == "null":
		return true
	case seen == "array":
		return strings.HasPrefix(decl, "array")
	case strings.HasPrefix(decl, "array of "):
		return false
	}
	// a field declared "float" may be written as an integer when a
	// decoder keeps exact integers (none does today); keep it strict
	return false
}

// TestFieldsMatchCaptures runs every shipped capture and checks that each
// field path seen is declared with the kind seen, and that each declared
// field is seen somewhere or marked as absent from the captures.
func TestFieldsMatchCaptures(t *testing.T) {
	seen := collect(t)
	decl := declared(t)
	covered := map[fieldKey]bool{}
	// neptune and neptune-wiki share the proto key "neptune": a name may be
	// declared by both, and a path seen fits when it fits either
	byName := map[fieldKey][]dissect.FieldInfo{}
	for proto, fs := range decl {
		for _, f := range fs {
			k := fieldKey{proto, f.Name}
			byName[k] = append(byName[k], f)
		}
	}
	if os.Getenv("DISSECT_DUMP_FIELDS") != "" {
		var keys []fieldKey
		for k := range seen {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].proto != keys[j].proto {
				return keys[i].proto < keys[j].proto
			}
			return keys[i].name < keys[j].name
		})
		for _, k := range keys {
			s := seen[k]
			t.Logf("%s %s %v %v", k.proto, k.name, slices.Sorted(mapKeys(s.kinds)), slices.Sorted(mapKeys(s.types)))
		}
	}
	for k, s := range seen {
		name := normalise(k.proto, k.name)
		fs, ok := byName[fieldKey{k.proto, name}]
		if !ok {
			t.Errorf("%s.%s (seen in %s, type %v) is not declared in the protocol's Fields", k.proto, k.name, s.where, slices.Sorted(mapKeys(s.kinds)))
			continue
		}
		covered[fieldKey{k.proto, name}] = true
		if name != k.name {
			continue // below a wildcard: any type
		}
		for kind := range s.kinds {
			if !slices.ContainsFunc(fs, func(f dissect.FieldInfo) bool { return typeMatches(f.Type, kind) }) {
				t.Errorf("%s.%s: declared %q, but %s has a %s", k.proto, k.name, fs[0].Type, s.where, kind)
			}
		}
		for typ := range s.types {
			if !slices.ContainsFunc(fs, func(f dissect.FieldInfo) bool { return len(f.Types) == 0 || slices.Contains(f.Types, typ) }) {
				t.Errorf("%s.%s: seen in a %q record (%s), not in its Types %v", k.proto, k.name, typ, s.where, fs[0].Types)
			}
		}
	}
	for proto, fs := range decl {
		for _, f := range fs {
			k := fieldKey{proto, f.Name}
			marked := slices.ContainsFunc(byName[k], func(f dissect.FieldInfo) bool { return strings.HasSuffix(f.Doc, notInCapturesMark) })
			reason, listed := notInCaptures[proto][f.Name]
			switch {
			case covered[k] && (marked || listed):
				t.Errorf("%s.%s is in a capture (%s): drop its not-in-captures mark", proto, f.Name, reason)
			case !covered[k] && !marked && !listed:
				t.Errorf("%s.%s is declared but in no shipped capture: mark its Doc %q or list it in notInCaptures with a reason", proto, f.Name, notInCapturesMark)
			}
		}
	}
}

// TestFieldsWellFormed checks each protocol's table: names unique and
// well formed, types known ("any" only for a wildcard "X.*"), docs one
// line, parents of nested names declared, a new slice on each Info call.
func TestFieldsWellFormed(t *testing.T) {
	protos, err := all.Protocols(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scalar := []string{"int", "uint", "float", "bool", "string", "bytes", "time", "object"}
	name := regexp.MustCompile(`^[a-z_][a-z0-9_]*(\[\])*(\.([a-z_][a-z0-9_]*|\*)(\[\])*)*$`)
	for _, p := range protos {
		in := p.Info()
		if len(in.Fields) == 0 {
			t.Errorf("%s: no Fields", in.Name)
		}
		names := map[string]bool{}
		for _, f := range in.Fields {
			if names[f.Name] {
				t.Errorf("%s: field %q declared twice", in.Name, f.Name)
			}
			names[f.Name] = true
			if !name.MatchString(f.Name) {
				t.Errorf("%s: field name %q is not a path of keys", in.Name, f.Name)
			}
			typ := f.Type
			for strings.HasPrefix(typ, "array of ") {
				typ = strings.TrimPrefix(typ, "array of ")
			}
			if !slices.Contains(scalar, typ) && !(typ == "any" && strings.HasSuffix(f.Name, ".*")) {
				t.Errorf("%s.%s: type %q", in.Name, f.Name, f.Type)
			}
			if strings.HasSuffix(f.Name, "[]") != strings.HasPrefix(f.Type, "array of ") {
				t.Errorf("%s.%s: an array's name ends with [] and its type is \"array of T\" (type %q)", in.Name, f.Name, f.Type)
			}
			if f.Doc == "" || strings.ContainsAny(f.Doc, "\n\r") {
				t.Errorf("%s.%s: Doc must be one line: %q", in.Name, f.Name, f.Doc)
			}
			for _, ty := range f.Types {
				if ty == "" {
					t.Errorf("%s.%s: empty record type", in.Name, f.Name)
				}
			}
			// a nested name's parents are declared too
			for i := range len(f.Name) {
				if f.Name[i] == '.' && !names[f.Name[:i]] && !slices.ContainsFunc(in.Fields, func(g dissect.FieldInfo) bool { return g.Name == f.Name[:i] }) {
					t.Errorf("%s.%s: its parent %q is not declared", in.Name, f.Name, f.Name[:i])
				}
			}
		}
		// a second call shares nothing with the first
		again := p.Info()
		if len(in.Fields) > 0 && len(again.Fields) > 0 && &in.Fields[0] == &again.Fields[0] {
			t.Errorf("%s: Info returns the same Fields slice twice", in.Name)
		}
		if len(in.Fields) > 0 && len(in.Fields[0].Types) > 0 && len(again.Fields[0].Types) > 0 && &in.Fields[0].Types[0] == &again.Fields[0].Types[0] {
			t.Errorf("%s: Info returns the same Types slice twice", in.Name)
		}
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
