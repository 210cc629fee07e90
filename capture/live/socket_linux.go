package live

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/dissect-tools/dissect/capture"
)

// This file reads packets with recvmsg, one per system call (MethodSocket).

// openSocket opens the AF_PACKET socket of s: the filter prog (nil: none)
// is attached before the socket is bound, so no unfiltered packet slips in.
func (s *Source) openSocket(cfg *Config, prog []bpf.RawInstruction) error {
	name, it := s.iface.Name, s.iface
	cooked := s.lt == capture.LinkLinuxSLL2
	typ := unix.SOCK_RAW
	if cooked {
		typ = unix.SOCK_DGRAM
	}
	// Protocol 0: the socket receives nothing until bind, so no packet
	// slips in before the filter is attached.
	fd, err := unix.Socket(unix.AF_PACKET, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return openError(name, err)
	}
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	// A large buffer absorbs bursts. SO_RCVBUFFORCE (CAP_NET_ADMIN) may go
	// over net.core.rmem_max; SO_RCVBUF is capped by it.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, cfg.BufferSize) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, cfg.BufferSize)
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
		sf := make([]unix.SockFilter, len(prog))
		for i, ins := range prog {
			sf[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
		}
		fp := unix.SockFprog{Len: uint16(len(sf)), Filter: &sf[0]}
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fp); err != nil {
			return fmt.Errorf("live: %s: attaching the filter: %w", name, err)
		}
	}
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: it.Index}
	if err := unix.Bind(fd, sa); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return fmt.Errorf("live: %s: %w", name, ErrNoSuchInterface)
		}
		return fmt.Errorf("live: %s: binding: %w", name, err)
	}
	if !cfg.NoPromiscuous && it.Index != 0 && !isLoop {
		mreq := unix.PacketMreq{Ifindex: int32(it.Index), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			return fmt.Errorf("live: %s: promiscuous mode: %w", name, err)
		}
	}
	file := os.NewFile(uintptr(fd), "packet:"+name)
	if file == nil {
		return fmt.Errorf("live: %s: invalid socket", name)
	}
	ok = true
	rc, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return fmt.Errorf("live: %s: %w", name, err)
	}
	s.method = MethodSocket
	s.file, s.rc = file, rc
	s.cooked = cooked
	s.dropOutgoing = dropOutgoing
	s.oob = make([]byte, 256)
	switch {
	case cooked:
		s.head = sll2Len
	case s.lt == capture.LinkEthernet:
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
	return nil
}

// nextSocket is Next for MethodSocket.
func (s *Source) nextSocket() (*capture.Packet, error) {
	for {
		if s.armed || s.stopped.Load() {
			// A deadline left from an earlier call, or set by Stop to wake
			// a waiting Next, would end this wait early.
			_ = s.file.SetReadDeadline(time.Time{})
			s.armed = false
		}
		if err := s.rc.Read(s.readFn); err != nil {
			if s.closed.Load() || s.closing.Load() {
				return nil, io.EOF
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if s.stopped.Load() {
					continue // Stop's wake-up: look at the queue once more
				}
				return nil, ErrTimeout
			}
			return nil, fmt.Errorf("live: %s: %w", s.iface.Name, err)
		}
		switch s.errno {
		case 0:
		case unix.EAGAIN: // stopped, and the queue is empty
			return nil, io.EOF
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
		if s.stopped.Load() {
			s.n, s.errno = 0, e
			return true
		}
		if t := time.Duration(s.timeout.Load()); t > 0 && !s.armed {
			_ = s.file.SetReadDeadline(time.Now().Add(t))
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
