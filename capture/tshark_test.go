package capture

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needTool returns the path of a Wireshark command-line tool, or skips.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (apt-get install tshark): the file is not checked against Wireshark", name)
	}
	return p
}

// runTool runs a Wireshark tool and returns its standard output.
func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(needTool(t, name), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// TestPcapngWriterWireshark writes what `dissect -w` writes (a network
// interface and a serial link of link type 147, direction flags, one
// Interface Statistics Block per interface at the end) and checks what
// tshark and capinfos read from it. The expected values are the inputs.
func TestPcapngWriterWireshark(t *testing.T) {
	needTool(t, "tshark")
	needTool(t, "capinfos")
	path := filepath.Join(t.TempDir(), "w.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewPcapngWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInterface("eth0", LinkEthernet, 262144); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInterface("/dev/ttyUSB0", LinkUser0, 0); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1795306106, 123456789)
	pkts := []Packet{
		{Time: t0, LinkType: LinkEthernet, Direction: DirInbound, Data: make([]byte, 60), Length: 1514},
		{Time: t0.Add(time.Millisecond), LinkType: LinkUser0, Interface: 1, Direction: DirOutbound, Data: []byte("hello")},
		{Time: t0.Add(2 * time.Millisecond), LinkType: LinkUser0, Interface: 1, Direction: DirInbound, Data: []byte("world!")},
		{Time: t0.Add(3 * time.Millisecond), LinkType: LinkEthernet, Data: make([]byte, 61)},
	}
	for i := range pkts {
		if err := w.WritePacket(&pkts[i]); err != nil {
			t.Fatal(err)
		}
	}
	end := t0.Add(time.Second)
	if err := w.WriteStats(0, InterfaceStats{Start: t0, End: end, Received: Count(100), InterfaceDropped: Count(1),
		FilterAccepted: Count(90), KernelDropped: Count(7), Delivered: Count(83), DissectDropped: Count(5)}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStats(1, InterfaceStats{End: end.Add(time.Nanosecond), KernelDropped: Count(3)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// Packets: interface, direction (epb_flags bits 0-1), encapsulation
	// (Wireshark's WTAP_ENCAP_USER0 is 45 for LINKTYPE_USER0 147),
	// captured and original length, time.
	got := runTool(t, "tshark", "-r", path, "-T", "fields", "-E", "separator=|",
		"-e", "frame.interface_id", "-e", "frame.interface_name", "-e", "frame.packet_flags_direction",
		"-e", "frame.encap_type", "-e", "frame.cap_len", "-e", "frame.len", "-e", "frame.time_epoch")
	want := "0|eth0|0x00000001|1|60|1514|1795306106.123456789\n" +
		"1|/dev/ttyUSB0|0x00000002|45|5|5|1795306106.124456789\n" +
		"1|/dev/ttyUSB0|0x00000001|45|6|6|1795306106.125456789\n" +
		"0|eth0||1|61|61|1795306106.126456789\n"
	if got != want {
		t.Errorf("tshark fields:\n got %q\nwant %q", got, want)
	}

	// capinfos: both interfaces by name, one statistics entry each.
	info := runTool(t, "capinfos", "-M", path)
	for _, s := range []string{"Number of packets:   4", "Number of interfaces in file: 2",
		"Name = eth0", "Name = /dev/ttyUSB0", "USER 0", "Number of stat entries = 1"} {
		if !strings.Contains(info, s) {
			t.Errorf("capinfos -M does not show %q:\n%s", s, info)
		}
	}
	if n := strings.Count(info, "Number of stat entries = 1"); n != 2 {
		t.Errorf("capinfos shows %d interfaces with one statistics entry, want 2", n)
	}

	// The statistics blocks, as Wireshark's pcapng file-format dissector
	// decodes them (one frame for the whole file; repeated fields are
	// listed in file order).
	isb := runTool(t, "tshark", "-r", path, "-X", "read_format:MIME Files Format", "-T", "fields", "-E", "separator=|",
		"-e", "pcapng.options.option.data.comment",
		"-e", "pcapng.options.option.data.interface.received",
		"-e", "pcapng.options.option.data.interface.dropped",
		"-e", "pcapng.options.option.data.interface.accepted_by_filter",
		"-e", "pcapng.options.option.data.interface.dropped_by_os",
		"-e", "pcapng.options.option.data.interface.delivered_to_user",
		"-e", "pcapng.options.option.code")
	fields := strings.Split(strings.TrimSpace(isb), "|")
	if len(fields) != 7 {
		t.Fatalf("tshark pcapng dissection: %q", isb)
	}
	wantISB := []string{"dissect: packets dropped by dissect's queue = 5", "100", "1", "90", "7,3", "83"}
	for i, w := range wantISB {
		if fields[i] != w {
			t.Errorf("statistics field %d = %q, want %q", i, fields[i], w)
		}
	}
	// Option codes of the whole file, in order: IDB 0 (if_name, if_tsresol,
	// end), IDB 1 (same), EPB options (epb_flags, end) for the three
	// packets with a direction, ISB 0 (comment, isb_starttime ...
	// isb_usrdeliv, end), ISB 1 (isb_endtime, isb_osdrop, end).
	wantCodes := "2,9,0,2,9,0,2,0,2,0,2,0,1,2,3,4,5,6,7,8,0,3,7,0"
	if fields[6] != wantCodes {
		t.Errorf("option codes %s, want %s", fields[6], wantCodes)
	}

	// Our reader reads the same packets.
	src, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ours, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(ours) != len(pkts) {
		t.Fatalf("our reader: %d packets, want %d", len(ours), len(pkts))
	}
}
