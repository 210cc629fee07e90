package capture

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// unhex decodes hex with spaces and newlines.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPcapngWriterBytes compares the writer's output with bytes worked out
// by hand from the pcapng specification (every field annotated).
func TestPcapngWriterBytes(t *testing.T) {
	want := unhex(t, `
		0a0d0d0a 1c000000 4d3c2b1a 0100 0000 ffffffffffffffff 1c000000
		01000000 28000000 0100 0000 ffff0000
		  0200 0400 65746830
		  0900 0100 09000000
		  0000 0000
		28000000
		06000000 34000000 00000000 00000000 002f6859 05000000 3c000000
		  6162636465 000000
		  0200 0400 01000000
		  0000 0000
		34000000
		06000000 24000000 00000000 00000000 002f6859 01000000 01000000
		  7a 000000
		24000000`)
	// SHB: type, length 28, byte-order magic, version 1.0, section length
	// -1, length. IDB: type 1, length 40, link type 1, reserved, snaplen
	// 65535, if_name "eth0", if_tsresol 9 (1 byte + 3 padding),
	// opt_endofopt, length. EPB: type 6, length 52, interface 0,
	// timestamp 1.5 s = 1500000000 ns = 0x59682f00 (high word 0), caplen 5,
	// original length 60, "abcde" + 3 padding, epb_flags = 1 (inbound),
	// opt_endofopt, length. Second EPB: no direction, so no options:
	// length 32 + 4.
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.AddInterface("eth0", LinkEthernet, 65535)
	if err != nil || id != 0 {
		t.Fatalf("AddInterface = %d, %v", id, err)
	}
	ts := time.Unix(1, 5e8)
	if err := w.WritePacket(&Packet{Time: ts, LinkType: LinkEthernet, Direction: DirInbound, Data: []byte("abcde"), Length: 60}); err != nil {
		t.Fatal(err)
	}
	if err := w.WritePacket(&Packet{Time: ts, LinkType: LinkEthernet, Data: []byte("z")}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("%d bytes written before Flush; the writer should buffer", buf.Len())
	}
	if w.Size() != int64(len(want)) {
		t.Errorf("Size() = %d before Flush, want %d (every byte written, buffered ones included)", w.Size(), len(want))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("pcapng writer output\n got %x\nwant %x", buf.Bytes(), want)
	}
}

// TestPcapWriterBytes compares the pcap writer's output with bytes worked
// out by hand from the pcap specification.
func TestPcapWriterBytes(t *testing.T) {
	// Header: magic, version 2.4, thiszone 0, sigfigs 0, snaplen 262144,
	// link type 113. Record: 0x12345678 s, 123456 us (0x0001e240), caplen
	// 3, original length 3 (Length 0 is raised to len(Data)), "abc".
	us := unhex(t, `d4c3b2a1 0200 0400 00000000 00000000 00000400 71000000
		78563412 40e20100 03000000 03000000 616263`)
	// The same with nanoseconds: magic a1b23c4d, 123456789 ns = 0x075bcd15.
	ns := unhex(t, `4d3cb2a1 0200 0400 00000000 00000000 00000400 71000000
		78563412 15cd5b07 03000000 03000000 616263`)
	p := &Packet{Time: time.Unix(0x12345678, 123456789), LinkType: LinkLinuxSLL, Data: []byte("abc")}
	for _, tc := range []struct {
		nanos bool
		want  []byte
	}{{false, us}, {true, ns}} {
		var buf bytes.Buffer
		w, err := NewPcapWriter(&buf, LinkLinuxSLL, tc.nanos)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(p); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), tc.want) {
			t.Errorf("nanos=%v:\n got %x\nwant %x", tc.nanos, buf.Bytes(), tc.want)
		}
	}
}

// TestPcapWriterRoundTrip writes packets and reads them back.
func TestPcapWriterRoundTrip(t *testing.T) {
	in := []Packet{
		{Time: time.Unix(1795306106, 460844123), LinkType: LinkEthernet, Data: []byte("first"), Length: 60},
		{Time: time.Unix(0, 999), LinkType: LinkEthernet, Data: nil, Length: 0},
		{Time: time.Unix(4294967295, 999999999), LinkType: LinkEthernet, Data: bytes.Repeat([]byte{7}, 1514)},
	}
	for _, nanos := range []bool{false, true} {
		var buf bytes.Buffer
		w, err := NewPcapWriter(&buf, LinkEthernet, nanos)
		if err != nil {
			t.Fatal(err)
		}
		var want []got
		for i := range in {
			if err := w.WritePacket(&in[i]); err != nil {
				t.Fatal(err)
			}
			g := copyPacket(&in[i])
			g.Length = max(g.Length, len(g.Data))
			if !nanos {
				g.Time = g.Time.Truncate(time.Microsecond)
			}
			want = append(want, g)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		pkts, err := readBytes(t, buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		sameGot(t, pkts, want)
	}
}

// TestPcapngWriterRoundTrip writes two interfaces and packets with every
// direction and reads them back.
func TestPcapngWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := w.AddInterface("", LinkEthernet, 0); err != nil || id != 0 {
		t.Fatalf("AddInterface = %d, %v", id, err)
	}
	if id, err := w.AddInterface("/dev/ttyACM0", LinkUser0, 4096); err != nil || id != 1 {
		t.Fatalf("AddInterface = %d, %v", id, err)
	}
	in := []Packet{
		{Time: time.Unix(1795306106, 460844123), LinkType: LinkEthernet, Interface: 0, Data: []byte("eth frame"), Length: 64},
		{Time: time.Unix(1795306107, 1), LinkType: LinkUser0, Interface: 1, InterfaceName: "/dev/ttyACM0", Direction: DirOutbound, Data: []byte("AT\r")},
		{Time: time.Unix(1795306107, 2), LinkType: LinkUser0, Interface: 1, InterfaceName: "/dev/ttyACM0", Direction: DirInbound, Data: []byte("OK\r\n")},
		{Time: time.Unix(0, 0), LinkType: LinkEthernet, Interface: 0, Data: []byte{}},
		{Time: time.Unix(0, 1<<62), LinkType: LinkEthernet, Interface: 0, Direction: DirInbound, Data: []byte{1, 2, 3, 4}},
	}
	var want []got
	for i := range in {
		if err := w.WritePacket(&in[i]); err != nil {
			t.Fatal(err)
		}
		g := copyPacket(&in[i])
		g.Length = max(g.Length, len(g.Data))
		want = append(want, g)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	pkts, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, pkts, want)
}

func TestWriterRejects(t *testing.T) {
	var buf bytes.Buffer
	ng, _ := NewPcapngWriter(&buf)
	ng.AddInterface("x", LinkEthernet, 0)
	pc, _ := NewPcapWriter(&buf, LinkEthernet, false)
	ok := Packet{Time: time.Unix(1, 0), LinkType: LinkEthernet, Data: []byte("a")}
	for _, tc := range []struct {
		name   string
		mod    func(p *Packet)
		ng, pc string // wanted error substrings; "" = accepted
	}{
		{"valid", func(p *Packet) {}, "", ""},
		{"unknown interface", func(p *Packet) { p.Interface = 1 }, "interface 1, but 1 interfaces", ""},
		{"wrong link type", func(p *Packet) { p.LinkType = LinkRaw }, "link type 101 on interface 0 of link type 1", "link type 101 in a file of link type 1"},
		{"before 1970", func(p *Packet) { p.Time = time.Unix(-1, 0) }, "outside the range 1970-2262", "outside the pcap range"},
		{"after 2106", func(p *Packet) { p.Time = time.Unix(1<<32, 0) }, "", "outside the pcap range"},
		{"bad direction", func(p *Packet) { p.Direction = 3 }, "invalid direction 3", ""},
		{"over the pcap snaplen", func(p *Packet) { p.Data = make([]byte, 256<<10+1) }, "", "exceeds the snaplen 262144"},
		{"over the block limit", func(p *Packet) { p.Data = make([]byte, 16<<20) }, "exceeds the limit", "exceeds the snaplen"},
	} {
		p := ok
		tc.mod(&p)
		for _, c := range []struct {
			what string
			err  error
			want string
		}{{"pcapng", ng.WritePacket(&p), tc.ng}, {"pcap", pc.WritePacket(&p), tc.pc}} {
			switch {
			case c.want == "" && c.err != nil:
				t.Errorf("%s %s: %v", tc.name, c.what, c.err)
			case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)):
				t.Errorf("%s %s: error %v, want %q", tc.name, c.what, c.err, c.want)
			}
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

var errDisk = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errDisk }

func TestWriterErrorsAreSticky(t *testing.T) {
	ng, err := NewPcapngWriter(failWriter{})
	if err != nil {
		t.Fatal(err) // buffered: nothing reached the writer yet
	}
	if err := ng.Flush(); !errors.Is(err, errDisk) {
		t.Fatalf("Flush: %v", err)
	}
	if _, err := ng.AddInterface("x", 1, 0); !errors.Is(err, errDisk) {
		t.Errorf("AddInterface after a failed Flush: %v", err)
	}
	pc, _ := NewPcapWriter(failWriter{}, 1, false)
	if err := pc.Flush(); !errors.Is(err, errDisk) {
		t.Fatalf("Flush: %v", err)
	}
	if err := pc.WritePacket(&Packet{LinkType: 1, Time: time.Unix(1, 0)}); !errors.Is(err, errDisk) {
		t.Errorf("WritePacket after a failed Flush: %v", err)
	}
}

// TestPcapngWriterStatsBytes compares an Interface Statistics Block with
// bytes worked out by hand from draft-ietf-opsawg-pcapng section 4.6: the
// block timestamp and isb_starttime/isb_endtime are high then low 32-bit
// words of nanoseconds (if_tsresol 9), counters are 64-bit values, unknown
// counters are absent.
func TestPcapngWriterStatsBytes(t *testing.T) {
	comment := "dissect: packets dropped by dissect's queue = 1" // 47 bytes
	want := unhex(t, `
		05000000 8c000000 00000000 00000000 002f6859
		  0100 2f00`+hex.EncodeToString([]byte(comment))+`00
		  0200 0800 00000000 00ca9a3b
		  0300 0800 00000000 002f6859
		  0400 0800 0a00000000000000
		  0700 0800 0200000000000000
		  0800 0800 0800000000000000
		  0000 0000
		8c000000`)
	// Block type 5, total length 140 = 20 (header, interface 0, timestamp
	// 1.5 s = 0x59682f00 ns) + 4+48 (opt_comment, 47 bytes + 1 padding)
	// + 5*12 (isb_starttime 1 s = 0x3b9aca00 ns, isb_endtime, isb_ifrecv
	// 10, isb_osdrop 2, isb_usrdeliv 8) + 4 (opt_endofopt) + 4 (length).
	// InterfaceDropped and FilterAccepted are unknown: no isb_ifdrop (5)
	// or isb_filteraccept (6).
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInterface("", LinkUser0, 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	head := buf.Len()
	st := InterfaceStats{
		Start:          time.Unix(1, 0),
		End:            time.Unix(1, 5e8),
		Received:       Count(10),
		KernelDropped:  Count(2),
		Delivered:      Count(8),
		DissectDropped: Count(1),
	}
	if err := w.WriteStats(0, st); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := buf.Bytes()[head:]; !bytes.Equal(got, want) {
		t.Errorf("statistics block\n got %x\nwant %x", got, want)
	}
	// Only the end time: the block holds isb_endtime alone. A known zero
	// is written: 0 drops is not the same as unknown.
	buf.Truncate(head)
	if err := w.WriteStats(0, InterfaceStats{End: time.Unix(1, 5e8), InterfaceDropped: Count(0)}); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	// Length 52 = 20 + 12 (isb_endtime) + 12 (isb_ifdrop 0) + 4 + 4.
	want = unhex(t, `05000000 34000000 00000000 00000000 002f6859
		0300 0800 00000000 002f6859
		0500 0800 0000000000000000
		0000 0000 34000000`)
	if got := buf.Bytes()[head:]; !bytes.Equal(got, want) {
		t.Errorf("statistics block\n got %x\nwant %x", got, want)
	}
}

func TestPcapngWriterStatsRejects(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewPcapngWriter(&buf)
	w.AddInterface("x", LinkEthernet, 0)
	w.Flush()
	n := buf.Len()
	end := time.Unix(10, 0)
	for _, tc := range []struct {
		name  string
		iface int
		st    InterfaceStats
		want  string
	}{
		{"unknown interface", 1, InterfaceStats{End: end}, "interface 1, but 1 interfaces"},
		{"negative interface", -1, InterfaceStats{End: end}, "interface -1"},
		{"no end time", 0, InterfaceStats{Start: end}, "without an end time"},
		{"start after end", 0, InterfaceStats{Start: end.Add(1), End: end}, "after their end"},
		{"before 1970", 0, InterfaceStats{End: time.Unix(-1, 0)}, "outside the range 1970-2262"},
	} {
		err := w.WriteStats(tc.iface, tc.st)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	w.Flush()
	if buf.Len() != n {
		t.Errorf("rejected statistics wrote %d bytes", buf.Len()-n)
	}
	if err := w.WriteStats(0, InterfaceStats{End: end}); err != nil {
		t.Errorf("writer unusable after rejected statistics: %v", err)
	}
}

// TestPcapngWriterStatsReadBack checks that statistics blocks, between and
// after packets, do not disturb our reader.
func TestPcapngWriterStatsReadBack(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewPcapngWriter(&buf)
	w.AddInterface("eth0", LinkEthernet, 0)
	w.AddInterface("/dev/ttyUSB0", LinkUser0, 0)
	in := []Packet{
		{Time: time.Unix(1795306106, 1), LinkType: LinkEthernet, InterfaceName: "eth0", Direction: DirInbound, Data: []byte("frame")},
		{Time: time.Unix(1795306106, 2), LinkType: LinkUser0, Interface: 1, InterfaceName: "/dev/ttyUSB0", Direction: DirOutbound, Data: []byte("AT\r")},
	}
	var want []got
	for i := range in {
		if err := w.WritePacket(&in[i]); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteStats(i, InterfaceStats{Start: time.Unix(1795306100, 0), End: in[i].Time, Delivered: Count(uint64(i + 1)), DissectDropped: Count(3)}); err != nil {
			t.Fatal(err)
		}
		g := copyPacket(&in[i])
		g.Length = len(g.Data)
		want = append(want, g)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	pkts, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, pkts, want)
}
