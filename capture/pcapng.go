package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"
)

// pcapng block types and option codes (draft-ietf-opsawg-pcapng).
const (
	blockSHB uint32 = 0x0A0D0D0A // Section Header Block
	blockIDB uint32 = 0x00000001 // Interface Description Block
	blockPB  uint32 = 0x00000002 // Packet Block (obsolete)
	blockSPB uint32 = 0x00000003 // Simple Packet Block
	blockEPB uint32 = 0x00000006 // Enhanced Packet Block

	byteOrderMagic = 0x1A2B3C4D

	optEndOfOpt   = 0
	optIfName     = 2  // IDB: if_name
	optIfTsresol  = 9  // IDB: if_tsresol
	optIfTsoffset = 14 // IDB: if_tsoffset
	optEpbFlags   = 2  // EPB: epb_flags (PB: pack_flags)

	// Minimum total lengths: header (8), fixed fields, trailing length (4).
	minSHBLen   = 28
	minIDBLen   = 20
	minEPBLen   = 32
	minPBLen    = 32
	minSPBLen   = 16
	minBlockLen = 12

	// maxIfaceBytes caps the memory the interfaces of one section take:
	// ifaceCost bytes each, plus their names. A section may have as many
	// interfaces, and names as long, as fit (about a million interfaces
	// without names); tshark sets no limit, but a file must not make us
	// hold an unbounded table.
	maxIfaceBytes = 64 << 20
	ifaceCost     = 64 // about unsafe.Sizeof(ngIface{}), rounded up
)

// ngIface is one Interface Description Block of the current section.
type ngIface struct {
	lt       LinkType
	snaplen  uint32
	name     string
	units    uint64 // timestamp units per second
	mul      uint64 // nanoseconds per unit when units divides 1e9, else 0
	tsoffset int64  // seconds added to every timestamp
}

// Timestamps saturate at the range of time.Time.UnixNano, which is what
// durations between packets and most consumers can handle: a timestamp,
// if_tsoffset included, before 1677-09-21T00:12:43.145224192Z or after
// 2262-04-11T23:47:16.854775807Z is read as that bound (tshark lets the
// sum wrap around instead). The bounds as seconds and nanoseconds:
const (
	minTimeSec, minTimeNs = -9223372037, 145224192 // math.MinInt64 ns
	maxTimeSec, maxTimeNs = 9223372036, 854775807  // math.MaxInt64 ns
	// secLimit bounds the seconds and the offset before they are added,
	// so the sum cannot overflow; it is far outside the range above.
	secLimit = 1 << 61
)

// time converts a raw 64-bit timestamp in the interface's units, plus the
// interface's if_tsoffset, saturating at minTime and maxTime.
func (f *ngIface) time(ts uint64) time.Time {
	sec, frac := ts/f.units, ts%f.units
	var ns uint64
	if f.mul != 0 {
		ns = frac * f.mul
	} else {
		// frac < units, so the quotient fits in 64 bits and Div64 cannot
		// panic.
		hi, lo := bits.Mul64(frac, 1e9)
		ns, _ = bits.Div64(hi, lo, f.units)
	}
	s := int64(min(sec, secLimit)) + min(max(f.tsoffset, -secLimit), secLimit)
	switch {
	case s < minTimeSec || s == minTimeSec && ns < minTimeNs:
		s, ns = minTimeSec, minTimeNs
	case s > maxTimeSec || s == maxTimeSec && ns > maxTimeNs:
		s, ns = maxTimeSec, maxTimeNs
	}
	return time.Unix(s, int64(ns)).UTC()
}

// ngReader is the Source for pcapng files.
type ngReader struct {
	in     *input
	be     bool
	ifaces []ngIface
	ifaceB int       // bytes the interfaces of this section take
	ifaceM int       // the limit of ifaceB: maxIfaceBytes (tests lower it)
	last   time.Time // time of the previous packet with a timestamp
	pkt    Packet
	err    error // sticky: io.EOF or a *FileError
}

func newNgReader(in *input) (*ngReader, error) {
	r := &ngReader{in: in, ifaceM: maxIfaceBytes}
	typ, b, off, err := r.block()
	if err != nil {
		return nil, err
	}
	if typ != blockSHB { // cannot happen: the magic was checked
		return nil, &FileError{Path: in.name, Offset: off, Err: errors.New("pcapng file does not start with a section header block")}
	}
	if err := r.section(b, off); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *ngReader) u16(b []byte) uint16 {
	if r.be {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *ngReader) u32(b []byte) uint32 {
	if r.be {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *ngReader) u64(b []byte) uint64 {
	if r.be {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *ngReader) fail(off int64, format string, args ...any) error {
	r.err = &FileError{Path: r.in.name, Offset: off, Err: fmt.Errorf(format, args...)}
	return r.err
}

// block reads the next whole block and returns its type, its bytes (header
// and trailing length included; valid until the next read) and its file
// offset. A section header switches the byte order before its length is
// decoded. At a clean end of input it returns io.EOF.
func (r *ngReader) block() (typ uint32, b []byte, off int64, err error) {
	in := r.in
	off = in.pos()
	n := in.fill(8)
	if n < 8 {
		if n == 0 && in.atEOF() {
			return 0, nil, off, io.EOF
		}
		return 0, nil, off, in.shortErr(off, func() error {
			return fmt.Errorf("truncated block header: 8 bytes needed, %d remain", n)
		})
	}
	typ = r.u32(in.peek(8))
	if typ == blockSHB { // the same in both byte orders
		if n = in.fill(12); n < 12 {
			return 0, nil, off, in.shortErr(off, func() error {
				return fmt.Errorf("truncated section header block: 12 bytes needed, %d remain", n)
			})
		}
		switch bom := in.peek(12)[8:]; {
		case binary.LittleEndian.Uint32(bom) == byteOrderMagic:
			r.be = false
		case binary.BigEndian.Uint32(bom) == byteOrderMagic:
			r.be = true
		default:
			return 0, nil, off, &FileError{Path: in.name, Offset: off,
				Err: fmt.Errorf("section header block has byte-order magic % x, want 1a 2b 3c 4d in either order", bom)}
		}
	}
	blen := r.u32(in.peek(8)[4:])
	switch {
	case blen%4 != 0:
		err = fmt.Errorf("block type 0x%08x has length %d, not a multiple of 4", typ, blen)
	case blen < minBlockLen:
		err = fmt.Errorf("block type 0x%08x has length %d, less than the minimum of %d", typ, blen, minBlockLen)
	case blen > maxBlockLen:
		err = fmt.Errorf("block type 0x%08x has length %d, more than the limit of %d", typ, blen, maxBlockLen)
	}
	if err != nil {
		return 0, nil, off, &FileError{Path: in.name, Offset: off, Err: err}
	}
	need := int(blen)
	if n = in.fill(need); n < need {
		return 0, nil, off, in.shortErr(off, func() error {
			return fmt.Errorf("truncated block: header says %d bytes, %d remain", blen, n)
		})
	}
	b = in.peek(need)
	if tail := r.u32(b[need-4:]); tail != blen {
		return 0, nil, off, &FileError{Path: in.name, Offset: off,
			Err: fmt.Errorf("block type 0x%08x has leading length %d but trailing length %d", typ, blen, tail)}
	}
	in.skip(need)
	return typ, b, off, nil
}

// section starts a new section from its header block b.
func (r *ngReader) section(b []byte, off int64) error {
	if len(b) < minSHBLen {
		return r.fail(off, "section header block has length %d, less than the minimum of %d", len(b), minSHBLen)
	}
	// Version 1.0, and 1.2, which some early writers used for the same
	// format: libpcap's sf-pcapng.c and tshark read these two and reject
	// every other, 1.1 included.
	if major, minor := r.u16(b[12:]), r.u16(b[14:]); major != 1 || minor != 0 && minor != 2 {
		return r.fail(off, "unsupported pcapng version %d.%d (libpcap and tshark read 1.0 and 1.2)", major, minor)
	}
	clear(r.ifaces)
	r.ifaces = r.ifaces[:0]
	r.ifaceB = 0
	return nil
}

// options calls fn for every option in opts (the options area of a block,
// trailing length excluded) until opt_endofopt. It reports an option whose
// value runs past the block.
func (r *ngReader) options(opts []byte, fn func(code uint16, val []byte) error) error {
	for len(opts) >= 4 {
		code, olen := r.u16(opts), int(r.u16(opts[2:]))
		if code == optEndOfOpt {
			return nil
		}
		if 4+olen > len(opts) {
			return fmt.Errorf("option %d of %d bytes runs %d bytes past the end of its block", code, olen, 4+olen-len(opts))
		}
		if err := fn(code, opts[4:4+olen]); err != nil {
			return err
		}
		// Values are padded to 32 bits; tolerate missing final padding.
		opts = opts[min(len(opts), 4+(olen+3)&^3):]
	}
	return nil
}

// iface parses an Interface Description Block.
func (r *ngReader) iface(b []byte, off int64) error {
	if len(b) < minIDBLen {
		return r.fail(off, "interface description block has length %d, less than the minimum of %d", len(b), minIDBLen)
	}
	if r.ifaceB+ifaceCost > r.ifaceM {
		return r.fail(off, "interface description block %d: the interfaces of this section take more than the limit of %d bytes", len(r.ifaces), r.ifaceM)
	}
	r.ifaceB += ifaceCost
	f := ngIface{
		lt:      LinkType(r.u16(b[8:])),
		snaplen: r.u32(b[12:]),
		units:   1e6,
		mul:     1e3,
	}
	err := r.options(b[16:len(b)-4], func(code uint16, val []byte) error {
		switch code {
		case optIfName:
			n := len(val)
			for n > 0 && val[n-1] == 0 {
				n--
			}
			// A repeated if_name replaces the one before.
			r.ifaceB -= len(f.name)
			if r.ifaceB+n > r.ifaceM {
				return fmt.Errorf("if_name of %d bytes: the interfaces of this section take more than the limit of %d bytes", n, r.ifaceM)
			}
			r.ifaceB += n
			f.name = string(val[:n])
		case optIfTsresol:
			if len(val) < 1 {
				return errors.New("if_tsresol option is empty")
			}
			v := val[0]
			if v&0x80 != 0 {
				p := v & 0x7f
				if p > 63 {
					return fmt.Errorf("if_tsresol 2^-%d is finer than 2^-63", p)
				}
				f.units = 1 << p
			} else {
				if v > 19 {
					return fmt.Errorf("if_tsresol 10^-%d is finer than 10^-19", v)
				}
				f.units = 1
				for range v {
					f.units *= 10
				}
			}
			f.mul = 0
			if f.units <= 1e9 && 1e9%f.units == 0 {
				f.mul = 1e9 / f.units
			}
		case optIfTsoffset:
			if len(val) != 8 {
				return fmt.Errorf("if_tsoffset option has %d bytes, want 8", len(val))
			}
			f.tsoffset = int64(r.u64(val))
		}
		return nil
	})
	if err != nil {
		return r.fail(off, "interface description block %d: %w", len(r.ifaces), err)
	}
	r.ifaces = append(r.ifaces, f)
	return nil
}

// packet fills r.pkt from an EPB, PB or SPB. It reports whether the block
// was a packet.
func (r *ngReader) packet(typ uint32, b []byte, off int64) (bool, error) {
	p := &r.pkt
	var (
		id           uint32
		caplen, orig uint32
		data, opts   []byte
		ts           uint64
		name         string
	)
	switch typ {
	case blockEPB, blockPB:
		name = "enhanced packet block"
		minLen := minEPBLen
		if typ == blockPB {
			name, minLen = "packet block", minPBLen
		}
		if len(b) < minLen {
			return false, r.fail(off, "%s has length %d, less than the minimum of %d", name, len(b), minLen)
		}
		if typ == blockEPB {
			id = r.u32(b[8:])
		} else {
			id = uint32(r.u16(b[8:]))
		}
		ts = uint64(r.u32(b[12:]))<<32 | uint64(r.u32(b[16:]))
		caplen, orig = r.u32(b[20:]), r.u32(b[24:])
		room := b[28 : len(b)-4]
		if caplen > uint32(len(room)) {
			return false, r.fail(off, "%s says %d captured bytes, but the block holds %d", name, caplen, len(room))
		}
		data = room[:caplen:caplen]
		opts = room[min(len(room), int(caplen+3)&^3):]
	case blockSPB:
		if len(b) < minSPBLen {
			return false, r.fail(off, "simple packet block has length %d, less than the minimum of %d", len(b), minSPBLen)
		}
		if len(r.ifaces) == 0 {
			return false, r.fail(off, "simple packet block before any interface description block")
		}
		orig = r.u32(b[8:])
		room := b[12 : len(b)-4]
		caplen = min(orig, uint32(len(room)))
		if s := r.ifaces[0].snaplen; s != 0 {
			caplen = min(caplen, s)
		}
		data = room[:caplen:caplen]
	default:
		return false, nil
	}
	if id >= uint32(len(r.ifaces)) {
		return false, r.fail(off, "packet block names interface %d, but the section has %d", id, len(r.ifaces))
	}
	f := &r.ifaces[id]
	p.Direction = DirUnknown
	if len(opts) >= 4 {
		err := r.options(opts, func(code uint16, val []byte) error {
			if code == optEpbFlags {
				if len(val) != 4 {
					return fmt.Errorf("flags option has %d bytes, want 4", len(val))
				}
				if d := Direction(r.u32(val) & 3); d <= DirOutbound {
					p.Direction = d
				}
			}
			return nil
		})
		if err != nil {
			return false, r.fail(off, "%s: %w", name, err)
		}
	}
	// A Simple Packet Block has no timestamp: it takes the time of the
	// packet before it in the file, in any section (the zero time when
	// there is none), and says so.
	p.NoTime = typ == blockSPB
	if !p.NoTime {
		r.last = f.time(ts)
	}
	p.Time = r.last
	p.LinkType = f.lt
	p.Interface = int(id)
	p.InterfaceName = f.name
	p.Data = data
	p.Length = int(max(orig, caplen))
	return true, nil
}

// Next implements Source.
func (r *ngReader) Next() (*Packet, error) {
	for r.err == nil {
		typ, b, off, err := r.block()
		if err != nil {
			r.err = err
			break
		}
		switch typ {
		// section, iface and packet record a failure in r.err, which ends
		// the loop.
		case blockSHB:
			_ = r.section(b, off)
		case blockIDB:
			_ = r.iface(b, off)
		default:
			// Any other block type (name resolution, statistics,
			// decryption secrets, custom...) is skipped by its length.
			if ok, _ := r.packet(typ, b, off); ok {
				return &r.pkt, nil
			}
		}
	}
	return nil, r.err
}

// Close implements Source.
func (r *ngReader) Close() error {
	if r.err == nil {
		r.err = errClosed(r.in)
	}
	return r.in.close()
}

// Progress implements Progresser.
func (r *ngReader) Progress() (done, total int64) { return r.in.progress() }
