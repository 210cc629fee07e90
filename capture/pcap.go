package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Classic pcap format (draft-ietf-opsawg-pcap): a 24-byte file header, then
// records of a 16-byte header (seconds, microseconds or nanoseconds,
// captured length, original length) followed by the captured bytes.
const (
	pcapFileHeaderLen   = 24
	pcapRecordHeaderLen = 16
)

// pcapReader is the Source for classic pcap files.
type pcapReader struct {
	in     *input
	be     bool
	nanos  bool
	lt     LinkType
	maxCap uint32
	pkt    Packet
	err    error // sticky: io.EOF or a *FileError
}

func newPcapReader(in *input) (*pcapReader, error) {
	n := in.fill(pcapFileHeaderLen)
	if n < pcapFileHeaderLen {
		return nil, in.shortErr(0, func() error {
			return fmt.Errorf("truncated pcap file header: %d bytes needed, %d present", pcapFileHeaderLen, n)
		})
	}
	h := in.peek(pcapFileHeaderLen)
	r := &pcapReader{in: in}
	switch [4]byte(h) {
	case magicPcapUsBE:
		r.be = true
	case magicPcapNsLE:
		r.nanos = true
	case magicPcapNsBE:
		r.be, r.nanos = true, true
	}
	major, minor := r.u16(h[4:]), r.u16(h[6:])
	if major != 2 {
		return nil, &FileError{Path: in.name, Offset: 4, Err: fmt.Errorf("unsupported pcap version %d.%d (only 2.x is defined)", major, minor)}
	}
	snaplen := r.u32(h[16:])
	// The link-type field's upper bits carry the FCS length and flag
	// (bits 26-31) and reserved bits; the link type is the low 16 bits.
	r.lt = LinkType(r.u32(h[20:]) & 0xffff)
	r.maxCap = max(defaultMaxCaplen, min(snaplen, maxBlockLen-pcapRecordHeaderLen))
	in.skip(pcapFileHeaderLen)
	r.pkt.LinkType = r.lt
	return r, nil
}

func (r *pcapReader) u16(b []byte) uint16 {
	if r.be {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *pcapReader) u32(b []byte) uint32 {
	if r.be {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *pcapReader) fail(off int64, err error) error {
	r.err = &FileError{Path: r.in.name, Offset: off, Err: err}
	return r.err
}

// Next implements Source.
func (r *pcapReader) Next() (*Packet, error) {
	if r.err != nil {
		return nil, r.err
	}
	in := r.in
	off := in.pos()
	n := in.fill(pcapRecordHeaderLen)
	if n < pcapRecordHeaderLen {
		if n == 0 && in.atEOF() {
			r.err = io.EOF
			return nil, io.EOF
		}
		r.err = in.shortErr(off, func() error {
			return fmt.Errorf("truncated packet record header: %d bytes needed, %d remain", pcapRecordHeaderLen, n)
		})
		return nil, r.err
	}
	h := in.peek(pcapRecordHeaderLen)
	sec, frac := r.u32(h), r.u32(h[4:])
	caplen, origlen := r.u32(h[8:]), r.u32(h[12:])
	if caplen > r.maxCap {
		return nil, r.fail(off, fmt.Errorf("packet record says %d captured bytes, more than the limit of %d", caplen, r.maxCap))
	}
	need := pcapRecordHeaderLen + int(caplen)
	if n = in.fill(need); n < need {
		r.err = in.shortErr(off, func() error {
			return fmt.Errorf("truncated packet record: header says %d bytes, %d remain", caplen, n-pcapRecordHeaderLen)
		})
		return nil, r.err
	}
	rec := in.peek(need)
	in.skip(need)
	ns := int64(frac)
	if !r.nanos {
		ns *= 1000
	}
	p := &r.pkt
	p.Time = time.Unix(int64(sec), ns).UTC()
	p.Data = rec[pcapRecordHeaderLen:]
	p.Length = int(max(origlen, caplen))
	return p, nil
}

// Close implements Source.
func (r *pcapReader) Close() error {
	if r.err == nil {
		r.err = errClosed(r.in)
	}
	return r.in.close()
}

// Progress implements Progresser.
func (r *pcapReader) Progress() (done, total int64) { return r.in.progress() }

func errClosed(in *input) error {
	return &FileError{Path: in.name, Offset: in.pos(), Err: errors.New("read after Close")}
}
