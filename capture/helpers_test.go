package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"
)

// Hand-written encoders for test inputs. They are written from the pcap and
// pcapng specifications, independently of PcapWriter and PcapngWriter, and
// can produce either byte order and any option, including invalid ones.

// order is a byte order that can also append.
type order interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// pcapFile builds a classic pcap file.
type pcapFile struct {
	bo    order
	nanos bool
	buf   []byte
}

func newPcapFile(bo order, nanos bool, snaplen uint32, linkField uint32) *pcapFile {
	f := &pcapFile{bo: bo, nanos: nanos}
	magic := uint32(0xa1b2c3d4)
	if nanos {
		magic = 0xa1b23c4d
	}
	f.buf = bo.AppendUint32(f.buf, magic)
	f.buf = bo.AppendUint16(f.buf, 2)
	f.buf = bo.AppendUint16(f.buf, 4)
	f.buf = bo.AppendUint32(f.buf, 0) // thiszone
	f.buf = bo.AppendUint32(f.buf, 0) // sigfigs
	f.buf = bo.AppendUint32(f.buf, snaplen)
	f.buf = bo.AppendUint32(f.buf, linkField)
	return f
}

// record appends a record with a caplen of len(data).
func (f *pcapFile) record(sec, frac uint32, data []byte, orig uint32) *pcapFile {
	return f.recordLen(sec, frac, uint32(len(data)), orig, data)
}

// recordLen appends a record whose header claims caplen, followed by data.
func (f *pcapFile) recordLen(sec, frac, caplen, orig uint32, data []byte) *pcapFile {
	f.buf = f.bo.AppendUint32(f.buf, sec)
	f.buf = f.bo.AppendUint32(f.buf, frac)
	f.buf = f.bo.AppendUint32(f.buf, caplen)
	f.buf = f.bo.AppendUint32(f.buf, orig)
	f.buf = append(f.buf, data...)
	return f
}

// ngFile builds a pcapng file block by block.
type ngFile struct {
	bo  order
	buf []byte
}

// pad appends zeros to a multiple of 4 bytes.
func pad(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// ngOpt encodes one option (code, length, value, padding).
func ngOpt(bo order, code uint16, val []byte) []byte {
	b := bo.AppendUint16(nil, code)
	b = bo.AppendUint16(b, uint16(len(val)))
	return pad(append(b, val...))
}

// opts joins options and appends opt_endofopt.
func ngOpts(bo order, o ...[]byte) []byte {
	if len(o) == 0 {
		return nil
	}
	var b []byte
	for _, x := range o {
		b = append(b, x...)
	}
	return append(b, 0, 0, 0, 0)
}

// block appends a block whose body is already padded.
func (f *ngFile) block(typ uint32, body []byte) *ngFile {
	total := uint32(12 + len(body))
	f.buf = f.bo.AppendUint32(f.buf, typ)
	f.buf = f.bo.AppendUint32(f.buf, total)
	f.buf = append(f.buf, body...)
	f.buf = f.bo.AppendUint32(f.buf, total)
	return f
}

// shb appends a Section Header Block (version 1.0, unknown section length)
// and switches the builder to bo.
func (f *ngFile) shb(bo order) *ngFile {
	f.bo = bo
	body := bo.AppendUint32(nil, 0x1A2B3C4D)
	body = bo.AppendUint16(body, 1)
	body = bo.AppendUint16(body, 0)
	body = bo.AppendUint64(body, ^uint64(0))
	return f.block(0x0A0D0D0A, body)
}

func newNgFile(bo order) *ngFile { return (&ngFile{}).shb(bo) }

func (f *ngFile) idb(lt uint16, snaplen uint32, opts ...[]byte) *ngFile {
	body := f.bo.AppendUint16(nil, lt)
	body = f.bo.AppendUint16(body, 0)
	body = f.bo.AppendUint32(body, snaplen)
	return f.block(1, append(body, ngOpts(f.bo, opts...)...))
}

func (f *ngFile) epb(iface uint32, ts uint64, data []byte, orig uint32, opts ...[]byte) *ngFile {
	body := f.bo.AppendUint32(nil, iface)
	body = f.bo.AppendUint32(body, uint32(ts>>32))
	body = f.bo.AppendUint32(body, uint32(ts))
	body = f.bo.AppendUint32(body, uint32(len(data)))
	body = f.bo.AppendUint32(body, orig)
	body = pad(append(body, data...))
	return f.block(6, append(body, ngOpts(f.bo, opts...)...))
}

func (f *ngFile) spb(orig uint32, data []byte) *ngFile {
	body := f.bo.AppendUint32(nil, orig)
	return f.block(3, pad(append(body, data...)))
}

func (f *ngFile) u32(v uint32) []byte   { return f.bo.AppendUint32(nil, v) }
func (f *ngFile) u64(v uint64) []byte   { return f.bo.AppendUint64(nil, v) }
func (f *ngFile) flags(v uint32) []byte { return ngOpt(f.bo, 2, f.u32(v)) }

// got is a copy of one packet as read.
type got struct {
	Time      time.Time
	LinkType  LinkType
	Interface int
	Name      string
	Dir       Direction
	Data      string
	Length    int
	NoTime    bool
}

func copyPacket(p *Packet) got {
	return got{p.Time, p.LinkType, p.Interface, p.InterfaceName, p.Direction, string(p.Data), p.Length, p.NoTime}
}

// readAll reads src to its end and returns the packets and the final error
// (nil at a clean io.EOF).
func readAll(t testing.TB, src Source) ([]got, error) {
	t.Helper()
	var out []got
	for range 1_000_000 {
		p, err := src.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, copyPacket(p))
	}
	t.Fatal("reader does not terminate")
	return nil, nil
}

// readBytes opens b with NewReader and reads it all.
func readBytes(t testing.TB, b []byte) ([]got, error) {
	t.Helper()
	src, err := NewReader(bytes.NewReader(b), "mem")
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return readAll(t, src)
}

// wantFileError checks that err is a *FileError at off whose message
// contains msg.
func wantFileError(t *testing.T, err error, off int64, msg string) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T), want *FileError", err, err)
	}
	if fe.Offset != off {
		t.Errorf("error offset %d, want %d (%v)", fe.Offset, off, err)
	}
	if !bytes.Contains([]byte(fe.Err.Error()), []byte(msg)) {
		t.Errorf("error %q does not contain %q", fe.Err.Error(), msg)
	}
}

func sameGot(t *testing.T, gotp, want []got) {
	t.Helper()
	if len(gotp) != len(want) {
		t.Fatalf("got %d packets, want %d", len(gotp), len(want))
	}
	for i := range want {
		if !gotp[i].Time.Equal(want[i].Time) || gotp[i].Time.Location() != time.UTC ||
			gotp[i].LinkType != want[i].LinkType || gotp[i].Interface != want[i].Interface ||
			gotp[i].Name != want[i].Name || gotp[i].Dir != want[i].Dir ||
			gotp[i].Data != want[i].Data || gotp[i].Length != want[i].Length ||
			gotp[i].NoTime != want[i].NoTime {
			t.Errorf("packet %d:\n got %+v\nwant %+v", i, gotp[i], want[i])
		}
	}
}
