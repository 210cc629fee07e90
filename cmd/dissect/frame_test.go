package main

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/longtest"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/vrpnlogenc"
)

// The tests of frame numbers (frame, frame.number) and of tshark's stream
// numbers (tcp.stream, udp.stream) check the CLI against tshark. From
// tshark's fields of every packet (its number, streams, sender, TCP
// sequence number and length, UDP length, a serial read's length and
// direction) the oracle works out, apart from dissect, which packet
// completed each record: the bytes of each direction are laid out from
// where the direction's data starts (after its SYN, or where its first
// segment starts when the SYN was not captured), each byte taking the
// number of the first packet that carried it; a record [offset,
// offset+length) is complete when its bytes and every byte before them
// back to the last byte never captured have come (reassembly delivers
// bytes in order, so a record behind a hole that a later segment fills is
// completed by that segment). A UDP record is completed by the datagram
// that holds its last byte, a serial record by the read that does.

// tsharkPacket is one packet as tshark reads it.
type tsharkPacket struct {
	frame     int
	transport string // tcp, udp, serial, or "" (nothing dissect decodes)
	stream    int    // tcp.stream or udp.stream
	src       string // as dissect writes src: ADDRESS:PORT, or host/link for serial
	seq       uint32 // tcp.seq_raw
	n         int    // payload bytes: tcp.len, udp.length-8, a read's captured length
	syn, ack  bool
	ackSeq    uint32
}

// tsharkPackets reads path with tshark.
func tsharkPackets(t *testing.T, path string) []tsharkPacket {
	t.Helper()
	fields := []string{"frame.number", "tcp.stream", "udp.stream", "ip.src", "ipv6.src", "tcp.srcport", "udp.srcport",
		"tcp.seq_raw", "tcp.len", "tcp.flags.syn", "tcp.flags.ack", "tcp.ack_raw", "udp.length",
		"frame.cap_len", "frame.packet_flags_direction", "frame.interface_name", "frame.encap_type"}
	args := []string{"-n", "-r", path, "-T", "fields", "-E", "occurrence=l", "-E", "separator=/t"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", path, err)
	}
	var pkts []tsharkPacket
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != len(fields) {
			t.Fatalf("tshark line %q: %d fields", line, len(f))
		}
		num := func(s string) int {
			n, _ := strconv.ParseInt(s, 0, 64)
			return int(n)
		}
		p := tsharkPacket{frame: num(f[0])}
		addr := f[3]
		if addr == "" {
			addr = f[4]
		}
		switch {
		case f[1] != "":
			p.transport, p.stream, p.n = "tcp", num(f[1]), num(f[8])
			p.src = netip.AddrPortFrom(netip.MustParseAddr(addr), uint16(num(f[5]))).String()
			p.seq, p.syn, p.ack, p.ackSeq = uint32(num(f[7])), f[9] == "1" || f[9] == "True", f[10] == "1" || f[10] == "True", uint32(num(f[11]))
		case f[2] != "":
			p.transport, p.stream, p.n = "udp", num(f[2]), num(f[12])-8
			p.src = netip.AddrPortFrom(netip.MustParseAddr(addr), uint16(num(f[6]))).String()
		case f[16] == "45": // WTAP_ENCAP_USER0 (LINKTYPE_USER0): a serial read
			p.transport, p.n = "serial", num(f[13])
			p.src = "host"
			if num(f[14])&3 == 1 { // inbound: the device sent it
				p.src = f[15]
			}
		}
		pkts = append(pkts, p)
	}
	return pkts
}

// frameDir is one direction's oracle: the number of the packet that
// completes a record ending at each offset.
type frameDir struct {
	first  []int // first[b]: the first packet that carried byte b (0: none)
	done   []int // done[b]: the packet after which bytes up to b were all delivered
	frames []int // UDP: the datagram of each byte
}

type dirID struct {
	transport string
	stream    int
	src       string
}

// frameOracle lays out every direction's bytes from tshark's packets.
func frameOracle(pkts []tsharkPacket) map[dirID]*frameDir {
	dirs := map[dirID]*frameDir{}
	get := func(k dirID) *frameDir {
		if dirs[k] == nil {
			dirs[k] = &frameDir{}
		}
		return dirs[k]
	}
	// Where each TCP direction's data starts: after its SYN, else where
	// the peer's SYN-ACK says, else its first segment with data.
	base := map[dirID]uint32{}
	peer := map[dirID]dirID{}
	for _, p := range pkts {
		if p.transport != "tcp" {
			continue
		}
		k := dirID{"tcp", p.stream, p.src}
		if p.syn {
			if _, ok := base[k]; !ok {
				base[k] = p.seq + 1
			}
			if p.ack {
				for _, q := range pkts { // the peer: the other sender of the stream
					if q.transport == "tcp" && q.stream == p.stream && q.src != p.src {
						peer[k] = dirID{"tcp", p.stream, q.src}
						break
					}
				}
				if o, ok := peer[k]; ok {
					if _, ok := base[o]; !ok {
						base[o] = p.ackSeq
					}
				}
			}
		}
		if _, ok := base[k]; !ok && p.n > 0 {
			base[k] = p.seq
		}
	}
	for _, p := range pkts {
		k := dirID{p.transport, p.stream, p.src}
		switch p.transport {
		case "tcp":
			if p.n == 0 {
				continue
			}
			d := get(k)
			s := int64(int32(p.seq + boolU32(p.syn) - base[k]))
			if s < 0 {
				continue
			}
			for b := s; b < s+int64(p.n); b++ {
				for int64(len(d.first)) <= b {
					d.first = append(d.first, 0)
				}
				if d.first[b] == 0 {
					d.first[b] = p.frame
				}
			}
		case "udp", "serial":
			if p.transport == "serial" {
				k.stream = 0
			}
			d := get(k)
			for range p.n {
				d.frames = append(d.frames, p.frame)
			}
		}
	}
	for _, d := range dirs {
		d.done = make([]int, len(d.first))
		for b, f := range d.first {
			switch {
			case f == 0:
			case b > 0 && d.first[b-1] != 0:
				d.done[b] = max(f, d.done[b-1])
			default:
				d.done[b] = f
			}
		}
	}
	return dirs
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// complete returns the packet that completed the record [off, off+n) of
// the direction, or 0 when the oracle cannot say (a gap, bytes tshark
// does not show).
func (d *frameDir) complete(off, n int64) int {
	e := off + n - 1
	if d.frames != nil {
		if e < int64(len(d.frames)) {
			return d.frames[e]
		}
		return 0
	}
	if e >= int64(len(d.done)) {
		return 0
	}
	return d.done[e]
}

// dissectRecord is one record as -T fields writes the names the tests use.
type dissectRecord struct {
	frame, tcpStream, udpStream, stream string
	transport, src, typ                 string
	offset, length                      int64
}

var frameFieldNames = []string{"frame.number", "tcp.stream", "udp.stream", "stream", "transport", "src", "type", "offset", "length"}

// dissectRecords runs the CLI with -T fields over path, with extra
// arguments (flags, a filter).
func dissectRecords(t *testing.T, path string, extra ...string) []dissectRecord {
	t.Helper()
	args := []string{"--no-summary", "-T", "fields"}
	for _, f := range frameFieldNames {
		args = append(args, "-e", f)
	}
	out, errOut, code := cli(t, append(append(args, extra...), path)...)
	if code != 0 {
		t.Fatalf("dissect %s %q: exit %d: %s", path, extra, code, errOut)
	}
	var recs []dissectRecord
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != len(frameFieldNames) {
			t.Fatalf("line %q: %d fields", line, len(f))
		}
		off, _ := strconv.ParseInt(f[7], 10, 64)
		n, _ := strconv.ParseInt(f[8], 10, 64)
		recs = append(recs, dissectRecord{frame: f[0], tcpStream: f[1], udpStream: f[2], stream: f[3], transport: f[4], src: f[5], typ: f[6], offset: off, length: n})
	}
	return recs
}

// frameCaptures are the captures the frame tests read: every shipped pcap
// and pcapng (and the real ones beside the repository) with DISSECT_LONG,
// else a few that hold the hard cases (a loss, a capture joined
// mid-stream, UDP and TCP together, VLAN and IPv6, a serial tap).
func frameCaptures(t *testing.T) []shippedCapture {
	t.Helper()
	var out []shippedCapture
	quick := map[string]bool{"deltarobot_loss.pcap": true, "deltarobot_midstream.pcap": true, "vrpn_udp_tcp.pcapng": true,
		"deltarobot_vlan_ipv6.pcapng": true, "handcontrol_serial.pcapng": true}
	for _, c := range shippedCaptures(t) {
		if strings.HasSuffix(c.path, ".vrpnlog") || !longtest.On() && !quick[filepath.Base(c.path)] {
			continue
		}
		out = append(out, c)
	}
	if longtest.On() {
		real, _ := filepath.Glob("../../../shared/captures/*/*.pcap*")
		for _, f := range real {
			out = append(out, shippedCapture{path: f})
		}
	}
	return out
}

func needTShark(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed (.ci/run installs it): frame numbers are not compared with tshark's")
	}
}

// TestFrameNumbersMatchTShark: every record's frame.number is tshark's
// number of the packet that completed it, and its tcp.stream or
// udp.stream is tshark's stream of that packet.
func TestFrameNumbersMatchTShark(t *testing.T) {
	needTShark(t)
	for _, c := range frameCaptures(t) {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			checkFrames(t, c.path, c.args)
		})
	}
}

// checkFrames compares the frames of path's records with the oracle and
// returns the records with the oracle's frame of each, and how many were
// completed by a later packet than the one that carried their last byte
// (held behind a hole).
func checkFrames(t *testing.T, path string, args []string) ([]dissectRecord, []int, int) {
	t.Helper()
	pkts := tsharkPackets(t, path)
	dirs := frameOracle(pkts)
	recs := dissectRecords(t, path, args...)
	want := make([]int, len(recs))
	checked, held := 0, 0
	for i, r := range recs {
		k := dirID{transport: r.transport, src: r.src}
		switch r.transport {
		case "tcp":
			k.stream, _ = strconv.Atoi(r.tcpStream)
			if r.udpStream != "" {
				t.Errorf("%s record at %d of %s: udp.stream %q on TCP", r.typ, r.offset, r.src, r.udpStream)
			}
		case "udp":
			k.stream, _ = strconv.Atoi(r.udpStream)
			if r.tcpStream != "" {
				t.Errorf("%s record at %d of %s: tcp.stream %q on UDP", r.typ, r.offset, r.src, r.tcpStream)
			}
		}
		if r.typ == "gap" {
			continue // no byte of it was captured
		}
		d := dirs[k]
		if d == nil {
			t.Errorf("%s record at %d: tshark has no %s stream %d from %s", r.typ, r.offset, k.transport, k.stream, k.src)
			continue
		}
		want[i] = d.complete(r.offset, r.length)
		if want[i] == 0 {
			t.Errorf("%s record [%d,+%d) of %s %d from %s: tshark shows no packet that completes it", r.typ, r.offset, r.length, k.transport, k.stream, k.src)
			continue
		}
		if e := r.offset + r.length - 1; d.first != nil && want[i] != d.first[e] {
			held++
		}
		if r.frame != strconv.Itoa(want[i]) {
			t.Errorf("%s record [%d,+%d) of %s %d from %s: frame.number %s, tshark's packet %d completed it", r.typ, r.offset, r.length, k.transport, k.stream, k.src, r.frame, want[i])
		}
		checked++
	}
	if checked == 0 {
		t.Fatalf("%s: no record was checked", path)
	}
	t.Logf("%d of %d records checked against %d packets, %d held behind a hole", checked, len(recs), len(pkts), held)
	return recs, want, held
}

// TestFrameAndStreamFilters: -Y 'frame.number == N', -Y 'tcp.stream == K'
// and -Y 'udp.stream == K' select the records completed by the packets
// tshark's same filter selects.
func TestFrameAndStreamFilters(t *testing.T) {
	needTShark(t)
	for _, c := range frameCaptures(t) {
		if !longtest.On() && !strings.Contains(c.path, "vrpn_udp_tcp") && !strings.Contains(c.path, "deltarobot_loss") {
			continue // a tshark run per filter: the others with DISSECT_LONG
		}
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			recs, want, _ := checkFrames(t, c.path, c.args)
			var filters []string
			// The first and the last packet that complete a record, and
			// the first packet (a SYN or a read: often none).
			frames := map[int]bool{1: true}
			for _, f := range want {
				if f > 0 {
					frames[f] = true
					break
				}
			}
			for i := len(want) - 1; i >= 0; i-- {
				if want[i] > 0 {
					frames[want[i]] = true
					break
				}
			}
			for f := range frames {
				filters = append(filters, fmt.Sprintf("frame.number == %d", f))
			}
			for k := range 3 {
				filters = append(filters, fmt.Sprintf("tcp.stream == %d", k), fmt.Sprintf("udp.stream == %d", k))
			}
			sort.Strings(filters)
			for _, filter := range filters {
				sel := tsharkFrames(t, c.path, filter)
				var wantRecs []string
				for i, r := range recs {
					if want[i] > 0 && sel[want[i]] {
						wantRecs = append(wantRecs, recordKey(r))
					}
				}
				var got []string
				for _, r := range dissectRecords(t, c.path, append(append([]string{}, c.args...), "-Y", filter)...) {
					if r.typ != "gap" {
						got = append(got, recordKey(r))
					}
				}
				if strings.Join(got, "\n") != strings.Join(wantRecs, "\n") {
					t.Errorf("-Y %q: dissect selects\n%s\nthe records tshark's packets completed are\n%s", filter, strings.Join(got, "\n"), strings.Join(wantRecs, "\n"))
				}
			}
		})
	}
}

func recordKey(r dissectRecord) string {
	return fmt.Sprintf("%s %s %s+%d %s", r.transport, r.src, strconv.FormatInt(r.offset, 10), r.length, r.typ)
}

// tsharkFrames returns the numbers of the packets tshark's display
// filter selects.
func tsharkFrames(t *testing.T, path, filter string) map[int]bool {
	t.Helper()
	out, err := exec.Command("tshark", "-n", "-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark -Y %q %s: %v", filter, path, err)
	}
	sel := map[int]bool{}
	for _, f := range strings.Fields(string(out)) {
		n, _ := strconv.Atoi(f)
		sel[n] = true
	}
	return sel
}

// TestFrameNumbersHostile: the real VRPN connection of
// vrpn_tcp_only.pcap rebuilt with pktbuild so that its segments come out
// of order and twice: every third message in two halves, the second half
// first; every fifth in three thirds, last first; every fourth sent again
// after it (a retransmission of delivered bytes); every seventh sent again
// before its peer's answer, while later bytes are held. The records are
// those of the original capture (times aside), and each record's frame is
// tshark's packet that completed it: a record held behind a hole is
// completed by the segment that fills the hole.
func TestFrameNumbersHostile(t *testing.T) {
	needTShark(t)
	orig := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	d := readTCPData(t, orig)
	c := pktbuild.NewConn(d.client, d.server, 1000, 5000)
	segs := c.Handshake()
	reordered := 0
	for i, data := range d.data {
		from := d.from[i]
		seq := c.Next[from]
		at := func(a, b int) pktbuild.Segment { return c.Segment(from, pktbuild.PSH, seq+uint32(a), data[a:b]) }
		n := len(data)
		switch {
		case i%5 == 0 && n >= 3:
			segs = append(segs, at(2*n/3, n), at(n/3, 2*n/3), at(0, n/3))
			reordered++
		case i%3 == 0 && n >= 2:
			segs = append(segs, at(n/2, n), at(0, n/2))
			reordered++
		case i%7 == 0 && n >= 2:
			segs = append(segs, at(n/2, n), at(n/2, n), at(0, n/2))
			reordered++
		default:
			segs = append(segs, at(0, n))
		}
		if i%4 == 0 {
			segs = append(segs, at(0, n))
		}
		c.Next[from] += uint32(n)
		segs = append(segs, c.Ack(from.Other()))
	}
	segs = append(segs, c.Fin(pktbuild.Client), c.Fin(pktbuild.Server), c.Ack(pktbuild.Client))
	if reordered < 5 {
		t.Fatalf("only %d messages reordered: a useless case", reordered)
	}
	in := writePcap(t, "hostile.pcap", pktbuild.Packets(pktbuild.Encap{Type: capture.LinkEthernet}, time.Unix(1_700_000_000, 0), time.Millisecond, segs...))
	sameRecords(t, "the reordered capture", recordsWithoutTime(t, in), recordsWithoutTime(t, orig))
	if _, _, held := checkFrames(t, in, nil); held < 5 {
		t.Errorf("only %d records held behind a hole: a useless case", held)
	}
}

// TestFrameNumbersOfLogEntries: in a VRPN log file each entry is a unit:
// a log written by the independent encoder (vrpnlogenc), one message an
// entry, gives each message the number of its entry, 1-based; the cookie
// comes with the first.
func TestFrameNumbersOfLogEntries(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	es := []vrpnlogenc.Entry{
		{Type: vrpnlogenc.SenderDescription, Sender: 0, Time: t0, Payload: vrpnlogenc.NameBody("Tracker0")},
		{Type: vrpnlogenc.TypeDescription, Sender: 3, Time: t0, Payload: vrpnlogenc.NameBody("vrpn_Tracker Pos_Quat")},
	}
	for i := range 5 {
		es = append(es, vrpnlogenc.Entry{Type: 3, Sender: 0, Time: t0.Add(time.Duration(i+1) * time.Millisecond),
			Payload: vrpnlogenc.PosQuat(int32(i), [3]float64{1, 2, 3}, [4]float64{0, 0, 0, 1})})
	}
	path := filepath.Join(t.TempDir(), "t.vrpnlog")
	if err := os.WriteFile(path, vrpnlogenc.File(vrpnlogenc.Cookie("07.38", vrpnlogenc.LogNone), es...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, "--no-summary", "-T", "fields", "-e", "frame", "-e", "type", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "1\tcookie\n1\tsender_description\n2\ttype_description\n"
	for i := range 5 {
		want += fmt.Sprintf("%d\tvrpn_Tracker Pos_Quat\n", i+3)
	}
	if out != want {
		t.Errorf("frames of the log's records:\n%s\nwant\n%s", out, want)
	}
}

// TestFrameNumbersOfSerialReads: on a serial link each read is a unit,
// numbered among all the capture's packets: a record is completed by the
// read (of its direction) that brings its last byte. The reads are taken
// from the capture files here (no tshark needed); HandControl's messages
// span several reads of both directions, interleaved.
func TestFrameNumbersOfSerialReads(t *testing.T) {
	for _, c := range []struct {
		path string
		args []string
	}{
		{filepath.Join(pcapDir, "handcontrol_serial.pcapng"), nil},
		{filepath.Join(pcapDir, "acme", "acme_servo_serial.pcapng"), []string{"--protocol", "../../docs/examples/acme-servo.yaml"}},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			src, err := capture.OpenFile(c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			reads := map[string][]int{} // per src as dissect names it: each byte's read
			spanned := 0
			for n := 1; ; n++ {
				p, err := src.Next()
				if err != nil {
					break
				}
				who := "host"
				if p.Direction == capture.DirInbound {
					who = p.InterfaceName
				}
				for range p.Data {
					reads[who] = append(reads[who], n)
				}
			}
			recs := dissectRecords(t, c.path, c.args...)
			for _, r := range recs {
				rd := reads[r.src]
				e := r.offset + r.length - 1
				if e >= int64(len(rd)) || r.typ == "gap" {
					t.Errorf("%s record [%d,+%d) from %s: past the %d bytes read", r.typ, r.offset, r.length, r.src, len(rd))
					continue
				}
				if rd[r.offset] != rd[e] {
					spanned++
				}
				if r.frame != strconv.Itoa(rd[e]) {
					t.Errorf("%s record [%d,+%d) from %s: frame %s, its last byte came in read %d", r.typ, r.offset, r.length, r.src, r.frame, rd[e])
				}
			}
			if len(recs) == 0 || spanned == 0 {
				t.Errorf("%d records, %d over several reads: a useless case", len(recs), spanned)
			}
		})
	}
}

// TestTCPStreamOnReuse: a 4-tuple used again is a new TCP stream, as
// tshark numbers them: after both FINs, and when a SYN with another
// initial sequence number comes while the old connection was never seen
// to end. A UDP flow between other ports is numbered apart. Each
// record's tcp.stream, udp.stream and frame are tshark's.
func TestTCPStreamOnReuse(t *testing.T) {
	needTShark(t)
	cli4, srv := netip.MustParseAddrPort("10.1.0.1:40000"), netip.MustParseAddrPort("10.1.0.2:4000")
	var segs []pktbuild.Segment
	for i, isn := range []uint32{1000, 90000, 500000} {
		c := pktbuild.NewConn(cli4, srv, isn, isn*3)
		segs = append(segs, c.Handshake()...)
		segs = append(segs, c.Send(pktbuild.Client, []byte(fmt.Sprintf("request %d", i))), c.Send(pktbuild.Server, []byte("reply")))
		if i == 0 {
			segs = append(segs, c.Fin(pktbuild.Client), c.Fin(pktbuild.Server), c.Ack(pktbuild.Client))
		}
	}
	e := pktbuild.Encap{Type: capture.LinkEthernet}
	pkts := pktbuild.Packets(e, time.Unix(1_700_000_000, 0), time.Millisecond, segs...)
	u := pktbuild.UDPPacket(netip.MustParseAddrPort("10.1.0.3:5000"), netip.MustParseAddrPort("10.1.0.4:6000"), []byte("datagram"))
	pkts = append(pkts[:4:4], append([]*capture.Packet{e.Wrap(u.Encode()).Packet(time.Unix(1_700_000_000, 3_500_000))}, pkts[4:]...)...)
	in := writePcap(t, "reuse.pcap", pkts)
	recs, _, _ := checkFrames(t, in, nil)
	streams := map[string]bool{}
	for _, r := range recs {
		streams[r.transport+r.tcpStream+r.udpStream] = true
	}
	if len(streams) != 4 {
		t.Errorf("streams %v: want TCP 0, 1, 2 and UDP 0", streams)
	}
}
