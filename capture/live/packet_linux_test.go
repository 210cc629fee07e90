package live

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dissect-tools/dissect/capture"
)

// Tests of packet_linux.go and of building a packet from what recvmsg
// returned: no system call, no privilege.

// cmsg builds one control message as the kernel lays it out.
func cmsg(level, typ int, data []byte) []byte {
	b := make([]byte, cmsgAlign(cmsgHdr+len(data)))
	if ptrSize == 8 {
		ne.PutUint64(b, uint64(cmsgHdr+len(data)))
	} else {
		ne.PutUint32(b, uint32(cmsgHdr+len(data)))
	}
	ne.PutUint32(b[ptrSize:], uint32(level))
	ne.PutUint32(b[ptrSize+4:], uint32(typ))
	copy(b[cmsgAlign(cmsgHdr):], data)
	return b
}

func timespecBytes(sec, nsec int64) []byte {
	if timespecN == 16 {
		b := make([]byte, 16)
		ne.PutUint64(b, uint64(sec))
		ne.PutUint64(b[8:], uint64(nsec))
		return b
	}
	b := make([]byte, 8)
	ne.PutUint32(b, uint32(sec))
	ne.PutUint32(b[4:], uint32(nsec))
	return b
}

func auxBytes(status, length, snap uint32, tci, tpid uint16) []byte {
	b := make([]byte, auxdataN)
	ne.PutUint32(b, status)
	ne.PutUint32(b[4:], length)
	ne.PutUint32(b[8:], snap)
	ne.PutUint16(b[12:], 14) // tp_mac
	ne.PutUint16(b[14:], 14) // tp_net
	ne.PutUint16(b[16:], tci)
	ne.PutUint16(b[18:], tpid)
	return b
}

func TestParseControl(t *testing.T) {
	oob := append(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecBytes(1795306123, 456789012)),
		cmsg(unix.SOL_PACKET, unix.PACKET_AUXDATA, auxBytes(unix.TP_STATUS_VLAN_VALID|unix.TP_STATUS_VLAN_TPID_VALID, 1514, 96, 0x2064, 0x88a8))...)
	var c control
	parseControl(oob, &c)
	if !c.hasTime || c.sec != 1795306123 || c.nsec != 456789012 {
		t.Fatalf("time: %+v", c)
	}
	if !c.hasAux || c.aux.length != 1514 || c.aux.tci != 0x2064 {
		t.Fatalf("auxdata: %+v", c.aux)
	}
	if tpid, ok := c.aux.vlan(); !ok || tpid != 0x88a8 {
		t.Fatalf("vlan: %#x %v, want 0x88a8", tpid, ok)
	}
	// Without TPID_VALID the tag is 802.1Q; without VLAN_VALID and with a
	// zero TCI there is none.
	if tpid, ok := (&auxdata{status: unix.TP_STATUS_VLAN_VALID}).vlan(); !ok || tpid != 0x8100 {
		t.Fatalf("VLAN_VALID alone: %#x %v", tpid, ok)
	}
	if _, ok := (&auxdata{status: 0}).vlan(); ok {
		t.Fatal("no VLAN flag and TCI 0 taken as a tag")
	}

	// Unknown messages are skipped; a truncated or lying header stops the
	// parse without a panic and keeps what came before.
	unknown := cmsg(unix.SOL_IP, 99, []byte{1, 2, 3})
	parseControl(append(unknown, cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecBytes(5, 6))...), &c)
	if !c.hasTime || c.sec != 5 || c.hasAux {
		t.Fatalf("after an unknown message: %+v", c)
	}
	bad := cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecBytes(5, 6))
	ne.PutUint32(bad, 1000) // longer than the buffer
	parseControl(bad, &c)
	if c.hasTime {
		t.Fatal("a message longer than the buffer was read")
	}
	parseControl(timespecBytes(1, 2)[:3], &c)
	if c.hasTime || c.hasAux {
		t.Fatal("3 bytes parsed as a message")
	}
	// A nanosecond field out of range is not a time.
	parseControl(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecBytes(5, 1e9)), &c)
	if c.hasTime {
		t.Fatal("nsec 1e9 accepted")
	}
}

func TestInsertVLAN(t *testing.T) {
	// dst 02:..:01, src 02:..:02, type IPv4, 4 payload bytes, received
	// after the 4 bytes of room.
	frame := []byte{2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef}
	buf := append(make([]byte, vlanHead), frame...)
	got := insertVLAN(buf, len(frame), 0x8100, 0x0064)
	want := []byte{2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x81, 0x00, 0x00, 0x64, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef}
	if !bytes.Equal(got, want) {
		t.Fatalf("tagged frame\n got % x\nwant % x", got, want)
	}
	short := append(make([]byte, vlanHead), 1, 2, 3)
	if got := insertVLAN(short, 3, 0x8100, 1); !bytes.Equal(got, []byte{1, 2, 3}) {
		t.Fatalf("short frame changed: % x", got)
	}
}

func TestPutSLL2(t *testing.T) {
	from := unix.RawSockaddrLinklayer{Ifindex: 3, Hatype: 1, Pkttype: unix.PACKET_OUTGOING, Halen: 6,
		Addr: [8]byte{0x52, 0x54, 0, 0x12, 0x34, 0x56, 0xff, 0xff}}
	b := []byte{0x08, 0x00}
	from.Protocol = ne.Uint16(b) // the kernel stores sll_protocol in network order
	h := make([]byte, sll2Len)
	for i := range h {
		h[i] = 0xee
	}
	putSLL2(h, &from)
	// Layout of LINKTYPE_LINUX_SLL2 (tcpdump.org/linktypes/LINKTYPE_LINUX_SLL2.html).
	want := []byte{0x08, 0x00, 0, 0, 0, 0, 0, 3, 0, 1, 4, 6, 0x52, 0x54, 0, 0x12, 0x34, 0x56, 0, 0}
	if !bytes.Equal(h, want) {
		t.Fatalf("SLL2 header\n got % x\nwant % x", h, want)
	}
}

// FuzzParseControl feeds arbitrary control-message buffers: parsing never
// panics, and a time it reports has a valid nanosecond field.
func FuzzParseControl(f *testing.F) {
	f.Add(append(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecBytes(1795306123, 456789012)),
		cmsg(unix.SOL_PACKET, unix.PACKET_AUXDATA, auxBytes(unix.TP_STATUS_VLAN_VALID, 60, 60, 100, 0))...))
	f.Add(cmsg(unix.SOL_PACKET, unix.PACKET_AUXDATA, auxBytes(0, 1514, 1514, 0, 0)))
	f.Add([]byte{})
	f.Add(make([]byte, cmsgHdr))
	f.Fuzz(func(t *testing.T, oob []byte) {
		var c control
		parseControl(oob, &c)
		if c.hasTime && (c.nsec < 0 || c.nsec >= 1e9 || c.sec < 0) {
			t.Fatalf("invalid time accepted: %+v", c)
		}
		if (c.hasTime || c.hasAux) && len(oob) < cmsgHdr+timespecN/2 {
			t.Fatalf("%d bytes gave a message", len(oob))
		}
	})
}

// BenchmarkPacket measures turning a received frame into a packet (the
// part of Next after the system call).
func BenchmarkPacket(b *testing.B) {
	s := &Source{snaplen: DefaultSnaplen, head: vlanHead, lt: capture.LinkEthernet}
	s.buf = make([]byte, vlanHead+s.snaplen)
	s.oob = append(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecBytes(1795306123, 456789012)),
		cmsg(unix.SOL_PACKET, unix.PACKET_AUXDATA, auxBytes(0, 1514, 1514, 0, 0))...)
	s.msg.SetControllen(len(s.oob))
	s.n = 1514
	b.SetBytes(int64(s.n))
	b.ReportAllocs()
	for b.Loop() {
		if s.packet() == nil {
			b.Fatal("no packet")
		}
	}
}

// FuzzPacket builds packets from arbitrary recvmsg results (length, control
// messages, sender address) in each capture mode: never a panic, never more
// than the snap length, the wire length never below the captured one, and
// a put-back VLAN tag carries the auxdata's TCI.
func FuzzPacket(f *testing.F) {
	f.Add(uint8(0), uint16(60), uint16(96), uint8(0), append(cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecBytes(1795306123, 5)),
		cmsg(unix.SOL_PACKET, unix.PACKET_AUXDATA, auxBytes(unix.TP_STATUS_VLAN_VALID, 1514, 60, 0x0064, 0))...))
	f.Add(uint8(1), uint16(1500), uint16(64), uint8(unix.PACKET_OUTGOING), cmsg(unix.SOL_PACKET, unix.PACKET_AUXDATA, auxBytes(0, 9000, 1500, 0, 0)))
	f.Add(uint8(2), uint16(3), uint16(0), uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, mode uint8, n, snaplen uint16, pkttype uint8, oob []byte) {
		s := &Source{snaplen: int(snaplen%2000) + 1, oob: make([]byte, 256)}
		switch mode % 3 {
		case 0:
			s.lt, s.head = capture.LinkEthernet, vlanHead
		case 1:
			s.lt, s.head, s.cooked = capture.LinkLinuxSLL2, sll2Len, true
		default:
			s.lt = capture.LinkRaw
		}
		s.buf = make([]byte, s.head+s.snaplen)
		for i := range s.buf {
			s.buf[i] = byte(i)
		}
		s.n = int(n)
		s.from.Pkttype = pkttype
		s.from.Halen = uint8(n)
		copy(s.oob, oob)
		s.msg.SetControllen(min(len(oob), len(s.oob)))
		p := s.packet()
		if p == nil {
			t.Fatal("no packet (only loopback copies are dropped)")
		}
		if len(p.Data) > s.snaplen || p.Length < len(p.Data) {
			t.Fatalf("captured %d of %d bytes with snap length %d", len(p.Data), p.Length, s.snaplen)
		}
		if s.cooked && len(p.Data) >= 12 && int(p.Data[11]) > 8 {
			t.Fatalf("SLL2 address length %d", p.Data[11])
		}
		if s.head == vlanHead && s.ctl.hasAux && len(p.Data) >= 16 {
			if _, ok := s.ctl.aux.vlan(); ok && min(s.n, s.snaplen) >= 12 &&
				binary.BigEndian.Uint16(p.Data[14:]) != s.ctl.aux.tci {
				t.Fatalf("VLAN TCI %#x, auxdata %#x", binary.BigEndian.Uint16(p.Data[14:]), s.ctl.aux.tci)
			}
		}
	})
}
