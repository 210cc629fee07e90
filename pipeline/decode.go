package pipeline

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/reassembly"
)

// maxSampleWarnings and maxNotes bound the warnings and notes kept for the
// summary; every warning is in the output records all the same.
const (
	maxSampleWarnings = 20
	maxNotes          = 100
)

// noTimeWarning is added to the records that a packet without a
// timestamp completed.
const noTimeWarning = "time taken from the previous packet: the file gives this packet none (pcapng simple packet block)"

// decoder turns packets into records: reassembly, then one dissect.Stream
// per stream, then the sink. It counts what it sees for the summary. It is
// used by one goroutine.
type decoder struct {
	reg    *dissect.Registry
	sink   dissect.Sink // nil: count only
	sopt   dissect.StreamOptions
	asm    *reassembly.Assembler
	held   *dissect.HeldBudget // bounds what all streams hold together
	epoch  EpochSetter
	opened StreamOpener
	cut    *Cut // Config.Cut

	packets, bytes int64
	noTime         int64     // packets without a timestamp in the file
	curNoTime      bool      // the packet being decoded has no timestamp
	last           time.Time // the latest packet's time: when streams end
	minT, maxT     time.Time // over packets with a timestamp: the capture's span
	timed          bool
	first          time.Time // the first timestamped packet's: every record's Epoch

	counts       dissect.TypeCounts
	gaps         int64
	gapBytes     int64
	skipped      int64
	skippedBytes int64
	warned       int64
	warnings     []string
	seenWarn     map[string]bool
	notes        []string

	err error // the first error a sink returned
}

// streamState is a decoder's state of one stream.
type streamState struct {
	ds     *dissect.Stream
	closed [2]bool
	joined [2]bool // the dissector was told reassembly.Stream.Joined
}

func newDecoder(cfg *Config) *decoder {
	d := &decoder{
		reg:      cfg.Registry,
		sink:     cfg.Sink,
		sopt:     dissect.StreamOptions{Limits: cfg.Limits, Decode: !cfg.CountOnly && !cfg.TypesOnly, CountOnly: cfg.CountOnly, Raw: cfg.Raw},
		seenWarn: map[string]bool{},
	}
	if cfg.CountOnly {
		d.sopt.Counts = &d.counts // one bounded table for the run's streams
	}
	if cfg.Registry != nil {
		d.counts.SetKeep(cfg.Registry.DeclaresType) // declared types are never folded
	}
	d.counts.SetLimit(cfg.MaxTypes)
	d.held = dissect.NewHeldBudget(cfg.Limits.MaxHeld)
	d.sopt.Budget = d.held
	d.epoch, _ = cfg.Sink.(EpochSetter)
	d.opened, _ = cfg.Sink.(StreamOpener)
	if cfg.Cut != nil && cfg.Live == nil {
		d.cut = cfg.Cut
		d.asm = reassembly.New(cutHandler{(*handler)(d), d.cut}, cfg.Reassembly)
		d.asm.ObserveSegments(d.cut.segment)
	} else {
		d.asm = reassembly.New((*handler)(d), cfg.Reassembly)
	}
	return d
}

// packet decodes one packet; it returns the first sink error.
func (d *decoder) packet(p *capture.Packet) error {
	if d.err != nil {
		return d.err
	}
	d.packets++
	d.bytes += int64(len(p.Data))
	if p.NoTime {
		d.noTime++
	} else {
		if !d.timed {
			d.timed = true
			d.minT, d.maxT = p.Time, p.Time
			d.first = p.Time
			if d.epoch != nil {
				d.epoch.SetEpoch(p.Time)
			}
		}
		if p.Time.Before(d.minT) {
			d.minT = p.Time
		}
		if p.Time.After(d.maxT) {
			d.maxT = p.Time
		}
	}
	d.last = p.Time
	d.curNoTime = p.NoTime
	if d.cut != nil {
		d.cut.packet(p)
	}
	d.asm.Packet(p)
	return d.err
}

// expire ends the streams idle for longer than idle at now.
func (d *decoder) expire(now time.Time, idle time.Duration) error {
	if d.err == nil && idle > 0 {
		d.asm.Expire(now, idle)
	}
	return d.err
}

// finish ends every stream: what is held becomes gap or skipped records.
func (d *decoder) finish() error {
	if d.err == nil {
		d.asm.Flush(d.last)
	}
	return d.err
}

// record counts r and passes it on.
func (d *decoder) record(r *dissect.Record) error {
	if d.cut != nil {
		d.cut.seen(r)
	}
	switch r.Type {
	case dissect.TypeGap:
		d.gaps++
		d.gapBytes += r.Length
	case dissect.TypeSkipped:
		d.skipped++
		d.skippedBytes += r.Length
	default:
		d.counts.Add(r.Proto, r.Type)
	}
	r.Epoch = d.first
	if d.curNoTime {
		r.Warn(noTimeWarning)
	}
	if len(r.Warnings) > 0 {
		d.warned++
		for _, w := range r.Warnings {
			if len(d.warnings) < maxSampleWarnings && !d.seenWarn[w] {
				d.seenWarn[w] = true
				d.warnings = append(d.warnings, w)
			}
		}
	}
	if d.sink == nil {
		return nil
	}
	return d.sink.Record(r)
}

// streamDone adds what a stream counted itself (summary-only runs) and its
// notes.
func (d *decoder) streamDone(ds *dissect.Stream) {
	d.counts.Merge(ds.Counts())
	for _, n := range ds.Notes() {
		if len(d.notes) < maxNotes {
			d.notes = append(d.notes, n)
		}
	}
}

// summary fills s with the decoder's counts.
func (d *decoder) summary(s *dissect.Summary) {
	s.Packets, s.Bytes = d.packets, d.bytes
	s.First, s.Last = d.minT, d.maxT
	s.NoTime = d.noTime
	s.Messages = d.counts.Rows()
	s.Gaps, s.GapBytes = d.gaps, d.gapBytes
	s.Skipped, s.SkippedBytes = d.skipped, d.skippedBytes
	s.Warned, s.Warnings, s.Notes = d.warned, d.warnings, d.notes
	st := d.asm.Stats()
	s.Streams = dissect.StreamCounts{TCP: st.Streams.TCP, UDP: st.Streams.UDP, Serial: st.Streams.Serial}
	s.Problems = problems(&st)
	s.Held = dissect.HeldCounts{Budget: d.held.Max(), Peak: d.held.Peak()}
	s.Held.Dropped, s.Held.DroppedBytes = d.held.Dropped()
	if s.Held.Dropped > 0 {
		s.Problems = append(s.Problems, dissect.Count{What: fmt.Sprintf("unfinished messages dropped (skipped records): the held-message budget of %d bytes was reached; raise --max-held-messages", s.Held.Budget), N: s.Held.Dropped})
	}
	if n := s.Held.DroppedBytes; n > 0 {
		s.Problems = append(s.Problems, dissect.Count{What: "bytes held for unfinished messages, resyncs or detection given up to the held-message budget (in skipped records)", N: n})
	}
	if d.noTime > 0 {
		s.Problems = append(s.Problems, dissect.Count{What: "packets without a timestamp in the file (each took the previous packet's time)", N: d.noTime})
	}
}

// handler adapts the decoder to reassembly.Handler without exporting the
// methods.
type handler decoder

func (h *handler) Open(s *reassembly.Stream, t reassembly.Stamp) {
	d := (*decoder)(h)
	info := dissect.StreamInfo{StreamID: s.StreamID}
	switch {
	case s.Carries != "":
		// A log file: one side of a connection, which the file does not
		// name; its messages are direction 1, sent from the file, named
		// without its directory to keep the table narrow.
		info.Name = [2]string{"", filepath.Base(s.Link)}
	case info.Transport == dissect.Serial:
		info.Name = [2]string{"host", s.Link}
	default:
		info.Name = [2]string{addrString(s.Addr[0]), addrString(s.Addr[1])}
	}
	if d.opened != nil {
		d.opened.StreamOpened(s.StreamID)
	}
	s.User = &streamState{ds: dissect.NewStream(info, d.reg, dissect.SinkFunc(d.record), d.sopt)}
}

func addrString(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func (h *handler) check(st *streamState) {
	if err := st.ds.Err(); err != nil && h.err == nil {
		h.err = err
	}
}

func (h *handler) Data(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, data []byte) {
	if st, _ := s.User.(*streamState); st != nil {
		if s.Joined[dir] && !st.joined[dir] {
			st.joined[dir] = true
			st.ds.Joined(dir)
		}
		st.ds.DataAt(dir, t, data)
		h.check(st)
	}
}

func (h *handler) Datagram(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, data []byte) {
	if st, _ := s.User.(*streamState); st != nil {
		st.ds.DatagramAt(dir, t, data)
		h.check(st)
	}
}

func (h *handler) Gap(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp, n int64) {
	if st, _ := s.User.(*streamState); st != nil {
		st.ds.GapAt(dir, t, n)
		h.check(st)
	}
}

func (h *handler) Conflict(s *reassembly.Stream, dir reassembly.Dir, t time.Time, off, n int64) {
	if st, _ := s.User.(*streamState); st != nil {
		st.ds.Conflict(dir, t, off, n)
	}
}

func (h *handler) Close(s *reassembly.Stream, dir reassembly.Dir, t reassembly.Stamp) {
	st, _ := s.User.(*streamState)
	if st == nil || st.closed[dir&1] {
		return
	}
	st.ds.EndAt(dir, t)
	st.closed[dir&1] = true
	h.check(st)
	if st.closed[0] && st.closed[1] {
		(*decoder)(h).streamDone(st.ds)
		s.User = nil
	}
}
