package vrpn

// Helpers shared by the tests: the truth.json loader, a message encoder
// written from the README's description of the wire (not from the decoder),
// and a checker of decoded records against truth.json's decoded_examples.

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

type truthFile struct {
	Captures map[string]*truthCapture `json:"captures"`
}

type truthCapture struct {
	File     string      `json:"file"`
	SameAs   string      `json:"same_as"`
	Mode     string      `json:"mode"`
	Lobs     []truthLob  `json:"udp_lob_datagrams"`
	TCP      []truthConn `json:"tcp_connections"`
	UDPFlows []truthFlow `json:"udp_message_flows"`
	Expected truthCounts `json:"expected_counts"`
	Examples []*truthMsg `json:"decoded_examples"`
	Ports    truthPorts  `json:"ports"`
}

type truthPorts struct {
	Announced []int `json:"udp_inbound_ports_announced"`
}

type truthLob struct {
	Frame        int    `json:"frame"`
	Src          string `json:"src"`
	Dst          string `json:"dst"`
	Text         string `json:"text"`
	Len          int    `json:"datagram_len"`
	Hex          string `json:"hex"`
	CallbackIP   string `json:"callback_ip"`
	CallbackPort int    `json:"callback_tcp_port"`
}

type truthConn struct {
	Initiator  string      `json:"initiator"`
	Acceptor   string      `json:"acceptor"`
	Directions []*truthDir `json:"directions"`
}

type truthDir struct {
	From           string            `json:"from"`
	To             string            `json:"to"`
	Role           string            `json:"role"`
	PayloadBytes   int64             `json:"payload_bytes"`
	Cookie         truthCookie       `json:"cookie"`
	FramedMessages int               `json:"framed_messages"`
	Seq            [2]uint64         `json:"sequence_numbers"`
	SenderIDs      map[string]string `json:"sender_ids"`
	TypeIDs        map[string]string `json:"type_ids"`
	Descriptions   []*truthMsg       `json:"udp_and_log_description_messages"`
	FirstThree     []*truthMsg       `json:"first_three_messages"`
}

type truthCookie struct {
	Hex          string `json:"hex"`
	Text         string `json:"text"`
	LogModeDigit string `json:"log_mode_digit"`
	Frame        int    `json:"frame"`
}

type truthFlow struct {
	From           string    `json:"from"`
	To             string    `json:"to"`
	Resolved       string    `json:"ids_resolved_with_descriptions_sent_on"`
	Datagrams      int       `json:"datagrams"`
	FramedMessages int       `json:"framed_messages"`
	Seq            [2]uint64 `json:"sequence_numbers"`
}

type truthCounts struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

type truthHeader struct {
	Length uint32 `json:"length_field"`
	Sec    uint32 `json:"time_sec"`
	Usec   uint32 `json:"time_usec"`
	Sender int32  `json:"sender_id"`
	Type   int32  `json:"type_id"`
	Seq    uint32 `json:"sequence_number"`
}

type truthMsg struct {
	Transport  string         `json:"transport"`
	Frame      int            `json:"frame"`
	From       string         `json:"from"`
	To         string         `json:"to"`
	Header     truthHeader    `json:"header"`
	SenderName *string        `json:"sender_name"`
	TypeName   string         `json:"type_name"`
	PayloadLen int            `json:"payload_len"`
	PaddingLen int            `json:"padding_len"`
	PayloadHex string         `json:"payload_hex"`
	PaddingHex string         `json:"padding_hex"`
	Decoded    map[string]any `json:"decoded"`
}

var (
	truthOnce sync.Once
	truthData *truthFile
	truthErr  error
)

// loadTruth reads testdata/truth.json (a copy of the shared corpus file).
func loadTruth(t testing.TB) *truthFile {
	t.Helper()
	truthOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join("testdata", "truth.json"))
		if err != nil {
			truthErr = err
			return
		}
		truthData = new(truthFile)
		truthErr = json.Unmarshal(b, truthData)
	})
	if truthErr != nil {
		t.Fatalf("truth.json: %v", truthErr)
	}
	return truthData
}

// captureNames lists the captures with their own truth, sorted.
func (tf *truthFile) captureNames() []string {
	var out []string
	for name, c := range tf.Captures {
		if c.SameAs == "" {
			out = append(out, name)
		}
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// dir returns the TCP direction from -> to.
func (c *truthCapture) dir(from, to string) *truthDir {
	for _, conn := range c.TCP {
		for _, d := range conn.Directions {
			if d.From == from && d.To == to {
				return d
			}
		}
	}
	return nil
}

// flow returns the UDP flow from -> to.
func (c *truthCapture) flow(from, to string) *truthFlow {
	for i := range c.UDPFlows {
		if c.UDPFlows[i].From == from && c.UDPFlows[i].To == to {
			return &c.UDPFlows[i]
		}
	}
	return nil
}

// namingDir returns the TCP direction whose descriptions name the ids of m.
func (c *truthCapture) namingDir(t testing.TB, m *truthMsg) *truthDir {
	t.Helper()
	if m.Transport == "tcp" {
		d := c.dir(m.From, m.To)
		if d == nil {
			t.Fatalf("no TCP direction %s -> %s in truth", m.From, m.To)
		}
		return d
	}
	f := c.flow(m.From, m.To)
	if f == nil {
		t.Fatalf("no UDP flow %s -> %s in truth", m.From, m.To)
	}
	from, to, ok := strings.Cut(f.Resolved, " -> ")
	if !ok {
		t.Fatalf("flow %s -> %s: bad ids_resolved_with_descriptions_sent_on %q", m.From, m.To, f.Resolved)
	}
	d := c.dir(from, to)
	if d == nil {
		t.Fatalf("no TCP direction %s -> %s in truth", from, to)
	}
	return d
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// bytes returns the message exactly as on the wire: the six header words,
// the payload and the (stale) padding bytes from the truth.
func (m *truthMsg) bytes(t testing.TB) []byte {
	t.Helper()
	payload, pad := mustHex(t, m.PayloadHex), mustHex(t, m.PaddingHex)
	if len(payload) != m.PayloadLen || len(pad) != m.PaddingLen {
		t.Fatalf("truth message frame %d: payload/padding lengths disagree with their hex", m.Frame)
	}
	h := m.Header
	b := putHeader(nil, h.Length, h.Sec, h.Usec, h.Sender, h.Type, h.Seq)
	b = append(b, payload...)
	return append(b, pad...)
}

// putHeader appends six big-endian words (README fact 2).
func putHeader(b []byte, length, sec, usec uint32, sender, typ int32, seq uint32) []byte {
	for _, w := range []uint32{length, sec, usec, uint32(sender), uint32(typ), seq} {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

// encMsg encodes a framed message: length = 24 + len(body), then the body
// zero-padded to a multiple of 8.
func encMsg(sec, usec uint32, sender, typ int32, seq uint32, body []byte) []byte {
	b := putHeader(nil, uint32(24+len(body)), sec, usec, sender, typ, seq)
	b = append(b, body...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// encDescription encodes a SENDER_DESCRIPTION (typ -1) or TYPE_DESCRIPTION
// (typ -2) of id: u32 strlen+1, the name, a NUL (README fact 6).
func encDescription(typ, id int32, name string, seq uint32) []byte {
	body := binary.BigEndian.AppendUint32(nil, uint32(len(name)+1))
	body = append(body, name...)
	body = append(body, 0)
	return encMsg(1795306100, 1, id, typ, seq, body)
}

// encDescriptions describes every sender and type of d, senders first.
func encDescriptions(t testing.TB, d *truthDir) []byte {
	t.Helper()
	var out []byte
	seq := uint32(0)
	for _, kv := range []struct {
		typ int32
		m   map[string]string
	}{{-1, d.SenderIDs}, {-2, d.TypeIDs}} {
		var ids []int
		for k := range kv.m {
			id, err := strconv.Atoi(k)
			if err != nil {
				t.Fatalf("bad id %q", k)
			}
			ids = append(ids, id)
		}
		for i := 1; i < len(ids); i++ {
			for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
				ids[j], ids[j-1] = ids[j-1], ids[j]
			}
		}
		for _, id := range ids {
			out = append(out, encDescription(kv.typ, int32(id), kv.m[strconv.Itoa(id)], seq)...)
			seq++
		}
	}
	return out
}

func mustAddrPort(t testing.TB, s string) netip.AddrPort {
	t.Helper()
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatalf("bad address %q: %v", s, err)
	}
	return a
}

// systemTypes maps truth's names of system messages to record types.
var systemTypes = map[string]string{
	"SENDER_DESCRIPTION": TypeSenderDescription,
	"TYPE_DESCRIPTION":   TypeTypeDescription,
	"UDP_DESCRIPTION":    TypeUDPDescription,
	"LOG_DESCRIPTION":    TypeLogDescription,
	"DISCONNECT_MESSAGE": TypeDisconnect,
}

// recordKey returns the (sender, type) pair of a record the way truth.json
// counts it: system messages as "(system)" and their upper-case name.
func recordKey(r *dissect.Record) (sender, typ string) {
	for k, v := range systemTypes {
		if r.Type == v {
			return "(system)", k
		}
	}
	s, _ := r.Fields.Get("sender")
	return s.Str(), r.Type
}

// fieldKeys returns the keys of fs in order.
func fieldKeys(fs dissect.Fields) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Key
	}
	return out
}

var headerKeys = []string{"sender", "sender_id", "type_id", "sent", "sequence"}

// wantKeys lists the fields of each decoded type after the header fields
// (output contract, vrpn section).
var wantKeys = map[string][]string{
	namePosQuat:           {"sensor", "pos", "quat"},
	nameVelocity:          {"sensor", "vel", "vel_quat", "vel_quat_dt"},
	nameAcceleration:      {"sensor", "acc", "acc_quat", "acc_quat_dt"},
	nameButtonChange:      {"button", "state"},
	nameButtonStates:      {"states"},
	nameAnalog:            {"channels"},
	nameDial:              {"change", "dial"},
	namePing:              {},
	namePong:              {},
	TypeSenderDescription: {"name"},
	TypeTypeDescription:   {"name"},
	TypeUDPDescription:    {"host", "port"},
	TypeLogDescription:    {"mode", "incoming", "outgoing"},
}

func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func num(t testing.TB, v any) float64 {
	t.Helper()
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("truth value %v (%T) is not a number", v, v)
	}
	return f
}

func nums(t testing.TB, v any) []float64 {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("truth value %v (%T) is not an array", v, v)
	}
	out := make([]float64, len(a))
	for i := range a {
		out[i] = num(t, a[i])
	}
	return out
}

// checkRecord compares a decoded record with a truth message: type, header
// fields, field order and every decoded value, bit for bit.
func checkRecord(t testing.TB, r *dissect.Record, m *truthMsg) {
	t.Helper()
	where := "frame " + strconv.Itoa(m.Frame) + " seq " + strconv.Itoa(int(m.Header.Seq))
	wantType := m.TypeName
	if st, ok := systemTypes[wantType]; ok {
		wantType = st
	}
	if r.Type != wantType {
		t.Errorf("%s: type %q, want %q", where, r.Type, wantType)
		return
	}
	if len(r.Warnings) != 0 {
		t.Errorf("%s: unexpected warnings %q", where, r.Warnings)
	}
	if want := int64(24 + m.PayloadLen + m.PaddingLen); r.Length != 0 && r.Length != want {
		t.Errorf("%s: length %d, want %d", where, r.Length, want)
	}
	keys := fieldKeys(r.Fields)
	if wantType == namePong && len(keys) > 0 && keys[len(keys)-1] == "rtt_ms" {
		keys = keys[:len(keys)-1] // present when the ping was seen; decl_test.go checks it
	}
	want := append(append([]string(nil), headerKeys...), wantKeys[wantType]...)
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("%s: field keys %v, want %v", where, keys, want)
		return
	}
	f := func(k string) dissect.Value { v, _ := r.Fields.Get(k); return v }
	h := m.Header
	if m.SenderName != nil {
		if got := f("sender").Str(); got != *m.SenderName {
			t.Errorf("%s: sender %q, want %q", where, got, *m.SenderName)
		}
	} else if got := f("sender").Str(); got != strconv.Itoa(int(h.Sender)) {
		t.Errorf("%s: system message sender %q, want the numeric field %d", where, got, h.Sender)
	}
	if got := f("sender_id").Int(); got != int64(h.Sender) {
		t.Errorf("%s: sender_id %d, want %d", where, got, h.Sender)
	}
	if got := f("type_id").Int(); got != int64(h.Type) {
		t.Errorf("%s: type_id %d, want %d", where, got, h.Type)
	}
	if got, want := f("sent").Time(), time.Unix(int64(h.Sec), int64(h.Usec)*1000).UTC(); !got.Equal(want) {
		t.Errorf("%s: sent %v, want %v", where, got, want)
	}
	if got := f("sequence").Uint(); got != uint64(h.Seq) {
		t.Errorf("%s: sequence %d, want %d", where, got, h.Seq)
	}
	checkFloats := func(key string, got dissect.Value, want []float64) {
		items := got.Items()
		if len(items) != len(want) {
			t.Errorf("%s: %s has %d items, want %d", where, key, len(items), len(want))
			return
		}
		for i := range want {
			if items[i].Value.Kind() != dissect.KindFloat || !sameFloat(items[i].Value.Float(), want[i]) {
				t.Errorf("%s: %s[%d] = %v (kind %d), want %v (bits %016x)", where, key, i, items[i].Value.Float(), items[i].Value.Kind(), want[i], math.Float64bits(want[i]))
			}
		}
	}
	for k, v := range m.Decoded {
		switch k {
		case "sensor", "button", "state", "dial":
			if got := f(k); got.Kind() != dissect.KindInt || float64(got.Int()) != num(t, v) {
				t.Errorf("%s: %s = %d, want %v", where, k, got.Int(), v)
			}
		case "sensor_repeat":
			// Not an output field; a differing copy would have warned.
			if num(t, v) != num(t, m.Decoded["sensor"]) {
				t.Errorf("%s: truth's sensor copy differs from sensor", where)
			}
		case "pos", "vel", "acc", "channels":
			checkFloats(k, f(k), nums(t, v))
		case "quat_wire_order", "vel_quat_wire_order", "acc_quat_wire_order":
			key := strings.TrimSuffix(k, "_wire_order")
			items := f(key).Items()
			wantQ := nums(t, v) // wire order: x, y, z, w (README, quaternion order)
			if len(items) != 4 {
				t.Errorf("%s: %s has %d items", where, key, len(items))
				continue
			}
			for i, name := range []string{"x", "y", "z", "w"} {
				if items[i].Key != name || !sameFloat(items[i].Value.Float(), wantQ[i]) {
					t.Errorf("%s: %s item %d = %s:%v, want %s:%v", where, key, i, items[i].Key, items[i].Value.Float(), name, wantQ[i])
				}
			}
		case "vel_quat_dt", "acc_quat_dt", "change":
			if got := f(k); got.Kind() != dissect.KindFloat || !sameFloat(got.Float(), num(t, v)) {
				t.Errorf("%s: %s = %v, want %v", where, k, got.Float(), v)
			}
		case "num_buttons":
			if got := len(f("states").Items()); float64(got) != num(t, v) {
				t.Errorf("%s: %d states, want %v", where, got, v)
			}
		case "states":
			items := f(k).Items()
			want := nums(t, v)
			if len(items) != len(want) {
				t.Errorf("%s: states %d items, want %d", where, len(items), len(want))
				continue
			}
			for i := range want {
				if items[i].Value.Kind() != dissect.KindInt || float64(items[i].Value.Int()) != want[i] {
					t.Errorf("%s: states[%d] = %d, want %v", where, i, items[i].Value.Int(), want[i])
				}
			}
		case "num_channels":
			if got := len(f("channels").Items()); float64(got) != num(t, v) {
				t.Errorf("%s: %d channels, want %v", where, got, v)
			}
		default:
			t.Errorf("%s: truth key %q is not checked by this test", where, k)
		}
	}
}
