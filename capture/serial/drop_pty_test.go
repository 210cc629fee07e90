//go:build linux

package serial

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// writeResult is how a writer fared.
type writeResult struct {
	took, longest time.Duration // in all; the longest Write
	err           error
}

// writeChunks writes b to w in 64 KiB writes.
func writeChunks(w io.Writer, b []byte) writeResult {
	start := time.Now()
	var r writeResult
	for len(b) > 0 {
		n := min(len(b), 64<<10)
		t0 := time.Now()
		_, err := w.Write(b[:n])
		r.longest = max(r.longest, time.Since(t0))
		if err != nil {
			r.err = err
			break
		}
		b = b[n:]
	}
	r.took = time.Since(start)
	return r
}

// Throttling: a stalled consumer takes a packet every stallEvery. That the
// writers are never held up by it is judged by progress, not by the clock
// (a loaded machine is slow, not wrong): when they are done, the consumer
// must have taken less than half of what they wrote, which a tap whose
// readers waited for the consumer cannot allow (its writers finish only
// after the consumer took all but the queue). hangGuard only ends a test
// that hangs.
const (
	stallEvery = 5 * time.Millisecond
	hangGuard  = 2 * time.Minute
)

// TestTapSlowConsumer sends 8 MiB of a counter pattern through a
// pseudo-terminal into a tap with a 64 KiB queue whose consumer takes a
// packet every 5 ms: the writer is never held up (the port is drained at
// line speed), the reads that found the queue full come out as Dropped
// markers, and the delivered bytes plus the dropped lengths are exactly
// the bytes written, each at its position, in order.
func TestTapSlowConsumer(t *testing.T) {
	noLeak(t)
	const total = 8 << 20
	wire := newPTY(t)
	tap, err := OpenTap(TapConfig{HostTx: wire.Path, Mode: DefaultMode(), QueueBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	a := &tally{want: pattern(total, 0)}
	wrote := make(chan writeResult, 1)
	go func() { wrote <- writeChunks(wire.Master, a.want) }()

	start := time.Now()
	var last time.Time
	writing := true
	for !a.done() {
		if writing {
			select {
			case r := <-wrote:
				writing = false
				if r.err != nil {
					t.Fatal(r.err)
				}
				t.Logf("writer: %v in all, longest write %v; %d bytes delivered meanwhile", r.took, r.longest, a.delivered)
				if a.delivered >= total/2 {
					t.Fatalf("the writer finished only after the consumer took %d of %d bytes: the port is not drained while the consumer is slow", a.delivered, total)
				}
			default:
				if time.Since(start) > hangGuard {
					t.Fatalf("the writer is still writing after %v", hangGuard)
				}
			}
		}
		p, err := nextWithin(t, tap)
		if err != nil {
			t.Fatalf("after %d of %d bytes: %v", a.pos, total, err)
		}
		if p.Direction != capture.DirOutbound || p.InterfaceName != wire.Path || p.LinkType != capture.LinkUser0 {
			t.Fatalf("packet direction %d, interface %q, link type %d", p.Direction, p.InterfaceName, p.LinkType)
		}
		if p.Time.Before(last) {
			t.Fatalf("packet time %v before the previous %v", p.Time, last)
		}
		last = p.Time
		a.add(t, &p)
		if writing {
			time.Sleep(stallEvery)
		}
	}
	if writing {
		if r := <-wrote; r.err != nil {
			t.Fatal(r.err)
		}
	}
	t.Logf("%d reads delivered (%d bytes), %d markers (%d bytes)", a.reads, a.delivered, a.markers, a.dropped)
	if a.dropped == 0 || a.delivered == 0 {
		t.Fatalf("delivered %d, dropped %d: the consumer did not fall behind", a.delivered, a.dropped)
	}
	if a.twoMarks {
		t.Fatal("two markers in a row: one run of drops was split")
	}
	if size, limit := queueMem(tap); size > limit || limit != 64<<10 {
		t.Fatalf("queue buffer of %d bytes, limit %d; want at most 64 KiB", size, limit)
	}
	if n := tap.Pending(); n != 0 {
		t.Fatalf("Pending = %d after every byte was accounted for", n)
	}
	tap.Close()
	if _, err := nextWithin(t, tap); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v, want io.EOF", err)
	}
	st := tap.Stats()
	a.checkStats(t, "host→device", st.Outbound)
	if st.Inbound != (DirStats{}) || st.Total() != st.Outbound {
		t.Fatalf("stats %+v, total %+v", st, st.Total())
	}
}

// TestTapFastConsumer: a consumer that keeps up gets every byte, and no
// marker.
func TestTapFastConsumer(t *testing.T) {
	noLeak(t)
	const total = 8 << 20
	wire := newPTY(t)
	tap, err := OpenTap(TapConfig{DeviceTx: wire.Path, Mode: DefaultMode()})
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	a := &tally{want: pattern(total, 7)}
	wrote := make(chan writeResult, 1)
	go func() { wrote <- writeChunks(wire.Master, a.want) }()
	for !a.done() {
		p, err := nextWithin(t, tap)
		if err != nil {
			t.Fatalf("after %d of %d bytes: %v", a.pos, total, err)
		}
		if p.Dropped {
			t.Fatalf("a marker of %d bytes at byte %d with a consumer that keeps up", p.Length, a.pos)
		}
		if p.Direction != capture.DirInbound {
			t.Fatalf("direction %d", p.Direction)
		}
		a.add(t, &p)
	}
	if r := <-wrote; r.err != nil {
		t.Fatal(r.err)
	}
	st := tap.Stats()
	a.checkStats(t, "device→host", st.Inbound)
	if st.Inbound.Markers != 0 || st.Inbound.DroppedReads != 0 {
		t.Fatalf("stats %+v", st.Inbound)
	}
}

// TestProxySlowConsumer sends 4 MiB each way through a proxy with a 64 KiB
// queue whose consumer takes a packet every 5 ms: both sides receive
// exactly what the other sent, in time, while the tap drops and counts
// what it has no room for; per direction, the packets account for every
// byte in order.
func TestProxySlowConsumer(t *testing.T) {
	noLeak(t)
	const total = 4 << 20
	p, dev, host, _ := startProxyQueue(t, 64<<10)
	out := &tally{want: pattern(total, 0x5a5a0000)} // host→device
	in := &tally{want: pattern(total, 0xa5a50000)}  // device→host

	// The two writers and, on the far sides, the two readers that check
	// the forwarded bytes.
	errs := make(chan error, 4)
	for _, w := range []struct {
		f    *os.File
		data []byte
	}{{host, out.want}, {dev.Master, in.want}} {
		go func() { errs <- writeChunks(w.f, w.data).err }()
	}
	for _, r := range []struct {
		f    *os.File
		want []byte
		name string
	}{{dev.Master, out.want, "device"}, {host, in.want, "host"}} {
		go func() {
			got := make([]byte, len(r.want))
			r.f.SetReadDeadline(time.Now().Add(hangGuard))
			if _, err := io.ReadFull(r.f, got); err != nil {
				errs <- errors.New(r.name + " side: " + err.Error())
				return
			}
			if !bytes.Equal(got, r.want) {
				errs <- errors.New(r.name + " side: the forwarded bytes differ from the bytes sent")
				return
			}
			errs <- nil
		}()
	}

	start := time.Now()
	pending := 4
	for !out.done() || !in.done() {
		for pending > 0 {
			select {
			case err := <-errs:
				if err != nil {
					t.Fatal(err)
				}
				pending--
				if taken := out.delivered + in.delivered; pending == 0 && taken >= total {
					t.Fatalf("forwarding finished only after the consumer took %d of the %d bytes sent: the ports are not drained while it is slow", taken, 2*total)
				}
				continue
			default:
			}
			break
		}
		if pending > 0 && time.Since(start) > hangGuard {
			t.Fatalf("forwarding not done after %v", hangGuard)
		}
		pk, err := nextWithin(t, p)
		if err != nil {
			t.Fatal(err)
		}
		switch pk.Direction {
		case capture.DirOutbound:
			out.add(t, &pk)
		case capture.DirInbound:
			in.add(t, &pk)
		default:
			t.Fatalf("direction %d", pk.Direction)
		}
		if pending > 0 {
			time.Sleep(stallEvery)
		}
	}
	for ; pending > 0; pending-- {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("forwarded both ways in %v; host→device: %d delivered, %d dropped in %d markers; device→host: %d delivered, %d dropped in %d markers",
		time.Since(start), out.delivered, out.dropped, out.markers, in.delivered, in.dropped, in.markers)
	if out.dropped+in.dropped == 0 {
		t.Fatal("nothing was dropped: the consumer did not fall behind")
	}
	if size, limit := queueMem(p.Tap); size > limit {
		t.Fatalf("queue buffer of %d bytes, limit %d", size, limit)
	}
	st := p.Stats()
	out.checkStats(t, "host→device", st.Outbound)
	in.checkStats(t, "device→host", st.Inbound)
}

// startProxyQueue is startProxy with a queue of queueBytes.
func startProxyQueue(t *testing.T, queueBytes int) (p *Proxy, dev *PTY, host *os.File, link string) {
	t.Helper()
	dev = newPTY(t)
	link = t.TempDir() + "/ttyQ"
	p, err := OpenProxy(ProxyConfig{Device: dev.Path, Link: link, Mode: DefaultMode(), QueueBytes: queueBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	host, err = os.OpenFile(link, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	return p, dev, host, link
}
