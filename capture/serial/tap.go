package serial

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

const (
	// ReadSize is the largest read, and so the largest packet: the buffer
	// each read is made into.
	ReadSize = 4096
	// DefaultQueueBytes is the default bound on the memory that reads
	// waiting for a slow consumer may hold (TapConfig.QueueBytes).
	DefaultQueueBytes = 16 << 20
	// MinQueueBytes is the smallest queue; smaller settings are raised to
	// it.
	MinQueueBytes = 2 * ReadSize
	// Snaplen is the largest packet a tap yields, for capture file headers.
	Snaplen = ReadSize
	// maxZeroReads is how many empty reads in a row end an input.
	maxZeroReads = 100
)

// Input is one direction of a serial link.
type Input struct {
	// Name names the input in errors: the port's device path.
	Name string
	// R yields the direction's bytes. A Read blocks until at least one byte
	// is available. When R is an io.Closer, [Tap.Close] closes it, which
	// must make a Read in progress return. io.EOF ends the input cleanly;
	// any other error ends the tap with a *[PortError].
	R io.Reader
	// Dir is [capture.DirOutbound] for host→device bytes and
	// [capture.DirInbound] for device→host bytes.
	Dir capture.Direction
	// Forward, when not nil, receives every read before the read is queued
	// (a proxy's other side); a failed write ends the tap. When Forward is
	// an io.Closer, [Tap.Close] closes it.
	Forward io.Writer
	// ForwardName names Forward in errors.
	ForwardName string
}

// Tap merges the reads of its inputs into packets of one serial link, in
// the order the reads completed. Each input is read by its own goroutine,
// which never waits for the consumer: reads are copied into a queue of at
// most QueueBytes bytes; while it is full they are counted and dropped,
// and [Tap.Next] hands out a packet with Dropped set in their place.
type Tap struct {
	link    string
	iface   int
	inputs  []Input
	closers []io.Closer
	reserve int // queue room kept for one marker per input

	mu     sync.Mutex // guards everything below up to the consumer's fields
	ready  sync.Cond  // a record was queued, an input failed or ended
	q      ring
	last   time.Time // the last time stamp given
	runs   []run     // per input
	stats  [2]DirStats
	live   int        // inputs still being read
	failed *PortError // the first input failure
	failAt int64      // records queued before it

	closing atomic.Bool
	once    sync.Once
	wg      sync.WaitGroup

	// The consumer's (Next's) own.
	cur   capture.Packet
	out   []byte
	err   error
	atEnd bool
}

// run is an input's current run of dropped reads.
type run struct {
	open   bool   // the input's last read was dropped
	marker int64  // the run's marker's position in the queue
	rec    record // the marker
}

// DirStats count the reads of one direction of a tap.
type DirStats struct {
	Reads        int64 // reads that returned bytes
	Bytes        int64 // bytes read from the port: queued or dropped
	DroppedReads int64 // reads not queued because the queue was full
	Dropped      int64 // bytes of those reads
	Markers      int64 // Dropped packets queued in their place
}

// TapStats count a tap's reads per direction since it was opened.
type TapStats struct {
	Outbound DirStats // host→device ([capture.DirOutbound])
	Inbound  DirStats // device→host ([capture.DirInbound])
}

// Total returns the sums over both directions.
func (s TapStats) Total() DirStats {
	return DirStats{
		Reads:        s.Outbound.Reads + s.Inbound.Reads,
		Bytes:        s.Outbound.Bytes + s.Inbound.Bytes,
		DroppedReads: s.Outbound.DroppedReads + s.Inbound.DroppedReads,
		Dropped:      s.Outbound.Dropped + s.Inbound.Dropped,
		Markers:      s.Outbound.Markers + s.Inbound.Markers,
	}
}

// NewTap starts reading inputs as the directions of the serial link named
// link (the name reassembly keys the stream by, and the pcapng if_name),
// with a queue of [DefaultQueueBytes]. Packets carry interface index iface.
// Inputs must have distinct readers.
func NewTap(link string, iface int, inputs ...Input) (*Tap, error) {
	return NewTapQueue(link, iface, 0, inputs...)
}

// NewTapQueue is [NewTap] with a queue of at most queueBytes bytes (0:
// [DefaultQueueBytes]; at least [MinQueueBytes]). Each queued read takes
// its length plus 16 bytes.
func NewTapQueue(link string, iface, queueBytes int, inputs ...Input) (*Tap, error) {
	if len(inputs) == 0 {
		return nil, errors.New("serial: tap with no input")
	}
	if queueBytes < 0 {
		return nil, fmt.Errorf("serial: queue of %d bytes: must not be negative", queueBytes)
	}
	for _, in := range inputs {
		if in.R == nil {
			return nil, fmt.Errorf("serial: input %q has no reader", in.Name)
		}
		if in.Dir != capture.DirInbound && in.Dir != capture.DirOutbound {
			return nil, fmt.Errorf("serial: input %q: direction must be inbound or outbound", in.Name)
		}
	}
	if queueBytes == 0 {
		queueBytes = DefaultQueueBytes
	}
	reserve := hdrSize * len(inputs)
	t := &Tap{
		link:    link,
		iface:   iface,
		inputs:  slices.Clone(inputs),
		reserve: reserve,
		q:       ring{limit: max(queueBytes, MinQueueBytes, ReadSize+hdrSize+reserve)},
		runs:    make([]run, len(inputs)),
		live:    len(inputs),
		out:     make([]byte, ReadSize),
	}
	t.ready.L = &t.mu
	// Each closer once (a proxy's sides are both a reader and a forward
	// target); closers of types that cannot be compared are kept as they
	// are.
	seen := map[any]bool{}
	for _, in := range inputs {
		for _, x := range []any{in.R, in.Forward} {
			c, ok := x.(io.Closer)
			if !ok {
				continue
			}
			if reflect.TypeOf(c).Comparable() {
				if seen[c] {
					continue
				}
				seen[c] = true
			}
			t.closers = append(t.closers, c)
		}
	}
	t.wg.Add(len(inputs))
	for i := range inputs {
		go t.read(i)
	}
	return t, nil
}

// Link returns the link's name.
func (t *Tap) Link() string { return t.link }

// Next returns the next read as a packet. It blocks until a read completes.
// It returns io.EOF after [Tap.Close] (once the reads queued before it are
// returned) and when every input has ended, and the first *[PortError]
// after the reads before it; the tap should then be closed. The packet and
// its Data are valid until the next call to Next.
//
// While the queue is full, reads are dropped; the first dropped read of a
// run queues, in its place, a packet with Dropped set, no Data, the time
// of that read and, as Length, the bytes of the run dropped so far (the
// reads dropped after Next returned it start a new run). So within a
// direction, the Data and the Lengths of Dropped packets account for every
// byte read, in order.
func (t *Tap) Next() (*capture.Packet, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.atEnd {
		return nil, io.EOF
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		if t.failed != nil && t.q.popped == t.failAt {
			t.err = t.failed
			return nil, t.err
		}
		if t.q.count > 0 {
			break
		}
		if t.live == 0 {
			t.atEnd = true
			return nil, io.EOF
		}
		t.ready.Wait()
	}
	rec, data := t.q.pop(t.out)
	t.cur = capture.Packet{
		Time:          rec.t,
		LinkType:      capture.LinkUser0,
		Interface:     t.iface,
		InterfaceName: t.link,
		Direction:     rec.dir,
		Data:          data,
		Length:        int(rec.n),
		Dropped:       rec.marker,
	}
	return &t.cur, nil
}

// Pending returns how many packets are queued: 0 means the consumer has
// caught up, a good time to flush output.
func (t *Tap) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.q.count
}

// Stats returns the tap's counts so far. It is safe to call from any
// goroutine, also after Close.
func (t *Tap) Stats() TapStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TapStats{Outbound: t.stats[0], Inbound: t.stats[1]}
}

// Close stops reading: it closes the inputs (unblocking their reads) and
// waits for the reading goroutines to end. Reads queued before are still
// returned by Next, then io.EOF. Close is safe to call more than once and
// concurrently with Next.
func (t *Tap) Close() error {
	t.once.Do(func() {
		t.closing.Store(true)
		for _, c := range t.closers {
			c.Close()
		}
		t.wg.Wait()
	})
	return nil
}

// Stop is Close, for callers that stop a live source from another
// goroutine and close it later.
func (t *Tap) Stop() { t.Close() }

// read is the goroutine of input i. It reads into one buffer, which push
// copies into the queue or drops, so it never waits for the consumer.
func (t *Tap) read(i int) {
	defer t.end()
	in := &t.inputs[i]
	buf := make([]byte, ReadSize)
	zero := 0
	for !t.closing.Load() {
		n, err := in.R.Read(buf)
		if n > 0 {
			if in.Forward != nil {
				if _, werr := writeAll(in.Forward, buf[:n]); werr != nil {
					t.fail(portError(in.ForwardName, opWrite, werr))
					return
				}
			}
			t.push(i, buf[:n])
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.fail(portError(in.Name, opRead, err))
			}
			return
		}
		if n > 0 {
			zero = 0
		} else if zero++; zero >= maxZeroReads {
			// A reader that keeps returning nothing without an error would
			// spin for ever.
			t.fail(portError(in.Name, opRead, io.ErrNoProgress))
			return
		}
	}
}

// end marks a reading goroutine's end.
func (t *Tap) end() {
	t.mu.Lock()
	t.live--
	t.ready.Broadcast()
	t.mu.Unlock()
	t.wg.Done()
}

// push stamps read b of input i with the current time and queues it, or,
// when the queue is full, counts it as dropped: the input's open marker
// grows, or a new one is queued. Stamping under the lock keeps the times
// of the merged queue in order.
//
// The queue always keeps room for one marker per input (t.reserve): a read
// is queued only if that much room is left after it, and an input's run of
// drops uses it for one marker, given back when the marker is handed out.
// So a marker can always be queued, and no byte goes uncounted.
func (t *Tap) push(i int, b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now().UTC()
	if now.Before(t.last) { // the wall clock stepped back
		now = t.last
	}
	t.last = now
	dir := t.inputs[i].Dir
	st := &t.stats[dirIndex(dir)]
	st.Reads++
	st.Bytes += int64(len(b))
	r := &t.runs[i]
	if t.q.used+hdrSize+len(b)+t.reserve <= t.q.limit {
		t.q.push(record{t: now, n: int64(len(b)), dir: dir}, b)
		r.open = false
		t.ready.Signal()
		return
	}
	st.DroppedReads++
	st.Dropped += int64(len(b))
	if r.open && t.q.holds(r.marker) {
		r.rec.n += int64(len(b))
		t.q.setLength(r.marker, r.rec)
		return
	}
	r.open = true
	r.rec = record{t: now, n: int64(len(b)), dir: dir, marker: true}
	r.marker = t.q.push(r.rec, nil)
	st.Markers++
	t.ready.Signal()
}

// dirIndex is the index of d in Tap.stats.
func dirIndex(d capture.Direction) int {
	if d == capture.DirInbound {
		return 1
	}
	return 0
}

// fail records a reader's terminal error, to be returned after the reads
// queued before it, unless the tap is closing (then the error is the close
// itself). Only the first counts.
func (t *Tap) fail(err *PortError) {
	if t.closing.Load() {
		return
	}
	t.mu.Lock()
	if t.failed == nil {
		t.failed = err
		t.failAt = t.q.pushed
		t.ready.Broadcast()
	}
	t.mu.Unlock()
}

// writeAll writes b to w, looping over short writes.
func writeAll(w io.Writer, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := w.Write(b[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.ErrShortWrite
		}
	}
	return n, nil
}

// TapConfig configures [OpenTap].
type TapConfig struct {
	// HostTx is the port whose RX is wired to the host's TX line: it
	// hears host→device bytes. "" when not tapped.
	HostTx string
	// DeviceTx is the port whose RX is wired to the device's TX line: it
	// hears device→host bytes. "" when not tapped.
	DeviceTx string
	// Mode is the line's speed and format (both ports).
	Mode Mode
	// Interface is the interface index the packets carry.
	Interface int
	// QueueBytes bounds the memory held by reads waiting for a slow
	// consumer: their bytes plus 16 per read (0: [DefaultQueueBytes];
	// at least [MinQueueBytes]). The ports are read at line speed
	// whatever the consumer does; past the bound, reads are dropped and
	// counted (see [Tap.Next], [Tap.Stats]).
	QueueBytes int
}

// LinkName returns the name of the tapped link: the one port's path, or
// the host-tx and device-tx paths joined by "+".
func (c TapConfig) LinkName() string {
	var names []string
	for _, p := range []string{c.HostTx, c.DeviceTx} {
		if p != "" {
			names = append(names, p)
		}
	}
	return strings.Join(names, "+")
}

// OpenTap opens the configured ports (read only in effect: nothing is
// written to them) and starts tapping. Errors name the port.
func OpenTap(cfg TapConfig) (*Tap, error) {
	if cfg.HostTx == "" && cfg.DeviceTx == "" {
		return nil, errors.New("serial: tap with no port")
	}
	if cfg.HostTx == cfg.DeviceTx {
		return nil, fmt.Errorf("serial: %s given as both host-tx and device-tx", cfg.HostTx)
	}
	if cfg.QueueBytes < 0 {
		return nil, fmt.Errorf("serial: queue of %d bytes: must not be negative", cfg.QueueBytes)
	}
	var inputs []Input
	var opened []Port
	for _, s := range []struct {
		path string
		dir  capture.Direction
	}{{cfg.HostTx, capture.DirOutbound}, {cfg.DeviceTx, capture.DirInbound}} {
		if s.path == "" {
			continue
		}
		p, err := Open(s.path, cfg.Mode)
		if err != nil {
			for _, o := range opened {
				o.Close()
			}
			return nil, err
		}
		opened = append(opened, p)
		inputs = append(inputs, Input{Name: s.path, R: p, Dir: s.dir})
	}
	t, err := NewTapQueue(cfg.LinkName(), cfg.Interface, cfg.QueueBytes, inputs...)
	if err != nil {
		for _, o := range opened {
			o.Close()
		}
	}
	return t, err
}
