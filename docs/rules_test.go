package docs_test

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// skipRules name the commands the test cannot run here, and why. Every
// other command of the documents is run.
var skipRules = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`/dev/tty|^dissect serial\b`), "needs serial adapters; the serial tests use pseudo-terminals instead"},
	{regexp.MustCompile(`\bsetcap\b|\busermod\b|/sys/`), "changes the machine's configuration"},
	{regexp.MustCompile(`^dask |sched\.example`), "needs a cluster of machines"},
	{regexp.MustCompile(`\[--`), "a synopsis: its forms are separate commands"},
	{regexp.MustCompile(`^go test \./\.\.\.$`), "the test suite itself"},
	{regexp.MustCompile(`^export `), "sets the reader's PATH; the test sets its own"},
	{regexp.MustCompile(`^tshark -D\b`), "lists the capture interfaces of Wireshark's extcap folder"},
	{regexp.MustCompile(`^ssh `), "reads a capture from another machine"},
	{regexp.MustCompile(`-o foxglove\b`), "serves Foxglove clients until Ctrl-C (cmd/dissect's TestFoxglove* run it with a client)"},
	{regexp.MustCompile(`^mkfifo |\btail .*-f\b`), "waits for a writer until Ctrl-C (cmd/dissect's TestPipeStreamsRecords feeds a pipe and a FIFO)"},
	{regexp.MustCompile(`^tshark -r /tmp/f\b`), "reads the FIFO of the serial tap above"},
	{regexp.MustCompile(`\bman /usr/|^man dissect`), "installs the man pages into the system (cmd/dissect's TestManPages renders them)"},
}

func skipReason(cmd string) string {
	for _, r := range skipRules {
		if r.re.MatchString(cmd) {
			return r.why
		}
	}
	return ""
}

// tools are the programs beside dissect that commands use.
var tools = []struct {
	re   *regexp.Regexp
	name string
}{
	{regexp.MustCompile(`(^|\|\s*)jq\b`), "jq"},
	{regexp.MustCompile(`(^|\|\s*)tshark\b`), "tshark"},
	{regexp.MustCompile(`^tcpdump\b`), "tcpdump"},
	{regexp.MustCompile(`^parallel\b`), "parallel"},
	{regexp.MustCompile(`^hyperfine\b`), "hyperfine"},
	{regexp.MustCompile(`^/usr/bin/time\b`), "/usr/bin/time"},
	{regexp.MustCompile(`^man\b`), "man"},
}

// missingTool names a program the command needs that is not installed.
func missingTool(cmd string) string {
	for _, t := range tools {
		if t.re.MatchString(cmd) {
			if _, err := exec.LookPath(t.name); err != nil {
				return t.name
			}
		}
	}
	if strings.Contains(cmd, "dask_ingest.py") {
		if exec.Command("/usr/bin/python3", "-c", "import distributed").Run() != nil {
			return "python3-distributed"
		}
	}
	return ""
}

// placeholderFiles are the capture names the documents use, and the
// shipped captures that stand for them.
var placeholderFiles = map[string]string{
	"capture.pcap":       "pcaps/vrpn_tcp_only.pcap",
	"a.pcap":             "pcaps/vrpn_multi_device.pcap",
	"b.pcapng":           "pcaps/vrpn_udp_tcp.pcapng",
	"huge.pcap":          "pcaps/vrpn_multi_device.pcap",
	"cap.pcap":           "pcaps/deltarobot_session.pcap",
	"robot.pcap":         "pcaps/deltarobot_session.pcap",
	"run.pcap":           "pcaps/vrpn_multi_device.pcap",
	"session.pcap":       "pcaps/vrpn/session.pcap",
	"session.vrpnlog":    "pcaps/vrpn/session.client_in.vrpnlog",
	"link.pcapng":        "pcaps/handcontrol_serial.pcapng",
	"captures/a.pcap":    "pcaps/vrpn_tcp_only.pcap",
	"captures/b.pcap":    "pcaps/deltarobot_session.pcap",
	"captures/c.pcapng":  "pcaps/vrpn_udp_tcp.pcapng",
	"captures/d.pcap.gz": "", // made below: a compressed copy
	"my-rig.yaml":        "docs/examples/acme-servo.yaml",
}

// placeholders makes the documents' files in dir.
func placeholders(dir string) error {
	for _, d := range []string{"captures", "logs", "home", "DIR", "out"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for name, target := range placeholderFiles {
		if target == "" {
			continue
		}
		if err := os.Symlink(filepath.Join(dir, target), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	if err := gzipFile(filepath.Join(dir, "pcaps/vrpn_udp_tcp.pcapng"), filepath.Join(dir, "capture.pcapng.gz")); err != nil {
		return err
	}
	return gzipFile(filepath.Join(dir, "pcaps/deltarobot_session.pcap"), filepath.Join(dir, "captures/d.pcap.gz"))
}

func gzipFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	z := gzip.NewWriter(out)
	if _, err := io.Copy(z, in); err != nil {
		out.Close()
		return err
	}
	if err := z.Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

var (
	placeholderWords = []struct{ re, to string }{
		{`\s+DISSECT_FLAGS\b`, ""}, {`\bCAPTURE\b`, "capture.pcap"}, {`\bID\b`, "docs-test"},
	}
	goRun         = regexp.MustCompile(`^go run \./cmd/dissect\b`)
	goTestSelect  = regexp.MustCompile(`\s-(run|fuzz|bench)[= ]('[^']*'|\S+)`)
	goTestDrop    = regexp.MustCompile(`\s-(fuzztime|benchtime)[= ]\S+|\s-v\b`)
	liveInterface = regexp.MustCompile(`-i (eth\d|wlan\d)`)
	goOutput      = regexp.MustCompile(`(\s-o|\s-out)\s+([^/\s-]\S*)`)
	sizeMB        = regexp.MustCompile(`-size-mb\s+\d+`)
)

// rewrite makes a document's command runnable in the workspace: the
// placeholders become files, `go run ./cmd/dissect` the dissect built from
// this tree, a `go test` lists the tests it names instead of running them
// (the suite runs them), and a live capture runs on lo for 2 s as root.
func rewrite(cmd string, w *workspace, live bool) string {
	for _, p := range placeholderWords {
		cmd = regexp.MustCompile(p.re).ReplaceAllString(cmd, p.to)
	}
	cmd = goRun.ReplaceAllString(cmd, "dissect")
	if goCommand.MatchString(cmd) {
		// Relative outputs of go commands go to the workspace, and the
		// benchmark captures are made small.
		cmd = goOutput.ReplaceAllStringFunc(cmd, func(m string) string {
			sub := goOutput.FindStringSubmatch(m)
			dir := w.dir
			if strings.HasPrefix(sub[2], "pcaps") { // the shipped captures stay as they are
				dir += "/out"
			}
			return sub[1] + " " + dir + "/" + sub[2]
		})
		cmd = sizeMB.ReplaceAllString(cmd, "-size-mb 1")
	}
	if strings.HasPrefix(cmd, "go test ") || strings.Contains(cmd, " go test ") {
		pattern := "."
		if m := goTestSelect.FindStringSubmatch(cmd); m != nil {
			pattern = m[2]
		}
		cmd = goTestSelect.ReplaceAllString(cmd, "")
		cmd = goTestDrop.ReplaceAllString(cmd, "")
		cmd = strings.Replace(cmd, "go test ", "go test -list "+pattern+" ", 1) +
			` | tee /dev/stderr | grep -qE '^(Test|Fuzz|Benchmark|Example)'`
	}
	if live {
		cmd = strings.ReplaceAll(cmd, "sudo ", "")
		cmd = liveInterface.ReplaceAllString(cmd, "-i lo")
		cmd = strings.Replace(cmd, "dissect ", "dissect -a duration:2 ", 1)
	}
	return cmd
}
