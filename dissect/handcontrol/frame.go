package handcontrol

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
	"github.com/dissect-tools/dissect/dissect/pbwalk"
)

// parser is the parser of one stream: the requests in flight and the
// payload decoder's scratch space.
type parser struct {
	proto *protocol
	info  *dissect.StreamInfo
	dec   pbwalk.Decoder
	ex    exchange.Matcher // the requests in flight (replies.go)
	ans   []int32          // scratch: the request codes a reply answers
	sum   []byte
	look  [2]look // per direction, the frame waiting for its bytes
}

// look is where the search inside a frame that waits for the bytes its
// size declares stands (see Parse): the frame at stream offset off has
// no SFD starting a whole valid frame before offset pos of it.
type look struct {
	set bool
	off int64
	pos int
}

// newParser returns the parser of stream s.
func newParser(p *protocol, s *dissect.StreamInfo) *parser {
	return &parser{proto: p, info: s, dec: pbwalk.Decoder{WarnPrefix: "payload: "}, ex: exchange.Matcher{Rules: exchangeRules()}}
}

// Error codes of the malformed errors.
const (
	errNoSFD       = "no_sfd"
	errImplausible = "implausible_frame"
)

// Parse frames the frame at b[0] by its size field and decodes it. A frame
// is valid when its CRC matches under either convention (crc_scope); one
// whose CRC matches neither is decoded (crc_ok false, with a warning)
// unless it is also implausible (see implausible): then Parse returns a
// malformed error so that the framework resynchronises at the next SFD.
//
// While the bytes a size declares have not all come, the size is trusted
// only as long as no whole frame with a valid CRC starts at an SFD inside
// what has come (see inner): a size that runs over valid frames is
// malformed at once, so that a corrupt size (up to 65535) does not hide
// the frames after it until its end, or as an incomplete message when the
// stream ends first.
func (p *parser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	for i := range min(len(b), sfdLen) {
		if b[i] != sfd[i] {
			return 0, dissect.Malformed(protoName, errNoSFD, i, "no start-of-frame delimiter: byte %d is 0x%02x, want 0x%02x (fd ba dc 01 50 b4 11 ff)", i, b[i], sfd[i])
		}
	}
	total, ok := frameSize(b)
	if !ok {
		return 0, dissect.ErrNeedMore
	}
	size := total - overhead
	code := b[8]
	if len(b) < total {
		if j := p.inner(c, b); j > 0 {
			return 0, dissect.Malformed(protoName, errImplausible, 0,
				"frame of type %d declares %d payload bytes, yet a whole frame with a valid crc starts %d bytes into it: the size is not trusted; resynchronising at the next start-of-frame delimiter",
				code, size, j)
		}
		return total, dissect.ErrNeedMore
	}
	host := c.Dir == 0
	wire, computed, scope := checkCRC(b[:total])
	if scope == "" {
		if why := implausible(code, host, b[:total]); why != "" {
			return 0, dissect.Malformed(protoName, errImplausible, 0,
				"frame of type %d with %d payload bytes: crc 0x%02x on the wire, 0x%02x computed, and %s; resynchronising at the next start-of-frame delimiter",
				code, size, wire, computed, why)
		}
	}
	p.record(c, code, host, b[headerLen:total-1], wire, computed, scope)
	return total, nil
}

// inner looks, in the bytes b that have come of a frame still waiting for
// the rest its size declares, for an SFD that starts a whole frame with a
// valid CRC, and returns its offset in b (0 when there is none yet). SFDs
// are looked at in order; the search waits at one whose frame has not all
// come (a size that is itself corrupt is then judged once the first
// frame's bytes have all come, by implausible). It resumes where the last
// call for the same frame stopped, so waiting for a frame costs time
// linear in its bytes however they are segmented.
func (p *parser) inner(c *dissect.Ctx, b []byte) int {
	l := &p.look[c.Dir&1]
	if !l.set || l.off != c.Offset {
		*l = look{set: true, off: c.Offset, pos: 1}
	}
	for l.pos < len(b) {
		i, found := frames[0].Hunt(b[l.pos:])
		if !found {
			l.pos += i // a partial SFD may end b
			return 0
		}
		j := l.pos + i
		n, ok := frameSize(b[j:])
		if !ok || len(b)-j < n {
			l.pos = j
			return 0
		}
		if _, _, scope := checkCRC(b[j : j+n]); scope != "" {
			l.set = false
			return j
		}
		l.pos = j + 1
	}
	return 0
}

// Sync returns the offset of the next SFD in b, or, when there is none, the
// offset of a trailing partial SFD (with false) so it is judged again with
// more bytes.
func (p *parser) Sync(_ *dissect.Ctx, b []byte) (int, bool) {
	return frames[0].Hunt(b)
}

// sentBy reports whether code is sent by the host (requests 4-17) or by
// the device (ACK, ERR, Telemetry and the replies 4, 6, 13, 16).
func sentBy(code byte, host bool) bool {
	if host {
		return code >= codeGetSettings && code < numCodes
	}
	return code == codeTelemetry || isResponse(code)
}

// carriesData reports whether code, sent by that side, has a payload
// message (the table of protocols.md §1.5).
func carriesData(code byte, host bool) bool {
	if int(code) >= numCodes {
		return true
	}
	if host {
		return requestMsg[code] != ""
	}
	return responseMsg[code] != ""
}

// implausible is the rule applied to a frame whose CRC does not match. The
// frame is rejected (the caller resynchronises) when one of these holds:
//   - its code is 0 or above 17;
//   - its code is not sent by that side (see sentBy);
//   - its code carries no payload from that side, yet its size is not 0;
//   - an SFD starts inside the frame after its own, or the frame ends with
//     at least the first 2 bytes of one: the size ran over the next frame.
//
// Otherwise it returns "" and the frame is decoded, with crc_ok false.
func implausible(code byte, host bool, frame []byte) string {
	switch {
	case code == codeEmpty:
		return "code 0 (Empty) must never appear"
	case int(code) >= numCodes:
		return "code " + strconv.Itoa(int(code)) + " is not defined"
	case !sentBy(code, host):
		return "code " + strconv.Itoa(int(code)) + " (" + typeName(code) + ") is not sent by the " + side(host)
	case len(frame) > overhead && !carriesData(code, host):
		return "code " + strconv.Itoa(int(code)) + " (" + typeName(code) + ") from the " + side(host) + " carries no payload"
	}
	if i := bytes.Index(frame[1:], sfd); i >= 0 {
		return "another start-of-frame delimiter begins " + strconv.Itoa(i+1) + " bytes into the frame"
	}
	for k := sfdLen - 1; k >= 2; k-- {
		if bytes.HasSuffix(frame, sfd[:k]) {
			return "the frame ends with the first " + strconv.Itoa(k) + " bytes of a start-of-frame delimiter"
		}
	}
	return ""
}

func side(host bool) string {
	if host {
		return "host"
	}
	return "device"
}

// message returns the message for a payload of code from that side: the
// schema's message, its name, the v1 alternative; nil for raw decoding.
// A type-13 reply to GetMioPatterns (quirk) has its own message.
func (s *schemaSet) message(code byte, host, quirk bool) (m *pbwalk.Message, name string, alt *pbwalk.Message) {
	if s.raw || code == codeEmpty || int(code) >= numCodes {
		return nil, schemaRaw, nil
	}
	if quirk {
		return s.quirk, s.quirkName, s.quirkV1
	}
	if host {
		m, name, alt = s.req[code], s.reqName[code], s.reqV1[code]
		if m == emptyMsg && !sentBy(code, host) && s.resp[code] != emptyMsg {
			return s.resp[code], s.respName[code], s.respV1[code]
		}
		return m, name, alt
	}
	m, name, alt = s.resp[code], s.respName[code], s.respV1[code]
	if m == emptyMsg && !sentBy(code, host) && s.req[code] != emptyMsg {
		return s.req[code], s.reqName[code], s.reqV1[code]
	}
	return m, name, alt
}

// record fills c.Rec for a framed message.
func (p *parser) record(c *dissect.Ctx, code byte, host bool, payload []byte, wire, computed byte, scope string) {
	r := c.Rec
	r.Type = typeName(code)
	role := RoleRequest
	if !host {
		role = RoleResponse
		if code == codeTelemetry {
			role = RoleTelemetry
		}
	}
	for _, note := range p.proto.runNotes() {
		c.Note("%s", note)
	}
	if scope == "" {
		r.Warnf("crc 0x%02x on the wire, 0x%02x computed", wire, computed)
	}
	switch {
	case code == codeEmpty:
		r.Warn("code 0 (Empty) is invalid on the wire")
	case int(code) >= numCodes:
		r.Warnf("unknown code %d", code)
	case !sentBy(code, host):
		if host {
			r.Warnf("code %d (%s) sent by the host: the host sends the requests 4-17", code, r.Type)
		} else {
			r.Warnf("code %d (%s) sent by the device: the device sends ACK, ERR, Telemetry and the replies 4, 6, 13 and 16", code, r.Type)
		}
	}

	// Requests and replies.
	warnDropped(r, p.ex.Expire(c.Time), p.ex.Rules)
	var req exchange.Entry
	matched, quirk := false, false
	switch {
	case host:
		if code >= codeACK && code < numCodes {
			p.request(c, code)
		}
	case isResponse(code):
		req, matched = p.response(c, code)
		if matched && code == codeGetTelemetry && req.Type == codeGetMioPatterns {
			quirk = true
			if p.proto.schema.quirk != nil {
				r.Warn("GetMioPatterns (16) answered with type 13 (GetTelemetry): a known device quirk; the payload is decoded as patterns.GetMioPatterns")
			} else {
				r.Warn("GetMioPatterns (16) answered with type 13 (GetTelemetry): a known device quirk; the payload is decoded raw")
			}
		}
	}

	// Payload.
	m, schema, alt := p.proto.schema.message(code, host, quirk)
	if m == emptyMsg && len(payload) > 0 {
		r.Warnf("code %d (%s) from the %s carries no payload, yet has %d bytes; decoded raw", code, r.Type, side(host), len(payload))
		m, schema = nil, schemaRaw
	}
	nw := len(r.Warnings)
	fields, raw, issues, err := p.dec.Decode(r, m, payload, c.Decode)
	if err == nil && issues > 0 && alt != nil && p.dec.Check(alt, payload) {
		r.Warnings = r.Warnings[:nw]
		fields, raw, _, err = p.dec.Decode(r, alt, payload, c.Decode)
		schema = schemaV1
	}
	ok := err == nil
	if !ok {
		name := "raw"
		if m != nil {
			name = m.Name()
		}
		r.Warnf("payload of %d bytes does not parse as protobuf (%s): %s", len(payload), name, wireReason(err))
	}
	if !c.Decode {
		return
	}
	r.Add("code", dissect.Int(int64(code)))
	r.Add("role", dissect.Str(role))
	r.Add("crc", dissect.Int(int64(wire)))
	r.Add("crc_ok", dissect.Bool(scope != ""))
	if scope != "" {
		r.Add("crc_scope", dissect.Str(scope))
	}
	if ok {
		r.Add("payload", dissect.Object(fields))
		if raw != nil {
			r.Add("payload_raw", dissect.Array(raw))
		}
		r.Add("schema", dissect.Str(schema))
	} else {
		r.Add("payload_hex", dissect.Bytes(payload))
	}
	var latency time.Duration
	if matched {
		latency = c.Time.Sub(req.Time)
		r.Add("request_code", dissect.Int(int64(req.Type)))
		r.Add("latency_ms", dissect.Float(exchange.Millis(latency)))
	}
	r.Summary = p.summary(r.Type, host, fields, raw, ok, payload, matched, byte(req.Type), latency)
}

// wireReason renders a pbwalk error without its package prefix: "truncated
// tag at offset 0".
func wireReason(err error) string {
	var we *pbwalk.Error
	if errors.As(err, &we) {
		return we.Reason + " at offset " + strconv.Itoa(we.Offset)
	}
	return err.Error()
}

// Summary limits.
const (
	maxSummaryFields = 6
	maxSummaryText   = 40
	maxSummaryHex    = 16
)

// summary returns the table text: an arrow for the direction, the type, the
// first payload fields (then the fields shown raw, as PARENT.NAME or
// PARENT.NUMBER) and, for a matched reply, the request and latency.
func (p *parser) summary(typ string, host bool, fields, raw []dissect.Field, ok bool, payload []byte, matched bool, req byte, latency time.Duration) string {
	b := p.sum[:0]
	if host {
		b = append(b, "→ "...)
	} else {
		b = append(b, "← "...)
	}
	b = append(b, typ...)
	if ok {
		n := 0
		for _, f := range fields {
			if n == maxSummaryFields {
				break
			}
			n++
			b = append(b, ' ')
			key := f.Key
			if k, cut := cutSuffix(key, "_finger_position"); cut {
				key = k
			}
			b = append(b, key...)
			b = append(b, '=')
			b = appendShort(b, f.Value)
		}
		for _, it := range raw {
			if n == maxSummaryFields {
				break
			}
			n++
			b = append(b, ' ')
			b = appendRawItem(b, it.Value)
		}
		if len(fields)+len(raw) > n {
			b = append(b, " …"...)
		}
	} else {
		b = append(b, " payload="...)
		b = appendHex(b, payload)
	}
	if matched {
		b = append(b, "; reply to "...)
		b = append(b, typeName(req)...)
		b = append(b, " in "...)
		b = strconv.AppendFloat(b, float64(latency)/float64(time.Millisecond), 'f', -1, 64)
		b = append(b, " ms"...)
	}
	p.sum = b
	return string(b)
}

// appendRawItem writes an item of payload_raw as PARENT.KEY=VALUE, KEY
// the field's name when the schema has it, else its number.
func appendRawItem(b []byte, item dissect.Value) []byte {
	var key, val dissect.Value
	parent := ""
	for _, f := range item.Items() {
		switch f.Key {
		case "parent":
			parent = f.Value.Str()
		case "field":
			if key.Kind() == dissect.KindNull {
				key = f.Value
			}
		case "name":
			key = f.Value
		case "uint", "text", "bytes":
			val = f.Value
		}
	}
	if parent != "" {
		b = append(b, parent...)
		b = append(b, '.')
	}
	if key.Kind() == dissect.KindString {
		b = append(b, key.Str()...)
	} else {
		b = strconv.AppendInt(b, key.Int(), 10)
	}
	b = append(b, '=')
	return appendShort(b, val)
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

func appendHex(b, data []byte) []byte {
	n := min(len(data), maxSummaryHex)
	b = hex.AppendEncode(b, data[:n])
	if n < len(data) {
		b = append(b, "…"...)
	}
	return b
}

// appendShort writes a value compactly: numbers, quoted strings cut at 40
// bytes, hex cut at 16 bytes, {…} for messages and [n] for arrays.
func appendShort(b []byte, v dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindInt:
		return strconv.AppendInt(b, v.Int(), 10)
	case dissect.KindUint:
		return strconv.AppendUint(b, v.Uint(), 10)
	case dissect.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case dissect.KindFloat:
		return strconv.AppendFloat(b, v.Float(), 'g', 6, 64)
	case dissect.KindFloat32:
		return strconv.AppendFloat(b, v.Float(), 'g', 6, 32)
	case dissect.KindString:
		s := v.Str()
		if looksLikeEnum(s) {
			return append(b, s...)
		}
		if len(s) > maxSummaryText {
			return append(strconv.AppendQuote(b, s[:maxSummaryText]), "…"...)
		}
		return strconv.AppendQuote(b, s)
	case dissect.KindBytes:
		return appendHex(b, v.Raw())
	case dissect.KindObject:
		return append(b, "{…}"...)
	case dissect.KindArray:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(len(v.Items())), 10)
		return append(b, ']')
	}
	return append(b, "null"...)
}

// looksLikeEnum reports whether s reads like an enum value name
// (MODULE_STATUS_WORK), shown unquoted.
func looksLikeEnum(s string) bool {
	if s == "" || len(s) > maxSummaryText {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c == '_' || c >= '0' && c <= '9' && i > 0) {
			return false
		}
	}
	return true
}

// End notes the requests still unanswered when the stream ends. The
// framework calls it when both directions have ended, if it supports the
// hook; otherwise unanswered requests are reported only on a later record
// of the stream (see exchangeRules).
func (p *parser) End(c *dissect.Ctx) {
	for _, msg := range p.unanswered() {
		c.Note("%s", msg)
	}
	p.ex.Forget()
}

// unanswered returns one line per request still in flight.
func (p *parser) unanswered() []string {
	var out []string
	id := 0
	if p.info != nil {
		id = p.info.ID
	}
	for _, q := range p.ex.Waiting(0) {
		out = append(out, protoName+": stream "+strconv.Itoa(id)+": request "+typeName(byte(q.Type))+" at offset "+strconv.FormatInt(q.Off, 10)+" was never answered")
	}
	return out
}
