package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/internal/longtest"
	"github.com/dissect-tools/dissect/pipeline"
)

// besideFiles are the captures of the writers' --threads tests: every
// shipped one in long runs, else a sample of every protocol's framing
// (VRPN's types named by the wire, HandControl's warnings, Deltarobot's
// garbage as records of no declaration), and always the generated one of
// many batches (gaps and skipped bytes).
func besideFiles(t *testing.T) []string {
	gen := writeInterleaved(t, 64, 200)
	files := append(pcaps(t), gen)
	if !longtest.On() {
		files = sampleFiles(files, gen, "vrpn_udp_tcp", "vrpn_multi_device", "handcontrol_serial", "deltarobot_session", "deltarobot_garbage")
	}
	return files
}

// besideRuns are the forms of a run the writers' --threads tests try:
// plain, with the bytes (-x: the lake's raw column), and behind a filter
// and statistics.
var besideRuns = [][]string{nil, {"-x"}, {"-Y", `type != "ping"`, "-z", "conv"}}

// The writers run beside the decoder from --threads 3, and the MCAP file
// is then byte for byte the one written in one goroutine, as with
// --threads 2 (the default's), on every capture and form.
func TestThreadsGiveTheSameMCAP(t *testing.T) {
	checkBeside(t, "mcap", "")
	dir := t.TempDir()
	for _, f := range besideFiles(t) {
		for _, extra := range besideRuns {
			write := func(threads string) []byte {
				out := filepath.Join(dir, "t"+threads+".mcap")
				args := append([]string{f, "-o", "mcap", "--out", out, "-d", "tcp.port==4000,deltarobot", "--no-summary", "--threads", threads}, extra...)
				if _, errs, code := cli(t, args...); code != 0 {
					t.Fatalf("%s %v --threads %s: exit %d: %s", filepath.Base(f), extra, threads, code, errs)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			want := write("1")
			for _, n := range []string{"2", "3"} {
				if got := write(n); !bytes.Equal(got, want) {
					t.Errorf("%s %v --threads %s: %d bytes, --threads 1 %d; first difference at byte %d",
						filepath.Base(f), extra, n, len(got), len(want), firstByteDiff(got, want))
				}
			}
		}
	}
}

// The lake written beside the decoder, read back, is the lake written in
// one goroutine: the same parts (--part-id names them alike), each with
// the same schema and rows, capture names included (two files read as
// one run), on every capture and form.
func TestThreadsGiveTheSameLake(t *testing.T) {
	checkBeside(t, "parquet", t.TempDir())
	files := besideFiles(t)
	inputs := [][]string{{files[0], files[len(files)-1]}} // two captures in one run
	for _, f := range files {
		inputs = append(inputs, []string{f})
	}
	for _, in := range inputs {
		for _, extra := range besideRuns {
			write := func(threads string) string {
				lake := t.TempDir()
				args := append(append([]string{"-o", "parquet", "--out", lake, "--part-id", "p", "-d", "tcp.port==4000,deltarobot", "--no-summary", "--threads", threads}, in...), extra...)
				if _, errs, code := cli(t, args...); code != 0 {
					t.Fatalf("%v %v --threads %s: exit %d: %s", in, extra, threads, code, errs)
				}
				return lake
			}
			want := readLake(t, write("1"))
			if len(want) == 0 {
				t.Fatalf("%v %v: an empty lake", in, extra)
			}
			for _, n := range []string{"2", "3"} {
				got := readLake(t, write(n))
				if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
					t.Errorf("%v %v --threads %s: parts %v, --threads 1 %v", in, extra, n, sortedKeys(got), sortedKeys(want))
					continue
				}
				for part, w := range want {
					if g := got[part]; g.schema != w.schema || !slices.EqualFunc(g.rows, w.rows, parquet.Row.Equal) {
						t.Errorf("%v %v --threads %s: %s: %d rows, --threads 1 %d (schemas equal: %v)",
							in, extra, n, part, len(g.rows), len(w.rows), g.schema == w.schema)
					}
				}
			}
		}
	}
}

// checkBeside checks that the flags put the writer of format beside the
// decoder (pipeline.Beside) from --threads 3 (0: when there are more than
// 2 CPUs): what the tests above compare is then the writer beside the
// decoder against the writer alone.
func checkBeside(t *testing.T, format, out string) {
	t.Helper()
	if out == "" {
		out = filepath.Join(t.TempDir(), "x")
	}
	for _, threads := range []string{"0", "1", "2", "3"} {
		o := &readOpts{}
		cmd := &cobra.Command{}
		addReadFlags(cmd, o)
		if err := cmd.ParseFlags([]string{"-o", format, "--out", out, "--threads", threads}); err != nil {
			t.Fatal(err)
		}
		_, s, err := o.setup(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		_, beside := s.(*pipeline.Beside)
		if beside != (threads == "3" || threads == "0" && runtime.GOMAXPROCS(0) > 2) {
			t.Errorf("-o %s --threads %s: the writer is a %T", format, threads, s)
		}
		if err := closeOutput(s); err != nil {
			t.Fatal(err)
		}
	}
}

// firstByteDiff is the offset of the first byte where a and b differ.
func firstByteDiff(a, b []byte) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return i
}

// lakePart is a Parquet file read back: its schema and its rows.
type lakePart struct {
	schema string
	rows   []parquet.Row
}

// readLake reads every part of a lake back, by path within the lake.
func readLake(t *testing.T, lake string) map[string]lakePart {
	t.Helper()
	parts := map[string]lakePart{}
	err := filepath.WalkDir(lake, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(lake, path)
		if !strings.HasSuffix(path, ".parquet") {
			t.Errorf("left in the lake: %s", rel)
			return nil
		}
		pf, closer, err := openParquet(path)
		if err != nil {
			return err
		}
		defer closer.Close()
		p := lakePart{schema: pf.Schema().String()}
		buf := make([]parquet.Row, 64)
		for _, rg := range pf.RowGroups() {
			rows := rg.Rows()
			for {
				n, err := rows.ReadRows(buf)
				for _, r := range buf[:n] {
					p.rows = append(p.rows, r.Clone())
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					rows.Close()
					return err
				}
			}
			rows.Close()
		}
		if int64(len(p.rows)) != pf.NumRows() {
			t.Errorf("%s: %d rows read back of %d", rel, len(p.rows), pf.NumRows())
		}
		parts[rel] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return parts
}
