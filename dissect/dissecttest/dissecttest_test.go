package dissecttest

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit() // stop like Fatal; run waits for the goroutine
}

// run calls f on its own goroutine with a recorder and returns it.
func run(f func(t testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestCheckTiling(t *testing.T) {
	rec := func(src string, off, n int64) *dissect.Record {
		return &dissect.Record{Src: src, Offset: off, Length: n, Type: "x"}
	}
	dirOf := func(r *dissect.Record) dissect.Dir {
		if r.Src == "b" {
			return 1
		}
		return 0
	}
	good := []*dissect.Record{rec("a", 0, 3), rec("b", 0, 2), rec("a", 3, 1)}
	for _, c := range []struct {
		name string
		recs []*dissect.Record
		size [2]int64
		fail bool
	}{
		{"good", good, [2]int64{4, 2}, false},
		{"short", good, [2]int64{5, 2}, true},
		{"hole", []*dissect.Record{rec("a", 0, 3), rec("a", 4, 1)}, [2]int64{5, 0}, true},
		{"overlap", []*dissect.Record{rec("a", 0, 3), rec("a", 2, 1)}, [2]int64{3, 0}, true},
		{"empty record", []*dissect.Record{rec("a", 0, 0)}, [2]int64{0, 0}, true},
	} {
		r := run(func(tb testing.TB) { CheckTiling(tb, c.recs, c.size, dirOf) })
		if r.failed != c.fail {
			t.Errorf("%s: failed %v (%s), want %v", c.name, r.failed, r.msg, c.fail)
		}
	}
}

func TestCheckWarnings(t *testing.T) {
	for _, c := range []struct {
		got, want []string
		fail      bool
	}{
		{[]string{"bad length 3"}, []string{"length"}, false},
		{nil, nil, false},
		{[]string{"bad length 3"}, []string{"crc"}, true},
		{[]string{"a", "b"}, []string{"a"}, true},
		{nil, []string{"a"}, true},
	} {
		r := run(func(tb testing.TB) { CheckWarnings(tb, c.got, c.want) })
		if r.failed != c.fail {
			t.Errorf("%q vs %q: failed %v, want %v", c.got, c.want, r.failed, c.fail)
		}
	}
}

func TestDescribeValue(t *testing.T) {
	v := dissect.Object([]dissect.Field{
		{Key: "i", Value: dissect.Int(-1)},
		{Key: "u", Value: dissect.Uint(2)},
		{Key: "f", Value: dissect.Float32(0.5)},
		{Key: "s", Value: dissect.Str("x")},
		{Key: "b", Value: dissect.Bytes([]byte{0xab})},
		{Key: "a", Value: dissect.Array([]dissect.Field{dissect.Elem(dissect.Bool(true)), dissect.Elem(dissect.Value{})})},
		{Key: "t", Value: dissect.Time(time.Date(2024, 5, 1, 12, 0, 0, 5, time.UTC))},
	})
	want := `{i: -1, u: 2u, f: 0.5f32, s: "x", b: 0xab, a: [true, null], t: 2024-05-01T12:00:00.000000005Z}`
	if got := DescribeValue(v); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r := &dissect.Record{Type: "ping", Offset: 4, Length: 10, Fields: []dissect.Field{{Key: "id", Value: dissect.Uint(7)}}, Warnings: []string{"w"}}
	if got, want := DescribeRecord(r), `ping@4+10 {id: 7u} warnings ["w"]`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDataChunks(t *testing.T) {
	reg := Registry(t, nil)
	var c Collector
	st := dissect.NewStream(dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}, Name: [2]string{"a", "b"}}, reg, &c, dissect.StreamOptions{})
	Data(st, 0, time.Time{}, Hex("01 02 03 04 05"), nil, nil)
	st.End(0, time.Time{})
	st.End(1, time.Time{})
	var n int64
	for _, r := range c.From("a") {
		n += r.Length
	}
	if n != 5 || len(c.From("b")) != 0 {
		t.Fatalf("records cover %d bytes of a, %d records from b", n, len(c.From("b")))
	}
	if got := Cat([]byte{1}, nil, []byte{2, 3}); string(got) != "\x01\x02\x03" {
		t.Errorf("Cat = %x", got)
	}
}
