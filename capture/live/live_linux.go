package live

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"dissect/capture"
	"dissect/capture/filter"
)

// Supported reports whether live capture is implemented on this system.
const Supported = true

// maxFilterLen is the kernel's limit on a classic BPF program (BPF_MAXINSNS).
const maxFilterLen = 4096

// Source captures packets from one interface through an AF_PACKET socket.
// Next is to be called from one goroutine at a time; Stats and Close may be
// called from any goroutine, also while Next waits (Close then makes Next
// return io.EOF).
type Source struct {
	file    *os.File // the socket, registered with Go's network poller
	rc      syscall.RawConn
	iface   Interface
	lt      capture.LinkType
	snaplen int
	timeout time.Duration

	cooked       bool         // SOCK_DGRAM: build a cooked v2 header
	head         int          // bytes kept free before the received data
	dropOutgoing bool         // loopback: drop the outgoing copy of each packet
	loopback     map[int]bool // "any": indexes of loopback interfaces

	buf  []byte
	oob  []byte
	msg  unix.Msghdr
	iov  unix.Iovec
	from unix.RawSockaddrLinklayer
	ctl  control
	pkt  capture.Packet

	readFn func(uintptr) bool // s.recv, bound once so Next does not allocate
	n      int                // recvmsg result
	errno  unix.Errno         // recvmsg error, 0 when none
	armed  bool               // a read deadline is set

	delivered atomic.Uint64
	closed    atomic.Bool
	mu        sync.Mutex // guards stats and the final poll in Close
	stats     Stats
}

// Open starts capturing on the interface named name ("any" for all of
// them). It needs CAP_NET_RAW (root, or the capability on the binary);
// without it the error satisfies errors.Is(err, os.ErrPermission). Other
// errors: an unknown name wraps ErrNoSuchInterface, a filter that does not
// compile is a *FilterError, a system without AF_PACKET wraps
// ErrUnavailable. The interface name and the filter are checked before any
// privilege is needed.
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
	bufSize := cfg.BufferSize
	if bufSize <= 0 {
		bufSize = DefaultBufferSize
	}
	lt := it.LinkType
	if lt == 0 {
		lt = capture.LinkLinuxSLL2
	}
	cooked := lt == capture.LinkLinuxSLL2
	var prog []unix.SockFilter
	if cfg.Filter != "" {
		// The kernel runs the filter on the bytes the socket receives: the
		// whole frame for Ethernet, the network-layer packet otherwise.
		flt := capture.LinkRaw
		if lt == capture.LinkEthernet {
			flt = capture.LinkEthernet
		}
		raw, err := filter.AssembleSocket(cfg.Filter, flt, snaplen)
		if err != nil {
			return nil, &FilterError{Expr: cfg.Filter, Err: err}
		}
		if len(raw) == 0 || len(raw) > maxFilterLen {
			return nil, &FilterError{Expr: cfg.Filter, Err: fmt.Errorf("live: the filter compiles to %d instructions; the kernel takes 1 to %d", len(raw), maxFilterLen)}
		}
		prog = make([]unix.SockFilter, len(raw))
		for i, ins := range raw {
			prog[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
		}
	}

	typ := unix.SOCK_RAW
	if cooked {
		typ = unix.SOCK_DGRAM
	}
	// Protocol 0: the socket receives nothing until bind, so no packet
	// slips in before the filter is attached.
	fd, err := unix.Socket(unix.AF_PACKET, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.ESOCKTNOSUPPORT) || errors.Is(err, unix.EPROTONOSUPPORT) {
			return nil, fmt.Errorf("live: %s: %w (%v)", name, ErrUnavailable, err)
		}
		return nil, fmt.Errorf("live: %s: opening an AF_PACKET socket: %w", name, err)
	}
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	// A large buffer absorbs bursts. SO_RCVBUFFORCE (CAP_NET_ADMIN) may go
	// over net.core.rmem_max; SO_RCVBUF is capped by it.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bufSize) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, bufSize)
	}
	// Kernel timestamps and the original length; without them, time.Now
	// and the received length are used.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1)
	isLoop := it.Flags&net.FlagLoopback != 0
	dropOutgoing := false
	if isLoop {
		// Every loopback packet passes the socket twice, going out and
		// coming in; keep one. Linux 4.20 drops the outgoing copy itself
		// (and then it is not counted either); older kernels need the
		// check in Next.
		if unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1) != nil {
			dropOutgoing = true
		}
	}
	if prog != nil {
		fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fp); err != nil {
			return nil, fmt.Errorf("live: %s: attaching the filter: %w", name, err)
		}
	}
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: it.Index}
	if err := unix.Bind(fd, sa); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return nil, fmt.Errorf("live: %s: %w", name, ErrNoSuchInterface)
		}
		return nil, fmt.Errorf("live: %s: binding: %w", name, err)
	}
	if !cfg.NoPromiscuous && it.Index != 0 && !isLoop {
		mreq := unix.PacketMreq{Ifindex: int32(it.Index), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			return nil, fmt.Errorf("live: %s: promiscuous mode: %w", name, err)
		}
	}
	file := os.NewFile(uintptr(fd), "packet:"+name)
	if file == nil {
		return nil, fmt.Errorf("live: %s: invalid socket", name)
	}
	ok = true
	rc, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("live: %s: %w", name, err)
	}
	s := &Source{
		file:         file,
		rc:           rc,
		iface:        it,
		lt:           lt,
		snaplen:      int(snaplen),
		timeout:      cfg.Timeout,
		cooked:       cooked,
		dropOutgoing: dropOutgoing,
		oob:          make([]byte, 256),
	}
	switch {
	case cooked:
		s.head = sll2Len
	case lt == capture.LinkEthernet:
		s.head = vlanHead
	}
	if cooked && it.Index == 0 {
		s.loopback = map[int]bool{}
		if ifs, err := net.Interfaces(); err == nil {
			for _, ni := range ifs {
				if ni.Flags&net.FlagLoopback != 0 {
					s.loopback[ni.Index] = true
				}
			}
		}
	}
	s.buf = make([]byte, s.head+s.snaplen)
	s.readFn = s.recv
	s.pkt.LinkType = lt
	s.pkt.InterfaceName = it.Name
	return s, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Interface describes the interface being captured.
func (s *Source) Interface() Interface { return s.iface }

// LinkType is the link type of every packet of s.
func (s *Source) LinkType() capture.LinkType { return s.lt }

// Snaplen is the most bytes kept of each packet.
func (s *Source) Snaplen() uint32 { return uint32(s.snaplen) }

// Next waits for the next packet. It returns ErrTimeout when Config.Timeout
// passed without one, and io.EOF once the source is closed. The packet and
// its Data are valid until the next call. Packet.Interface is 0 and
// Packet.InterfaceName the interface's name; the direction is inbound or
// outbound as the kernel says (loopback traffic is all inbound).
func (s *Source) Next() (*capture.Packet, error) {
	if s.armed {
		// A deadline left from an earlier call would end this one early.
		_ = s.file.SetReadDeadline(time.Time{})
		s.armed = false
	}
	for {
		if err := s.rc.Read(s.readFn); err != nil {
			if s.closed.Load() {
				return nil, io.EOF
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, ErrTimeout
			}
			return nil, fmt.Errorf("live: %s: %w", s.iface.Name, err)
		}
		switch s.errno {
		case 0:
		case unix.EINTR:
			continue
		case unix.ENETDOWN:
			return nil, fmt.Errorf("live: %s: the interface went down", s.iface.Name)
		case unix.ENXIO, unix.ENODEV:
			return nil, fmt.Errorf("live: %s: the interface was removed", s.iface.Name)
		default:
			return nil, fmt.Errorf("live: %s: receiving: %w", s.iface.Name, s.errno)
		}
		if p := s.packet(); p != nil {
			s.delivered.Add(1)
			return p, nil
		}
	}
}

// recv is called by the network poller with the socket: it receives one
// packet without blocking, and returns false to be called again when the
// socket is readable.
func (s *Source) recv(fd uintptr) bool {
	s.iov.Base = &s.buf[s.head]
	s.iov.SetLen(len(s.buf) - s.head)
	s.msg.Name = (*byte)(unsafe.Pointer(&s.from))
	s.msg.Namelen = uint32(unsafe.Sizeof(s.from))
	s.msg.Iov = &s.iov
	s.msg.SetIovlen(1)
	s.msg.Control = &s.oob[0]
	s.msg.SetControllen(len(s.oob))
	s.msg.Flags = 0
	// MSG_TRUNC: return the packet's full length, not what fit.
	n, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&s.msg)), unix.MSG_TRUNC)
	if e == unix.EAGAIN {
		if s.timeout > 0 && !s.armed {
			_ = s.file.SetReadDeadline(time.Now().Add(s.timeout))
			s.armed = true
		}
		return false
	}
	s.n, s.errno = int(n), e
	return true
}

// packet builds the packet just received, or returns nil for the outgoing
// copy of a loopback packet.
func (s *Source) packet() *capture.Packet {
	const packetOutgoing = unix.PACKET_OUTGOING
	out := s.from.Pkttype == packetOutgoing
	if out && (s.dropOutgoing || (s.loopback != nil && s.loopback[int(s.from.Ifindex)])) {
		return nil
	}
	parseControl(s.oob[:min(int(s.msg.Controllen), len(s.oob))], &s.ctl)
	room := len(s.buf) - s.head
	n := min(s.n, room)
	wire := s.n
	if s.ctl.hasAux && int(s.ctl.aux.length) > wire {
		wire = int(s.ctl.aux.length)
	}
	p := &s.pkt
	switch {
	case s.cooked:
		putSLL2(s.buf[:sll2Len], &s.from)
		p.Data = s.buf[:sll2Len+n]
		wire += sll2Len
	case s.head == vlanHead:
		p.Data = s.buf[vlanHead : vlanHead+n]
		if s.ctl.hasAux {
			if tpid, ok := s.ctl.aux.vlan(); ok && n >= 12 {
				p.Data = insertVLAN(s.buf, n, tpid, s.ctl.aux.tci)
				wire += 4
			}
		}
	default:
		p.Data = s.buf[:n]
	}
	if len(p.Data) > s.snaplen {
		p.Data = p.Data[:s.snaplen]
	}
	p.Length = max(wire, len(p.Data))
	if s.ctl.hasTime {
		p.Time = time.Unix(s.ctl.sec, s.ctl.nsec).UTC()
	} else {
		p.Time = time.Now().UTC()
	}
	if out {
		p.Direction = capture.DirOutbound
	} else {
		p.Direction = capture.DirInbound
	}
	return p
}

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
// Next waiting in another goroutine returns io.EOF.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return nil
	}
	_ = s.pollStats()
	s.closed.Store(true)
	s.mu.Unlock()
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
