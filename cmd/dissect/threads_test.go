package main

import (
	"github.com/dissect-tools/dissect/internal/longtest"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/leakcheck"
	"github.com/dissect-tools/dissect/internal/testenc/interleave"
	"github.com/dissect-tools/dissect/pipeline"
)

// writeInterleaved writes a pcapng of n interleaved Deltarobot
// connections (gaps and garbage included) and returns its path.
func writeInterleaved(t *testing.T, n, msgs int) string {
	t.Helper()
	pkts, err := interleave.Deltarobot(n, msgs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "interleaved.pcapng")
	s, err := pipeline.CreateSave(path, "gen0", capture.LinkEthernet, 65535, pipeline.Ring{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		if err := s.WritePacket(&pkts[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(pipeline.SaveStats{Captured: uint64(len(pkts))}); err != nil {
		t.Fatal(err)
	}
	return path
}

// --threads changes who formats the JSON, never what is written: the
// output of 2 and 4 formatting goroutines is byte for byte the output of
// one, on every shipped capture and on 64 interleaved streams with gaps
// and skipped bytes (more records than one batch), with -x, -Y and -z.
func TestThreadsGiveTheSameOutput(t *testing.T) {
	gen := writeInterleaved(t, 64, 200)
	files := append(pcaps(t), gen)
	if !longtest.On() {
		files = sampleFiles(files, gen, "vrpn_udp_tcp", "handcontrol_serial")
	}
	for _, f := range files {
		for _, extra := range [][]string{nil, {"-x"}, {"-Y", "type != \"ping\""}, {"-z", "conv"}} {
			args := append([]string{f, "-o", "json", "-d", "tcp.port==4000,deltarobot", "--no-summary"}, extra...)
			want, errs, code := cli(t, append(args, "--threads", "1")...)
			if code != 0 {
				t.Fatalf("%s %v --threads 1: exit %d: %s", filepath.Base(f), extra, code, errs)
			}
			if f == gen {
				for _, k := range []string{`"type":"gap"`, `"type":"skipped"`, `"stream":63,`} {
					if !strings.Contains(want, k) {
						t.Fatalf("the generated capture's output has no %s", k)
					}
				}
				if n := strings.Count(want, "\n"); n < 4*1024 {
					t.Fatalf("the generated capture gives %d records: too few to fill several batches", n)
				}
			}
			for _, n := range []string{"2", "4"} {
				got, errs, code := cli(t, append(args, "--threads", n)...)
				if code != 0 {
					t.Fatalf("%s %v --threads %s: exit %d: %s", filepath.Base(f), extra, n, code, errs)
				}
				if got != want {
					t.Errorf("%s %v --threads %s: %d bytes, --threads 1 %d; first difference at %s",
						filepath.Base(f), extra, n, len(got), len(want), firstDiff(want, got))
				}
			}
		}
	}
}

// -q on two goroutines prints the summary of -q on one, on every shipped
// capture and the generated one (the time taken left out).
func TestThreadsQuietSummary(t *testing.T) {
	files := append(pcaps(t), writeInterleaved(t, 64, 200))
	for _, f := range files {
		var sums [2]string
		for i, n := range []string{"1", "2"} {
			out, errs, code := cli(t, f, "-q", "-d", "tcp.port==4000,deltarobot", "--threads", n)
			if code != 0 || out != "" {
				t.Fatalf("%s -q --threads %s: exit %d, stdout %q: %s", filepath.Base(f), n, code, out, errs)
			}
			sums[i] = regexp.MustCompile(`read in [^\n]*`).ReplaceAllString(errs, "")
		}
		if sums[0] != sums[1] || !strings.Contains(sums[0], "messages:") {
			t.Errorf("%s: -q --threads 2 prints\n%s\n--threads 1 prints\n%s", filepath.Base(f), sums[1], sums[0])
		}
	}
}

// --threads takes 0 (one per CPU) to 1024.
func TestThreadsUsage(t *testing.T) {
	for _, n := range []string{"-1", "1025", "x"} {
		_, errOut, code := cli(t, "-o", "json", "--threads", n, pcaps(t)[0])
		if code != 2 || !strings.Contains(errOut, "--threads") {
			t.Errorf("--threads %s: exit %d, stderr %q; want 2 and a message naming --threads", n, code, errOut)
		}
	}
}

// slowWriter takes its time over every write, like a reader of a pipe
// that is busy elsewhere.
type slowWriter struct {
	b     strings.Builder
	delay time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	return w.b.Write(p)
}

// A slow reader of the JSON gets every line, in order, with four
// formatting goroutines, and no goroutine is left behind.
func TestThreadsSlowReader(t *testing.T) {
	gen := writeInterleaved(t, 64, 200)
	args := []string{gen, "-o", "json", "-d", "tcp.port==4000,deltarobot", "--no-summary"}
	want, _, _ := cli(t, append(args, "--threads", "1")...)
	before := runtime.NumGoroutine()
	w := &slowWriter{delay: 20 * time.Millisecond}
	var errb strings.Builder
	if code := run(append(args, "--threads", "4"), strings.NewReader(""), w, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got := w.b.String(); got != want {
		t.Fatalf("the slow reader got %d bytes, --threads 1 writes %d; first difference at %s", len(got), len(want), firstDiff(want, got))
	}
	leakcheck.Settled(t, before, "the run")
}

// sampleFiles keeps, of files, those whose names contain one of names, and
// always; the short runs' choice of captures (every protocol's framing on
// TCP, UDP and serial, and the generated one's batches).
func sampleFiles(files []string, always string, names ...string) []string {
	var out []string
	for _, f := range files {
		keep := f == always
		for _, n := range names {
			keep = keep || strings.Contains(filepath.Base(f), n)
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}
