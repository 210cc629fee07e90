package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/internal/testenc/vrpnlogenc"
)

// wireFrame is the VRPN TCP framing of one message, written here from the
// wire format (dissect/vrpn/doc.go; mainline's marshall_message): length
// (24 + payload), tv_sec, tv_usec, sender, type, sequence, the payload,
// zero padding to a multiple of 8.
func wireFrame(typ, sender int32, t time.Time, seq uint32, payload []byte) []byte {
	var b []byte
	for _, w := range []uint32{uint32(24 + len(payload)), uint32(t.Unix()), uint32(t.Nanosecond() / 1000), uint32(sender), uint32(typ), seq} {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	b = append(b, payload...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// sampleLog is a short log as mainline's outgoing log of a tracker server
// would hold it: descriptions, a UDP description, tracker and button
// messages, payloads of lengths that need no padding, and of lengths that
// do. It returns the file and the packets the reader must give.
func sampleLog(name string) ([]byte, []got) {
	t0 := time.Date(2026, 11, 20, 9, 30, 0, 123456000, time.UTC)
	cookie := vrpnlogenc.Cookie("07.38", vrpnlogenc.LogNone)
	es := []vrpnlogenc.Entry{
		{Type: vrpnlogenc.SenderDescription, Sender: 0, Time: t0, Payload: vrpnlogenc.NameBody("Tracker0")},
		{Type: vrpnlogenc.TypeDescription, Sender: 3, Time: t0, Payload: vrpnlogenc.NameBody("vrpn_Tracker Pos_Quat")},
		{Type: vrpnlogenc.UDPDescription, Sender: 41000, Time: t0.Add(time.Millisecond), Payload: vrpnlogenc.UDPBody("127.0.0.1")},
		{Type: 3, Sender: 0, Time: t0.Add(2 * time.Millisecond), Payload: vrpnlogenc.PosQuat(1, [3]float64{1, 2, 3}, [4]float64{0, 0, 0, 1})},
		{Type: 4, Sender: 1, Time: t0.Add(3 * time.Millisecond), Payload: vrpnlogenc.ButtonChange(2, 1)},
		{Type: vrpnlogenc.Disconnect, Sender: 0, Time: t0.Add(4 * time.Millisecond)},
	}
	var want []got
	for i, e := range es {
		d := wireFrame(e.Type, e.Sender, e.Time, 0, e.Payload)
		if i == 0 {
			d = append(append([]byte(nil), cookie...), d...)
		}
		want = append(want, got{Time: e.Time.Truncate(time.Microsecond), LinkType: 148, Name: name, Dir: DirInbound, Data: string(d), Length: len(d)})
	}
	return vrpnlogenc.File(cookie, es...), want
}

func TestVRPNLogRead(t *testing.T) {
	b, want := sampleLog("mem")
	if !strings.HasPrefix(string(b), "vrpn: ver. 07.38  0\x00\x00\x00\x00\x00") {
		t.Fatalf("encoder cookie %q", b[:24])
	}
	gotp, err := readBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, gotp, want)
}

// TestVRPNLogFile reads the sample through OpenFile: the interface name is
// the path, and progress reaches the file's size.
func TestVRPNLogFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.vrpnlog")
	b, want := sampleLog(path)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	gotp, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, gotp, want)
	if done, total := src.(Progresser).Progress(); done != int64(len(b)) || total != int64(len(b)) {
		t.Errorf("progress %d of %d, want %d of %d", done, total, len(b), len(b))
	}
}

// TestVRPNLogWord6 reads the sixth header word as mainline does: ignored
// (read_entry: older logs, written as a struct, hold a pointer there).
func TestVRPNLogWord6(t *testing.T) {
	t0 := time.Unix(1700000000, 5000)
	cookie := vrpnlogenc.Cookie("07.38", vrpnlogenc.LogNone)
	b := vrpnlogenc.File(cookie, vrpnlogenc.Entry{Type: 7, Sender: 2, Time: t0, Payload: []byte("abc"), Word6: 0x0804b2c8})
	gotp, err := readBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	d := append(append([]byte(nil), cookie...), wireFrame(7, 2, t0, 0, []byte("abc"))...)
	sameGot(t, gotp, []got{{Time: t0.UTC(), LinkType: LinkVRPNLog, Name: "mem", Dir: DirInbound, Data: string(d), Length: len(d)}})
}

// TestVRPNLogCompressed reads the sample gzip-, zstd- and lz4-compressed.
func TestVRPNLogCompressed(t *testing.T) {
	b, want := sampleLog("mem")
	for name, c := range map[string]func(testing.TB, []byte) []byte{"gzip": gzipLib, "zstd": zstdLib, "lz4": lz4Lib()} {
		gotp, err := readBytes(t, c(t, b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameGot(t, gotp, want)
	}
}

// TestVRPNLogCookieOnly: a log with no entry gives no packet (before:
// the cookie alone, with no time, read as year 1 and warned about as a
// pcapng simple packet block) and says it is an empty log.
func TestVRPNLogCookieOnly(t *testing.T) {
	cookie := vrpnlogenc.Cookie("07.38", vrpnlogenc.LogIncoming)
	gotp, err := readBytes(t, cookie)
	wantFileError(t, err, 24, `an empty VRPN log: its cookie ("vrpn: ver. 07.38  1"), no message logged`)
	sameGot(t, gotp, nil)
}

// TestVRPNLogDamaged: damage gives a *FileError at the damaged entry's
// offset, after every entry before it (the cookie goes out with the
// first: none when no entry was whole).
func TestVRPNLogDamaged(t *testing.T) {
	whole, want := sampleLog("mem")
	cookie := whole[:24]
	first := vrpnlogenc.AppendEntry(nil, vrpnlogenc.Entry{Type: -1, Sender: 0, Time: time.Unix(1, 0), Payload: vrpnlogenc.NameBody("Tracker0")})
	end := int64(len(whole))
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name string
		b    []byte
		want []got
		off  int64
		msg  string
	}{
		{"short cookie", []byte("vrpn: ver. 07.3"), nil, 0, "truncated VRPN log cookie: 24 bytes needed, 15 present"},
		{"header cut", cat(whole, []byte{0, 0, 0, 7, 0, 0}), want, end, "truncated VRPN log entry header: 24 bytes needed, 6 remain"},
		{"payload cut", cat(whole, first[:len(first)-3]), want, end, "header says 13 payload bytes, 10 remain"},
		{"huge length", vrpnlogenc.AppendRaw(bytes.Clone(whole), 3, 0, 1, 0, 0x7fffffff, 0, []byte("short")), want, end, "2147483647 payload bytes, more than the limit of 1048552"},
		{"just over the cap", vrpnlogenc.AppendRaw(bytes.Clone(whole), 3, 0, 1, 0, 1<<20-23, 0, nil), want, end, "1048553 payload bytes, more than the limit"},
		{"negative length", vrpnlogenc.AppendRaw(bytes.Clone(whole), 3, 0, 1, 0, -8, 0, nil), want, end, "a payload of -8 bytes"},
		{"first entry cut", cat(cookie, first[:20]), nil, 24, "truncated VRPN log entry header"},
		{"first entry negative", vrpnlogenc.AppendRaw(bytes.Clone(cookie), 3, 0, 1, 0, -1, 0, nil), nil, 24, "a payload of -1 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotp, err := readBytes(t, tc.b)
			wantFileError(t, err, tc.off, tc.msg)
			sameGot(t, gotp, tc.want)
		})
	}
}

// TestVRPNLogPayloadAtCap: a payload of exactly the cap is read (its
// re-framed length field, 1 MiB, is the largest the VRPN dissector takes).
func TestVRPNLogPayloadAtCap(t *testing.T) {
	cookie := vrpnlogenc.Cookie("07.38", 0)
	payload := bytes.Repeat([]byte{0xa5}, 1<<20-24)
	b := vrpnlogenc.File(cookie, vrpnlogenc.Entry{Type: 9, Sender: 1, Time: time.Unix(5, 0), Payload: payload})
	gotp, err := readBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotp) != 1 || len(gotp[0].Data) != 24+1<<20 || binary.BigEndian.Uint32([]byte(gotp[0].Data[24:])) != 1<<20 {
		t.Fatalf("got %d packets, first of %d bytes", len(gotp), len(gotp[0].Data))
	}
}

// TestVRPNLogHugeLengthMemory: a length of 1 MiB in a short file costs no
// more memory than the file holds (the buffer grows as data arrives).
func TestVRPNLogHugeLengthMemory(t *testing.T) {
	cookie := vrpnlogenc.Cookie("07.38", 0)
	b := vrpnlogenc.AppendRaw(bytes.Clone(cookie), 3, 0, 1, 0, 1<<20-24, 0, []byte("tiny"))
	src, err := NewReader(bytes.NewReader(b), "mem")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := src.(*vrpnLogReader)
	for {
		if _, err := src.Next(); err != nil {
			wantFileError(t, err, 24, "truncated VRPN log entry: header says 1048552 payload bytes, 4 remain")
			break
		}
	}
	if n := cap(r.in.buf); n > 64<<10 {
		t.Errorf("read buffer of %d bytes for a %d-byte file", n, len(b))
	}
}

// TestVRPNLogNotLog: a file starting "vrpn" that is not a log's cookie is
// not a capture.
func TestVRPNLogNotLog(t *testing.T) {
	_, err := NewReader(strings.NewReader("vrpn is a protocol, this is a text file"), "notes.txt")
	if !errors.Is(err, ErrNotCapture) {
		t.Fatalf("error %v, want ErrNotCapture", err)
	}
	if want := "notes.txt: not a pcap, pcapng or VRPN log file (starts with 76 72 70 6e)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestVRPNLogSticky: the end and errors are sticky, and Next after Close
// fails.
func TestVRPNLogSticky(t *testing.T) {
	whole, _ := sampleLog("mem")
	src, err := NewReader(bytes.NewReader(whole[:len(whole)-2]), "mem")
	if err != nil {
		t.Fatal(err)
	}
	var first error
	for first == nil {
		_, first = src.Next()
	}
	if _, err := src.Next(); err != first {
		t.Errorf("error not sticky: %v then %v", first, err)
	}
	src.Close()
	src, _ = NewReader(bytes.NewReader(whole), "mem")
	src.Close()
	if _, err := src.Next(); err == nil || err == io.EOF {
		t.Errorf("Next after Close: %v", err)
	}
}

func FuzzVRPNLog(f *testing.F) {
	b, _ := sampleLog("mem")
	f.Add(b)
	f.Add(b[:len(b)-5])
	f.Add(vrpnlogenc.Cookie("07.38", 0))
	f.Add(vrpnlogenc.AppendRaw(vrpnlogenc.Cookie("04.00", 3), -1, 0, 0xffffffff, 2000000, 3, 7, []byte("xyz")))
	f.Add(gzipLib(f, b))
	f.Fuzz(checkReader)
}

// benchVRPNLog is a log of about 10 MB of tracker and button entries.
func benchVRPNLog() []byte {
	t0 := time.Unix(1795306106, 0)
	b := vrpnlogenc.Cookie("07.38", 0)
	pq := vrpnlogenc.PosQuat(0, [3]float64{1, 2, 3}, [4]float64{0, 0, 0, 1})
	bc := vrpnlogenc.ButtonChange(1, 1)
	for i := 0; len(b) < 10<<20; i++ {
		e := vrpnlogenc.Entry{Type: 3, Sender: 0, Time: t0.Add(time.Duration(i) * time.Millisecond), Payload: pq}
		if i%8 == 7 {
			e.Type, e.Payload = 4, bc
		}
		b = vrpnlogenc.AppendEntry(b, e)
	}
	return b
}

func BenchmarkVRPNLog(b *testing.B) {
	data := benchVRPNLog()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		src, err := NewReader(bytes.NewReader(data), "bench")
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := src.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
		src.Close()
	}
}

// TestVRPNLogReal reads the real mainline logs (testdata/README.md): each
// gives one packet per entry (the counts of the source's README), no
// error, the cookie first, times within the session's capture, and the
// gzip copy the same packets as the plain file.
func TestVRPNLogReal(t *testing.T) {
	const dir = "../pcaps/vrpn/"
	// The session's pcap frames, read by hand with tcpdump -tt, span
	// 1795767320.739 to 1795767322.406; the logs, on the same clock, also
	// hold messages packed half a second before the connection and the
	// disconnects after it: all within these whole seconds.
	first, last := time.Unix(1795767320, 0), time.Unix(1795767323, 0)
	for name, entries := range map[string]int{
		"text_tracker_logged.client_in.vrpnlog":   40,
		"text_tracker_logged.client_out.vrpnlog":  53,
		"text_tracker_logged.server_in-1.vrpnlog": 30,
		"text_tracker_logged.server_out.vrpnlog":  36,
	} {
		src, err := OpenFile(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		gotp, err := readAll(t, src)
		src.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(gotp) != entries {
			t.Errorf("%s: %d packets, want %d entries", name, len(gotp), entries)
		}
		for i, p := range gotp {
			if p.Time.Before(first) || p.Time.After(last) || p.LinkType != LinkVRPNLog || p.Name != dir+name || p.Dir != DirInbound {
				t.Errorf("%s: packet %d: %+v", name, i, p)
				break
			}
			if i == 0 && !strings.HasPrefix(p.Data, "vrpn: ver. 07.38  0\x00\x00\x00\x00\x00") {
				t.Errorf("%s: first packet does not start with the cookie: %q", name, p.Data[:24])
			}
		}
		if name == "text_tracker_logged.client_in.vrpnlog" {
			src, err := OpenFile(dir + name + ".gz")
			if err != nil {
				t.Fatal(err)
			}
			gz, err := readAll(t, src)
			src.Close()
			if err != nil {
				t.Fatal(err)
			}
			for i := range gz {
				gz[i].Name = gotp[i].Name
			}
			sameGot(t, gz, gotp)
		}
	}
}

// TestVRPNLogTimeSigned: an entry's tv_sec and tv_usec are mainline's
// vrpn_int32: 0xffffffff seconds is one second before 1970, not 2106.
func TestVRPNLogTimeSigned(t *testing.T) {
	b := vrpnlogenc.AppendRaw(bytes.Clone(vrpnlogenc.Cookie("07.38", 0)), 3, 0, 0xffffffff, 250000, 0, 0, nil)
	gotp, err := readBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(-1, 250_000_000).UTC(); len(gotp) != 1 || !gotp[0].Time.Equal(want) {
		t.Fatalf("%d packets, the first at %v; want one at %v", len(gotp), gotp[0].Time, want)
	}
}
