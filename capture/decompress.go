package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compressed captures (gzip, zstd, lz4) are recognised by their magic
// number, like the capture formats, and decompressed as the capture reader
// consumes them: nothing is written to disk and nothing is read ahead
// beyond one compressed block. The capture reader's caps (maxBlockLen,
// defaultMaxCaplen) apply to the decompressed bytes, so a zip bomb costs
// time, not memory. Memory held by the decompressors:
//
//   - gzip (DEFLATE): a 32 KiB window;
//   - zstd: the frame's window, refused above zstdMaxWindow, which is the
//     limit the zstd CLI decompresses without --memory (--long and
//     --ultra levels included); one block of at most 128 KiB;
//   - lz4: one block, of at most 4 MiB (8 MiB in the legacy format).
//
// The compressed stream is read through a bufio.Reader of compressedBufSize.

const (
	// zstdMaxWindow is the largest zstd window accepted: 128 MiB, the zstd
	// CLI's default decompression limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT 27).
	zstdMaxWindow = 1 << 27
	// compressedBufSize is the read buffer on the compressed stream.
	compressedBufSize = 64 << 10
	// maxSkippable caps the skippable frames skipped before the first
	// zstd or lz4 frame; they are skipped by reading, not buffered.
	maxSkippable = 1 << 30
)

// Compression formats, named as in messages.
const (
	formatGzip = "gzip"
	formatZstd = "zstd"
	formatLZ4  = "lz4"
	// formatSkippable is a stream that starts with a skippable frame,
	// which zstd and lz4 share; the frame after it tells which.
	formatSkippable = "zstd or lz4"
)

var (
	magicGzip      = [2]byte{0x1f, 0x8b}
	magicZstd      = [4]byte{0x28, 0xb5, 0x2f, 0xfd}
	magicLZ4       = [4]byte{0x04, 0x22, 0x4d, 0x18}
	magicLZ4Legacy = [4]byte{0x02, 0x21, 0x4c, 0x18} // lz4 -l
)

// isSkippable reports whether m is a skippable frame magic number
// (0x184D2A50 to 0x184D2A5F, little-endian), as zstd and lz4 define it.
func isSkippable(m [4]byte) bool {
	return m[0]&0xf0 == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18
}

// compression returns the compression format whose magic number starts m,
// or "" for none.
func compression(m [4]byte) string {
	switch {
	case [2]byte(m[:2]) == magicGzip:
		return formatGzip
	case m == magicZstd:
		return formatZstd
	case m == magicLZ4, m == magicLZ4Legacy:
		return formatLZ4
	case isSkippable(m):
		return formatSkippable
	}
	return ""
}

// otherCompression names compression formats that are recognised but not
// read, for the hint in the "not a capture" error.
func otherCompression(m [4]byte) string {
	switch {
	case m == [4]byte{0xfd, '7', 'z', 'X'}:
		return "xz"
	case m[0] == 'B' && m[1] == 'Z' && m[2] == 'h':
		return "bzip2"
	}
	return ""
}

// DecompressError is a compressed capture whose compressed stream is
// damaged or cut short. It is the Err of a *FileError, whose Offset is
// that of the record being read in the decompressed capture.
type DecompressError struct {
	Format string // "gzip", "zstd" or "lz4"
	// CompressedOffset is how many compressed bytes the decompressor had
	// consumed when it failed: the damage is at or before it.
	CompressedOffset int64
	// Offset is how many decompressed bytes came out before the failure:
	// the decompressed capture ends there.
	Offset int64
	Err    error
}

func (e *DecompressError) Error() string {
	what := "damaged"
	if errors.Is(e.Err, io.ErrUnexpectedEOF) {
		what = "truncated"
	}
	return fmt.Sprintf("%s stream %s at compressed byte %d (decompressed byte %d): %v",
		e.Format, what, e.CompressedOffset, e.Offset, e.Err)
}

func (e *DecompressError) Unwrap() error { return e.Err }

// decompressor is the io.Reader of the decompressed capture. It starts the
// decoder on the first Read, so that every failure of the compressed
// stream, its header included, surfaces as a read error at the decompressed
// offset it reached, with the packets before it delivered.
type decompressor struct {
	format string
	raw    *input // the compressed input; raw.pos() counts bytes read from it
	br     *bufio.Reader
	r      io.Reader // the decoder; nil before the first Read
	zd     *zstd.Decoder
	out    int64 // decompressed bytes returned
	err    error // sticky: io.EOF or a *DecompressError
}

func newDecompressor(raw *input, format string) *decompressor {
	return &decompressor{format: format, raw: raw, br: bufio.NewReaderSize(raw, compressedBufSize)}
}

// consumed is how many compressed bytes the decoder has taken.
func (d *decompressor) consumed() int64 { return d.raw.pos() - int64(d.br.Buffered()) }

func (d *decompressor) fail(err error) error {
	if errors.Is(err, io.EOF) {
		// A stream that ends inside a header or block.
		err = io.ErrUnexpectedEOF
	}
	d.err = &DecompressError{Format: d.format, CompressedOffset: d.consumed(), Offset: d.out, Err: err}
	return d.err
}

// start creates the decoder for d.format, past any leading skippable frames.
func (d *decompressor) start() error {
	if d.format == formatSkippable {
		if err := d.skipFrames(); err != nil {
			return err
		}
	}
	switch d.format {
	case formatGzip:
		zr, err := gzip.NewReader(d.br) // multistream: members are read as one
		if err != nil {
			return err
		}
		d.r = zr
	case formatZstd:
		zd, err := zstd.NewReader(d.br,
			zstd.WithDecoderConcurrency(1), // decode in the caller's goroutine
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(zstdMaxWindow),
			zstd.WithDecoderMaxMemory(zstdMaxWindow))
		if err != nil {
			return err
		}
		d.zd, d.r = zd, zd
	case formatLZ4:
		d.r = lz4.NewReader(d.br) // frame and legacy formats; one goroutine
	}
	return nil
}

// skipFrames reads past the skippable frames at the start of a zstd or lz4
// stream and sets d.format from the magic number after them. A stream of
// nothing but skippable frames is an empty zstd stream.
func (d *decompressor) skipFrames() error {
	var skipped int64
	for {
		m, err := d.br.Peek(4)
		if len(m) == 0 && err == io.EOF {
			d.format = formatZstd
			d.r = eofReader{}
			return nil
		}
		if err != nil {
			return err
		}
		switch f := compression([4]byte(m)); f {
		case formatZstd, formatLZ4:
			d.format = f
			return nil
		case formatSkippable:
		default:
			return fmt.Errorf("magic number % x after a skippable frame is neither zstd nor lz4", m)
		}
		h, err := d.br.Peek(8)
		if err != nil {
			return err
		}
		n := int64(binary.LittleEndian.Uint32(h[4:]))
		if skipped += 8 + n; skipped > maxSkippable {
			return fmt.Errorf("skippable frames longer than %d bytes", maxSkippable)
		}
		d.br.Discard(8)
		if k, err := d.br.Discard(int(n)); err != nil || int64(k) < n {
			return io.ErrUnexpectedEOF
		}
	}
}

// Read implements io.Reader.
func (d *decompressor) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.r == nil {
		if err := d.start(); err != nil {
			return 0, d.fail(err)
		}
	}
	n, err := d.r.Read(p)
	d.out += int64(n)
	switch {
	case err == io.EOF:
		d.err = io.EOF
	case err != nil:
		return n, d.fail(err)
	}
	return n, err
}

func (d *decompressor) close() {
	if d.zd != nil {
		d.zd.Close()
		d.zd = nil
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// newCompressedSource reads the capture compressed in raw (whose first
// bytes are format's magic number).
func newCompressedSource(raw *input, format string) (Source, error) {
	d := newDecompressor(raw, format)
	in := newInput(d, raw.name, 0, nil)
	in.raw, in.dec = raw, d
	src, err := newSource(in, false)
	if err != nil {
		d.close()
		return nil, err
	}
	return src, nil
}
