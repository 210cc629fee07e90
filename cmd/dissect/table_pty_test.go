package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// The table on a real terminal: each shipped capture is decoded by a child
// process (this test binary, see TestHelperProcess) whose stdout
// is a pseudo-terminal of a given size, with COLUMNS unset, so the width
// comes from the terminal itself.

// runInPTY runs dissect with args, its stdout a terminal cols columns wide
// in the locale lang, and returns what it wrote there (line ends as "\n").
// Its stderr is the terminal too when withStderr is set, else it is only
// shown when dissect fails. It skips the test when no pseudo-terminal can
// be opened.
func runInPTY(t *testing.T, cols uint16, lang string, withStderr bool, args ...string) string {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "COLUMNS", "LINES", "LC_ALL", "LC_CTYPE", "LANG":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, helperEnv+"="+string(js), "LANG="+lang)
	var stderr bytes.Buffer
	if !withStderr {
		cmd.Stderr = &stderr
	}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: cols, Rows: 40})
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer f.Close()
	var out bytes.Buffer
	var wg sync.WaitGroup
	wg.Go(func() { io.Copy(&out, f) }) // ends with EIO once the child is gone
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("dissect did not exit")
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("dissect %v: %v\n%s", args, err, stderr.String())
	}
	wg.Wait()
	return strings.ReplaceAll(out.String(), "\r\n", "\n")
}

// captureArgs returns the flags each shipped capture needs, from its
// truth file (decode_as, decoder_options), and the capture's path.
func captureArgs(t *testing.T, path string) []string {
	t.Helper()
	args := append([]string{"--no-summary", "--progress", "never"}, truthFlags(dissecttest.ReadCapture(t, path))...)
	return append(args, path)
}

func ptyCaptures(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(pcapDir, "*.pcap*"))
	if len(files) == 0 {
		t.Fatalf("no captures in %s", pcapDir)
	}
	return files
}

// columnStarts returns the column (rune index: every character the
// shipped captures produce takes one column) where each header label
// starts, by name: SOURCE → DESTINATION has spaces in it.
func columnStarts(header string) map[string]int {
	starts := map[string]int{}
	r := []rune(header)
	for _, label := range []string{"TIME", "STREAM", "SOURCE", "SRC", "PROTO", "TYPE", "INFO"} {
		for i := 0; i+len(label) <= len(r); i++ {
			if string(r[i:i+len(label)]) == label && (i == 0 || r[i-1] == ' ') {
				starts[label] = i
				break
			}
		}
	}
	return starts
}

// checkTable checks a table written to a terminal cols wide: no line is
// wider; the header has the labels want (and no others); in every record
// line, each column starts at its label's column (a character that is not
// a space) right after a space, so no value spills into the next column
// and no column shifts.
func checkTable(t *testing.T, what, out string, cols int, want []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("%s: no records:\n%s", what, out)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > cols {
			t.Errorf("%s: line %d is %d columns wide, the terminal %d:\n%s", what, i+1, n, cols, l)
		}
	}
	starts := columnStarts(lines[0])
	if len(starts) != len(want) {
		t.Fatalf("%s: header %q has the columns %v, want %v", what, lines[0], starts, want)
	}
	for _, label := range want {
		if _, ok := starts[label]; !ok {
			t.Fatalf("%s: header %q lacks %s", what, lines[0], label)
		}
	}
	for i, l := range lines[1:] {
		r := []rune(l)
		for label, s := range starts {
			if s == 0 {
				if len(r) == 0 || r[0] == ' ' {
					t.Fatalf("%s: line %d does not start with its TIME:\n%s", what, i+2, l)
				}
				continue
			}
			if s >= len(r) && label == "INFO" {
				continue // an empty INFO
			}
			if s >= len(r) || r[s-1] != ' ' || r[s] == ' ' {
				t.Fatalf("%s: line %d: its %s column is not under the header's (column %d):\n%s\n%s", what, i+2, label, s+1, lines[0], l)
			}
		}
	}
}

// TestTablePTY: every shipped capture on 80- and 120-column terminals, in
// the default time format and with -t ad (26 columns of time), fits the
// terminal with every row under the header.
func TestTablePTY(t *testing.T) {
	files := ptyCaptures(t)
	for _, tc := range []struct {
		cols int
		time string
		want []string
	}{
		{80, "r", []string{"TIME", "STREAM", "TYPE", "INFO"}},
		{120, "r", []string{"TIME", "STREAM", "SOURCE", "PROTO", "TYPE", "INFO"}},
		{80, "ad", []string{"TIME", "TYPE", "INFO"}},
		{120, "ad", []string{"TIME", "STREAM", "SOURCE", "TYPE", "INFO"}},
	} {
		for _, f := range files {
			name := filepath.Base(f) + "/" + tc.time + "/" + strconv.Itoa(tc.cols)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				args := append([]string{"-t", tc.time}, captureArgs(t, f)...)
				out := runInPTY(t, uint16(tc.cols), "C.UTF-8", false, args...)
				checkTable(t, name, out, tc.cols, tc.want)
				if slices.Contains(tc.want, "SOURCE") && !strings.Contains(out, " → ") {
					t.Errorf("no UTF-8 arrow in a UTF-8 locale:\n%s", out)
				}
			})
		}
	}
}

// TestTablePTYASCII: under LANG=C every shipped capture's table (and its
// summary, on the same terminal) is ASCII: arrows are ->, ellipses ...,
// and the columns still line up.
func TestTablePTYASCII(t *testing.T) {
	for _, f := range ptyCaptures(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			args := captureArgs(t, f)[1:] // with the summary
			args = append([]string{"--progress", "never"}, args...)
			out := runInPTY(t, 100, "C", true, args...)
			for i := 0; i < len(out); i++ {
				if out[i] >= 0x80 {
					t.Fatalf("byte %#x at %d under LANG=C:\n%s", out[i], i, out)
				}
			}
			table, summary, ok := strings.Cut(out, "\n== dissect summary ==")
			if !ok || !strings.Contains(summary, "+-") {
				t.Fatalf("no ASCII summary:\n%s", out)
			}
			checkTable(t, filepath.Base(f), strings.TrimSuffix(table, "\n"), 100, []string{"TIME", "STREAM", "SOURCE", "TYPE", "INFO"})
			if !strings.Contains(table, " -> ") {
				t.Errorf("no ASCII arrow:\n%s", table)
			}
		})
	}
}

// TestProtocolsPTY: 'dissect protocols' fits an 80-column terminal, in
// plain columns (no box drawing), and is ASCII under LANG=C.
func TestProtocolsPTY(t *testing.T) {
	for _, lang := range []string{"C.UTF-8", "C"} {
		out := runInPTY(t, 80, lang, false, "protocols")
		for i, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("%s: line %d is %d columns:\n%s", lang, i+1, n, l)
			}
			for _, r := range l {
				if r >= 0x2500 && r <= 0x257f {
					t.Fatalf("%s: box drawing in line %d:\n%s", lang, i+1, l)
				}
				if lang == "C" && r >= 0x80 {
					t.Fatalf("LANG=C: %q in line %d:\n%s", r, i+1, l)
				}
			}
		}
		for _, want := range []string{"NAME", "DESCRIPTION", "vrpn", "tcp/3883, udp/3883", "deltarobot", "DeltaRVr", "handcontrol", "neptune-wiki", "roboid"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: lacks %q:\n%s", lang, want, out)
			}
		}
	}
}
