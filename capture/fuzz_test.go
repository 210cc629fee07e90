package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// checkReader reads b to the end and asserts the reader's invariants: the
// constructor fails only with a *FileError or ErrNotCapture and never
// returns a source with an error; every packet has Length >= len(Data),
// len(Data) within the block cap, a valid direction and an interface index
// below the number of blocks read; Next ends with io.EOF or a *FileError,
// which is then sticky; reading terminates (every packet consumes at least
// 12 bytes); progress is monotonic and ends within the input. For a
// compressed input, offsets and sizes are bounded by the length of its
// content, decompressed independently (contentLen), and progress by the
// compressed length.
func checkReader(t *testing.T, b []byte) {
	limit := contentLen(b)
	src, err := NewReader(bytes.NewReader(b), "fuzz")
	if err != nil {
		var fe *FileError
		if src != nil {
			t.Fatal("source returned with an error")
		}
		if !errors.As(err, &fe) && !errors.Is(err, ErrNotCapture) {
			t.Fatalf("NewReader error %v (%T)", err, err)
		}
		if fe != nil && (fe.Offset < 0 || fe.Offset > limit) {
			t.Fatalf("error offset %d outside the %d-byte input", fe.Offset, limit)
		}
		return
	}
	defer src.Close()
	pr := src.(Progresser)
	var last int64
	for n := 0; ; n++ {
		if int64(n) > limit/12+1 {
			t.Fatalf("%d packets from %d bytes: reading does not terminate", n, limit)
		}
		p, err := src.Next()
		done, _ := pr.Progress()
		if done < last || done > int64(len(b)) {
			t.Fatalf("progress %d after %d, input %d bytes", done, last, len(b))
		}
		last = done
		if err != nil {
			var fe *FileError
			if err != io.EOF && !errors.As(err, &fe) {
				t.Fatalf("Next error %v (%T), want io.EOF or *FileError", err, err)
			}
			if fe != nil && (fe.Offset < 0 || fe.Offset > limit) {
				t.Fatalf("error offset %d outside the %d-byte input", fe.Offset, limit)
			}
			if p != nil {
				t.Fatal("packet returned with an error")
			}
			if _, err2 := src.Next(); err2 != err {
				t.Fatalf("error not sticky: %v then %v", err, err2)
			}
			return
		}
		// A VRPN log entry's re-framed Data adds up to 7 bytes of padding.
		slack := int64(0)
		if p.LinkType == LinkVRPNLog {
			slack = vrpnAlign - 1
		}
		if len(p.Data) > maxBlockLen || int64(len(p.Data)) > limit+slack {
			t.Fatalf("packet of %d bytes from a %d-byte input", len(p.Data), limit)
		}
		if p.Length < len(p.Data) {
			t.Fatalf("Length %d < len(Data) %d", p.Length, len(p.Data))
		}
		if p.Direction > DirOutbound {
			t.Fatalf("direction %d", p.Direction)
		}
		if (p.Time.Before(minTime) || p.Time.After(maxTime)) && !(p.NoTime && p.Time.IsZero()) || p.Time.Location() != time.UTC {
			t.Fatalf("time %v outside the range of UnixNano", p.Time)
		}
		if p.Interface < 0 || p.Interface >= maxIfaceBytes/ifaceCost {
			t.Fatalf("interface %d", p.Interface)
		}
	}
}

func FuzzPcap(f *testing.F) {
	if b, err := os.ReadFile("testdata/b_udp_tcp.pcap"); err == nil {
		f.Add(b[:min(len(b), 2000)])
	}
	f.Add(threePcap())
	f.Add(threePcap()[:90])
	f.Add(newPcapFile(bigEndian, true, 0, 1).record(1, 2, []byte("be"), 2).buf)
	f.Add(newPcapFile(littleEndian, false, 4, 0x14000065).record(1, 2, []byte("abcdef"), 1).buf)
	f.Add([]byte{})
	f.Fuzz(checkReader)
}

func FuzzPcapng(f *testing.F) {
	if b, err := os.ReadFile("testdata/b_udp_tcp.pcapng"); err == nil {
		f.Add(b[:min(len(b), 2000)])
	}
	f.Add(threeNg().buf)
	g := newNgFile(bigEndian).idb(147, 0, ngOpt(bigEndian, 2, []byte("tty")), ngOpt(bigEndian, 9, []byte{0x80 | 20}),
		ngOpt(bigEndian, 14, bigEndian.AppendUint64(nil, 7)))
	g.epb(0, 12345, []byte("abc"), 3, g.flags(2)).spb(5, []byte("hello")).block(4, make([]byte, 8))
	g.shb(littleEndian).idb(1, 0, ngOpt(littleEndian, 9, []byte{19})).epb(0, 1<<63, []byte("x"), 1)
	f.Add(g.buf)
	f.Add(newNgFile(littleEndian).buf)
	f.Fuzz(checkReader)
}

// contentLen is len(b), or for a compressed b the length of its content as
// decompressed by the libraries directly (up to a damage), at most 1 GiB.
func contentLen(b []byte) int64 {
	if len(b) < 4 {
		return int64(len(b))
	}
	var rs []io.Reader
	switch compression([4]byte(b)) {
	case "":
		return int64(len(b))
	case formatGzip:
		if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
			rs = append(rs, zr)
		}
	case formatZstd, formatSkippable:
		if zd, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1)); err == nil {
			defer zd.Close()
			rs = append(rs, zd)
		}
		rs = append(rs, lz4.NewReader(bytes.NewReader(b)))
	case formatLZ4:
		rs = append(rs, lz4.NewReader(bytes.NewReader(b)))
	}
	var n int64
	for _, r := range rs {
		m, _ := io.Copy(io.Discard, io.LimitReader(r, 1<<30))
		n = max(n, m)
	}
	return n
}

// FuzzCompressed runs checkReader on compressed captures: gzip, zstd and
// lz4 (frame and legacy), whole, cut short, concatenated, and behind a
// skippable frame.
func FuzzCompressed(f *testing.F) {
	var tb testing.TB = f
	pcap, ng := threePcap(), threeNg().buf
	if b, err := os.ReadFile("testdata/b_udp_tcp.pcapng"); err == nil {
		ng = b[:min(len(b), 3000)]
	}
	skip := []byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3}
	for _, c := range []func(testing.TB, []byte) []byte{gzipLib, gzipStd, zstdLib, lz4Lib(), lz4Lib(lz4.LegacyOption(true)), lz4Lib(lz4.BlockChecksumOption(true))} {
		for _, b := range [][]byte{pcap, ng} {
			z := c(tb, b)
			f.Add(z)
			f.Add(z[:len(z)*2/3])
			f.Add(append(bytes.Clone(z), c(tb, b)...))
			f.Add(append(bytes.Clone(skip), z...))
		}
	}
	f.Add(gzipLib(tb, gzipLib(tb, pcap)))
	f.Add(zstdLib(tb, nil))
	f.Fuzz(checkReader)
}
