// Package docs_test runs the commands of README.md and docs/*.md: every
// command a reader may copy is either run on the shipped captures, with the
// documents' placeholder names mapped to real files, or skipped for a
// reason named in rules_test.go. A command that exits non-zero, or whose
// output no longer shows what the document shows ("$ " blocks), fails.
package docs_test

import (
	"bytes"
	"context"
	"github.com/dissect-tools/dissect/internal/longtest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// commandTimeout bounds one command; live commands stop after 2 s.
const commandTimeout = 90 * time.Second

func TestDocs(t *testing.T) {
	longtest.Skip(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	mds, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, m := range mds {
		files = append(files, filepath.Join("docs", filepath.Base(m)))
	}
	cmds, err := readCommands(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 50 {
		t.Fatalf("found %d commands in %d documents: the parser lost them", len(cmds), len(files))
	}
	env := newWorkspace(t, root)
	ran := 0
	for _, c := range cmds {
		if why := skipReason(c.text); why != "" {
			t.Logf("not run: %s (%s)", c, why)
			continue
		}
		if tool := missingTool(c.text); tool != "" {
			t.Logf("not run: %s (%s is not installed; .ci/run installs it)", c, tool)
			continue
		}
		live := liveCommand.MatchString(c.text)
		if live && os.Geteuid() != 0 {
			t.Logf("not run: %s (captures live: needs root)", c)
			continue
		}
		ran++
		t.Run(c.file+":"+strconv.Itoa(c.line), func(t *testing.T) {
			out, err := env.run(c.text, live)
			if err != nil {
				t.Fatalf("%s\nexit: %v\noutput:\n%s", c, err, clip(out))
			}
			if c.shown != nil {
				if line, ok := matchShown(c.shown, out); !ok {
					t.Fatalf("%s\nthe document shows %q, the output has no such line (in its order):\n%s", c, line, clip(out))
				}
			}
		})
	}
	t.Logf("%d commands in %d documents, %d run", len(cmds), len(files), ran)
	if ran < len(cmds)/2 {
		t.Errorf("only %d of %d commands run", ran, len(cmds))
	}
}

// workspace is the directory the commands run in: the placeholders of the
// documents, symbolic links to the repository's pcaps/, scale/ and docs/, a bin/
// with the dissect built from this tree, and a HOME of its own. Go
// commands run in the repository (so that the build cache serves them),
// their relative outputs redirected to the workspace.
type workspace struct {
	root, dir, bin string
	goEnv          []string // GOPATH, GOCACHE, GOMODCACHE as they were before HOME moved
}

func newWorkspace(t *testing.T, root string) *workspace {
	dir := t.TempDir()
	w := &workspace{root: root, dir: dir, bin: filepath.Join(dir, "bin")}
	build := exec.Command("go", "build", "-o", filepath.Join(w.bin, "dissect"), "./cmd/dissect")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, name := range []string{"pcaps", "scale", "docs"} {
		if err := os.Symlink(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := placeholders(dir); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"GOPATH", "GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		w.goEnv = append(w.goEnv, v+"="+string(bytes.TrimSpace(out)))
	}
	return w
}

// run runs one command with bash in the workspace.
func (w *workspace) run(text string, live bool) (string, error) {
	script := rewrite(text, w, live)
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", script)
	cmd.Dir = w.dir
	if goCommand.MatchString(script) {
		cmd.Dir = w.root // go test, go doc, go vet: in the module
	}
	cmd.Env = append(os.Environ(),
		"PATH="+w.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+filepath.Join(w.dir, "home"),
		"GOBIN="+w.bin,
		"CGO_ENABLED=0",
		"NO_COLOR=1",
	)
	cmd.Env = append(cmd.Env, w.goEnv...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return string(out), ctx.Err()
	}
	return string(out), err
}

var (
	liveCommand = regexp.MustCompile(`(^|\s)-i\s`)
	goCommand   = regexp.MustCompile(`^(\w+=\S* )*go `)
)

func clip(s string) string {
	if len(s) > 4000 {
		return s[:2000] + "\n...\n" + s[len(s)-2000:]
	}
	return s
}
