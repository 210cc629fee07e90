package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// Files reads capture files in order as one capture, as tcpdump -C splits
// them. A file that cannot be opened or is damaged does not end the run:
// its error is kept, the packets before the damage are returned, and the
// next file is read. After the last file, Next returns the errors joined
// (errors.Join; each names its file), or io.EOF when there were none.
//
// Files is a [Stopper]: after Stop (a signal), Next returns what it would
// after the last file, also while a read of stdin or of a named pipe is
// blocked (a pipe that sends nothing): the run ends as at the end of its
// input.
//
// Stdin and named pipes stream: when such an input has no bytes ready,
// Next calls the function given to [Files.SetIdle] (in Next's goroutine)
// before it waits, so that a run writes out what it has decoded while
// the writer of the pipe (tcpdump -U -w -) is between packets. Regular
// files are read to their current end, as tshark -r does.
type Files struct {
	names   []string
	infos   []os.FileInfo // per name, as it was when opened (nil: stdin, or not there)
	stdin   io.Reader
	idle    func()
	i       int // index of the next file to open
	cur     capture.Source
	errs    []error
	stopped atomic.Bool
	stop    chan struct{} // closed by Stop
	once    sync.Once
}

// NewFiles returns a source reading names in order; "-" is stdin.
func NewFiles(names []string, stdin io.Reader) *Files {
	return &Files{names: names, infos: make([]os.FileInfo, len(names)), stdin: stdin, stop: make(chan struct{})}
}

// Stop makes Next end the input: no packet is returned after it. It may
// be called from any goroutine.
func (f *Files) Stop() {
	f.once.Do(func() {
		f.stopped.Store(true)
		close(f.stop)
	})
}

// SetIdle sets the function Next calls, in its own goroutine, when the
// input is a pipe (stdin, a named pipe) that has no bytes ready, before
// it waits for more; nil: none. Call it from that goroutine too, or
// before the first Next.
func (f *Files) SetIdle(idle func()) { f.idle = idle }

// callIdle calls the function SetIdle set, if any.
func (f *Files) callIdle() {
	if f.idle != nil {
		f.idle()
	}
}

// Next returns the next packet of the current file, opening the next file
// at the end of one.
func (f *Files) Next() (*capture.Packet, error) {
	for {
		if f.stopped.Load() {
			f.Close()
			f.i = len(f.names)
		}
		if f.cur == nil {
			if f.i >= len(f.names) {
				if len(f.errs) > 0 {
					return nil, errors.Join(f.errs...)
				}
				return nil, io.EOF
			}
			name := f.names[f.i]
			f.i++
			var idle func()
			if f.idle != nil {
				idle = f.callIdle
			}
			if name != "-" {
				f.infos[f.i-1], _ = os.Stat(name)
			}
			src, err := open(name, f.stdin, f.stop, idle)
			if err != nil {
				if !f.stopped.Load() { // else the error is the stop's
					f.errs = append(f.errs, err)
				}
				continue
			}
			f.cur = src
		}
		p, err := f.cur.Next()
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, io.EOF) && !f.stopped.Load() {
			f.errs = append(f.errs, err)
		}
		f.cur.Close()
		f.cur = nil
	}
}

// Unchanged reports whether each file opened so far is still as it was
// when it was opened: the same file (device and inode), of the same size
// and modification time; the error names the first that is not. A
// second reading of the files (a cut, [CopyCut]) reads the same packets
// only then.
func (f *Files) Unchanged() error {
	for i, name := range f.names[:f.i] {
		was := f.infos[i]
		if name == "-" {
			continue
		}
		now, err := os.Stat(name)
		switch {
		case was == nil && err == nil:
			return fmt.Errorf("%s: it appeared since it was read", name)
		case was == nil:
			continue // not there either time: its error was reported
		case err != nil:
			return fmt.Errorf("%s: gone since it was read: %w", name, err)
		case !os.SameFile(was, now):
			return fmt.Errorf("%s: replaced by another file since it was read", name)
		case was.Size() != now.Size():
			return fmt.Errorf("%s: %d bytes when it was read, %d now", name, was.Size(), now.Size())
		case !was.ModTime().Equal(now.ModTime()):
			return fmt.Errorf("%s: modified since it was read (%s, now %s)", name, was.ModTime().UTC().Format(time.RFC3339Nano), now.ModTime().UTC().Format(time.RFC3339Nano))
		}
	}
	return nil
}

// Current describes the file being read, for a progress bar: its name, its
// position in the list (from 1) and the list's length; ok is false
// between files.
func (f *Files) Current() (name string, i, n int, p capture.Progresser, ok bool) {
	if f.cur == nil {
		return "", 0, 0, nil, false
	}
	p, _ = f.cur.(capture.Progresser)
	return f.names[f.i-1], f.i, len(f.names), p, true
}

// Close closes the current file.
func (f *Files) Close() error {
	if f.cur != nil {
		err := f.cur.Close()
		f.cur = nil
		return err
	}
	return nil
}

// open opens a capture. Stdin and files that are not regular (a named
// pipe, a process substitution's /dev/fd/N) may block on a read: they are
// read through a stoppable reader, which calls idle when they have no
// bytes ready. Regular files are opened as they are.
func open(name string, stdin io.Reader, stop <-chan struct{}, idle func()) (capture.Source, error) {
	if name == "-" {
		return capture.NewReader(newStoppable(stdin, stop, idle), "stdin")
	}
	if st, err := os.Stat(name); err != nil || st.Mode().IsRegular() {
		return capture.OpenFile(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	src, err := capture.NewReader(newStoppable(f, stop, idle), name)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &pipeSource{Source: src, f: f}, nil
}

// pipeSource is a capture read from a file that is not regular, through a
// stoppable reader; Close closes the file too, which ends a read still
// blocked on it (Go polls pipes).
type pipeSource struct {
	capture.Source
	f *os.File
}

func (p *pipeSource) Close() error {
	err := p.Source.Close()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Progress is the capture's (bytes read; no total).
func (p *pipeSource) Progress() (done, total int64) {
	if pr, ok := p.Source.(capture.Progresser); ok {
		return pr.Progress()
	}
	return 0, 0
}

// errStopped is what a read of stdin returns after Files.Stop.
var errStopped = errors.New("stopped")

// stoppable reads r in a goroutine of its own, so that a read blocked on
// a pipe that sends nothing can be given up when stop is closed: Read
// then returns errStopped, and the goroutine ends with its read (at the
// latest when the process does). Regular files never block that way and
// are read directly.
//
// A read that has not returned after idleWait finds the pipe empty: idle
// is called (in the caller's goroutine, which also decodes and writes the
// records), then the read is waited for. A pipe with bytes ready returns
// them in microseconds, so a fast writer (cat big.pcap |) causes no idle
// call; a writer between packets causes one per pause.
type stoppable struct {
	r     io.Reader
	stop  <-chan struct{}
	idle  func() // nil: none
	timer *time.Timer
	req   chan []byte
	res   chan readResult
	eof   error // what every later Read returns
}

// idleWait is how long a read of a pipe may take before the pipe counts
// as empty and the run writes out what it has: short against the 100 ms a
// record may take from its packet to the output, long against a read of
// bytes that are ready.
const idleWait = 2 * time.Millisecond

type readResult struct {
	n   int
	err error
}

func newStoppable(r io.Reader, stop <-chan struct{}, idle func()) *stoppable {
	return &stoppable{r: r, stop: stop, idle: idle}
}

func (s *stoppable) Read(p []byte) (int, error) {
	if s.eof != nil {
		return 0, s.eof
	}
	select {
	case <-s.stop:
		return 0, errStopped
	default:
	}
	if s.req == nil {
		s.req, s.res = make(chan []byte), make(chan readResult, 1)
		go func() {
			for b := range s.req {
				n, err := s.r.Read(b)
				s.res <- readResult{n, err}
			}
		}()
	}
	s.req <- p
	if s.idle != nil {
		select {
		case r := <-s.res:
			return s.result(r)
		case <-s.stop:
			return s.stopped()
		case <-s.wait():
			s.idle() // the pipe is empty: write out what was decoded
		}
	}
	select {
	case r := <-s.res:
		return s.result(r)
	case <-s.stop:
		return s.stopped()
	}
}

// wait starts the idle timer and returns its channel. A timer left
// running by a read that returned first is reset (since Go 1.23, Reset
// also drops a tick not yet received).
func (s *stoppable) wait() <-chan time.Time {
	if s.timer == nil {
		s.timer = time.NewTimer(idleWait)
	} else {
		s.timer.Reset(idleWait)
	}
	return s.timer.C
}

func (s *stoppable) result(r readResult) (int, error) {
	if r.err != nil {
		s.eof = r.err
		close(s.req)
	}
	return r.n, r.err
}

// stopped ends the reading after Stop. The goroutine may still write into
// the caller's buffer: it is not read again, as every later Read returns
// errStopped. The goroutine ends when its read returns.
func (s *stoppable) stopped() (int, error) {
	s.eof = errStopped
	close(s.req)
	return 0, errStopped
}
