package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dissect-tools/dissect/capture"
)

// PacketWriter writes the packets of a file run, as they were read, to
// one pcapng file (-r with -w): original times, bytes, lengths and
// directions; each interface of each input file becomes an interface of
// the output, with its link type and name, added when its first packet
// is written.
//
// It counts the packets that reached the file, not those buffered: a
// write error (a full disk, -w /dev/full) leaves the count at the
// packets written whole before it.
type PacketWriter struct {
	path   string
	f      *diskCounter
	w      *capture.PcapngWriter
	ifaces map[[2]int]int // (file, interface) → output interface
	n      int64          // packets written whole to the file
	// ends holds the end offsets of the packets still buffered (from
	// head), at most a buffer's worth.
	ends []int64
	head int
}

// diskCounter counts the bytes the file took.
type diskCounter struct {
	f *os.File
	n int64
}

func (d *diskCounter) Write(b []byte) (int, error) {
	n, err := d.f.Write(b)
	d.n += int64(n)
	return n, err
}

// settle counts the buffered packets whose bytes have reached the file.
func (pw *PacketWriter) settle() {
	for pw.head < len(pw.ends) && pw.ends[pw.head] <= pw.f.n {
		pw.head++
		pw.n++
	}
	if pw.head > 1024 && pw.head*2 > len(pw.ends) {
		pw.ends = pw.ends[:copy(pw.ends, pw.ends[pw.head:])]
		pw.head = 0
	}
}

// CreatePacketWriter creates the file at path and writes its section
// header.
func CreatePacketWriter(path string) (*PacketWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err // *PathError: it names the file
	}
	d := &diskCounter{f: f}
	w, err := capture.NewPcapngWriter(d)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &PacketWriter{path: path, f: d, w: w, ifaces: map[[2]int]int{}}, nil
}

// Write writes p, read from the file numbered file (from 1, in the order
// given) of the run.
func (pw *PacketWriter) Write(file int, p *capture.Packet) error {
	k := [2]int{file, p.Interface}
	id, ok := pw.ifaces[k]
	if !ok {
		var err error
		id, err = pw.w.AddInterface(p.InterfaceName, p.LinkType, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", pw.path, err)
		}
		pw.ifaces[k] = id
	}
	q := *p
	q.Interface = id
	err := pw.w.WritePacket(&q)
	pw.ends = append(pw.ends, pw.w.Size())
	pw.settle()
	if err != nil {
		return fmt.Errorf("%s: after %d packets: %w", pw.path, pw.n, err)
	}
	return nil
}

// Written is the number of packets written whole to the file (buffered
// ones, until Close, are not).
func (pw *PacketWriter) Written() int64 { return pw.n }

// Path is the file's path.
func (pw *PacketWriter) Path() string { return pw.path }

// Close flushes and closes the file.
func (pw *PacketWriter) Close() error {
	err := pw.w.Flush()
	pw.settle()
	if cerr := pw.f.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", pw.path, err)
	}
	return nil
}

// CopyCut reads the files that read read for the run that c followed
// again, from their first packet, and writes the packets c marked to w,
// in capture order. Packets that keep rejects are skipped as in the
// first reading (a capture filter: the Cut counted only those it let
// through). The copy stops after the last marked packet, or when ctx is
// done (a signal: ctx's error is returned).
//
// A second reading is trusted only if it reads the same packets: the
// files must be as they were when first opened ([Files.Unchanged]), and
// each run of marked packets must have the same times and lengths as in
// the first reading (their fingerprints' sum), and all must be there;
// otherwise a [*ChangedError] is returned, with what was copied so far
// written (the caller removes it). A read error (the run reported it
// already) ends the copy and is returned as it is; a write error is an
// [*OutputError] naming w's file.
func CopyCut(ctx context.Context, read *Files, keep KeepFunc, c *Cut, w *PacketWriter) error {
	if err := read.Unchanged(); err != nil {
		return &ChangedError{err}
	}
	runs := c.marks.runs
	if len(runs) == 0 {
		return nil
	}
	src := NewFiles(read.names, nil)
	defer src.Close()
	k := 0 // the run being copied
	var sum uint64
	for i := int64(0); ; {
		if i&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		p, err := src.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return &ChangedError{fmt.Errorf("%s: it ended at packet %d, before the marked packet %d it held when first read", read.names[len(read.names)-1], i, runs[k].lo+1)}
			}
			return err
		}
		if keep != nil {
			if ok, err := keep(p); err != nil {
				return err
			} else if !ok {
				continue
			}
		}
		if r := &runs[k]; i >= r.lo {
			_, file, _, _, _ := src.Current()
			if err := w.Write(file, p); err != nil {
				return &OutputError{err}
			}
			sum += fingerprint(i, p)
			if i == r.hi-1 {
				if sum != r.sum {
					name, _, _, _, _ := src.Current()
					return &ChangedError{fmt.Errorf("%s: packets %d to %d differ in time or length from their first reading", name, r.lo+1, r.hi)}
				}
				sum = 0
				if k++; k == len(runs) {
					return nil
				}
			}
		}
		i++
	}
}

// ChangedError is the error of a second reading of a cut's input that
// does not read the packets of the first (the input changed between
// them): what was written is not the cut.
type ChangedError struct{ Err error }

func (e *ChangedError) Error() string {
	return e.Err.Error() + ": the input changed while it was cut; cut it again from a file nothing writes to"
}

func (e *ChangedError) Unwrap() error { return e.Err }

// KeepFunc says whether a packet passes a capture filter (-f on files);
// an error (a link type the filter cannot be run on) ends the run.
type KeepFunc func(p *capture.Packet) (bool, error)

// CopySource is a source that copies the packets it returns to a
// [PacketWriter] (-r with -w and no display filter), or with W nil only
// filters them: the packets that Keep lets through (a capture filter;
// nil: all) are returned, the others skipped.
type CopySource struct {
	*Files
	Keep KeepFunc
	W    *PacketWriter
}

// Next returns the next packet that Keep lets through, written first. A
// write error is an [*OutputError] naming the file.
func (s *CopySource) Next() (*capture.Packet, error) {
	for {
		p, err := s.Files.Next()
		if err != nil {
			return nil, err
		}
		if s.Keep != nil {
			if ok, err := s.Keep(p); err != nil {
				name, _, _, _, _ := s.Files.Current()
				return nil, fmt.Errorf("%s: -f: %w", name, err)
			} else if !ok {
				continue
			}
		}
		if s.W != nil {
			_, file, _, _, _ := s.Files.Current()
			if err := s.W.Write(file, p); err != nil {
				return nil, &OutputError{err}
			}
		}
		return p, nil
	}
}
