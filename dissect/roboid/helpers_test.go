package roboid_test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"dissect/dissect"
	"dissect/dissect/roboid"
)

// h decodes hex written with optional spaces.
func h(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// kv is an expected field.
type kv struct {
	k string
	v dissect.Value
}

func fields(kvs ...kv) []dissect.Field {
	out := make([]dissect.Field, len(kvs))
	for i, f := range kvs {
		out[i] = dissect.Field{Key: f.k, Value: f.v}
	}
	return out
}

func u(v uint64) dissect.Value    { return dissect.Uint(v) }
func hx(s string) dissect.Value   { return dissect.Bytes(h(s)) }
func str(s string) dissect.Value  { return dissect.Str(s) }
func fl(v float64) dissect.Value  { return dissect.Float(v) }
func f32(v float32) dissect.Value { return dissect.Float32(v) }

// degs is an angles_deg array.
func degs(vs ...float64) dissect.Value {
	items := make([]dissect.Field, len(vs))
	for i, v := range vs {
		items[i] = dissect.Elem(dissect.Float(v))
	}
	return dissect.Array(items)
}

// val is an expected typed value: the five fields every value has, then
// extra (the interpretation, or truncated).
func val(dataType, sem string, ang, lin uint64, raw string, extra ...kv) dissect.Field {
	fs := fields(append([]kv{
		{"data_type", str(dataType)}, {"semantics", str(sem)},
		{"angular_bytes", u(ang)}, {"linear_bytes", u(lin)}, {"raw", hx(raw)},
	}, extra...)...)
	return dissect.Elem(dissect.Object(fs))
}

func values(vs ...dissect.Field) dissect.Value { return dissect.Array(vs) }

// pose is the expected fields of a Pose.
func pose(net, thing uint64, vs ...dissect.Field) []kv {
	return []kv{{"network_id", u(net)}, {"thing_id", u(thing)}, {"values", values(vs...)}}
}

var truncated = kv{"truncated", dissect.Bool(true)}

// eqValue compares two values by kind and content.
func eqValue(a, b dissect.Value) bool { return a.Equal(b) }

// show renders a value for failure messages.
func show(v dissect.Value) string {
	switch v.Kind() {
	case dissect.KindBytes:
		return fmt.Sprintf("%x", v.Raw())
	case dissect.KindString:
		return fmt.Sprintf("%q", v.Str())
	case dissect.KindFloat, dissect.KindFloat32:
		return fmt.Sprint(v.Float())
	case dissect.KindBool:
		return fmt.Sprint(v.Bool())
	case dissect.KindArray, dissect.KindObject:
		var b strings.Builder
		b.WriteByte('{')
		for i, f := range v.Items() {
			if i > 0 {
				b.WriteString(", ")
			}
			if f.Key != "" {
				b.WriteString(f.Key + ":")
			}
			b.WriteString(show(f.Value))
		}
		b.WriteByte('}')
		return b.String()
	}
	return fmt.Sprint(v.Uint())
}

func checkFields(t *testing.T, got dissect.Fields, want []kv) {
	t.Helper()
	g := dissect.Object(got)
	w := dissect.Object(fields(want...))
	if !eqValue(g, w) {
		t.Errorf("fields:\n got  %s\n want %s", show(g), show(w))
	}
}

// checkWarnings wants one warning per substring, in order.
func checkWarnings(t *testing.T, got []string, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("warnings: got %q, want %d matching %q", got, len(want), want)
		return
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d: %q does not contain %q", i, got[i], want[i])
		}
	}
}

// session is one parser with a context, for direct Parse calls on whole
// datagrams.
type session struct {
	p    dissect.Parser
	info dissect.StreamInfo
	rec  dissect.Record
	c    dissect.Ctx
}

func newSession(decode bool) *session {
	s := &session{}
	s.info.Transport = dissect.UDP
	s.p = roboid.New().NewParser(&s.info)
	s.c = dissect.Ctx{Stream: &s.info, Decode: decode, Rec: &s.rec, Final: true}
	return s
}

// parse decodes the datagram b and wants it consumed whole.
func (s *session) parse(t testing.TB, b []byte) *dissect.Record {
	t.Helper()
	s.rec.Reset()
	n, err := s.p.Parse(&s.c, b)
	if n != len(b) || err != nil {
		t.Fatalf("Parse(%x) = %d, %v; want %d, nil", b, n, err, len(b))
	}
	return &s.rec
}
