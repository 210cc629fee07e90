package neptuneenc

import (
	"fmt"
	"time"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// Record type names of the wiki mode. The contract has no wiki section;
// these are dissect/neptune's documented names (doc.go, "Wiki packet
// format"), modelled here.
const (
	TypeSpeedMotor    = "speed_motor"
	TypePositionMotor = "position_motor"
	TypeRelay         = "relay"
	TypeSensorData    = "sensor_data"
)

// WikiTypeName returns the record type of a wiki packet type.
func WikiTypeName(typ byte) string {
	switch typ {
	case WikiRawMotor:
		return TypeSpeedMotor
	case WikiPositionMotor:
		return TypePositionMotor
	case WikiRelay:
		return TypeRelay
	case WikiSensorData:
		return TypeSensorData
	}
	return TypeUnknown
}

// Datagram is one datagram of a flow: its time and byte range in the
// direction's stream.
type Datagram struct {
	At         time.Duration
	Start, End int64
}

// WikiSession is a one-way UDP flow of wiki packets (host → ROV), one
// packet per datagram: the datagrams as one stream of bytes, the records
// they should produce, and the datagrams in time order.
type WikiSession struct {
	Int       IntWidth
	Stream    []byte
	Truth     []Message
	Datagrams []Datagram
}

// WikiFlow builds a [WikiSession]. Set W before the first packet.
type WikiFlow struct {
	W    Wiki
	s    WikiSession
	last time.Duration
	err  error
}

func (f *WikiFlow) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("neptuneenc: "+format, args...)
	}
}

func (f *WikiFlow) send(at time.Duration, wire []byte, m Message) {
	if len(wire) == 0 {
		f.fail("empty datagram")
		return
	}
	if at < f.last {
		f.fail("datagram at %v before the previous one at %v", at, f.last)
		return
	}
	f.last = at
	start := int64(len(f.s.Stream))
	m.Offset, m.Length, m.Wire = start, int64(len(wire)), append([]byte{}, wire...)
	f.s.Stream = append(f.s.Stream, wire...)
	f.s.Truth = append(f.s.Truth, m)
	f.s.Datagrams = append(f.s.Datagrams, Datagram{At: at, Start: start, End: start + int64(len(wire))})
}

func hdrFields(prio, seq byte) []Field {
	return []Field{field("priority", Int(int64(prio))), field("sequence", Int(int64(seq)))}
}

func dirName(forward bool) string {
	if forward {
		return "forward"
	}
	return "reverse"
}

// speedFields returns the fields of a speed motor body.
func (f *WikiFlow) speedFields(motor byte, forward bool, speed float32, duration int32) []Field {
	if f.W.width() == Int16 {
		duration = int32(int16(duration))
	}
	return []Field{field("motor_id", Int(int64(motor))), field("direction", Str(dirName(forward))),
		field("speed", F32(speed)), field("duration", Int(int64(duration)))}
}

// SpeedMotor sends a speed (raw) motor packet. With int16 the duration is
// written as its low 16 bits (and expected as that int16).
func (f *WikiFlow) SpeedMotor(at time.Duration, prio, seq, motor byte, forward bool, speed float32, duration int32) {
	body := f.W.RawMotorBody(motor, forward, speed, duration)
	f.send(at, Packet(WikiRawMotor, prio, seq, body), Message{Type: TypeSpeedMotor, Match: Exact, Warn: truth.No,
		Fields: append(hdrFields(prio, seq), f.speedFields(motor, forward, speed, duration)...)})
}

// PositionMotor sends a position motor packet.
func (f *WikiFlow) PositionMotor(at time.Duration, prio, seq, motor byte, degree, speed float32) {
	body := f.W.PositionMotorBody(motor, degree, speed)
	f.send(at, Packet(WikiPositionMotor, prio, seq, body), Message{Type: TypePositionMotor, Match: Exact, Warn: truth.No,
		Fields: append(hdrFields(prio, seq), field("motor_id", Int(int64(motor))), field("degree", F32(degree)), field("speed", F32(speed)))})
}

// Relay sends a relay control packet.
func (f *WikiFlow) Relay(at time.Duration, prio, seq, relay byte, enable bool) {
	f.send(at, Packet(WikiRelay, prio, seq, f.W.RelayBody(relay, enable)), Message{Type: TypeRelay, Match: Exact, Warn: truth.No,
		Fields: append(hdrFields(prio, seq), field("relay_id", Int(int64(relay))), field("enable", Bool(enable)))})
}

// RelayByte sends a relay control packet whose enable byte is b, neither 0
// nor 1: a C++ bool holds only those, so the record is expected to read it
// as true with a warning.
func (f *WikiFlow) RelayByte(at time.Duration, prio, seq, relay, b byte) {
	if b <= 1 {
		f.fail("RelayByte: %d is a proper bool", b)
		return
	}
	f.send(at, Packet(WikiRelay, prio, seq, []byte{relay, b}), Message{Type: TypeRelay, Match: Exact, Warn: truth.Yes,
		Fields: append(hdrFields(prio, seq), field("relay_id", Int(int64(relay))), field("enable", Bool(true)))})
}

func (f *WikiFlow) intValue(v int32) int64 {
	if f.W.width() == Int16 {
		return int64(int16(v))
	}
	return int64(v)
}

// SensorData sends a sensor data packet; data is the rest of the datagram.
func (f *WikiFlow) SensorData(at time.Duration, prio, seq byte, sensorType, sensorID int32, data []byte) {
	f.send(at, Packet(WikiSensorData, prio, seq, f.W.SensorDataBody(sensorType, sensorID, data)), Message{Type: TypeSensorData, Match: Exact, Warn: truth.No,
		Fields: append(hdrFields(prio, seq), field("sensor_type", Int(f.intValue(sensorType))), field("sensor_id", Int(f.intValue(sensorID))), field("data", Bytes(data)))})
}

// Unknown sends a packet of a type the wiki does not number (0, 5 or
// more): an "unknown" record with priority, sequence and the body as data,
// with a warning.
func (f *WikiFlow) Unknown(at time.Duration, typ, prio, seq byte, body []byte) {
	if typ >= WikiRawMotor && typ <= WikiSensorData {
		f.fail("Unknown: wiki type %d is known", typ)
		return
	}
	f.send(at, Packet(typ, prio, seq, body), Message{Type: TypeUnknown, Match: Exact, Warn: truth.Yes,
		Fields: append(hdrFields(prio, seq), field("data", Bytes(body)))})
}

// Cut sends a speed motor packet whose body is cut after keep bytes (0 <=
// keep < body length): the record keeps priority, sequence and the whole
// fields that fit (asserted), with a warning; how the bytes of a field cut
// short are shown is not asserted.
func (f *WikiFlow) Cut(at time.Duration, prio, seq, motor byte, forward bool, speed float32, duration int32, keep int) {
	body := f.W.RawMotorBody(motor, forward, speed, duration)
	if keep < 0 || keep >= len(body) {
		f.fail("Cut: keep %d of %d bytes", keep, len(body))
		return
	}
	all := f.speedFields(motor, forward, speed, duration)
	ends := []int{1, 2, 6, len(body)} // where each field ends in the body
	fields := hdrFields(prio, seq)
	for i, e := range ends {
		if e <= keep {
			fields = append(fields, all[i])
		}
	}
	f.send(at, Packet(WikiRawMotor, prio, seq, body[:keep]), Message{Type: TypeSpeedMotor, Match: Subset, Warn: truth.Yes, Fields: fields,
		NotAsserted: []string{"how the bytes of a field cut short are shown"}})
}

// Extra sends a relay packet followed by extra bytes: the record has all
// the relay's fields (asserted) and a warning; how the extra bytes are
// shown is not asserted.
func (f *WikiFlow) Extra(at time.Duration, prio, seq, relay byte, enable bool, extra []byte) {
	if len(extra) == 0 {
		f.fail("Extra: no extra bytes")
		return
	}
	wire := append(Packet(WikiRelay, prio, seq, f.W.RelayBody(relay, enable)), extra...)
	f.send(at, wire, Message{Type: TypeRelay, Match: Subset, Warn: truth.Yes,
		Fields:      append(hdrFields(prio, seq), field("relay_id", Int(int64(relay))), field("enable", Bool(enable))),
		NotAsserted: []string{"how the extra bytes are shown"}})
}

// ShortHeader sends a datagram shorter than the header (1 or 2 bytes): a
// record of the type its first byte names, with priority when there are two
// bytes, and a warning.
func (f *WikiFlow) ShortHeader(at time.Duration, b ...byte) {
	if len(b) == 0 || len(b) >= WikiHeaderLen {
		f.fail("ShortHeader: %d bytes", len(b))
		return
	}
	m := Message{Type: WikiTypeName(b[0]), Match: Subset, Warn: truth.Yes, NotAsserted: []string{"fields beyond the header bytes present"}}
	if len(b) == 2 {
		m.Fields = []Field{field("priority", Int(int64(b[1])))}
	}
	f.send(at, append([]byte{}, b...), m)
}

// Finish returns the session.
func (f *WikiFlow) Finish() (*WikiSession, error) {
	if f.err != nil {
		return nil, f.err
	}
	s := f.s
	s.Int = f.W.width()
	return &s, nil
}
