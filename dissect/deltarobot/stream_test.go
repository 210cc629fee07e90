package deltarobot_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

var (
	client = netip.MustParseAddrPort("198.51.100.10:50000")
	server = netip.MustParseAddrPort("192.0.2.1:4000")
	t0     = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
)

// rule decodes the test streams (server port 4000) as deltarobot.
const rule = "tcp.port==4000,deltarobot"

func streamInfo() dissect.StreamInfo {
	return dissect.StreamInfo{StreamID: dissect.StreamID{ID: 3, Transport: dissect.TCP, Addr: [2]netip.AddrPort{server, client}}, Name: [2]string{server.String(), client.String()}}
}

// event is one unit fed to a stream.
type event = dissecttest.Event

// chunkSizes are the maximum chunk sizes tried, picked at random per chunk.
var chunkSizes = []int{1, 2, 3, 5, 7, 17, 18, 19, 64, 1448}

// feedStream feeds the events, cutting data into random chunks drawn from rng
// (nil: whole), and returns the records.
func feedStream(t testing.TB, reg *dissect.Registry, decode bool, evs []event, rng *rand.Rand) []*dissect.Record {
	recs, _ := dissecttest.Feed(t, reg, streamInfo(), dissect.StreamOptions{Decode: decode}, evs, rng, chunkSizes)
	return recs
}

// dirOf tells the direction of a record from its source.
func dirOf(r *dissect.Record) dissect.Dir {
	if r.Src == client.String() {
		return 1
	}
	return 0
}

// want is an expected record.
type want struct {
	dir    dissect.Dir
	typ    string
	off    int64
	len    int64
	warn   []string // substrings, one per warning
	reason string   // for skipped: a substring of the reason
	fields []kv     // checked when non-nil (and decoding)
}

func checkRecords(t *testing.T, got []*dissect.Record, wants []want, decode bool) {
	t.Helper()
	if len(got) != len(wants) {
		var b strings.Builder
		for _, r := range got {
			fmt.Fprintf(&b, "\n  dir %d %s %d+%d %q %v", dirOf(r), r.Type, r.Offset, r.Length, r.Warnings, r.Fields)
		}
		t.Fatalf("%d records, want %d:%s", len(got), len(wants), b.String())
	}
	for i, w := range wants {
		r := got[i]
		if dirOf(r) != w.dir || r.Type != w.typ || r.Offset != w.off || r.Length != w.len || r.Proto != "deltarobot" || r.Transport != dissect.TCP || r.Stream != 3 {
			t.Fatalf("record %d: dir %d %s %s %d+%d, want dir %d %s %d+%d", i, dirOf(r), r.Proto, r.Type, r.Offset, r.Length, w.dir, w.typ, w.off, w.len)
		}
		checkWarnings(t, r.Warnings, w.warn)
		if w.typ == dissect.TypeSkipped {
			v, _ := r.Fields.Get("reason")
			if !strings.Contains(v.Str(), w.reason) {
				t.Errorf("record %d: reason %q does not contain %q", i, v.Str(), w.reason)
			}
			continue
		}
		if decode && w.fields != nil {
			checkFields(t, r.Fields, w.fields)
		}
	}
}

// scenario is a stream, fed in many random chunkings.
type scenario struct {
	name  string
	evs   []event
	size  [2]int64
	wants []want
	// chunked: always fed in chunks. A message over the framework's
	// MaxMessage is passed over only when it is not handed over whole.
	chunked bool
}

const handshake = "stream does not begin with magic + version"

var bye = []kv{{"reason", dissect.Str("bye")}}

var scenarios = []scenario{
	{
		// A bad size id in the middle of dir 0, then resync; a ping in dir 0
		// answered in dir 1 12.5 ms later.
		name: "bad size id mid-stream and rtt",
		evs: []event{
			{Dir: 0, At: t0, Data: cat(vMagic, vVersion, vPosition, h("0a 77"), vDirection, vDesired, vPing, vEOTBye)},
			{Dir: 1, At: t0.Add(12500 * time.Microsecond), Data: cat(vMagic, vVersion, vPong, vEOTEmpty)},
			{Dir: 0, At: t0.Add(time.Second)},
			{Dir: 1, At: t0.Add(time.Second)},
		},
		size: [2]int64{91, 32},
		wants: []want{
			{dir: 0, typ: "protocol_magic", off: 0, len: 10, fields: []kv{{"magic", dissect.Str("DeltaRVr")}}},
			{dir: 0, typ: "protocol_version", off: 10, len: 6, fields: []kv{{"version", dissect.Uint(1)}}},
			{dir: 0, typ: "actuator_position", off: 16, len: 18, fields: vec(1, 2, 3, 0)},
			{dir: 0, typ: dissect.TypeSkipped, off: 34, len: 2, reason: "message id 0x770a has size id 0x7"},
			{dir: 0, typ: "current_direction", off: 36, len: 18, fields: vec(-2, 0.25, 1, 7)},
			{dir: 0, typ: "desired_direction", off: 54, len: 18, fields: vec(0.5, -1, 0, 0)},
			{dir: 0, typ: "ping", off: 72, len: 10, fields: []kv{{"id", dissect.Uint(0x0123456789abcdef)}, {"id_hex", dissect.Str("0x0123456789abcdef")}}},
			{dir: 0, typ: "end_of_transmission", off: 82, len: 9, fields: bye},
			{dir: 1, typ: "protocol_magic", off: 0, len: 10},
			{dir: 1, typ: "protocol_version", off: 10, len: 6},
			{dir: 1, typ: "pong", off: 16, len: 10, fields: []kv{{"id", dissect.Uint(0x0123456789abcdef)}, {"id_hex", dissect.Str("0x0123456789abcdef")}, {"rtt_ms", dissect.Float(12.5)}}},
			{dir: 1, typ: "end_of_transmission", off: 26, len: 6, fields: []kv{{"reason", dissect.Str("")}}},
		},
	},
	{
		// The capture starts 5 bytes into an actuator_position message.
		name: "joined mid-message",
		evs: []event{
			{Dir: 0, At: t0, Data: cat(vPosition[5:], vDirection, vDesired, vPosition, vPing)},
			{Dir: 0, At: t0},
		},
		size: [2]int64{77, 0},
		wants: []want{
			{dir: 0, typ: dissect.TypeSkipped, off: 0, len: 13, reason: "message id 0x003f is unknown"},
			{dir: 0, typ: "current_direction", off: 13, len: 18, warn: []string{handshake + ": first message is current_direction"}},
			{dir: 0, typ: "desired_direction", off: 31, len: 18, warn: []string{handshake + ": second message is desired_direction"}},
			{dir: 0, typ: "actuator_position", off: 49, len: 18, fields: vec(1, 2, 3, 0)},
			{dir: 0, typ: "ping", off: 67, len: 10},
		},
	},
	{
		// 7 bytes lost in the middle of a message; the parser resyncs after
		// the rest of that message.
		name: "gap then resync",
		evs: []event{
			{Dir: 0, At: t0, Data: cat(vMagic, vVersion, vPosition)},
			{Dir: 0, At: t0, Gap: 7},
			{Dir: 0, At: t0, Data: cat(vPosition[7:], vDirection, vDesired, vPing, vEOTBye)},
			{Dir: 0, At: t0},
		},
		size: [2]int64{107, 0},
		wants: []want{
			{dir: 0, typ: "protocol_magic", off: 0, len: 10},
			{dir: 0, typ: "protocol_version", off: 10, len: 6},
			{dir: 0, typ: "actuator_position", off: 16, len: 18},
			{dir: 0, typ: dissect.TypeGap, off: 34, len: 7},
			{dir: 0, typ: dissect.TypeSkipped, off: 41, len: 11, reason: "resynchronising"},
			{dir: 0, typ: "current_direction", off: 52, len: 18},
			{dir: 0, typ: "desired_direction", off: 70, len: 18},
			{dir: 0, typ: "ping", off: 88, len: 10},
			{dir: 0, typ: "end_of_transmission", off: 98, len: 9, fields: bye},
		},
	},
	{
		// Unknown, mismatched and reserved ids are framed and reported,
		// not resynchronised over, once the handshake was seen; the
		// stream ends 8 bytes into a ping.
		name: "unknown and mismatched ids",
		evs: []event{
			{Dir: 1, At: t0, Data: cat(vMagic, vVersion, h("0a 20 01 02 03 04"), h("01 20 44 65 6c 74"), h("00 00 00"), h("0b f0 02 00 00 00 aa bb"), vPosition, vCurve, vPing[:8])},
			{Dir: 1, At: t0},
		},
		size: [2]int64{0, 95},
		wants: []want{
			{dir: 1, typ: "protocol_magic", off: 0, len: 10},
			{dir: 1, typ: "protocol_version", off: 10, len: 6},
			{dir: 1, typ: "unknown", off: 16, len: 6, warn: []string{"unknown message id 0x200a"}, fields: unk(0x200a, "01020304")},
			{dir: 1, typ: "unknown", off: 22, len: 6, warn: []string{"size id 0x2 does not match"}, fields: unk(0x2001, "44656c74")},
			{dir: 1, typ: "unknown", off: 28, len: 3, warn: []string{"reserved"}, fields: unk(0, "00")},
			{dir: 1, typ: "unknown", off: 31, len: 8, warn: []string{"unknown message id 0xf00b"}, fields: unk(0xf00b, "aabb")},
			{dir: 1, typ: "actuator_position", off: 39, len: 18, fields: vec(1, 2, 3, 0)},
			{dir: 1, typ: "curve", off: 57, len: 30, fields: points(point(0, 0, 0), point(1, 0.5, -1))},
			{dir: 1, typ: dissect.TypeSkipped, off: 87, len: 8, reason: "incomplete message at end of stream"},
		},
	},
	{
		// After a bad size id only two messages follow before the end: at
		// the end a chain of two that ends exactly where the stream ends
		// is taken (the end is the third boundary).
		name: "stream ends while resynchronising",
		evs: []event{
			{Dir: 0, At: t0, Data: cat(vMagic, vVersion, h("0a 77"), vPosition, vDirection)},
			{Dir: 0, At: t0},
		},
		size: [2]int64{54, 0},
		wants: []want{
			{dir: 0, typ: "protocol_magic", off: 0, len: 10},
			{dir: 0, typ: "protocol_version", off: 10, len: 6},
			{dir: 0, typ: dissect.TypeSkipped, off: 16, len: 2, reason: "size id 0x7"},
			{dir: 0, typ: "actuator_position", off: 18, len: 18},
			{dir: 0, typ: "current_direction", off: 36, len: 18},
		},
	},
	{
		// The same, but the end cuts the second message short: nothing
		// is sure, and the bytes are passed over.
		name: "stream ends inside the resync's second message",
		evs: []event{
			{Dir: 0, At: t0, Data: cat(vMagic, vVersion, h("0a 77"), vPosition, vDirection[:17])},
			{Dir: 0, At: t0},
		},
		size: [2]int64{53, 0},
		wants: []want{
			{dir: 0, typ: "protocol_magic", off: 0, len: 10},
			{dir: 0, typ: "protocol_version", off: 10, len: 6},
			{dir: 0, typ: dissect.TypeSkipped, off: 16, len: 37, reason: "size id 0x7"},
		},
	},
	{
		// A message larger than the framework's limit is passed over
		// without being held, and decoding goes on after it.
		name: "oversize message",
		evs: []event{
			{Dir: 0, At: t0, Data: cat(vMagic, vVersion, h("09 f0 00 00 10 00"), make([]byte, 1<<20), vPosition)},
			{Dir: 0, At: t0},
		},
		size:    [2]int64{16 + 6 + 1<<20 + 18, 0},
		chunked: true,
		wants: []want{
			{dir: 0, typ: "protocol_magic", off: 0, len: 10},
			{dir: 0, typ: "protocol_version", off: 10, len: 6},
			{dir: 0, typ: dissect.TypeSkipped, off: 16, len: 6 + 1<<20, reason: "exceeds"},
			{dir: 0, typ: "actuator_position", off: 16 + 6 + 1<<20, len: 18},
		},
	},
}

func TestStream(t *testing.T) {
	reg := dissecttest.Registry(t, []string{rule}, deltarobot.New())
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(sc.name))))
			tries := 200
			if sc.size[0] > 1<<20 {
				tries = 3
			}
			for i := range tries {
				var r *rand.Rand
				if i > 0 || sc.chunked {
					r = rng
				}
				for _, decode := range []bool{true, false} {
					recs := feedStream(t, reg, decode, sc.evs, r)
					dissecttest.CheckTiling(t, recs, sc.size, dirOf)
					checkRecords(t, recs, sc.wants, decode)
				}
			}
		})
	}
}

// TestDetectStream: without a rule, the handshake picks the protocol.
func TestDetectStream(t *testing.T) {
	reg := dissecttest.Registry(t, nil, deltarobot.New())
	var sink dissecttest.Collector
	s := dissect.NewStream(streamInfo(), reg, &sink, dissect.StreamOptions{Decode: true})
	s.Data(1, t0, vMagic[:4])
	if s.Protocol() != nil {
		t.Fatal("decided on 4 bytes")
	}
	s.Data(1, t0, cat(vMagic[4:], vVersion))
	if s.Protocol() == nil || s.Protocol().Info().Name != "deltarobot" {
		t.Fatalf("protocol %v", s.Protocol())
	}
	if len(sink.Records) != 2 || sink.Records[0].Type != "protocol_magic" || sink.Records[1].Type != "protocol_version" {
		t.Fatalf("records %v", sink.Records)
	}
}
