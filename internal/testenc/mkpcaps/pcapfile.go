package main

import (
	"bytes"
	"encoding/binary"
	"time"
)

// frame is one captured frame for the file writers.
type frame struct {
	t    time.Time
	data []byte
	orig int // original length (>= len(data))
}

// pcapFile returns a classic pcap file (little-endian, microsecond
// timestamps): the 24-byte global header, then a 16-byte record header
// (seconds, microseconds, captured length, original length) before each
// frame.
func pcapFile(linkType uint32, frames []frame) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	hdr := make([]byte, 24)
	le.PutUint32(hdr[0:], 0xa1b2c3d4) // magic, microsecond resolution
	le.PutUint16(hdr[4:], 2)          // version 2.4
	le.PutUint16(hdr[6:], 4)
	// thiszone and sigfigs are 0
	le.PutUint32(hdr[16:], 262144) // snaplen
	le.PutUint32(hdr[20:], linkType)
	b.Write(hdr)
	rec := make([]byte, 16)
	for _, f := range frames {
		us := f.t.UnixMicro()
		le.PutUint32(rec[0:], uint32(us/1e6))
		le.PutUint32(rec[4:], uint32(us%1e6))
		le.PutUint32(rec[8:], uint32(len(f.data)))
		le.PutUint32(rec[12:], uint32(max(f.orig, len(f.data))))
		b.Write(rec)
		b.Write(f.data)
	}
	return b.Bytes()
}

// pcapng block types and option codes used here.
const (
	ngSHB = 0x0A0D0D0A
	ngIDB = 0x00000001
	ngEPB = 0x00000006

	ngOptEnd      = 0
	ngOptComment  = 1
	ngShbUserAppl = 4
	ngIfName      = 2
	ngIfTsresol   = 9
)

// ngOption appends one option (code, length, value padded to 4 bytes).
func ngOption(b []byte, code uint16, val []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint16(b, code)
	b = le.AppendUint16(b, uint16(len(val)))
	b = append(b, val...)
	return append(b, make([]byte, (4-len(val)%4)%4)...)
}

// ngBlock frames a block body: type, total length, body, total length.
func ngBlock(typ uint32, body []byte) []byte {
	le := binary.LittleEndian
	n := uint32(12 + len(body))
	b := le.AppendUint32(nil, typ)
	b = le.AppendUint32(b, n)
	b = append(b, body...)
	return le.AppendUint32(b, n)
}

// pcapngFile returns a little-endian pcapng file with one section (SHB),
// one interface (IDB, named ifName, nanosecond timestamps) and an Enhanced
// Packet Block per frame.
func pcapngFile(linkType uint16, ifName, comment string, frames []frame) []byte {
	le := binary.LittleEndian
	var out []byte

	shb := le.AppendUint32(nil, 0x1A2B3C4D) // byte-order magic
	shb = le.AppendUint16(shb, 1)           // major
	shb = le.AppendUint16(shb, 0)           // minor
	shb = le.AppendUint64(shb, ^uint64(0))  // section length: not given
	shb = ngOption(shb, ngOptComment, []byte(comment))
	shb = ngOption(shb, ngShbUserAppl, []byte("dissect internal/testenc/mkpcaps"))
	shb = ngOption(shb, ngOptEnd, nil)
	out = append(out, ngBlock(ngSHB, shb)...)

	idb := le.AppendUint16(nil, linkType)
	idb = le.AppendUint16(idb, 0)      // reserved
	idb = le.AppendUint32(idb, 262144) // snaplen
	idb = ngOption(idb, ngIfName, []byte(ifName))
	idb = ngOption(idb, ngIfTsresol, []byte{9}) // 10^-9 s
	idb = ngOption(idb, ngOptEnd, nil)
	out = append(out, ngBlock(ngIDB, idb)...)

	for _, f := range frames {
		ns := uint64(f.t.UnixNano())
		epb := le.AppendUint32(nil, 0) // interface 0
		epb = le.AppendUint32(epb, uint32(ns>>32))
		epb = le.AppendUint32(epb, uint32(ns))
		epb = le.AppendUint32(epb, uint32(len(f.data)))
		epb = le.AppendUint32(epb, uint32(max(f.orig, len(f.data))))
		epb = append(epb, f.data...)
		for len(epb)%4 != 0 {
			epb = append(epb, 0)
		}
		out = append(out, ngBlock(ngEPB, epb)...)
	}
	return out
}
