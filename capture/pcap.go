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

// lengthOrder says where a record header keeps the captured and original
// lengths. Version 2.3 swapped them to match the BPF header; files of
// earlier versions (and DG/UX's 543.0) have the original length first,
// and some 2.3 files were written in the old order. libpcap's sf-pcap.c
// and tshark read them so; so do we.
type lengthOrder uint8

const (
	lengthsInOrder lengthOrder = iota // 2.4: captured, then original
	lengthsSwapped                    // before 2.3, and 543.0
	lengthsMaybe                      // 2.3: swapped when captured > original
)

// Link-type field of the pcap file header (draft-ietf-opsawg-pcap, and
// libpcap's LT_* macros): bits 0-15 the link type, 16-25 reserved (must be
// zero), bit 26 "FCS length present", bit 27 unused, bits 28-31 the FCS
// length.
const pcapLinkReserved = 0x03FF0000

// pcapReader is the Source for classic pcap files.
type pcapReader struct {
	in     *input
	be     bool
	nanos  bool
	lt     LinkType
	maxCap uint32
	swap   lengthOrder
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
	// Versions as libpcap accepts them: 2.0 to 2.4, and 543.0 (DG/UX
	// tcpdump). tshark also reads 2.5 and later majors; libpcap, and so
	// tcpdump, reject them, and so do we.
	major, minor := r.u16(h[4:]), r.u16(h[6:])
	switch {
	case major == 2 && minor <= 2, major == 543 && minor == 0:
		r.swap = lengthsSwapped
	case major == 2 && minor == 3:
		r.swap = lengthsMaybe
	case major == 2 && minor == 4:
	default:
		return nil, &FileError{Path: in.name, Offset: 4, Err: fmt.Errorf("unsupported pcap version %d.%d (libpcap reads 2.0 to 2.4, and 543.0)", major, minor)}
	}
	snaplen := r.u32(h[16:])
	// The link-type field's upper bits carry the FCS length and flag,
	// which are kept out of the link type, and reserved bits, which tshark
	// refuses to read past.
	link := r.u32(h[20:])
	if link&pcapLinkReserved != 0 {
		return nil, &FileError{Path: in.name, Offset: 20, Err: fmt.Errorf("link-type field 0x%08x has reserved bits set (0x%08x; bits 16-25 must be zero)", link, link&pcapLinkReserved)}
	}
	r.lt = LinkType(link & 0xffff)
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
	if r.swap == lengthsSwapped || r.swap == lengthsMaybe && caplen > origlen {
		caplen, origlen = origlen, caplen
	}
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
