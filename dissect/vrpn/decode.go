package vrpn

import (
	"math"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
)

// message fills c.Rec for the framed message with header h and unpadded
// body body. Descriptions update the name tables whether or not c.Decode
// is set.
func (p *parser) message(c *dissect.Ctx, h header, body []byte) {
	r := c.Rec
	v := p.names(c.Dir)
	if h.typ < 0 {
		p.system(c, h, body)
		return
	}
	e, described := v.typ(h.typ)
	sender, named := v.sender(h.sender)
	switch {
	case !described:
		r.Type = TypeUnknown
		r.Warnf("type id %d was not described", h.typ)
	case e.kind == kindReserved:
		r.Type = TypeUnknown
		r.Warnf("type id %d is described as %q, the name of another record type", h.typ, e.name)
	default:
		r.Type = e.name
	}
	if c.Decode {
		if named {
			p.headerFields(r, h, sender)
		} else {
			p.headerFields(r, h, strconv.FormatInt(int64(h.sender), 10))
		}
		p.sum = append(p.sum[:0], sender...)
		if !named {
			p.sum = append(p.sum, "sender "...)
			p.sum = strconv.AppendInt(p.sum, int64(h.sender), 10)
		}
	}
	if r.Type == TypeUnknown {
		p.raw(c, body, "type ", int64(h.typ))
		return
	}
	switch e.kind {
	case kindPosQuat:
		p.tracker(c, body, e.name, "pos", "quat", "")
	case kindVelocity:
		p.tracker(c, body, e.name, "vel", "vel_quat", "vel_quat_dt")
	case kindAcceleration:
		p.tracker(c, body, e.name, "acc", "acc_quat", "acc_quat_dt")
	case kindButtonChange:
		p.buttonChange(c, body, e.name)
	case kindButtonStates:
		p.buttonStates(c, body, e.name)
	case kindAnalog:
		p.analog(c, body, e.name)
	case kindDial:
		p.dial(c, body, e.name)
	case kindPing, kindPong:
		p.pingPong(c, e.kind, sender, named, body)
	case kindCatalog:
		p.catalogue(c, body, e.def, sender, named)
	default:
		p.raw(c, body, e.name, -1)
	}
}

// headerFields adds the fields every framed message starts with.
func (p *parser) headerFields(r *dissect.Record, h header, sender string) {
	r.Add("sender", dissect.Str(sender))
	r.Add("sender_id", dissect.Int(int64(h.sender)))
	r.Add("type_id", dissect.Int(int64(h.typ)))
	r.Add("sent", dissect.Time(sentTime(h)))
	r.Add("sequence", dissect.Uint(uint64(h.sequence)))
}

// summary appends to the summary begun in p.sum and sets it, when decoding.
func (p *parser) summary(c *dissect.Ctx, f func([]byte) []byte) {
	if !c.Decode {
		return
	}
	p.sum = f(p.sum)
	c.Rec.Summary = string(p.sum)
}

// raw adds the body as data hex; the summary names what it is (what, then
// id when id >= 0) and its size.
func (p *parser) raw(c *dissect.Ctx, body []byte, what string, id int64) {
	if !c.Decode {
		return
	}
	c.Rec.Add("data", dissect.Bytes(body))
	p.summary(c, func(s []byte) []byte {
		if len(s) > 0 {
			s = append(s, ' ')
		}
		s = append(s, what...)
		if id >= 0 {
			s = strconv.AppendInt(s, id, 10)
		}
		s = append(s, ' ')
		s = strconv.AppendInt(s, int64(len(body)), 10)
		return append(s, " bytes"...)
	})
}

// short reports a body too short for its type and writes it as hex. It
// returns true when the body is short.
func (p *parser) short(c *dissect.Ctx, body []byte, need int, name string) bool {
	if len(body) >= need {
		return false
	}
	c.Rec.Warnf("body of %d bytes too short for %s", len(body), name)
	p.raw(c, body, name, -1)
	return true
}

// long warns about bytes after the fixed part of a body.
func long(c *dissect.Ctx, body []byte, want int, name string) {
	if len(body) > want {
		c.Rec.Warnf("body of %d bytes is longer than the %d bytes of %s", len(body), want, name)
	}
}

func f64(b []byte) float64 { return math.Float64frombits(be.Uint64(b)) }
func i32(b []byte) int32   { return int32(be.Uint32(b)) }

func appendFloat(s []byte, v float64) []byte { return strconv.AppendFloat(s, v, 'g', 6, 64) }

// tracker decodes Pos_Quat, Velocity and Acceleration (README fact 13):
// i32 sensor, i32 sensor again, f64 vector[3], f64 quaternion x,y,z,w and,
// for Velocity and Acceleration (dt != ""), f64 dt.
func (p *parser) tracker(c *dissect.Ctx, body []byte, name, vec, quat, dt string) {
	need := 64
	if dt != "" {
		need = 72
	}
	if p.short(c, body, need, name) {
		return
	}
	long(c, body, need, name)
	r := c.Rec
	sensor, again := i32(body), i32(body[4:])
	if again != sensor {
		r.Warnf("sensor %d repeated as %d", sensor, again)
	}
	if !c.Decode {
		return
	}
	r.Add("sensor", dissect.Int(int64(sensor)))
	pos := r.Alloc(3)
	for i := range pos {
		pos[i].Value = dissect.Float(f64(body[8+8*i:]))
	}
	r.Add(vec, dissect.Array(pos))
	q := r.Alloc(4)
	for i, k := range [4]string{"x", "y", "z", "w"} {
		q[i] = dissect.Field{Key: k, Value: dissect.Float(f64(body[32+8*i:]))}
	}
	r.Add(quat, dissect.Object(q))
	if dt != "" {
		r.Add(dt, dissect.Float(f64(body[64:])))
	}
	p.summary(c, func(s []byte) []byte {
		s = append(s, " sensor="...)
		s = strconv.AppendInt(s, int64(sensor), 10)
		s = append(s, ' ')
		s = append(s, vec...)
		s = append(s, "=("...)
		for i := range pos {
			if i > 0 {
				s = append(s, ',')
			}
			s = appendFloat(s, pos[i].Value.Float())
		}
		s = append(s, ") quat=("...)
		for i := range q {
			if i > 0 {
				s = append(s, ',')
			}
			s = appendFloat(s, q[i].Value.Float())
		}
		s = append(s, ')')
		if dt != "" {
			s = append(s, " dt="...)
			s = appendFloat(s, f64(body[64:]))
		}
		return s
	})
}

// buttonChange decodes one (i32 button, i32 state) pair (README fact 14).
func (p *parser) buttonChange(c *dissect.Ctx, body []byte, name string) {
	if p.short(c, body, 8, name) {
		return
	}
	long(c, body, 8, name)
	if !c.Decode {
		return
	}
	button, state := i32(body), i32(body[4:])
	c.Rec.Add("button", dissect.Int(int64(button)))
	c.Rec.Add("state", dissect.Int(int64(state)))
	p.summary(c, func(s []byte) []byte {
		s = append(s, " button="...)
		s = strconv.AppendInt(s, int64(button), 10)
		s = append(s, " state="...)
		return strconv.AppendInt(s, int64(state), 10)
	})
}

// summaryItems is how many array items a summary shows.
const summaryItems = 8

// buttonStates decodes i32 count, then count i32 states (README fact 14).
func (p *parser) buttonStates(c *dissect.Ctx, body []byte, name string) {
	if p.short(c, body, 4, name) {
		return
	}
	count := i32(body)
	if count < 0 {
		c.Rec.Warnf("negative button count %d", count)
		p.raw(c, body, name, -1)
		return
	}
	need := 4 + 4*int64(count)
	if int64(len(body)) < need {
		c.Rec.Warnf("body of %d bytes too short for %s with %d buttons", len(body), name, count)
		p.raw(c, body, name, -1)
		return
	}
	long(c, body, int(need), name)
	if !c.Decode {
		return
	}
	states := c.Rec.Alloc(int(count))
	for i := range states {
		states[i].Value = dissect.Int(int64(i32(body[4+4*i:])))
	}
	c.Rec.Add("states", dissect.Array(states))
	p.summary(c, func(s []byte) []byte { return appendItems(append(s, " states="...), states) })
}

// appendItems writes up to summaryItems values as [a b c ...].
func appendItems(s []byte, items []dissect.Field) []byte {
	s = append(s, '[')
	for i, it := range items {
		if i == summaryItems {
			s = append(s, " …"...)
			break
		}
		if i > 0 {
			s = append(s, ' ')
		}
		if it.Value.Kind() == dissect.KindFloat {
			s = appendFloat(s, it.Value.Float())
		} else {
			s = strconv.AppendInt(s, it.Value.Int(), 10)
		}
	}
	return append(s, ']')
}

// analog decodes f64 count, then count f64 channels (README fact 15).
func (p *parser) analog(c *dissect.Ctx, body []byte, name string) {
	if p.short(c, body, 8, name) {
		return
	}
	count := f64(body)
	room := float64((len(body) - 8) / 8)
	if !(count >= 0 && count == math.Trunc(count)) {
		c.Rec.Warnf("channel count %v is not a whole number", count)
		p.raw(c, body, name, -1)
		return
	}
	if count > room {
		c.Rec.Warnf("body of %d bytes too short for %s with %v channels", len(body), name, count)
		p.raw(c, body, name, -1)
		return
	}
	n := int(count)
	long(c, body, 8+8*n, name)
	if !c.Decode {
		return
	}
	ch := c.Rec.Alloc(n)
	for i := range ch {
		ch[i].Value = dissect.Float(f64(body[8+8*i:]))
	}
	c.Rec.Add("channels", dissect.Array(ch))
	p.summary(c, func(s []byte) []byte { return appendItems(append(s, " channels="...), ch) })
}

// dial decodes f64 change, then i32 dial (README fact 16).
func (p *parser) dial(c *dissect.Ctx, body []byte, name string) {
	if p.short(c, body, 12, name) {
		return
	}
	long(c, body, 12, name)
	if !c.Decode {
		return
	}
	change, dial := f64(body), i32(body[8:])
	c.Rec.Add("change", dissect.Float(change))
	c.Rec.Add("dial", dissect.Int(int64(dial)))
	p.summary(c, func(s []byte) []byte {
		s = append(s, " dial="...)
		s = strconv.AppendInt(s, int64(dial), 10)
		s = append(s, " change="...)
		return appendFloat(s, change)
	})
}

// system decodes the system messages (negative type ids).
func (p *parser) system(c *dissect.Ctx, h header, body []byte) {
	r := c.Rec
	if c.Decode {
		p.headerFields(r, h, strconv.FormatInt(int64(h.sender), 10))
	}
	p.sum = p.sum[:0]
	switch h.typ {
	case sysSenderDescription:
		r.Type = TypeSenderDescription
		p.description(c, h, body, false)
	case sysTypeDescription:
		r.Type = TypeTypeDescription
		p.description(c, h, body, true)
	case sysUDPDescription:
		r.Type = TypeUDPDescription
		p.udpDescription(c, h, body)
	case sysLogDescription:
		r.Type = TypeLogDescription
		p.logDescription(c, h, body)
	case sysDisconnect:
		r.Type = TypeDisconnect
		if len(body) > 0 {
			r.Warnf("unexpected %d-byte body for %s", len(body), TypeDisconnect)
			p.raw(c, body, TypeDisconnect, -1)
			return
		}
		p.summary(c, func(s []byte) []byte { return append(s, "disconnect"...) })
	default:
		r.Type = TypeUnknown
		r.Warnf("system type id %d is not defined", h.typ)
		p.raw(c, body, "system type ", -int64(h.typ))
	}
}

// cstr returns b up to its first NUL, and whether there was one.
func cstr(b []byte) ([]byte, bool) {
	for i, ch := range b {
		if ch == 0 {
			return b[:i], true
		}
	}
	return b, false
}

// description decodes SENDER_DESCRIPTION and TYPE_DESCRIPTION (README fact
// 6): u32 name length including the NUL, the name, a NUL. The id described
// is the header's sender field. It updates this direction's table.
func (p *parser) description(c *dissect.Ctx, h header, body []byte, isType bool) {
	r := c.Rec
	what := TypeSenderDescription
	if isType {
		what = TypeTypeDescription
	}
	if p.short(c, body, 4, what) {
		return
	}
	l := be.Uint32(body)
	rest := body[4:]
	var name []byte
	if l == 0 || uint64(l) > uint64(len(rest)) {
		r.Warnf("name length %d does not fit the %d bytes after it", l, len(rest))
		name, _ = cstr(rest)
	} else {
		var nul bool
		name, nul = cstr(rest[:l])
		if !nul {
			r.Warn("name is not NUL-terminated")
		} else if len(name) != int(l)-1 {
			r.Warnf("name length %d, but a NUL after %d bytes", l, len(name))
		}
		long(c, body, 4+int(l), what)
	}
	if len(name) > maxNameLen {
		r.Warnf("name of %d bytes is kept as its first %d in the name table", len(name), maxNameLen)
	}
	id := h.sender
	res := setOK
	switch {
	case id < 0:
		r.Warnf("negative id %d is not recorded", id)
	case isType:
		res = p.dirs[c.Dir].names.setType(id, name)
	default:
		res = p.dirs[c.Dir].names.setSender(id, name)
	}
	switch res {
	case setTableFull:
		r.Warnf("name table full (%d ids): id %d not recorded", maxIDs, id)
	case setBudgetFull:
		r.Warnf("name not recorded: the name tables of all connections hold their bound (%s)", p.dirs[c.Dir].names.budget) // the id is in sender_id
	}
	if !c.Decode {
		return
	}
	r.Add("name", dissect.Str(string(name)))
	p.summary(c, func(s []byte) []byte {
		if isType {
			s = append(s, "type "...)
		} else {
			s = append(s, "sender "...)
		}
		s = strconv.AppendInt(s, int64(id), 10)
		s = append(s, " = "...)
		return append(s, name...)
	})
}

// udpDescription decodes UDP_DESCRIPTION (README fact 8): the body is the
// host and a NUL, the port is the header's sender field.
func (p *parser) udpDescription(c *dissect.Ctx, h header, body []byte) {
	r := c.Rec
	host, nul := cstr(body)
	if !nul {
		r.Warn("host is not NUL-terminated")
	}
	port := int64(h.sender)
	if port < 1 || port > 65535 {
		r.Warnf("port %d is not a UDP port", port)
	} else {
		p.registerUDP(c.Dir, host, int(port))
	}
	if !c.Decode {
		return
	}
	r.Add("host", dissect.Str(string(host)))
	r.Add("port", dissect.Int(port))
	p.summary(c, func(s []byte) []byte {
		s = append(s, "udp "...)
		s = append(s, host...)
		s = append(s, ':')
		return strconv.AppendInt(s, port, 10)
	})
}

// logDescription decodes LOG_DESCRIPTION (README fact 9): i32 strlen(in),
// i32 strlen(out), in + NUL, out + NUL; the mode is the header's sender
// field.
func (p *parser) logDescription(c *dissect.Ctx, h header, body []byte) {
	r := c.Rec
	if p.short(c, body, 10, TypeLogDescription) {
		return
	}
	inLen, outLen := int64(i32(body)), int64(i32(body[4:]))
	if inLen < 0 || outLen < 0 || 8+inLen+1+outLen+1 > int64(len(body)) {
		r.Warnf("name lengths %d and %d do not fit the %d-byte body", inLen, outLen, len(body))
		p.raw(c, body, TypeLogDescription, -1)
		return
	}
	in := body[8 : 8+inLen]
	out := body[8+inLen+1 : 8+inLen+1+outLen]
	if body[8+inLen] != 0 || body[8+inLen+1+outLen] != 0 {
		r.Warn("log names are not NUL-terminated")
	}
	long(c, body, int(8+inLen+1+outLen+1), TypeLogDescription)
	if !c.Decode {
		return
	}
	r.Add("mode", dissect.Int(int64(h.sender)))
	r.Add("incoming", dissect.Str(string(in)))
	r.Add("outgoing", dissect.Str(string(out)))
	p.summary(c, func(s []byte) []byte {
		s = append(s, "log mode="...)
		s = strconv.AppendInt(s, int64(h.sender), 10)
		s = append(s, " in="...)
		s = append(s, in...)
		s = append(s, " out="...)
		return append(s, out...)
	})
}
