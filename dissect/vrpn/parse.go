package vrpn

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
	"github.com/dissect-tools/dissect/dissect/layout"
)

const protoName = "vrpn"

// Wire constants (README facts 1, 2, 11, 12).
const (
	magic        = "vrpn: ver. " // start of the cookie; the version follows
	cookieLen    = 24            // vrpn_MAGICLEN 16 + vrpn_ALIGN 8
	knownVersion = "07.38"       // the version of the captures
	knownMajor   = "07"          // mainline compares only the major version
	headerLen    = 24            // five words, plus the sequence number word
	align        = 8             // vrpn_ALIGN: bodies are padded to it

	// maxLength is the largest length field Parse accepts; a larger one is
	// malformed (a lost frame boundary), not a message to wait for.
	maxLength = 1 << 20
	// plausibleLength is the largest length field the plausibility check
	// accepts when there is no framing to trust (resync, a direction with
	// no cookie, UDP detection): mainline's TCP buffer,
	// vrpn_CONNECTION_TCP_BUFLEN = 64000, bounds every message it sends.
	plausibleLength = 64000
	// maxPlausibleID bounds sender and type ids in the plausibility check;
	// mainline numbers them densely from 0, and system messages put a UDP
	// port (< 65536) or a log mode in the sender field.
	maxPlausibleID = 65535
	// maxLob bounds the connect-back datagram: mainline reads the host
	// with %199s, then a space and a port.
	maxLob = 256
)

// System message types (vrpn_Connection.h); their ids are negative.
const (
	sysSenderDescription = -1
	sysTypeDescription   = -2
	sysUDPDescription    = -3
	sysLogDescription    = -4
	sysDisconnect        = -5
)

// Record types that are not application type names.
const (
	TypeCookie            = "cookie"
	TypeUDPCallback       = "udp_callback"
	TypeSenderDescription = "sender_description"
	TypeTypeDescription   = "type_description"
	TypeUDPDescription    = "udp_description"
	TypeLogDescription    = "log_description"
	TypeDisconnect        = "disconnect"
	TypeUnknown           = "unknown"
)

// Error codes of the [*dissect.Error] values Parse returns.
const (
	CodeBadLength = "bad_length" // length field below 24 or above 1 MiB
	CodeNoCookie  = "no_cookie"  // a TCP direction starts with neither a cookie nor a plausible header
)

var be = binary.BigEndian

// parser decodes one stream (both directions).
type parser struct {
	proto *protocol
	info  *dissect.StreamInfo
	udp   bool
	dirs  [2]dirState
	sum   []byte           // scratch for summaries
	cat   *layout.Decoder  // the catalogue's decoder, once needed (catalog.go)
	pad   []byte           // scratch for a text buffer cut after its NUL (catalog.go)
	ex    exchange.Matcher // the requests no reply answered yet (roundtrip.go)
}

type dirState struct {
	// names are the ids this direction described. For a UDP flow they are
	// only a fallback: the flow's ids are named by the TCP direction that
	// announced its destination (route).
	names *table
	// phase is the stream offset modulo 8 at which this TCP direction's
	// messages start, once known (-1 before): every message is a multiple
	// of 8 bytes and the cookie is 24, so resync only tries offsets in
	// phase.
	phase int
	// cookiePhase: the phase comes from the cookie, not from a message
	// framed after a resync, which a later resync does not trust.
	cookiePhase bool
	// route caches the table found for a UDP flow's destination, valid
	// while routeGen equals the protocol's generation.
	route    *table
	routeGen uint64
	routed   bool
	// scan is where a TCP direction's Sync stands (resync.go); checks
	// counts the headers it examined, for the tests that bound it.
	scan   scan
	checks int64
	// ref is what a resync candidate's run is checked against (resync.go).
	ref joinRef
}

// header is a framed message's header.
type header struct {
	length   uint32 // 24 + unpadded body
	sec      uint32
	usec     uint32
	sender   int32
	typ      int32
	sequence uint32
}

func readHeader(b []byte) header {
	return header{
		length:   be.Uint32(b[0:]),
		sec:      be.Uint32(b[4:]),
		usec:     be.Uint32(b[8:]),
		sender:   int32(be.Uint32(b[12:])),
		typ:      int32(be.Uint32(b[16:])),
		sequence: be.Uint32(b[20:]),
	}
}

// padded returns the bytes a message with this length field covers.
func padded(length uint32) int {
	return int((uint64(length) + align - 1) &^ (align - 1))
}

// verdict of the plausibility check.
type verdict uint8

const (
	bad verdict = iota
	partial
	good
)

// plausible checks the header at b[0] as far as b holds it: a length of
// 24..64000, tv_usec below one million, a sender id of 0..65535 and a type
// id of -5..65535. It is used where no framing can be trusted.
func plausible(b []byte) verdict {
	if len(b) >= 4 {
		if l := be.Uint32(b); l < headerLen || l > plausibleLength {
			return bad
		}
	} else {
		// The smallest length these first bytes can start.
		var l uint32
		for _, x := range b {
			l = l<<8 | uint32(x)
		}
		if uint64(l)<<(8*(4-len(b))) > plausibleLength {
			return bad
		}
	}
	if len(b) >= 12 && be.Uint32(b[8:]) >= 1000000 {
		return bad
	}
	if len(b) >= 16 {
		if s := int32(be.Uint32(b[12:])); s < 0 || s > maxPlausibleID {
			return bad
		}
	}
	if len(b) >= 20 {
		if t := int32(be.Uint32(b[16:])); t < sysDisconnect || t > maxPlausibleID {
			return bad
		}
	}
	if len(b) < headerLen {
		return partial
	}
	return good
}

// plausibleDatagram reports whether b is one or more plausible framed
// messages and nothing else.
func plausibleDatagram(b []byte) bool {
	i := 0
	for i < len(b) {
		if plausible(b[i:]) != good {
			return false
		}
		l := int(be.Uint32(b[i:]))
		n := padded(uint32(l))
		if i+n > len(b) {
			return i+l == len(b)
		}
		i += n
	}
	return len(b) > 0
}

// Parse decodes the message at b[0]; see [dissect.Parser].
func (p *parser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	if p.udp {
		if host, port, ok := parseLob(b); ok && c.Final {
			return p.lob(c, b, host, port), nil
		}
		return p.framed(c, b)
	}
	if c.Offset == 0 {
		n := min(len(b), len(magic))
		if string(b[:n]) == magic[:n] {
			if len(b) < cookieLen {
				return cookieLen, dissect.ErrNeedMore
			}
			return p.cookie(c, b[:cookieLen]), nil
		}
		// No cookie: a message here must be confirmed as a resync
		// candidate is (resync.go), by the run of headers it starts.
		d := &p.dirs[c.Dir]
		d.ref.bounds(d.names)
		cd := cand{off: c.Offset, pos: c.Offset}
		switch p.walk(c, &cd, b, c.Offset) {
		case partial:
			return 0, dissect.ErrNeedMore
		case bad:
			return 0, dissect.Malformed(protoName, CodeNoCookie, 0, "the direction starts with neither the cookie %q nor a run of %d plausible message headers", magic, chainLen)
		}
		c.Note("%s: %s: no cookie; decoding from a framed message at offset 0 (capture joined the connection late?)", protoName, c.Stream.Name[c.Dir])
	}
	return p.framed(c, b)
}

// Sync finds the next message boundary; see [dissect.Parser]. On TCP
// (resync.go), once a direction's phase is known (the cookie, or any
// message, was framed), only offsets in that phase modulo 8 are tried; a
// candidate is confirmed by the run of headers that follows it, the first
// confirmed candidate with none undecided before it is the answer, and
// the search resumes where the last call of the same search stopped, so
// its cost is linear in the bytes of the stream however they are
// segmented.
//
// A datagram is searched on its own: a candidate is verified when its
// whole message is in b and either ends b exactly or is followed by a
// whole plausible header. Sync returns the first verified candidate.
// Failing that, it asks for more data from the first candidate that could
// not be verified yet. A verified candidate wins over an earlier
// unverified one: a single header read out of a message body is far more
// likely than a chain of two.
func (p *parser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	if !p.udp {
		return p.syncStream(c, b)
	}
	i, step := 0, 1
	wait := -1
	for ; i < len(b); i += step {
		v := plausible(b[i:])
		if v == bad {
			continue
		}
		if v == partial {
			if wait < 0 {
				wait = i
			}
			break // later offsets hold even less
		}
		l := int(be.Uint32(b[i:]))
		n := padded(uint32(l))
		switch {
		case i+n == len(b), p.udp && i+n > len(b) && i+l == len(b):
			return i, true // ends b (a datagram may lack the last padding)
		case i+n > len(b):
			if wait < 0 {
				wait = i
			}
			continue
		}
		switch plausible(b[i+n:]) {
		case good:
			return i, true
		case partial:
			if wait < 0 {
				wait = i
			}
		}
	}
	if wait >= 0 {
		return wait, false
	}
	return len(b), false
}

// cookie decodes the 24-byte cookie b (README fact 1).
func (p *parser) cookie(c *dissect.Ctx, b []byte) int {
	r := c.Rec
	r.Type = TypeCookie
	p.dirs[c.Dir].phase = int((c.Offset + cookieLen) & (align - 1))
	p.dirs[c.Dir].cookiePhase = true
	ver := b[len(magic):16]
	for len(ver) > 0 && (ver[len(ver)-1] == ' ' || ver[len(ver)-1] == 0) {
		ver = ver[:len(ver)-1]
	}
	major := ver
	for i, ch := range ver {
		if ch == '.' {
			major = ver[:i]
			break
		}
	}
	if string(major) != knownMajor || len(major) == len(ver) {
		r.Warnf("cookie version %s differs from %s", ver, knownVersion)
	}
	mode := b[16+2]
	modeOK := mode >= '0' && mode <= '9'
	if !modeOK {
		r.Warnf("cookie log mode byte 0x%02x is not a digit", mode)
	} else if mode > '3' {
		r.Warnf("cookie log mode %c is not 0-3", mode)
	}
	if !c.Decode {
		return cookieLen
	}
	r.Add("version", dissect.Str(string(ver)))
	if modeOK {
		r.Add("log_mode", dissect.Int(int64(mode-'0')))
	}
	s := append(p.sum[:0], "cookie "...)
	s = append(s, ver...)
	if modeOK {
		s = append(s, " log_mode="...)
		s = append(s, mode)
	}
	p.sum = s
	r.Summary = string(s)
	return cookieLen
}

// parseLob parses the connect-back datagram "<host> <port>\0" (README fact
// 11): a host of letters, digits and dots, one space, a decimal port of
// 1-65535, one NUL that ends the datagram.
func parseLob(b []byte) (host []byte, port int, ok bool) {
	if len(b) < 4 || len(b) > maxLob || b[len(b)-1] != 0 {
		return nil, 0, false
	}
	s := b[:len(b)-1]
	sp := -1
	for i, ch := range s {
		switch {
		case ch == ' ':
			if sp >= 0 {
				return nil, 0, false
			}
			sp = i
		case ch >= '0' && ch <= '9':
		case sp < 0 && (ch == '.' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'):
		default:
			return nil, 0, false
		}
	}
	if sp < 1 || len(s)-sp-1 < 1 || len(s)-sp-1 > 5 {
		return nil, 0, false
	}
	for _, ch := range s[sp+1:] {
		port = port*10 + int(ch-'0')
	}
	if port < 1 || port > 65535 {
		return nil, 0, false
	}
	return s[:sp], port, true
}

// lob emits the connect-back datagram as a udp_callback record.
func (p *parser) lob(c *dissect.Ctx, b, host []byte, port int) int {
	r := c.Rec
	r.Type = TypeUDPCallback
	if port < 1024 {
		r.Warnf("callback port %d is below 1024: mainline ignores the request", port)
	}
	if c.Decode {
		r.Add("host", dissect.Str(string(host)))
		r.Add("port", dissect.Int(int64(port)))
		s := append(p.sum[:0], "connect back to "...)
		s = append(s, host...)
		s = append(s, ':')
		s = strconv.AppendInt(s, int64(port), 10)
		p.sum = s
		r.Summary = string(s)
	}
	return len(b)
}

// framed decodes the framed message at b[0] (README fact 2).
func (p *parser) framed(c *dissect.Ctx, b []byte) (int, error) {
	if len(b) < 4 {
		return 0, dissect.ErrNeedMore
	}
	length := be.Uint32(b)
	if length < headerLen || length > maxLength {
		return 0, dissect.Malformed(protoName, CodeBadLength, 0, "length field %d is outside %d..%d", length, headerLen, maxLength)
	}
	n := padded(length)
	cut := false
	if len(b) < n {
		// A UDP datagram whose last message lacks its padding: the
		// datagram's end ends the message.
		if !(c.Final && len(b) >= int(length)) {
			return n, dissect.ErrNeedMore
		}
		n, cut = len(b), true
	}
	h := readHeader(b)
	body := b[headerLen:length]
	d := &p.dirs[c.Dir]
	if !p.udp && d.phase < 0 {
		d.phase = int(c.Offset & (align - 1))
	}
	r := c.Rec
	if cut {
		r.Warnf("padding cut short: the datagram ends %d of the %d padding bytes after the body", n-int(length), padded(length)-int(length))
	}
	if h.usec >= 1000000 {
		r.Warnf("tv_usec %d is not below 1000000", h.usec)
	}
	if !p.udp {
		d.ref.saw(h.sec, h.usec, h.sequence, c.Time)
	}
	p.message(c, h, body)
	return n, nil
}

// names returns where the ids of direction dir are looked up.
func (p *parser) names(dir dissect.Dir) view {
	d := &p.dirs[dir]
	if !p.udp {
		return view{primary: d.names}
	}
	if !d.routed || d.routeGen != p.proto.gen {
		d.route = p.proto.route(p.info.Addr[dir.Other()])
		d.routeGen = p.proto.gen
		d.routed = true
	}
	return view{primary: d.route, local: d.names}
}

// registerUDP remembers the UDP destination announced by a UDP_DESCRIPTION
// sent on direction dir of this TCP connection: datagrams sent there carry
// the ids that the other direction describes (README fact 8, truth.json
// udp_message_flows).
func (p *parser) registerUDP(dir dissect.Dir, host []byte, port int) {
	if p.udp || port < 1 || port > 65535 {
		return
	}
	addr, err := netip.ParseAddr(string(host))
	if err != nil || addr.IsUnspecified() {
		addr = p.info.Addr[dir].Addr()
	}
	if !addr.IsValid() {
		return
	}
	p.proto.addRoute(netip.AddrPortFrom(addr, uint16(port)), p.dirs[dir.Other()].names)
}

func sentTime(h header) time.Time {
	// vrpn_int32 both, as mainline reads them (0xffffffff is -1).
	return time.Unix(int64(int32(h.sec)), int64(int32(h.usec))*1000)
}
