package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// writeBufSize is the buffer of both writers.
const writeBufSize = 256 << 10

// maxWritePacket is the largest packet the writers accept: the readers'
// block limit minus the largest block overhead.
const maxWritePacket = maxBlockLen - 64

// le is the byte order of everything the writers produce.
var le = binary.LittleEndian

// PcapngWriter writes a pcapng file: one section in little-endian order,
// interfaces with nanosecond timestamps, and Enhanced Packet Blocks. Output
// is buffered; call Flush when done. After a failed write to the underlying
// writer every method returns that error; a rejected packet (unknown
// interface, wrong link type, time out of range) writes nothing and leaves
// the writer usable.
type PcapngWriter struct {
	w      *bufio.Writer
	ifaces []LinkType
	hdr    [40]byte
	n      int64 // bytes written, buffered ones included
	err    error
}

// NewPcapngWriter starts a pcapng file on w by writing its Section Header
// Block. It adds no interfaces; see AddInterface.
func NewPcapngWriter(w io.Writer) (*PcapngWriter, error) {
	pw := &PcapngWriter{w: bufio.NewWriterSize(w, writeBufSize)}
	var b [minSHBLen]byte
	le.PutUint32(b[0:], blockSHB)
	le.PutUint32(b[4:], minSHBLen)
	le.PutUint32(b[8:], byteOrderMagic)
	le.PutUint16(b[12:], 1)              // major version
	le.PutUint16(b[14:], 0)              // minor version
	le.PutUint64(b[16:], math.MaxUint64) // section length: not given
	le.PutUint32(b[24:], minSHBLen)
	if _, err := pw.w.Write(b[:]); err != nil {
		return nil, err
	}
	pw.n = minSHBLen
	return pw, nil
}

// AddInterface writes an Interface Description Block with the options
// if_name (when name is not empty) and if_tsresol = 9 (nanoseconds). It
// returns the interface's index, which WritePacket expects in
// Packet.Interface.
func (pw *PcapngWriter) AddInterface(name string, lt LinkType, snaplen uint32) (int, error) {
	if pw.err != nil {
		return 0, pw.err
	}
	if len(pw.ifaces) >= maxInterfaces {
		return 0, fmt.Errorf("capture: pcapng writer: more than %d interfaces", maxInterfaces)
	}
	if len(name) > math.MaxUint16 {
		return 0, fmt.Errorf("capture: pcapng writer: interface name of %d bytes is too long", len(name))
	}
	opts := 8 // if_tsresol (4 + 1 padded to 4) ...
	if name != "" {
		opts += 4 + pad4(len(name))
	}
	opts += 4 // opt_endofopt
	total := minIDBLen + opts
	var zero [4]byte
	b := pw.hdr[:]
	le.PutUint32(b[0:], blockIDB)
	le.PutUint32(b[4:], uint32(total))
	le.PutUint16(b[8:], uint16(lt))
	le.PutUint16(b[10:], 0)
	le.PutUint32(b[12:], snaplen)
	pw.write(b[:16])
	if name != "" {
		le.PutUint16(b[0:], optIfName)
		le.PutUint16(b[2:], uint16(len(name)))
		pw.write(b[:4])
		pw.writeString(name)
		pw.write(zero[:pad4(len(name))-len(name)])
	}
	le.PutUint16(b[0:], optIfTsresol)
	le.PutUint16(b[2:], 1)
	b[4], b[5], b[6], b[7] = 9, 0, 0, 0
	le.PutUint32(b[8:], optEndOfOpt)
	le.PutUint32(b[12:], uint32(total))
	pw.write(b[:16])
	if pw.err != nil {
		return 0, pw.err
	}
	pw.ifaces = append(pw.ifaces, lt)
	return len(pw.ifaces) - 1, nil
}

// WritePacket writes p as an Enhanced Packet Block on interface
// p.Interface, with its time in nanoseconds, its captured bytes, its
// original length (at least len(p.Data)) and, when p.Direction is not
// DirUnknown, an epb_flags option carrying the direction. p.LinkType must
// be the interface's link type.
func (pw *PcapngWriter) WritePacket(p *Packet) error {
	if pw.err != nil {
		return pw.err
	}
	if p.Interface < 0 || p.Interface >= len(pw.ifaces) {
		return fmt.Errorf("capture: pcapng writer: packet on interface %d, but %d interfaces were added", p.Interface, len(pw.ifaces))
	}
	if lt := pw.ifaces[p.Interface]; p.LinkType != lt {
		return fmt.Errorf("capture: pcapng writer: packet of link type %d on interface %d of link type %d", p.LinkType, p.Interface, lt)
	}
	ts, err := unixNanos(p.Time)
	if err != nil {
		return err
	}
	orig, err := origLen(p)
	if err != nil {
		return err
	}
	if p.Direction > DirOutbound {
		return fmt.Errorf("capture: pcapng writer: invalid direction %d", p.Direction)
	}
	n := len(p.Data)
	total := minEPBLen + pad4(n)
	if p.Direction != DirUnknown {
		total += 12 // epb_flags (4 + 4) and opt_endofopt (4)
	}
	b := pw.hdr[:]
	le.PutUint32(b[0:], blockEPB)
	le.PutUint32(b[4:], uint32(total))
	le.PutUint32(b[8:], uint32(p.Interface))
	le.PutUint32(b[12:], uint32(ts>>32))
	le.PutUint32(b[16:], uint32(ts))
	le.PutUint32(b[20:], uint32(n))
	le.PutUint32(b[24:], orig)
	pw.write(b[:28])
	pw.write(p.Data)
	t := b[:0]
	t = append(t, make([]byte, pad4(n)-n)...)
	if p.Direction != DirUnknown {
		t = le.AppendUint16(t, optEpbFlags)
		t = le.AppendUint16(t, 4)
		t = le.AppendUint32(t, uint32(p.Direction))
		t = le.AppendUint32(t, optEndOfOpt)
	}
	t = le.AppendUint32(t, uint32(total))
	pw.write(t)
	return pw.err
}

// Counter is a statistics count that may be unknown. The zero Counter is
// unknown: WriteStats leaves it out of the file rather than writing 0.
type Counter struct {
	N     uint64
	Known bool
}

// Count returns the known count n.
func Count(n uint64) Counter { return Counter{N: n, Known: true} }

// InterfaceStats are the counters of one interface for an Interface
// Statistics Block (draft-ietf-opsawg-pcapng, section 4.6). Counts run from
// the start of the capture. Each field names the option it is written as
// and what the specification says that option counts.
type InterfaceStats struct {
	// Start is when the capture started (isb_starttime); the zero time
	// leaves the option out.
	Start time.Time
	// End is when the counters were read: the block's timestamp and
	// isb_endtime. It is required.
	End time.Time

	// Received is isb_ifrecv, "packets received from the physical
	// interface": before any capture filter (e.g. the interface's
	// rx_packets over the capture).
	Received Counter
	// InterfaceDropped is isb_ifdrop, "packets dropped by the interface
	// due to lack of resources" (pcap_stat.ps_ifdrop; for a serial port,
	// UART overruns).
	InterfaceDropped Counter
	// FilterAccepted is isb_filteraccept, "packets accepted by filter"
	// (Linux PACKET_STATISTICS tp_packets, which libpcap reports as
	// ps_recv).
	FilterAccepted Counter
	// KernelDropped is isb_osdrop, "packets dropped by the operating
	// system" (tp_drops, pcap_stat.ps_drop: no room in the socket buffer;
	// for a serial port, tty buffer overruns).
	KernelDropped Counter
	// Delivered is isb_usrdeliv, "packets delivered to the user": read by
	// dissect from the kernel, whatever dissect did with them next.
	Delivered Counter
	// DissectDropped counts packets delivered to dissect whose payload
	// its own queue dropped (Packet.Dropped). pcapng has no option for
	// this, and isb_osdrop counts drops by the operating system, so it is
	// written as an opt_comment ("dissect: packets dropped by dissect's
	// queue = N"), which tshark and Wireshark show with the block.
	DissectDropped Counter
}

// ISB option codes (draft-ietf-opsawg-pcapng, section 4.6).
const (
	blockISB = 0x00000005

	optComment       = 1
	optIsbStartTime  = 2
	optIsbEndTime    = 3
	optIsbIfRecv     = 4
	optIsbIfDrop     = 5
	optIsbFilterAcc  = 6
	optIsbOSDrop     = 7
	optIsbUsrDeliv   = 8
	minISBLen        = 24
	isbMaxOptionsLen = 7*12 + 4 + 80 // times, counters, end of options, comment
)

// WriteStats writes an Interface Statistics Block for interface iface
// (an index AddInterface returned) with the options of st that are known,
// in the order of their option codes, times in nanoseconds like the
// packets. Write it at the end of a capture, after the interface's last
// packet; several blocks for one interface are allowed (each holds counts
// from the start of the capture). Like WritePacket, a rejected call writes
// nothing and leaves the writer usable.
func (pw *PcapngWriter) WriteStats(iface int, st InterfaceStats) error {
	if pw.err != nil {
		return pw.err
	}
	if iface < 0 || iface >= len(pw.ifaces) {
		return fmt.Errorf("capture: pcapng writer: statistics for interface %d, but %d interfaces were added", iface, len(pw.ifaces))
	}
	if st.End.IsZero() {
		return errors.New("capture: pcapng writer: statistics without an end time")
	}
	end, err := unixNanos(st.End)
	if err != nil {
		return err
	}
	var start uint64
	if !st.Start.IsZero() {
		if start, err = unixNanos(st.Start); err != nil {
			return err
		}
		if start > end {
			return fmt.Errorf("capture: pcapng writer: statistics start %v after their end %v", st.Start, st.End)
		}
	}
	var b [minISBLen + isbMaxOptionsLen]byte
	t := le.AppendUint32(b[:0], blockISB)
	t = le.AppendUint32(t, 0) // total length, set below
	t = le.AppendUint32(t, uint32(iface))
	t = le.AppendUint32(t, uint32(end>>32))
	t = le.AppendUint32(t, uint32(end))
	if st.DissectDropped.Known {
		t = le.AppendUint16(t, optComment)
		t = le.AppendUint16(t, 0) // length, set below
		n := len(t)
		t = fmt.Appendf(t, "dissect: packets dropped by dissect's queue = %d", st.DissectDropped.N)
		le.PutUint16(t[n-2:], uint16(len(t)-n))
		t = append(t, make([]byte, pad4(len(t))-len(t))...)
	}
	u64 := func(code uint16, v uint64) {
		t = le.AppendUint16(t, code)
		t = le.AppendUint16(t, 8)
		t = le.AppendUint32(t, uint32(v>>32))
		t = le.AppendUint32(t, uint32(v))
	}
	if !st.Start.IsZero() {
		u64(optIsbStartTime, start)
	}
	u64(optIsbEndTime, end)
	for _, c := range [...]struct {
		code uint16
		c    Counter
	}{
		{optIsbIfRecv, st.Received},
		{optIsbIfDrop, st.InterfaceDropped},
		{optIsbFilterAcc, st.FilterAccepted},
		{optIsbOSDrop, st.KernelDropped},
		{optIsbUsrDeliv, st.Delivered},
	} {
		if c.c.Known {
			t = le.AppendUint16(t, c.code)
			t = le.AppendUint16(t, 8)
			t = le.AppendUint64(t, c.c.N)
		}
	}
	t = le.AppendUint32(t, optEndOfOpt)
	t = le.AppendUint32(t, 0)
	le.PutUint32(t[4:], uint32(len(t)))
	le.PutUint32(t[len(t)-4:], uint32(len(t)))
	pw.write(t)
	return pw.err
}

// Flush writes any buffered data to the underlying writer.
func (pw *PcapngWriter) Flush() error {
	if pw.err != nil {
		return pw.err
	}
	pw.err = pw.w.Flush()
	return pw.err
}

// Size is the number of bytes written so far, buffered ones included.
func (pw *PcapngWriter) Size() int64 { return pw.n }

func (pw *PcapngWriter) write(b []byte) {
	if pw.err == nil {
		_, pw.err = pw.w.Write(b)
		pw.n += int64(len(b))
	}
}

func (pw *PcapngWriter) writeString(s string) {
	if pw.err == nil {
		_, pw.err = pw.w.WriteString(s)
		pw.n += int64(len(s))
	}
}

// PcapWriter writes a classic little-endian pcap file of one link type,
// with microsecond or nanosecond timestamps and a snaplen of 262144. Output
// is buffered; call Flush when done. After a failed write to the underlying
// writer every method returns that error; a rejected packet writes nothing.
type PcapWriter struct {
	w     *bufio.Writer
	lt    LinkType
	nanos bool
	hdr   [pcapRecordHeaderLen]byte
	err   error
	n     int64 // bytes written, buffered ones included
}

// pcapWriterSnaplen is the snaplen PcapWriter declares and enforces.
const pcapWriterSnaplen = defaultMaxCaplen

// NewPcapWriter starts a pcap file on w by writing its file header: magic
// a1b2c3d4 (microseconds) or a1b23c4d (nanoseconds) in little-endian order,
// version 2.4, link type lt.
func NewPcapWriter(w io.Writer, lt LinkType, nanos bool) (*PcapWriter, error) {
	pw := &PcapWriter{w: bufio.NewWriterSize(w, writeBufSize), lt: lt, nanos: nanos}
	var b [pcapFileHeaderLen]byte
	magic := uint32(0xa1b2c3d4)
	if nanos {
		magic = 0xa1b23c4d
	}
	le.PutUint32(b[0:], magic)
	le.PutUint16(b[4:], 2)
	le.PutUint16(b[6:], 4)
	le.PutUint32(b[16:], pcapWriterSnaplen)
	le.PutUint32(b[20:], uint32(lt))
	if _, err := pw.w.Write(b[:]); err != nil {
		return nil, err
	}
	pw.n = pcapFileHeaderLen
	return pw, nil
}

// Size returns the bytes written so far, those still buffered included.
func (pw *PcapWriter) Size() int64 { return pw.n }

// WritePacket writes p as one record: its time (rounded down to the
// file's resolution), captured bytes and original length (at least
// len(p.Data)). p.LinkType must be the file's link type, and p.Data at most
// 262144 bytes.
func (pw *PcapWriter) WritePacket(p *Packet) error {
	if pw.err != nil {
		return pw.err
	}
	if p.LinkType != pw.lt {
		return fmt.Errorf("capture: pcap writer: packet of link type %d in a file of link type %d", p.LinkType, pw.lt)
	}
	if len(p.Data) > pcapWriterSnaplen {
		return fmt.Errorf("capture: pcap writer: packet of %d bytes exceeds the snaplen %d", len(p.Data), pcapWriterSnaplen)
	}
	orig, err := origLen(p)
	if err != nil {
		return err
	}
	sec, frac := p.Time.Unix(), p.Time.Nanosecond()
	if sec < 0 || sec > math.MaxUint32 {
		return fmt.Errorf("capture: pcap writer: time %v is outside the pcap range 1970-2106", p.Time)
	}
	if !pw.nanos {
		frac /= 1000
	}
	b := pw.hdr[:]
	le.PutUint32(b[0:], uint32(sec))
	le.PutUint32(b[4:], uint32(frac))
	le.PutUint32(b[8:], uint32(len(p.Data)))
	le.PutUint32(b[12:], orig)
	if _, err := pw.w.Write(b); err != nil {
		pw.err = err
		return err
	}
	if _, err := pw.w.Write(p.Data); err != nil {
		pw.err = err
	}
	pw.n += int64(len(b) + len(p.Data))
	return pw.err
}

// Flush writes any buffered data to the underlying writer.
func (pw *PcapWriter) Flush() error {
	if pw.err != nil {
		return pw.err
	}
	pw.err = pw.w.Flush()
	return pw.err
}

func pad4(n int) int { return (n + 3) &^ 3 }

// origLen is the original length to record for p: p.Length, raised to
// len(p.Data) when smaller.
func origLen(p *Packet) (uint32, error) {
	if len(p.Data) > maxWritePacket {
		return 0, fmt.Errorf("capture: writer: packet of %d bytes exceeds the limit of %d", len(p.Data), maxWritePacket)
	}
	n := max(p.Length, len(p.Data))
	if uint64(n) > math.MaxUint32 {
		return 0, fmt.Errorf("capture: writer: original length %d does not fit in 32 bits", n)
	}
	return uint32(n), nil
}

// The range of times a nanosecond pcapng timestamp written by
// PcapngWriter can hold (UnixNano's range, from the epoch on).
var (
	minNanoTime = time.Unix(0, 0)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

// unixNanos is t in nanoseconds since the Unix epoch.
func unixNanos(t time.Time) (uint64, error) {
	if t.Before(minNanoTime) || t.After(maxNanoTime) {
		return 0, fmt.Errorf("capture: pcapng writer: time %v is outside the range 1970-2262", t)
	}
	return uint64(t.UnixNano()), nil
}
