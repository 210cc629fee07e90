package handcontrolenc

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// Write is one write of a direction: the bytes Stream[Dir][Start:End],
// the last of which is handed over at At (the capture time of the serial
// read or TCP segment that carries the write's last byte). Whoever frames
// a session into reads or segments must keep that: every piece of a write
// is captured after the previous write of its direction, and the last one
// exactly at At. Latencies in the truth are differences of these times.
type Write struct {
	Dir        int
	At         time.Duration
	Start, End int64
}

// Session is a conversation between a host and a device: each direction's
// bytes, the records each should produce, and the writes in time order.
type Session struct {
	Stream [2][]byte
	Truth  [2][]Message
	Writes []Write
}

type queued struct {
	wire []byte
	m    Message
}

// Flow builds a [Session] frame by frame. Every frame is its own write and
// ends it; bytes queued with [Flow.Noise] or [Flow.QueueTelemetry] go
// before the next frame of their direction, in the same write. Requests
// come from the host, replies and telemetry from the device; one request
// is in flight at a time (as the real hosts do), and each reply answers it.
type Flow struct {
	s        Session
	last     [2]time.Duration
	queue    [2][]queued
	inflight int // index in s.Truth[Host] of the request in flight, or -1
	opts     []FrameOption
	err      error
}

// FrameOptions sets options applied to every later frame of the flow,
// before each frame's own: [SFDInCRC] makes a session of the Android host
// app's CRC convention.
func (f *Flow) FrameOptions(opts ...FrameOption) { f.opts = opts }

// NewFlow returns an empty flow.
func NewFlow() *Flow { return &Flow{inflight: -1} }

func (f *Flow) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("handcontrolenc: "+format, args...)
	}
}

// frameRecord returns the frame's bytes and its record (offset, time and
// matching are set later).
func (f *Flow) frameRecord(code byte, role string, payload []byte, obj *Object, opts []FrameOption) ([]byte, Message) {
	wire, err := Frame(code, payload, append(append([]FrameOption(nil), f.opts...), opts...)...)
	if err != nil {
		f.fail("%v", err)
		return nil, Message{}
	}
	m := Message{
		Type: TypeName(code), Code: code, Role: role, CRC: wire[len(wire)-1], CRCOK: CRCOK(wire), CRCScope: CRCScope(wire),
		Payload: obj, Schema: "v2", RequestIndex: -1, Warn: truth.No,
	}
	if obj == nil {
		m.PayloadHex, m.Schema = append([]byte{}, payload...), ""
	}
	if !m.CRCOK {
		m.Warn, m.Why = truth.Yes, fmt.Sprintf("crc %#02x on the wire, %#02x computed", m.CRC, CRC8(wire[len(SFD):len(wire)-1]))
	}
	return wire, m
}

func (f *Flow) checkName(what string, code byte, want string, msg *Msg) bool {
	if msg.Name() != want {
		f.fail("%s %s carries %q, want %q", what, TypeName(code), msg.Name(), want)
		return false
	}
	return true
}

// send makes one write of dir at time at: the queued bytes, then wire.
func (f *Flow) send(dir int, at time.Duration, wire []byte, m Message) int {
	if f.err != nil {
		return -1
	}
	if n := len(f.s.Stream[dir]); n > 0 && at <= f.last[dir] {
		f.fail("%s write at %v is not after the previous one at %v", RoleName(dir), at, f.last[dir])
		return -1
	}
	start := int64(len(f.s.Stream[dir]))
	for _, q := range f.queue[dir] {
		q.m.Offset, q.m.Length = int64(len(f.s.Stream[dir])), int64(len(q.wire))
		if !q.m.IsEvent() {
			q.m.Wire = append([]byte{}, q.wire...)
		}
		f.s.Stream[dir] = append(f.s.Stream[dir], q.wire...)
		f.s.Truth[dir] = append(f.s.Truth[dir], q.m)
	}
	f.queue[dir] = nil
	m.Offset, m.Length, m.Wire, m.At = int64(len(f.s.Stream[dir])), int64(len(wire)), append([]byte{}, wire...), at
	f.s.Stream[dir] = append(f.s.Stream[dir], wire...)
	f.s.Truth[dir] = append(f.s.Truth[dir], m)
	f.s.Writes = append(f.s.Writes, Write{Dir: dir, At: at, Start: start, End: int64(len(f.s.Stream[dir]))})
	f.last[dir] = at
	return len(f.s.Truth[dir]) - 1
}

func (f *Flow) request(at time.Duration, code byte, wire []byte, m Message) {
	if f.inflight >= 0 {
		r := f.s.Truth[Host][f.inflight]
		f.fail("request %s at %v while %s at offset %d is in flight", TypeName(code), at, r.Type, r.Offset)
		return
	}
	if i := f.send(Host, at, wire, m); i >= 0 {
		f.inflight = i
	}
}

// Request sends a request from the host: code and its message from
// protocols.md §1.5 (nil for the codes without payload: 4, 6, 13, 15,
// 16). The frame is put in flight until the device replies.
func (f *Flow) Request(at time.Duration, code byte, msg *Msg, opts ...FrameOption) {
	want, ok := RequestMessage(code)
	if !ok {
		f.fail("code %d is not a request", code)
		return
	}
	if !f.checkName("request", code, want, msg) {
		return
	}
	wire, m := f.frameRecord(code, RoleRequest, msg.Bytes(), msg.Payload(), opts)
	f.request(at, code, wire, m)
}

// RequestRaw sends a request whose payload is not protobuf wire data (such
// as the repositories' test frames): the record shows payload_hex and
// warns. The caller vouches that payload does not parse.
func (f *Flow) RequestRaw(at time.Duration, code byte, payload []byte, opts ...FrameOption) {
	want, ok := RequestMessage(code)
	if !ok || want == "" {
		f.fail("code %d is not a request with a payload", code)
		return
	}
	wire, m := f.frameRecord(code, RoleRequest, payload, nil, opts)
	m.Warn = truth.Yes
	if m.Why != "" {
		m.Why += "; "
	}
	m.Why += fmt.Sprintf("the payload is not protobuf (%s)", want)
	f.request(at, code, wire, m)
}

// Reply sends the device's reply to the request in flight: ACK (msg nil),
// ERR (an errors.Error) or the data reply with its message (for
// GetMioPatterns, code 13 with a patterns.GetMioPatterns, the device's
// quirk, which the record warns about).
func (f *Flow) Reply(at time.Duration, code byte, msg *Msg, opts ...FrameOption) {
	if f.inflight < 0 {
		f.fail("reply %s at %v with no request in flight", TypeName(code), at)
		return
	}
	req := f.s.Truth[Host][f.inflight]
	if !Answers(code, req.Code) {
		f.fail("reply %s does not answer %s", TypeName(code), req.Type)
		return
	}
	if !f.checkName("reply", code, ReplyMessage(code, req.Code), msg) {
		return
	}
	wire, m := f.frameRecord(code, RoleResponse, msg.Bytes(), msg.Payload(), opts)
	m.Matched, m.RequestCode, m.RequestIndex, m.Latency = true, req.Code, f.inflight, at-req.At
	if code == CodeGetTelemetry && req.Code == CodeGetMioPatterns {
		m.Warn = truth.Yes
		if m.Why != "" {
			m.Why += "; "
		}
		m.Why += "GetMioPatterns (16) answered with type 13, the device's quirk"
	}
	if f.send(Device, at, wire, m) >= 0 {
		f.inflight = -1
	}
}

func (f *Flow) telemetry(t Telemetry) ([]byte, Message) {
	msg := t.Msg()
	return f.frameRecord(CodeTelemetry, RoleTelemetry, msg.Bytes(), msg.Payload(), nil)
}

// Telemetry sends a Telemetry frame (type 3) from the device, never
// matched to a request.
func (f *Flow) Telemetry(at time.Duration, t Telemetry) {
	wire, m := f.telemetry(t)
	f.send(Device, at, wire, m)
}

// QueueTelemetry puts a Telemetry frame before the device's next frame, in
// the same write: the two go out back to back.
func (f *Flow) QueueTelemetry(t Telemetry) {
	wire, m := f.telemetry(t)
	f.queue[Device] = append(f.queue[Device], queued{wire: wire, m: m})
}

// Noise puts garbage before dir's next frame, in the same write: a skipped
// record up to that frame's SFD. The garbage must not contain the SFD.
// Noise right after noise extends the same skipped record.
func (f *Flow) Noise(dir int, b []byte) {
	if len(b) == 0 || bytes.Contains(b, SFD[:]) {
		f.fail("noise %x is empty or holds the SFD", b)
		return
	}
	q := &f.queue[dir]
	if n := len(*q); n > 0 && (*q)[n-1].m.Type == TypeSkipped {
		(*q)[n-1].wire = append((*q)[n-1].wire, b...)
		return
	}
	*q = append(*q, queued{wire: append([]byte{}, b...), m: Message{Type: TypeSkipped, RequestIndex: -1}})
}

// Finish returns the session, writes in time order (stable). It fails
// when a request is still in flight, bytes are still queued, or a call
// failed.
func (f *Flow) Finish() (*Session, error) {
	if f.err != nil {
		return nil, f.err
	}
	if f.inflight >= 0 {
		return nil, fmt.Errorf("handcontrolenc: request at offset %d got no reply", f.s.Truth[Host][f.inflight].Offset)
	}
	for d := range 2 {
		if len(f.queue[d]) > 0 {
			return nil, fmt.Errorf("handcontrolenc: %s bytes queued after the last frame", RoleName(d))
		}
	}
	s := f.s
	s.Writes = append([]Write(nil), f.s.Writes...)
	sort.SliceStable(s.Writes, func(i, j int) bool { return s.Writes[i].At < s.Writes[j].At })
	return &s, nil
}
