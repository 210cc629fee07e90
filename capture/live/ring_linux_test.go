package live

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/bpf"

	"github.com/dissect-tools/dissect/capture"
)

// Tests of both capture methods on loopback (root only): each loopback
// packet is seen once, the filter runs in the kernel, a stop drains every
// packet captured before it, drops are counted, and the ring's sizes.

// udpTo parses an Ethernet/IPv4/UDP frame (possibly cut by the snap
// length): its destination port and payload, ok false for anything else.
func udpTo(f []byte) (dport uint16, payload []byte, ok bool) {
	if len(f) < 14+20+8 || binary.BigEndian.Uint16(f[12:]) != 0x0800 || f[14+9] != 17 {
		return 0, nil, false
	}
	udp := f[14+int(f[14]&0x0f)*4:]
	if len(udp) < 8 {
		return 0, nil, false
	}
	end := min(int(binary.BigEndian.Uint16(udp[4:])), len(udp))
	return binary.BigEndian.Uint16(udp[2:]), udp[8:max(end, 8)], true
}

// drain reads s until ErrTimeout or io.EOF, calling f for each packet, and
// returns the error that ended it.
func drain(t *testing.T, s *Source, f func(p *capture.Packet)) error {
	t.Helper()
	for {
		p, err := s.Next()
		if err != nil {
			if errors.Is(err, ErrTimeout) || err == io.EOF {
				return err
			}
			t.Fatalf("Next: %v", err)
		}
		f(p)
	}
}

func portOf(c *net.UDPConn) uint16 { return uint16(c.LocalAddr().(*net.UDPAddr).Port) }

// TestLoopbackOnce: Linux passes each loopback packet to packet sockets
// twice, going out and coming in; the capture must show it once, with a
// filter and without one (then the ring's program only drops the outgoing
// copy; other traffic on lo is ignored here).
func TestLoopbackOnce(t *testing.T) {
	forMethods(t, func(t *testing.T, m Method) {
		for _, withFilter := range []bool{true, false} {
			t.Run(fmt.Sprintf("filter=%v", withFilter), func(t *testing.T) {
				rx, tx := udpPair(t)
				port := portOf(rx)
				cfg := Config{Timeout: 300 * time.Millisecond, Method: m}
				if withFilter {
					cfg.Filter = fmt.Sprintf("udp port %d", port)
				}
				s := openLoopback(t, cfg)
				const n = 20
				marker := fmt.Sprintf("once-%d-", time.Now().UnixNano())
				for i := range n {
					if _, err := tx.Write([]byte(marker + fmt.Sprint(i))); err != nil {
						t.Fatal(err)
					}
				}
				seen := map[string]int{}
				drain(t, s, func(p *capture.Packet) {
					if dport, pl, ok := udpTo(p.Data); ok && dport == port && bytes.HasPrefix(pl, []byte(marker)) {
						seen[string(pl)]++
						if p.Direction != capture.DirInbound {
							t.Errorf("%s: direction %d, want inbound", pl, p.Direction)
						}
					}
				})
				for i := range n {
					if c := seen[marker+fmt.Sprint(i)]; c != 1 {
						t.Errorf("datagram %d seen %d times, want once", i, c)
					}
				}
			})
		}
	})
}

// TestFilterInKernel: a flow the filter rejects never reaches Next, and the
// kernel's count of packets that passed the filter is exactly the accepted
// flow (a filter run in user space would count both flows), also for
// packets that arrive while Open sets the capture up. Timestamps are
// the kernel's, in nanoseconds.
func TestFilterInKernel(t *testing.T) {
	forMethods(t, func(t *testing.T, m Method) {
		rxA, txA := udpPair(t)
		rxB, txB := udpPair(t)
		portA, portB := portOf(rxA), portOf(rxB)
		// The rejected flow also runs while Open sets up: the ring is bound
		// before its filter is attached, and what came in unfiltered must
		// not be delivered or counted.
		stop, blasted := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(blasted)
			for {
				select {
				case <-stop:
					return
				default:
					txB.Write([]byte("rejected, during Open"))
				}
			}
		}()
		s := openLoopback(t, Config{Filter: fmt.Sprintf("udp dst port %d", portA), Timeout: 300 * time.Millisecond, Method: m})
		close(stop)
		<-blasted
		const n = 50
		before := time.Now()
		for i := range n {
			txB.Write([]byte("rejected"))
			txA.Write(fmt.Appendf(nil, "accepted %d", i))
		}
		after := time.Now()
		got, subMicro := 0, false
		drain(t, s, func(p *capture.Packet) {
			dport, pl, ok := udpTo(p.Data)
			switch {
			case !ok || dport == portB:
				t.Fatalf("the filter let through % x", p.Data[:min(len(p.Data), 48)])
			case string(pl) != fmt.Sprintf("accepted %d", got):
				t.Fatalf("packet %d: %q", got, pl)
			}
			// Stamped when received: the loopback receive may run a little
			// after the write returned (in ksoftirqd on a busy machine).
			if p.Time.Before(before.Add(-time.Millisecond)) || p.Time.After(after.Add(time.Second)) {
				t.Errorf("packet %d stamped %v, sent between %v and %v", got, p.Time, before, after)
			}
			subMicro = subMicro || p.Time.Nanosecond()%1000 != 0
			got++
		})
		st, err := s.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if got != n || st.Received != n || st.Delivered != n || st.Dropped != 0 {
			t.Fatalf("read %d, stats %+v; want %d passed the kernel's filter, all delivered", got, st, n)
		}
		if !subMicro {
			t.Error("no timestamp has nanoseconds: not the kernel's ns timestamps")
		}
	})
}

// TestDrainAfterStop sends datagrams and stops at once, as Ctrl-C would
// while they are still in the kernel (with the ring, in a block the kernel
// has not handed over yet): every datagram sent before the stop is read,
// and the counters, read after the last packet, agree.
func TestDrainAfterStop(t *testing.T) {
	forMethods(t, func(t *testing.T, m Method) {
		// Stop: Next, blocked with no timeout, returns the rest then io.EOF.
		t.Run("Stop", func(t *testing.T) {
			rx, tx := udpPair(t)
			s := openLoopback(t, Config{Filter: fmt.Sprintf("udp dst port %d", portOf(rx)), Method: m})
			done := make(chan int)
			go func() {
				got := 0
				for {
					_, err := s.Next()
					if err == io.EOF {
						done <- got
						return
					}
					if err != nil {
						t.Errorf("Next: %v", err)
						done <- got
						return
					}
					got++
				}
			}()
			const n = 500
			for range n {
				tx.Write([]byte("before the stop"))
			}
			s.Stop()
			var got int
			select {
			case got = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Next did not return io.EOF after Stop")
			}
			st, err := s.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if got != n || st.Received != n || st.Delivered != n || st.Dropped != 0 {
				t.Fatalf("read %d of %d datagrams before io.EOF; stats %+v", got, n, st)
			}
			// Stopped: the kernel takes nothing more.
			tx.Write([]byte("after the stop"))
			time.Sleep(3 * BlockTimeout)
			if st, _ := s.Stats(); st.Received != n {
				t.Fatalf("after the stop the kernel still counts packets: %+v", st)
			}
		})
		// SetTimeout(DrainTimeout): the caller drains by itself, reading
		// until ErrTimeout, right after the last datagram was sent.
		t.Run("SetTimeout", func(t *testing.T) {
			rx, tx := udpPair(t)
			s := openLoopback(t, Config{Filter: fmt.Sprintf("udp dst port %d", portOf(rx)), Timeout: time.Second, Method: m})
			const n = 500
			for range n {
				tx.Write([]byte("before the stop"))
			}
			s.SetTimeout(DrainTimeout)
			got := 0
			if err := drain(t, s, func(*capture.Packet) { got++ }); !errors.Is(err, ErrTimeout) {
				t.Fatalf("drain ended with %v", err)
			}
			st, err := s.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if got != n || st.Received != n || st.Dropped != 0 {
				t.Fatalf("drained %d of %d datagrams; stats %+v", got, n, st)
			}
		})
	})
}

// TestDropsCounted stalls the reader of a tiny buffer while datagrams are
// blasted: the kernel drops some, and after a drain every packet that
// passed the filter is either delivered or counted as dropped.
func TestDropsCounted(t *testing.T) {
	forMethods(t, func(t *testing.T, m Method) {
		rx, tx := udpPair(t)
		s := openLoopback(t, Config{Filter: fmt.Sprintf("udp dst port %d", portOf(rx)), Snaplen: 128,
			BufferSize: 64 << 10, Timeout: DrainTimeout, Method: m})
		const n = 5000
		msg := bytes.Repeat([]byte{'d'}, 18)
		for range n {
			tx.Write(msg)
		}
		got := 0
		drain(t, s, func(*capture.Packet) { got++ })
		st, err := s.Stats()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d sent: %+v", n, st)
		if st.Dropped == 0 || st.Received != st.Delivered+st.Dropped || st.Delivered != uint64(got) || st.Received > n {
			t.Fatalf("%d sent, %d read; stats %+v: want drops, and received = delivered + dropped", n, got, st)
		}
	})
}

// TestRingGeometry: blocks hold a whole packet of the snap length, there
// are at least two, and the ring is about the buffer size asked for.
func TestRingGeometry(t *testing.T) {
	for _, c := range []struct {
		snaplen          uint32
		buf              int
		wantBlock, wantN int
	}{
		{DefaultSnaplen, DefaultBufferSize, 512 << 10, 64},
		{DefaultSnaplen, 1 << 20, 512 << 10, 2},
		{DefaultSnaplen, 1, 512 << 10, 2},
		{DefaultSnaplen, 2047 << 20, 4 << 20, 511},
		{128, 64 << 10, 4096, 16},
		{128, DefaultBufferSize, 512 << 10, 64},
		{1500, 8 << 20, 128 << 10, 64},
	} {
		block, n := ringGeometry(c.snaplen, c.buf, 4096)
		if block != c.wantBlock || n != c.wantN {
			t.Errorf("snaplen %d, buffer %d: %d blocks of %d, want %d of %d", c.snaplen, c.buf, n, block, c.wantN, c.wantBlock)
		}
		if block < int(c.snaplen)+96+48 || block&(block-1) != 0 || n < 2 {
			t.Errorf("snaplen %d: block %d cannot hold a whole packet, or is not a power of two", c.snaplen, block)
		}
	}
}

// TestRingProgram: on loopback the program starts by dropping outgoing
// copies and then runs the user's filter unchanged; elsewhere it is the
// filter, or a program that keeps every packet cut at the snap length.
func TestRingProgram(t *testing.T) {
	user := []bpf.RawInstruction{{Op: 0x28, K: 12}, {Op: 0x06, K: 65535}}
	if got := ringProgram(user, 100, false); len(got) != 2 || got[0] != user[0] {
		t.Fatalf("not loopback: %v", got)
	}
	got := ringProgram(user, 100, true)
	if len(got) != len(dropOutgoingPrefix)+2 || got[len(dropOutgoingPrefix)] != user[0] {
		t.Fatalf("loopback: %v", got)
	}
	if all := ringProgram(nil, 100, false); len(all) != 1 || all[0].Op != 0x06 || all[0].K != 100 {
		t.Fatalf("no filter: %v, want ret #100", all)
	}
}
