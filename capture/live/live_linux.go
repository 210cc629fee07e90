package live

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/capture/filter"
)

// Supported reports whether live capture is implemented on this system.
const Supported = true

// maxFilterLen is the kernel's limit on a classic BPF program (BPF_MAXINSNS).
const maxFilterLen = 4096

// Source captures packets from one interface through an AF_PACKET socket,
// read through a memory-mapped ring or with recvmsg ([Method]). Next is to
// be called from one goroutine at a time; SetTimeout, Stop, Stats and Close
// may be called from any goroutine, also while Next waits.
type Source struct {
	iface   Interface
	lt      capture.LinkType
	snaplen int
	method  Method
	timeout atomic.Int64 // time.Duration; see SetTimeout

	// Set by Stop: the kernel's filter rejects everything, Next returns
	// what was captured before, then io.EOF.
	stopped  atomic.Bool
	stopTime time.Time // when Stop was called; written before stopped

	ring *ring // MethodRing; nil for MethodSocket

	// MethodSocket.
	file         *os.File // the socket, registered with Go's network poller
	rc           syscall.RawConn
	cooked       bool         // SOCK_DGRAM: build a cooked v2 header
	head         int          // bytes kept free before the received data
	dropOutgoing bool         // loopback: drop the outgoing copy of each packet
	loopback     map[int]bool // "any": indexes of loopback interfaces
	oob          []byte
	msg          unix.Msghdr
	iov          unix.Iovec
	from         unix.RawSockaddrLinklayer
	ctl          control
	readFn       func(uintptr) bool // s.recv, bound once so Next does not allocate
	n            int                // recvmsg result
	errno        unix.Errno         // recvmsg error, 0 when none
	armed        bool               // a read deadline is set

	buf []byte // the packet returned by Next
	pkt capture.Packet

	delivered atomic.Uint64
	closing   atomic.Bool // Close was called: Next returns io.EOF
	closed    atomic.Bool
	mu        sync.Mutex // guards stats, stopping, and the final poll in Close
	stats     Stats
}

// Open starts capturing on the interface named name ("any" for all of
// them). It needs CAP_NET_RAW (root, or the capability on the binary);
// without it the error satisfies errors.Is(err, os.ErrPermission). Other
// errors: an unknown name wraps ErrNoSuchInterface, an interface that is
// not up wraps ErrInterfaceDown, a filter that does not compile is a
// *FilterError, a system without AF_PACKET wraps ErrUnavailable. The
// interface name and the filter are checked before any privilege is needed.
func Open(name string, cfg Config) (*Source, error) {
	it, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if it.Index != 0 && it.Flags&net.FlagUp == 0 {
		return nil, fmt.Errorf("live: %s: %w", name, ErrInterfaceDown)
	}
	snaplen := cfg.Snaplen
	if snaplen == 0 {
		snaplen = DefaultSnaplen
	}
	if snaplen > DefaultSnaplen {
		return nil, fmt.Errorf("live: snaplen %d is over the maximum %d", snaplen, DefaultSnaplen)
	}
	if cfg.Method > MethodSocket {
		return nil, fmt.Errorf("live: unknown capture method %d", cfg.Method)
	}
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = DefaultBufferSize
	}
	cfg.Snaplen = snaplen
	lt := it.LinkType
	if lt == 0 {
		lt = capture.LinkLinuxSLL2
	}
	cooked := lt == capture.LinkLinuxSLL2
	if cooked && cfg.Method == MethodRing {
		return nil, fmt.Errorf("live: %s: the ring cannot capture %s packets (they need the sender's link-layer address, which the ring does not give); use the socket method", name, LinkTypeName(lt))
	}
	var prog []bpf.RawInstruction
	if cfg.Filter != "" {
		// The kernel runs the filter on the bytes the socket receives: the
		// whole frame for Ethernet, the network-layer packet otherwise.
		flt := capture.LinkRaw
		if lt == capture.LinkEthernet {
			flt = capture.LinkEthernet
		}
		prog, err = filter.AssembleSocket(cfg.Filter, flt, snaplen)
		if err != nil {
			return nil, &FilterError{Expr: cfg.Filter, Err: err}
		}
		if len(prog) == 0 || len(prog) > maxFilterLen-len(dropOutgoingPrefix) {
			return nil, &FilterError{Expr: cfg.Filter, Err: fmt.Errorf("live: the filter compiles to %d instructions; the kernel takes 1 to %d", len(prog), maxFilterLen-len(dropOutgoingPrefix))}
		}
	}
	s := &Source{iface: it, lt: lt, snaplen: int(snaplen)}
	s.timeout.Store(int64(cfg.Timeout))
	s.pkt.LinkType = lt
	s.pkt.InterfaceName = it.Name
	if !cooked && cfg.Method != MethodSocket {
		err := s.openRing(&cfg, prog)
		if err == nil || cfg.Method == MethodRing || !errors.Is(err, errRingSetup) {
			if err != nil {
				return nil, err
			}
			return s, nil
		}
		// An old kernel, no memory for the ring: the socket still works.
	}
	if err := s.openSocket(&cfg, prog); err != nil {
		return nil, err
	}
	return s, nil
}

// openError describes a failure to open the packet socket.
func openError(name string, err error) error {
	switch {
	case errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.ESOCKTNOSUPPORT) || errors.Is(err, unix.EPROTONOSUPPORT):
		return fmt.Errorf("live: %s: %w (%v)", name, ErrUnavailable, err)
	case errors.Is(err, unix.ENODEV):
		return fmt.Errorf("live: %s: %w", name, ErrNoSuchInterface)
	}
	return fmt.Errorf("live: %s: opening an AF_PACKET socket: %w", name, err)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Interface describes the interface being captured.
func (s *Source) Interface() Interface { return s.iface }

// LinkType is the link type of every packet of s.
func (s *Source) LinkType() capture.LinkType { return s.lt }

// Snaplen is the most bytes kept of each packet.
func (s *Source) Snaplen() uint32 { return uint32(s.snaplen) }

// Method is how s reads packets: MethodRing or MethodSocket.
func (s *Source) Method() Method { return s.method }

// SetTimeout changes Config.Timeout: from the next wait on, Next returns
// ErrTimeout after d without a packet (d <= 0: it waits until a packet
// comes or the source is closed). It may be called from any goroutine. To
// drain what the kernel already captured without Stop, call
// SetTimeout(DrainTimeout) and read until ErrTimeout: a shorter timeout
// can miss the packets of the ring's partly filled block.
func (s *Source) SetTimeout(d time.Duration) { s.timeout.Store(int64(d)) }

// Next waits for the next packet. It returns ErrTimeout when the timeout
// passed without one, and io.EOF once the source is closed, or, after
// Stop, once every packet captured before the stop was returned. The
// packet and its Data are valid until the next call (also after Close).
// Packet.Interface is 0 and Packet.InterfaceName the interface's name.
// Direction: with the socket, inbound or outbound as the kernel says; with
// the ring, unknown, except on loopback where every packet is inbound.
func (s *Source) Next() (*capture.Packet, error) {
	if s.ring != nil {
		return s.nextRing()
	}
	return s.nextSocket()
}

// Stop makes the kernel capture nothing more: Next then returns the
// packets already captured (in the ring or the socket's queue), then
// io.EOF, within about DrainTimeout once they are read, whatever the
// timeout. Stats read after that io.EOF count every packet and every drop.
// It may be called from any goroutine, more than once, and does nothing
// after Close.
func (s *Source) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() || s.stopped.Load() {
		return
	}
	reject := []bpf.RawInstruction{{Op: unix.BPF_RET | unix.BPF_K, K: 0}}
	if s.ring != nil {
		_ = s.ring.tp.SetBPF(reject)
	} else {
		f := unix.SockFilter{Code: reject[0].Op}
		fp := unix.SockFprog{Len: 1, Filter: &f}
		_ = s.rc.Control(func(fd uintptr) {
			_ = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fp)
		})
		// A packet that passed the old filter on another CPU just before
		// is queued within microseconds; then an empty queue means done.
		time.Sleep(filterSettle)
	}
	s.stopTime = time.Now()
	s.stopped.Store(true)
	if s.ring == nil {
		_ = s.file.SetReadDeadline(time.Now()) // wake a waiting Next
	}
}

// filterSettle is how long a filter change is given to reach every CPU
// (the kernel swaps filters under RCU: a packet already being filtered on
// another CPU may still be judged by the old one).
const filterSettle = 2 * time.Millisecond

// Stats returns the counters since Open. Each call reads (and so resets)
// the kernel's counters and adds them to the totals; after Close it returns
// the final totals.
func (s *Source) Stats() (Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if !s.closed.Load() {
		err = s.pollStats()
	}
	st := s.stats
	st.Delivered = s.delivered.Load()
	return st, err
}

// pollStats adds the kernel's counters to s.stats; s.mu is held.
func (s *Source) pollStats() error {
	if s.ring != nil {
		return s.ring.pollStats(s)
	}
	var ks *unix.TpacketStats
	var gerr error
	err := s.rc.Control(func(fd uintptr) {
		ks, gerr = unix.GetsockoptTpacketStats(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS)
	})
	if err == nil {
		err = gerr
	}
	if err != nil {
		return fmt.Errorf("live: %s: reading the kernel's counters: %w", s.iface.Name, err)
	}
	s.stats.Received += uint64(ks.Packets)
	s.stats.Dropped += uint64(ks.Drops)
	return nil
}

// Close reads the kernel's counters a last time and closes the socket. A
// Next waiting in another goroutine returns io.EOF (with the ring, within
// a poll interval, 20 ms).
func (s *Source) Close() error {
	s.closing.Store(true)
	if s.ring != nil {
		// Next holds the ring's lock while it reads the ring: unmapping it
		// under a reader would crash.
		s.ring.mu.Lock()
		defer s.ring.mu.Unlock()
	}
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return nil
	}
	_ = s.pollStats()
	s.closed.Store(true)
	s.mu.Unlock()
	if s.ring != nil {
		s.ring.tp.Close()
		return nil
	}
	return s.file.Close()
}

// linkTypeOf maps the interface's hardware type (ARPHRD_*) to the link
// type of its captured packets.
func linkTypeOf(name string) capture.LinkType {
	hw, ok := hardwareType(name)
	if !ok {
		return capture.LinkLinuxSLL2
	}
	return linkTypeOfARPHRD(hw)
}

func linkTypeOfARPHRD(hw uint16) capture.LinkType {
	switch hw {
	case unix.ARPHRD_ETHER, unix.ARPHRD_LOOPBACK:
		return capture.LinkEthernet
	case unix.ARPHRD_NONE, unix.ARPHRD_RAWIP:
		return capture.LinkRaw
	}
	return capture.LinkLinuxSLL2
}

// hardwareType asks the kernel for the interface's ARPHRD_* type
// (SIOCGIFHWADDR, which needs no privileges).
func hardwareType(name string) (uint16, bool) {
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, false
	}
	for _, family := range []int{unix.AF_INET, unix.AF_UNIX, unix.AF_INET6} {
		fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			continue
		}
		err = unix.IoctlIfreq(fd, unix.SIOCGIFHWADDR, ifr)
		unix.Close(fd)
		if err == nil {
			return ifr.Uint16(), true
		}
	}
	return 0, false
}
