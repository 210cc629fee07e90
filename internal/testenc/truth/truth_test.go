package truth

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestWantString(t *testing.T) {
	for w, s := range map[Want]string{Any: "any", Yes: "yes", No: "no"} {
		if w.String() != s {
			t.Errorf("%d: %q, want %q", w, w.String(), s)
		}
	}
}

// TestF32 checks the contract's float32 form; the digits are the shortest
// that read back as the same float32 (0.1f32 is 0.100000001490116...).
func TestF32(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want string
	}{{1, "1"}, {0.1, "0.1"}, {-2.5, "-2.5"}, {1e20, "1e+20"},
		{float32(math.NaN()), `"NaN"`}, {float32(math.Inf(1)), `"Inf"`}, {float32(math.Inf(-1)), `"-Inf"`}} {
		var b bytes.Buffer
		F32(&b, c.f)
		if b.String() != c.want {
			t.Errorf("F32(%v) = %s, want %s", c.f, b.String(), c.want)
		}
	}
}

func TestHead(t *testing.T) {
	var b bytes.Buffer
	Head(&b, "ping", 7, 10, `{"id":1}`)
	if want := `{"type":"ping","offset":7,"length":10,"fields":{"id":1}`; b.String() != want {
		t.Errorf("Head = %s, want %s", b.String(), want)
	}
}

type rec struct {
	typ      string
	off, len int64
}

var ops = Ops[rec]{
	Span:      func(m *rec) (int64, int64) { return m.off, m.len },
	IsSkipped: func(m *rec) bool { return m.typ == "skipped" },
	Grow:      func(m *rec, n int64) { m.len += n },
	Skipped:   func(off, n int64) rec { return rec{"skipped", off, n} },
	String:    func(m *rec) string { return fmt.Sprintf("%s@%d+%d", m.typ, m.off, m.len) },
}

func TestSkipRange(t *testing.T) {
	msgs := []rec{{"a", 0, 4}, {"b", 4, 2}, {"c", 6, 3}, {"d", 9, 1}}
	for _, c := range []struct {
		from, to int64
		want     []rec
		err      string
	}{
		{4, 9, []rec{{"a", 0, 4}, {"skipped", 4, 5}, {"d", 9, 1}}, ""},
		{0, 4, []rec{{"skipped", 0, 4}, {"b", 4, 2}, {"c", 6, 3}, {"d", 9, 1}}, ""},
		{9, 12, []rec{{"a", 0, 4}, {"b", 4, 2}, {"c", 6, 3}, {"skipped", 9, 3}}, ""}, // to past the last record
		{5, 5, msgs, ""},
		{5, 9, nil, "cuts the record b@4+2"},
		{4, 7, nil, "cuts the record c@6+3"},
	} {
		got, err := SkipRange(ops, msgs, c.from, c.to)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("[%d,%d): error %v, want %q", c.from, c.to, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("[%d,%d): %v, %v; want %v", c.from, c.to, got, err, c.want)
		}
	}
}

func TestMergeSkipped(t *testing.T) {
	in := []rec{{"skipped", 0, 2}, {"skipped", 2, 3}, {"a", 5, 1}, {"skipped", 6, 1}, {"skipped", 8, 1}, {"skipped", 9, 2}}
	want := []rec{{"skipped", 0, 5}, {"a", 5, 1}, {"skipped", 6, 1}, {"skipped", 8, 3}}
	got := MergeSkipped(ops, in)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if in[0].len != 2 {
		t.Errorf("input changed: %v", in)
	}
}
