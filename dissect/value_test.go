package dissect

import (
	"math"
	"testing"
	"time"
)

func TestValueEqual(t *testing.T) {
	obj := func(fs ...Field) Value { return Object(fs) }
	arr := func(vs ...Value) Value {
		fs := make([]Field, len(vs))
		for i, v := range vs {
			fs[i] = Elem(v)
		}
		return Array(fs)
	}
	for _, tc := range []struct {
		a, b Value
		eq   bool
	}{
		{Int(1), Int(1), true},
		{Int(1), Uint(1), false}, // kinds differ
		{Int(-1), Int(1), false},
		{Float(0), Float(math.Copysign(0, -1)), false},
		{Float(math.NaN()), Float(math.NaN()), true},
		{Float32(0.1), Float32(0.1), true},
		{Float32(0.1), Float(0.1), false},
		{Str("a"), Str("a"), true},
		{Str("a"), Bytes([]byte("a")), false},
		{Bytes([]byte{1, 2}), Bytes([]byte{1, 2}), true},
		{Bytes([]byte{1, 2}), Bytes([]byte{1, 3}), false},
		{Bool(true), Bool(true), true},
		{Bool(true), Bool(false), false},
		{Time(time.Unix(1, 5)), Time(time.Unix(1, 5)), true},
		{Value{}, Value{}, true},
		{arr(Int(1), Int(2)), arr(Int(1), Int(2)), true},
		{arr(Int(1), Int(2)), arr(Int(2), Int(1)), false},
		{arr(Int(1)), arr(Int(1), Int(2)), false},
		{obj(Field{"a", Int(1)}, Field{"b", Int(2)}), obj(Field{"a", Int(1)}, Field{"b", Int(2)}), true},
		{obj(Field{"a", Int(1)}, Field{"b", Int(2)}), obj(Field{"b", Int(2)}, Field{"a", Int(1)}), false}, // order counts
		{obj(Field{"a", arr(Float(-0.0))}), obj(Field{"a", arr(Float(0))}), true},                         // -0.0 literal is +0 in Go
	} {
		if got := tc.a.Equal(tc.b); got != tc.eq {
			t.Errorf("%v.Equal(%v) = %v, want %v", tc.a, tc.b, got, tc.eq)
		}
	}
}

// TestTimeSaturates: instants beyond the nanosecond range (a hostile VRPN
// "sent" time of year 30000) saturate instead of wrapping to another date.
func TestTimeSaturates(t *testing.T) {
	far := time.Date(30000, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := Time(far).Time(); !got.Equal(time.Unix(0, math.MaxInt64)) {
		t.Errorf("year 30000 gives %v, want the 2262 bound", got)
	}
	early := time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := Time(early).Time(); !got.Equal(time.Unix(0, math.MinInt64)) {
		t.Errorf("year -5000 gives %v, want the 1677 bound", got)
	}
	ok := time.Date(2026, 11, 23, 1, 2, 3, 4, time.UTC)
	if got := Time(ok).Time(); !got.Equal(ok) {
		t.Errorf("%v gives %v", ok, got)
	}
}

// Fields set in place by Extend and SetFloat32 equal those Add appends,
// whatever the reused slots held before; Add keeps earlier fields.
func TestExtendAndSetters(t *testing.T) {
	var r Record
	r.Add("s", Str("held"))
	r.Add("o", Object([]Field{{Key: "in", Value: Int(1)}}))
	r.Add("b", Bytes([]byte{1}))
	r.Reset()
	r.Add("first", Uint(7))
	f := r.Extend(3)
	for i, k := range []string{"x", "y", "z"} {
		f[i].Key = k
		f[i].Value.SetFloat32(float32(i) + 0.5)
	}
	want := Fields{
		{Key: "first", Value: Uint(7)},
		{Key: "x", Value: Float32(0.5)},
		{Key: "y", Value: Float32(1.5)},
		{Key: "z", Value: Float32(2.5)},
	}
	if len(r.Fields) != len(want) {
		t.Fatalf("%d fields, want %d", len(r.Fields), len(want))
	}
	for i := range want {
		if r.Fields[i].Key != want[i].Key || !r.Fields[i].Value.Equal(want[i].Value) || r.Fields[i].Value.Str() != "" || r.Fields[i].Value.Items() != nil {
			t.Errorf("field %d = %+v, want %+v", i, r.Fields[i], want[i])
		}
	}
	if n := testing.AllocsPerRun(100, func() { r.Reset(); r.Add("a", Int(1)); r.Extend(3) }); n != 0 {
		t.Errorf("Add and Extend on a reset record: %v allocations", n)
	}
}

// TestFloat32Accessor: Float32 gives back the bits SetFloat32 and Float32
// stored, negative zero and NaN payloads included.
func TestFloat32Accessor(t *testing.T) {
	for _, bits := range []uint32{0, 0x80000000, 0x3dcccccd, 0xff800000, 0x7fc00001, 1} {
		x := math.Float32frombits(bits)
		var v Value
		v.SetFloat32(x)
		if got := math.Float32bits(v.Float32()); got != bits {
			t.Errorf("SetFloat32(%#x): Float32 has bits %#x", bits, got)
		}
		if got := math.Float32bits(Float32(x).Float32()); got != bits {
			t.Errorf("Float32(%#x): Float32 has bits %#x", bits, got)
		}
	}
}
