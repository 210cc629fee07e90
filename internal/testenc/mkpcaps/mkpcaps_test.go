package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// committed is the repository's pcaps/ directory.
const committed = "../../../pcaps"

// TestCommittedUpToDate regenerates every file into a temporary directory
// and compares it with the committed copy, so the samples cannot drift from
// the generator.
func TestCommittedUpToDate(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := write(dir, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(committed, f.name))
		if err != nil {
			t.Errorf("%s: %v (run: %s)", f.name, err, Generator)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output (run: %s)", f.name, Generator)
		}
		if len(got) > 100<<10 {
			t.Errorf("%s is %d bytes, over 100 KiB", f.name, len(got))
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	// 6 Deltarobot, 3 Neptune, 1 Roboid and 2 HandControl captures, each
	// with its truth.
	if len(a) != len(b) || len(a) != 24 {
		t.Fatalf("%d and %d files, want 24", len(a), len(b))
	}
	for i := range a {
		if a[i].name != b[i].name || !bytes.Equal(a[i].data, b[i].data) {
			t.Errorf("%s: two runs differ", a[i].name)
		}
	}
}

// rawFrame is a frame read back from a file.
type rawFrame struct {
	ns   int64
	data []byte
}

// readPcap reads a classic little-endian microsecond pcap file.
func readPcap(b []byte) (uint32, []rawFrame, error) {
	le := binary.LittleEndian
	if len(b) < 24 || le.Uint32(b) != 0xa1b2c3d4 || le.Uint16(b[4:]) != 2 || le.Uint16(b[6:]) != 4 {
		return 0, nil, fmt.Errorf("bad pcap header")
	}
	lt := le.Uint32(b[20:])
	var out []rawFrame
	for p := 24; p < len(b); {
		if len(b)-p < 16 {
			return 0, nil, fmt.Errorf("short record header at %d", p)
		}
		sec, us, incl, orig := le.Uint32(b[p:]), le.Uint32(b[p+4:]), int(le.Uint32(b[p+8:])), int(le.Uint32(b[p+12:]))
		if us >= 1e6 || incl != orig || incl > len(b)-p-16 {
			return 0, nil, fmt.Errorf("bad record at %d", p)
		}
		out = append(out, rawFrame{ns: int64(sec)*1e9 + int64(us)*1e3, data: b[p+16 : p+16+incl]})
		p += 16 + incl
	}
	return lt, out, nil
}

// generatedByName generates every file and returns their bytes by name.
func generatedByName(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	for _, f := range files {
		byName[f.name] = f.data
	}
	return byName
}

// pcapngBlocks walks the blocks of a little-endian pcapng file, checking
// each block's framing (total length at least 12, a multiple of 4, inside
// the file and repeated at the block's end), and calls visit with the
// block's index, its offset in b, its type and its body.
func pcapngBlocks(b []byte, visit func(i, p int, typ uint32, body []byte) error) error {
	le := binary.LittleEndian
	for i, p := 0, 0; p < len(b); i++ {
		if len(b)-p < 12 {
			return fmt.Errorf("short block at %d", p)
		}
		typ, n := le.Uint32(b[p:]), int(le.Uint32(b[p+4:]))
		if n < 12 || n%4 != 0 || n > len(b)-p || int(le.Uint32(b[p+n-4:])) != n {
			return fmt.Errorf("bad block length at %d", p)
		}
		if err := visit(i, p, typ, b[p+8:p+n-4]); err != nil {
			return err
		}
		p += n
	}
	return nil
}

// idbOptions reads if_name and if_tsresol (6, the pcapng default, when
// absent) from the body of an Interface Description Block. The options
// must fit in the body and end with opt_endofopt.
func idbOptions(body []byte) (ifName string, tsresol byte, err error) {
	le := binary.LittleEndian
	tsresol = 6
	for o := 8; ; {
		if o+4 > len(body) {
			return "", 0, fmt.Errorf("interface options run out")
		}
		code, l := le.Uint16(body[o:]), int(le.Uint16(body[o+2:]))
		if code == ngOptEnd {
			return ifName, tsresol, nil
		}
		if l > len(body)-o-4 {
			return "", 0, fmt.Errorf("interface option %d overruns the block", code)
		}
		v := body[o+4 : o+4+l]
		switch code {
		case ngIfName:
			ifName = string(v)
		case ngIfTsresol:
			if l != 1 {
				return "", 0, fmt.Errorf("if_tsresol of %d bytes", l)
			}
			tsresol = v[0]
		}
		o += 4 + (l+3)/4*4
	}
}

// readPcapng reads the single-section, single-interface files mkpcaps writes.
func readPcapng(b []byte) (uint32, string, []rawFrame, error) {
	le := binary.LittleEndian
	var lt uint32
	var ifName string
	var out []rawFrame
	seenIDB := false
	err := pcapngBlocks(b, func(_, p int, typ uint32, body []byte) error {
		switch typ {
		case ngSHB:
			if p != 0 || le.Uint32(body) != 0x1A2B3C4D || le.Uint16(body[4:]) != 1 {
				return fmt.Errorf("bad section header")
			}
		case ngIDB:
			lt = uint32(le.Uint16(body))
			name, tsresol, err := idbOptions(body)
			if err != nil {
				return err
			}
			if tsresol != 9 {
				return fmt.Errorf("if_tsresol %d, want 9", tsresol)
			}
			ifName, seenIDB = name, true
		case ngEPB:
			if !seenIDB || le.Uint32(body) != 0 {
				return fmt.Errorf("packet before its interface")
			}
			ts := int64(le.Uint32(body[4:]))<<32 | int64(le.Uint32(body[8:]))
			capLen, orig := int(le.Uint32(body[12:])), int(le.Uint32(body[16:]))
			if capLen != orig || 20+capLen > len(body) {
				return fmt.Errorf("bad packet block at %d", p)
			}
			out = append(out, rawFrame{ns: ts, data: body[20 : 20+capLen]})
		default:
			return fmt.Errorf("unexpected block type %#x", typ)
		}
		return nil
	})
	if err != nil {
		return 0, "", nil, err
	}
	return lt, ifName, out, nil
}

// sum16 is the Internet checksum's one's complement sum.
func sum16(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// tcpSeg is a TCP segment read back from a frame.
type tcpSeg struct {
	src, dst netip.AddrPort
	seq      uint32
	flags    byte
	payload  []byte
}

// parseFrame finds the TCP segment in a frame, checking the framing and
// the IPv4 header and TCP checksums. vlan is the expected 802.1Q id (0 for
// none).
func parseFrame(lt uint32, b []byte, vlan uint16) (tcpSeg, error) {
	be := binary.BigEndian
	var etype uint16
	switch lt {
	case 1: // Ethernet
		if len(b) < 14 {
			return tcpSeg{}, fmt.Errorf("short ethernet")
		}
		etype, b = be.Uint16(b[12:]), b[14:]
		if vlan != 0 {
			if etype != 0x8100 || len(b) < 4 || be.Uint16(b)&0x0fff != vlan {
				return tcpSeg{}, fmt.Errorf("no 802.1Q tag %d", vlan)
			}
			etype, b = be.Uint16(b[2:]), b[4:]
		}
	case 276: // Linux SLL2
		if len(b) < 20 {
			return tcpSeg{}, fmt.Errorf("short sll2")
		}
		etype, b = be.Uint16(b), b[20:]
	default:
		return tcpSeg{}, fmt.Errorf("link type %d", lt)
	}
	var src, dst netip.Addr
	var pseudo uint32
	switch etype {
	case 0x0800:
		ihl := int(b[0]&0x0f) * 4
		if b[0]>>4 != 4 || ihl < 20 || len(b) < ihl || int(be.Uint16(b[2:])) != len(b) || b[9] != 6 {
			return tcpSeg{}, fmt.Errorf("bad IPv4 header")
		}
		if fold(sum16(0, b[:ihl])) != 0xffff {
			return tcpSeg{}, fmt.Errorf("bad IPv4 header checksum")
		}
		src, dst = netip.AddrFrom4([4]byte(b[12:16])), netip.AddrFrom4([4]byte(b[16:20]))
		pseudo = sum16(sum16(0, b[12:20]), []byte{0, 6, byte((len(b) - ihl) >> 8), byte(len(b) - ihl)})
		b = b[ihl:]
	case 0x86dd:
		if len(b) < 40 || b[0]>>4 != 6 || int(be.Uint16(b[4:]))+40 != len(b) || b[6] != 6 {
			return tcpSeg{}, fmt.Errorf("bad IPv6 header")
		}
		src, dst = netip.AddrFrom16([16]byte(b[8:24])), netip.AddrFrom16([16]byte(b[24:40]))
		l := len(b) - 40
		pseudo = sum16(sum16(0, b[8:40]), []byte{0, 0, byte(l >> 8), byte(l), 0, 0, 0, 6})
		b = b[40:]
	default:
		return tcpSeg{}, fmt.Errorf("ethertype %#x", etype)
	}
	if len(b) < 20 || int(b[12]>>4)*4 < 20 || int(b[12]>>4)*4 > len(b) {
		return tcpSeg{}, fmt.Errorf("bad TCP header")
	}
	if fold(sum16(pseudo, b)) != 0xffff {
		return tcpSeg{}, fmt.Errorf("bad TCP checksum")
	}
	return tcpSeg{
		src:     netip.AddrPortFrom(src, be.Uint16(b)),
		dst:     netip.AddrPortFrom(dst, be.Uint16(b[2:])),
		seq:     be.Uint32(b[4:]),
		flags:   b[13],
		payload: b[int(b[12]>>4)*4:],
	}, nil
}

// truthFile is the part of a .truth.json file checked here.
type truthFile struct {
	File    string `json:"file"`
	Streams []struct {
		Directions []struct {
			Dir     int               `json:"dir"`
			Role    string            `json:"role"`
			Src     string            `json:"src"`
			Dst     string            `json:"dst"`
			Bytes   int               `json:"bytes"`
			Gaps    [][2]int64        `json:"gaps"`
			Skipped [][2]int64        `json:"skipped"`
			Records []json.RawMessage `json:"records"`
		} `json:"directions"`
	} `json:"streams"`
}

// TestFilesCarryTheTruth reads every generated file back with a reader
// written here (not the capture package), checks the frames' checksums,
// reassembles each direction by sequence number and compares the bytes
// with the session's, and checks that the bytes never captured are exactly
// the truth's gaps.
func TestFilesCarryTheTruth(t *testing.T) {
	caps, err := samples()
	if err != nil {
		t.Fatal(err)
	}
	files, err := render(caps)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	for _, f := range files {
		byName[f.name] = f.data
	}
	for _, cf := range caps {
		sm := cf.sm
		var lt uint32
		var frames []rawFrame
		var err error
		if cf.ng {
			var ifName string
			lt, ifName, frames, err = readPcapng(byName[sm.name])
			if err == nil && ifName != cf.ifName {
				err = fmt.Errorf("if_name %q", ifName)
			}
		} else {
			lt, frames, err = readPcap(byName[sm.name])
		}
		if err != nil {
			t.Errorf("%s: %v", sm.name, err)
			continue
		}
		if lt != uint32(cf.encap.Type) || len(frames) != len(sm.pkts) {
			t.Errorf("%s: link type %d, %d frames; want %d, %d", sm.name, lt, len(frames), cf.encap.Type, len(sm.pkts))
			continue
		}
		var vlan uint16
		if len(cf.encap.VLANs) > 0 {
			vlan = cf.encap.VLANs[0]
		}
		// Reassemble by sequence number; the base is the SYN's ISN + 1,
		// or the first data segment's sequence number without a SYN.
		type dirState struct {
			base    uint32
			known   bool
			data    map[int64]byte
			src     netip.AddrPort
			fin     bool
			synSeen bool
			maxEnd  int64
		}
		retrans, reorder := 0, 0
		dirs := map[netip.AddrPort]*dirState{}
		var order []netip.AddrPort
		var lastNS int64
		for i, f := range frames {
			if f.ns < lastNS {
				t.Errorf("%s: frame %d goes back in time", sm.name, i)
			}
			lastNS = f.ns
			s, err := parseFrame(lt, f.data, vlan)
			if err != nil {
				t.Errorf("%s: frame %d: %v", sm.name, i, err)
				continue
			}
			d := dirs[s.src]
			if d == nil {
				d = &dirState{data: map[int64]byte{}, src: s.src}
				dirs[s.src] = d
				order = append(order, s.src)
			}
			if s.flags&0x02 != 0 { // SYN
				d.base, d.known, d.synSeen = s.seq+1, true, true
				continue
			}
			if len(s.payload) > 0 && !d.known {
				d.base, d.known = s.seq, true
			}
			if s.flags&0x01 != 0 {
				d.fin = true
			}
			start := int64(s.seq - d.base)
			if len(s.payload) > 0 && start < d.maxEnd {
				if _, seen := d.data[start]; seen {
					retrans++
				} else {
					reorder++
				}
			}
			if len(s.payload) > 0 {
				d.maxEnd = max(d.maxEnd, start+int64(len(s.payload)))
			}
			for k, c := range s.payload {
				off := start + int64(k)
				if old, dup := d.data[off]; dup && old != c {
					t.Errorf("%s: byte %d sent twice with different values", sm.name, off)
				}
				d.data[off] = c
			}
		}
		if loss := sm.name == "deltarobot_loss.pcap"; loss != (retrans == 1 && reorder == 1) || !loss && retrans+reorder != 0 {
			t.Errorf("%s: %d retransmitted and %d out-of-order segments", sm.name, retrans, reorder)
		}
		tf := truthFile{}
		if err := json.Unmarshal(byName[strings.TrimSuffix(strings.TrimSuffix(sm.name, ".pcapng"), ".pcap")+".truth.json"], &tf); err != nil {
			t.Errorf("%s: truth: %v", sm.name, err)
			continue
		}
		if tf.File != sm.name || len(tf.Streams) != 1 || len(tf.Streams[0].Directions) != 2 || len(order) != 2 {
			t.Errorf("%s: truth file shape, or %d senders", sm.name, len(order))
			continue
		}
		for k, td := range tf.Streams[0].Directions {
			role := deltaenc.Client
			if td.Role == "server" {
				role = deltaenc.Server
			}
			d := dirs[order[k]]
			if td.Dir != k || td.Src != order[k].String() || d == nil || !d.fin {
				t.Errorf("%s: direction %d is %s from %s, first sender %d is %v (FIN %v)", sm.name, k, td.Role, td.Src, k, order[k], d != nil && d.fin)
				continue
			}
			want := sm.streams[role]
			if td.Bytes != len(want) || len(td.Records) != len(sm.truth[role]) {
				t.Errorf("%s %s: %d bytes, %d records in the truth file", sm.name, td.Role, td.Bytes, len(td.Records))
			}
			inGap := func(off int64) bool {
				for _, g := range td.Gaps {
					if off >= g[0] && off < g[1] {
						return true
					}
				}
				return false
			}
			bad := 0
			for off := range int64(len(want)) {
				c, ok := d.data[off]
				switch {
				case ok == inGap(off):
					bad++
					if bad < 4 {
						t.Errorf("%s %s: byte %d captured %v, in a gap %v", sm.name, td.Role, off, ok, inGap(off))
					}
				case ok && c != want[off]:
					bad++
					if bad < 4 {
						t.Errorf("%s %s: byte %d is %#x, want %#x", sm.name, td.Role, off, c, want[off])
					}
				}
			}
			if len(d.data) > len(want) {
				t.Errorf("%s %s: %d bytes captured beyond the session's %d", sm.name, td.Role, len(d.data), len(want))
			}
			if mid := strings.Contains(sm.name, "midstream"); d.synSeen == mid {
				t.Errorf("%s %s: SYN seen %v", sm.name, td.Role, d.synSeen)
			}
		}
	}
}

// TestTruthShapes pins what each sample must show, from the design of the
// scenarios (not from the decoder).
func TestTruthShapes(t *testing.T) {
	caps, err := samples()
	if err != nil {
		t.Fatal(err)
	}
	count := func(ms []deltaenc.Message, typ string) int {
		n := 0
		for _, m := range ms {
			if m.Type == typ {
				n++
			}
		}
		return n
	}
	for _, cf := range caps {
		sm := cf.sm
		sv, cl := sm.truth[deltaenc.Server], sm.truth[deltaenc.Client]
		gaps, skips := count(sv, deltaenc.TypeGap), count(sv, deltaenc.TypeSkipped)
		switch sm.name {
		case "deltarobot_loss.pcap":
			if gaps != 1 || skips != 2 {
				t.Errorf("%s: %d gaps, %d skipped runs; want 1 gap with a cut message before and a resync after", sm.name, gaps, skips)
			}
		case "deltarobot_midstream.pcap":
			if sv[0].Type != deltaenc.TypeSkipped || sv[0].Offset != 0 || sm.dir0 != deltaenc.Server {
				t.Errorf("%s: server starts with %s, dir 0 is the %s", sm.name, sv[0].String(), deltaenc.RoleName(sm.dir0))
			}
		case "deltarobot_garbage.pcap":
			if skips != 1 || count(sv, deltaenc.TypeUnknown) != 4 || count(cl, deltaenc.TypeUnknown) != 1 || cl[len(cl)-1].Type != deltaenc.TypeSkipped {
				t.Errorf("%s: server %d skipped, %d unknown; client ends with %s", sm.name, skips, count(sv, deltaenc.TypeUnknown), cl[len(cl)-1].Type)
			}
		default:
			if gaps+skips+count(cl, deltaenc.TypeSkipped) != 0 || sv[0].Type != deltaenc.TypeMagic || sm.dir0 != deltaenc.Client {
				t.Errorf("%s: not a clean conversation", sm.name)
			}
			for _, m := range cl {
				if m.Type == deltaenc.TypePong && m.RTT != truth.Yes {
					t.Errorf("%s: pong at %d expects no rtt_ms", sm.name, m.Offset)
				}
			}
		}
	}
}
