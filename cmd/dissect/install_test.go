package main

import (
	"github.com/dissect-tools/dissect/internal/longtest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeInstallBlock returns the first sh code block under README's
// "## Install" heading.
func readmeInstallBlock(t *testing.T, readme string) string {
	t.Helper()
	_, sec, ok := strings.Cut(readme, "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no '## Install' section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, block, ok := strings.Cut(sec, "```sh\n")
	if !ok {
		t.Fatal("README's Install section has no ```sh block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README's Install block is not closed")
	}
	return block
}

// The README's install block, run as written in a fresh clone, installs
// dissect where its next line runs it, and `dissect --version` names the
// commit of the clone. The build leaves the clone clean (outputs ignored
// by git), so the version is not marked as having uncommitted changes.
func TestReadmeInstallInFreshClone(t *testing.T) {
	longtest.Skip(t)
	for _, tool := range []string{"git", "go", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s on PATH: %v", tool, err)
		}
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): the install is tested from a clone", err)
	}
	root := strings.TrimSpace(string(top))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := readmeInstallBlock(t, string(readme))

	tmp := t.TempDir()
	clone := filepath.Join(tmp, "clone")
	if out, err := exec.Command("git", "clone", "-q", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))

	goEnv := func(key string) string {
		out, err := exec.Command("go", "env", key).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	// A new user's machine: its own HOME and GOPATH (so GOPATH/bin is not
	// on PATH yet), GOBIN unset, and the toolchain's default of stamping
	// version control information (this machine's go env file turns it
	// off). The module and build caches are shared so nothing is
	// downloaded.
	env := []string{
		"HOME=" + filepath.Join(tmp, "home"),
		"GOPATH=" + filepath.Join(tmp, "gopath"),
		"GOMODCACHE=" + goEnv("GOMODCACHE"),
		"GOCACHE=" + goEnv("GOCACHE"),
		"GOFLAGS=-buildvcs=auto",
		"GOTOOLCHAIN=local",
		"GOPROXY=" + goEnv("GOPROXY"),
		"PATH=" + os.Getenv("PATH"),
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = clone
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README install block failed: %v\n--- block\n%s--- output\n%s", err, block, out)
	}
	got := string(out)
	if _, err := os.Stat(filepath.Join(tmp, "gopath", "bin", "dissect")); err != nil {
		t.Errorf("no binary in GOPATH/bin: %v", err)
	}
	// The version is the pseudo-version of the commit (no tag yet).
	want := regexp.MustCompile(`(?m)^dissect v\d+\.\d+\.\d+-\S*` + commit[:12] + `$`)
	if !want.MatchString(got) {
		t.Errorf("version line missing or not of commit %s:\n%s", commit[:12], got)
	}
	if !strings.Contains(got, "commit: "+commit) {
		t.Errorf("no 'commit: %s' line:\n%s", commit, got)
	}
	if strings.Contains(got, "uncommitted") {
		t.Errorf("a fresh clone's build is marked as having uncommitted changes:\n%s", got)
	}
	if !regexp.MustCompile(`(?m)^built with go1\.\d+`).MatchString(got) {
		t.Errorf("no Go version:\n%s", got)
	}
	st, err := exec.Command("git", "-C", clone, "status", "--porcelain", "--ignored=no").Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 0 {
		t.Errorf("the install left files git does not ignore:\n%s", st)
	}
}

// The version says what it does not know instead of printing nothing.
func TestFormatVersion(t *testing.T) {
	got := formatVersion("(devel)", "", "", false, "go1.26.8", "linux/amd64")
	want := "dissect (devel)\ncommit: unknown (built without version control information, e.g. -buildvcs=false)\nbuilt with go1.26.8 for linux/amd64"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = formatVersion("v1.2.3", "0123456789abcdef", "2026-11-23T21:30:35Z", true, "go1.26.8", "linux/arm64")
	want = "dissect v1.2.3\ncommit: 0123456789abcdef (2026-11-23T21:30:35Z), with uncommitted changes\nbuilt with go1.26.8 for linux/arm64"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// --version and 'version' print the same lines.
func TestVersionFlagAndCommand(t *testing.T) {
	a, _, code := cli(t, "--version")
	b, _, code2 := cli(t, "version")
	if code != 0 || code2 != 0 {
		t.Fatalf("exit %d, %d", code, code2)
	}
	if a != b || !strings.HasPrefix(a, "dissect ") || !strings.Contains(a, "built with go") {
		t.Errorf("--version %q, version %q", a, b)
	}
}
