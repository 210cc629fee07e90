package dissecttest

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

func TestCheckFields(t *testing.T) {
	got := dissect.Fields{{Key: "a", Value: dissect.Uint(1)}, {Key: "b", Value: dissect.Str("x")}}
	for _, c := range []struct {
		want []dissect.Field
		fail bool
	}{
		{[]dissect.Field{{Key: "a", Value: dissect.Uint(1)}, {Key: "b", Value: dissect.Str("x")}}, false},
		{[]dissect.Field{{Key: "a", Value: dissect.Int(1)}, {Key: "b", Value: dissect.Str("x")}}, true},
		{[]dissect.Field{{Key: "b", Value: dissect.Str("x")}, {Key: "a", Value: dissect.Uint(1)}}, true},
		{[]dissect.Field{{Key: "a", Value: dissect.Uint(1)}}, true},
	} {
		r := run(func(tb testing.TB) { CheckFields(tb, got, c.want...) })
		if r.failed != c.fail {
			t.Errorf("want %v: failed %v (%s), want %v", c.want, r.failed, r.msg, c.fail)
		}
	}
}

func TestSession(t *testing.T) {
	s := NewSession(toy{}, dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}}, true)
	if n, err := s.Parse(1, Hex("02 05 06 01")); n != 3 || err != nil || s.Rec.Type != "odd" || s.Ctx.Dir != 1 {
		t.Fatalf("Parse = %d, %v, type %q, dir %d", n, err, s.Rec.Type, s.Ctx.Dir)
	}
	CheckFields(t, s.Rec.Fields, dissect.Field{Key: "first", Value: dissect.Uint(5)})
	if n, err := s.Parse(0, Hex("03 04")); n != 4 || !errors.Is(err, dissect.ErrNeedMore) || s.Rec.Type != "" || len(s.Rec.Fields) != 0 {
		t.Fatalf("Parse = %d, %v: the record is not reset (%q %v)", n, err, s.Rec.Type, s.Rec.Fields)
	}
}

// TestFeed feeds toy messages as byte-stream data in chunks, with a gap
// and ends, and as datagrams (one empty).
func TestFeed(t *testing.T) {
	t0 := time.Unix(1, 0)
	info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}, Name: [2]string{"a", "b"}}
	reg := Registry(t, nil, toy{})
	reg.AddRule(dissect.Rule{Transport: dissect.TCP, Proto: reg.Lookup("toy")})
	evs := []Event{{Dir: 0, At: t0, Data: Hex("01 02 02 03 04")}, {Dir: 1, At: t0, Gap: 3}, {Dir: 1, At: t0, Data: Hex("01 07")}, {Dir: 0, At: t0}, {Dir: 1, At: t0}}
	for _, rng := range []*rand.Rand{nil, newRand(1)} {
		recs, _ := Feed(t, reg, info, dissect.StreamOptions{Decode: true}, evs, rng, []int{1, 2})
		var got []string
		for _, r := range recs {
			got = append(got, r.Src+" "+DescribeRecord(r))
		}
		want := []string{"a even@0+2 {first: 2u}", "a odd@2+3 {first: 3u}", "b gap@0+3 {}", "b odd@3+2 {first: 7u}"}
		if len(got) != len(want) {
			t.Fatalf("records %q, want %q", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("record %d: %s, want %s", i, got[i], want[i])
			}
		}
	}
	uinfo := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.UDP}, Name: [2]string{"a", "b"}}
	ureg := Registry(t, nil, toy{})
	ureg.AddRule(dissect.Rule{Transport: dissect.UDP, Proto: ureg.Lookup("toy")})
	recs, _ := Feed(t, ureg, uinfo, dissect.StreamOptions{}, []Event{{Dir: 0, At: t0, Data: Hex("01 02 02")}, {Dir: 0, At: t0, Data: []byte{}}, {Dir: 0, At: t0, Data: Hex("01 04")}, {Dir: 0, At: t0}}, nil, nil)
	if len(recs) != 3 || recs[0].Type != "even" || recs[1].Type != dissect.TypeSkipped || recs[1].Offset != 2 || recs[1].Length != 1 || recs[2].Type != "even" || recs[2].Offset != 3 {
		t.Fatalf("datagrams (a message never spans two): %v", recs)
	}
}

func TestDiffLines(t *testing.T) {
	skip := func(reason string) *dissect.Record {
		return &dissect.Record{Type: dissect.TypeSkipped, Length: 2, Fields: dissect.Fields{{Key: "reason", Value: dissect.Str(reason)}}}
	}
	a := []*dissect.Record{{Type: "x", Length: 1, Warnings: []string{"w"}, Fields: dissect.Fields{{Key: "f", Value: dissect.Int(1)}}}, skip("r")}
	same := []*dissect.Record{{Type: "x", Length: 1, Warnings: []string{"w"}}, skip("r")}
	if d := DiffLines(a, same); d != "" {
		t.Errorf("fields count: %s", d)
	}
	for _, b := range [][]*dissect.Record{
		{{Type: "x", Length: 1}, skip("r")},
		{{Type: "x", Length: 1, Warnings: []string{"w"}}, skip("s")},
		{{Type: "x", Length: 1, Warnings: []string{"w"}}},
		{{Type: "y", Length: 1, Warnings: []string{"w"}}, skip("r")},
	} {
		if DiffLines(a, b) == "" {
			t.Errorf("no difference found with %v", b)
		}
	}
}

// TestCheckedParseCheck: a protocol's own rule fails the test through
// Checked.
func TestCheckedParseCheck(t *testing.T) {
	odd := func(c *dissect.Ctx, _ []byte, _ int, err error) string {
		if err == nil && c.Rec.Type == "odd" {
			return "odd message"
		}
		return ""
	}
	for _, c := range []struct {
		in   string
		fail bool
	}{{"01 02", false}, {"01 03", true}} {
		r := run(func(tb testing.TB) {
			s := NewSession(Checked(tb, toy{}, odd), dissect.StreamInfo{}, true)
			s.Parse(0, Hex(c.in))
		})
		if r.failed != c.fail {
			t.Errorf("%s: failed %v (%s), want %v", c.in, r.failed, r.msg, c.fail)
		}
	}
}

func TestCountFields(t *testing.T) {
	v := dissect.Object([]dissect.Field{
		{Key: "a", Value: dissect.Int(1)},
		{Key: "b", Value: dissect.Array([]dissect.Field{dissect.Elem(dissect.Int(2)), dissect.Elem(dissect.Object([]dissect.Field{{Key: "c", Value: dissect.Str("x")}}))})},
	})
	if w := dissect.Array([]dissect.Field{dissect.Elem(dissect.Int(2)), dissect.Elem(dissect.Str("x"))}); !Array(dissect.Int(2), dissect.Str("x")).Equal(w) {
		t.Errorf("Array: %s", DescribeValue(Array(dissect.Int(2), dissect.Str("x"))))
	}
	if n := CountFields(v); n != 5 {
		t.Errorf("CountFields = %d, want 5 (a, b, b[0], b[1], b[1].c)", n)
	}
	if n := CountFields(dissect.Int(3)); n != 0 {
		t.Errorf("CountFields(3) = %d", n)
	}
}
