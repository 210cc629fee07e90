package vrpn

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// sample is one message of a catalogued type, written by a family's test
// encoder (wbe, from the layouts of mainline's encode functions, not from
// catalog.go), with the body fields it must decode to.
type sample struct {
	name string // the type name
	body []byte
	// want is the body's fields as a JSON object, written by hand from the
	// values encoded.
	want string
}

// catalogueSamples gathers the samples of every family.
func catalogueSamples() []sample {
	var out []sample
	for _, f := range [][]sample{
		baseSamples(), trackerSamples(), poserSamples(), analogOutputSamples(), buttonSamples(),
		imagerSamples(), forceSamples(), soundSamples(), auxLoggerSamples(),
	} {
		out = append(out, f...)
	}
	return out
}

// wbe writes values as mainline's vrpn_buffer does: big-endian, packed.
// int32, uint32, int16, uint16, int8, uint8, float32 and float64 by their
// size; a string or []byte as its bytes.
func wbe(vs ...any) []byte {
	var b []byte
	for _, v := range vs {
		switch v := v.(type) {
		case int32:
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		case uint32:
			b = binary.BigEndian.AppendUint32(b, v)
		case int16:
			b = binary.BigEndian.AppendUint16(b, uint16(v))
		case uint16:
			b = binary.BigEndian.AppendUint16(b, v)
		case int8:
			b = append(b, byte(v))
		case uint8:
			b = append(b, v)
		case float32:
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(v))
		case float64:
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
		case string:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		default:
			panic(fmt.Sprintf("wbe: %T", v))
		}
	}
	return b
}

// padTo appends zeros to b up to n bytes (a fixed-size buffer).
func padTo(b []byte, n int) []byte {
	for len(b) < n {
		b = append(b, 0)
	}
	return b
}

// catalogueStream is a TCP direction after the cookie: a sender, a
// description of each sample's type, then each sample as a message of
// sender 0 (sample i has type id i).
func catalogueStream(samples []sample) []byte {
	out := encDescription(-1, 0, "Device0", 0)
	for i, s := range samples {
		out = append(out, encDescription(-2, int32(i), s.name, uint32(1+i))...)
	}
	seq := uint32(len(samples) + 1)
	for i, s := range samples {
		out = append(out, encMsg(1795306101, uint32(i), 0, int32(i), seq, s.body)...)
		seq++
	}
	return out
}

// bodyJSON is the record's fields after the header (and without rtt),
// decoded from their JSON-like form, for comparison with a want.
func bodyJSON(r *dissect.Record) map[string]any {
	m := map[string]any{}
	for _, f := range r.Fields {
		switch f.Key {
		case "sender", "sender_id", "type_id", "sent", "sequence", "rtt_ms":
			continue
		}
		m[f.Key] = jsonValue(f.Value)
	}
	return m
}

func jsonValue(v dissect.Value) any {
	switch v.Kind() {
	case dissect.KindInt:
		return float64(v.Int())
	case dissect.KindUint:
		return float64(v.Uint())
	case dissect.KindFloat:
		return v.Float()
	case dissect.KindFloat32:
		return float64(v.Float32())
	case dissect.KindBool:
		return v.Bool()
	case dissect.KindString:
		return v.Str()
	case dissect.KindBytes:
		return fmt.Sprintf("%x", v.Raw())
	case dissect.KindArray:
		a := []any{}
		for _, it := range v.Items() {
			a = append(a, jsonValue(it.Value))
		}
		return a
	case dissect.KindObject:
		m := map[string]any{}
		for _, it := range v.Items() {
			m[it.Key] = jsonValue(it.Value)
		}
		return m
	}
	return nil
}

// TestCatalogueSamples decodes every sample and compares its fields with
// what was encoded, and checks that every catalogued type has a sample.
func TestCatalogueSamples(t *testing.T) {
	samples := catalogueSamples()
	run := fuzzFeed(catalogueStream(samples), 0, 1, true)
	var got []*dissect.Record
	for _, r := range run.recs {
		if r.Type != TypeCookie && r.Type != TypeSenderDescription && r.Type != TypeTypeDescription {
			got = append(got, r)
		}
	}
	if len(got) != len(samples) {
		t.Fatalf("%d records after the descriptions, want %d (one per sample)", len(got), len(samples))
	}
	seen := map[string]bool{}
	for i, s := range samples {
		r := got[i]
		seen[s.name] = true
		var want map[string]any
		if err := json.Unmarshal([]byte(s.want), &want); err != nil {
			t.Fatalf("sample %d (%s): bad want: %v", i, s.name, err)
		}
		if r.Type != s.name || len(r.Warnings) > 0 {
			t.Errorf("sample %d: type %q warnings %q, want %q and none", i, r.Type, r.Warnings, s.name)
		}
		if g := bodyJSON(r); !reflect.DeepEqual(g, want) {
			gj, _ := json.Marshal(g)
			t.Errorf("sample %d (%s):\n got %s\nwant %s", i, s.name, gj, s.want)
		}
		if r.Summary == "" {
			t.Errorf("sample %d (%s): empty summary", i, s.name)
		}
	}
	for name := range catalogued {
		if !seen[name] {
			t.Errorf("catalogued type %q has no sample", name)
		}
	}
}

// TestCatalogueShort cuts every sample at every length shorter than its
// body, all the cuts of a sample sent as messages of one type in one
// stream: each is a record of the type with a warning and the body as
// data, or, for a body that ends early but whole (a text ending at its
// NUL), its decoded fields; never a panic.
func TestCatalogueShort(t *testing.T) {
	reg, _ := registry(t)
	for _, s := range catalogueSamples() {
		in := append(encDescription(-1, 0, "Device0", 0), encDescription(-2, 0, s.name, 1)...)
		for n := range len(s.body) {
			in = append(in, encMsg(1795306101, uint32(n), 0, 0, uint32(2+n), s.body[:n])...)
		}
		run := fuzzFeed(in, 0, uint64(len(s.body)), true)
		recs := run.recs[3:] // after the cookie and the descriptions
		if len(recs) != len(s.body) {
			t.Fatalf("%s: %d records for %d cuts", s.name, len(recs), len(s.body))
		}
		for n, r := range recs {
			if r.Type != s.name {
				t.Fatalf("%s cut to %d bytes: type %q", s.name, n, r.Type)
			}
			if _, ok := r.Fields.Get("data"); ok && len(r.Warnings) == 0 {
				t.Errorf("%s cut to %d bytes: data without a warning", s.name, n)
			}
		}
		dissecttest.CheckDeclared(t, reg, recs)
	}
}

// TestCatalogueWarningsTypesOnly: a malformed catalogued body is warned
// about the same way whether or not its fields are decoded (a types-only
// run reports the same records), e.g. an enum value mainline does not
// name and a text that fills its buffer with no NUL.
func TestCatalogueWarningsTypesOnly(t *testing.T) {
	bad := []sample{
		{nameText, wbe(uint32(7), uint32(0), padTo([]byte("x\x00"), 1024)), ""},
		{nameText, wbe(uint32(0), uint32(0), bytesOf('a', 1024)), ""},
		{"vrpn_Button Admin", wbe(int32(1), int32(5)), ""},
		{"vrpn_Button Alert", wbe(int32(1), int32(22)), ""},
		{"vrpn_Auxiliary_Logger Logging_request", wbe(int32(0), int32(-1), int32(0), int32(0)), ""},
		{"vrpn_Auxiliary_Logger Logging_response", wbe(int32(1), int32(0), int32(0), int32(0), "ab"), ""},
		{"vrpn_Tracker Reset_Origin", wbe(int32(1)), ""},
		{"vrpn_Analog_Output Change_Channels_request", wbe(int32(-2), int32(0)), ""},
		// Bodies of fixed size, numbers only, which a types-only run does
		// not read: too long (past their stale bytes), too short.
		{"vrpn_Poser Request Pos_Quat", make([]byte, 7*8+1), ""},
		{"vrpn_Sound Listener_Pose", make([]byte, 7*8+32+4), ""},
		{"vrpn_Tracker set_update_rate", make([]byte, 7), ""},
	}
	on := fuzzFeed(catalogueStream(bad), 0, 1, true).recs
	off := fuzzFeed(catalogueStream(bad), 0, 1, false).recs
	if len(on) != len(off) || len(on) < len(bad) {
		t.Fatalf("%d records decoded, %d types only, want the same and at least %d", len(on), len(off), len(bad))
	}
	on, off = on[len(on)-len(bad):], off[len(off)-len(bad):]
	for i, s := range bad {
		if on[i].Type != s.name || len(on[i].Warnings) == 0 {
			t.Errorf("bad sample %d: type %q warnings %q, want %q and a warning", i, on[i].Type, on[i].Warnings, s.name)
		}
		if !reflect.DeepEqual(on[i].Warnings, off[i].Warnings) || off[i].Type != on[i].Type {
			t.Errorf("bad sample %d (%s): decoded %q, types only %s %q", i, s.name, on[i].Warnings, off[i].Type, off[i].Warnings)
		}
	}
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}
