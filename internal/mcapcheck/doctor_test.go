package mcapcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/longtest"
)

// TestDoctor writes the MCAP file of every shipped capture (pcaps/, the
// real VRPN captures of ../shared/captures when present), with protobuf
// and with JSON messages, and runs Foxglove's own checker on each:
// `mcap doctor` (the Go mcap CLI) must find nothing, no error and no
// warning (it warns, among other things, of messages out of log-time
// order). It skips where the CLI is not installed (.ci/run installs it).
func TestDoctor(t *testing.T) {
	longtest.Skip(t)
	cli := mcapCLI(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "dissect")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dissect")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var files []string
	for _, pat := range []string{"pcaps/*.pcap", "pcaps/*.pcapng", "pcaps/vrpn/*.pcap", "pcaps/vrpn/*.vrpnlog", "../shared/captures/vrpn/*.pcap*"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("%d captures found under %s", len(files), root)
	}
	for _, f := range files {
		c := dissecttest.ReadCapture(t, f)
		args := []string{"-r", f, "-o", "mcap", "--no-summary"}
		if c.DecodeAs != "" {
			args = append(args, "-d", c.DecodeAs)
		}
		if c.NeptuneInt16 {
			args = append(args, "--neptune-int16")
		}
		for _, enc := range []string{"protobuf", "json"} {
			t.Run(filepath.Base(f)+"/"+enc, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "run.mcap")
				if b, err := exec.Command(bin, append(args, "--mcap-encoding", enc, "--out", out)...).CombinedOutput(); err != nil {
					t.Fatalf("dissect %s: %v\n%s", strings.Join(args, " "), err, b)
				}
				b, err := exec.Command(cli, "doctor", out).CombinedOutput()
				if err != nil || len(b) > 0 {
					t.Errorf("mcap doctor: %v\n%s", err, b)
				}
			})
		}
	}
}

// mcapCLI finds Foxglove's mcap CLI on PATH or where go install puts it,
// or skips the test.
func mcapCLI(t *testing.T) string {
	t.Helper()
	var where []string
	if p, err := exec.LookPath("mcap"); err == nil {
		where = append(where, p)
	}
	if gobin, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(gobin)), "\n")
		if lines[0] != "" {
			where = append(where, filepath.Join(lines[0], "mcap"))
		}
		if len(lines) > 1 {
			where = append(where, filepath.Join(strings.Split(lines[1], string(os.PathListSeparator))[0], "bin", "mcap"))
		}
	}
	for _, p := range slices.Compact(where) {
		// Foxglove's: its doctor says what it checks.
		if b, err := exec.Command(p, "doctor", "--help").CombinedOutput(); err == nil && strings.Contains(string(b), "Check an MCAP file structure") {
			return p
		}
	}
	t.Skip("Foxglove's mcap CLI is not installed (go install github.com/foxglove/mcap/go/cli/mcap; .ci/run tries)")
	return ""
}
