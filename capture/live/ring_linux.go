package live

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gopacket/gopacket/afpacket"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/dissect-tools/dissect/capture"
)

// This file reads packets from a TPACKET_V3 ring (MethodRing), through
// gopacket's afpacket package (pure Go). afpacket keeps the socket to
// itself, which shapes what is done here:
//
//   - It binds the socket before a filter can be attached, so packets may
//     enter the ring unfiltered while Open runs. Packets stamped before
//     the filter was in place are thrown away (ring.early).
//   - It gives neither the packet type nor the sender's address: the
//     outgoing copy of a loopback packet is dropped by the kernel's filter
//     (dropOutgoingPrefix), packets have no direction, and cooked captures
//     ("any") use the socket.
//   - It polls with a fixed timeout set at creation: Next polls in steps
//     of pollStep and counts them towards its own timeout.

// errRingSetup marks a ring that could not be set up while the socket
// would work (an old kernel, no memory): MethodAuto then uses the socket.
var errRingSetup = errors.New("cannot set up the TPACKET_V3 ring")

// pollStep is how long one poll of the ring waits: the granularity of
// Next's timeout and how long Close waits for a Next to let go of the ring.
const pollStep = 20 * time.Millisecond

// earlyWindow is how long after Open packets are checked against the time
// the filter was attached (ring.early): a packet judged without the filter
// is in the ring within microseconds, so a second is ample, and after it a
// clock stepped back cannot make good packets look early.
const earlyWindow = time.Second

// Sizes of the ring: a block must hold a whole packet of the snap length
// with the kernel's headers (a block descriptor of 48 bytes, then per
// packet a tpacket3_hdr, a sockaddr_ll and the MAC header, 96 bytes for
// Ethernet); blocks of at least 512 KiB for the default snap length.
const (
	ringOverhead = 512
	ringMinBlock = 4096
	ringMaxBlock = 4 << 20
	ringBlocks   = 64 // blocks aimed at, when the buffer is large enough
	ringMin      = 2  // the kernel fills one block while Next reads another
)

// ringGeometry chooses the block size (a power of two, at least a page)
// and the number of blocks for a ring of about bufSize bytes: blocks big
// enough for a packet of snaplen bytes, about ringBlocks of them (fewer,
// bigger blocks for huge buffers), and never fewer than ringMin.
func ringGeometry(snaplen uint32, bufSize, pageSize int) (block, n int) {
	need := int(snaplen) + ringOverhead
	block = max(pageSize, ringMinBlock)
	for block < need || (block < ringMaxBlock && block*ringBlocks < bufSize) {
		block *= 2
	}
	return block, max(bufSize/block, ringMin)
}

// dropOutgoingPrefix drops the outgoing copy of each loopback packet: it
// loads the packet type (the SKF_AD_PKTTYPE extension) and rejects
// PACKET_OUTGOING; the rest of the program runs on the other packets.
var dropOutgoingPrefix = mustAssemble(
	bpf.LoadExtension{Num: bpf.ExtType},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.PACKET_OUTGOING, SkipFalse: 1},
	bpf.RetConstant{Val: 0},
)

func mustAssemble(ins ...bpf.Instruction) []bpf.RawInstruction {
	raw, err := bpf.Assemble(ins)
	if err != nil {
		panic(err)
	}
	return raw
}

// ringProgram is the program attached to the ring's socket: the user's
// filter, or one that keeps every packet, cut at snaplen either way (the
// kernel copies into the ring only what the program returns); on loopback
// preceded by dropOutgoingPrefix. Jumps are relative, so the filter runs
// unchanged after the prefix.
func ringProgram(user []bpf.RawInstruction, snaplen uint32, loopback bool) []bpf.RawInstruction {
	if user == nil {
		user = []bpf.RawInstruction{{Op: unix.BPF_RET | unix.BPF_K, K: snaplen}}
	}
	if !loopback {
		return user
	}
	return append(append([]bpf.RawInstruction(nil), dropOutgoingPrefix...), user...)
}

// ring is the state of MethodRing.
type ring struct {
	tp *afpacket.TPacket
	// mu is held by Next while it reads the ring, and by Close while it
	// unmaps it.
	mu sync.Mutex
	// notBefore (Unix ns) is the time the filter was in place; packets
	// stamped earlier may not have been filtered. 0 once earlyWindow has
	// passed in packet time.
	notBefore int64
	dir       capture.Direction
	// The kernel's cumulative counters as afpacket last reported them
	// (32 bits, wrapping), to add their increase to Source.stats.
	packets, drops uint32
}

// openRing sets up the ring of s with the filter prog (nil: none).
func (s *Source) openRing(cfg *Config, prog []bpf.RawInstruction) error {
	name := s.iface.Name
	block, n := ringGeometry(cfg.Snaplen, cfg.BufferSize, unix.Getpagesize())
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(name),
		afpacket.OptTPacketVersion(afpacket.TPacketVersion3),
		afpacket.OptSocketType(afpacket.SocketRaw),
		afpacket.OptFrameSize(block),
		afpacket.OptBlockSize(block),
		afpacket.OptNumBlocks(n),
		afpacket.OptBlockTimeout(BlockTimeout),
		afpacket.OptPollTimeout(pollStep),
		afpacket.OptAddVLANHeader(true),
	)
	if err != nil {
		var errno unix.Errno
		switch {
		case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENODEV) ||
			errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.ESOCKTNOSUPPORT) || errors.Is(err, unix.EPROTONOSUPPORT):
			return openError(name, err)
		case errors.As(err, &errno):
			return fmt.Errorf("live: %s: %w: %w", name, errRingSetup, err)
		}
		// afpacket formats most errors with %v: the errno is lost.
		return fmt.Errorf("live: %s: %w (%d blocks of %d bytes): %v", name, errRingSetup, n, block, err)
	}
	loopback := s.iface.Flags&net.FlagLoopback != 0
	if err := tp.SetBPF(ringProgram(prog, cfg.Snaplen, loopback)); err != nil {
		tp.Close()
		return fmt.Errorf("live: %s: attaching the filter: %w", name, err)
	}
	// Packets judged before the filter was in place are stamped before
	// this; filterSettle covers a packet being judged on another CPU while
	// the filter changed.
	notBefore := time.Now().Add(filterSettle)
	time.Sleep(filterSettle)
	if !cfg.NoPromiscuous && !loopback {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			return fmt.Errorf("live: %s: promiscuous mode: %w", name, err)
		}
	}
	r := &ring{tp: tp, notBefore: notBefore.UnixNano()}
	// Count from here: what the kernel counted before the filter was in
	// place is not this capture's.
	_, st, err := tp.SocketStats()
	if err != nil {
		tp.Close()
		return fmt.Errorf("live: %s: reading the kernel's counters: %w", name, err)
	}
	r.packets, r.drops = uint32(st.Packets()), uint32(st.Drops())
	if loopback {
		r.dir = capture.DirInbound
	}
	s.ring = r
	s.method = MethodRing
	// Room for a VLAN tag put back in front of a packet of snaplen bytes.
	s.buf = make([]byte, s.snaplen+vlanHead)
	return nil
}

// nextRing is Next for MethodRing.
func (s *Source) nextRing() (*capture.Packet, error) {
	r := s.ring
	var waited time.Duration
	for {
		if s.closing.Load() {
			return nil, io.EOF
		}
		r.mu.Lock()
		if s.closing.Load() {
			r.mu.Unlock()
			return nil, io.EOF
		}
		data, ci, err := r.tp.ZeroCopyReadPacketData()
		if err == nil {
			if r.early(ci.Timestamp) {
				r.mu.Unlock()
				continue
			}
			// Copied out of the ring: the packet stays valid after Close,
			// and the ring's block goes back to the kernel sooner.
			p := &s.pkt
			p.Data = s.buf[:min(copy(s.buf, data), s.snaplen)]
			r.mu.Unlock()
			p.Length = max(ci.Length, len(p.Data))
			p.Time = ci.Timestamp.UTC()
			p.Direction = r.dir
			s.delivered.Add(1)
			return p, nil
		}
		r.mu.Unlock()
		if !errors.Is(err, afpacket.ErrTimeout) {
			return nil, s.ringError(err)
		}
		waited += pollStep
		if s.stopped.Load() {
			if time.Since(s.stopTime) >= DrainTimeout {
				return nil, io.EOF
			}
			continue
		}
		if t := time.Duration(s.timeout.Load()); t > 0 && waited >= t {
			return nil, ErrTimeout
		}
	}
}

// early reports whether a packet stamped ts may have entered the ring
// before the filter was attached.
func (r *ring) early(ts time.Time) bool {
	if r.notBefore == 0 {
		return false
	}
	ns := ts.UnixNano()
	if ns >= r.notBefore+int64(earlyWindow) {
		r.notBefore = 0
	}
	return ns < r.notBefore
}

// ringError describes an error of afpacket's read.
func (s *Source) ringError(err error) error {
	if s.closing.Load() {
		return io.EOF
	}
	if errors.Is(err, afpacket.ErrPoll) {
		// POLLERR: the kernel set ENETDOWN on the socket, for an interface
		// that went down or was removed.
		if _, lerr := net.InterfaceByName(s.iface.Name); lerr != nil {
			return fmt.Errorf("live: %s: the interface was removed", s.iface.Name)
		}
		return fmt.Errorf("live: %s: the interface went down", s.iface.Name)
	}
	return fmt.Errorf("live: %s: reading the ring: %w", s.iface.Name, err)
}

// pollStats adds the increase of the kernel's counters to s.stats; s.mu
// is held and s is not closed.
func (r *ring) pollStats(s *Source) error {
	_, st, err := r.tp.SocketStats()
	if err != nil {
		return fmt.Errorf("live: %s: reading the kernel's counters: %w", s.iface.Name, err)
	}
	p, d := uint32(st.Packets()), uint32(st.Drops())
	s.stats.Received += uint64(p - r.packets)
	s.stats.Dropped += uint64(d - r.drops)
	r.packets, r.drops = p, d
	return nil
}
