package capture

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// encoder compresses a capture: either a CLI tool (the reference
// implementation, independent of the decoders under test) or a library
// writer.
type encoder struct {
	name   string
	format string
	tool   []string                            // command reading stdin, writing stdout; nil for lib
	lib    func(t testing.TB, b []byte) []byte // nil for a tool
}

// compress returns b compressed by e, or skips t when e's tool is missing.
func (e encoder) compress(t testing.TB, b []byte) []byte {
	t.Helper()
	if e.lib != nil {
		return e.lib(t, b)
	}
	if _, err := exec.LookPath(e.tool[0]); err != nil {
		t.Skipf("%s not installed (apt-get install %s): %v", e.tool[0], e.tool[0], err)
	}
	cmd := exec.Command(e.tool[0], e.tool[1:]...)
	cmd.Stdin = bytes.NewReader(b)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", e.name, err, errb.String())
	}
	return out
}

func gzipLib(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipStd uses the standard library's encoder, independent of klauspost's.
func gzipStd(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := stdgzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdLib(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func lz4Lib(opts ...lz4.Option) func(t testing.TB, b []byte) []byte {
	return func(t testing.TB, b []byte) []byte {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(opts...); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
}

var encoders = []encoder{
	{name: "gzip-cli", format: formatGzip, tool: []string{"gzip", "-c"}},
	{name: "zstd-cli", format: formatZstd, tool: []string{"zstd", "-q", "-c"}},
	{name: "zstd-cli-long", format: formatZstd, tool: []string{"zstd", "-q", "-c", "--long"}},
	{name: "lz4-cli", format: formatLZ4, tool: []string{"lz4", "-q", "-c"}},
	{name: "lz4-cli-64k", format: formatLZ4, tool: []string{"lz4", "-q", "-c", "-B4"}},
	{name: "lz4-cli-legacy", format: formatLZ4, tool: []string{"lz4", "-q", "-c", "-l"}},
	{name: "gzip-stdlib", format: formatGzip, lib: gzipStd},
	{name: "gzip-lib", format: formatGzip, lib: gzipLib},
	{name: "zstd-lib", format: formatZstd, lib: zstdLib},
	{name: "lz4-lib", format: formatLZ4, lib: lz4Lib()},
	{name: "lz4-lib-64k", format: formatLZ4, lib: lz4Lib(lz4.BlockSizeOption(lz4.Block64Kb))},
	{name: "lz4-lib-legacy", format: formatLZ4, lib: lz4Lib(lz4.LegacyOption(true))},
}

func encoderNamed(t testing.TB, name string) encoder {
	for _, e := range encoders {
		if e.name == name {
			return e
		}
	}
	t.Fatalf("no encoder %q", name)
	return encoder{}
}

func shippedCaptures(t *testing.T) []string {
	var files []string
	for _, g := range []string{"../pcaps/*.pcap", "../pcaps/*.pcapng", "testdata/*.pcap", "testdata/*.pcapng"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d shipped captures: %v", len(files), files)
	}
	return files
}

// readCompressedFile reads path with OpenFile and checks that progress ends
// at the (compressed) file's size.
func readCompressedFile(t *testing.T, path string) ([]got, error) {
	t.Helper()
	src, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	pr := src.(Progresser)
	var last int64
	var pkts []got
	for {
		p, err := src.Next()
		done, total := pr.Progress()
		if done < last || done > total {
			t.Fatalf("progress %d of %d after %d", done, total, last)
		}
		last = done
		if err == io.EOF {
			break
		}
		if err != nil {
			return pkts, err
		}
		pkts = append(pkts, copyPacket(p))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if done, total := pr.Progress(); done != st.Size() || total != st.Size() {
		t.Errorf("Progress() = %d, %d at the end; want the compressed size %d, %d", done, total, st.Size(), st.Size())
	}
	return pkts, nil
}

// TestCompressedShippedCaptures compresses every shipped capture with every
// encoder (CLI tools when installed, and library writers) and checks that
// the packets read (count, timestamps, data, lengths, interfaces) are those
// of the uncompressed file, from a file (progress ending at the compressed
// size) and from a reader (stdin).
func TestCompressedShippedCaptures(t *testing.T) {
	dir := t.TempDir()
	files := shippedCaptures(t)
	for _, e := range encoders {
		t.Run(e.name, func(t *testing.T) {
			for _, path := range files {
				want := readFile(t, path)
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				z := e.compress(t, raw)
				if f := compression([4]byte(z)); f != e.format {
					t.Fatalf("%s: %s output detected as %q, want %q", path, e.name, f, e.format)
				}
				zpath := filepath.Join(dir, filepath.Base(path)+"."+e.name)
				if err := os.WriteFile(zpath, z, 0o644); err != nil {
					t.Fatal(err)
				}
				pkts, err := readCompressedFile(t, zpath)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				sameGot(t, pkts, want)

				pkts, err = readBytes(t, z)
				if err != nil {
					t.Fatalf("%s via a reader: %v", path, err)
				}
				sameGot(t, pkts, want)
			}
		})
	}
}

// bigCapture builds a pcap of about n bytes whose packets vary (so that it
// compresses into several blocks), and the packets it holds.
func bigCapture(n int) ([]byte, []got) {
	f := newPcapFile(binary.LittleEndian, false, 65535, 1)
	var want []got
	x := uint32(1)
	for i := 0; len(f.buf) < n; i++ {
		data := make([]byte, 60+i%1400)
		for j := range data {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			data[j] = byte(x % 7) // compressible, but not trivially
		}
		f.record(uint32(1000+i), uint32(i%1000000), data, uint32(len(data)))
		want = append(want, got{Time: time.Unix(int64(1000+i), int64(i%1000000)*1000).UTC(), LinkType: 1, Data: string(data), Length: len(data)})
	}
	return f.buf, want
}

// recordEnd returns the decompressed offset after the first k records of a
// capture built by bigCapture.
func recordEnd(want []got, k int) int64 {
	off := int64(pcapFileHeaderLen)
	for _, g := range want[:k] {
		off += pcapRecordHeaderLen + int64(len(g.Data))
	}
	return off
}

// TestCompressedTruncated cuts compressed captures in the middle: the
// packets of the blocks before the cut are delivered (a zstd or lz4 block,
// up to 128 KiB or 4 MiB of capture, is decompressed whole or not at all;
// so lz4 is tested with 64 KiB blocks), then a *FileError
// naming the file, at the offset of the first record not delivered, wraps a
// *DecompressError with the compressed offset and io.ErrUnexpectedEOF.
func TestCompressedTruncated(t *testing.T) {
	raw, want := bigCapture(2 << 20)
	dir := t.TempDir()
	for _, name := range []string{"gzip-cli", "zstd-cli", "lz4-cli-64k", "gzip-lib", "zstd-lib", "lz4-lib-64k"} {
		t.Run(name, func(t *testing.T) {
			e := encoderNamed(t, name)
			z := e.compress(t, raw)
			cut := len(z) * 3 / 4
			path := filepath.Join(dir, "cut."+name)
			if err := os.WriteFile(path, z[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			pkts, err := readAll(t, src)
			if len(pkts) == 0 || len(pkts) >= len(want) {
				t.Fatalf("%d packets of %d before the cut", len(pkts), len(want))
			}
			sameGot(t, pkts, want[:len(pkts)])
			var fe *FileError
			var de *DecompressError
			if !errors.As(err, &fe) || !errors.As(err, &de) {
				t.Fatalf("error %v (%T), want a *FileError wrapping a *DecompressError", err, err)
			}
			if fe.Path != path || !strings.HasPrefix(err.Error(), path+": at byte ") {
				t.Errorf("error %q does not name %s", err, path)
			}
			if off := recordEnd(want, len(pkts)); fe.Offset != off {
				t.Errorf("error at byte %d, want %d (the first record not delivered)", fe.Offset, off)
			}
			if de.Format != e.format || de.CompressedOffset <= 0 || de.CompressedOffset > int64(cut) ||
				de.Offset < fe.Offset || de.Offset >= int64(len(raw)) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("DecompressError %+v: want format %s, compressed offset in (0, %d], decompressed offset in [%d, %d), unexpected EOF",
					de, e.format, cut, fe.Offset, len(raw))
			}
			if !strings.Contains(err.Error(), e.format+" stream truncated at compressed byte ") {
				t.Errorf("error %q", err)
			}
			t.Logf("%d of %d packets: %v", len(pkts), len(want), err)
		})
	}
}

// TestCompressedDamaged: a compressed stream with damage in the middle or
// in its trailing checksum, or garbage right after the magic number, gives
// a *FileError (never a panic) after at most the packets written. (Packets
// decompressed before a checksum mismatch is found are delivered, as gzip
// -d writes them out; the legacy lz4 format has no checksum at all.)
func TestCompressedDamaged(t *testing.T) {
	raw, want := bigCapture(1 << 20)
	for _, name := range []string{"gzip-lib", "zstd-lib", "lz4-lib-64k", "lz4-lib-legacy"} {
		t.Run(name, func(t *testing.T) {
			e := encoderNamed(t, name)
			z := e.compress(t, raw)
			for _, at := range []int{len(z) / 2, len(z) - 6} {
				bad := bytes.Clone(z)
				for i := at; i < at+4; i++ {
					bad[i] ^= 0x5a
				}
				pkts, err := readBytes(t, bad)
				if len(pkts) > len(want) {
					t.Fatalf("%d packets, %d written", len(pkts), len(want))
				}
				var fe *FileError
				if err == nil && name == "lz4-lib-legacy" {
					continue
				}
				if !errors.As(err, &fe) {
					t.Errorf("damage at %d: error %v (%T), want a *FileError", at, err, err)
				}
			}
			garbage := append(bytes.Clone(z[:4]), bytes.Repeat([]byte{0xee}, 200)...)
			pkts, err := readBytes(t, garbage)
			var de *DecompressError
			if len(pkts) != 0 || !errors.As(err, &de) {
				t.Fatalf("garbage after the magic: %d packets, error %v", len(pkts), err)
			}
			wantFileError(t, err, 0, e.format+" stream damaged at compressed byte")
		})
	}
}

// TestCompressedConcatenated: concatenated gzip members, zstd frames and lz4
// frames are read as one stream, as gzip -d, zstd -d and lz4 -d do, and a
// leading skippable frame (zstd or lz4) is skipped.
func TestCompressedConcatenated(t *testing.T) {
	raw, want := bigCapture(300 << 10)
	skippable := func(n int) []byte {
		b := []byte{0x5a, 0x2a, 0x4d, 0x18}
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		return append(b, make([]byte, n)...)
	}
	for _, name := range []string{"gzip-cli", "gzip-lib", "gzip-stdlib", "zstd-cli", "zstd-lib", "lz4-cli", "lz4-lib"} {
		t.Run(name, func(t *testing.T) {
			e := encoderNamed(t, name)
			split := 1000 + len(raw)/3 // inside a record
			cat := append(e.compress(t, raw[:split]), e.compress(t, raw[split:])...)
			pkts, err := readBytes(t, cat)
			if err != nil {
				t.Fatal(err)
			}
			sameGot(t, pkts, want)
			if e.format == formatGzip {
				return
			}
			pkts, err = readBytes(t, append(skippable(70000), cat...))
			if err != nil {
				t.Fatal(err)
			}
			sameGot(t, pkts, want)
		})
	}
}

// TestCompressedNotCapture: compressed content that is not a capture, a
// capture compressed twice, and empty compressed content give one clear
// error naming the file.
func TestCompressedNotCapture(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	text := write("text.gz", gzipStd(t, []byte("hello, world\n")))
	_, err := OpenFile(text)
	if want := text + ": gzip-compressed, but the content is not a capture: not a pcap, pcapng or VRPN log file (starts with 68 65 6c 6c)"; !errors.Is(err, ErrNotCapture) || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	twice := write("twice.pcap.zst.gz", gzipLib(t, zstdLib(t, threePcap())))
	_, err = OpenFile(twice)
	if want := twice + ": gzip-compressed, but the content is not a capture: not a pcap, pcapng or VRPN log file (it is zstd-compressed again: starts with 28 b5 2f fd)"; !errors.Is(err, ErrNotCapture) || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	_, err = NewReader(bytes.NewReader(lz4Lib()(t, nil)), "stdin")
	wantFileError(t, err, 0, "empty lz4-compressed content: no capture header")
	_, err = NewReader(bytes.NewReader(zstdLib(t, []byte("ab"))), "stdin")
	wantFileError(t, err, 0, "zstd-compressed content of 2 bytes is too short to be a capture")
	_, err = NewReader(bytes.NewReader([]byte{0xfd, '7', 'z', 'X', 'Z', 0}), "stdin")
	if !errors.Is(err, ErrNotCapture) || !strings.Contains(err.Error(), "xz-compressed, which dissect does not read") {
		t.Errorf("xz: error %v", err)
	}
}

// TestCompressedBomb: a small compressed file that expands to a large
// capture is read in bounded memory, and one whose record claims a huge
// length is refused by the capture reader's cap, not buffered.
func TestCompressedBomb(t *testing.T) {
	const records = 4 << 20 // 64 MiB of empty records
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(newPcapFile(binary.LittleEndian, false, 65535, 1).buf)
	zero := make([]byte, 64<<10)
	for range records * pcapRecordHeaderLen / len(zero) {
		zw.Write(zero)
	}
	zw.Close()
	bomb := buf.Bytes()
	hdr := newPcapFile(binary.LittleEndian, false, 0xffffffff, 1).recordLen(1, 0, 0xffffffff, 0xffffffff, nil).buf
	huge := gzipLib(t, append(hdr, make([]byte, 32<<20)...))

	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	src, err := NewReader(bytes.NewReader(bomb), "bomb")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if _, err := src.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
	}
	src.Close()
	runtime.ReadMemStats(&m1)
	if n != records {
		t.Errorf("%d packets, want %d", n, records)
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 32<<20 {
		t.Errorf("reading %d bytes compressed to %d allocated %d bytes", records*16, len(bomb), a)
	}
	t.Logf("%d-byte zstd file, %d packets, %d bytes allocated", len(bomb), n, m1.TotalAlloc-m0.TotalAlloc)

	pkts, err := readBytes(t, huge)
	if len(pkts) != 0 {
		t.Errorf("%d packets", len(pkts))
	}
	wantFileError(t, err, pcapFileHeaderLen, "more than the limit")
}
