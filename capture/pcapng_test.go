package capture

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestPcapngFeatures reads a hand-built two-section file covering interface
// options (if_name, if_tsresol in both forms, if_tsoffset), epb_flags in
// both byte orders, SPBs, the obsolete PB, and block types that must be
// skipped. Expected values are worked out by hand in the comments.
func TestPcapngFeatures(t *testing.T) {
	f := newNgFile(littleEndian)
	le := f     // section 1 is little endian
	f.idb(1, 0, // interface 0: Ethernet, milliseconds
		ngOpt(le.bo, 2, []byte("eth0")),
		ngOpt(le.bo, 9, []byte{3}))
	f.idb(147, 64, // interface 1: USER0, 2^-20 s units, 100 s offset
		ngOpt(le.bo, 2, []byte("/dev/ttyUSB0\x00")), // a trailing NUL is dropped
		ngOpt(le.bo, 9, []byte{0x80 | 20}),
		ngOpt(le.bo, 14, le.u64(100)))
	f.block(4, pad([]byte{1, 0, 4, 0, 127, 0, 0, 1, 'l', 'o', 0, 0, 0, 0})) // NRB
	f.block(5, make([]byte, 12))                                            // ISB
	f.block(0x00000BAD, pad([]byte("custom block, copyable")))              // CB
	f.block(0x80000001, make([]byte, 8))                                    // local use
	// 1234567 ms = 1234.567 s.
	f.epb(0, 1234567, []byte("abc"), 3)
	// (3<<20 | 1<<19) units of 2^-20 s = 3.5 s, plus 100 s.
	f.epb(1, 3<<20|1<<19, []byte("ping"), 4, f.flags(1))
	// 1 unit = 2^-20 s = 953.674... ns, truncated to 953 ns. A comment
	// option precedes epb_flags; the flags carry other bits above bit 1.
	f.epb(1, 1, []byte("pong"), 4, ngOpt(le.bo, 1, []byte("hi")), f.flags(0x01000002))
	// Direction bits 3 are not a direction.
	f.epb(1, 0, []byte("x"), 1, f.flags(3))
	// Obsolete Packet Block: 16-bit interface id (1), drops count, then as
	// an EPB; 2<<20 units = 2 s, plus 100 s; pack_flags inbound.
	pb := append(le.bo.AppendUint16(nil, 1), 0, 0)
	pb = append(pb, le.u32(0)...)
	pb = append(pb, le.u32(2<<20)...)
	pb = append(pb, le.u32(2)...)
	pb = append(pb, le.u32(9)...)
	pb = append(pb, 'o', 'k', 0, 0)
	f.block(2, append(pb, ngOpts(le.bo, f.flags(1))...))
	// SPB: captured length = original length (interface 0 has no snaplen).
	f.spb(10, []byte("0123456789"))
	// SPB whose block holds fewer bytes than the original length.
	f.spb(1500, []byte("01234567"))

	f.shb(bigEndian) // section 2: big endian, interfaces start again
	f.idb(101, 4,    // interface 0: raw IP, nanoseconds, snaplen 4
		ngOpt(f.bo, 9, []byte{9}))
	f.idb(228, 0, // interface 1: raw IPv4, default microseconds, -5 s offset
		ngOpt(f.bo, 2, []byte("v4")),
		ngOpt(f.bo, 14, f.u64(uint64(0xffff_ffff_ffff_fffb)))) // -5
	f.block(0x00000006|0x40000000, make([]byte, 4)) // unknown type
	// 1700000000123456789 ns; the flags word is big endian here.
	f.epb(0, 1700000000123456789, []byte("\x45\x00"), 20, f.flags(1))
	// SPB on interface 0: cut to its snaplen of 4.
	f.spb(10, []byte("0123456789"))
	// 10000001 us = 10.000001 s, minus 5 s.
	f.epb(1, 10000001, []byte("v4pkt"), 5, f.flags(2))

	want := []got{
		{Time: time.Unix(1234, 567e6), LinkType: LinkEthernet, Interface: 0, Name: "eth0", Data: "abc", Length: 3},
		{Time: time.Unix(103, 5e8), LinkType: LinkUser0, Interface: 1, Name: "/dev/ttyUSB0", Dir: DirInbound, Data: "ping", Length: 4},
		{Time: time.Unix(100, 953), LinkType: LinkUser0, Interface: 1, Name: "/dev/ttyUSB0", Dir: DirOutbound, Data: "pong", Length: 4},
		{Time: time.Unix(100, 0), LinkType: LinkUser0, Interface: 1, Name: "/dev/ttyUSB0", Dir: DirUnknown, Data: "x", Length: 1},
		{Time: time.Unix(102, 0), LinkType: LinkUser0, Interface: 1, Name: "/dev/ttyUSB0", Dir: DirInbound, Data: "ok", Length: 9},
		// SPBs: the time of the packet before, marked NoTime.
		{Time: time.Unix(102, 0), LinkType: LinkEthernet, Interface: 0, Name: "eth0", Data: "0123456789", Length: 10, NoTime: true},
		{Time: time.Unix(102, 0), LinkType: LinkEthernet, Interface: 0, Name: "eth0", Data: "01234567", Length: 1500, NoTime: true},
		{Time: time.Unix(1700000000, 123456789), LinkType: LinkRaw, Interface: 0, Dir: DirInbound, Data: "\x45\x00", Length: 20},
		{Time: time.Unix(1700000000, 123456789), LinkType: LinkRaw, Interface: 0, Data: "0123", Length: 10, NoTime: true},
		{Time: time.Unix(5, 1000), LinkType: LinkIPv4, Interface: 1, Name: "v4", Dir: DirOutbound, Data: "v4pkt", Length: 5},
	}
	pkts, err := readBytes(t, f.buf)
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, pkts, want)
}

// TestPcapngSectionResetsInterfaces checks that a new section forgets the
// interfaces of the previous one.
func TestPcapngSectionResetsInterfaces(t *testing.T) {
	f := newNgFile(littleEndian).idb(1, 0).idb(1, 0).epb(1, 0, []byte("a"), 1)
	f.shb(littleEndian).idb(1, 0)
	f.epb(0, 0, []byte("b"), 1)
	epbOff := int64(len(f.buf))
	f.epb(1, 0, []byte("c"), 1)
	pkts, err := readBytes(t, f.buf)
	wantFileError(t, err, epbOff, "packet block names interface 1, but the section has 1")
	if len(pkts) != 2 || pkts[0].Data != "a" || pkts[1].Data != "b" {
		t.Errorf("packets before the error: %+v", pkts)
	}
}

// threeNg is a valid pcapng: SHB at 0 (28 bytes), IDB at 28 (20), EPBs of
// 10, 20 and 30 bytes at 48 (44), 92 (52) and 144 (64); the file ends at
// 208.
func threeNg() *ngFile {
	f := newNgFile(littleEndian).idb(1, 0)
	for i := range 3 {
		f.epb(0, uint64(i+1)*1e6, bytes.Repeat([]byte{byte(i + 1)}, 10*(i+1)), uint32(10*(i+1)))
	}
	return f
}

func TestPcapngDamaged(t *testing.T) {
	full := threeNg().buf
	if len(full) != 208 {
		t.Fatalf("test file is %d bytes", len(full))
	}
	patch := func(off int, v uint32) []byte {
		b := append([]byte(nil), full...)
		littleEndian.PutUint32(b[off:], v)
		return b
	}
	two := full[:144]
	then := func(more func(f *ngFile)) []byte {
		f := &ngFile{bo: littleEndian, buf: append([]byte(nil), two...)}
		more(f)
		return f.buf
	}
	badOpt := littleEndian.AppendUint16(nil, 2)
	badOpt = littleEndian.AppendUint16(badOpt, 100)
	badOpt = append(badOpt, 0, 0, 0, 0)

	for _, tc := range []struct {
		name    string
		in      []byte
		open    bool // the error comes from NewReader
		packets int
		off     int64
		msg     string
	}{
		{"truncated section header", full[:10], true, 0, 0, "truncated section header block: 12 bytes needed, 10 remain"},
		{"truncated first block", full[:20], true, 0, 0, "truncated block: header says 28 bytes, 20 remain"},
		{"bad byte-order magic", patch(8, 0x11223344), true, 0, 0, "byte-order magic 44 33 22 11"},
		{"unsupported version", patch(12, 2), true, 0, 0, "unsupported pcapng version 2.0"},
		{"truncated block header", full[:144+5], false, 2, 144, "truncated block header: 8 bytes needed, 5 remain"},
		{"truncated block", full[:144+40], false, 2, 144, "truncated block: header says 64 bytes, 40 remain"},
		{"length not a multiple of 4", patch(144+4, 62), false, 2, 144, "has length 62, not a multiple of 4"},
		{"length below 12", patch(144+4, 8), false, 2, 144, "has length 8, less than the minimum of 12"},
		{"length above the cap", patch(144+4, 16<<20+4), false, 2, 144, "has length 16777220, more than the limit of 16777216"},
		{"trailing length differs", patch(208-4, 68), false, 2, 144, "leading length 64 but trailing length 68"},
		{"interface out of range", patch(144+8, 5), false, 2, 144, "packet block names interface 5, but the section has 1"},
		{"caplen beyond the block", patch(144+20, 100), false, 2, 144, "enhanced packet block says 100 captured bytes, but the block holds 32"},
		{"EPB too short", then(func(f *ngFile) { f.block(6, make([]byte, 16)) }), false, 2, 144,
			"enhanced packet block has length 28, less than the minimum of 32"},
		{"option runs past the block", then(func(f *ngFile) { f.epb(0, 0, []byte("abcd"), 4, badOpt) }), false, 2, 144,
			"enhanced packet block: option 2 of 100 bytes runs 92 bytes past the end of its block"},
		{"flags of 2 bytes", then(func(f *ngFile) { f.epb(0, 0, nil, 0, ngOpt(f.bo, 2, []byte{1, 0})) }), false, 2, 144,
			"flags option has 2 bytes, want 4"},
		{"IDB too short", then(func(f *ngFile) { f.block(1, make([]byte, 4)) }), false, 2, 144,
			"interface description block has length 16, less than the minimum of 20"},
		{"if_tsresol too fine", then(func(f *ngFile) { f.idb(1, 0, ngOpt(f.bo, 9, []byte{20})) }), false, 2, 144,
			"interface description block 1: if_tsresol 10^-20 is finer than 10^-19"},
		{"if_tsresol 2^-64", then(func(f *ngFile) { f.idb(1, 0, ngOpt(f.bo, 9, []byte{0x80 | 64})) }), false, 2, 144,
			"if_tsresol 2^-64 is finer than 2^-63"},
		{"if_tsoffset of 4 bytes", then(func(f *ngFile) { f.idb(1, 0, ngOpt(f.bo, 14, []byte{1, 2, 3, 4})) }), false, 2, 144,
			"if_tsoffset option has 4 bytes, want 8"},
		{"SPB before any IDB", newNgFile(littleEndian).spb(1, []byte("a")).buf, false, 0, 28,
			"simple packet block before any interface description block"},
		{"bad second section", append(append([]byte(nil), full...), newNgFile(littleEndian).buf[:8]...), false, 3, 208,
			"truncated section header block: 12 bytes needed, 8 remain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := NewReader(bytes.NewReader(tc.in), "mem")
			if tc.open {
				if src != nil {
					t.Error("NewReader returned a source with its error")
				}
				wantFileError(t, err, tc.off, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pkts, err := readAll(t, src)
			wantFileError(t, err, tc.off, tc.msg)
			if len(pkts) != tc.packets {
				t.Errorf("%d packets before the error, want %d", len(pkts), tc.packets)
			}
			for i, p := range pkts {
				if want := string(bytes.Repeat([]byte{byte(i + 1)}, 10*(i+1))); p.Data != want {
					t.Errorf("packet %d is % x", i, p.Data)
				}
			}
			if _, err2 := src.Next(); err2 != err {
				t.Errorf("second Next after the error: %v, want %v", err2, err)
			}
		})
	}
}

// TestPcapngLargePacket reads a block larger than the read buffer.
func TestPcapngLargePacket(t *testing.T) {
	big := bytes.Repeat([]byte("fedcba9876543210"), 700<<10/16)
	f := newNgFile(littleEndian).idb(1, 0)
	f.epb(0, 1, []byte("x"), 1).epb(0, 2, big, uint32(len(big))).epb(0, 3, []byte("y"), 1)
	pkts, err := readBytes(t, f.buf)
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, pkts, []got{
		{Time: time.Unix(0, 1000), LinkType: 1, Data: "x", Length: 1},
		{Time: time.Unix(0, 2000), LinkType: 1, Data: string(big), Length: len(big)},
		{Time: time.Unix(0, 3000), LinkType: 1, Data: "y", Length: 1},
	})
}

// TestNoAllocPerPacket checks that Next does not allocate once reading is
// under way, for both formats, with and without epb_flags.
func TestNoAllocPerPacket(t *testing.T) {
	pc := newPcapFile(littleEndian, false, 65535, 1)
	ng := newNgFile(littleEndian).idb(1, 0, ngOpt(littleEndian, 2, []byte("eth0")))
	data := bytes.Repeat([]byte{0xaa}, 100)
	for i := range 5000 {
		pc.record(uint32(i), 0, data, 100)
		ng.epb(0, uint64(i), data, 100, ng.flags(uint32(i%3)))
	}
	for name, b := range map[string][]byte{"pcap": pc.buf, "pcapng": ng.buf} {
		src, err := NewReader(bytes.NewReader(b), name)
		if err != nil {
			t.Fatal(err)
		}
		var rerr error
		allocs := testing.AllocsPerRun(4000, func() {
			if _, err := src.Next(); err != nil && rerr == nil {
				rerr = err
			}
		})
		if rerr != nil && rerr != io.EOF {
			t.Fatal(rerr)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Next", name, allocs)
		}
	}
}
