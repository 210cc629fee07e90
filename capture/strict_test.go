package capture

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Format strictness and timestamps (issues 9 and 11): which versions and
// link-type fields are read, the order of a record's lengths by version,
// the limits on interfaces, timestamps that saturate, and Simple Packet
// Blocks, which take the time of the packet before them. Every file is
// crafted here from the pcap and pcapng specifications; TestStrictTshark
// checks each verdict against tshark.

// The range pcapng timestamps saturate at: that of UnixNano.
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// pcapVersion returns a one-record pcap file of version major.minor whose
// record header holds the fields a and b (captured then original length,
// from 2.3 on) and 60 bytes.
func pcapVersion(major, minor uint16, linkField, a, b uint32) []byte {
	f := newPcapFile(littleEndian, false, 65535, linkField)
	littleEndian.PutUint16(f.buf[4:], major)
	littleEndian.PutUint16(f.buf[6:], minor)
	return f.recordLen(1, 2, a, b, make([]byte, 60)).buf
}

// ngVersion returns a pcapng file of SHB version major.minor with one
// Ethernet interface and one packet at 1 s.
func ngVersion(major, minor uint16) []byte {
	f := newNgFile(littleEndian)
	littleEndian.PutUint16(f.buf[12:], major)
	littleEndian.PutUint16(f.buf[14:], minor)
	return f.idb(1, 0).epb(0, 1e6, make([]byte, 60), 60).buf
}

// strictCase is one crafted file, what we read from it, and what tshark
// does with it.
type strictCase struct {
	name string
	in   []byte
	// Our reading: the packets (Data is compared by length only through
	// Length and len), or the error at off containing msg after packets
	// packets.
	packets int
	capLen  int // captured length of every packet
	length  int // original length of every packet
	off     int64
	msg     string // "" when the file reads cleanly
	// tshark: whether it reads the file to the end (exit status 0), and
	// why it differs from us when it does and we do not.
	tsharkReads bool
	differs     string
	tsharkLens  string // tshark's "cap_len|len" when it differs from ours
}

func strictCases() []strictCase {
	var cs []strictCase
	add := func(c strictCase) { cs = append(cs, c) }

	// pcap versions: libpcap's sf-pcap.c reads 2.0 to 2.4 and 543.0 and
	// rejects everything else; tshark (wiretap/libpcap.c) rejects only
	// majors below 2.
	for _, v := range []struct {
		major, minor uint16
		ok           bool
	}{{2, 0, true}, {2, 2, true}, {2, 4, true}, {543, 0, true}, {1, 0, false}, {2, 5, false}, {3, 0, false}, {543, 1, false}} {
		a, b := uint32(60), uint32(1514)
		if v.major == 543 || v.minor < 3 {
			a, b = b, a // the original length first
		}
		if !v.ok {
			a, b = 60, 60 // any order
		}
		c := strictCase{name: fmt.Sprintf("pcap %d.%d", v.major, v.minor), in: pcapVersion(v.major, v.minor, 1, a, b),
			packets: 1, capLen: 60, length: int(max(a, b)), tsharkReads: v.major >= 2}
		if !v.ok {
			c.packets, c.off = 0, 4
			c.msg = fmt.Sprintf("unsupported pcap version %d.%d (libpcap reads 2.0 to 2.4, and 543.0)", v.major, v.minor)
			if c.tsharkReads {
				c.differs = "tshark reads any major of 2 or more; libpcap (tcpdump) rejects it, as we do"
			}
		}
		add(c)
	}
	// 2.3: the lengths are swapped only when the captured one is larger.
	add(strictCase{name: "pcap 2.3 in the old order", in: pcapVersion(2, 3, 1, 1514, 60),
		packets: 1, capLen: 60, length: 1514, tsharkReads: true})
	add(strictCase{name: "pcap 2.3 in the new order", in: pcapVersion(2, 3, 1, 60, 1514),
		packets: 1, capLen: 60, length: 1514, tsharkReads: true})
	// 2.4: a captured length above the original is kept as it is.
	// (Packet.Length is never below the captured length; tshark shows
	// the field as it is.)
	add(strictCase{name: "pcap 2.4 captured above original", in: pcapVersion(2, 4, 1, 60, 40),
		packets: 1, capLen: 60, length: 60, tsharkReads: true, tsharkLens: "60|40"})

	// pcap link-type field: bits 16-25 are reserved; bit 26 (FCS length
	// present), bit 27 and bits 28-31 (FCS length) are not.
	for _, l := range []struct {
		field uint32
		ok    bool
	}{{1, true}, {1 | 1<<26 | 4<<28, true}, {1 | 4<<28, true}, {1 | 1<<27, true}, {1 | 1<<16, false}, {1 | 1<<25, false}, {1 | 0x03FF0000, false}} {
		c := strictCase{name: fmt.Sprintf("pcap link-type field 0x%08x", l.field), in: pcapVersion(2, 4, l.field, 60, 60),
			packets: 1, capLen: 60, length: 60, tsharkReads: l.ok}
		if !l.ok {
			c.packets, c.off = 0, 20
			c.msg = fmt.Sprintf("link-type field 0x%08x has reserved bits set (0x%08x; bits 16-25 must be zero)", l.field, l.field&0x03FF0000)
		}
		add(c)
	}

	// pcapng SHB versions: libpcap's sf-pcapng.c and tshark read 1.0 and
	// 1.2 only.
	for _, v := range []struct {
		major, minor uint16
		ok           bool
	}{{1, 0, true}, {1, 2, true}, {1, 1, false}, {1, 3, false}, {0, 1, false}, {2, 0, false}} {
		c := strictCase{name: fmt.Sprintf("pcapng %d.%d", v.major, v.minor), in: ngVersion(v.major, v.minor),
			packets: 1, capLen: 60, length: 60, tsharkReads: v.ok}
		if !v.ok {
			c.packets = 0
			c.msg = fmt.Sprintf("unsupported pcapng version %d.%d (libpcap and tshark read 1.0 and 1.2)", v.major, v.minor)
		}
		add(c)
	}
	// A later section of version 1.1: the packets before it are read.
	second := append(ngVersion(1, 0), ngVersion(1, 1)...)
	add(strictCase{name: "pcapng second section 1.1", in: second, packets: 1, capLen: 60, length: 60,
		off: int64(len(ngVersion(1, 0))), msg: "unsupported pcapng version 1.1"})

	// Many interfaces, and long names: read, as tshark reads them.
	many := newNgFile(littleEndian)
	for range 70000 {
		many.idb(1, 0)
	}
	many.epb(65536, 1e6, make([]byte, 60), 60).epb(69999, 1e6, make([]byte, 60), 60)
	add(strictCase{name: "pcapng 70000 interfaces", in: many.buf, packets: 2, capLen: 60, length: 60, tsharkReads: true})
	names := newNgFile(littleEndian)
	for range 20 {
		names.idb(1, 0, ngOpt(littleEndian, 2, bytes.Repeat([]byte{'n'}, 65000)))
	}
	names.epb(19, 1e6, make([]byte, 60), 60)
	add(strictCase{name: "pcapng 1.3 MB of interface names", in: names.buf, packets: 1, capLen: 60, length: 60, tsharkReads: true})
	return cs
}

func TestStrict(t *testing.T) {
	for _, c := range strictCases() {
		t.Run(c.name, func(t *testing.T) {
			src, err := NewReader(bytes.NewReader(c.in), "mem")
			var pkts []got
			if err == nil {
				pkts, err = readAll(t, src)
				src.Close()
			}
			if c.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				wantFileError(t, err, c.off, c.msg)
			}
			if len(pkts) != c.packets {
				t.Fatalf("%d packets, want %d", len(pkts), c.packets)
			}
			for i, p := range pkts {
				if len(p.Data) != c.capLen || p.Length != c.length {
					t.Errorf("packet %d: %d of %d bytes, want %d of %d", i, len(p.Data), p.Length, c.capLen, c.length)
				}
				if p.LinkType != LinkEthernet {
					t.Errorf("packet %d: link type %d", i, p.LinkType)
				}
			}
		})
	}
}

// TestStrictTshark checks every verdict of TestStrict against Wireshark: a
// file we read is read to the end, with as many packets, by capinfos
// (Wireshark's wiretap library, the file readers of tshark, without
// tshark's second of start-up per file), and by tshark with the same
// lengths where the record's length fields are in question; a file we
// reject is rejected, unless the case says why we differ.
func TestStrictTshark(t *testing.T) {
	capinfos := needTool(t, "capinfos")
	needTool(t, "tshark")
	dir := t.TempDir()
	for i, c := range strictCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, fmt.Sprintf("%d.cap", i))
			if err := os.WriteFile(path, c.in, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(capinfos, "-c", "-M", path)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			reads := err == nil
			if reads != c.tsharkReads {
				t.Fatalf("Wireshark reads the file: %v, want %v\n%s", reads, c.tsharkReads, errb.String())
			}
			weRead := c.msg == ""
			switch {
			case reads == weRead && c.differs != "":
				t.Errorf("Wireshark now agrees with us; drop the note %q", c.differs)
			case reads != weRead && c.differs == "":
				t.Errorf("Wireshark reads: %v, we read: %v", reads, weRead)
			case reads != weRead:
				t.Logf("differs from Wireshark: %s", c.differs)
			}
			if !reads {
				t.Logf("capinfos: %s", strings.TrimSpace(errb.String()))
				return
			}
			if weRead && !strings.Contains(out.String(), fmt.Sprintf("Number of packets:   %d\n", c.packets)) {
				t.Fatalf("capinfos does not count %d packets:\n%s", c.packets, out.String())
			}
			if !weRead || c.capLen == c.length && c.tsharkLens == "" {
				return
			}
			// The record's length fields: tshark shows the same lengths.
			lines := strings.Split(strings.TrimSpace(runTool(t, "tshark", "-r", path,
				"-T", "fields", "-E", "separator=|", "-e", "frame.cap_len", "-e", "frame.len")), "\n")
			want := fmt.Sprintf("%d|%d", c.capLen, c.length)
			if c.tsharkLens != "" {
				want = c.tsharkLens
			}
			if len(lines) != c.packets {
				t.Fatalf("tshark: %d packets, we read %d", len(lines), c.packets)
			}
			for j, l := range lines {
				if l != want {
					t.Errorf("tshark packet %d: %s, want %s", j, l, want)
				}
			}
		})
	}
}

// TestPcapngInterfaceBudget lowers the per-section interface budget to
// check its accounting: ifaceCost bytes per interface plus its name, a
// repeated if_name replacing the one before, and a new section starting
// again.
func TestPcapngInterfaceBudget(t *testing.T) {
	name := func(f *ngFile, n int) []byte { return ngOpt(f.bo, 2, bytes.Repeat([]byte{'n'}, n)) }
	f := newNgFile(littleEndian)
	f.idb(1, 0, name(f, 1000), name(f, 1000)) // 64 + 1000: the second name replaces the first
	off1 := int64(len(f.buf))
	f.idb(1, 0, name(f, 900)) // 64 + 900: 2028 bytes
	f.shb(littleEndian)
	f.idb(1, 0, name(f, 1900)) // a new section: 1964 bytes
	f.epb(0, 0, []byte("ok"), 2)
	f.idb(1, 0) // 2028 bytes
	f.epb(1, 0, []byte("still ok"), 8)
	off := int64(len(f.buf))
	f.idb(1, 0) // 2092 bytes
	f.epb(0, 0, []byte("not reached"), 11)

	for _, c := range []struct {
		limit   int
		packets int
		off     int64
		msg     string
	}{
		// Both sections fit exactly; the third interface of section 2
		// does not.
		{2028, 2, off, "interface description block 2: the interfaces of this section take more than the limit of 2028 bytes"},
		// One byte less: the second name of section 1 does not fit.
		{2027, 0, off1, "interface description block 1: if_name of 900 bytes: the interfaces of this section take more than the limit of 2027 bytes"},
	} {
		in := newInput(bytes.NewReader(f.buf), "mem", 0, nil)
		r, err := newNgReader(in)
		if err != nil {
			t.Fatal(err)
		}
		r.ifaceM = c.limit
		pkts, err := readAll(t, r)
		wantFileError(t, err, c.off, c.msg)
		if len(pkts) != c.packets {
			t.Errorf("limit %d: %d packets before the error, want %d", c.limit, len(pkts), c.packets)
		}
		if c.packets == 2 && (pkts[0].Data != "ok" || len(pkts[0].Name) != 1900 || pkts[1].Data != "still ok") {
			t.Errorf("limit %d: packets %+v", c.limit, pkts)
		}
	}

	// A name alone over the budget.
	g := newNgFile(littleEndian)
	g.idb(1, 0, name(g, 3000))
	in := newInput(bytes.NewReader(g.buf), "mem", 0, nil)
	r, err := newNgReader(in)
	if err != nil {
		t.Fatal(err)
	}
	r.ifaceM = 2048
	_, err = readAll(t, r)
	wantFileError(t, err, 28, "interface description block 0: if_name of 3000 bytes: the interfaces of this section take more than the limit of 2048 bytes")
}

// TestPcapngSimplePacketTime: a Simple Packet Block has no timestamp; it
// takes the time of the packet before it in the file, across sections, and
// is marked NoTime; before any timed packet its time is the zero time.
func TestPcapngSimplePacketTime(t *testing.T) {
	f := newNgFile(littleEndian)
	f.idb(1, 0)
	f.spb(1, []byte("a"))               // no packet before: zero time
	f.epb(0, 5_000_001, []byte("b"), 1) // 5.000001 s
	f.spb(1, []byte("c"))
	f.spb(1, []byte("d"))
	f.shb(bigEndian).idb(1, 0, ngOpt(bigEndian, 9, []byte{9})) // nanoseconds
	f.spb(1, []byte("e"))                                      // the previous section's time
	f.epb(0, 7_000_000_002, []byte("f"), 1)
	f.spb(1, []byte("g"))
	t5, t7 := time.Unix(5, 1000), time.Unix(7, 2)
	want := []got{
		{Time: time.Time{}, LinkType: LinkEthernet, Data: "a", Length: 1, NoTime: true},
		{Time: t5, LinkType: LinkEthernet, Data: "b", Length: 1},
		{Time: t5, LinkType: LinkEthernet, Data: "c", Length: 1, NoTime: true},
		{Time: t5, LinkType: LinkEthernet, Data: "d", Length: 1, NoTime: true},
		{Time: t5, LinkType: LinkEthernet, Data: "e", Length: 1, NoTime: true},
		{Time: t7, LinkType: LinkEthernet, Data: "f", Length: 1},
		{Time: t7, LinkType: LinkEthernet, Data: "g", Length: 1, NoTime: true},
	}
	pkts, err := readBytes(t, f.buf)
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, pkts, want)
}

// TestPcapngTimeSaturation: timestamps, if_tsoffset included, saturate at
// the range of UnixNano (1677-09-21 to 2262-04-11) instead of wrapping.
func TestPcapngTimeSaturation(t *testing.T) {
	const maxI64 = 1<<63 - 1
	for _, c := range []struct {
		name  string
		opts  func(f *ngFile) [][]byte
		ts    uint64
		want  time.Time
		tshrk string // tshark's frame.time_epoch, "" when it wraps around
	}{
		{"plain", nil, 1e6 + 7, time.Unix(1, 7000), "1.000007000"},
		{"largest microseconds", nil, 1<<64 - 1, maxTime, ""}, // tshark: 18446744073709.551615000
		{"if_tsoffset 2^63-1", func(f *ngFile) [][]byte { return [][]byte{ngOpt(f.bo, 14, f.u64(maxI64))} }, 1e6, maxTime, ""},
		{"if_tsoffset -2^63", func(f *ngFile) [][]byte { return [][]byte{ngOpt(f.bo, 14, f.u64(1<<63))} }, 1e6, minTime, ""},
		{"if_tsoffset -1 s", func(f *ngFile) [][]byte { return [][]byte{ngOpt(f.bo, 14, f.u64(1<<64-1))} }, 0, time.Unix(-1, 0), "-1.000000000"},
		{"whole seconds, 2^64-1", func(f *ngFile) [][]byte { return [][]byte{ngOpt(f.bo, 9, []byte{0})} }, 1<<64 - 1, maxTime, ""},
		{"2^-1 s units, 2^64-1", func(f *ngFile) [][]byte { return [][]byte{ngOpt(f.bo, 9, []byte{0x81})} }, 1<<64 - 1, maxTime, ""},
		{"nanoseconds, 2^63-1", func(f *ngFile) [][]byte { return [][]byte{ngOpt(f.bo, 9, []byte{9})} }, maxI64, maxTime, "9223372036.854775807"},
		{"nanoseconds, 2^63-1, -1 ns", func(f *ngFile) [][]byte {
			return [][]byte{ngOpt(f.bo, 9, []byte{9}), ngOpt(f.bo, 14, f.u64(1<<64-1))}
		}, maxI64, time.Unix(9223372035, 854775807), "9223372035.854775807"},
		{"10^-19 s units", func(f *ngFile) [][]byte { return [][]byte{ngOpt(f.bo, 9, []byte{19})} }, 1<<64 - 1, time.Unix(1, 844674407), ""}, // tshark 4.0: 1.000000001
		{"whole seconds past 1677 with offset", func(f *ngFile) [][]byte {
			return [][]byte{ngOpt(f.bo, 9, []byte{0}), ngOpt(f.bo, 14, f.u64(1<<63+1<<62))}
		}, 0, minTime, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newNgFile(littleEndian)
			var o [][]byte
			if c.opts != nil {
				o = c.opts(f)
			}
			f.idb(1, 0, o...).epb(0, c.ts, []byte("x"), 1).spb(1, []byte("y"))
			pkts, err := readBytes(t, f.buf)
			if err != nil {
				t.Fatal(err)
			}
			want := []got{
				{Time: c.want, LinkType: LinkEthernet, Data: "x", Length: 1},
				{Time: c.want, LinkType: LinkEthernet, Data: "y", Length: 1, NoTime: true},
			}
			sameGot(t, pkts, want)
			if c.tshrk == "" {
				return
			}
			if _, err := exec.LookPath("tshark"); err != nil {
				return
			}
			path := filepath.Join(t.TempDir(), "t.pcapng")
			if err := os.WriteFile(path, f.buf, 0o644); err != nil {
				t.Fatal(err)
			}
			out := runTool(t, "tshark", "-r", path, "-c", "1", "-T", "fields", "-e", "frame.time_epoch")
			if strings.TrimSpace(out) != c.tshrk {
				t.Errorf("tshark reads %s, want %s", strings.TrimSpace(out), c.tshrk)
			}
		})
	}
}
