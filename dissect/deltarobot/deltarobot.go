package deltarobot

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
	"github.com/dissect-tools/dissect/dissect/layout"
)

const proto = "deltarobot"

// Message ids of protocol v6 (size id in bits 15-12, type in bits 11-0).
const (
	idMagic     = 0x3001
	idVersion   = 0x2002
	idPosition  = 0x4003
	idPing      = 0x3004
	idPong      = 0x3005
	idEOT       = 0xF006
	idDirection = 0x4007
	idDesired   = 0x4008
	idCurve     = 0xF009
)

// Record types.
const (
	typeMagic     = "protocol_magic"
	typeVersion   = "protocol_version"
	typePosition  = "actuator_position"
	typePing      = "ping"
	typePong      = "pong"
	typeEOT       = "end_of_transmission"
	typeDirection = "current_direction"
	typeDesired   = "desired_direction"
	typeCurve     = "curve"
	typeUnknown   = "unknown"
)

const (
	magicText = "DeltaRVr"
	// maxVarLen is the largest variable length accepted while looking for
	// message boundaries (Sync, and Parse before a direction is trusted).
	maxVarLen = 1 << 20
	// chainLen is how many consecutive known messages Sync wants.
	chainLen = 3
	// trustAfter is how many messages a direction must decode before Parse
	// takes unknown ids and large variable lengths at face value.
	trustAfter = 2
	// maxPings bounds the outstanding pings kept per direction.
	maxPings = 64
	// maxCurvePoints bounds the points decoded from one curve message (each
	// point costs four fields of the record's scratch area).
	maxCurvePoints = 16384
)

// magicBytes is the whole protocol_magic message as it appears on the wire.
var magicBytes = [10]byte{0x01, 0x30, 'D', 'e', 'l', 't', 'a', 'R', 'V', 'r'}

type protocol struct{ d *described }

// New returns the Deltarobot VR protocol. It has no default port: streams
// are chosen by content (the handshake) or by a decode-as rule such as
// "tcp.port==4000,deltarobot".
func New() dissect.Protocol { return protocol{d: mustDescribe()} }

// mustDescribe compiles the description, a fixed table: an error is a
// mistake in this package, which every test of it meets first.
func mustDescribe() *described {
	d, err := describe()
	if err != nil {
		panic(err)
	}
	return d
}

// Info describes the protocol (a new value on each call).
func (protocol) Info() dissect.Info {
	return dissect.Info{
		Name:       proto,
		Proto:      proto,
		Title:      "Deltarobot VR (Qt leader ↔ Unity follower)",
		Transports: []dissect.Transport{dissect.TCP, dissect.Serial},
		Detection: `the handshake message 0x3001 "DeltaRVr" (01 30 44 65 6c 74 61 52 56 72) at the start of a direction; ` +
			"mid-stream (no handshake seen), three known messages in a row",
		Types: mustDescribe().decls,
	}
}

// Detect answers Yes when b starts with the protocol_magic message, Maybe
// when b is a shorter prefix of it, and No otherwise.
func (protocol) Detect(_ *dissect.StreamInfo, _ dissect.Dir, b []byte) dissect.Verdict {
	n := min(len(b), len(magicBytes))
	if string(b[:n]) != string(magicBytes[:n]) {
		return dissect.No
	}
	if n == len(magicBytes) {
		return dissect.Yes
	}
	return dissect.Maybe
}

func (p protocol) NewParser(*dissect.StreamInfo) dissect.Parser {
	return &parser{d: p.d, fast: p.d.fast, dec: p.d.plan.NewDecoder(),
		pings: exchange.Matcher{Rules: exchange.Rules{Bound: maxPings}}}
}

// End notes the pings forgotten past the bound (dissect.Ender).
func (p *parser) End(c *dissect.Ctx) { exchange.NoteLost(c, proto, &p.pings) }

// parser keeps the per-stream state: the handshake progress of each
// direction and the pings each direction sent.
type parser struct {
	d     *described
	fast  [16]fastEntry // d.fast, copied: one load less per message
	dec   *layout.Decoder
	seen  [2]uint8         // messages decoded per direction, saturating at trustAfter
	pings exchange.Matcher // the pings each direction sent, by id (pingRules)
	// examined counts the offsets Sync looked at, for the test that bounds
	// its work.
	examined int64
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func f32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

// knownLow reports whether c can be the first (low) byte of a known id.
func (d *described) knownLow(c byte) bool {
	return c != 0 && int(c) < len(d.byLow) && d.byLow[c].id != 0
}

// frame returns the header and content sizes of the message with this id.
// ok is false for size ids 0x5-0xE. For size id 0xF the content size is
// not known here (varLen is true).
func frame(id uint16) (hdr, n int, varLen, ok bool) {
	switch sz := id >> 12; {
	case sz <= 4:
		return 2, 1 << sz, false, true
	case sz == 0xF:
		return 6, 0, true, true
	}
	return 0, 0, false, false
}

// Parse frames and decodes the message at b[0]. Errors have code
// "bad_size_id" (size id 0x5-0xE), "no_sync" (an unknown id, or a variable
// length over 1 MiB, before the direction has decoded two messages) or
// "implausible_length" (a variable length over 1 MiB afterwards).
// Bytes values in the record alias b.
func (p *parser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	if len(b) >= 2 {
		id := le16(b)
		if f := &p.fast[id&0xf]; f.id == id && p.seen[c.Dir&1] >= trustAfter && len(b) >= 2+f.size {
			// The vector messages that make up the bulk of a stream: a
			// fixed size and nothing but their layout (a small function
			// for them, the rest in parse).
			c.Rec.Type = f.name
			if c.Decode {
				f.fx.Decode(c.Rec.Extend(f.fx.Len()), b[2:])
			}
			return 2 + f.size, nil
		}
	}
	return p.parse(c, b)
}

func (p *parser) parse(c *dissect.Ctx, b []byte) (int, error) {
	dir := c.Dir & 1
	trusted := p.seen[dir] >= trustAfter
	if len(b) < 2 {
		return 0, dissect.ErrNeedMore
	}
	id := le16(b)
	e := p.d.lookup(id)
	hdr, n, varLen, ok := frame(id)
	if !ok {
		return 0, dissect.Malformed(proto, "bad_size_id", 0, "message id 0x%04x has size id 0x%x, for which the protocol defines no length", id, id>>12)
	}
	if !trusted && e == nil {
		return 0, dissect.Malformed(proto, "no_sync", 0, "message id 0x%04x is unknown and fewer than %d messages were decoded in this direction: looking for a message boundary", id, trustAfter)
	}
	if varLen {
		if len(b) < 6 {
			return 0, dissect.ErrNeedMore
		}
		v := le32(b[2:])
		switch {
		case !trusted && v > maxVarLen:
			return 0, dissect.Malformed(proto, "no_sync", 2, "message id 0x%04x declares %d content bytes (over %d) before the direction was trusted: looking for a message boundary", id, v, maxVarLen)
		case v > maxVarLen:
			// Sync would never take this length for a message: do not let
			// it swallow the rest of the direction either.
			return 0, dissect.Malformed(proto, "implausible_length", 2, "message id 0x%04x declares %d content bytes, over the %d-byte plausibility limit: looking for a message boundary", id, v, maxVarLen)
		}
		n = int(v)
	}
	total := hdr + n
	if total > len(b) {
		return total, dissect.ErrNeedMore
	}
	body := b[hdr:total]
	if e == nil {
		p.unknown(c, id, body)
	} else if err := p.decode(c, e, body); err != nil {
		return 0, err
	}
	if !trusted {
		p.handshake(c, id)
	}
	return total, nil
}

// decode decodes a known message's content by its layout, then its hook.
// A message with a hook is decoded also without Decode (the hook checks
// its values), and its fields are then dropped.
func (p *parser) decode(c *dissect.Ctx, e *entry, body []byte) error {
	r := c.Rec
	r.Type = e.name
	if e.t >= 0 && (c.Decode || e.hook != nil) {
		if _, err := p.dec.Decode(r, e.t, body); err != nil {
			// not met: describe checked each layout against its size
			return dissect.Malformed(proto, "bad_content", 2, "%s: %v", e.name, err)
		}
	}
	if e.hook != nil {
		e.hook(p, c, body)
	}
	if !c.Decode {
		r.Fields = r.Fields[:0]
	}
	return nil
}

// handshake checks that a direction starts with magic then version, and
// counts the messages decoded until the direction is trusted.
func (p *parser) handshake(c *dissect.Ctx, id uint16) {
	dir := c.Dir & 1
	switch p.seen[dir] {
	case 0:
		if id != idMagic {
			c.Rec.Warnf("stream does not begin with magic + version: first message is %s, not protocol_magic", c.Rec.Type)
		}
	case 1:
		if id != idVersion {
			c.Rec.Warnf("stream does not begin with magic + version: second message is %s, not protocol_version", c.Rec.Type)
		}
	}
	p.seen[dir]++
}

// magic warns when the magic is not "DeltaRVr" and shows it as valid
// UTF-8.
func (p *parser) magic(c *dissect.Ctx, body []byte) {
	if string(body) == magicText {
		return
	}
	r := c.Rec
	r.Warnf("protocol_magic: content %q is not %q", body, magicText)
	if c.Decode {
		setLast(r, dissect.Str(text(body, isASCII(body))))
	}
}

// version warns when the version is not 1.
func (p *parser) version(c *dissect.Ctx, _ []byte) {
	if v := p.dec.Raw(0); v != 1 {
		c.Rec.Warnf("protocol_version: version %d, this decoder knows version 1", v)
	}
}

// eot warns when the reason is not ASCII and shows it as valid UTF-8.
func (p *parser) eot(c *dissect.Ctx, body []byte) {
	if isASCII(body) {
		return
	}
	c.Rec.Warn("end_of_transmission: reason is not ASCII")
	if c.Decode {
		setLast(c.Rec, dissect.Str(text(body, false)))
	}
}

// setLast replaces the value of the field the layout recorded last.
func setLast(r *dissect.Record, v dissect.Value) { r.Fields[len(r.Fields)-1].Value = v }

// ping keeps the ping's id for its pong and adds id_hex.
func (p *parser) ping(c *dissect.Ctx, _ []byte) {
	dir := c.Dir & 1
	v := uint64(p.dec.Raw(0))
	p.pings.Request(dir, 0, exchange.Uint(v), c.Time, c.Offset)
	if c.Decode {
		pingFields(c.Rec, v, 0, false)
	}
}

// pong matches its ping and adds id_hex and rtt_ms.
func (p *parser) pong(c *dissect.Ctx, _ []byte) {
	dir := c.Dir & 1
	v := uint64(p.dec.Raw(0))
	ping, matched, _ := p.pings.Reply(dir, exchange.Uint(v), c.Time, 0)
	if c.Decode {
		pingFields(c.Rec, v, exchange.Millis(c.Time.Sub(ping.Time)), matched)
	}
}

// curve decodes the points [x, y, z] and warns of trailing bytes.
func (p *parser) curve(c *dissect.Ctx, body []byte) {
	r := c.Rec
	npts, rest := len(body)/12, len(body)%12
	if rest != 0 {
		r.Warnf("curve: %d bytes is not a multiple of 12: %d trailing bytes (%s) are not a point", len(body), rest, hex.EncodeToString(body[len(body)-rest:]))
	}
	nd := min(npts, maxCurvePoints)
	if nd < npts {
		r.Warnf("curve: %d points, only the first %d are decoded", npts, nd)
	}
	if !c.Decode {
		return
	}
	fs := r.Alloc(4 * nd)
	pts, xyz := fs[:nd], fs[nd:]
	for i := range nd {
		q := body[12*i : 12*i+12]
		e := xyz[3*i : 3*i+3 : 3*i+3]
		e[0].Value.SetFloat32(f32(q[0:])) // Alloc's fields are zeroed: no key
		e[1].Value.SetFloat32(f32(q[4:]))
		e[2].Value.SetFloat32(f32(q[8:]))
		pts[i] = dissect.Elem(dissect.Array(e))
	}
	r.Add("points", dissect.Array(pts))
	r.Summary = "points=" + strconv.Itoa(npts)
}

// pingFields adds to a ping's or pong's id (the random 64-bit number,
// which exceeds 2^53 for most pings, recorded by the layout): id_hex (the same number as "0x" and 16
// lower-case hex digits, most significant first: a string that jq 1.6 and
// JavaScript cannot round, and that BigInt(), int(s, 16) and DuckDB's casts
// read back), and for a pong whose ping was seen, rtt_ms. The table shows
// id_hex (the Summary), so that a line of the table and a JSON record can be
// matched by the same text.
func pingFields(r *dissect.Record, id uint64, rttMS float64, hasRTT bool) {
	var buf [48]byte
	b := append(buf[:0], "id=0x"...)
	for sh := 60; sh >= 0; sh -= 4 {
		b = append(b, hexDigits[id>>uint(sh)&15])
	}
	if hasRTT {
		b = append(b, " rtt_ms="...)
		b = strconv.AppendFloat(b, rttMS, 'g', 6, 64)
	}
	sum := string(b)
	r.Add("id_hex", dissect.Str(sum[len("id="):len("id=0x")+16]))
	if hasRTT {
		r.Add("rtt_ms", dissect.Float(rttMS))
	}
	r.Summary = sum
}

const hexDigits = "0123456789abcdef"

// unknown records an id the table does not hold, with its content.
func (p *parser) unknown(c *dissect.Ctx, id uint16, body []byte) {
	r := c.Rec
	r.Type = typeUnknown
	t := id & 0xfff
	switch {
	case t == 0:
		r.Warnf("message id 0x%04x: type 0x000 is reserved as invalid", id)
	case t < uint16(len(p.d.byLow)) && p.d.byLow[t].id != 0:
		want := &p.d.byLow[t]
		r.Warnf("message id 0x%04x: type 0x%03x is %s with id 0x%04x; size id 0x%x does not match", id, t, want.name, want.id, id>>12)
	default:
		r.Warnf("unknown message id 0x%04x", id)
	}
	if c.Decode {
		r.Add("message_id", dissect.Int(int64(id)))
		r.Add("data", dissect.Bytes(body))
		r.Summary = "id=0x" + strconv.FormatUint(uint64(id)|0x10000, 16)[1:] + " len=" + strconv.Itoa(len(body))
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// text returns b as valid UTF-8 (invalid bytes become U+FFFD).
func text(b []byte, ascii bool) string {
	if ascii || utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// chain outcomes.
const (
	reject = iota
	undecided
	accept
)

// chain judges whether a message boundary is at b[0]: accept when the
// messages framed from there are chainLen complete known messages or include
// a complete, correct protocol_magic; reject as soon as a byte rules it out;
// undecided when b ends first. With last (no byte follows b: the end of
// the direction or a gap), one that b cuts short is rejected; with end
// too (the direction has ended, Ctx.End), a chain of at least two
// complete known messages that ends exactly where b ends is accepted.
func (d *described) chain(b []byte, last, end bool) int {
	p := 0
	for i := range chainLen {
		switch len(b) - p {
		case 0:
			if end && i >= 2 {
				return accept
			}
			if last {
				return reject
			}
			return undecided
		case 1:
			if d.knownLow(b[p]) {
				return cut(last)
			}
			return reject
		}
		id := le16(b[p:])
		if d.lookup(id) == nil {
			return reject
		}
		hdr, n, varLen, _ := frame(id)
		if varLen {
			if len(b)-p < 6 {
				return cut(last)
			}
			v := le32(b[p+2:])
			if v > maxVarLen {
				return reject
			}
			n = int(v)
		}
		end := p + hdr + n
		if end > len(b) {
			return cut(last)
		}
		if id == idMagic && string(b[p:end]) == string(magicBytes[:]) {
			return accept
		}
		p = end
	}
	return accept
}

// cut is chain's answer when b ends inside a message.
func cut(last bool) int {
	if last {
		return reject
	}
	return undecided
}

// Sync returns the first offset of b where a chain is accepted, or the first
// where it is undecided (with false) so that it is judged again with more
// bytes; len(b) when every offset is ruled out.
//
// The search needs no state between calls to stay linear: dissect.Stream
// holds the bytes from the offset Sync answered, so an offset ruled out is
// never looked at again, and the undecided one costs at most chainLen
// headers per call (chain skips message contents without reading them).
func (p *parser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	for i := range b {
		if !p.d.knownLow(b[i]) {
			continue
		}
		p.examined++
		switch p.d.chain(b[i:], c.Last, c.Last && c.End) {
		case accept:
			return i, true
		case undecided:
			return i, false
		}
	}
	return len(b), false
}
