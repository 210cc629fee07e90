package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A file that cannot be read gets its one-line error and nothing else: no
// empty summary before it. A readable file beside it still gets its
// summary.
func TestMissingFileNoEmptySummary(t *testing.T) {
	_, stderr, code := cli(t, "nosuch.pcap")
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	if stderr != "dissect: open nosuch.pcap: no such file or directory\n" {
		t.Errorf("stderr %q: want only the error line", stderr)
	}
	good := filepath.Join(pcapDir, "deltarobot_session.pcap")
	_, stderr, code = cli(t, "-q", "nosuch.pcap", good)
	if code != exitError || !strings.Contains(stderr, "nosuch.pcap") || !strings.Contains(stderr, "packets") {
		t.Errorf("exit %d, stderr %q: want the error and the summary of the good file", code, stderr)
	}
}

// -c N on files stops after N packets, as tshark -c: the summary counts N
// packets and every record comes from them.
func TestCountOnFiles(t *testing.T) {
	file := filepath.Join(pcapDir, "deltarobot_session.pcap")
	_, full, _ := cli(t, "-q", file)
	for _, args := range [][]string{{"-c", "5", file}, {"read", "-c", "5", file}} {
		stdout, stderr, code := cli(t, append([]string{"-o", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		if !regexp.MustCompile(`packets:\s+5,`).MatchString(stderr) {
			t.Errorf("%q: summary %q does not count 5 packets", args, stderr)
		}
		if regexp.MustCompile(`packets:\s+5,`).MatchString(full) {
			t.Fatalf("the whole capture has 5 packets; pick another")
		}
		// Five packets of the session: the handshake and little more;
		// fewer records than the whole file.
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			if line == "" {
				continue
			}
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			n++
		}
		all, _, _ := cli(t, "-o", "json", file)
		if n >= strings.Count(all, "\n") {
			t.Errorf("%q: %d records, the whole file has %d", args, n, strings.Count(all, "\n"))
		}
	}
	if _, stderr, code := cli(t, "-c", "-1", file); code != exitUsage || !strings.Contains(stderr, "-c -1") {
		t.Errorf("-c -1: exit %d, %q", code, stderr)
	}
}

// A usage error points at the help of the command that was run.
func TestUsageErrorPointsAtSubcommandHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		help string
	}{
		{[]string{"serial", "--baud", "-1", "/dev/null"}, "Run 'dissect serial --help' for usage."},
		{[]string{"serial", "--nosuchflag"}, "Run 'dissect serial --help' for usage."},
		{[]string{"read", "--time-format", "x", "f.pcap"}, "Run 'dissect read --help' for usage."},
		{[]string{"--nosuchflag"}, "Run 'dissect --help' for usage."},
	} {
		_, stderr, code := cli(t, tc.args...)
		if code != exitUsage || !strings.HasSuffix(stderr, tc.help+"\n") {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.help)
		}
	}
}

// Shell completion offers capture files (by their endings, compressed
// ones included) for arguments and -r, pcapng for -w, and serial devices
// for 'dissect serial'.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // lines of the completion, the directive last
	}{
		{[]string{"__complete", ""}, []string{"pcap", "pcapng", "gz", "zst", "lz4", ":8"}},
		{[]string{"__complete", "read", ""}, []string{"pcap", "pcapng", ":8"}},
		{[]string{"__complete", "-r", ""}, []string{"pcap", "pcapng", ":8"}},
		{[]string{"__complete", "-i", "lo", "-w", ""}, []string{"pcapng", ":8"}},
		{[]string{"__complete", "-i", ""}, []string{"lo", ":4"}},
		{[]string{"__complete", "-o", ""}, []string{"table", "json", ":4"}},
	} {
		stdout, _, code := cli(t, tc.args...)
		if code != 0 {
			t.Errorf("%q: exit %d", tc.args, code)
			continue
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		for _, w := range tc.want {
			found := false
			for _, l := range lines {
				if l == w {
					found = true
				}
			}
			if !found {
				t.Errorf("%q: completion %q lacks %q", tc.args, lines, w)
			}
		}
	}
	// The completion script itself is generated.
	stdout, _, code := cli(t, "completion", "bash")
	if code != 0 || !strings.Contains(stdout, "__start_dissect") {
		t.Errorf("completion bash: exit %d, %d bytes", code, len(stdout))
	}
}
