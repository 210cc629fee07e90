package pipeline

import (
	"fmt"
	"os"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// Save is the -w output of a live capture or serial tap: pcapng with one
// interface, written by the capture goroutine as packets are read, flushed
// about once a second. Every file ends with an interface statistics block
// holding the capture's counters so far, so each opens on its own.
//
// With a [Ring], packets go on in numbered, time-stamped files (see
// ringName): a file is closed when it has reached Ring.FileSize or
// Ring.Packets, or when the next packet is Ring.Duration or more after
// its first (by packet time), and with Ring.Files the oldest is deleted.
// A file is switched only for a packet, so an idle link makes no empty
// files.
type Save struct {
	path    string // -w as given
	ifname  string
	lt      capture.LinkType
	snaplen uint32
	ring    Ring
	started time.Time // the capture's start, in every statistics block

	// stats, when set, reads the capture's counters for the statistics
	// block of a file closed before the end (called by the goroutine
	// that writes packets).
	stats func() SaveStats

	seq     int      // number of the current ring file
	files   []string // the files kept, oldest first; the last is open
	deleted int      // ring files deleted by Ring.Files
	total   uint64   // packets written, all files

	f       *os.File
	w       *capture.PcapngWriter
	created time.Time // the current file's creation (its name)
	first   time.Time // the time of its first packet
	pkts    int64     // packets in the current file
	full    bool      // the next packet goes to a new file
	done    bool
}

// SaveStats are the counters written at the end of the file.
type SaveStats struct {
	HasKernel      bool
	PassedFilter   uint64
	KernelDropped  uint64
	Captured       uint64
	DissectDropped uint64
}

// CreateSave creates the file at path (or, with an active ring, the first
// of its files) for packets of one interface.
func CreateSave(path, ifname string, lt capture.LinkType, snaplen uint32, ring Ring) (*Save, error) {
	s := &Save{path: path, ifname: ifname, lt: lt, snaplen: snaplen, ring: ring, started: time.Now()}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// NewSave is CreateSave for a file already open for writing, such as the
// fifo Wireshark reads an extcap capture from (opening a fifo for writing
// waits for its reader, which the caller may want to give up on). It
// writes one file, whatever its size; Close closes f, and so does a
// failure to write the header blocks.
func NewSave(f *os.File, ifname string, lt capture.LinkType, snaplen uint32) (*Save, error) {
	s := &Save{path: f.Name(), ifname: ifname, lt: lt, snaplen: snaplen, started: time.Now()}
	if err := s.start(f, s.path); err != nil {
		return nil, err
	}
	return s, nil
}

// open creates the next file and writes its header blocks.
func (s *Save) open() error {
	s.created = time.Now()
	name := s.path
	if s.ring.Active() {
		s.seq++
		name = ringName(s.path, s.seq, s.created)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := s.start(f, name); err != nil {
		return err
	}
	if s.ring.Files > 0 && len(s.files) > s.ring.Files {
		if err := os.Remove(s.files[0]); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("-b files:%d: %w", s.ring.Files, err)
		}
		s.files = s.files[1:]
		s.deleted++
	}
	return nil
}

// start writes the header blocks to f, named name, which becomes the
// current file; on failure it closes f.
func (s *Save) start(f *os.File, name string) error {
	w, err := capture.NewPcapngWriter(f)
	if err == nil {
		_, err = w.AddInterface(s.ifname, s.lt, s.snaplen)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	s.f, s.w, s.pkts, s.full = f, w, 0, false
	s.files = append(s.files, name)
	return nil
}

// Path is the current file's path.
func (s *Save) Path() string { return s.files[len(s.files)-1] }

// Files are the paths of the files kept, oldest first, and the number of
// older ones deleted by Ring.Files.
func (s *Save) Files() (kept []string, deleted int) { return s.files, s.deleted }

// SetStats gives the counters for the statistics block of each file a
// ring closes before the end; without it those blocks hold only the
// packets written.
func (s *Save) SetStats(f func() SaveStats) { s.stats = f }

// WritePacket writes p as a packet of the interface, in a new file first
// when the ring says so.
func (s *Save) WritePacket(p *capture.Packet) error {
	if s.full || s.ring.Duration > 0 && s.pkts > 0 && p.Time.Sub(s.first) >= s.ring.Duration {
		if err := s.next(); err != nil {
			return err
		}
	}
	q := *p
	q.Interface = 0
	if err := s.w.WritePacket(&q); err != nil {
		return fmt.Errorf("%s: %w", s.Path(), err)
	}
	if s.pkts == 0 {
		s.first = p.Time
	}
	s.pkts++
	s.total++
	s.full = s.ring.Packets > 0 && s.pkts >= s.ring.Packets ||
		s.ring.FileSize > 0 && s.w.Size() >= s.ring.FileSize
	return nil
}

// next closes the current file and opens the next.
func (s *Save) next() error {
	var st SaveStats
	if s.stats != nil {
		st = s.stats()
	}
	st.Captured = s.total
	if err := s.closeFile(st); err != nil {
		return err
	}
	return s.open()
}

// Flush writes what is buffered.
func (s *Save) Flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", s.Path(), err)
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
	return s.closeFile(st)
}

func (s *Save) closeFile(st SaveStats) error {
	is := capture.InterfaceStats{
		Start:          s.started,
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
		return fmt.Errorf("%s: %w", s.Path(), err)
	}
	return nil
}
