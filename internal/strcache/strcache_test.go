package strcache

import (
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	c := New[int](4)
	const a = "actuator_position"
	v, hit := c.Lookup(a)
	if hit {
		t.Fatal("hit in an empty cache")
	}
	*v = 7
	if v, hit := c.Lookup(a); !hit || *v != 7 {
		t.Fatalf("second lookup: hit %v value %d, want a hit holding 7", hit, *v)
	}
	// the same contents at another address are another key: a miss, not
	// a wrong hit
	other := strings.Clone(a)
	if _, hit := c.Lookup(other); hit {
		t.Error("hit for a copy at another address")
	}
	// a prefix shares the address but not the length
	if _, hit := c.Lookup(a[:8]); hit {
		t.Error("hit for a prefix")
	}
	for range 2 {
		if _, hit := c.Lookup(""); hit {
			t.Error("hit for the empty string")
		}
	}
}

// TestEvictionKeepsValue: on a miss the slot keeps the old value, so that
// buffers in it can be reused.
func TestEvictionKeepsValue(t *testing.T) {
	c := New[[]byte](1) // two slots: distinct strings soon share one
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = strings.Repeat("k", i+1)
	}
	for _, k := range keys {
		v, hit := c.Lookup(k)
		if !hit {
			*v = append((*v)[:0], k...)
		}
		if string(*v) != k {
			t.Fatalf("slot for %q holds %q", k, *v)
		}
	}
}

func TestLookupAllocatesNothing(t *testing.T) {
	c := New[int32](5)
	keys := []string{"ping", "pong", "curve"}
	if n := testing.AllocsPerRun(1000, func() {
		for _, k := range keys {
			c.Lookup(k)
		}
	}); n != 0 {
		t.Errorf("%v allocations per run", n)
	}
}

func TestLookupOnZeroCachePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	var c Cache[int]
	c.Lookup("x")
}
