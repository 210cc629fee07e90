package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/duckdb"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// hostileNames are VRPN type names a sender may choose: invalid UTF-8,
// control characters and escapes, path and partition syntax, and names
// of 255 bytes (the longest a VRPN name table keeps), one of them with
// invalid UTF-8 where a shortened partition name is cut.
var hostileNames = []string{
	"\xff\xfe",
	"\xfe\xff", // another name, the same text once made valid
	"bad\xc3(utf8",
	"ctl\x01\x1b[31mred\x7f",
	"tab\there\nnewline\rcr",
	"/../etc/passwd",
	"a=b%2F?*[x]{y}",
	"line\u2028sep\u202ebidi",
	strings.Repeat("n", 255),
	strings.Repeat("é", 120) + "\xff" + strings.Repeat("z", 14),
	strings.Repeat("\x80", 255),
}

// vrpnWireMessage is a VRPN message on TCP: five big-endian words (length
// = 24 + body, tv_sec, tv_usec, sender, type), the sequence number, then
// the body padded to 8 bytes (the layout of lvVrpnDescription).
func vrpnWireMessage(sender, typ int32, seq uint32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(24+len(body)))
	b = binary.BigEndian.AppendUint32(b, 1795306001)
	b = binary.BigEndian.AppendUint32(b, 500000)
	b = binary.BigEndian.AppendUint32(b, uint32(sender))
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	b = binary.BigEndian.AppendUint32(b, seq)
	b = append(b, body...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// hostileNamesCapture is a VRPN connection on port 3883 whose client
// describes a sender and each of names as a type, then sends one 8-byte
// message of each type, as pcap bytes.
func hostileNamesCapture(t *testing.T, names []string) []byte {
	t.Helper()
	c := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:3883"), 1000, 5000)
	segs := append(c.Handshake(), c.Send(pktbuild.Server, lvVrpnCookie()), c.Send(pktbuild.Client, lvVrpnCookie()))
	var msgs []byte
	seq := uint32(0)
	msgs = append(msgs, lvVrpnDescription(0, -1, seq, "Tracker0@host")...)
	for i, n := range names {
		seq++
		msgs = append(msgs, lvVrpnDescription(int32(i), -2, seq, n)...)
	}
	for i := range names {
		seq++
		msgs = append(msgs, vrpnWireMessage(0, int32(i), seq, []byte("12345678"))...)
	}
	for off := 0; off < len(msgs); off += 1400 {
		segs = append(segs, c.Send(pktbuild.Client, msgs[off:min(off+1400, len(msgs))]), c.Ack(pktbuild.Server))
	}
	segs = append(segs, c.Fin(pktbuild.Client), c.Fin(pktbuild.Server))
	var buf bytes.Buffer
	w, err := capture.NewPcapWriter(&buf, capture.LinkEthernet, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pktbuild.Packets(pktbuild.Encap{Type: capture.LinkEthernet}, time.Unix(1_795_306_000, 0), time.Millisecond, segs...) {
		if err := w.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLakeHostileNames: a lake written from a capture whose VRPN types
// are named with invalid UTF-8, control characters and 255 bytes (and
// whose file name is invalid UTF-8) is read whole by DuckDB, a reader
// that refuses invalid UTF-8 in a string column. Every directory name is
// valid UTF-8, and each record's type (coalesce(record_type, type)) and
// capture are the ones -o json writes. With -x, the raw column holds each
// record's bytes as JSON's raw does: the names as they came. Before,
// DuckDB refused every query over the lake ("Invalid unicode"), and -x
// added nothing to it.
func TestLakeHostileNames(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "run\xff\x01.pcap")
	if err := os.WriteFile(in, hostileNamesCapture(t, hostileNames), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cli(t, "-o", "json", "-x", "--no-summary", "-r", in, "-Y", `proto == "vrpn"`)
	if code != exitOK {
		t.Fatalf("-o json: exit %d: %s", code, stderr)
	}
	var want []string
	wantRaw := map[string]string{} // offset -> the record's bytes in hex
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r struct {
			Type   string
			Offset int64
			Raw    string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Type)
		wantRaw[fmt.Sprint(r.Offset)] = r.Raw
	}
	lake := filepath.Join(dir, "lake")
	if _, stderr, code := cli(t, "-o", "parquet", "-x", "--out", lake, "--no-summary", "-r", in, "-Y", `proto == "vrpn"`); code != exitOK {
		t.Fatalf("-o parquet: exit %d: %s", code, stderr)
	}
	filepath.WalkDir(lake, func(path string, d fs.DirEntry, err error) error {
		if !utf8.ValidString(d.Name()) || len(d.Name()) > 255 {
			t.Errorf("a name in the lake is not valid UTF-8 of at most 255 bytes: %q", d.Name())
		}
		return nil
	})
	_, rows := duckdb.Query(t, "SELECT coalesce(record_type, type), capture, \"offset\"::VARCHAR, lower(hex(raw)) FROM read_parquet("+
		duckdb.Quote(filepath.Join(lake, "**", "*.parquet"))+", hive_partitioning = true, union_by_name = true)")
	var got []string
	captures := map[any]bool{}
	for _, r := range rows {
		got = append(got, fmt.Sprint(r[0]))
		captures[r[1]] = true
		if off := fmt.Sprint(r[2]); r[3] != wantRaw[off] {
			t.Errorf("offset %s: raw %v in the lake, %q in JSON", off, r[3], wantRaw[off])
		}
	}
	// The names' bytes, as they came, are in the raw column of their
	// descriptions, as in JSON's raw.
	for _, n := range hostileNames {
		found := false
		for _, raw := range wantRaw {
			found = found || strings.Contains(raw, hex.EncodeToString([]byte(n+"\x00")))
		}
		if !found {
			t.Errorf("no record's raw holds the name %q", n)
		}
	}
	if want := strings.ToValidUTF8(filepath.Base(in), "\ufffd"); len(captures) != 1 || !captures[want] {
		t.Errorf("captures %v, want %q", captures, want)
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(want) < 2*len(hostileNames) || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("the lake's types:\n%q\nJSON's:\n%q", got, want)
	}
	for _, n := range hostileNames[:2] {
		v := strings.ToValidUTF8(n, "\ufffd\ufffd") // each bad byte is one U+FFFD, as in JSON
		if !strings.Contains(strings.Join(want, "\n"), v) {
			t.Errorf("JSON has no type %q", v)
		}
	}
}
