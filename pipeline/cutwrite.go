package pipeline

import (
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
type PacketWriter struct {
	path   string
	f      *os.File
	w      *capture.PcapngWriter
	ifaces map[[2]int]int // (file, interface) → output interface
	n      int64
}

// CreatePacketWriter creates the file at path and writes its section
// header.
func CreatePacketWriter(path string) (*PacketWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err // *PathError: it names the file
	}
	w, err := capture.NewPcapngWriter(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &PacketWriter{path: path, f: f, w: w, ifaces: map[[2]int]int{}}, nil
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
	if err := pw.w.WritePacket(&q); err != nil {
		return fmt.Errorf("%s: packet %d: %w", pw.path, pw.n+1, err)
	}
	pw.n++
	return nil
}

// Written is the number of packets written.
func (pw *PacketWriter) Written() int64 { return pw.n }

// Path is the file's path.
func (pw *PacketWriter) Path() string { return pw.path }

// Close flushes and closes the file.
func (pw *PacketWriter) Close() error {
	err := pw.w.Flush()
	if cerr := pw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", pw.path, err)
	}
	return nil
}

// CopyCut reads src, the files of a run that c followed, again from their
// first packet and writes the packets c marked to w, in capture order.
// Packets that keep rejects are skipped as in the first run (a capture
// filter: the Cut counted only those it let through). The read stops
// after the packets the run read; a read error (the run reported it
// already) ends the copy and is returned as it is, a write error names
// w's file.
func CopyCut(src *Files, keep KeepFunc, c *Cut, w *PacketWriter) error {
	for i := int64(0); i < c.Packets(); {
		p, err := src.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
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
		if c.Marked(i) {
			_, file, _, _, _ := src.Current()
			if err := w.Write(file, p); err != nil {
				return &OutputError{err}
			}
		}
		i++
	}
	return nil
}

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
