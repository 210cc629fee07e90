package reassembly

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// event is one recorded Handler call.
type event struct {
	kind string // open, data, dgram, gap, close
	id   int
	dir  Dir
	data string
	n    int64
	off  int64 // conflict
	tr   Transport
}

// String renders the event the way the tests' expectations are written:
// "open 0", "data 0/1 hello", "dgram 2/0 x", "gap 0/0 5", "close 0/1".
func (e event) String() string {
	switch e.kind {
	case "open":
		return fmt.Sprintf("open %d", e.id)
	case "data", "dgram":
		return fmt.Sprintf("%s %d/%d %s", e.kind, e.id, e.dir, e.data)
	case "gap":
		return fmt.Sprintf("gap %d/%d %d", e.id, e.dir, e.n)
	case "conflict":
		return fmt.Sprintf("conflict %d/%d %d+%d", e.id, e.dir, e.off, e.n)
	}
	return fmt.Sprintf("%s %d/%d", e.kind, e.id, e.dir)
}

// recorder is a Handler that records every event, copying the data, and
// checks the contract as it goes: Open first and once per stream with IDs
// 0, 1, 2... in order; nothing on a direction after its Close; Data only
// on TCP and serial streams, Datagram only on UDP (Gap on any: a dropped
// datagram is a gap of its flow); no empty Data and no Gap of n <= 0.
type recorder struct {
	events    []event
	streams   []*Stream
	errs      []string
	closed    map[[2]int]bool
	span      map[[2]int]int64 // Data + Gap bytes per (id, dir)
	dgrams    map[[2]int]int
	conflicts int64 // Conflict bytes
	keep      bool  // record events (the fuzz target only checks)
}

func newRecorder() *recorder {
	return &recorder{closed: map[[2]int]bool{}, span: map[[2]int]int64{}, dgrams: map[[2]int]int{}, keep: true}
}

func (r *recorder) fail(format string, args ...any) {
	if len(r.errs) < 20 {
		r.errs = append(r.errs, fmt.Sprintf(format, args...))
	}
}

func (r *recorder) add(e event) {
	if r.keep {
		r.events = append(r.events, e)
	}
}

func (r *recorder) check(s *Stream, dir Dir, what string) [2]int {
	k := [2]int{s.ID, int(dir)}
	if s.ID < 0 || s.ID >= len(r.streams) || r.streams[s.ID] != s {
		r.fail("%s on stream %d that was not opened", what, s.ID)
	}
	if dir > 1 {
		r.fail("%s on stream %d: direction %d", what, s.ID, dir)
	}
	if r.closed[k] {
		r.fail("%s on stream %d dir %d after its Close", what, s.ID, dir)
	}
	return k
}

func (r *recorder) Open(s *Stream, t Stamp) {
	if s.ID != len(r.streams) {
		r.fail("open: stream ID %d, want %d", s.ID, len(r.streams))
	}
	if s.Transport < TCP || s.Transport > Serial {
		r.fail("open: transport %d", s.Transport)
	}
	r.streams = append(r.streams, s)
	r.add(event{kind: "open", id: s.ID, tr: s.Transport})
}

func (r *recorder) Data(s *Stream, dir Dir, t Stamp, data []byte) {
	k := r.check(s, dir, "data")
	if s.Transport == UDP {
		r.fail("data on UDP stream %d", s.ID)
	}
	if len(data) == 0 {
		r.fail("empty data on stream %d", s.ID)
	}
	r.span[k] += int64(len(data))
	r.add(event{kind: "data", id: s.ID, dir: dir, data: string(data), tr: s.Transport})
}

func (r *recorder) Datagram(s *Stream, dir Dir, t Stamp, data []byte) {
	k := r.check(s, dir, "datagram")
	if s.Transport != UDP {
		r.fail("datagram on non-UDP stream %d", s.ID)
	}
	r.dgrams[k]++
	r.span[k] += int64(len(data))
	r.add(event{kind: "dgram", id: s.ID, dir: dir, data: string(data), tr: s.Transport})
}

func (r *recorder) Gap(s *Stream, dir Dir, t Stamp, n int64) {
	k := r.check(s, dir, "gap")
	if n <= 0 {
		r.fail("gap of %d bytes on stream %d", n, s.ID)
	}
	r.span[k] += n
	r.add(event{kind: "gap", id: s.ID, dir: dir, n: n, tr: s.Transport})
}

// Conflict records "conflict id/dir off+n"; it must come before the
// direction's Close, and its range must lie in the stream: either still
// ahead (held data) or wholly delivered (a remembered segment).
func (r *recorder) Conflict(s *Stream, dir Dir, t time.Time, off, n int64) {
	k := r.check(s, dir, "conflict")
	if n <= 0 || off < 0 || (off < r.span[k] && off+n > r.span[k]) {
		r.fail("conflict %d+%d on stream %d dir %d, %d bytes delivered", off, n, s.ID, dir, r.span[k])
	}
	r.conflicts += n
	r.add(event{kind: "conflict", id: s.ID, dir: dir, off: off, n: n, tr: s.Transport})
}

func (r *recorder) Close(s *Stream, dir Dir, t Stamp) {
	k := r.check(s, dir, "close")
	r.closed[k] = true
	r.add(event{kind: "close", id: s.ID, dir: dir, tr: s.Transport})
}

// strings returns the recorded events rendered.
func (r *recorder) strings() []string {
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.String()
	}
	return out
}

// allClosed reports contract errors if some direction of an opened stream
// was not closed.
func (r *recorder) allClosed() {
	for id := range r.streams {
		for d := range 2 {
			if !r.closed[[2]int{id, d}] {
				r.fail("stream %d dir %d never closed", id, d)
			}
		}
	}
}

// verify fails t with the contract errors seen.
func (r *recorder) verify(t *testing.T) {
	t.Helper()
	for _, e := range r.errs {
		t.Error(e)
	}
}

// checkSpans is the byte-accounting invariant: for every listed direction
// ("id/dir"), the bytes delivered plus the gap bytes equal the byte range
// the test sent in that direction; directions not listed must carry
// nothing.
func checkSpans(t *testing.T, r *recorder, want map[string]int64) {
	t.Helper()
	for k, n := range r.span {
		key := fmt.Sprintf("%d/%d", k[0], k[1])
		if want[key] != n {
			t.Errorf("direction %s: data+gap = %d bytes, want %d", key, n, want[key])
		}
	}
	for key, n := range want {
		var id, d int
		fmt.Sscanf(key, "%d/%d", &id, &d)
		if r.span[[2]int{id, d}] != n {
			t.Errorf("direction %s: data+gap = %d bytes, want %d", key, r.span[[2]int{id, d}], n)
		}
	}
}

// eventsEqual compares rendered event sequences and prints both on
// mismatch.
func eventsEqual(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n  got:  %q\n  want: %q", got, want)
	}
}

// readPcap is a minimal reader of classic pcap files (24-byte file header,
// 16-byte record headers, either byte order, micro- or nanosecond
// timestamps), written here so that the tests do not depend on the capture
// package's reader.
func readPcap(path string) ([]*capture.Packet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 24 {
		return nil, errors.New("pcap: short file header")
	}
	var bo binary.ByteOrder
	nano := false
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4:
		bo = binary.LittleEndian
	case 0xa1b23c4d:
		bo, nano = binary.LittleEndian, true
	case 0xd4c3b2a1:
		bo = binary.BigEndian
	case 0x4d3cb2a1:
		bo, nano = binary.BigEndian, true
	default:
		return nil, errors.New("pcap: bad magic")
	}
	lt := capture.LinkType(bo.Uint32(b[20:24]) & 0xffff)
	var out []*capture.Packet
	for off := 24; off < len(b); {
		if len(b)-off < 16 {
			return nil, io.ErrUnexpectedEOF
		}
		sec, frac := bo.Uint32(b[off:]), bo.Uint32(b[off+4:])
		incl, orig := int(bo.Uint32(b[off+8:])), int(bo.Uint32(b[off+12:]))
		off += 16
		if incl > len(b)-off {
			return nil, io.ErrUnexpectedEOF
		}
		ns := int64(frac) * 1000
		if nano {
			ns = int64(frac)
		}
		out = append(out, &capture.Packet{
			Time: time.Unix(int64(sec), ns).UTC(), LinkType: lt,
			Data: b[off : off+incl], Length: orig,
		})
		off += incl
	}
	return out, nil
}
