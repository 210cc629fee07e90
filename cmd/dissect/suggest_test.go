package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDidYouMean: a first argument that is no file but close to a
// command gets one line naming the command, exit 2; one far from every
// command, or that looks like a path, keeps the file error (exit 1); a
// file of that name is read.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"protocol", "protocols"},
		{"protocls", "protocols"},
		{"Protocols2", "protocols"},
		{"seral", "serial"},
		{"reed", "read"},
		{"verison", "version"},
	} {
		stdout, stderr, code := cli(t, c.arg)
		want := `dissect: "` + c.arg + `" is neither a file nor a command; did you mean "` + c.want + `"?` + "\n"
		if code != exitUsage || stderr != want || stdout != "" {
			t.Errorf("dissect %s: exit %d, stderr %q; want 2 and %q", c.arg, code, stderr, want)
		}
	}
	for _, arg := range []string{"zzzzz", "protocol.pcap", "nothere/protocol"} {
		_, stderr, code := cli(t, arg)
		if code != exitError || !strings.Contains(stderr, "open "+arg+": no such file or directory") || strings.Contains(stderr, "did you mean") {
			t.Errorf("dissect %s: exit %d, stderr %q; want the file error, exit 1", arg, code, stderr)
		}
	}
	// A capture named like a typo is a capture.
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(pcapDir, "deltarobot_session.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "protocol"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	stdout, stderr, code := cli(t, "-o", "json", "protocol")
	if code != 0 || len(parseJSONL(t, stdout)) == 0 {
		t.Errorf("a capture named protocol: exit %d, stderr %q", code, stderr)
	}
}
