package pipeline

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

func TestParseRing(t *testing.T) {
	for _, c := range []struct {
		opts []string
		want Ring
	}{
		{nil, Ring{}},
		{[]string{"filesize:1000"}, Ring{FileSize: 1_000_000}},
		{[]string{"duration:2.5"}, Ring{Duration: 2500 * time.Millisecond}},
		{[]string{"packets:10", "files:3"}, Ring{Packets: 10, Files: 3}},
		{[]string{"filesize:5", "filesize:7"}, Ring{FileSize: 7000}}, // the last wins
		{[]string{"files:2", "duration:60", "filesize:100"}, Ring{FileSize: 100_000, Duration: time.Minute, Files: 2}},
	} {
		got, err := ParseRing(c.opts)
		if err != nil || got != c.want {
			t.Errorf("ParseRing(%q) = %+v, %v; want %+v", c.opts, got, err, c.want)
		}
	}
	for _, opts := range [][]string{
		{"files:3"}, {"filesize:0"}, {"filesize:-1"}, {"filesize:1k"}, {"filesize:2000000000"},
		{"duration:0"}, {"duration:-3"}, {"duration:nan"}, {"duration:1m"}, {"packets:0"},
		{"packets:1.5"}, {"files:0", "packets:1"}, {"files:100001", "packets:1"},
		{"interval:10"}, {"filesize"}, {""},
	} {
		if r, err := ParseRing(opts); err == nil {
			t.Errorf("ParseRing(%q) = %+v, want an error", opts, r)
		} else if !strings.HasPrefix(err.Error(), "-b ") {
			t.Errorf("ParseRing(%q): error %q does not name -b", opts, err)
		}
	}
}

func TestRingName(t *testing.T) {
	at := time.Date(2026, 11, 26, 19, 10, 5, 0, time.Local)
	for _, c := range []struct {
		path string
		seq  int
		want string
	}{
		{"rig.pcapng", 1, "rig_00001_20261126191005.pcapng"},
		{"dir/run", 12, "dir/run_00012_20261126191005"},
		{"a.b/run", 3, "a.b/run_00003_20261126191005"},
		{"/tmp/.cap", 1, "/tmp/.cap_00001_20261126191005"},
		{"x.tar.pcap", 123456, "x.tar_123456_20261126191005.pcap"},
	} {
		if got := ringName(c.path, c.seq, at); got != c.want {
			t.Errorf("ringName(%q, %d) = %q, want %q", c.path, c.seq, got, c.want)
		}
	}
}

// ringPackets are n Ethernet-sized packets, 1 ms apart, whose data says
// their number.
func ringPackets(n, size int, step time.Duration) []capture.Packet {
	t0 := time.Unix(1_795_000_000, 0)
	pkts := make([]capture.Packet, n)
	for i := range pkts {
		d := make([]byte, size)
		copy(d, fmt.Sprintf("packet %05d", i))
		pkts[i] = capture.Packet{Time: t0.Add(time.Duration(i) * step), LinkType: capture.LinkEthernet, Data: d}
	}
	return pkts
}

// writeRing writes pkts through a Save with ring r in a new directory and
// returns the Save, closed.
func writeRing(t *testing.T, r Ring, pkts []capture.Packet) *Save {
	t.Helper()
	s, err := CreateSave(filepath.Join(t.TempDir(), "rig.pcapng"), "eth9", capture.LinkEthernet, 65535, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pkts {
		if err := s.WritePacket(&pkts[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(SaveStats{Captured: uint64(len(pkts))}); err != nil {
		t.Fatal(err)
	}
	return s
}

// blocks walks a pcapng file's blocks (little-endian, as we write) and
// returns their types and lengths; it checks each block's trailing
// length.
func blocks(t *testing.T, path string) (types []uint32, lens []int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(b); {
		if len(b)-off < 12 {
			t.Fatalf("%s: %d bytes after the last block at %d", path, len(b)-off, off)
		}
		typ, n := binary.LittleEndian.Uint32(b[off:]), int(binary.LittleEndian.Uint32(b[off+4:]))
		if n < 12 || n%4 != 0 || off+n > len(b) || int(binary.LittleEndian.Uint32(b[off+n-4:])) != n {
			t.Fatalf("%s: block at %d has a bad length %d", path, off, n)
		}
		types, lens = append(types, typ), append(lens, n)
		off += n
	}
	return types, lens
}

// checkComplete checks that path is a pcapng file on its own: a section
// header, one interface, packets and, last, a statistics block; it
// returns the packets' data as our reader reads them.
func checkComplete(t *testing.T, path string) [][]byte {
	t.Helper()
	types, _ := blocks(t, path)
	if len(types) < 3 || types[0] != 0x0A0D0D0A || types[1] != 1 || types[len(types)-1] != 5 {
		t.Fatalf("%s: blocks %x, want SHB, IDB, packets, ISB", path, types)
	}
	for _, typ := range types[2 : len(types)-1] {
		if typ != 6 {
			t.Fatalf("%s: blocks %x: a block of type %x among the packets", path, types, typ)
		}
	}
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var data [][]byte
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		if p.InterfaceName != "eth9" {
			t.Fatalf("%s: interface %q", path, p.InterfaceName)
		}
		data = append(data, slices.Clone(p.Data))
	}
	if len(data) != len(types)-3 {
		t.Fatalf("%s: %d packets read, %d packet blocks", path, len(data), len(types)-3)
	}
	return data
}

var ringFile = regexp.MustCompile(`^rig_(\d{5})_\d{14}\.pcapng$`)

// ringFiles lists the directory and checks every file is named as
// dumpcap names ring files, numbered from 1 without holes among those
// kept.
func ringFiles(t *testing.T, s *Save) []string {
	t.Helper()
	dir := filepath.Dir(s.path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := s.Files()
	var names []string
	for _, e := range ents {
		names = append(names, filepath.Join(dir, e.Name()))
		if !ringFile.MatchString(e.Name()) {
			t.Errorf("file %q is not named prefix_NNNNN_YYYYMMDDhhmmss.pcapng", e.Name())
		}
	}
	if !slices.Equal(names, kept) {
		t.Fatalf("the directory holds %q, Save says %q", names, kept)
	}
	return names
}

// packets:10 with files:3: 47 packets make five files of 10, 10, 10, 10
// and 7; the first two are deleted; the three kept open on their own and
// hold packets 20 to 46 in order.
func TestSaveRingPacketsAndFiles(t *testing.T) {
	pkts := ringPackets(47, 60, time.Millisecond)
	s := writeRing(t, Ring{Packets: 10, Files: 3}, pkts)
	names := ringFiles(t, s)
	if _, deleted := s.Files(); len(names) != 3 || deleted != 2 {
		t.Fatalf("%d files kept, %d deleted; want 3 and 2", len(names), deleted)
	}
	next := 20
	for i, name := range names {
		if m := ringFile.FindStringSubmatch(filepath.Base(name)); m[1] != fmt.Sprintf("%05d", i+3) {
			t.Errorf("file %d is %s, want number %d", i, name, i+3)
		}
		data := checkComplete(t, name)
		if want := []int{10, 10, 7}[i]; len(data) != want {
			t.Errorf("%s: %d packets, want %d", name, len(data), want)
		}
		for _, d := range data {
			if !slices.Equal(d, pkts[next].Data) {
				t.Fatalf("%s: packet %q, want %q", name, d[:12], pkts[next].Data[:12])
			}
			next++
		}
	}
	if next != len(pkts) {
		t.Fatalf("the kept files end at packet %d of %d", next, len(pkts))
	}
}

// filesize:2 (2000 bytes): a file goes on until it holds 2000 bytes, as
// dumpcap's do, so each but the last has reached 2000 bytes with its last
// packet and had not before it; no packet is lost between files.
func TestSaveRingFileSize(t *testing.T) {
	pkts := ringPackets(100, 100, time.Millisecond)
	r, err := ParseRing([]string{"filesize:2"})
	if err != nil {
		t.Fatal(err)
	}
	s := writeRing(t, r, pkts)
	names := ringFiles(t, s)
	total := 0
	for i, name := range names {
		total += len(checkComplete(t, name))
		_, lens := blocks(t, name)
		before := 0 // bytes before the statistics block
		for _, n := range lens[:len(lens)-1] {
			before += n
		}
		last := lens[len(lens)-2]
		if i < len(names)-1 && (before < 2000 || before-last >= 2000) {
			t.Errorf("%s: %d bytes of header and packets, %d before its last packet; want the 2000th byte in the last packet", name, before, before-last)
		}
		if i == len(names)-1 && before-last >= 2000 {
			t.Errorf("the last file %s had reached 2000 bytes before its last packet (%d)", name, before-last)
		}
	}
	if total != len(pkts) || len(names) < 5 {
		t.Fatalf("%d packets in %d files, want %d in at least 5", total, len(names), len(pkts))
	}
}

// duration:1: a packet a second or more after a file's first (by packet
// time) starts a new file: packets 300 ms apart go four, four and two.
func TestSaveRingDuration(t *testing.T) {
	pkts := ringPackets(10, 60, 300*time.Millisecond)
	s := writeRing(t, Ring{Duration: time.Second}, pkts)
	names := ringFiles(t, s)
	var got []int
	for _, name := range names {
		got = append(got, len(checkComplete(t, name)))
	}
	if !slices.Equal(got, []int{4, 4, 2}) {
		t.Fatalf("packets per file %v, want [4 4 2]", got)
	}
}

// Without -b, Save writes the one file named by -w; with a ring whose
// oldest file was removed by hand, the ring goes on.
func TestSaveOneFileAndMissingOldest(t *testing.T) {
	pkts := ringPackets(5, 60, time.Millisecond)
	s := writeRing(t, Ring{}, pkts)
	if kept, deleted := s.Files(); len(kept) != 1 || kept[0] != s.path || deleted != 0 {
		t.Fatalf("files %q, %d deleted; want only %s", kept, deleted, s.path)
	}
	if n := len(checkComplete(t, s.path)); n != 5 {
		t.Fatalf("%d packets, want 5", n)
	}

	dir := t.TempDir()
	s, err := CreateSave(filepath.Join(dir, "rig.pcapng"), "eth9", capture.LinkEthernet, 65535, Ring{Packets: 1, Files: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WritePacket(&pkts[0]); err != nil {
		t.Fatal(err)
	}
	os.Remove(s.Path())
	if err := s.WritePacket(&pkts[1]); err != nil {
		t.Fatalf("after the oldest file was removed by hand: %v", err)
	}
	if err := s.Close(SaveStats{}); err != nil {
		t.Fatal(err)
	}
	if kept, _ := s.Files(); len(kept) != 1 || len(checkComplete(t, kept[0])) != 1 {
		t.Fatalf("kept %q", kept)
	}
}

// A -w path that cannot be created gives an error naming it.
func TestSaveCreateError(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "rig.pcapng")
	for _, r := range []Ring{{}, {Packets: 3}} {
		if _, err := CreateSave(bad, "eth9", capture.LinkEthernet, 65535, r); err == nil || !strings.Contains(err.Error(), filepath.Dir(bad)) {
			t.Errorf("ring %+v: error %v, want one naming %s", r, err, filepath.Dir(bad))
		}
	}
}
