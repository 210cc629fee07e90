package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

var (
	bigEndian    = binary.BigEndian
	littleEndian = binary.LittleEndian
)

// TestPcapByteOrdersAndResolutions reads hand-built pcap files in both byte
// orders and both resolutions.
func TestPcapByteOrdersAndResolutions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bo    order
		nanos bool
		magic string // first four bytes, from the pcap spec
	}{
		{"LE us", littleEndian, false, "d4c3b2a1"},
		{"BE us", bigEndian, false, "a1b2c3d4"},
		{"LE ns", littleEndian, true, "4d3cb2a1"},
		{"BE ns", bigEndian, true, "a1b23c4d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Link-type field 0x14000065: link type 101 (raw IP) plus
			// FCS length 1 (bits 28-31) and the F bit (bit 26), which
			// must be masked off.
			f := newPcapFile(tc.bo, tc.nanos, 65535, 0x14000065)
			f.record(1000, 999, []byte("abc"), 3)
			f.record(4000000000, 1, []byte("hello"), 1500) // seconds beyond 2^31
			if got := hex.EncodeToString(f.buf[:4]); got != tc.magic {
				t.Fatalf("test encoder wrote magic %s", got)
			}
			unit := time.Microsecond
			if tc.nanos {
				unit = time.Nanosecond
			}
			want := []got{
				{Time: time.Unix(1000, 0).Add(999 * unit), LinkType: LinkRaw, Data: "abc", Length: 3},
				{Time: time.Unix(4000000000, 0).Add(unit), LinkType: LinkRaw, Data: "hello", Length: 1500},
			}
			pkts, err := readBytes(t, f.buf)
			if err != nil {
				t.Fatal(err)
			}
			sameGot(t, pkts, want)
		})
	}
}

// TestPcapCaplenAboveOrig checks that Length is never below len(Data), and
// that caplen above a small snaplen is accepted up to 256 KiB (libpcap
// accepts it too).
func TestPcapCaplenAboveOrig(t *testing.T) {
	f := newPcapFile(littleEndian, false, 4, 1)
	f.record(1, 0, []byte("abcdefgh"), 2)
	pkts, err := readBytes(t, f.buf)
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, pkts, []got{{Time: time.Unix(1, 0), LinkType: LinkEthernet, Data: "abcdefgh", Length: 8}})
}

// TestPcapLargePacket reads a packet larger than the read buffer, allowed
// by a large snaplen.
func TestPcapLargePacket(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 600<<10/16) // 600 KiB
	f := newPcapFile(littleEndian, true, 1<<20, 1)
	f.record(1, 2, []byte("x"), 1).record(3, 4, big, uint32(len(big))).record(5, 6, []byte("y"), 1)
	pkts, err := readBytes(t, f.buf)
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, pkts, []got{
		{Time: time.Unix(1, 2), LinkType: 1, Data: "x", Length: 1},
		{Time: time.Unix(3, 4), LinkType: 1, Data: string(big), Length: len(big)},
		{Time: time.Unix(5, 6), LinkType: 1, Data: "y", Length: 1},
	})
}

// threePcap is a valid pcap: header (24), records of 10, 20 and 30 bytes at
// offsets 24, 50 and 86; the file ends at 132.
func threePcap() []byte {
	f := newPcapFile(littleEndian, false, 65535, 1)
	f.record(10, 1, bytes.Repeat([]byte{1}, 10), 10)
	f.record(20, 2, bytes.Repeat([]byte{2}, 20), 20)
	f.record(30, 3, bytes.Repeat([]byte{3}, 30), 30)
	return f.buf
}

func TestPcapDamaged(t *testing.T) {
	full := threePcap()
	if len(full) != 132 {
		t.Fatalf("test file is %d bytes", len(full))
	}
	hugeCap := append([]byte(nil), full...)
	littleEndian.PutUint32(hugeCap[86+8:], 0x7fffffff)
	badVersion := append([]byte(nil), full...)
	littleEndian.PutUint16(badVersion[4:], 1)
	for _, tc := range []struct {
		name    string
		in      []byte
		open    bool // the error comes from NewReader
		packets int
		off     int64
		msg     string
	}{
		{"empty file", nil, true, 0, 0, "empty file"},
		{"three bytes", full[:3], true, 0, 0, "file of 3 bytes is too short"},
		{"truncated file header", full[:10], true, 0, 0, "truncated pcap file header: 24 bytes needed, 10 present"},
		{"bad version", badVersion, true, 0, 4, "unsupported pcap version 1.4"},
		{"truncated record header", full[:86+7], false, 2, 86, "truncated packet record header: 16 bytes needed, 7 remain"},
		{"truncated packet data", full[:86+16+5], false, 2, 86, "truncated packet record: header says 30 bytes, 5 remain"},
		{"truncated first record", full[:24+16], false, 0, 24, "truncated packet record: header says 10 bytes, 0 remain"},
		{"caplen over limit", hugeCap, false, 2, 86, "packet record says 2147483647 captured bytes, more than the limit of 262144"},
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
				if want := strings.Repeat(string(rune(i+1)), 10*(i+1)); p.Data != want {
					t.Errorf("packet %d is % x", i, p.Data)
				}
			}
			// The error is sticky.
			if _, err2 := src.Next(); err2 != err {
				t.Errorf("second Next after the error: %v, want %v", err2, err)
			}
		})
	}
}

// TestOpenFileErrors checks the errors of OpenFile for files on disk: they
// name the file.
func TestOpenFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	html := write("page.pcap", []byte("<!DOCTYPE html><html></html>"))
	_, err := OpenFile(html)
	if !errors.Is(err, ErrNotCapture) {
		t.Errorf("HTML file: error %v, want ErrNotCapture", err)
	}
	if want := html + ": not a pcap, pcapng or VRPN log file (starts with 3c 21 44 4f)"; err == nil || err.Error() != want {
		t.Errorf("HTML file: error %q, want %q", err, want)
	}

	gz := write("x.pcap.gz", []byte{0x1f, 0x8b, 0x08, 0x00, 0, 0})
	if _, err := OpenFile(gz); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("gzip file: error %v, want a gzip hint", err)
	}

	empty := write("empty.pcapng", nil)
	_, err = OpenFile(empty)
	wantFileError(t, err, 0, "empty file")
	if fe := (*FileError)(nil); errors.As(err, &fe) && fe.Path != empty {
		t.Errorf("empty file: path %q, want %q", fe.Path, empty)
	}

	cut := write("cut.pcap", threePcap()[:86+16+5])
	src, err := OpenFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = readAll(t, src)
	if want := cut + ": at byte 86: truncated packet record: header says 30 bytes, 5 remain"; err == nil || err.Error() != want {
		t.Errorf("cut file: error %q, want %q", err, want)
	}

	if _, err := OpenFile(filepath.Join(dir, "missing.pcap")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want ErrNotExist", err)
	}
}

// TestHostileLengthMemory checks that a record claiming a huge length in
// a short file does not make the reader allocate that length.
func TestHostileLengthMemory(t *testing.T) {
	f := newPcapFile(littleEndian, false, 0xffffffff, 1) // snaplen allows 16 MiB
	f.recordLen(1, 0, 16<<20-16, 16<<20-16, bytes.Repeat([]byte{9}, 100))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readBytes(t, f.buf)
	runtime.ReadMemStats(&after)
	wantFileError(t, err, 24, "truncated packet record: header says 16777200 bytes, 100 remain")
	if n := after.TotalAlloc - before.TotalAlloc; n > 2<<20 {
		t.Errorf("reading a 140-byte file allocated %d bytes", n)
	}
}

func TestCloseEndsReading(t *testing.T) {
	for _, in := range [][]byte{threePcap(), newNgFile(littleEndian).idb(1, 0).epb(0, 1, []byte("a"), 1).buf} {
		src, err := NewReader(bytes.NewReader(in), "mem")
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
		if p, err := src.Next(); p != nil || err == nil {
			t.Errorf("Next after Close = %v, %v; want an error", p, err)
		}
	}
}

func TestHeaderOnly(t *testing.T) {
	for name, b := range map[string][]byte{
		"pcap":   threePcap()[:24],
		"pcapng": newNgFile(bigEndian).idb(1, 0).buf,
	} {
		pkts, err := readBytes(t, b)
		if err != nil || len(pkts) != 0 {
			t.Errorf("%s: %d packets, error %v; want none and io.EOF", name, len(pkts), err)
		}
	}
}

var errBoom = errors.New("boom")

// stallReader returns (0, nil) forever.
type stallReader struct{}

func (stallReader) Read([]byte) (int, error) { return 0, nil }

// TestReadErrors checks that an I/O error from the underlying reader ends
// reading with a *FileError at the record it interrupted, wrapping the
// cause.
func TestReadErrors(t *testing.T) {
	full := threePcap()
	for _, tc := range []struct {
		name string
		r    io.Reader
		err  error
	}{
		{"failing reader", io.MultiReader(bytes.NewReader(full[:100]), iotest.ErrReader(errBoom)), errBoom},
		{"stalled reader", io.MultiReader(bytes.NewReader(full[:100]), stallReader{}), io.ErrNoProgress},
	} {
		src, err := NewReader(tc.r, "mem")
		if err != nil {
			t.Fatal(err)
		}
		pkts, err := readAll(t, src)
		wantFileError(t, err, 86, "read error")
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v does not wrap %v", tc.name, err, tc.err)
		}
		if len(pkts) != 2 {
			t.Errorf("%s: %d packets before the error, want 2", tc.name, len(pkts))
		}
	}
}
