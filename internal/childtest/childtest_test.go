package childtest

import (
	"bufio"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStart: stderr's lines reach Line in order and are kept, stdout is
// kept, stdin reaches the program, and its exit status is Err's.
func TestStart(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	var mu sync.Mutex
	var lines []string
	p := Start(t, Options{Line: func(l string) {
		mu.Lock()
		lines = append(lines, l)
		mu.Unlock()
	}}, sh, "-c", `echo one >&2; read x; echo "got $x"; echo two >&2; exit 3`)
	io.WriteString(p.Stdin, "input\n")
	p.Stdin.Close()
	select {
	case <-p.Ended():
	case <-time.After(30 * time.Second):
		t.Fatal("sh did not end in 30 s")
	}
	var exit *exec.ExitError
	if err := p.Err(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("Err: %v, want exit status 3", err)
	}
	if got := string(p.Stdout()); got != "got input\n" {
		t.Errorf("Stdout: %q", got)
	}
	if got := p.Stderr(); got != "one\ntwo\n" {
		t.Errorf("Stderr: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(lines, ",") != "one,two" {
		t.Errorf("Line was given %q", lines)
	}
}

// TestStdoutReader: Options.Stdout reads the start of stdout; what it
// leaves, and what it only peeked at, is kept.
func TestStdoutReader(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	first := make(chan string, 1)
	p := Start(t, Options{Stdout: func(r *bufio.Reader) {
		line, _ := r.ReadString('\n')
		b, _ := r.Peek(3)
		first <- line + string(b)
	}}, sh, "-c", `echo ready; echo rest`)
	if got := <-first; got != "ready\nres" {
		t.Errorf("Options.Stdout read %q", got)
	}
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if got := string(p.Stdout()); got != "rest\n" {
		t.Errorf("Stdout: %q, want what Options.Stdout left", got)
	}
}
