package neptune_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/neptune"
)

var (
	host   = netip.MustParseAddrPort("192.168.0.10:50000")
	rov    = netip.MustParseAddrPort("192.168.0.177:1493") // nep_network.ino's address and port
	wikiTo = netip.MustParseAddrPort("192.168.0.177:9000")
	t0     = time.Date(2016, 4, 15, 12, 0, 0, 0, time.UTC)
)

// streamInfo: dir 0 is the host (it connects to the ROV), dir 1 the ROV.
func streamInfo(tr dissect.Transport, to netip.AddrPort) dissect.StreamInfo {
	si := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 2, Transport: tr}}
	if tr == dissect.Serial {
		si.Name = [2]string{"host", "/dev/ttyACM0"}
		si.Link = "/dev/ttyACM0"
		return si
	}
	si.Addr = [2]netip.AddrPort{host, to}
	si.Name = [2]string{host.String(), to.String()}
	return si
}

// registry returns a registry of both protocols with the given decode-as
// rules.
func registry(t testing.TB, int16 bool, rules ...string) *dissect.Registry {
	t.Helper()
	return dissecttest.Registry(t, rules, neptune.New(), neptune.NewWiki(neptune.WikiOptions{Int16: int16}))
}

// event is one unit fed to a stream (At is left zero: no test here
// depends on the time).
type event = dissecttest.Event

var chunkSizes = []int{1, 2, 3, 4, 5, 7, 64, 1448}

// feed feeds evs to a new stream; byte-stream data is cut into random
// chunks drawn from rng (nil: whole); on UDP every data event is one
// datagram.
func feed(t testing.TB, info dissect.StreamInfo, reg *dissect.Registry, decode bool, evs []event, rng *rand.Rand) []*dissect.Record {
	t.Helper()
	recs, _ := dissecttest.Feed(t, reg, info, dissect.StreamOptions{Decode: decode}, evs, rng, chunkSizes)
	return recs
}

func dirOf(r *dissect.Record) dissect.Dir {
	if r.Src == host.String() || r.Src == "host" {
		return 0
	}
	return 1
}

// want is an expected record.
type want struct {
	dir     dissect.Dir
	typ     string
	off     int64
	len     int64
	warn    []string // substrings, one per warning
	reason  string   // for skipped: a substring of the reason
	fields  []kv     // checked when non-nil (and decoding)
	summary string
}

func checkRecords(t *testing.T, got []*dissect.Record, wants []want, decode bool, info dissect.StreamInfo) {
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
		if dirOf(r) != w.dir || r.Type != w.typ || r.Offset != w.off || r.Length != w.len || r.Proto != "neptune" || r.Transport != info.Transport || r.Stream != info.ID {
			t.Fatalf("record %d: dir %d %s %s %s %d+%d, want dir %d %s %d+%d", i, dirOf(r), r.Proto, r.Transport, r.Type, r.Offset, r.Length, w.dir, w.typ, w.off, w.len)
		}
		if r.Src != info.Name[w.dir] || r.Dst != info.Name[w.dir^1] {
			t.Errorf("record %d: %s -> %s", i, r.Src, r.Dst)
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
		if decode && r.Summary != w.summary {
			t.Errorf("record %d: summary %q, want %q", i, r.Summary, w.summary)
		}
	}
}

type scenario struct {
	name  string
	info  dissect.StreamInfo
	rules []string
	evs   []event
	size  [2]int64
	wants []want
}

var tcpInfo = streamInfo(dissect.TCP, rov)

var deviceScenarios = []scenario{
	{
		// Length 0 reruns the type byte left in the device's packet buffer
		// (nep_network.ino: len = 0 reads no payload, run_command switches
		// on packet[0]). Bytes by hand:
		//   [0]     00           first of the connection: buffer zeroed, abort
		//   [1,3)   01 00        abort
		//   [3]     00           abort again
		//   [4,9)   04 01 05 01 00  set_motor relay 5 on
		//   [9]     00           set_motor with len 0: refused, ignored
		//   [10,14) 03 09 01 02  unknown type 9
		//   [14]    00           type 9 again: no handler
		//   [15,20) 04 01 06 00 00  set_motor relay 6 off
		name:  "length 0 follows the device's buffer",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs: []event{
			{Dir: 0, Data: h("00 01 00 00 04 01 05 01 00 00 03 09 01 02 00 04 01 06 00 00")},
			{Dir: 0}, {Dir: 1},
		},
		size: [2]int64{20, 0},
		wants: []want{
			{typ: "abort", off: 0, len: 1, fields: []kv{}, warn: []string{"length 0: the device runs the previous message's type (abort) again, with no arguments"}, summary: "len=0"},
			{typ: "abort", off: 1, len: 2, fields: []kv{}},
			{typ: "abort", off: 3, len: 1, fields: []kv{}, warn: []string{"(abort) again, with no arguments"}, summary: "len=0"},
			{typ: "set_motor", off: 4, len: 5, fields: relay(5, "reverse", 0, true), summary: "relay 5 on"},
			{typ: "set_motor", off: 9, len: 1, fields: []kv{}, warn: []string{"(set_motor) again with length 0, and ignores it"}, summary: "len=0"},
			{typ: "unknown", off: 10, len: 4, fields: []kv{{"data", hx("090102")}}, warn: []string{"unknown message type 9"}, summary: "type=9 len=3"},
			{typ: "unknown", off: 14, len: 1, fields: []kv{}, warn: []string{"type 9 again, which it does not know"}, summary: "len=0"},
			{typ: "set_motor", off: 15, len: 5, fields: relay(6, "forward", 0, false), summary: "relay 6 off"},
		},
	},
	{
		// Length bytes of 100 or more: nep_network.ino drops each alone
		// (client.flush() discards nothing). By hand: [0,3) c8 64 ff
		// skipped; [3,6) 02 05 01 lamp on; [6] fe skipped; [7,12) set_motor
		// relay 5 off; [12,14) 01 00 abort; [14] 00 abort again.
		name:  "bytes of 100 or more, one at a time",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs: []event{
			{Dir: 0, Data: h("c8 64 ff 02 05 01 fe 04 01 05 00 07 01 00 00")},
			{Dir: 0}, {Dir: 1},
		},
		size: [2]int64{15, 0},
		wants: []want{
			{typ: dissect.TypeSkipped, off: 0, len: 3, reason: "length byte 200 is 100 or more: the device drops this byte"},
			{typ: "lamp", off: 3, len: 3, fields: []kv{{"on", bl(true)}}},
			{typ: dissect.TypeSkipped, off: 6, len: 1, reason: "length byte 254"},
			{typ: "set_motor", off: 7, len: 5, fields: relay(5, "forward", 7, false), summary: "relay 5 off"},
			{typ: "abort", off: 12, len: 2, fields: []kv{}},
			{typ: "abort", off: 14, len: 1, fields: []kv{}, warn: []string{"(abort) again"}, summary: "len=0"},
		},
	},
	{
		// Every type in a row, then an unknown type, a wrong length and an
		// empty message; the ROV sends nothing back.
		name:  "all types",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs: []event{
			{Dir: 0, Data: cat(vStop, vRelay5On, vTranslate, vRotate, vStabilize, vLamp, vAbort, h("02 09 01"), h("03 01 02 00"), h("00"), vMotor2)},
			{Dir: 0}, {Dir: 1},
		},
		size: [2]int64{39, 0},
		wants: []want{
			{typ: "set_motor", off: 0, len: 5, fields: motor(0, "forward", 0)},
			{typ: "set_motor", off: 5, len: 5, fields: relay(5, "reverse", 0, true), summary: "relay 5 on"},
			{typ: "translate", off: 10, len: 4, fields: []kv{{"axis", s("x")}, {"sign", u(1)}}},
			{typ: "rotate", off: 14, len: 4, fields: []kv{{"axis", s("y")}, {"sign", u(0)}}},
			{typ: "stabilize", off: 18, len: 3, fields: []kv{{"enable", bl(true)}}},
			{typ: "lamp", off: 21, len: 3, fields: []kv{{"on", bl(false)}}},
			{typ: "abort", off: 24, len: 2, fields: []kv{}},
			{typ: "unknown", off: 26, len: 3, fields: []kv{{"data", hx("0901")}}, warn: []string{"unknown message type 9"}, summary: "type=9 len=2"},
			{typ: "set_motor", off: 29, len: 4, fields: []kv{{"motor", u(2)}, {"direction", s("forward")}, {"data", hx("010200")}}, warn: []string{"set_motor needs length 4, got 3"}},
			// Length 0 after the short set_motor: the device's buffer still
			// holds type 1, whose handler refuses length 0.
			{typ: "set_motor", off: 33, len: 1, fields: []kv{}, warn: []string{"length 0: the device runs the previous message's type (set_motor) again with length 0, and ignores it"}, summary: "len=0"},
			{typ: "set_motor", off: 34, len: 5, fields: motor(2, "reverse", 255)},
		},
	},
	{
		// No rule: TCP port 1493 picks the protocol.
		name: "default port",
		info: tcpInfo,
		evs:  []event{{Dir: 0, Data: vStop}, {Dir: 0}},
		size: [2]int64{5, 0},
		wants: []want{
			{typ: "set_motor", off: 0, len: 5, fields: motor(0, "forward", 0)},
		},
	},
	{
		// Length bytes 100, 255 and 200: nep_network.ino reads each as a
		// length, finds it not below 100 and calls client.flush(), which
		// discards nothing; the next byte is read as a length. So the three
		// bytes are one skipped run and the commands after them decode.
		name:  "bad length then resync",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs: []event{
			{Dir: 0, Data: cat(vStop, h("64 ff c8"), vTranslate, vRotate, vLamp, vStabilize)},
			{Dir: 0},
		},
		size: [2]int64{22, 0},
		wants: []want{
			{typ: "set_motor", off: 0, len: 5},
			{typ: dissect.TypeSkipped, off: 5, len: 3, reason: "neptune: malformed at offset 5: length byte 100 is 100 or more: the device drops this byte"},
			{typ: "translate", off: 8, len: 4},
			{typ: "rotate", off: 12, len: 4},
			{typ: "lamp", off: 16, len: 3},
			{typ: "stabilize", off: 19, len: 3, fields: []kv{{"enable", bl(true)}}},
		},
	},
	{
		// Two bytes lost inside a set_motor: the bytes held before the gap
		// are passed over, then the one left of that message, then
		// decoding resumes.
		name:  "gap then resync",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs: []event{
			{Dir: 0, Data: cat(vStop, vMotor2[:2])},
			{Dir: 0, Gap: 2},
			{Dir: 0, Data: cat(vMotor2[4:], vTranslate, vRotate, vLamp, vAbort)},
			{Dir: 0},
		},
		size: [2]int64{23, 0},
		wants: []want{
			{typ: "set_motor", off: 0, len: 5},
			{typ: dissect.TypeSkipped, off: 5, len: 2, reason: "incomplete message before a gap"},
			{typ: dissect.TypeGap, off: 7, len: 2},
			{typ: dissect.TypeSkipped, off: 9, len: 1, reason: "resynchronising"},
			{typ: "translate", off: 10, len: 4},
			{typ: "rotate", off: 14, len: 4},
			{typ: "lamp", off: 18, len: 3},
			{typ: "abort", off: 21, len: 2},
		},
	},
	{
		// A gap inside a run of dropped length bytes. By hand: [0,3) lamp;
		// c8@3 dropped; gap [4,6); after it nothing of the device's state
		// is known, so c8@6 is passed over with the search and decoding
		// starts afresh at 7, where lamp, set_motor, translate chain.
		name:  "gap inside dropped bytes",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs: []event{
			{Dir: 0, Data: cat(vLamp, h("c8"))},
			{Dir: 0, Gap: 2},
			{Dir: 0, Data: cat(h("c8"), vLamp, vStop, vTranslate)},
			{Dir: 0},
		},
		size: [2]int64{19, 0},
		wants: []want{
			{typ: "lamp", off: 0, len: 3},
			{typ: dissect.TypeSkipped, off: 3, len: 1, reason: "length byte 200 is 100 or more"},
			{typ: dissect.TypeGap, off: 4, len: 2},
			{typ: dissect.TypeSkipped, off: 6, len: 1, reason: "resynchronising"},
			{typ: "lamp", off: 7, len: 3},
			{typ: "set_motor", off: 10, len: 5},
			{typ: "translate", off: 15, len: 4},
		},
	},
	{
		// A length 0 right after a gap is not decoded: the lost bytes may
		// have held any message, so the type byte in the device's buffer
		// is not known. By hand: [0,2) abort; [2,7) set_motor; gap [7,9);
		// 00@9 passed over (no chain starts at a length 0); three
		// set_motor from 10.
		name:  "length 0 after a gap",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs: []event{
			{Dir: 0, Data: cat(vAbort, vMotor2)},
			{Dir: 0, Gap: 2},
			{Dir: 0, Data: cat(h("00"), vStop, vRelay5On, vMotor2)},
			{Dir: 0},
		},
		size: [2]int64{25, 0},
		wants: []want{
			{typ: "abort", off: 0, len: 2},
			{typ: "set_motor", off: 2, len: 5},
			{typ: dissect.TypeGap, off: 7, len: 2},
			{typ: dissect.TypeSkipped, off: 9, len: 1, reason: "resynchronising"},
			{typ: "set_motor", off: 10, len: 5},
			{typ: "set_motor", off: 15, len: 5, summary: "relay 5 on"},
			{typ: "set_motor", off: 20, len: 5},
		},
	},
	{
		// After a length of 200 only two messages follow: the device drops
		// the one byte and runs both (no three-message resync is needed).
		name:  "two messages after a dropped length byte",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs:   []event{{Dir: 0, Data: cat(vStop, h("c8"), vTranslate, vRotate)}, {Dir: 0}},
		size:  [2]int64{14, 0},
		wants: []want{
			{typ: "set_motor", off: 0, len: 5},
			{typ: dissect.TypeSkipped, off: 5, len: 1, reason: "length byte 200"},
			{typ: "translate", off: 6, len: 4},
			{typ: "rotate", off: 10, len: 4},
		},
	},
	{
		// The stream ends three bytes into a set_motor.
		name:  "incomplete at end",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs:   []event{{Dir: 0, Data: cat(vLamp, vStop[:3])}, {Dir: 0}},
		size:  [2]int64{6, 0},
		wants: []want{
			{typ: "lamp", off: 0, len: 3},
			{typ: dissect.TypeSkipped, off: 3, len: 3, reason: "incomplete message at end of stream"},
		},
	},
	{
		// A capture that starts inside a message is framed from its first
		// byte, as the device would read it: the tail 00 00 of a set_motor
		// is two empty messages.
		name:  "joined mid-message",
		info:  tcpInfo,
		rules: []string{"tcp.port==1493,neptune"},
		evs:   []event{{Dir: 0, Data: cat(vStop[3:], vTranslate)}, {Dir: 0}},
		size:  [2]int64{6, 0},
		wants: []want{
			// The device's buffer starts zeroed: a length 0 runs abort, and
			// the next length 0 runs abort again.
			{typ: "abort", off: 0, len: 1, warn: []string{"(abort) again, with no arguments"}, summary: "len=0"},
			{typ: "abort", off: 1, len: 1, warn: []string{"(abort) again, with no arguments"}, summary: "len=0"},
			{typ: "translate", off: 2, len: 4},
		},
	},
	{
		// Serial link with decode-as "serial,neptune"; bytes from the
		// device side are decoded the same way.
		name:  "serial",
		info:  streamInfo(dissect.Serial, netip.AddrPort{}),
		rules: []string{"serial,neptune"},
		evs:   []event{{Dir: 0, Data: cat(vRelay6Off, vAbort)}, {Dir: 1, Data: vLamp}, {Dir: 0}, {Dir: 1}},
		size:  [2]int64{7, 3},
		wants: []want{
			{typ: "set_motor", off: 0, len: 5, fields: relay(6, "forward", 128, false), summary: "relay 6 off"},
			{typ: "abort", off: 5, len: 2},
			{dir: 1, typ: "lamp", off: 0, len: 3},
		},
	},
}

func TestStreamDevice(t *testing.T) {
	for _, sc := range deviceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			reg := registry(t, false, sc.rules...)
			rng := rand.New(rand.NewPCG(7, uint64(len(sc.name))))
			for try := range 200 {
				var r *rand.Rand
				if try > 0 {
					r = rng
				}
				for _, decode := range []bool{true, false} {
					recs := feed(t, sc.info, reg, decode, sc.evs, r)
					dissecttest.CheckTiling(t, recs, sc.size, dirOf)
					checkRecords(t, recs, sc.wants, decode, sc.info)
				}
			}
		})
	}
}

// TestStreamNoRule: on a port other than 1493, with no rule, nothing is
// decoded as neptune (there is no content detection).
func TestStreamNoRule(t *testing.T) {
	reg := registry(t, false)
	for _, info := range []dissect.StreamInfo{
		streamInfo(dissect.TCP, netip.MustParseAddrPort("192.168.0.177:1494")),
		streamInfo(dissect.UDP, wikiTo),
		streamInfo(dissect.UDP, rov), // 1493 is a TCP port only
	} {
		recs := feed(t, info, reg, true, []event{{Dir: 0, Data: cat(vStop, vTranslate, vRotate, vLamp)}, {Dir: 0}}, nil)
		if len(recs) != 1 || recs[0].Type != dissect.TypeSkipped || recs[0].Proto != "" || recs[0].Length != 16 {
			t.Errorf("%s %s: records %+v", info.Transport, info.Name[1], recs)
		}
	}
}

// TestDecodeAsRules: the wiki mode runs only over UDP, the device framing
// over TCP and serial.
func TestDecodeAsRules(t *testing.T) {
	reg := registry(t, false)
	for s, ok := range map[string]bool{
		"tcp.port==1493,neptune":      true,
		"serial,neptune":              true,
		"udp.port==1493,neptune":      false,
		"udp.port==9000,neptune-wiki": true,
		"tcp.port==9000,neptune-wiki": false,
		"serial,neptune-wiki":         false,
	} {
		if _, err := reg.ParseDecodeAs(s); (err == nil) != ok {
			t.Errorf("ParseDecodeAs(%q): %v", s, err)
		}
	}
}

var udpInfo = streamInfo(dissect.UDP, wikiTo)

var wikiScenarios = []struct {
	scenario
	int16 bool
}{
	{scenario: scenario{
		// One packet per datagram; an empty datagram makes no record; a
		// reply direction is decoded the same way.
		name:  "datagrams",
		info:  udpInfo,
		rules: []string{"udp.port==9000,neptune-wiki"},
		evs: []event{
			{Dir: 0, Data: wSpeed}, {Dir: 0, Data: wPosition}, {Dir: 1, Data: wSensor}, {Dir: 0, Data: []byte{}},
			{Dir: 0, Data: wRelayOn}, {Dir: 0, Data: wUnknown}, {Dir: 0, Data: h("03 09")}, {Dir: 0, Data: h("03 00 00 04 01 aa")},
		},
		size: [2]int64{13 + 12 + 5 + 5 + 2 + 6, 15},
		wants: []want{
			{typ: "speed_motor", off: 0, len: 13, fields: with(hdr(2, 7), speed(3, "forward", 0.5, 5)...)},
			{typ: "position_motor", off: 13, len: 12, fields: with(hdr(0, 1), kv{"motor_id", u(4)}, kv{"degree", f32(90)}, kv{"speed", f32(0.25)})},
			{dir: 1, typ: "sensor_data", off: 0, len: 15, fields: with(hdr(0, 9), kv{"sensor_type", i(2)}, kv{"sensor_id", i(1)}, kv{"data", hx("deadbeef")})},
			{typ: "relay", off: 25, len: 5, fields: with(hdr(1, 2), kv{"relay_id", u(1)}, kv{"enable", bl(true)})},
			{typ: "unknown", off: 30, len: 5, fields: with(hdr(1, 2), kv{"data", hx("aabb")}), warn: []string{"type 5 has no number"}},
			{typ: "relay", off: 35, len: 2, fields: []kv{{"priority", u(9)}}, warn: []string{"shorter than the 3-byte header"}},
			{typ: "relay", off: 37, len: 6, fields: with(hdr(0, 0), kv{"relay_id", u(4)}, kv{"enable", bl(true)}, kv{"trailing", hx("aa")}), warn: []string{"1 bytes after the 2-byte body"}},
		},
	}},
	{int16: true, scenario: scenario{
		name:  "int16",
		info:  udpInfo,
		rules: []string{"udp.port==9000,neptune-wiki"},
		evs:   []event{{Dir: 0, Data: wSpeed16}, {Dir: 0, Data: wSensor16}, {Dir: 0, Data: wSpeed}},
		size:  [2]int64{11 + 9 + 13, 0},
		wants: []want{
			{typ: "speed_motor", off: 0, len: 11, fields: with(hdr(2, 7), speed(3, "forward", 0.5, 5)...)},
			{typ: "sensor_data", off: 11, len: 9, fields: with(hdr(0, 9), kv{"sensor_type", i(2)}, kv{"sensor_id", i(1)}, kv{"data", hx("dead")})},
			{typ: "speed_motor", off: 20, len: 13, fields: with(hdr(2, 7), append(speed(3, "forward", 0.5, 5), kv{"trailing", hx("0000")})...), warn: []string{"2 bytes after the 8-byte body"}},
		},
	}},
}

func TestStreamWiki(t *testing.T) {
	for _, sc := range wikiScenarios {
		t.Run(sc.name, func(t *testing.T) {
			reg := registry(t, sc.int16, sc.rules...)
			for _, decode := range []bool{true, false} {
				recs := feed(t, sc.info, reg, decode, sc.evs, nil)
				dissecttest.CheckTiling(t, recs, sc.size, dirOf)
				checkRecords(t, recs, sc.wants, decode, sc.info)
			}
		})
	}
}
