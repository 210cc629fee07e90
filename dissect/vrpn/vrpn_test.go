package vrpn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// harness calls a parser directly, the way dissect.Stream does, and keeps
// each direction's offset.
type harness struct {
	proto  *protocol
	parser dissect.Parser
	info   dissect.StreamInfo
	off    [2]int64
	rec    dissect.Record
	c      dissect.Ctx
	decode bool
}

func newHarness(p *protocol, tr dissect.Transport, a0, a1 netip.AddrPort) *harness {
	h := &harness{proto: p, decode: true}
	h.info = dissect.StreamInfo{StreamID: dissect.StreamID{Transport: tr, Addr: [2]netip.AddrPort{a0, a1}}, Name: [2]string{a0.String(), a1.String()}}
	h.parser = p.NewParser(&h.info)
	return h
}

func newTCP(t testing.TB) *harness {
	t.Helper()
	return newHarness(New().(*protocol), dissect.TCP, mustAddrPort(t, "127.0.0.1:40000"), mustAddrPort(t, "127.0.0.1:3883"))
}

func (h *harness) ctx(dir dissect.Dir, final bool) *dissect.Ctx {
	h.rec.Reset()
	h.c = dissect.Ctx{Stream: &h.info, Dir: dir, Offset: h.off[dir], Final: final, Decode: h.decode, Rec: &h.rec}
	return &h.c
}

// parse parses one message at the direction's offset and advances it.
func (h *harness) parse(dir dissect.Dir, b []byte, final bool) (int, error) {
	n, err := h.parser.Parse(h.ctx(dir, final), b)
	if err == nil {
		h.rec.Length = int64(n)
		h.off[dir] += int64(n)
	}
	return n, err
}

// feed parses every message of b (which must be whole messages).
func (h *harness) feed(t testing.TB, dir dissect.Dir, b []byte, final bool) []*dissect.Record {
	t.Helper()
	var out []*dissect.Record
	for len(b) > 0 {
		n, err := h.parse(dir, b, final)
		if err != nil {
			t.Fatalf("parse at offset %d: n=%d err=%v", h.off[dir], n, err)
		}
		out = append(out, h.rec.Clone())
		b = b[n:]
	}
	return out
}

func errCode(err error) string {
	var e *dissect.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestCookiesFromTruth(t *testing.T) {
	tf := loadTruth(t)
	n := 0
	for _, name := range tf.captureNames() {
		for _, conn := range tf.Captures[name].TCP {
			for _, d := range conn.Directions {
				b := mustHex(t, d.Cookie.Hex)
				if len(b) != 24 || !strings.HasPrefix(string(b), d.Cookie.Text) {
					t.Fatalf("%s %s: truth cookie hex and text disagree", name, d.From)
				}
				h := newTCP(t)
				got, err := h.parse(0, b, false)
				if err != nil || got != 24 {
					t.Fatalf("%s %s: Parse = %d, %v", name, d.From, got, err)
				}
				r := &h.rec
				if r.Type != TypeCookie || len(r.Warnings) != 0 {
					t.Errorf("%s %s: type %q warnings %q", name, d.From, r.Type, r.Warnings)
				}
				if v, _ := r.Fields.Get("version"); v.Str() != "07.38" {
					t.Errorf("%s %s: version %q, want 07.38", name, d.From, v.Str())
				}
				if v, _ := r.Fields.Get("log_mode"); fmt.Sprint(v.Int()) != d.Cookie.LogModeDigit || v.Kind() != dissect.KindInt {
					t.Errorf("%s %s: log_mode %d, want %s", name, d.From, v.Int(), d.Cookie.LogModeDigit)
				}
				if got := strings.Join(fieldKeys(r.Fields), ","); got != "version,log_mode" {
					t.Errorf("%s %s: cookie fields %s", name, d.From, got)
				}
				n++
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d cookies checked", n)
	}
}

// TestDecodedExamples decodes every decoded_examples message of truth.json
// from its exact bytes, after describing the ids the way its naming
// direction did. UDP examples go through a UDP parser whose destination was
// announced by a UDP_DESCRIPTION on a TCP parser of the same protocol value.
func TestDecodedExamples(t *testing.T) {
	tf := loadTruth(t)
	n := 0
	for _, name := range tf.captureNames() {
		c := tf.Captures[name]
		for _, m := range c.Examples {
			t.Run(fmt.Sprintf("%s/%s/frame%d/seq%d", name, m.Transport, m.Frame, m.Header.Seq), func(t *testing.T) {
				naming := c.namingDir(t, m)
				var h *harness
				if m.Transport == "tcp" {
					h = newTCP(t)
					h.off[0] = 24 // after the cookie
					h.feed(t, 0, encDescriptions(t, naming), false)
				} else {
					p := New().(*protocol)
					// TCP connection: dir 0 = the side that receives the
					// UDP flow (it announces the port), dir 1 = naming.
					tcp := newHarness(p, dissect.TCP, mustAddrPort(t, naming.To), mustAddrPort(t, naming.From))
					to := mustAddrPort(t, m.To)
					tcp.off = [2]int64{24, 24}
					tcp.feed(t, 0, encMsg(1, 2, int32(to.Port()), -3, 0, []byte(to.Addr().String()+"\x00")), false)
					tcp.feed(t, 1, encDescriptions(t, naming), false)
					h = newHarness(p, dissect.UDP, mustAddrPort(t, m.From), to)
				}
				b := m.bytes(t)
				got, err := h.parse(0, b, m.Transport == "udp")
				if err != nil || got != len(b) {
					t.Fatalf("Parse = %d, %v; want %d", got, err, len(b))
				}
				checkRecord(t, &h.rec, m)
				if h.rec.Summary == "" {
					t.Error("no summary")
				}
			})
			n++
		}
	}
	if n < 60 {
		t.Fatalf("only %d examples", n)
	}
}

// TestSummaries checks the table summaries of a few messages by hand.
func TestSummaries(t *testing.T) {
	tf := loadTruth(t)
	c := tf.Captures["c3_multi_device_truth.pcap"]
	want := map[string]string{
		namePosQuat:      "Pose0 sensor=0 pos=(1.5,-2.25,3.125) quat=(0.182574,0.365148,0.547723,0.730297)",
		nameVelocity:     "Pose0 sensor=0 vel=(0.5,0.25,-0.125) quat=(0,0.6,0,0.8) dt=0.5",
		nameAnalog:       "Analog0 channels=[0 -0 100 0]",
		nameButtonStates: "Button0 states=[1 1]",
		nameButtonChange: "Button0 button=0 state=0",
		nameDial:         "Dial0 dial=0 change=0.25",
		namePing:         "Tracker0 ping",
	}
	for _, m := range c.Examples {
		w, ok := want[m.TypeName]
		if !ok {
			continue
		}
		delete(want, m.TypeName)
		h := newTCP(t)
		h.off[0] = 24
		h.feed(t, 0, encDescriptions(t, c.namingDir(t, m)), false)
		if _, err := h.parse(0, m.bytes(t), false); err != nil {
			t.Fatal(err)
		}
		if h.rec.Summary != w {
			t.Errorf("%s: summary %q, want %q", m.TypeName, h.rec.Summary, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("no example for %v", want)
	}
}

// TestDescriptionsFromTruth decodes the real description messages of every
// direction and checks the names against truth's id tables.
func TestDescriptionsFromTruth(t *testing.T) {
	tf := loadTruth(t)
	n := 0
	for _, name := range tf.captureNames() {
		c := tf.Captures[name]
		for _, conn := range c.TCP {
			for _, d := range conn.Directions {
				msgs := append(append([]*truthMsg(nil), d.FirstThree...), d.Descriptions...)
				for _, m := range msgs {
					h := newTCP(t)
					h.off[0] = 24
					b := m.bytes(t)
					recs := h.feed(t, 0, b, false)
					if len(recs) != 1 {
						t.Fatalf("%s frame %d: %d records", name, m.Frame, len(recs))
					}
					r := recs[0]
					checkRecord(t, r, m)
					v, _ := r.Fields.Get("name")
					id := fmt.Sprint(m.Header.Sender)
					switch m.TypeName {
					case "SENDER_DESCRIPTION":
						if v.Str() != d.SenderIDs[id] {
							t.Errorf("%s frame %d: sender %s named %q, want %q", name, m.Frame, id, v.Str(), d.SenderIDs[id])
						}
					case "TYPE_DESCRIPTION":
						if v.Str() != d.TypeIDs[id] {
							t.Errorf("%s frame %d: type %s named %q, want %q", name, m.Frame, id, v.Str(), d.TypeIDs[id])
						}
					case "UDP_DESCRIPTION":
						host, _ := r.Fields.Get("host")
						port, _ := r.Fields.Get("port")
						if host.Str() != "127.0.0.1" || port.Int() != int64(m.Header.Sender) || !containsInt(c.Ports.Announced, int(port.Int())) {
							t.Errorf("%s frame %d: udp_description %s:%d, announced ports %v", name, m.Frame, host.Str(), port.Int(), c.Ports.Announced)
						}
					default:
						t.Errorf("%s frame %d: unexpected truth type %q", name, m.Frame, m.TypeName)
					}
					n++
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d descriptions", n)
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestLobFromTruth(t *testing.T) {
	tf := loadTruth(t)
	n := 0
	for _, name := range tf.captureNames() {
		for _, l := range tf.Captures[name].Lobs {
			p := New().(*protocol)
			h := newHarness(p, dissect.UDP, mustAddrPort(t, l.Src), mustAddrPort(t, l.Dst))
			b := mustHex(t, l.Hex)
			if len(b) != l.Len {
				t.Fatalf("%s: lob length %d, truth %d", name, len(b), l.Len)
			}
			if p.Detect(&h.info, 0, b) != dissect.Yes {
				t.Errorf("%s: lob not detected", name)
			}
			got, err := h.parse(0, b, true)
			if err != nil || got != len(b) {
				t.Fatalf("%s: Parse = %d, %v", name, got, err)
			}
			r := &h.rec
			host, _ := r.Fields.Get("host")
			port, _ := r.Fields.Get("port")
			if r.Type != TypeUDPCallback || host.Str() != l.CallbackIP || port.Int() != int64(l.CallbackPort) || len(r.Warnings) != 0 {
				t.Errorf("%s: %s host=%q port=%d warnings=%q; want udp_callback %s:%d", name, r.Type, host.Str(), port.Int(), r.Warnings, l.CallbackIP, l.CallbackPort)
			}
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d lob datagrams, want 3 (b, c2, e2)", n)
	}
}

func TestLobForms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		host string
		port int
	}{
		{"127.0.0.1 56707\x00", true, "127.0.0.1", 56707},
		{"localhost 2000\x00", true, "localhost", 2000},
		{"127.0.0.1 56707", false, "", 0},         // no NUL
		{"127.0.0.1 56707\x00\x00", false, "", 0}, // NUL padding: mainline sends none
		{"127.0.0.1  56707\x00", false, "", 0},    // two spaces
		{"127.0.0.1 0\x00", false, "", 0},         // port 0
		{"127.0.0.1 65536\x00", false, "", 0},     // port too large
		{"127.0.0.1 123456\x00", false, "", 0},    // six digits
		{"my-host 2000\x00", false, "", 0},        // mainline allows only alnum and '.'
		{" 2000\x00", false, "", 0},               // no host
		{"127.0.0.1 \x00", false, "", 0},          // no port
		{"127.0.0.1 20a0\x00", false, "", 0},      // not a number
		{"\x00\x00\x00\x18abc\x00", false, "", 0}, // a header
	} {
		host, port, ok := parseLob([]byte(tc.in))
		if ok != tc.ok || string(host) != tc.host || port != tc.port {
			t.Errorf("parseLob(%q) = %q, %d, %v; want %q, %d, %v", tc.in, host, port, ok, tc.host, tc.port, tc.ok)
		}
	}
}

func TestDetect(t *testing.T) {
	p := New().(*protocol)
	tcp := &dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}}
	for _, tc := range []struct {
		in   string
		want dissect.Verdict
	}{
		{"vrpn: ver. 07.38  0\x00\x00\x00\x00\x00", dissect.Yes},
		{"vrpn: ver. ", dissect.Yes},
		{"vrpn: v", dissect.Maybe},
		{"v", dissect.Maybe},
		{"vrpn: Ver. 07.38", dissect.No},
		{"GET / HTTP/1.1\r\n", dissect.No},
		{"\x00\x00\x00\x18\x00\x00\x00\x00", dissect.No},
	} {
		if got := p.Detect(tcp, 0, []byte(tc.in)); got != tc.want {
			t.Errorf("Detect(tcp, %q) = %d, want %d", tc.in, got, tc.want)
		}
	}

	a := mustAddrPort(t, "10.0.0.1:5000")
	b := mustAddrPort(t, "10.0.0.2:38929")
	udp := &dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.UDP, Addr: [2]netip.AddrPort{a, b}}}
	garbage := []byte("not vrpn at all, sorry")
	if got := p.Detect(udp, 0, garbage); got != dissect.No {
		t.Errorf("Detect(udp garbage) = %d before any announcement", got)
	}
	ping := encMsg(1795306106, 465992, 1, 16, 26, nil)
	if got := p.Detect(udp, 0, append(append([]byte(nil), ping...), ping...)); got != dissect.Yes {
		t.Errorf("Detect(udp, two plausible messages) = %d", got)
	}
	if got := p.Detect(udp, 0, append(append([]byte(nil), ping...), 1, 2, 3)); got != dissect.No {
		t.Errorf("Detect(udp, message and 3 stray bytes) = %d", got)
	}
	bad := encMsg(1795306106, 1000000, 1, 16, 26, nil) // tv_usec out of range
	if got := p.Detect(udp, 0, bad); got != dissect.No {
		t.Errorf("Detect(udp, implausible header) = %d", got)
	}
	// A TCP connection on which 10.0.0.2 announces UDP port 38929.
	h := newHarness(p, dissect.TCP, mustAddrPort(t, "10.0.0.2:41000"), mustAddrPort(t, "10.0.0.1:3883"))
	h.off[0] = 24
	h.feed(t, 0, encMsg(1, 2, 38929, -3, 0, []byte("10.0.0.2\x00")), false)
	if got := p.Detect(udp, 0, garbage); got != dissect.Yes {
		t.Errorf("Detect(udp to announced address) = %d", got)
	}
	if got := p.Detect(udp, 1, garbage); got != dissect.No {
		t.Errorf("Detect(udp from announced address) = %d", got)
	}
}

// TestUDPNamesFromTCP checks the cross-stream naming: a UDP flow to an
// announced port uses the names of the opposite TCP direction, not those of
// the announcing direction, and a flow to an unannounced port is decoded
// with numeric ids.
func TestUDPNamesFromTCP(t *testing.T) {
	p := New().(*protocol)
	client := mustAddrPort(t, "127.0.0.1:56707")
	server := mustAddrPort(t, "127.0.0.1:41047")
	tcp := newHarness(p, dissect.TCP, server, client) // dir 0 server->client
	tcp.off = [2]int64{24, 24}
	// Both directions describe type 4, with different names.
	tcp.feed(t, 0, encDescription(-1, 1, "Tracker0", 0), false)
	tcp.feed(t, 0, encDescription(-2, 4, namePosQuat, 1), false)
	tcp.feed(t, 1, encDescription(-1, 1, "Other", 0), false)
	tcp.feed(t, 1, encDescription(-2, 4, "client type 4", 1), false)
	// The client announces its UDP port 38929.
	tcp.feed(t, 1, encMsg(1, 2, 38929, -3, 2, []byte("127.0.0.1\x00")), false)

	body := make([]byte, 64)
	binary.BigEndian.PutUint64(body[56:], math.Float64bits(1))
	msg := encMsg(1795306106, 546390, 1, 4, 0, body)

	u := newHarness(p, dissect.UDP, mustAddrPort(t, "127.0.0.1:39256"), mustAddrPort(t, "127.0.0.1:38929"))
	recs := u.feed(t, 0, append(append([]byte(nil), msg...), msg...), true)
	for _, r := range recs {
		s, _ := r.Fields.Get("sender")
		if r.Type != namePosQuat || s.Str() != "Tracker0" {
			t.Errorf("announced flow: type %q sender %q, want %q Tracker0", r.Type, s.Str(), namePosQuat)
		}
	}
	other := newHarness(p, dissect.UDP, mustAddrPort(t, "127.0.0.1:39256"), mustAddrPort(t, "127.0.0.1:38930"))
	r := other.feed(t, 0, msg, true)[0]
	s, _ := r.Fields.Get("sender")
	d, _ := r.Fields.Get("data")
	if r.Type != TypeUnknown || s.Str() != "1" || !bytes.Equal(d.Raw(), body) {
		t.Errorf("unannounced flow: type %q sender %q data %x", r.Type, s.Str(), d.Raw())
	}
	// A later description on the TCP connection is seen by the flow.
	tcp.feed(t, 0, encDescription(-2, 5, nameVelocity, 2), false)
	vel := encMsg(1795306106, 546390, 1, 5, 1, make([]byte, 72))
	if r := u.feed(t, 0, vel, true)[0]; r.Type != nameVelocity {
		t.Errorf("after a new description: type %q", r.Type)
	}
}

func TestRoutesBounded(t *testing.T) {
	p := New().(*protocol)
	tb := &table{}
	for i := 0; i < maxRoutes+100; i++ {
		p.addRoute(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 1000), tb)
	}
	if len(p.routes) != maxRoutes || len(p.order) != maxRoutes {
		t.Fatalf("%d routes, %d in order; want %d", len(p.routes), len(p.order), maxRoutes)
	}
	if p.route(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 0}), 1000)) != nil {
		t.Error("oldest route not evicted")
	}
	last := maxRoutes + 99
	if p.route(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(last >> 8), byte(last)}), 1000)) != tb {
		t.Error("newest route missing")
	}
}

func TestNameTableBounded(t *testing.T) {
	h := newTCP(t)
	h.off[0] = 24
	var full int
	for i := 0; i < maxIDs+10; i++ {
		h.feed(t, 0, encDescription(-1, int32(i), fmt.Sprint("s", i), uint32(i)), false)
		for _, w := range h.rec.Warnings {
			if strings.Contains(w, "name table full") {
				full++
			}
		}
	}
	if full != 10 {
		t.Errorf("%d 'table full' warnings, want 10", full)
	}
	if n := len(h.parser.(*parser).dirs[0].names.senders); n != maxIDs {
		t.Errorf("%d senders kept, want %d", n, maxIDs)
	}
	long := strings.Repeat("n", 1000)
	h.feed(t, 0, encDescription(-2, 1, long, 0), false)
	if e, _ := h.parser.(*parser).dirs[0].names.typ(1); len(e.name) != maxNameLen {
		t.Errorf("stored name of %d bytes, want %d", len(e.name), maxNameLen)
	}
	if v, _ := h.rec.Fields.Get("name"); v.Str() != long {
		t.Error("the record does not show the whole name")
	}
}

// described returns a TCP harness after the cookie, with sender 1 =
// Tracker0 and every decoded type described on dir 0.
func described(t testing.TB) *harness {
	t.Helper()
	h := newTCP(t)
	h.feed(t, 0, []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"), false)
	var b []byte
	b = append(b, encDescription(-1, 1, "Tracker0", 0)...)
	for i, n := range []string{namePosQuat, nameVelocity, nameAcceleration, nameButtonChange, nameButtonStates, nameAnalog, nameDial, namePing, namePong, "lab_Glove Calibration"} {
		b = append(b, encDescription(-2, int32(10+i), n, uint32(1+i))...)
	}
	h.feed(t, 0, b, false)
	return h
}

func f64s(vs ...float64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

func i32s(vs ...int32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func TestMessageEdgeCases(t *testing.T) {
	logBody := append(i32s(31, 32), strings.Repeat("i", 31)+"\x00"+strings.Repeat("o", 32)+"\x00"...)
	for _, tc := range []struct {
		name    string
		typ     int32
		sender  int32
		body    []byte
		want    string // record type
		warn    string // substring of the only warning; "" for none
		keys    string // field keys after the header fields
		rawData bool   // data holds the body
	}{
		{"short Pos_Quat", 10, 1, make([]byte, 60), namePosQuat, "body of 60 bytes too short for vrpn_Tracker Pos_Quat", "data", true},
		{"Velocity without dt (the spec's layout)", 11, 1, make([]byte, 64), nameVelocity, "body of 64 bytes too short for vrpn_Tracker Velocity", "data", true},
		{"short Dial", 16, 1, make([]byte, 8), nameDial, "body of 8 bytes too short for vrpn_Dial update", "data", true},
		{"empty Button Change", 13, 1, nil, nameButtonChange, "body of 0 bytes too short for vrpn_Button Change", "data", true},
		{"Button States count too large", 14, 1, i32s(3, 1, 0), nameButtonStates, "too short for vrpn_Button States with 3 buttons", "data", true},
		{"Button States negative count", 14, 1, i32s(-1), nameButtonStates, "negative button count -1", "data", true},
		{"Analog fractional count", 15, 1, f64s(1.5, 0, 0), nameAnalog, "channel count 1.5 is not a whole number", "data", true},
		{"Analog NaN count", 15, 1, f64s(math.NaN()), nameAnalog, "is not a whole number", "data", true},
		{"Analog count too large", 15, 1, f64s(3, 0, 0), nameAnalog, "too short for vrpn_Analog Channel with 3 channels", "data", true},
		{"Analog zero channels", 15, 1, f64s(0), nameAnalog, "", "channels", false},
		{"sensor copy differs", 10, 1, append(i32s(1, 2), make([]byte, 56)...), namePosQuat, "sensor 1 repeated as 2", "sensor,pos,quat", false},
		{"Pos_Quat too long", 10, 1, make([]byte, 72), namePosQuat, "body of 72 bytes is longer than the 64 bytes", "sensor,pos,quat", false},
		{"ping with a body", 17, 1, []byte{1}, namePing, "unexpected 1-byte body", "data", true},
		{"other described type", 19, 1, []byte{1, 2, 3}, "lab_Glove Calibration", "", "data", true},
		{"undescribed type", 99, 7, []byte{9, 9}, TypeUnknown, "type id 99 was not described", "data", true},
		{"undefined system type", -6, 0, []byte{1}, TypeUnknown, "system type id -6 is not defined", "data", true},
		{"disconnect", -5, 0, nil, TypeDisconnect, "", "", false},
		{"log description", -4, 3, logBody, TypeLogDescription, "", "mode,incoming,outgoing", false},
		{"log description lengths too large", -4, 3, append(i32s(31, 40), make([]byte, 65)...), TypeLogDescription, "name lengths 31 and 40 do not fit", "data", true},
		{"log description too short", -4, 3, i32s(0), TypeLogDescription, "too short for log_description", "data", true},
		{"udp description without NUL", -3, 5000, []byte("1.2.3.4"), TypeUDPDescription, "host is not NUL-terminated", "host,port", false},
		{"udp description bad port", -3, 70000, []byte("1.2.3.4\x00"), TypeUDPDescription, "port 70000 is not a UDP port", "host,port", false},
		{"sender description too short", -1, 2, []byte{0, 0}, TypeSenderDescription, "body of 2 bytes too short for sender_description", "data", true},
		{"sender description length too large", -1, 2, append(i32s(9), "abc\x00"...), TypeSenderDescription, "name length 9 does not fit the 4 bytes", "name", false},
		{"sender description without NUL", -1, 2, append(i32s(3), "abc"...), TypeSenderDescription, "name is not NUL-terminated", "name", false},
		{"type description negative id", -2, -7, append(i32s(2), "a\x00"...), TypeTypeDescription, "negative id -7 is not recorded", "name", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := described(t)
			msg := encMsg(1795306106, 5, tc.sender, tc.typ, 99, tc.body)
			n, err := h.parse(0, msg, false)
			if err != nil || n != len(msg) {
				t.Fatalf("Parse = %d, %v; want %d", n, err, len(msg))
			}
			r := &h.rec
			if r.Type != tc.want {
				t.Errorf("type %q, want %q", r.Type, tc.want)
			}
			switch {
			case tc.warn == "" && len(r.Warnings) != 0:
				t.Errorf("warnings %q, want none", r.Warnings)
			case tc.warn != "" && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], tc.warn)):
				t.Errorf("warnings %q, want one containing %q", r.Warnings, tc.warn)
			}
			keys := fieldKeys(r.Fields)
			if len(keys) < 5 || strings.Join(keys[:5], ",") != strings.Join(headerKeys, ",") {
				t.Fatalf("keys %v do not start with the header fields", keys)
			}
			if got := strings.Join(keys[5:], ","); got != tc.keys {
				t.Errorf("keys after the header %q, want %q", got, tc.keys)
			}
			if tc.rawData {
				if d, _ := r.Fields.Get("data"); !bytes.Equal(d.Raw(), tc.body) || d.Kind() != dissect.KindBytes {
					t.Errorf("data %x, want %x", d.Raw(), tc.body)
				}
			}
			if r.Summary == "" {
				t.Error("no summary")
			}
		})
	}
}

// TestLogDescriptionLayout checks README fact 9's numbers with an encoder
// built from its text: 31- and 32-byte names give payload 73, length 97 and
// 7 bytes of padding.
func TestLogDescriptionLayout(t *testing.T) {
	in, out := "/tmp/"+strings.Repeat("i", 26), "/tmp/"+strings.Repeat("o", 27)
	body := append(i32s(int32(len(in)), int32(len(out))), in+"\x00"+out+"\x00"...)
	msg := encMsg(1, 2, 3, -4, 0, body)
	if len(body) != 73 || binary.BigEndian.Uint32(msg) != 97 || len(msg) != 104 {
		t.Fatalf("encoder: payload %d, length %d, total %d", len(body), binary.BigEndian.Uint32(msg), len(msg))
	}
	h := described(t)
	r := h.feed(t, 0, msg, false)[0]
	mode, _ := r.Fields.Get("mode")
	gi, _ := r.Fields.Get("incoming")
	go_, _ := r.Fields.Get("outgoing")
	if r.Length != 104 || mode.Int() != 3 || gi.Str() != in || go_.Str() != out || len(r.Warnings) != 0 {
		t.Errorf("length %d mode %d in %q out %q warnings %q", r.Length, mode.Int(), gi.Str(), go_.Str(), r.Warnings)
	}
}

func TestFraming(t *testing.T) {
	h := described(t)
	start := h.off[0]
	// Length below 24 and above the cap are malformed.
	for _, l := range []uint32{0, 23, maxLength + 1, 0xffffffff} {
		b := putHeader(nil, l, 1, 2, 1, 10, 0)
		n, err := h.parse(0, b, false)
		if n != 0 || errCode(err) != CodeBadLength || !errors.Is(err, dissect.ErrMalformed) {
			t.Errorf("length %d: Parse = %d, %v", l, n, err)
		}
	}
	// An incomplete message asks for its padded size.
	msg := encMsg(1, 2, 1, 16, 0, make([]byte, 12)) // Dial: 36 -> 40
	for cut := 0; cut < len(msg); cut++ {
		n, err := h.parse(0, msg[:cut], false)
		if !errors.Is(err, dissect.ErrNeedMore) || (cut >= 4 && n != 40) {
			t.Errorf("cut %d: Parse = %d, %v; want 40, ErrNeedMore", cut, n, err)
		}
	}
	// The padding is part of the record, whatever its bytes hold.
	copy(msg[36:], "rol!")
	if n, err := h.parse(0, msg, false); n != 40 || err != nil || len(h.rec.Warnings) != 0 {
		t.Errorf("stale padding: Parse = %d, %v, warnings %q", n, err, h.rec.Warnings)
	}
	if h.off[0] != start+40 {
		t.Errorf("offset %d", h.off[0])
	}
	// tv_usec out of range is decoded with a warning.
	if _, err := h.parse(0, encMsg(1, 1000000, 1, 17, 0, nil), false); err != nil || len(h.rec.Warnings) != 1 {
		t.Errorf("tv_usec 1000000: %v, warnings %q", err, h.rec.Warnings)
	}
}

// TestUDPPaddingCut: the last message of a datagram may lack its padding.
func TestUDPPaddingCut(t *testing.T) {
	p := New().(*protocol)
	h := newHarness(p, dissect.UDP, mustAddrPort(t, "127.0.0.1:1"), mustAddrPort(t, "127.0.0.1:2"))
	msg := encMsg(1, 2, 1, 16, 0, make([]byte, 12))[:36]
	n, err := h.parse(0, msg, true)
	if n != 36 || err != nil || len(h.rec.Warnings) != 2 || h.rec.Warnings[0] != "padding cut short: the datagram ends 0 of the 4 padding bytes after the body" {
		t.Errorf("Parse = %d, %v, warnings %q", n, err, h.rec.Warnings)
	}
	if n, err := h.parse(0, msg[:35], true); !errors.Is(err, dissect.ErrNeedMore) {
		t.Errorf("body cut: Parse = %d, %v", n, err)
	}
}

func TestCookieForms(t *testing.T) {
	for _, tc := range []struct {
		in, version, warn string
		mode              int64
		hasMode           bool
	}{
		{"vrpn: ver. 07.38  0\x00\x00\x00\x00\x00", "07.38", "", 0, true},
		{"vrpn: ver. 07.35  3\x00\x00\x00\x00\x00", "07.35", "", 3, true},
		{"vrpn: ver. 08.00  0\x00\x00\x00\x00\x00", "08.00", "cookie version 08.00 differs from 07.38", 0, true},
		{"vrpn: ver. 0738   0\x00\x00\x00\x00\x00", "0738", "cookie version 0738 differs from 07.38", 0, true},
		{"vrpn: ver. 07.38  x\x00\x00\x00\x00\x00", "07.38", "log mode byte 0x78 is not a digit", 0, false},
		{"vrpn: ver. 07.38  7\x00\x00\x00\x00\x00", "07.38", "log mode 7 is not 0-3", 7, true},
	} {
		h := newTCP(t)
		n, err := h.parse(0, []byte(tc.in), false)
		if n != 24 || err != nil {
			t.Fatalf("%q: Parse = %d, %v", tc.in, n, err)
		}
		r := &h.rec
		v, _ := r.Fields.Get("version")
		m, hasMode := r.Fields.Get("log_mode")
		if r.Type != TypeCookie || v.Str() != tc.version || hasMode != tc.hasMode || m.Int() != tc.mode {
			t.Errorf("%q: type %q version %q mode %d (%v)", tc.in, r.Type, v.Str(), m.Int(), hasMode)
		}
		if (tc.warn == "") != (len(r.Warnings) == 0) || (tc.warn != "" && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], tc.warn))) {
			t.Errorf("%q: warnings %q, want %q", tc.in, r.Warnings, tc.warn)
		}
	}
	// A cookie prefix waits for 24 bytes.
	h := newTCP(t)
	for _, in := range []string{"v", "vrpn: ver", "vrpn: ver. 07.38  0"} {
		if n, err := h.parse(0, []byte(in), false); n != 24 || !errors.Is(err, dissect.ErrNeedMore) {
			t.Errorf("%q: Parse = %d, %v", in, n, err)
		}
	}
}

// pings returns n pings of sender 1, type 16, sent at sec (and 1 µs
// later each), numbered from seq.
func pings(n int, sec uint32, seq uint32) []byte {
	var b []byte
	for i := range n {
		b = append(b, encMsg(sec, 465992+uint32(i), 1, 16, seq+uint32(i), nil)...)
	}
	return b
}

// TestStartWithoutCookie: at offset 0 a TCP direction without a cookie is
// decoded from a run of three plausible headers (resync.go), else
// rejected with no_cookie; a shorter run at the end of the data is enough.
func TestStartWithoutCookie(t *testing.T) {
	h := newTCP(t)
	ping := encMsg(1795306106, 465992, 1, 16, 26, nil)
	n, err := h.parse(0, pings(3, 1795306106, 26), false)
	if n != 24 || err != nil || h.rec.Type != TypeUnknown {
		t.Errorf("plausible start: Parse = %d, %v, type %q", n, err, h.rec.Type)
	}
	// Two headers: wait for the third, unless the data ends there.
	h = newTCP(t)
	if n, err := h.parse(0, pings(2, 1795306106, 26), false); !errors.Is(err, dissect.ErrNeedMore) {
		t.Errorf("two headers: Parse = %d, %v; want need more", n, err)
	}
	c := h.ctx(0, false)
	c.Last = true
	if n, err := h.parser.Parse(c, pings(2, 1795306106, 26)); n != 24 || err != nil {
		t.Errorf("two headers at the end: Parse = %d, %v", n, err)
	}
	// A header without a time (0.0: mainline's Button States before the
	// first report, pcaps/vrpn/dial_button.pcap) is not compared.
	h = newTCP(t)
	untimed := append(append(pings(1, 1795306106, 26), encMsg(0, 0, 1, 16, 27, nil)...), pings(1, 1795306106, 28)...)
	if n, err := h.parse(0, untimed, false); n != 24 || err != nil {
		t.Errorf("a run with a header sent at 0.0: Parse = %d, %v", n, err)
	}
	for _, in := range [][]byte{
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		encMsg(1, 1000000, 1, 16, 0, nil),                                        // tv_usec
		encMsg(1, 1, 1, -6, 0, nil),                                              // type id
		encMsg(1, 1, 70000, 16, 0, nil),                                          // sender id
		encMsg(1, 1, 2000, 16, 0, nil),                                           // sender id past mainline's 2000
		encMsg(1, 1, 1, 2000, 0, nil),                                            // type id past mainline's 2000
		append(encMsg(1, 1, 1, 16, 0, nil), putHeader(nil, 5, 0, 0, 0, 0, 0)...), // next header
		putHeader(nil, 64001, 1, 1, 1, 1, 0),                                     // length above 64000
		append(pings(2, 1795306106, 26), pings(1, 1795306106, 29)...),            // sequence number jumps
		append(pings(2, 1795306106, 26), pings(1, 0, 28)...),                     // sent 1970, the others 2026
	} {
		h := newTCP(t)
		n, err := h.parse(0, in, false)
		if n != 0 || errCode(err) != CodeNoCookie {
			t.Errorf("%x: Parse = %d, %v; want no_cookie", in, n, err)
		}
	}
	// A partial header that is plausible so far waits.
	h = newTCP(t)
	if n, err := h.parse(0, ping[:13], false); !errors.Is(err, dissect.ErrNeedMore) {
		t.Errorf("partial: Parse = %d, %v", n, err)
	}
}

func TestSync(t *testing.T) {
	ping := encMsg(1795306106, 465992, 1, 16, 26, nil)
	two := pings(3, 1795306106, 27) // a run of three headers
	garbage := bytes.Repeat([]byte{0xff}, 13)
	h := newTCP(t)
	c := h.ctx(0, false)
	c.Offset = 100
	in := append(append([]byte(nil), garbage...), two...)
	if i, ok := h.parser.Sync(c, in); i != 13 || !ok {
		t.Errorf("Sync = %d, %v; want 13, true", i, ok)
	}
	// A header whose successor is implausible is passed over.
	bad := append(append([]byte(nil), ping...), 0xff, 0xff, 0xff, 0xff)
	if i, ok := h.parser.Sync(c, append(bad, two...)); i != 28 || !ok {
		t.Errorf("Sync past a bad successor = %d, %v; want 28, true", i, ok)
	}
	// A header cut short that is plausible so far: wait for more.
	if i, ok := h.parser.Sync(c, append(append([]byte(nil), garbage...), ping[:10]...)); i != 13 || ok {
		t.Errorf("Sync on a partial header = %d, %v; want 13, false", i, ok)
	}
	if i, ok := h.parser.Sync(c, garbage); i != len(garbage) || ok {
		t.Errorf("Sync on garbage = %d, %v", i, ok)
	}
	// Once the cookie fixed the phase, only offsets in phase are tried:
	// the message at stream offset 105 is out of phase (0 mod 8).
	h.feed(t, 0, []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"), false)
	c = h.ctx(0, false)
	c.Offset = 100
	in = append(make([]byte, 5), two...)
	in = append(in, make([]byte, 3)...)
	in = append(in, two...) // at offset 100+5+72+3 = 180 = 4 mod 8: still out of phase
	in = append(in, make([]byte, 4)...)
	in = append(in, two...) // at 180+72+4 = 256 = 0 mod 8
	if i, ok := h.parser.Sync(c, in); i != 156 || !ok {
		t.Errorf("Sync in phase = %d, %v; want 156, true", i, ok)
	}

	// A run of fewer than three headers waits, unless the data ends
	// (Ctx.Last): then one that ends the data exactly is taken, and a
	// header whose message the end cuts is dropped.
	h = newTCP(t)
	c = h.ctx(0, false)
	c.Offset = 100
	in = append(append([]byte(nil), garbage...), ping...)
	if i, ok := h.parser.Sync(c, in); i != 13 || ok {
		t.Errorf("Sync on one header = %d, %v; want 13, false", i, ok)
	}
	c.Last = true
	if i, ok := h.parser.Sync(c, in); i != 13 || !ok {
		t.Errorf("Sync on one header at the end = %d, %v; want 13, true", i, ok)
	}
	h = newTCP(t)
	c = h.ctx(0, false)
	c.Offset, c.Last = 100, true
	in = append(append([]byte(nil), garbage...), encMsg(1795306106, 465992, 1, 16, 26, make([]byte, 16))[:30]...)
	if i, ok := h.parser.Sync(c, in); i != len(in) || ok {
		t.Errorf("Sync on a cut message at the end = %d, %v; want %d, false", i, ok, len(in))
	}
}

// TestDecodeFalse: without Decode only types and warnings are set, and the
// name tables are still learnt.
func TestDecodeFalse(t *testing.T) {
	h := newTCP(t)
	h.decode = false
	h.feed(t, 0, []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"), false)
	if h.rec.Type != TypeCookie || len(h.rec.Fields) != 0 || h.rec.Summary != "" {
		t.Errorf("cookie: %q %v %q", h.rec.Type, h.rec.Fields, h.rec.Summary)
	}
	h.feed(t, 0, encDescription(-1, 1, "Tracker0", 0), false)
	h.feed(t, 0, encDescription(-2, 4, namePosQuat, 1), false)
	recs := h.feed(t, 0, append(encMsg(1, 2, 1, 4, 2, make([]byte, 64)), encMsg(1, 2, 1, 4, 3, make([]byte, 8))...), false)
	if recs[0].Type != namePosQuat || len(recs[0].Fields) != 0 || len(recs[0].Warnings) != 0 {
		t.Errorf("Pos_Quat: %q %v %q", recs[0].Type, recs[0].Fields, recs[0].Warnings)
	}
	if recs[1].Type != namePosQuat || len(recs[1].Fields) != 0 || len(recs[1].Warnings) != 1 {
		t.Errorf("short Pos_Quat: %q %v %q", recs[1].Type, recs[1].Fields, recs[1].Warnings)
	}
}

// TestDecodeAllocs: decoding a Pos_Quat without fields allocates nothing.
func TestDecodeAllocs(t *testing.T) {
	h := described(t)
	h.decode = false
	msg := encMsg(1, 2, 1, 10, 0, make([]byte, 64))
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := h.parse(0, msg, false); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per message with Decode false", allocs)
	}
}

// TestUDPDescriptionHosts: a host that is not an IP address, or the
// unspecified address, routes to the announcing side's address.
func TestUDPDescriptionHosts(t *testing.T) {
	for _, host := range []string{"myhost", "0.0.0.0", "10.0.0.9"} {
		p := New().(*protocol)
		tcp := newHarness(p, dissect.TCP, mustAddrPort(t, "10.0.0.2:41000"), mustAddrPort(t, "10.0.0.1:3883"))
		tcp.off = [2]int64{24, 24}
		tcp.feed(t, 0, encMsg(1, 2, 5000, -3, 0, []byte(host+"\x00")), false)
		want := "10.0.0.2:5000"
		if host == "10.0.0.9" {
			want = "10.0.0.9:5000"
		}
		if len(p.routes) != 1 || p.route(mustAddrPort(t, want)) != tcp.parser.(*parser).dirs[1].names {
			t.Errorf("host %q: routes %v, want %s -> names of dir 1", host, p.order, want)
		}
	}
}

// TestRedescription: describing an id again replaces its name.
func TestRedescription(t *testing.T) {
	h := described(t)
	h.feed(t, 0, encDescription(-2, 10, nameDial, 50), false)
	h.feed(t, 0, encDescription(-1, 1, "Dial0", 51), false)
	r := h.feed(t, 0, encMsg(1, 2, 1, 10, 52, append(f64s(0.5), i32s(1)...)), false)[0]
	s, _ := r.Fields.Get("sender")
	if r.Type != nameDial || s.Str() != "Dial0" || len(r.Warnings) != 0 {
		t.Errorf("type %q sender %q warnings %q", r.Type, s.Str(), r.Warnings)
	}
}
