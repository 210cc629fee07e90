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

// lakeCreatedBy reads created_by from the footer of every part of a
// lake (parquet-go's file reader) and returns it, failing when the parts
// disagree or there are none.
func lakeCreatedBy(t *testing.T, lake string) string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(lake, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		pf, closer, err := openParquet(p)
		if err != nil {
			return err
		}
		defer closer.Close()
		got = append(got, pf.Metadata().CreatedBy)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatalf("%s: no parts", lake)
	}
	for _, g := range got[1:] {
		if g != got[0] {
			t.Fatalf("parts disagree: %q and %q", got[0], g)
		}
	}
	return got[0]
}

// createdByForm is Parquet's created_by form with no empty part.
var createdByForm = regexp.MustCompile(`^dissect version [^ ]+( \(build [0-9a-f]{12}(-dirty)?\))?$`)

// TestParquetCreatedBy: the footer names dissect and the version that
// 'dissect version' prints, in the form Parquet readers parse, with no
// empty part (a test binary has no commit: no build part).
func TestParquetCreatedBy(t *testing.T) {
	lake := t.TempDir()
	if _, stderr, code := cli(t, "-o", "parquet", "--out", lake, "--no-summary", filepath.Join(pcapDir, "deltarobot_session.pcap")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := lakeCreatedBy(t, lake)
	ver, _, _ := cli(t, "version")
	first, rest, _ := strings.Cut(ver, "\n")
	version := strings.TrimPrefix(first, "dissect ")
	want := "dissect version " + version
	if c, ok := strings.CutPrefix(rest, "commit: "); ok && !strings.HasPrefix(c, "unknown") {
		want += " (build " + c[:12] + ")"
	}
	if got != want || !createdByForm.MatchString(got) {
		t.Errorf("created_by %q, want %q (from 'dissect version': %q)", got, want, first)
	}
}

func TestFormatCreatedBy(t *testing.T) {
	for _, c := range []struct {
		version, commit string
		dirty           bool
		want            string
	}{
		{"v1.2.0", "262ae3d72f421ec39fb2d0c9ef48499b626beeab", false, "dissect version v1.2.0 (build 262ae3d72f42)"},
		{"(devel)", "262ae3d72f421ec39fb2d0c9ef48499b626beeab", true, "dissect version (devel) (build 262ae3d72f42-dirty)"},
		{"(devel)", "", false, "dissect version (devel)"},
	} {
		if got := formatCreatedBy(c.version, c.commit, c.dirty); got != c.want {
			t.Errorf("%q %q %v: %q, want %q", c.version, c.commit, c.dirty, got, c.want)
		}
	}
}

// TestParquetCreatedByBuilt: a binary built by 'go build' in a git
// checkout, with version control stamping on (this machine's go env
// turns it off), writes the checkout's commit, taken from git:
// "dissect version v0.0.0-TIME-REV (build REV)". The checkout is a clone
// holding the files of this one as they are (changes committed there),
// so the code under test is the code being worked on.
func TestParquetCreatedByBuilt(t *testing.T) {
	longtest.Skip(t)
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s on PATH: %v", tool, err)
		}
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v)", err)
	}
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "clone")
	if out, err := exec.Command("git", "clone", "-q", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	root := strings.TrimSpace(string(top))
	files, err := exec.Command("git", "-C", root, "ls-files", "-z", "-c", "-o", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			_ = os.Remove(filepath.Join(clone, f)) // deleted here, not committed yet
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", clone, "-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("add", "-A")
	git("commit", "-q", "--allow-empty", "-m", "the working tree under test")
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	rev := strings.TrimSpace(string(head))[:12]
	bin := filepath.Join(tmp, "dissect")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/dissect")
	build.Dir = clone
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	lake := filepath.Join(tmp, "lake")
	if out, err := exec.Command(bin, "-o", "parquet", "--out", lake, "--no-summary", filepath.Join(pcapDir, "deltarobot_session.pcap")).CombinedOutput(); err != nil {
		t.Fatalf("dissect: %v\n%s", err, out)
	}
	got := lakeCreatedBy(t, lake)
	want := regexp.MustCompile(`^dissect version v0\.0\.0-\d{14}-` + rev + ` \(build ` + rev + `\)$`)
	if !want.MatchString(got) || !createdByForm.MatchString(got) {
		t.Errorf("created_by %q, want %s", got, want)
	}
}
