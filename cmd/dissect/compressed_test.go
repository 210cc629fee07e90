package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// compressors make compressed captures: the CLI tools when installed
// (independent of the decoders), and the libraries' writers.
var compressors = []struct {
	ext  string
	tool []string
	lib  func(b []byte) ([]byte, error)
}{
	{ext: "gz", tool: []string{"gzip", "-c"}},
	{ext: "zst", tool: []string{"zstd", "-q", "-c"}},
	{ext: "lz4", tool: []string{"lz4", "-q", "-c"}},
	{ext: "lib.gz", lib: func(b []byte) ([]byte, error) {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		err := w.Close()
		return buf.Bytes(), err
	}},
	{ext: "lib.zst", lib: func(b []byte) ([]byte, error) {
		var buf bytes.Buffer
		w, err := zstd.NewWriter(&buf)
		if err != nil {
			return nil, err
		}
		w.Write(b)
		err = w.Close()
		return buf.Bytes(), err
	}},
	{ext: "lib.lz4", lib: func(b []byte) ([]byte, error) {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		w.Write(b)
		err := w.Close()
		return buf.Bytes(), err
	}},
}

// compressTo writes the capture at path compressed by the i-th compressor
// into dir and returns the new path, skipping t when the tool is missing.
func compressTo(t *testing.T, dir, path string, i int) (string, []byte) {
	t.Helper()
	c := compressors[i]
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var z []byte
	if c.lib != nil {
		z, err = c.lib(raw)
	} else {
		if _, lerr := exec.LookPath(c.tool[0]); lerr != nil {
			t.Skipf("%s not installed (apt-get install %s)", c.tool[0], c.tool[0])
		}
		cmd := exec.Command(c.tool[0], c.tool[1:]...)
		cmd.Stdin = bytes.NewReader(raw)
		z, err = cmd.Output()
	}
	if err != nil {
		t.Fatalf("compressing %s (%s): %v", path, c.ext, err)
	}
	out := filepath.Join(dir, filepath.Base(path)+"."+c.ext)
	if err := os.WriteFile(out, z, 0o644); err != nil {
		t.Fatal(err)
	}
	return out, z
}

// TestCompressedCaptures: 'dissect -o json x.pcap.gz' (and .zst, .lz4)
// prints exactly what 'dissect -o json x.pcap' prints, for every shipped
// capture, from a file, from stdin ("-"), and for several compressed files
// in one run.
func TestCompressedCaptures(t *testing.T) {
	var files []string
	for _, g := range []string{"*.pcap", "*.pcapng"} {
		m, _ := filepath.Glob(filepath.Join(pcapDir, g))
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("%d captures in %s", len(files), pcapDir)
	}
	for i, c := range compressors {
		t.Run(c.ext, func(t *testing.T) {
			dir := t.TempDir()
			var zs []string
			for _, path := range files {
				want, stderr, code := cli(t, "-o", "json", "--no-summary", path)
				if code != 0 || want == "" {
					t.Fatalf("%s: exit %d: %s", path, code, stderr)
				}
				zpath, z := compressTo(t, dir, path, i)
				zs = append(zs, zpath)
				got, stderr, code := cli(t, "-o", "json", "--no-summary", zpath)
				if code != 0 || got != want {
					t.Errorf("%s: exit %d, output differs from the uncompressed file's (%d vs %d bytes); stderr %q", zpath, code, len(got), len(want), stderr)
				}
				var out, errb bytes.Buffer
				code = run([]string{"-o", "json", "--no-summary", "-"}, bytes.NewReader(z), &out, &errb)
				if code != 0 || out.String() != want {
					t.Errorf("%s on stdin: exit %d, output differs (%d vs %d bytes); stderr %q", zpath, code, out.Len(), len(want), errb.String())
				}
			}
			want, _, _ := cli(t, append([]string{"-o", "json", "--no-summary"}, files[:3]...)...)
			got, stderr, code := cli(t, append([]string{"-o", "json", "--no-summary"}, zs[:3]...)...)
			if code != 0 || got != want {
				t.Errorf("three files in one run: exit %d, output differs; stderr %q", code, stderr)
			}
		})
	}
}

// TestCompressedTruncatedCLI: a cut compressed capture prints the records
// decoded before the cut, then one error line naming the file with the
// decompressed and compressed offsets, and exits 1.
func TestCompressedTruncatedCLI(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(pcapDir, "deltarobot_session.pcap")
	zpath, z := compressTo(t, dir, path, 3) // gzip library writer
	if err := os.WriteFile(zpath, z[:len(z)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	full, _, _ := cli(t, "-o", "json", "--no-summary", path)
	got, stderr, code := cli(t, "-o", "json", "--no-summary", zpath)
	if code != 1 || got == "" || len(got) >= len(full) {
		t.Errorf("exit %d, %d bytes of output of %d", code, len(got), len(full))
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "dissect: "+zpath+": at byte ") || !strings.Contains(last, "gzip stream truncated at compressed byte ") {
		t.Errorf("stderr %q: want one line naming %s and the offsets", stderr, zpath)
	}
}
