package handcontrol

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// want is an expected record.
type want struct {
	dir    dissect.Dir
	typ    string
	off    int64
	len    int64
	warn   []string // substrings, one per warning
	reason string   // skipped: a substring of the reason
	fields []kv     // checked when non-nil (and decoding)
}

// script builds a two-direction stream: the events fed and the records
// expected, with offsets counted as parts are appended.
type script struct {
	evs   []event
	wants []want
	size  [2]int64
}

// add appends an event of direction dir at time at made of parts; each part
// expects one record (skipped or message).
func (s *script) add(dir dissect.Dir, at time.Time, parts ...part) {
	var data []byte
	for _, p := range parts {
		w := p.want
		w.dir, w.off, w.len = dir, s.size[dir], int64(len(p.b))
		s.wants = append(s.wants, w)
		s.size[dir] += int64(len(p.b))
		data = append(data, p.b...)
	}
	s.evs = append(s.evs, event{dir: dir, at: at, data: data})
}

// gap adds n bytes of direction dir that were never captured.
func (s *script) gap(dir dissect.Dir, at time.Time, n int64) {
	s.wants = append(s.wants, want{dir: dir, typ: dissect.TypeGap, off: s.size[dir], len: n})
	s.size[dir] += n
	s.evs = append(s.evs, event{dir: dir, at: at, gap: n})
}

func (s *script) end(at time.Time) {
	s.evs = append(s.evs, event{dir: 0, at: at}, event{dir: 1, at: at})
}

type part struct {
	b    []byte
	want want
}

func msg(b []byte, typ string, warn []string, fields []kv) part {
	return part{b, want{typ: typ, warn: warn, fields: fields}}
}

func skip(b []byte, reason string) part {
	return part{b, want{typ: dissect.TypeSkipped, reason: reason}}
}

func checkRecords(t *testing.T, got []*dissect.Record, wants []want, decode bool) {
	t.Helper()
	if len(got) != len(wants) {
		var b strings.Builder
		for _, r := range got {
			fmt.Fprintf(&b, "\n  dir %d %s %d+%d %q %s", dirOf(r), r.Type, r.Offset, r.Length, r.Warnings, showFields(r.Fields))
		}
		t.Fatalf("%d records, want %d:%s", len(got), len(wants), b.String())
	}
	for i, w := range wants {
		r := got[i]
		if dirOf(r) != w.dir || r.Type != w.typ || r.Offset != w.off || r.Length != w.len || r.Proto != "handcontrol" || r.Transport != dissect.Serial || r.Stream != 2 {
			t.Fatalf("record %d: dir %d %s %s %d+%d, want dir %d %s %d+%d", i, dirOf(r), r.Proto, r.Type, r.Offset, r.Length, w.dir, w.typ, w.off, w.len)
		}
		if w.typ == dissect.TypeSkipped {
			v, _ := r.Fields.Get("reason")
			if !strings.Contains(v.Str(), w.reason) {
				t.Errorf("record %d: reason %q does not contain %q", i, v.Str(), w.reason)
			}
			continue
		}
		t.Run(fmt.Sprintf("record %d %s", i, r.Type), func(t *testing.T) {
			checkWarnings(t, r.Warnings, w.warn)
			if decode && w.fields != nil {
				checkFields(t, r.Fields, w.fields)
			}
		})
	}
}

// run feeds the script whole and in random chunkings, with and without
// decoding, and checks the records and the tiling each time.
func (s *script) run(t *testing.T, opt Options) {
	t.Helper()
	reg := registry(t, opt)
	for seed := range uint64(40) {
		var rng *rand.Rand
		if seed > 0 {
			rng = rand.New(rand.NewPCG(seed, 7))
		}
		decode := seed%4 != 3
		recs, _ := feedStream(t, reg, decode, s.evs, rng)
		dissecttest.CheckTiling(t, recs, s.size, dirOf)
		checkRecords(t, recs, s.wants, decode)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func setPositionsPayload(a, b, c, d, e uint64) []byte {
	return cat(pvar(1, a), pvar(2, b), pvar(3, c), pvar(4, d), pvar(5, e))
}

var (
	vGetSettingsReq = h("fd ba dc 01 50 b4 11 ff 04 00 00 ab")
	vBadPerform     = h("fd ba dc 01 50 b4 11 ff 09 05 00 ff ff ff ff ff b6")
	vBadSetSettings = h("fd ba dc 01 50 b4 11 ff 05 02 00 ab cd 8a")
	vSetPositions   = h("fd ba dc 01 50 b4 11 ff 0b 0a 00 08 0a 10 14 18 1e 20 28 28 32 45")
	vACK            = h("fd ba dc 01 50 b4 11 ff 01 00 00 6b")
	vERRStarted     = h("fd ba dc 01 50 b4 11 ff 02 1b 00 0a 19 54 65 6c 65 6d 65 74 72 79 20 61 6c 72 65 61 64 79 20 73 74 61 72 74 65 64 dd")
	garbage10       = h("fb ba dc fa ad bd 23 aa d1 32")
	garbage8        = h("12 db fb aa f4 cb 34 15")
	badSFD          = h("fd ba dc 01 50 b4 11 ac")
)

func resp(code int64, crc byte, crcOK bool, payload dissect.Value, reqCode int64, latency float64) []kv {
	f := []kv{{"code", i64(code)}, {"role", str("response")}, {"crc", i64(int64(crc))}, {"crc_ok", dissect.Bool(crcOK)}}
	if crcOK {
		f = append(f, kv{"crc_scope", str(scopeHeader)})
	}
	return append(f, kv{"payload", payload}, kv{"schema", str("v2")}, kv{"request_code", i64(reqCode)}, kv{"latency_ms", dissect.Float(latency)})
}

// TestStreamVectors runs the §1.9 frames, garbage and broken delimiters
// through dissect.Stream, with replies from the device.
func TestStreamVectors(t *testing.T) {
	var s script
	settings := frame(codeGetSettings, cat(pvar(1, 1), pvar(3, 1)))
	s.add(0, t0, skip(garbage8, "malformed at offset 0: no start-of-frame delimiter: byte 0 is 0x12"),
		msg(vGetSettingsReq, TypeGetSettings, nil, nil))
	s.add(1, t0.Add(ms(5)), msg(settings, TypeGetSettings, nil,
		resp(4, settings[len(settings)-1], true, obj(kv{"enable_emg", dissect.Bool(true)}, kv{"enable_gyro", dissect.Bool(true)}), 4, 5)))
	s.add(0, t0.Add(time.Second), skip(garbage10, "malformed at offset 20: no start-of-frame delimiter: byte 0 is 0xfb"),
		msg(vBadPerform, TypePerformGestureId, []string{"crc 0xb6 on the wire, 0xc6 computed", "payload of 5 bytes does not parse as protobuf"}, nil))
	s.add(1, t0.Add(time.Second+ms(20)), msg(vACK, TypeACK, nil, resp(1, 0x6b, true, obj(), 9, 20)))
	s.add(0, t0.Add(2*time.Second), skip(badSFD, "malformed at offset 54: no start-of-frame delimiter: byte 7 is 0xac"),
		msg(vBadSetSettings, TypeSetSettings, []string{"crc 0x8a on the wire, 0x23 computed", "does not parse as protobuf"}, nil))
	s.add(1, t0.Add(2*time.Second+ms(7.5)), msg(vERRStarted, TypeERR, nil, resp(2, 0xdd, true, obj(kv{"message", str("Telemetry already started")}), 5, 7.5)))
	s.add(0, t0.Add(3*time.Second), msg(vSetPositions, TypeSetPositions, nil, nil))
	s.add(1, t0.Add(3*time.Second+ms(3)), msg(vACK, TypeACK, nil, resp(1, 0x6b, true, obj(), 11, 3)))
	s.add(1, t0.Add(3500*time.Millisecond), msg(frame(codeTelemetry, telemetryV1), TypeTelemetry, nil, nil))
	s.end(t0.Add(4 * time.Second))
	s.run(t, Options{})
}

// TestBadCRCRule checks both sides of the rule for frames whose CRC does
// not match: implausible frames are resynchronised over, plausible ones are
// decoded with crc_ok false.
func TestBadCRCRule(t *testing.T) {
	tel := cat(pvar(1, 1), pvar(6, 300), pvar(8, 90), pvar(9, 10))
	good := frame(codeTelemetry, tel)
	goodWant := msg(good, TypeTelemetry, nil, []kv{{"code", i64(3)}, {"role", str("telemetry")}, {"crc", i64(int64(good[len(good)-1]))}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
		{"payload", obj(kv{"emg_status", str("MODULE_STATUS_WORK")}, kv{"emg", i64(300)}, kv{"power", i64(90)}, kv{"pointer_finger_position", i64(10)})},
		{"schema", str("v2")}})

	// A frame cut short: its size runs over the next frame's SFD.
	cut := good[:13]
	if claimed := cat(cut, good)[:len(good)]; crc8(claimed[8:len(claimed)-1]) == claimed[len(claimed)-1] {
		t.Fatal("test construction: the cut frame has a valid CRC")
	}
	// A frame 3 bytes short: it ends with the first 3 bytes of the next SFD.
	short := good[:len(good)-3]
	if claimed := cat(short, good)[:len(good)]; crc8(claimed[8:len(claimed)-1]) == claimed[len(claimed)-1] {
		t.Fatal("test construction: the short frame has a valid CRC")
	}
	bad := badFrame(codeTelemetry, tel)
	badACK := badFrame(codeACK, nil)
	// An ERR whose message holds the SFD, with a valid CRC: framed by size.
	sfdInside := frame(codeERR, pstr(1, "A\xfd\xba\xdc\x01\x50\xb4\x11\xffB"))

	var s script
	s.add(1, t0,
		skip(badFrame(0x20, nil), "code 32 is not defined; resynchronising"),
		goodWant,
		skip(badFrame(codeSetPositions, setPositionsPayload(1, 2, 3, 4, 5)), "code 11 (SetPositions) is not sent by the device"),
		goodWant,
		skip(badFrame(codeACK, h("08 01")), "code 1 (ACK) from the device carries no payload"),
		goodWant,
		skip(badFrame(codeEmpty, nil), "code 0 (Empty) must never appear"),
		goodWant,
		skip(cut, "another start-of-frame delimiter begins 13 bytes into the frame"),
		goodWant,
		skip(short, "the frame ends with the first 3 bytes of a start-of-frame delimiter"),
		goodWant,
		msg(bad, TypeTelemetry, []string{fmt.Sprintf("crc 0x%02x on the wire, 0x%02x computed", bad[len(bad)-1], good[len(good)-1])},
			[]kv{{"code", i64(3)}, {"role", str("telemetry")}, {"crc", i64(int64(bad[len(bad)-1]))}, {"crc_ok", dissect.Bool(false)},
				{"payload", obj(kv{"emg_status", str("MODULE_STATUS_WORK")}, kv{"emg", i64(300)}, kv{"power", i64(90)}, kv{"pointer_finger_position", i64(10)})},
				{"schema", str("v2")}}),
		msg(badACK, TypeACK, []string{fmt.Sprintf("crc 0x%02x on the wire, 0x6b computed", badACK[len(badACK)-1]), noRequest}, nil),
		msg(sfdInside, TypeERR, []string{noRequest, "errors.Error.message: string is not valid UTF-8"},
			[]kv{{"code", i64(2)}, {"role", str("response")}, {"crc", i64(int64(sfdInside[len(sfdInside)-1]))}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
				{"payload", obj(kv{"message", str("A\xfd\xba\xdc\x01\x50\xb4\x11\xffB")})}, {"schema", str("v2")}}),
		goodWant,
	)
	// Host side: the two §1.9 frames with a wrong CRC are plausible requests.
	// Two implausible frames in a row make one skipped run, with the reason
	// of the first; the second's is checked alone below.
	s.add(0, t0, skip(cat(badFrame(codeTelemetry, nil), badFrame(codeGetSettings, h("08 01"))), "code 3 (Telemetry) is not sent by the host"),
		msg(vBadPerform, TypePerformGestureId, []string{"crc 0xb6 on the wire, 0xc6 computed", "does not parse as protobuf"}, nil))
	s.add(1, t0.Add(ms(1)), msg(vACK, TypeACK, nil, nil))
	s.add(0, t0.Add(ms(2)), skip(badFrame(codeGetSettings, h("08 01")), "code 4 (GetSettings) from the host carries no payload"),
		msg(vBadSetSettings, TypeSetSettings, []string{"crc 0x8a on the wire, 0x23 computed", "does not parse as protobuf"}, nil))
	s.end(t0.Add(time.Second))
	s.run(t, Options{})
}

// TestMatching covers request/response matching: latency, the
// GetMioPatterns quirk, two requests in flight, a reply with no request and
// a request left unanswered.
func TestMatching(t *testing.T) {
	patterns := cat(pbytes(1, cat(pvar(1, 5), pbytes(2, pstr(1, "g1")))), pbytes(1, cat(pvar(1, 6), pbytes(2, pstr(1, "g2")))))
	quirk := frame(codeGetTelemetry, patterns)
	getTel := frame(codeGetTelemetry, pbytes(1, cat(pvar(1, 1), pvar(8, 55))))
	errNotStarted := frame(codeERR, pstr(1, "Telemetry not started"))
	tel := frame(codeTelemetry, cat(pvar(1, 1)))
	getSettingsResp := frame(codeGetSettings, pvar(2, 1))

	var s script
	s.add(0, t0, msg(frame(codeGetMioPatterns, nil), TypeGetMioPatterns, nil, nil))
	s.add(1, t0.Add(ms(40)), msg(quirk, TypeGetTelemetry,
		[]string{"GetMioPatterns (16) answered with type 13 (GetTelemetry): a known device quirk; the payload is decoded as patterns.GetMioPatterns"},
		resp(13, quirk[len(quirk)-1], true, obj(kv{"patterns", arr(obj(kv{"pattern", i64(5)}, kv{"gesture_id", str("g1")}), obj(kv{"pattern", i64(6)}, kv{"gesture_id", str("g2")}))}), 16, 40)))
	s.add(0, t0.Add(time.Second), msg(frame(codeGetTelemetry, nil), TypeGetTelemetry, nil, nil))
	s.add(1, t0.Add(time.Second+ms(15)), msg(getTel, TypeGetTelemetry, nil,
		resp(13, getTel[len(getTel)-1], true, obj(kv{"telemetry", obj(kv{"emg_status", str("MODULE_STATUS_WORK")}, kv{"power", i64(55)})}), 13, 15)))
	s.add(0, t0.Add(2*time.Second), msg(vSetPositions, TypeSetPositions, nil, nil))
	s.add(0, t0.Add(2*time.Second+ms(1)), msg(frame(codeStopTelemetry, nil), TypeStopTelemetry,
		[]string{"request sent while SetPositions at offset 24 is still in flight"}, nil))
	s.add(1, t0.Add(2*time.Second+ms(30)), msg(vACK, TypeACK, nil, resp(1, 0x6b, true, obj(), 11, 30)))
	s.add(1, t0.Add(2*time.Second+ms(31)), msg(errNotStarted, TypeERR, nil,
		resp(2, errNotStarted[len(errNotStarted)-1], true, obj(kv{"message", str("Telemetry not started")}), 15, 30)))
	s.add(1, t0.Add(3*time.Second), msg(vACK, TypeACK, []string{noRequest}, nil))
	s.add(0, t0.Add(4*time.Second), msg(vGetSettingsReq, TypeGetSettings, nil, nil))
	s.add(1, t0.Add(14*time.Second+ms(1)), msg(tel, TypeTelemetry, []string{"request GetSettings at offset 58 got no response within 10s"}, nil))
	s.add(1, t0.Add(14*time.Second+ms(2)), msg(getSettingsResp, TypeGetSettings, []string{noRequest}, nil))
	// A reply that does not fit the request in flight is not matched.
	s.add(0, t0.Add(20*time.Second), msg(frame(codeGetGestures, nil), TypeGetGestures, nil, nil))
	s.add(1, t0.Add(20*time.Second+ms(5)), msg(getSettingsResp, TypeGetSettings,
		[]string{"response GetSettings does not answer the request in flight (GetGestures at offset 70)"}, nil))
	s.add(1, t0.Add(20*time.Second+ms(6)), msg(frame(codeGetGestures, nil), TypeGetGestures, nil, nil))
	s.end(t0.Add(21 * time.Second))
	s.run(t, Options{})
}

// TestGap checks the resynchronisation after bytes lost in the middle of a
// frame, and a frame cut by the end of the stream.
func TestGap(t *testing.T) {
	tel := frame(codeTelemetry, telemetryV1)
	var s script
	// The first 30 bytes of a frame, then 10 bytes lost: the 30 bytes are
	// reported when the gap comes.
	s.add(1, t0, msg(tel, TypeTelemetry, nil, nil), skip(tel[:30], "incomplete message before a gap"))
	s.gap(1, t0, 10)
	s.add(1, t0, skip(tel[40:], "bytes passed over while resynchronising"), msg(tel, TypeTelemetry, nil, nil), skip(tel[:50], "incomplete message at end of stream"))
	s.end(t0)
	s.run(t, Options{})
}

// TestUnansweredAtEnd checks the end-of-stream note of a request never
// answered.
func TestUnansweredAtEnd(t *testing.T) {
	s := newSession(t, Options{}, true)
	if _, err := s.parse(0, t0, vSetPositions); err != nil {
		t.Fatal(err)
	}
	p := s.P.(*parser)
	got := p.unanswered()
	if len(got) != 1 || got[0] != "handcontrol: stream 1: request SetPositions at offset 0 was never answered" {
		t.Fatalf("unanswered = %q", got)
	}
	p.End(&s.Ctx)
	if got := p.unanswered(); len(got) != 0 {
		t.Fatalf("after End: %q", got)
	}
}
