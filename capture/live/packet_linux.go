package live

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file turns what recvmsg returned into packet bytes: it reads the
// control messages (kernel timestamp, PACKET_AUXDATA), puts back a VLAN tag
// the network card stripped, and builds the Linux cooked v2 header for
// cooked captures. None of it makes a system call, so it is tested and
// fuzzed without privileges.

var ne = binary.NativeEndian

// Control message layout (cmsg(3)): a header of a size_t length and two
// ints, then the data; both aligned to the size of a long.
const (
	ptrSize   = int(unsafe.Sizeof(uintptr(0)))
	cmsgHdr   = ptrSize + 8
	timespecN = int(unsafe.Sizeof(unix.Timespec{}))
	auxdataN  = 20 // struct tpacket_auxdata
)

func cmsgAlign(n int) int { return (n + ptrSize - 1) &^ (ptrSize - 1) }

// auxdata is the part of struct tpacket_auxdata that is used.
type auxdata struct {
	status uint32
	length uint32 // the packet's length before any cut
	tci    uint16
	tpid   uint16
}

// vlan reports whether the card stripped an 802.1Q tag and which tag
// protocol it had (libpcap's VLAN_VALID and VLAN_TPID).
func (a *auxdata) vlan() (tpid uint16, ok bool) {
	if a.status&unix.TP_STATUS_VLAN_VALID == 0 && a.tci == 0 {
		return 0, false
	}
	if a.status&unix.TP_STATUS_VLAN_TPID_VALID != 0 && a.tpid != 0 {
		return a.tpid, true
	}
	return 0x8100, true
}

// control holds what the control messages of one packet said.
type control struct {
	sec, nsec int64
	hasTime   bool
	aux       auxdata
	hasAux    bool
}

// parseControl reads the control messages in oob. Malformed or unknown
// messages are ignored: the packet is still delivered, with time.Now and
// the received length instead.
func parseControl(oob []byte, c *control) {
	*c = control{}
	for len(oob) >= cmsgHdr {
		var n int
		if ptrSize == 8 {
			v := ne.Uint64(oob)
			if v > uint64(len(oob)) {
				return
			}
			n = int(v)
		} else {
			n = int(ne.Uint32(oob))
		}
		if n < cmsgHdr || n > len(oob) {
			return
		}
		level := int32(ne.Uint32(oob[ptrSize:]))
		typ := int32(ne.Uint32(oob[ptrSize+4:]))
		start := cmsgAlign(cmsgHdr)
		if start > n {
			return
		}
		data := oob[start:n]
		switch {
		case level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && len(data) >= timespecN:
			if timespecN == 16 {
				c.sec, c.nsec = int64(ne.Uint64(data)), int64(ne.Uint64(data[8:]))
			} else {
				c.sec, c.nsec = int64(int32(ne.Uint32(data))), int64(int32(ne.Uint32(data[4:])))
			}
			c.hasTime = c.nsec >= 0 && c.nsec < 1e9 && c.sec >= 0
		case level == unix.SOL_PACKET && typ == unix.PACKET_AUXDATA && len(data) >= auxdataN:
			c.aux = auxdata{
				status: ne.Uint32(data),
				length: ne.Uint32(data[4:]),
				tci:    ne.Uint16(data[16:]),
				tpid:   ne.Uint16(data[18:]),
			}
			c.hasAux = true
		}
		next := cmsgAlign(n)
		if next >= len(oob) {
			return
		}
		oob = oob[next:]
	}
}

// vlanHead is the room kept before Ethernet frames for a tag to put back.
const vlanHead = 4

// insertVLAN puts an 802.1Q tag back after the MAC addresses of the frame
// buf[vlanHead:vlanHead+n] and returns the tagged frame, which starts at
// buf[0]. Frames too short to have both MAC addresses are returned as they
// are.
func insertVLAN(buf []byte, n int, tpid, tci uint16) []byte {
	if n < 12 || len(buf) < vlanHead+n {
		return buf[vlanHead : vlanHead+n]
	}
	copy(buf[0:12], buf[vlanHead:vlanHead+12])
	binary.BigEndian.PutUint16(buf[12:], tpid)
	binary.BigEndian.PutUint16(buf[14:], tci)
	return buf[:vlanHead+n]
}

// sll2Len is the length of a LINKTYPE_LINUX_SLL2 header.
const sll2Len = 20

// putSLL2 writes a Linux cooked v2 header describing from into b[:20]: the
// protocol (as the kernel gives it, already in network order), a reserved
// zero, the interface index, the ARPHRD type, the packet type and the
// link-layer address with its length (at most 8 bytes).
func putSLL2(b []byte, from *unix.RawSockaddrLinklayer) {
	_ = b[sll2Len-1]
	ne.PutUint16(b[0:], from.Protocol) // network order in memory already
	b[2], b[3] = 0, 0
	binary.BigEndian.PutUint32(b[4:], uint32(from.Ifindex))
	binary.BigEndian.PutUint16(b[8:], from.Hatype)
	b[10] = from.Pkttype
	halen := min(from.Halen, 8)
	b[11] = halen
	copy(b[12:20], from.Addr[:])
	clear(b[12+halen : 20])
}
