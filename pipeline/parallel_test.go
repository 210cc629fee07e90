package pipeline

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/leakcheck"
	"github.com/dissect-tools/dissect/internal/testenc/interleave"
	"github.com/dissect-tools/dissect/output"
)

// runJSON decodes pkts (or the capture file) and returns the JSON Lines
// that sink makes.
func runJSON(t *testing.T, src capture.Source, raw bool, sink dissect.Sink) {
	t.Helper()
	reg := deltaRegistry(t)
	if _, err := Run(context.Background(), src, Config{Registry: reg, Sink: sink, Raw: raw}); err != nil {
		t.Fatal(err)
	}
	if c, ok := sink.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func serialJSON(t *testing.T, src func() capture.Source, raw bool) []byte {
	var want bytes.Buffer
	j := output.NewJSON(&want, false)
	j.SetRaw(raw)
	runJSON(t, src(), raw, j)
	return want.Bytes()
}

// The parallel writer's output is byte for byte the one-goroutine JSON
// writer's, whatever the number of workers and the batch size, on a
// capture of 64 interleaved connections with gaps and skipped bytes, with
// and without -x, and on every shipped capture.
func TestParallelOutputIsSerialOutput(t *testing.T) {
	pkts, err := interleave.Deltarobot(64, 40)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]func() capture.Source{
		"interleaved64": func() capture.Source { return &sliceSource{pkts: pkts} },
	}
	files, _ := filepath.Glob("../pcaps/*.pcap*")
	for _, f := range files {
		sources[filepath.Base(f)] = func() capture.Source {
			src, err := capture.OpenFile(f)
			if err != nil {
				t.Fatal(err)
			}
			return src
		}
	}
	for name, src := range sources {
		for _, raw := range []bool{false, true} {
			want := serialJSON(t, src, raw)
			if name == "interleaved64" {
				for _, k := range []string{`"type":"gap"`, `"type":"skipped"`, `"stream":63,`} {
					if !bytes.Contains(want, []byte(k)) {
						t.Fatalf("the generated capture has no %s", k)
					}
				}
			}
			for _, c := range []struct{ workers, batch int }{{1, 1}, {2, 7}, {4, 1024}, {3, 100000}} {
				var got bytes.Buffer
				p := NewParallel(&got, func() Appender { return output.NewJSONLines(raw) }, c.workers, c.batch)
				runJSON(t, src(), raw, p)
				if !bytes.Equal(got.Bytes(), want) {
					t.Errorf("%s raw=%v workers=%d batch=%d: %d bytes, serial %d; first difference at %d",
						name, raw, c.workers, c.batch, got.Len(), len(want), firstDifference(got.Bytes(), want))
				}
			}
		}
	}
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

// A write error reaches the caller: Record returns it soon after, Flush
// and Close return it, and every goroutine has ended after Close.
func TestParallelWriteErrorAndNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	p := NewParallel(&failWriter{n: 1000}, func() Appender { return output.NewJSONLines(false) }, 3, 10)
	r := &dissect.Record{Proto: "p", Type: "t", Fields: dissect.Fields{{Key: "x", Value: dissect.Int(1)}}}
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		err = p.Record(r)
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Record: %v", err)
	}
	if err := p.Close(); err == nil {
		t.Fatal("Close: no error")
	}
	leakcheck.Settled(t, before, "Close")
}

// Copies in a batch stay as they were when the record's buffers are
// reused, and a batch reused after Reset allocates nothing.
func TestBatchCopiesWhatIsBorrowed(t *testing.T) {
	buf := []byte{1, 2, 3}
	fields := dissect.Fields{
		{Key: "b", Value: dissect.Bytes(buf)},
		{Key: "o", Value: dissect.Object([]dissect.Field{{Key: "in", Value: dissect.Bytes(buf[1:])}})},
	}
	r := &dissect.Record{Type: "t", Fields: fields, Warnings: []string{"w"}, Raw: buf}
	var b dissect.Batch
	b.Add(r)
	buf[0], buf[1], buf[2] = 9, 9, 9
	fields[0].Key = "changed"
	r.Warnings[0] = "changed"
	var j bytes.Buffer
	out := output.NewJSON(&j, false)
	out.SetRaw(true)
	if err := out.Record(&b.Records[0]); err != nil {
		t.Fatal(err)
	}
	out.Flush()
	want := `"fields":{"b":"010203","o":{"in":"0203"}},"warnings":["w"],"raw":"010203"}`
	if !strings.Contains(j.String(), want) {
		t.Errorf("copy reads %s, want ...%s", j.String(), want)
	}
	b.Reset()
	if n := testing.AllocsPerRun(100, func() { b.Reset(); b.Add(r) }); n != 0 {
		t.Errorf("Add after Reset: %v allocations", n)
	}
}
