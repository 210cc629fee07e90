package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"
)

// VRPN log files, as mainline VRPN's connection logging writes them
// (vrpn_Log::saveLogSoFar in vrpn_Connection.C; read back by
// vrpn_File_Connection::read_cookie and read_entry in vrpn_FileConnection.C;
// docs/vrpn.md, "Log files"):
//
//   - the 24-byte cookie of the connection: "vrpn: ver. 07.38", two
//     spaces, the log-mode digit, NULs to 24 bytes;
//   - entries to the end of the file, each a header of six big-endian
//     32-bit words (type id, sender id, tv_sec, tv_usec, payload length, a
//     word written as 0 that once held a pointer) and the payload of that
//     length, unpadded.
//
// The log keeps no sequence number and no padding, and does not say
// whether it logged a connection's incoming or outgoing messages.
//
// The Source turns a log into the byte stream of one VRPN TCP direction,
// so that the VRPN dissector decodes it as it decodes a capture: each entry
// becomes one packet whose Data is the entry re-framed as a VRPN message on
// the wire (length, tv_sec, tv_usec, sender, type, a sequence word of 0,
// the payload, zero padding to 8 bytes), the first packet starting with
// the log's cookie. Its Time is the entry's time (the message's own
// timestamp: a log keeps no other). The packets have link type
// [LinkVRPNLog], the log's name as InterfaceName and direction
// [DirInbound].

// LinkVRPNLog is the link type of packets read from a VRPN log file: each
// is one log entry as a VRPN TCP-framed message (the first also carrying
// the cookie), of the one stream named by InterfaceName. It is
// LINKTYPE_USER1, which dissect claims for this as it claims USER0 for
// serial links; reassembly makes such packets a byte stream decoded as VRPN.
const LinkVRPNLog LinkType = 148

const (
	vrpnMagic       = "vrpn: ver. " // start of the cookie (vrpn_MAGIC)
	vrpnCookieLen   = 24            // vrpn_MAGICLEN 16 + vrpn_ALIGN 8
	vrpnEntryLen    = 24            // six 32-bit words
	vrpnWireHdrLen  = 24            // five words and the sequence word, padded to 8
	vrpnAlign       = 8             // vrpn_ALIGN
	vrpnMaxFrameLen = 1 << 20       // the VRPN dissector's largest length field
	// maxVRPNPayload caps an entry's payload, so that its re-framed
	// message is one the VRPN dissector accepts; mainline's own messages
	// are at most vrpn_CONNECTION_TCP_BUFLEN (64000) bytes.
	maxVRPNPayload = vrpnMaxFrameLen - vrpnWireHdrLen
)

// magicVRPNLog is the first four bytes of a VRPN log, the start of its
// cookie; isVRPNLog checks the rest of vrpnMagic.
var magicVRPNLog = [4]byte{'v', 'r', 'p', 'n'}

// vrpnLogReader is the Source for VRPN log files.
type vrpnLogReader struct {
	in     *input
	cookie []byte // the log's cookie until the first packet carries it
	frame  []byte // reused: the packet's Data
	pkt    Packet
	err    error // sticky: io.EOF or a *FileError
}

// isVRPNLog reports whether the buffered input starts with the VRPN
// cookie's magic; it buffers what it needs.
func isVRPNLog(in *input) bool {
	n := in.fill(len(vrpnMagic))
	return n == len(vrpnMagic) && string(in.peek(n)) == vrpnMagic
}

func newVRPNLogReader(in *input) (*vrpnLogReader, error) {
	n := in.fill(vrpnCookieLen)
	if n < vrpnCookieLen {
		return nil, in.shortErr(0, func() error {
			return fmt.Errorf("truncated VRPN log cookie: %d bytes needed, %d present", vrpnCookieLen, n)
		})
	}
	r := &vrpnLogReader{in: in}
	r.cookie = append([]byte(nil), in.peek(vrpnCookieLen)...)
	in.skip(vrpnCookieLen)
	r.pkt = Packet{LinkType: LinkVRPNLog, InterfaceName: in.name, Direction: DirInbound}
	return r, nil
}

// fail ends the log with err. The cookie goes out only with the first
// entry, whose time it takes (a log keeps no other): a log that ends
// before any entry gives no packet, and a log that is only its cookie
// says so (mainline reads it as a log of nothing).
func (r *vrpnLogReader) fail(err error) (*Packet, error) {
	if r.cookie != nil && err == io.EOF {
		err = &FileError{Path: r.in.name, Offset: vrpnCookieLen, Err: fmt.Errorf("an empty VRPN log: its cookie (%q), no message logged", strings.TrimRight(string(r.cookie), "\x00"))}
	}
	r.cookie = nil
	r.err = err
	return nil, err
}

// Next implements Source.
func (r *vrpnLogReader) Next() (*Packet, error) {
	if r.err != nil {
		return nil, r.err
	}
	in := r.in
	off := in.pos()
	n := in.fill(vrpnEntryLen)
	if n < vrpnEntryLen {
		if n == 0 && in.atEOF() {
			return r.fail(io.EOF)
		}
		return r.fail(in.shortErr(off, func() error {
			return fmt.Errorf("truncated VRPN log entry header: %d bytes needed, %d remain", vrpnEntryLen, n)
		}))
	}
	h := in.peek(vrpnEntryLen)
	be := binary.BigEndian
	typ, sender := be.Uint32(h[0:]), be.Uint32(h[4:])
	sec, usec := be.Uint32(h[8:]), be.Uint32(h[12:])
	plen := int32(be.Uint32(h[16:]))
	switch {
	case plen < 0:
		return r.fail(&FileError{Path: in.name, Offset: off, Err: fmt.Errorf("VRPN log entry says a payload of %d bytes", plen)})
	case plen > maxVRPNPayload:
		return r.fail(&FileError{Path: in.name, Offset: off, Err: fmt.Errorf("VRPN log entry says %d payload bytes, more than the limit of %d", plen, maxVRPNPayload)})
	}
	need := vrpnEntryLen + int(plen)
	if n = in.fill(need); n < need {
		return r.fail(in.shortErr(off, func() error {
			return fmt.Errorf("truncated VRPN log entry: header says %d payload bytes, %d remain", plen, n-vrpnEntryLen)
		}))
	}
	payload := in.peek(need)[vrpnEntryLen:]
	f := append(r.frame[:0], r.cookie...)
	r.cookie = nil
	f = be.AppendUint32(f, uint32(vrpnWireHdrLen+plen))
	f = be.AppendUint32(f, sec)
	f = be.AppendUint32(f, usec)
	f = be.AppendUint32(f, sender)
	f = be.AppendUint32(f, typ)
	f = be.AppendUint32(f, 0) // the sequence word: not logged
	f = append(f, payload...)
	for len(f)%vrpnAlign != 0 {
		f = append(f, 0)
	}
	in.skip(need)
	r.frame = f
	p := &r.pkt
	// vrpn_int32 both, as mainline reads them (0xffffffff is -1).
	p.Time = time.Unix(int64(int32(sec)), int64(int32(usec))*1000).UTC()
	p.NoTime = false
	p.Data, p.Length = f, len(f)
	return p, nil
}

// Close implements Source.
func (r *vrpnLogReader) Close() error {
	if r.err == nil {
		r.err = errClosed(r.in)
	}
	return r.in.close()
}

// Progress implements Progresser.
func (r *vrpnLogReader) Progress() (done, total int64) { return r.in.progress() }
