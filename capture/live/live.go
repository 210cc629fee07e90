// Package live captures packets from a network interface as they arrive,
// as a [capture.Source], so that the same reassembly and dissectors serve
// live traffic and capture files.
//
// On Linux it reads an AF_PACKET socket (no libpcap, no cgo) in one of two
// ways ([Method]): a TPACKET_V3 memory-mapped ring shared with the kernel
// (gopacket's afpacket package), used for Ethernet, loopback and raw-IP
// interfaces, or recvmsg, one packet per system call, used for "any" and
// cooked captures. Either way an optional tcpdump-syntax filter is compiled
// by dissect/capture/filter (AssembleSocket) and run in the kernel, packets
// are timestamped by the kernel (nanoseconds), and the kernel's drop
// counter is read with PACKET_STATISTICS. On other systems [Open] returns
// [ErrUnsupported]; [Interfaces] works everywhere.
//
// Link types: Ethernet and loopback interfaces give [capture.LinkEthernet]
// (Linux presents loopback with an Ethernet header of zero MACs);
// interfaces that carry bare IP packets (tun devices: ARPHRD_NONE, and
// ARPHRD_RAWIP) give [capture.LinkRaw]; the pseudo-interface "any" and
// every other hardware type are captured "cooked", as
// [capture.LinkLinuxSLL2], with the header built from the kernel's
// sockaddr_ll, as libpcap does.
package live

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// DefaultSnaplen is the default number of bytes kept of each packet
// (libpcap's MAXIMUM_SNAPLEN): in practice every packet is kept whole.
const DefaultSnaplen = 262144

// DefaultBufferSize is the default kernel buffer (the ring, or the socket's
// receive buffer), in bytes.
const DefaultBufferSize = 32 << 20

// BlockTimeout is how long the kernel fills a block of the ring before it
// hands the block over partly filled: packets reach Next at most about two
// block timeouts after they arrived, however slow the traffic.
const BlockTimeout = 10 * time.Millisecond

// DrainTimeout is how long a read waits, after a stop, for packets the
// kernel already captured: long enough for the kernel to hand over a partly
// filled block of the ring (it does so within two BlockTimeouts) with room
// for a busy machine. [Source.Stop] uses it; a caller that drains by itself
// calls [Source.SetTimeout] with it and reads until ErrTimeout.
const DrainTimeout = 100 * time.Millisecond

// Method is how packets are read from the kernel (Linux).
type Method uint8

const (
	// MethodAuto picks MethodRing for Ethernet, loopback and raw-IP
	// interfaces and MethodSocket for "any" and cooked captures (the ring
	// does not give the link-layer address those need); if the ring cannot
	// be set up (an old kernel), the socket is used.
	MethodAuto Method = iota
	// MethodRing reads a TPACKET_V3 ring of Config.BufferSize bytes mapped
	// into the process: the kernel writes packets into blocks and hands
	// over a block when it is full or after BlockTimeout, so one wake-up
	// serves many packets and no system call is made per packet. Open
	// fails for "any" and cooked captures. Packets have no direction
	// (capture.DirUnknown), except on loopback (all inbound).
	MethodRing
	// MethodSocket reads one packet per recvmsg system call from a socket
	// whose receive buffer is Config.BufferSize bytes.
	MethodSocket
)

// String returns "auto", "ring" or "socket".
func (m Method) String() string {
	switch m {
	case MethodAuto:
		return "auto"
	case MethodRing:
		return "ring"
	case MethodSocket:
		return "socket"
	}
	return fmt.Sprintf("method %d", m)
}

// AnyInterface is the pseudo-interface that captures on every interface.
const AnyInterface = "any"

// Errors of [Open] and [Lookup]; test for them with errors.Is.
var (
	// ErrNoSuchInterface: the system has no interface of that name.
	ErrNoSuchInterface = errors.New("no such interface")
	// ErrInterfaceDown: the interface is not up (libpcap refuses it too: a
	// packet socket on a down interface fails at the first read).
	ErrInterfaceDown = errors.New("the interface is down")
	// ErrUnsupported: live capture is not implemented on this system.
	ErrUnsupported = errors.New("live capture is supported on Linux only")
	// ErrUnavailable: the system has no AF_PACKET sockets (a kernel without
	// CONFIG_PACKET, or a sandbox that forbids them).
	ErrUnavailable = errors.New("AF_PACKET sockets are not available on this system")
	// ErrTimeout is returned by [Source.Next] when no packet arrived within
	// [Config.Timeout]. The source stays usable.
	ErrTimeout = errors.New("live: no packet within the read timeout")
)

// Permission errors (no CAP_NET_RAW) satisfy errors.Is(err,
// os.ErrPermission).

// FilterError is a capture filter that could not be compiled.
type FilterError struct {
	Expr string
	Err  error // from the filter compiler
}

func (e *FilterError) Error() string { return e.Err.Error() }
func (e *FilterError) Unwrap() error { return e.Err }

// Config configures [Open]. The zero value captures whole packets, with no
// filter, in promiscuous mode, and blocks in Next until a packet arrives.
type Config struct {
	// Filter is a tcpdump-syntax capture filter ("tcp port 3883"), run in
	// the kernel; "" keeps every packet.
	Filter string
	// Snaplen is the most bytes kept of each packet; 0 means
	// DefaultSnaplen. Longer packets are cut, and Packet.Length keeps their
	// length on the wire.
	Snaplen uint32
	// BufferSize is the kernel's buffer in bytes; 0 means
	// DefaultBufferSize. With the ring it is the ring's size (blocks of
	// 512 KiB for the default snap length, at least two blocks); with the
	// socket, its receive buffer. When it fills up (dissect cannot keep
	// up), the kernel drops packets and counts them (Stats.Dropped).
	BufferSize int
	// NoPromiscuous leaves the interface out of promiscuous mode, so that
	// only traffic to and from this host is seen.
	NoPromiscuous bool
	// Timeout, when positive, makes Next return ErrTimeout after waiting
	// that long for a packet, so the caller can do periodic work and check
	// for cancellation. [Source.SetTimeout] changes it after Open.
	Timeout time.Duration
	// Method chooses how packets are read; the zero value, MethodAuto,
	// picks the best one for the interface.
	Method Method
}

// Stats are a source's counters since it was opened.
type Stats struct {
	// Received counts the packets that passed the filter, as counted by the
	// kernel: those delivered and those dropped.
	Received uint64
	// Dropped counts the packets that passed the filter but were dropped by
	// the kernel because the receive buffer was full.
	Dropped uint64
	// Delivered counts the packets Next returned.
	Delivered uint64
}

// Interface describes a network interface.
type Interface struct {
	Index int    // the system's interface index (0 for "any")
	Name  string // e.g. "eth0", "lo", "any"
	Flags net.Flags
	MTU   int
	// HardwareAddr is the MAC address, if any.
	HardwareAddr net.HardwareAddr
	// Addrs are the interface's addresses, as prefixes ("10.0.0.2/24").
	Addrs []string
	// LinkType is the link type of the packets captured on it; meaningful
	// only where live capture is supported (Supported).
	LinkType capture.LinkType
}

// Interfaces lists the system's network interfaces in index order, and, on
// Linux, the pseudo-interface "any" last. It needs no privileges.
func Interfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("live: listing interfaces: %w", err)
	}
	out := make([]Interface, 0, len(ifs)+1)
	for i := range ifs {
		out = append(out, describe(&ifs[i]))
	}
	if Supported {
		out = append(out, anyInterface())
	}
	return out, nil
}

// Lookup describes the interface named name (or "any" on Linux). It needs
// no privileges. An unknown name gives an error wrapping
// ErrNoSuchInterface.
func Lookup(name string) (Interface, error) {
	if name == AnyInterface && Supported {
		return anyInterface(), nil
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return Interface{}, fmt.Errorf("live: listing interfaces: %w", err)
	}
	for i := range ifs {
		if ifs[i].Name == name {
			return describe(&ifs[i]), nil
		}
	}
	return Interface{}, fmt.Errorf("live: %s: %w", name, ErrNoSuchInterface)
}

func describe(ni *net.Interface) Interface {
	it := Interface{
		Index:        ni.Index,
		Name:         ni.Name,
		Flags:        ni.Flags,
		MTU:          ni.MTU,
		HardwareAddr: ni.HardwareAddr,
		LinkType:     linkTypeOf(ni.Name),
	}
	if addrs, err := ni.Addrs(); err == nil {
		for _, a := range addrs {
			it.Addrs = append(it.Addrs, a.String())
		}
	}
	return it
}

func anyInterface() Interface {
	return Interface{Name: AnyInterface, Flags: net.FlagUp | net.FlagRunning, LinkType: capture.LinkLinuxSLL2}
}

// LinkTypeName is a short human name of the link types this package
// produces ("Ethernet", "raw IP", "Linux cooked v2").
func LinkTypeName(lt capture.LinkType) string {
	switch lt {
	case capture.LinkEthernet:
		return "Ethernet"
	case capture.LinkRaw:
		return "raw IP"
	case capture.LinkLinuxSLL2:
		return "Linux cooked v2"
	}
	return fmt.Sprintf("link type %d", lt)
}

var _ capture.Source = (*Source)(nil)
