package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestManPages: 'dissect man DIR' writes dissect.1 and a page per
// command that --help lists (and the completion shells'), each opening
// with its command's name and --help's one-line description; man renders
// every one (-l) without warnings, and finds 'man dissect' with DIR's
// parent on its path. man itself is needed for the rendering: skipped
// without it.
func TestManPages(t *testing.T) {
	help, _, code := cli(t, "--help")
	if code != 0 {
		t.Fatal(code)
	}
	_, list, _ := strings.Cut(help, "Available Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	short := map[string]string{"dissect": "Decode robot, prosthesis and VR protocols from captures"}
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] == "help" {
			continue
		}
		short["dissect-"+f[0]] = strings.Join(f[1:], " ")
	}
	if len(short) < 8 {
		t.Fatalf("--help lists %d commands", len(short))
	}

	top := t.TempDir()
	dir := filepath.Join(top, "man1")
	if _, stderr, code := cli(t, "man", dir); code != 0 {
		t.Fatalf("dissect man: exit %d: %s", code, stderr)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	for _, e := range ents {
		pages = append(pages, e.Name())
	}
	for name := range short {
		if !slices.Contains(pages, name+".1") {
			t.Errorf("no %s.1 among %q", name, pages)
		}
	}
	for _, p := range pages {
		if _, ok := short[strings.TrimSuffix(p, ".1")]; !ok && !regexp.MustCompile(`^dissect-completion-[a-z]+\.1$`).MatchString(p) {
			t.Errorf("unexpected page %s", p)
		}
	}
	if _, stderr, code := cli(t, "man"); code != exitUsage || !strings.Contains(stderr, "one directory") {
		t.Errorf("dissect man without DIR: exit %d, %q", code, stderr)
	}

	if _, err := exec.LookPath("man"); err != nil {
		t.Skipf("man not installed: the pages are not rendered (%v)", err)
	}
	space := regexp.MustCompile(`\s+`)
	render := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("man", args...)
		cmd.Env = append(os.Environ(), "MANWIDTH=300", "MANPAGER=cat", "PAGER=cat", "LANG=C.UTF-8")
		var errb strings.Builder
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil || errb.Len() > 0 {
			t.Errorf("man %q: %v; stderr %q", args, err, errb.String())
		}
		return space.ReplaceAllString(string(out), " ")
	}
	for name, desc := range short {
		text := render("--warnings", "-l", filepath.Join(dir, name+".1"))
		// man hyphenates at the width only; 300 columns leave the
		// descriptions whole.
		if want := "NAME " + name + " - " + desc; !strings.Contains(text, want) {
			t.Errorf("man -l %s.1: no %q in %.300q", name, want, text)
		}
	}
	text := render("-M", top, "dissect")
	if !strings.Contains(text, "dissect - "+short["dissect"]) || !strings.Contains(text, "--time-format") || !strings.Contains(text, "dissect-serial(1)") {
		t.Errorf("man -M %s dissect: %.400q", top, text)
	}
}
