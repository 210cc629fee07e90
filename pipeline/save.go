package pipeline

import (
	"fmt"
	"os"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// Save is the -w file of a live capture or serial tap: a pcapng file with
// one interface, written by the capture goroutine as packets are read,
// flushed about once a second and closed with an interface statistics
// block holding the capture's counters.
type Save struct {
	path  string
	f     *os.File
	w     *capture.PcapngWriter
	start time.Time
	done  bool
}

// SaveStats are the counters written at the end of the file.
type SaveStats struct {
	HasKernel      bool
	PassedFilter   uint64
	KernelDropped  uint64
	Captured       uint64
	DissectDropped uint64
}

// CreateSave creates the file at path for packets of one interface.
func CreateSave(path, ifname string, lt capture.LinkType, snaplen uint32) (*Save, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := capture.NewPcapngWriter(f)
	if err == nil {
		_, err = w.AddInterface(ifname, lt, snaplen)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Save{path: path, f: f, w: w, start: time.Now()}, nil
}

// Path is the file's path.
func (s *Save) Path() string { return s.path }

// WritePacket writes p as a packet of the file's interface.
func (s *Save) WritePacket(p *capture.Packet) error {
	q := *p
	q.Interface = 0
	if err := s.w.WritePacket(&q); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// Flush writes what is buffered.
func (s *Save) Flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// Close writes the statistics block, flushes and closes the file; later
// calls do nothing.
func (s *Save) Close(st SaveStats) error {
	if s.done {
		return nil
	}
	s.done = true
	is := capture.InterfaceStats{
		Start:          s.start,
		End:            time.Now(),
		Delivered:      capture.Count(st.Captured),
		DissectDropped: capture.Count(st.DissectDropped),
	}
	if st.HasKernel {
		is.FilterAccepted = capture.Count(st.PassedFilter)
		is.KernelDropped = capture.Count(st.KernelDropped)
	}
	err := s.w.WriteStats(0, is)
	if ferr := s.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}
