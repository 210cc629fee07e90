// Package capture yields captured units in capture order: a [Source] of
// [Packet] values. This package reads pcap and pcapng files, plain or
// compressed (gzip, zstd, lz4), and writes them ([PcapngWriter] writes
// dissect's -w files); capture/live reads network interfaces and
// capture/serial serial ports as Sources too. It knows nothing of streams
// or protocols.
package capture

import (
	"fmt"
	"time"
)

// LinkType is a LINKTYPE_* value from the tcpdump link-layer registry.
type LinkType uint16

// Link types dissect understands.
const (
	LinkNull       LinkType = 0   // BSD loopback: 4-byte host-order address family
	LinkEthernet   LinkType = 1   // Ethernet II, 802.1Q/802.1ad VLAN tags
	LinkRaw        LinkType = 101 // raw IPv4 or IPv6
	LinkLoop       LinkType = 108 // OpenBSD loopback: 4-byte network-order family
	LinkLinuxSLL   LinkType = 113 // Linux cooked capture v1
	LinkUser0      LinkType = 147 // serial link data (dissect's serial captures)
	LinkIPv4       LinkType = 228 // raw IPv4
	LinkIPv6       LinkType = 229 // raw IPv6
	LinkLinuxSLL2  LinkType = 276 // Linux cooked capture v2
	LinkPPP        LinkType = 9   // PPP, optional HDLC address/control bytes
	LinkPPPHDLC    LinkType = 50  // PPP in HDLC-like framing (RFC 1662), or Cisco HDLC
	LinkPPPWithDir LinkType = 204 // PPP with a leading direction byte
	LinkNFLOG      LinkType = 239 // Linux netfilter NFLOG
)

// Direction is the pcapng packet direction flag.
type Direction uint8

// Directions of the pcapng epb_flags option (bits 0-1).
const (
	DirUnknown  Direction = 0
	DirInbound  Direction = 1
	DirOutbound Direction = 2
)

// Packet is one captured unit.
type Packet struct {
	Time          time.Time // UTC
	LinkType      LinkType
	Interface     int    // interface index (pcapng IDB number; 0 for pcap)
	InterfaceName string // pcapng if_name, device path for serial; may be ""
	Direction     Direction
	Data          []byte // captured bytes; see Source.Next for lifetime
	Length        int    // original length on the wire (>= len(Data))
	// Dropped marks a packet whose payload dissect itself dropped because
	// decoding fell behind (a full queue): Data holds only its link,
	// network and transport headers (or nothing, for serial reads), so
	// that reassembly can report the missing bytes as a gap of the right
	// stream. Length is the original length, as for any packet.
	Dropped bool
	// NoTime marks a packet the file gave no timestamp (a pcapng Simple
	// Packet Block): Time is the previous packet's time in the file (the
	// zero time when none came before).
	NoTime bool
}

// Source yields packets in capture order.
type Source interface {
	// Next returns the next packet, or io.EOF at the end. The packet and its
	// Data are valid only until the next call to Next. A damaged input gives
	// a *FileError after the packets that could be read.
	Next() (*Packet, error)
	// Close releases the source.
	Close() error
}

// Progresser is implemented by sources that know how far through they are,
// for a progress bar: done and total bytes (total 0 when unknown).
type Progresser interface {
	Progress() (done, total int64)
}

// FileError is a damaged or unreadable capture file: it names the file and
// the byte offset at which reading failed.
type FileError struct {
	Path   string
	Offset int64
	Err    error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%s: at byte %d: %v", e.Path, e.Offset, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }
