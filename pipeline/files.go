package pipeline

import (
	"errors"
	"io"

	"github.com/dissect-tools/dissect/capture"
)

// Files reads capture files in order as one capture, as tcpdump -C splits
// them. A file that cannot be opened or is damaged does not end the run:
// its error is kept, the packets before the damage are returned, and the
// next file is read. After the last file, Next returns the errors joined
// (errors.Join; each names its file), or io.EOF when there were none.
type Files struct {
	names []string
	stdin io.Reader
	i     int // index of the next file to open
	cur   capture.Source
	errs  []error
}

// NewFiles returns a source reading names in order; "-" is stdin.
func NewFiles(names []string, stdin io.Reader) *Files {
	return &Files{names: names, stdin: stdin}
}

// Next returns the next packet of the current file, opening the next file
// at the end of one.
func (f *Files) Next() (*capture.Packet, error) {
	for {
		if f.cur == nil {
			if f.i >= len(f.names) {
				if len(f.errs) > 0 {
					return nil, errors.Join(f.errs...)
				}
				return nil, io.EOF
			}
			name := f.names[f.i]
			f.i++
			src, err := open(name, f.stdin)
			if err != nil {
				f.errs = append(f.errs, err)
				continue
			}
			f.cur = src
		}
		p, err := f.cur.Next()
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, io.EOF) {
			f.errs = append(f.errs, err)
		}
		f.cur.Close()
		f.cur = nil
	}
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

func open(name string, stdin io.Reader) (capture.Source, error) {
	if name == "-" {
		return capture.NewReader(stdin, "stdin")
	}
	return capture.OpenFile(name)
}
