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
