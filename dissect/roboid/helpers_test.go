package roboid_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/roboid"
)

// h decodes hex written with optional spaces; cat concatenates.
var (
	h   = dissecttest.Hex
	cat = dissecttest.Cat
)

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

func checkFields(t *testing.T, got dissect.Fields, want []kv) {
	t.Helper()
	dissecttest.CheckFields(t, got, fields(want...)...)
}

// checkWarnings wants one warning per substring, in order.
var checkWarnings = dissecttest.CheckWarnings

// session is one parser of a UDP flow, for direct Parse calls on whole
// datagrams.
type session struct{ *dissecttest.Session }

func newSession(decode bool) *session {
	s := &session{dissecttest.NewSession(roboid.New(), dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.UDP}}, decode)}
	s.Ctx.Final = true
	return s
}

// parse decodes the datagram b and wants it consumed whole.
func (s *session) parse(t testing.TB, b []byte) *dissect.Record {
	t.Helper()
	if n, err := s.Parse(0, b); n != len(b) || err != nil {
		t.Fatalf("Parse(%x) = %d, %v; want %d, nil", b, n, err, len(b))
	}
	return &s.Rec
}
