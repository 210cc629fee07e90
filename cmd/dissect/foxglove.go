package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output/foxws"
)

// foxOpts are -o foxglove's flags and what the run tells it: the run's
// context (Ctrl-C), stderr, and whether the input is files.
type foxOpts struct {
	speed  float64
	allow  []string // --allow-origin
	ctx    context.Context
	stderr io.Writer
	files  []string // the capture files of a read run; none live
}

const speedUsage = "-o foxglove, reading files: play the file to each client from its start once it has subscribed, at this multiple of capture time (1: as captured; 0: as fast as the client takes them)"

const allowUsage = "-o foxglove: also accept web pages of these origins (a pattern, e.g. https://*.example.com; * for any); accepted always: none (desktop apps, programs), pages served from localhost or loopback, https://app.foxglove.dev and https://lichtblick-suite.github.io (repeatable)"

func (f *foxOpts) add(fs *pflag.FlagSet) {
	fs.Float64Var(&f.speed, "speed", 1, speedUsage)
	fs.StringArrayVar(&f.allow, "allow-origin", nil, allowUsage)
}

// foxgloveOutput starts the -o foxglove server (docs/foxglove.md) on
// --out HOST:PORT, loopback by default, and says its URL on stderr.
// Files (not pipes) are played to each client from their start in
// capture time (--speed); live captures, serial taps and pipes are sent
// as their records come.
func (o *readOpts) foxgloveOutput(reg *dissect.Registry) (sink, error) {
	f := &o.fox
	if f.speed < 0 || f.speed > 1e6 {
		return nil, usageError{fmt.Errorf("--speed %g: want 0 (as fast as the clients take them) or a positive multiple of capture time", f.speed)}
	}
	if err := checkMcapEncoding(o.mcapEnc); err != nil {
		return nil, err
	}
	addr, err := foxAddr(o.outPath)
	if err != nil {
		return nil, usageError{err}
	}
	ctx := f.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	stderr := f.stderr
	if stderr == nil {
		stderr = io.Discard
	}
	playback := anyRegularFile(f.files)
	version, _, _ := strings.Cut(versionLine(), "\n")
	srv, err := foxws.Listen(ctx, foxws.Options{
		Addr: addr, Name: version, Decl: reg.Decl, Encoding: o.mcapEnc,
		Playback: playback, Speed: f.speed, AllowOrigins: f.allow, Now: liveClock(f.files),
	})
	if err != nil {
		if strings.Contains(err.Error(), "--allow-origin") {
			return nil, usageError{err}
		}
		return nil, err
	}
	fmt.Fprintf(stderr, "dissect: serving Foxglove WebSocket on %s (Foxglove or Lichtblick: Open connection, Foxglove WebSocket, this URL)\n", srv.URL())
	if w := exposure(addr, srv.Addr()); w != "" {
		fmt.Fprintln(stderr, w)
	}
	if playback {
		fmt.Fprintf(stderr, "dissect: the file is played to each client from its start once it has subscribed (--speed %g)\n", f.speed)
	}
	return &foxSink{srv: srv, ctx: ctx, stderr: stderr, linger: len(f.files) > 0}, nil
}

// foxAddr is the address --out gives -o foxglove: HOST:PORT; :PORT
// (no host) is loopback's, never every interface's.
func foxAddr(out string) (string, error) {
	if out == "" {
		return foxws.DefaultAddr, nil
	}
	host, port, err := net.SplitHostPort(out)
	if err != nil || port == "" {
		return "", fmt.Errorf("-o foxglove --out %q: want HOST:PORT, e.g. %s (0.0.0.0:8765 serves every interface)", out, foxws.DefaultAddr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// exposure is the warning for an address other than loopback (asked as
// addr, listened on as a): who can see the decoded traffic.
func exposure(addr string, a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || ta.IP.IsLoopback() {
		return ""
	}
	host, _, _ := net.SplitHostPort(addr)
	who := "whoever reaches " + host
	if ta.IP.IsUnspecified() {
		who = "whoever reaches any address of this machine"
	}
	return fmt.Sprintf("dissect: WARNING: listening on %s: %s on port %d sees the decoded traffic (the protocol has no authentication); serve on loopback (the default) unless the network is trusted",
		net.JoinHostPort(host, strconv.Itoa(ta.Port)), who, ta.Port)
}

// anyRegularFile says whether one of the inputs is a file on disk (not
// stdin, a pipe or a device).
func anyRegularFile(files []string) bool {
	for _, name := range files {
		if name == "-" {
			continue
		}
		if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// foxSink is the server as the run's output. When the input of a read
// run ends (files, pipes) the server stays up until Ctrl-C, so that the
// clients can look at what they got; a live capture ends it with the run.
type foxSink struct {
	srv    *foxws.Server
	ctx    context.Context
	stderr io.Writer
	linger bool
	once   sync.Once
	err    error
}

func (s *foxSink) Record(r *dissect.Record) error { return s.srv.Record(r) }
func (s *foxSink) Flush() error                   { return s.srv.Flush() }

func (s *foxSink) Close() error {
	s.once.Do(func() {
		if s.linger && s.ctx.Err() == nil {
			fmt.Fprintf(s.stderr, "dissect: the input has ended; still serving %s (%d clients connected): Ctrl-C to stop\n", s.srv.URL(), s.srv.Clients())
			<-s.ctx.Done()
		}
		s.err = s.srv.Close()
	})
	return s.err
}

// foxgloveNotes are the summary's lines of -o foxglove: what each client
// was sent and missed.
func foxgloveNotes(out sink) []string {
	if q, ok := out.(*querySink); ok {
		out = q.out
	}
	if f, ok := out.(*foxSink); ok {
		return f.srv.Notes()
	}
	return nil
}

// liveClock is the clock of a live capture or serial tap (no files), which
// stamps its packets with the real-time clock; nil for files and pipes.
func liveClock(files []string) func() time.Time {
	if len(files) > 0 {
		return nil
	}
	return time.Now
}
