package neptune

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
)

const wikiName = "neptune-wiki"

// Packet types of the wiki format, numbered as in NepPacketTypes.h.
const (
	wikiSpeedMotor    = 1 // RAW_MOTOR_TYPE: the wiki's "Speed Motor"
	wikiPositionMotor = 2 // POSITION_MOTOR_TYPE
	wikiRelay         = 3 // RELAY_CONTROL_TYPE
	wikiSensorData    = 4 // SENSOR_DATA_TYPE
)

// Record types of the wiki format.
const (
	typeSpeedMotor    = "speed_motor"
	typePositionMotor = "position_motor"
	typeRelay         = "relay"
	typeSensorData    = "sensor_data"
)

// wikiHeader is the size of the wiki header: type, priority, sequence.
const wikiHeader = 3

// kind is the wire form of one body field.
type kind uint8

const (
	kU8   kind = iota // unsigned byte
	kBool             // one byte: 0 false, 1 true
	kDir              // a bool shown as "forward" (true) or "reverse"
	kF32              // IEEE-754 binary32, little-endian
	kInt              // the wiki's int: int32 or int16, little-endian
	kRest             // char*: the rest of the datagram
)

type spec struct {
	key  string
	kind kind
}

// wikiBody is the layout of each known type's body, from the wiki tables.
var wikiBody = [...][]spec{
	wikiSpeedMotor:    {{"motor_id", kU8}, {"direction", kDir}, {"speed", kF32}, {"duration", kInt}},
	wikiPositionMotor: {{"motor_id", kU8}, {"degree", kF32}, {"speed", kF32}},
	wikiRelay:         {{"relay_id", kU8}, {"enable", kBool}},
	wikiSensorData:    {{"sensor_type", kInt}, {"sensor_id", kInt}, {"data", kRest}},
}

var wikiTypes = [...]string{"", typeSpeedMotor, typePositionMotor, typeRelay, typeSensorData}

// WikiOptions configure [NewWiki].
type WikiOptions struct {
	// Int16 reads the wiki's "int" fields (speed_motor duration,
	// sensor_data sensor_type and sensor_id) as int16 little-endian, as an
	// AVR compiler lays them out; by default they are int32 little-endian,
	// as in a PC C++ program.
	Int16 bool
}

type wiki struct {
	int16 bool
}

// NewWiki returns the Neptune ROV packet format of the project wiki
// ("Communication Protocol"): a 3-byte header (type, priority, sequence)
// then a body per type, one packet per UDP datagram. The format has no
// length field, so it cannot be framed on a byte stream; it has no default
// port and no content detection, and is used only with a decode-as rule
// such as "udp.port==9000,neptune-wiki".
func NewWiki(opt WikiOptions) dissect.Protocol {
	return &wiki{int16: opt.Int16}
}

// Info describes the format (a new value on each call).
func (w *wiki) Info() dissect.Info {
	width := "int32"
	if w.int16 {
		width = "int16"
	}
	return dissect.Info{
		Name:       wikiName,
		Proto:      proto,
		Title:      "Neptune ROV wiki packet format, one packet per UDP datagram (int = " + width + " LE)",
		Transports: []dissect.Transport{dissect.UDP},
		Detection:  "",
		// unknown is declared alike by the device framing (fields.go)
		Types: wikiDecls(),
	}
}

// Detect always answers No: the header has no constant bytes.
func (w *wiki) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict { return dissect.No }

func (w *wiki) NewParser(*dissect.StreamInfo) dissect.Parser {
	p := &wikiParser{intSize: 4}
	if w.int16 {
		p.intSize = 2
	}
	return p
}

type wikiParser struct {
	intSize int // 4 or 2
}

// Parse decodes the datagram that b holds to its end as one packet; it
// never reports an error. Given a buffer that does not end a datagram
// (c.Final false) it asks for more: without a length field the end of a
// packet is the end of its datagram. Bytes values in the record alias b.
func (p *wikiParser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	if !c.Final || len(b) == 0 {
		return 0, dissect.ErrNeedMore
	}
	r := c.Rec
	t := b[0]
	var body []spec
	if int(t) < len(wikiBody) && wikiBody[t] != nil {
		r.Type = wikiTypes[t]
		body = wikiBody[t]
	} else {
		r.Type = typeUnknown
	}
	if len(b) < wikiHeader {
		r.Warnf("datagram of %d bytes is shorter than the %d-byte header (type, priority, sequence)", len(b), wikiHeader)
	}
	if body == nil {
		r.Warnf("type %d has no number in NepPacketTypes.h", t)
	}
	if c.Decode {
		if len(b) >= 2 {
			r.Add("priority", dissect.Uint(uint64(b[1])))
		}
		if len(b) >= 3 {
			r.Add("sequence", dissect.Uint(uint64(b[2])))
		}
	}
	if len(b) < wikiHeader {
		return len(b), nil
	}
	rest := b[wikiHeader:]
	if body == nil {
		if c.Decode {
			r.Add("data", dissect.Bytes(rest))
		}
		return len(b), nil
	}
	p.body(c, body, rest)
	return len(b), nil
}

// body decodes the fields of spec from b, then reports a body cut short or
// extra bytes, shown as "trailing".
func (p *wikiParser) body(c *dissect.Ctx, fields []spec, b []byte) {
	r := c.Rec
	off := 0
	short := false
	for i, f := range fields {
		var n int
		switch f.kind {
		case kU8, kBool, kDir:
			n = 1
		case kF32:
			n = 4
		case kInt:
			n = p.intSize
		case kRest:
			n = len(b) - off
		}
		if off+n > len(b) {
			short = true
			what := "missing"
			if off < len(b) {
				what = "cut short"
			}
			r.Warnf("%s: body is %d bytes, needs %s (%s): %s %s", r.Type, len(b), p.need(fields), p.intName(), fields[i].key, what)
			break
		}
		v := b[off : off+n]
		off += n
		if (f.kind == kBool || f.kind == kDir) && v[0] > 1 {
			r.Warnf("%s: %s byte 0x%02x is not 0 or 1, taken as true", r.Type, f.key, v[0])
		}
		if !c.Decode {
			continue
		}
		switch f.kind {
		case kU8:
			r.Add(f.key, dissect.Uint(uint64(v[0])))
		case kBool:
			r.Add(f.key, dissect.Bool(v[0] != 0))
		case kDir:
			d := "reverse"
			if v[0] != 0 {
				d = "forward"
			}
			r.Add(f.key, dissect.Str(d))
		case kF32:
			r.Add(f.key, dissect.Float32(math.Float32frombits(binary.LittleEndian.Uint32(v))))
		case kInt:
			var x int64
			if n == 2 {
				x = int64(int16(binary.LittleEndian.Uint16(v)))
			} else {
				x = int64(int32(binary.LittleEndian.Uint32(v)))
			}
			r.Add(f.key, dissect.Int(x))
		case kRest:
			r.Add(f.key, dissect.Bytes(v))
		}
	}
	if off == len(b) {
		return
	}
	if !short {
		r.Warnf("%s: %d bytes after the %d-byte body", r.Type, len(b)-off, off)
	}
	if c.Decode {
		r.Add("trailing", dissect.Bytes(b[off:]))
	}
}

// fixed is the size of the fixed-width fields of a body.
func (p *wikiParser) fixed(fields []spec) int {
	n := 0
	for _, f := range fields {
		switch f.kind {
		case kU8, kBool, kDir:
			n++
		case kF32:
			n += 4
		case kInt:
			n += p.intSize
		}
	}
	return n
}

// need describes the size a body needs, for warnings.
func (p *wikiParser) need(fields []spec) string {
	n := strconv.Itoa(p.fixed(fields))
	if fields[len(fields)-1].kind == kRest {
		n = "at least " + n
	}
	return n
}

func (p *wikiParser) intName() string {
	if p.intSize == 2 {
		return "int = int16"
	}
	return "int = int32"
}

// Sync never finds a packet inside a datagram: a packet starts only where a
// datagram starts, and the framework realigns there by itself.
func (p *wikiParser) Sync(_ *dissect.Ctx, b []byte) (int, bool) { return len(b), false }
