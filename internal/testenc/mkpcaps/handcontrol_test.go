package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/handcontrolenc"
)

// serialRead is one Enhanced Packet Block of a serial pcapng, read back.
type serialRead struct {
	ns    int64
	flags uint32
	data  []byte
}

// readSerialPcapng reads the serial tap's pcapng layout with a reader
// written here (not the capture package): a section header without
// options, one interface, then EPBs each with an epb_flags option.
func readSerialPcapng(b []byte) (linkType uint16, snaplen uint32, ifName string, tsresol byte, reads []serialRead, err error) {
	le := binary.LittleEndian
	err = pcapngBlocks(b, func(i, p int, typ uint32, body []byte) error {
		switch {
		case i == 0 && typ == ngSHB:
			if len(body) != 16 || le.Uint32(body) != 0x1A2B3C4D || le.Uint16(body[4:]) != 1 || le.Uint64(body[8:]) != ^uint64(0) {
				return fmt.Errorf("section header %x", body)
			}
		case i == 1 && typ == ngIDB:
			linkType, snaplen = le.Uint16(body), le.Uint32(body[4:])
			var err error
			ifName, tsresol, err = idbOptions(body)
			return err
		case i > 1 && typ == ngEPB:
			capLen, orig := int(le.Uint32(body[12:])), int(le.Uint32(body[16:]))
			pad := (capLen + 3) / 4 * 4
			if 20+pad > len(body) {
				return fmt.Errorf("packet block at %d: %x", p, body)
			}
			opts := body[20+pad:]
			if le.Uint32(body) != 0 || capLen != orig || len(opts) != 12 || le.Uint16(opts) != ngEpbFlags || le.Uint16(opts[2:]) != 4 || le.Uint32(opts[8:]) != 0 {
				return fmt.Errorf("packet block at %d: %x", p, body)
			}
			ts := int64(le.Uint32(body[4:]))<<32 | int64(le.Uint32(body[8:]))
			reads = append(reads, serialRead{ns: ts, flags: le.Uint32(opts[4:]), data: body[20 : 20+capLen]})
		default:
			return fmt.Errorf("block %d has type %#x", i, typ)
		}
		return nil
	})
	if err != nil {
		return 0, 0, "", 0, nil, err
	}
	return linkType, snaplen, ifName, tsresol, reads, nil
}

// checkHCTruth compares a truth file with the session and the bytes read
// back from the capture file.
func checkHCTruth(t *testing.T, g hcGen, raw []byte, streams [2][]byte, src, dst [2]string) {
	t.Helper()
	var tf genTruth
	if err := json.Unmarshal(raw, &tf); err != nil {
		t.Fatalf("%s: truth: %v", g.name, err)
	}
	if tf.File != g.name || tf.DecodeAs != g.decodeAs || len(tf.Streams) != 1 || tf.Streams[0].Transport != g.transport || len(tf.Streams[0].Directions) != 2 {
		t.Fatalf("%s: truth file shape", g.name)
	}
	for d, td := range tf.Streams[0].Directions {
		if td.Dir != d || td.Role != handcontrolenc.RoleName(d) || td.Src != src[d] || td.Dst != dst[d] || td.Bytes != int64(len(streams[d])) {
			t.Errorf("%s: direction %d: %s %s→%s %d bytes; read back %d bytes", g.name, d, td.Role, td.Src, td.Dst, td.Bytes, len(streams[d]))
		}
		want := g.session.Truth[d]
		if len(td.Records) != len(want) || len(td.Gaps) != 0 {
			t.Fatalf("%s %s: %d records, %d gaps", g.name, td.Role, len(td.Records), len(td.Gaps))
		}
		var off int64
		var skipped [][2]int64
		for i, r := range td.Records {
			if r.Offset != off || r.Type != want[i].Type || r.Length != want[i].Length {
				t.Fatalf("%s %s: record %d %s at %d+%d", g.name, td.Role, i, r.Type, r.Offset, r.Length)
			}
			off += r.Length
			if r.Type == handcontrolenc.TypeSkipped {
				skipped = append(skipped, [2]int64{r.Offset, off})
				continue
			}
			if r.Wire != hex.EncodeToString(streams[d][r.Offset:off]) || r.Match != "exact" || (r.Warning != "yes" && r.Warning != "no") {
				t.Errorf("%s %s: record %d: wire %s, bytes %x, match %q, warning %q", g.name, td.Role, i, r.Wire, streams[d][r.Offset:off], r.Match, r.Warning)
			}
			var fields map[string]any
			if err := json.Unmarshal(r.Fields, &fields); err != nil || fields["code"] != float64(streams[d][r.Offset+8]) ||
				fields["crc"] != float64(streams[d][off-1]) || fields["crc_ok"] != handcontrolenc.CRCOK(streams[d][r.Offset:off]) {
				t.Errorf("%s %s: record %d fields %s", g.name, td.Role, i, r.Fields)
			}
		}
		if off != int64(len(streams[d])) || fmt.Sprint(skipped) != fmt.Sprint(td.Skipped) && len(skipped)+len(td.Skipped) > 0 {
			t.Errorf("%s %s: records end at %d of %d; skipped %v, listed %v", g.name, td.Role, off, len(streams[d]), skipped, td.Skipped)
		}
	}
}

// checkPieces checks the reads or segments of a session as read back from
// the file (direction, capture time, bytes in order): each write's last
// piece is captured at the write's time and ends there, no piece spans
// two writes, and frames are cut everywhere the generator means to.
func checkPieces(t *testing.T, name string, s *handcontrolenc.Session, pieces []hcPiece) {
	t.Helper()
	type key struct {
		dir int
		end int64
	}
	lastAt := map[key]time.Duration{}
	for _, p := range pieces {
		lastAt[key{p.dir, p.end}] = p.at
	}
	var wstart [2]map[int64]bool
	for d := range 2 {
		wstart[d] = map[int64]bool{}
	}
	for _, w := range s.Writes {
		if at, ok := lastAt[key{w.Dir, w.End}]; !ok || at != w.At {
			t.Errorf("%s: %s write ending at offset %d at %v: its last piece is at %v", name, handcontrolenc.RoleName(w.Dir), w.End, w.At, at)
		}
		wstart[w.Dir][w.Start] = true
	}
	// Where frames are cut.
	cuts := map[string]int{}
	for _, p := range pieces {
		for _, m := range s.Truth[p.dir] {
			if p.end > m.Offset && p.end < m.End() {
				switch rel := p.end - m.Offset; {
				case m.IsEvent():
					cuts["skipped"]++
				case rel < 8:
					cuts["sfd"]++
				case rel == 10:
					cuts["size"]++
				case rel == handcontrolenc.HeaderLen:
					cuts["header"]++
				case p.end == m.End()-1:
					cuts["crc"]++
				}
			}
			if !m.IsEvent() && p.start < m.Offset && p.end > m.Offset && p.start >= m.Offset-40 {
				cuts["across"]++ // a piece holds the end of what comes before a frame and the frame's start
			}
		}
	}
	for _, k := range []string{"sfd", "size", "header", "crc"} {
		if cuts[k] < 2 {
			t.Errorf("%s: frames cut at %s %d times, want at least 2 (%v)", name, k, cuts[k], cuts)
		}
	}
	if cuts["across"] < 1 {
		t.Errorf("%s: no piece spans two records: %v", name, cuts)
	}
	if name == "handcontrol_serial.pcapng" && cuts["skipped"] < 1 {
		t.Errorf("%s: the garbage is not cut: %v", name, cuts)
	}
}

// TestHandcontrolSerialFile reads the serial sample back with the reader
// above, checks the serial tap's layout, rebuilds each direction from the
// reads and compares it with the session and the truth file, and checks
// that dissect's own pcapng writer would write the same bytes for these
// reads (the sample is what `dissect serial -w` saves).
func TestHandcontrolSerialFile(t *testing.T) {
	byName := generatedByName(t)
	gens, err := handcontrolSamples()
	if err != nil {
		t.Fatal(err)
	}
	g := gens[0]
	if g.name != "handcontrol_serial.pcapng" || g.decodeAs != "serial,handcontrol" {
		t.Fatalf("first sample %s, %s", g.name, g.decodeAs)
	}
	lt, snap, ifName, tsresol, reads, err := readSerialPcapng(byName[g.name])
	if err != nil {
		t.Fatal(err)
	}
	if lt != 147 || snap != 4096 || ifName != "/dev/ttyUSB0" || tsresol != 9 || len(reads) != len(g.pieces) {
		t.Fatalf("link type %d, snaplen %d, if_name %q, if_tsresol %d, %d reads (want %d)", lt, snap, ifName, tsresol, len(reads), len(g.pieces))
	}
	var streams [2][]byte
	var pieces []hcPiece
	t0 := base.UnixNano()
	for i, r := range reads {
		if i > 0 && r.ns <= reads[i-1].ns {
			t.Errorf("read %d does not go forward in time", i)
		}
		d := map[uint32]int{2: handcontrolenc.Host, 1: handcontrolenc.Device}[r.flags]
		if r.flags != 1 && r.flags != 2 || len(r.data) == 0 {
			t.Fatalf("read %d: flags %d, %d bytes", i, r.flags, len(r.data))
		}
		pieces = append(pieces, hcPiece{dir: d, at: time.Duration(r.ns - t0), start: int64(len(streams[d])), end: int64(len(streams[d]) + len(r.data))})
		streams[d] = append(streams[d], r.data...)
	}
	for d := range 2 {
		if !bytes.Equal(streams[d], g.session.Stream[d]) {
			t.Errorf("%s bytes differ from the session's", handcontrolenc.RoleName(d))
		}
	}
	checkPieces(t, g.name, g.session, pieces)
	checkHCTruth(t, g, byName["handcontrol_serial.truth.json"], streams, [2]string{"host", "/dev/ttyUSB0"}, [2]string{"/dev/ttyUSB0", "host"})

	// The same reads through capture.PcapngWriter, as dissect serial -w
	// writes them.
	var buf bytes.Buffer
	pw, err := capture.NewPcapngWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pw.AddInterface(SerialLink, capture.LinkUser0, 4096); err != nil {
		t.Fatal(err)
	}
	for _, p := range pieces {
		dir := capture.DirOutbound
		if p.dir == handcontrolenc.Device {
			dir = capture.DirInbound
		}
		if err := pw.WritePacket(pktbuild.Serial(SerialLink, dir, streams[p.dir][p.start:p.end], base.Add(p.at))); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), byName[g.name]) {
		t.Error("capture.PcapngWriter writes other bytes for the same reads")
	}
}

// TestHandcontrolBridgeFile reads the TCP sample back with the Ethernet,
// IPv4 and TCP reader of robotics_test.go (checksums included),
// reassembles each direction by sequence number and checks it against the
// session and the truth file.
func TestHandcontrolBridgeFile(t *testing.T) {
	byName := generatedByName(t)
	gens, err := handcontrolSamples()
	if err != nil {
		t.Fatal(err)
	}
	g := gens[1]
	if g.name != "handcontrol_tcp_bridge.pcap" || g.decodeAs != "tcp.port==5000,handcontrol" {
		t.Fatalf("second sample %s, %s", g.name, g.decodeAs)
	}
	lt, frames, err := readPcap(byName[g.name])
	if err != nil || lt != 1 || len(frames) != len(g.frames) {
		t.Fatalf("%v, link type %d, %d frames", err, lt, len(frames))
	}
	var streams [2][]byte
	var pieces []hcPiece
	var isn [2]uint32
	var addr [2]string
	var fin [2]bool
	synFrom := -1
	t0 := base.UnixNano()
	for i, f := range frames {
		if i > 0 && f.ns <= frames[i-1].ns {
			t.Errorf("frame %d does not go forward in time", i)
		}
		p, err := parseEthIPv4(f.data)
		if err != nil || p.proto != 6 {
			t.Fatalf("frame %d: %v, protocol %d", i, err, p.proto)
		}
		d := handcontrolenc.Host
		if p.src.Port() == BridgePort {
			d = handcontrolenc.Device
		} else if p.dst.Port() != BridgePort {
			t.Fatalf("frame %d: %v → %v", i, p.src, p.dst)
		}
		addr[d] = p.src.String()
		switch {
		case p.flags&0x02 != 0:
			if synFrom < 0 {
				synFrom = d
			}
			isn[d] = p.seq + 1
		case len(p.payload) > 0:
			if off := p.seq - isn[d]; int(off) != len(streams[d]) {
				t.Fatalf("frame %d: %s data at %d, have %d bytes (no loss or reordering expected)", i, handcontrolenc.RoleName(d), off, len(streams[d]))
			}
			pieces = append(pieces, hcPiece{dir: d, at: time.Duration(f.ns - t0), start: int64(len(streams[d])), end: int64(len(streams[d]) + len(p.payload))})
			streams[d] = append(streams[d], p.payload...)
		}
		if p.flags&0x01 != 0 {
			fin[d] = true
		}
	}
	if synFrom != handcontrolenc.Host || !fin[0] || !fin[1] {
		t.Errorf("first SYN from %d, FIN %v", synFrom, fin)
	}
	for d := range 2 {
		if !bytes.Equal(streams[d], g.session.Stream[d]) {
			t.Errorf("%s bytes differ from the session's", handcontrolenc.RoleName(d))
		}
	}
	if !strings.HasSuffix(addr[1], ":5000") {
		t.Errorf("bridge address %s", addr[1])
	}
	checkPieces(t, g.name, g.session, pieces)
	checkHCTruth(t, g, byName["handcontrol_tcp_bridge.truth.json"], streams, addr, [2]string{addr[1], addr[0]})
}
