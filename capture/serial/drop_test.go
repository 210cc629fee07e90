package serial

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// pattern returns n bytes of 4-byte big-endian counters (0, 1, 2, … each
// xor seed): every aligned word is different, so bytes at the wrong
// position show.
func pattern(n int, seed uint32) []byte {
	b := make([]byte, (n+3)/4*4)
	for i := range len(b) / 4 {
		binary.BigEndian.PutUint32(b[4*i:], uint32(i)^seed)
	}
	return b[:n]
}

// tally follows the packets of one direction against want, the bytes sent
// in it: each read's Data must be the next bytes of want, and a Dropped
// packet's Length skips as many.
type tally struct {
	want      []byte
	pos       int // bytes accounted for
	reads     int64
	delivered int64
	dropped   int64
	markers   int64
	marker    bool // the last packet was a marker
	twoMarks  bool // two markers came in a row
}

func (a *tally) add(t *testing.T, p *capture.Packet) {
	t.Helper()
	if p.Dropped {
		if len(p.Data) != 0 || p.Length <= 0 || a.pos+p.Length > len(a.want) {
			t.Fatalf("at byte %d: dropped marker with %d bytes, length %d (%d bytes sent)", a.pos, len(p.Data), p.Length, len(a.want))
		}
		a.twoMarks = a.twoMarks || a.marker
		a.marker = true
		a.markers++
		a.dropped += int64(p.Length)
		a.pos += p.Length
		return
	}
	n := len(p.Data)
	if n == 0 || p.Length != n || a.pos+n > len(a.want) {
		t.Fatalf("at byte %d: read of %d bytes, length %d (%d bytes sent)", a.pos, n, p.Length, len(a.want))
	}
	if !bytes.Equal(p.Data, a.want[a.pos:a.pos+n]) {
		t.Fatalf("bytes %d to %d are not the bytes sent there", a.pos, a.pos+n)
	}
	a.marker = false
	a.reads++
	a.delivered += int64(n)
	a.pos += n
}

// done reports whether every byte sent is accounted for.
func (a *tally) done() bool { return a.pos == len(a.want) }

// checkStats compares a direction's counts with what its packets showed.
func (a *tally) checkStats(t *testing.T, name string, st DirStats) {
	t.Helper()
	if st.Bytes != int64(len(a.want)) || st.Dropped != a.dropped || st.Markers != a.markers ||
		st.Reads-st.DroppedReads != a.reads || (st.Dropped == 0) != (st.DroppedReads == 0) {
		t.Fatalf("%s: stats %+v; packets: %d reads of %d bytes, %d markers of %d bytes, %d bytes sent",
			name, st, a.reads, a.delivered, a.markers, a.dropped, len(a.want))
	}
}

// noLeak fails the test when goroutines started during it are still
// running at its end (after its deferred calls and later cleanups). Call
// it first.
func noLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(waitTime)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines running after the test, %d before:\n%s", runtime.NumGoroutine(), before, buf)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// queueMem returns the size of the tap's queue buffer and its limit.
func queueMem(tap *Tap) (size, limit int) {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	return len(tap.q.buf), tap.q.limit
}

// feedReader returns the chunks sent on ch, one per Read, until closed.
type feedReader struct {
	ch     chan []byte
	closed chan struct{}
	once   sync.Once
}

func newFeedReader() *feedReader {
	return &feedReader{ch: make(chan []byte), closed: make(chan struct{})}
}

func (f *feedReader) Read(b []byte) (int, error) {
	select {
	case c := <-f.ch:
		return copy(b, c), nil
	case <-f.closed:
		return 0, os.ErrClosed
	}
}

func (f *feedReader) Close() error {
	f.once.Do(func() { close(f.closed) })
	return nil
}

// feed has r return c from one Read, and waits until the tap has counted
// that read.
func feed(t *testing.T, tap *Tap, r *feedReader, dir capture.Direction, c []byte) {
	t.Helper()
	reads := func() int64 {
		st := tap.Stats()
		if dir == capture.DirInbound {
			return st.Inbound.Reads
		}
		return st.Outbound.Reads
	}
	before := reads()
	select {
	case r.ch <- c:
	case <-time.After(waitTime):
		t.Fatal("the tap did not read")
	}
	deadline := time.Now().Add(waitTime)
	for reads() == before {
		if time.Now().After(deadline) {
			t.Fatal("the read was not counted")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// chunk returns the k-th test chunk: size bytes of value k.
func chunk(k int) []byte { return bytes.Repeat([]byte{byte(k)}, chunkSize) }

const chunkSize = 1000

// expect checks that the next packet is a read of chunk k, or with k < 0
// a marker of -k bytes.
func expect(t *testing.T, tap *Tap, dir capture.Direction, k int) capture.Packet {
	t.Helper()
	if k < 0 {
		return expectMarker(t, tap, dir, -k)
	}
	return expectRead(t, tap, dir, chunk(k))
}

// expectRead checks that the next packet is a read of data.
func expectRead(t *testing.T, tap *Tap, dir capture.Direction, data []byte) capture.Packet {
	t.Helper()
	p, err := nextWithin(t, tap)
	switch {
	case err != nil:
		t.Fatalf("want a read of %d bytes: %v", len(data), err)
	case p.Direction != dir || p.Dropped || p.Length != len(data) || !bytes.Equal(p.Data, data):
		t.Fatalf("got direction %d, dropped=%v, length %d, data % x...; want a read of %d bytes % x... in direction %d",
			p.Direction, p.Dropped, p.Length, p.Data[:min(len(p.Data), 4)], len(data), data[:min(len(data), 4)], dir)
	}
	return p
}

// expectMarker checks that the next packet is a marker of n bytes.
func expectMarker(t *testing.T, tap *Tap, dir capture.Direction, n int) capture.Packet {
	t.Helper()
	p, err := nextWithin(t, tap)
	switch {
	case err != nil:
		t.Fatalf("want a marker of %d bytes: %v", n, err)
	case p.Direction != dir || !p.Dropped || p.Length != n || len(p.Data) != 0:
		t.Fatalf("got direction %d, dropped=%v, length %d (%d bytes); want a marker of %d bytes in direction %d",
			p.Direction, p.Dropped, p.Length, len(p.Data), n, dir)
	}
	return p
}

// TestTapDropRun follows one run of drops read by read: the queue takes
// reads until its bytes run out; the reads after are dropped and counted
// in one marker, queued at the first drop with that read's time; once the
// consumer makes room, the next read is queued after the marker. Close
// with a marker queued still hands everything out, then io.EOF.
func TestTapDropRun(t *testing.T) {
	noLeak(t)
	r := newFeedReader()
	tap, err := NewTapQueue("mem", 2, MinQueueBytes, Input{Name: "a", R: r, Dir: capture.DirOutbound})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	// Each read takes its bytes and a header; room for one marker stays
	// free.
	_, limit := queueMem(tap)
	fit := (limit - hdrSize) / (chunkSize + hdrSize)
	if limit != MinQueueBytes || fit < 2 {
		t.Fatalf("limit %d, %d reads fit", limit, fit)
	}
	for k := range fit {
		feed(t, tap, r, capture.DirOutbound, chunk(k))
	}
	if st := tap.Stats().Outbound; st.DroppedReads != 0 {
		t.Fatalf("dropped before the queue was full: %+v", st)
	}
	before := time.Now()
	for k := fit; k < fit+3; k++ {
		feed(t, tap, r, capture.DirOutbound, chunk(k))
	}
	after := time.Now()
	st := tap.Stats().Outbound
	want := DirStats{Reads: int64(fit + 3), Bytes: int64(fit+3) * chunkSize, DroppedReads: 3, Dropped: 3 * chunkSize, Markers: 1}
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	if n := tap.Pending(); n != fit+1 {
		t.Fatalf("Pending = %d, want %d reads and a marker", n, fit+1)
	}
	if size, _ := queueMem(tap); size > limit {
		t.Fatalf("queue buffer of %d bytes, limit %d", size, limit)
	}

	// Room for one read: the next read follows the marker.
	expect(t, tap, capture.DirOutbound, 0)
	feed(t, tap, r, capture.DirOutbound, chunk(fit+3))
	if st := tap.Stats().Outbound; st.DroppedReads != 3 || st.Markers != 1 {
		t.Fatalf("stats %+v after room was made", st)
	}
	var last time.Time
	for k := 1; k < fit; k++ {
		last = expect(t, tap, capture.DirOutbound, k).Time
	}
	m := expect(t, tap, capture.DirOutbound, -3*chunkSize)
	if m.Time.Before(last) || m.Time.Before(before) || m.Time.After(after) || m.Interface != 2 || m.InterfaceName != "mem" || m.LinkType != capture.LinkUser0 {
		t.Fatalf("marker %+v: want the first dropped read's time (between %v and %v) and the link's interface", m, before, after)
	}
	if p := expect(t, tap, capture.DirOutbound, fit+3); p.Time.Before(m.Time) {
		t.Fatalf("read time %v before the marker's %v", p.Time, m.Time)
	}
	if n := tap.Pending(); n != 0 {
		t.Fatalf("Pending = %d", n)
	}

	// A second run, then Close: what was queued, the marker included, is
	// still handed out, then io.EOF.
	for k := range fit + 2 {
		feed(t, tap, r, capture.DirOutbound, chunk(k))
	}
	tap.Close()
	for k := range fit {
		expect(t, tap, capture.DirOutbound, k)
	}
	expect(t, tap, capture.DirOutbound, -2*chunkSize)
	if _, err := nextWithin(t, tap); !errors.Is(err, io.EOF) {
		t.Fatalf("after Close: %v, want io.EOF", err)
	}
	if st := tap.Stats().Outbound; st.Markers != 2 || st.Dropped != 5*chunkSize || st.Bytes != int64(2*fit+6)*chunkSize {
		t.Fatalf("stats %+v", st)
	}
}

// TestTapDropBothDirections: the queue is filled by one direction's
// reads as far as its bytes allow, the last read taking the last bytes but
// the room kept for markers; then both directions' drops still get their
// marker within the bound, and the merged queue stays in time order.
func TestTapDropBothDirections(t *testing.T) {
	noLeak(t)
	out, in := newFeedReader(), newFeedReader()
	tap, err := NewTapQueue("mem", 0, MinQueueBytes,
		Input{Name: "out", R: out, Dir: capture.DirOutbound},
		Input{Name: "in", R: in, Dir: capture.DirInbound})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	// Reads take their bytes and a header each; one header per input
	// stays free for its marker.
	_, limit := queueMem(tap)
	fit := (limit - 2*hdrSize) / (chunkSize + hdrSize)
	last := limit - fit*(chunkSize+hdrSize) - 3*hdrSize
	if last <= 0 {
		t.Fatalf("limit %d: no room for a last read after %d", limit, fit)
	}
	filler := bytes.Repeat([]byte{0xee}, last)
	for k := range fit {
		feed(t, tap, out, capture.DirOutbound, chunk(k))
	}
	feed(t, tap, out, capture.DirOutbound, filler)
	if st := tap.Stats().Outbound; st.DroppedReads != 0 {
		t.Fatalf("a read that fits was dropped: %+v", st)
	}
	feed(t, tap, out, capture.DirOutbound, []byte{1})
	feed(t, tap, in, capture.DirInbound, chunk(100))
	feed(t, tap, in, capture.DirInbound, chunk(101))
	feed(t, tap, out, capture.DirOutbound, []byte{2})
	st := tap.Stats()
	if st.Outbound.DroppedReads != 2 || st.Outbound.Dropped != 2 || st.Outbound.Markers != 1 ||
		st.Inbound.DroppedReads != 2 || st.Inbound.Dropped != 2*chunkSize || st.Inbound.Markers != 1 {
		t.Fatalf("stats %+v", st)
	}
	if tot := st.Total(); tot.Reads != int64(fit+5) || tot.Dropped != 2*chunkSize+2 || tot.Markers != 2 {
		t.Fatalf("total %+v", tot)
	}
	if size, _ := queueMem(tap); size > limit {
		t.Fatalf("queue buffer of %d bytes, limit %d", size, limit)
	}
	var ps []capture.Packet
	for k := range fit {
		ps = append(ps, expect(t, tap, capture.DirOutbound, k))
	}
	ps = append(ps, expectRead(t, tap, capture.DirOutbound, filler))
	ps = append(ps, expectMarker(t, tap, capture.DirOutbound, 2))
	ps = append(ps, expectMarker(t, tap, capture.DirInbound, 2*chunkSize))
	checkPackets(t, ps, "mem", 0)

	// Room again: both directions are queued.
	feed(t, tap, in, capture.DirInbound, chunk(102))
	feed(t, tap, out, capture.DirOutbound, chunk(fit+2))
	expect(t, tap, capture.DirInbound, 102)
	expect(t, tap, capture.DirOutbound, fit+2)
}

func TestQueueBytesConfig(t *testing.T) {
	r := &chunkReader{}
	if _, err := NewTapQueue("x", 0, -1, Input{Name: "a", R: r, Dir: capture.DirInbound}); err == nil {
		t.Fatal("a negative queue size was accepted")
	}
	if _, err := OpenTap(TapConfig{HostTx: "/nonexistent", QueueBytes: -1, Mode: DefaultMode()}); err == nil || isPortError(err, "/nonexistent", ErrNotFound) {
		t.Fatalf("negative QueueBytes: %v, want a configuration error before opening", err)
	}
	for _, c := range []struct{ set, want int }{{0, DefaultQueueBytes}, {1, MinQueueBytes}, {1 << 20, 1 << 20}} {
		tap, err := NewTapQueue("x", 0, c.set, Input{Name: "a", R: &chunkReader{}, Dir: capture.DirInbound})
		if err != nil {
			t.Fatal(err)
		}
		if _, limit := queueMem(tap); limit != c.want {
			t.Errorf("QueueBytes %d: limit %d, want %d", c.set, limit, c.want)
		}
		tap.Close()
	}
	// The default mode is a fresh value each time.
	m := DefaultMode()
	m.Baud = 9600
	if DefaultMode().Baud != 115200 {
		t.Fatal("DefaultMode changed")
	}
}
