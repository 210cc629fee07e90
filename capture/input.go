package capture

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Why the readers are written here rather than taken from gopacket/pcapgo
// (the package comment lives in capture.go, which is a fixed contract):
//
//   - pcapgo's errors carry no byte offset, and a *FileError must name the
//     offset of the damaged record;
//   - pcapgo decodes epb_flags as little-endian even in big-endian sections,
//     and allocates for every packet that has epb_flags, even through
//     ZeroCopyReadPacketData;
//   - pcapgo's pcap reader rejects a record whose captured length exceeds
//     its original length, which tshark reads;
//   - ours are 2.5 to 10 times faster (docs/performance-4-13.md).
//
// (pcapgo v1.7.7 no longer allocates a record's claimed length up front,
// and reads records longer than the snap length up to 256 KiB, as we do.)
// pcapgo_defects_test.go checks each of these against the pcapgo in go.mod.
//
// Both formats are small; the readers below share one growable read buffer
// (input) and hand out packets that point into it, so steady-state reading
// does not allocate.

const (
	// readBufSize is the usual read buffer size, and the largest read.
	readBufSize = 512 << 10
	// minReadBufSize is the buffer an input of unknown size starts with.
	// A buffer smaller than readBufSize is replaced by one four times
	// larger (at most readBufSize) when it fills, so a small capture costs
	// a small buffer (allocating and clearing 512 KiB costs more than
	// reading a 10 KB capture) and a large one soon reads in large blocks.
	minReadBufSize = 16 << 10
	// maxBlockLen caps a pcapng block and a pcap record: longer ones are
	// reported as damage instead of being buffered.
	maxBlockLen = 16 << 20
	// defaultMaxCaplen is the largest captured length a pcap record may have
	// when the file's snaplen is smaller (libpcap's MAXIMUM_SNAPLEN).
	defaultMaxCaplen = 256 << 10
	// maxInterfaces caps the interfaces the pcapng writer takes. The
	// readers' limit is a memory budget per section (maxIfaceBytes).
	maxInterfaces = 1 << 16
	// maxZeroReads is how many (0, nil) reads in a row are taken as a stall.
	maxZeroReads = 100
)

// ErrNotCapture is wrapped by the error OpenFile and NewReader return when
// the input starts with neither a pcap nor a pcapng magic number nor a
// VRPN log's cookie, nor a compression format's (gzip, zstd, lz4) with one
// of those inside.
var ErrNotCapture = errors.New("not a pcap, pcapng or VRPN log file")

// input is a read buffer over an io.Reader that tracks the file offset of
// every buffered byte. The unread bytes are buf[start:end]; buf[0] is at
// file offset base. The buffer grows only as data actually arrives, so a
// record that claims a huge length in a short file costs no more memory
// than the file holds (at most twice it).
type input struct {
	name   string
	src    io.Reader
	closer io.Closer // nil when the caller owns src
	size   int64     // total bytes, 0 when unknown
	buf    []byte
	start  int
	end    int
	base   int64
	rerr   error // first error from src, io.EOF included
	// raw and dec are set when src decompresses a compressed capture: raw
	// is the compressed input, and progress is reported on it.
	raw *input
	dec *decompressor
}

func newInput(src io.Reader, name string, size int64, closer io.Closer) *input {
	return &input{
		name:   name,
		src:    src,
		closer: closer,
		size:   size,
		buf:    make([]byte, initialBufSize(size)),
	}
}

// initialBufSize is the first read buffer for an input of size bytes (0 when
// unknown): one byte more than the file, so that the read that finds its
// end needs no larger buffer, rounded up to 4 KiB; at most readBufSize.
func initialBufSize(size int64) int {
	if size <= 0 {
		return minReadBufSize
	}
	if size >= readBufSize {
		return readBufSize
	}
	return min(readBufSize, (int(size)+1+4095)&^4095)
}

// pos is the file offset of the next unread byte.
func (in *input) pos() int64 { return in.base + int64(in.start) }

// fill tries to buffer n unread bytes and returns how many are buffered,
// at most n. It returns fewer than n only at the end of the input or after
// a read error (kept in in.rerr). Growing or compacting the buffer
// invalidates slices of it taken earlier.
func (in *input) fill(n int) int {
	zero := 0
	for in.end-in.start < n && in.rerr == nil {
		if in.end == len(in.buf) {
			switch {
			case len(in.buf) < readBufSize:
				// A small buffer, and more input: enlarge it.
				in.realloc(min(4*len(in.buf), readBufSize))
			case in.start > 0:
				copy(in.buf, in.buf[in.start:in.end])
				in.base += int64(in.start)
				in.end -= in.start
				in.start = 0
			default:
				// The buffer holds one incomplete record: grow it, but no
				// more than double it per step.
				in.realloc(min(n, 2*len(in.buf)))
			}
		}
		m, err := in.src.Read(in.buf[in.end:])
		in.end += m
		if err != nil {
			in.rerr = err
		} else if m == 0 {
			zero++
			if zero >= maxZeroReads {
				in.rerr = io.ErrNoProgress
			}
		} else {
			zero = 0
		}
	}
	return min(n, in.end-in.start)
}

// realloc moves the unread bytes to the start of a new buffer of size
// bytes (more than they fill).
func (in *input) realloc(size int) {
	nb := make([]byte, size)
	in.end = copy(nb, in.buf[in.start:in.end])
	in.base += int64(in.start)
	in.start = 0
	in.buf = nb
}

// peek returns the next n buffered bytes; fill(n) must have returned n.
func (in *input) peek(n int) []byte { return in.buf[in.start : in.start+n : in.start+n] }

// skip consumes n buffered bytes.
func (in *input) skip(n int) { in.start += n }

// shortErr builds the error for a record at off that needed want bytes but
// found only got: a read error when there was one, else the message
// produced by describe (truncation).
func (in *input) shortErr(off int64, describe func() error) *FileError {
	if in.rerr != nil && in.rerr != io.EOF {
		var de *DecompressError
		if errors.As(in.rerr, &de) {
			return &FileError{Path: in.name, Offset: off, Err: in.rerr}
		}
		return &FileError{Path: in.name, Offset: off, Err: fmt.Errorf("read error: %w", in.rerr)}
	}
	return &FileError{Path: in.name, Offset: off, Err: describe()}
}

// atEOF reports whether the input ended cleanly with nothing unread.
func (in *input) atEOF() bool {
	return in.end == in.start && in.rerr == io.EOF
}

// progress is the bytes consumed of the input's size; for a compressed
// capture, the compressed bytes read of the compressed file's size.
func (in *input) progress() (done, total int64) {
	if in.raw != nil {
		return in.raw.progress()
	}
	return in.pos(), in.size
}

func (in *input) close() error {
	if in.dec != nil {
		in.dec.close()
		in.dec = nil
	}
	if in.raw != nil {
		return in.raw.close()
	}
	if in.closer == nil {
		return nil
	}
	c := in.closer
	in.closer = nil
	return c.Close()
}

// Read implements io.Reader for the compressed side of a compressed
// capture: it returns the buffered bytes, then reads src directly, so that
// pos is the count of bytes read. The buffer is dropped once drained.
func (in *input) Read(p []byte) (int, error) {
	if in.start < in.end {
		n := copy(p, in.buf[in.start:in.end])
		in.start += n
		if in.start == in.end {
			in.base += int64(in.end)
			in.buf, in.start, in.end = nil, 0, 0
		}
		return n, nil
	}
	if in.rerr != nil {
		return 0, in.rerr
	}
	n, err := in.src.Read(p)
	in.base += int64(n)
	in.rerr = err
	return n, err
}

// OpenFile opens the pcap, pcapng or VRPN log file at path. The format is
// recognised by its magic number (a VRPN log by its cookie), not by the
// file name. The returned Source reads the
// file in bounded memory, one record at a time into a reused buffer, and
// also implements Progresser (bytes consumed of the file's size; call it
// from the goroutine that calls Next). A file that is empty, or too short
// or too damaged to hold a capture header, gives a *FileError; a file that
// is not a capture gives an error wrapping ErrNotCapture that names the
// file and its first bytes.
//
// Compressed captures are read too, recognised by their magic number and
// decompressed as they are read (no temporary file): gzip (several
// members are read as one, as gzip -d does), zstd (several frames, and
// skippable frames; windows up to 128 MiB, as the zstd CLI) and lz4 (the
// frame format, and the legacy format of lz4 -l). Progress then counts the
// compressed bytes read of the compressed file's size. Offsets in errors
// are offsets in the decompressed capture; a damaged or truncated
// compressed stream gives a *FileError wrapping a *DecompressError, which
// also gives the compressed offset, after the packets decompressed before
// the damage. A compressed file whose content is not a capture (or is
// compressed again) gives an error wrapping ErrNotCapture.
//
// pcap: both byte orders, microsecond and nanosecond magic, the versions
// libpcap reads (2.0 to 2.4 and 543.0, with the record lengths in the order
// of their version); a link-type field with reserved bits (16-25) set is
// refused, as tshark refuses it; Interface is 0.
// pcapng: both byte orders, several sections of version 1.0 or 1.2 (as
// libpcap and tshark read), Enhanced, Simple and (obsolete) Packet Blocks;
// every other block type is skipped. Interfaces and their names are read
// up to 64 MiB of them per section. A Simple Packet Block has no
// timestamp: its Time is the previous packet's time in the file (the zero
// time when none came before) and NoTime is set. Timestamps beyond the
// range of UnixNano (1677-09-21 to 2262-04-11), if_tsoffset included,
// saturate at its bounds.
// VRPN log: the file mainline VRPN's connection logging writes, read as
// one VRPN stream (vrpnlog.go, [LinkVRPNLog]).
func OpenFile(path string) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var size int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	src, err := newSource(newInput(f, path, size, f), true)
	if err != nil {
		f.Close()
		return nil, err
	}
	return src, nil
}

// NewReader reads a pcap, pcapng or VRPN log capture from r, which is not
// closed by the Source's Close. name labels errors (e.g. "-" or "stdin").
// The Source implements Progresser with a total of 0. A compressed capture
// is read as by OpenFile; progress then counts the compressed bytes read.
func NewReader(r io.Reader, name string) (Source, error) {
	return newSource(newInput(r, name, 0, nil), true)
}

// Magic numbers as the first four bytes read in file order.
var (
	magicPcapUsLE = [4]byte{0xd4, 0xc3, 0xb2, 0xa1}
	magicPcapUsBE = [4]byte{0xa1, 0xb2, 0xc3, 0xd4}
	magicPcapNsLE = [4]byte{0x4d, 0x3c, 0xb2, 0xa1}
	magicPcapNsBE = [4]byte{0xa1, 0xb2, 0x3c, 0x4d}
	magicPcapng   = [4]byte{0x0a, 0x0d, 0x0d, 0x0a}
)

// newSource reads the capture in in, recognised by its magic number; a
// compressed one when decompress is set (in is then the compressed input).
func newSource(in *input, decompress bool) (Source, error) {
	n := in.fill(4)
	if n < 4 {
		return nil, in.shortErr(0, func() error {
			what := "file"
			if in.dec != nil {
				what = in.dec.format + "-compressed content"
			}
			if n == 0 {
				return fmt.Errorf("empty %s: no capture header", what)
			}
			return fmt.Errorf("%s of %d bytes is too short to be a capture", what, n)
		})
	}
	m := [4]byte(in.peek(4))
	switch m {
	case magicPcapUsLE, magicPcapUsBE, magicPcapNsLE, magicPcapNsBE:
		r, err := newPcapReader(in)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return r, nil
	case magicPcapng:
		r, err := newNgReader(in)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return r, nil
	case magicVRPNLog:
		if isVRPNLog(in) {
			r, err := newVRPNLogReader(in)
			if err != nil {
				return nil, err // not a typed nil in the interface
			}
			return r, nil
		}
	}
	if f := compression(m); f != "" {
		if decompress {
			return newCompressedSource(in, f)
		}
		return nil, fmt.Errorf("%s: %s-compressed, but the content is not a capture: %w (it is %s-compressed again: starts with % x)",
			in.name, in.dec.format, ErrNotCapture, f, m[:])
	}
	hint := ""
	if f := otherCompression(m); f != "" {
		hint = fmt.Sprintf("; it looks %s-compressed, which dissect does not read (it reads gzip, zstd and lz4): decompress it first", f)
	}
	if in.dec != nil {
		return nil, fmt.Errorf("%s: %s-compressed, but the content is not a capture: %w (starts with % x%s)", in.name, in.dec.format, ErrNotCapture, m[:], hint)
	}
	return nil, fmt.Errorf("%s: %w (starts with % x%s)", in.name, ErrNotCapture, m[:], hint)
}
