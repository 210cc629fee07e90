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

	"dissect/capture"
)

const (
	// ReadSize is the largest read, and so the largest packet: the buffer
	// each read is made into.
	ReadSize = 4096
	// MaxQueued is how many reads may wait for the consumer; past it the
	// readers wait (and a proxy stops forwarding) until the consumer
	// catches up. Buffers are allocated only as the queue first grows.
	MaxQueued = 1024
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
// the order the reads completed. Each input is read by its own goroutine;
// [Tap.Next] hands the packets out.
type Tap struct {
	link    string
	iface   int
	inputs  []Input
	closers []io.Closer

	mu   sync.Mutex // orders time stamps with the queue
	last time.Time
	q    chan item
	free chan []byte
	nbuf atomic.Int32

	done    chan struct{}
	closing atomic.Bool
	once    sync.Once
	wg      sync.WaitGroup

	cur    capture.Packet
	curBuf []byte
	err    error
	atEnd  bool
}

// item is a queued read, or a reader's terminal error.
type item struct {
	t   time.Time
	dir capture.Direction
	buf []byte
	n   int
	err error
}

// NewTap starts reading inputs as the directions of the serial link named
// link (the name reassembly keys the stream by, and the pcapng if_name).
// Packets carry interface index iface. Inputs must have distinct readers.
func NewTap(link string, iface int, inputs ...Input) (*Tap, error) {
	if len(inputs) == 0 {
		return nil, errors.New("serial: tap with no input")
	}
	for _, in := range inputs {
		if in.R == nil {
			return nil, fmt.Errorf("serial: input %q has no reader", in.Name)
		}
		if in.Dir != capture.DirInbound && in.Dir != capture.DirOutbound {
			return nil, fmt.Errorf("serial: input %q: direction must be inbound or outbound", in.Name)
		}
	}
	t := &Tap{
		link:   link,
		iface:  iface,
		inputs: slices.Clone(inputs),
		q:      make(chan item, MaxQueued+len(inputs)),
		free:   make(chan []byte, MaxQueued),
		done:   make(chan struct{}),
	}
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
		go t.read(&t.inputs[i])
	}
	go func() {
		t.wg.Wait()
		close(t.q)
	}()
	return t, nil
}

// Link returns the link's name.
func (t *Tap) Link() string { return t.link }

// Next returns the next read as a packet. It blocks until a read completes.
// It returns io.EOF after [Tap.Close] (once the reads queued before it are
// returned) and when every input has ended, and the first *[PortError]
// after the reads before it; the tap should then be closed. The packet and
// its Data are valid until the next call to Next.
func (t *Tap) Next() (*capture.Packet, error) {
	t.release()
	if t.err != nil {
		return nil, t.err
	}
	if t.atEnd {
		return nil, io.EOF
	}
	it, ok := <-t.q
	if !ok {
		t.atEnd = true
		return nil, io.EOF
	}
	if it.err != nil {
		t.err = it.err
		return nil, it.err
	}
	t.curBuf = it.buf
	t.cur = capture.Packet{
		Time:          it.t,
		LinkType:      capture.LinkUser0,
		Interface:     t.iface,
		InterfaceName: t.link,
		Direction:     it.dir,
		Data:          it.buf[:it.n],
		Length:        it.n,
	}
	return &t.cur, nil
}

// Pending returns how many reads are queued: 0 means the consumer has
// caught up, a good time to flush output.
func (t *Tap) Pending() int { return len(t.q) }

// Close stops reading: it closes the inputs (unblocking their reads) and
// waits for the reading goroutines to end. Reads queued before are still
// returned by Next, then io.EOF. Close is safe to call more than once and
// concurrently with Next.
func (t *Tap) Close() error {
	t.once.Do(func() {
		t.closing.Store(true)
		close(t.done)
		for _, c := range t.closers {
			c.Close()
		}
		t.wg.Wait()
	})
	return nil
}

// release returns the buffer of the packet last handed out.
func (t *Tap) release() {
	if t.curBuf != nil {
		t.put(t.curBuf)
		t.curBuf = nil
		t.cur.Data = nil
	}
}

// get returns a free buffer, allocating while fewer than MaxQueued exist,
// else waiting for one; false when the tap is closing.
func (t *Tap) get() ([]byte, bool) {
	select {
	case b := <-t.free:
		return b, true
	default:
	}
	if t.nbuf.Add(1) <= MaxQueued {
		return make([]byte, ReadSize), true
	}
	t.nbuf.Add(-1)
	select {
	case b := <-t.free:
		return b, true
	case <-t.done:
		return nil, false
	}
}

// put returns b to the pool; the pool holds every buffer, so it never
// blocks.
func (t *Tap) put(b []byte) {
	select {
	case t.free <- b:
	default:
	}
}

// read is the goroutine of one input.
func (t *Tap) read(in *Input) {
	defer t.wg.Done()
	zero := 0
	for {
		buf, ok := t.get()
		if !ok {
			return
		}
		n, err := in.R.Read(buf)
		if n > 0 {
			if in.Forward != nil {
				if _, werr := writeAll(in.Forward, buf[:n]); werr != nil {
					t.put(buf)
					t.fail(portError(in.ForwardName, opWrite, werr))
					return
				}
			}
			t.push(item{dir: in.Dir, buf: buf, n: n})
		} else {
			t.put(buf)
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

// push stamps it with the current time and queues it. Stamping under the
// lock keeps the times of the merged queue in order.
func (t *Tap) push(it item) {
	t.mu.Lock()
	now := time.Now().UTC()
	if now.Before(t.last) { // the wall clock stepped back
		now = t.last
	}
	t.last = now
	it.t = now
	t.q <- it
	t.mu.Unlock()
}

// fail queues a reader's terminal error, unless the tap is closing (then
// the error is the close itself).
func (t *Tap) fail(err *PortError) {
	if t.closing.Load() {
		return
	}
	t.mu.Lock()
	t.q <- item{err: err}
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
	return NewTap(cfg.LinkName(), cfg.Interface, inputs...)
}
