// Package childtest runs a program for a test, as the tests that drive
// Node scripts, tcpdump or dissect itself need it: its stderr read line by
// line (each line handed to the test's function as it comes, and kept),
// its stdout read by the test's function or kept, its stdin a pipe, its
// end and exit status observable, and the process killed when the test
// ends.
package childtest

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Process is a running program.
type Process struct {
	Cmd   *exec.Cmd
	Stdin io.WriteCloser

	ended chan struct{}
	err   error // Wait's, once ended is closed

	mu     sync.Mutex
	stderr strings.Builder
	stdout bytes.Buffer // read once ended is closed
}

// Options says what a test does with the program's output.
type Options struct {
	// Line is given each line of stderr as it comes (nil: none is).
	Line func(line string)
	// Stdout reads the start of stdout (nil: none of it is); what it
	// leaves unread (Peek reads without taking) is kept, for Stdout.
	Stdout func(r *bufio.Reader)
}

// Start starts name with args, or fails the test.
func Start(t testing.TB, o Options, name string, args ...string) *Process {
	t.Helper()
	p := &Process{Cmd: exec.Command(name, args...), ended: make(chan struct{})}
	var err error
	if p.Stdin, err = p.Cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := p.Cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Cmd.Process.Kill() })
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		br := bufio.NewReader(out)
		if o.Stdout != nil {
			o.Stdout(br)
		}
		io.Copy(&p.stdout, br)
	}()
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if o.Line != nil {
				o.Line(sc.Text())
			}
		}
		io.Copy(io.Discard, errPipe) // a line too long for the scanner
	}()
	go func() {
		readers.Wait()
		p.err = p.Cmd.Wait()
		close(p.ended)
	}()
	return p
}

// Ended is closed once the program has exited and its output is read.
func (p *Process) Ended() <-chan struct{} { return p.ended }

// Err is the program's exit (nil: status 0), once Ended is closed.
func (p *Process) Err() error {
	<-p.ended
	return p.err
}

// Stderr is what the program wrote on stderr so far, in whole lines.
func (p *Process) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Stdout is what the program wrote on stdout (with Options.Stdout, what
// that function left unread), once it has ended.
func (p *Process) Stdout() []byte {
	<-p.ended
	return p.stdout.Bytes()
}
