package deltarobot_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
)

// Expected values below are worked out by hand from the spec and
// protocols.md §4 (see the vectors in helpers_test.go), not pasted from the
// decoder's output.

type parseCase struct {
	name    string
	fresh   bool // a new parser; otherwise magic+version were seen first
	in      []byte
	n       int    // bytes consumed, or the total with ErrNeedMore
	code    string // "" success, "more" ErrNeedMore, else the *dissect.Error code
	typ     string
	fields  []kv
	warn    []string
	summary string
}

var parseCases = []parseCase{
	// §4.3 vectors and the spec example.
	{name: "version 1 (spec example)", in: vVersion, n: 6, typ: "protocol_version", fields: []kv{{"version", dissect.Uint(1)}}},
	{name: "magic", in: vMagic, n: 10, typ: "protocol_magic", fields: []kv{{"magic", dissect.Str("DeltaRVr")}}},
	{name: "ping", in: vPing, n: 10, typ: "ping", fields: []kv{{"id", dissect.Uint(0x0123456789abcdef)}, {"id_hex", dissect.Str("0x0123456789abcdef")}}, summary: "id=0x0123456789abcdef"},
	{name: "pong without ping", in: vPong, n: 10, typ: "pong", fields: []kv{{"id", dissect.Uint(0x0123456789abcdef)}, {"id_hex", dissect.Str("0x0123456789abcdef")}}, summary: "id=0x0123456789abcdef"},
	// An id above 2^53 (jq 1.6 and JavaScript round it; id_hex is exact),
	// and a small one (id_hex keeps its 16 digits).
	{name: "ping above 2^53", in: h("04 30 94 ce 55 26 3d 36 32 98"), n: 10, typ: "ping", fields: []kv{{"id", dissect.Uint(10966887678864641684)}, {"id_hex", dissect.Str("0x9832363d2655ce94")}}, summary: "id=0x9832363d2655ce94"},
	{name: "pong id 1", in: h("05 30 01 00 00 00 00 00 00 00"), n: 10, typ: "pong", fields: []kv{{"id", dissect.Uint(1)}, {"id_hex", dissect.Str("0x0000000000000001")}}, summary: "id=0x0000000000000001"},
	{name: "eot empty", in: vEOTEmpty, n: 6, typ: "end_of_transmission", fields: []kv{{"reason", dissect.Str("")}}},
	{name: "eot bye", in: vEOTBye, n: 9, typ: "end_of_transmission", fields: []kv{{"reason", dissect.Str("bye")}}},
	{name: "position 1 2 3 0", in: vPosition, n: 18, typ: "actuator_position", fields: vec(1, 2, 3, 0)},
	{name: "curve 2 points", in: vCurve, n: 30, typ: "curve", fields: points(point(0, 0, 0), point(1, 0.5, -1)), summary: "points=2"},
	{name: "direction", in: vDirection, n: 18, typ: "current_direction", fields: vec(-2, 0.25, 1, 7)},
	{name: "desired", in: vDesired, n: 18, typ: "desired_direction", fields: vec(0.5, -1, 0, 0)},
	{name: "position with trailing bytes", in: cat(vPosition, vPing), n: 18, typ: "actuator_position", fields: vec(1, 2, 3, 0)},

	// Warnings.
	{name: "version 2", in: h("02 20 02 00 00 00"), n: 6, typ: "protocol_version", fields: []kv{{"version", dissect.Uint(2)}}, warn: []string{"version 2"}},
	{name: "magic DeltaRVX", in: h("01 30 44 65 6c 74 61 52 56 58"), n: 10, typ: "protocol_magic", fields: []kv{{"magic", dissect.Str("DeltaRVX")}}, warn: []string{"not \"DeltaRVr\""}},
	{name: "magic invalid utf8", in: h("01 30 44 65 6c 74 61 52 56 ff"), n: 10, typ: "protocol_magic", fields: []kv{{"magic", dissect.Str("DeltaRV\uFFFD")}}, warn: []string{"not \"DeltaRVr\""}},
	{name: "eot utf8 reason", in: h("06 f0 02 00 00 00 c3 a9"), n: 8, typ: "end_of_transmission", fields: []kv{{"reason", dissect.Str("é")}}, warn: []string{"not ASCII"}},
	{name: "eot invalid utf8 reason", in: h("06 f0 03 00 00 00 61 ff 62"), n: 9, typ: "end_of_transmission", fields: []kv{{"reason", dissect.Str("a\uFFFDb")}}, warn: []string{"not ASCII"}},
	{name: "curve 14 bytes", in: h("09 f0 0e 00 00 00 00 00 80 3f 00 00 00 3f 00 00 80 bf aa bb"), n: 20, typ: "curve", fields: points(point(1, 0.5, -1)), warn: []string{"2 trailing bytes (aabb)"}, summary: "points=1"},
	{name: "curve 5 bytes", in: h("09 f0 05 00 00 00 01 02 03 04 05"), n: 11, typ: "curve", fields: points(), warn: []string{"5 trailing bytes (0102030405)"}, summary: "points=0"},
	{name: "curve empty", in: h("09 f0 00 00 00 00"), n: 6, typ: "curve", fields: points(), summary: "points=0"},

	// Every size id, on an unknown type 0x00a.
	{name: "size 0x0", in: h("0a 00 7f"), n: 3, typ: "unknown", fields: unk(0x000a, "7f"), warn: []string{"unknown message id 0x000a"}},
	{name: "size 0x1", in: h("0a 10 01 02"), n: 4, typ: "unknown", fields: unk(0x100a, "0102"), warn: []string{"unknown message id 0x100a"}},
	{name: "size 0x2", in: h("0a 20 01 02 03 04"), n: 6, typ: "unknown", fields: unk(0x200a, "01020304"), warn: []string{"unknown message id 0x200a"}},
	{name: "size 0x3", in: h("0a 30 01 02 03 04 05 06 07 08"), n: 10, typ: "unknown", fields: unk(0x300a, "0102030405060708"), warn: []string{"unknown"}},
	{name: "size 0x4", in: h("0a 40 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f"), n: 18, typ: "unknown", fields: unk(0x400a, "000102030405060708090a0b0c0d0e0f"), warn: []string{"unknown"}},
	{name: "size 0xf", in: h("0a f0 03 00 00 00 61 62 63"), n: 9, typ: "unknown", fields: unk(0xf00a, "616263"), warn: []string{"unknown message id 0xf00a"}},
	{name: "size 0xf empty", in: h("0a f0 00 00 00 00"), n: 6, typ: "unknown", fields: unk(0xf00a, ""), warn: []string{"unknown"}},
	{name: "size 0x5", in: h("0a 50 00 00"), code: "bad_size_id"},
	{name: "size 0x6", in: h("0a 60"), code: "bad_size_id"},
	{name: "size 0x7", in: h("03 70 00 00"), code: "bad_size_id"},
	{name: "size 0x8", in: h("0a 80"), code: "bad_size_id"},
	{name: "size 0x9", in: h("0a 90"), code: "bad_size_id"},
	{name: "size 0xa", in: h("0a a0"), code: "bad_size_id"},
	{name: "size 0xb", in: h("0a b0"), code: "bad_size_id"},
	{name: "size 0xc", in: h("0a c0"), code: "bad_size_id"},
	{name: "size 0xd", in: h("0a d0"), code: "bad_size_id"},
	{name: "size 0xe", in: h("0a e0 ff ff ff ff"), code: "bad_size_id"},
	{name: "size 0xe fresh", fresh: true, in: h("01 e0"), code: "bad_size_id"},

	// Mismatched and reserved ids.
	{name: "magic type with size 0x2", in: h("01 20 44 65 6c 74"), n: 6, typ: "unknown", fields: unk(0x2001, "44656c74"), warn: []string{"type 0x001 is protocol_magic with id 0x3001; size id 0x2 does not match"}},
	{name: "position type with size 0xf", in: h("03 f0 02 00 00 00 aa bb"), n: 8, typ: "unknown", fields: unk(0xf003, "aabb"), warn: []string{"type 0x003 is actuator_position"}},
	{name: "curve type with size 0x4", in: h("09 40 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f"), n: 18, typ: "unknown", fields: unk(0x4009, "000102030405060708090a0b0c0d0e0f"), warn: []string{"type 0x009 is curve"}},
	{name: "type 0 size 0x3", in: h("00 30 00 00 00 00 00 00 00 00"), n: 10, typ: "unknown", fields: unk(0x3000, "0000000000000000"), warn: []string{"type 0x000 is reserved"}},
	{name: "id 0", in: h("00 00 00"), n: 3, typ: "unknown", fields: unk(0, "00"), warn: []string{"type 0x000 is reserved"}},

	// Lengths.
	{name: "var 1 MiB", in: h("09 f0 00 00 10 00 00 00"), n: 6 + 1<<20, code: "more"},
	{name: "var 1 MiB + 1", in: h("09 f0 01 00 10 00 00 00"), code: "implausible_length"},
	{name: "var max", in: h("06 f0 ff ff ff 7f"), code: "implausible_length"},
	{name: "var header cut", in: h("06 f0 03 00 00"), n: 0, code: "more"},
	{name: "one byte", in: h("03"), n: 0, code: "more"},
	{name: "one unknown byte trusted", in: h("ff"), n: 0, code: "more"},

	// A fresh direction: its first messages must be known.
	{name: "fresh version", fresh: true, in: vVersion, n: 6, typ: "protocol_version", fields: []kv{{"version", dissect.Uint(1)}}, warn: []string{"stream does not begin with magic + version: first message is protocol_version"}},
	{name: "fresh magic", fresh: true, in: vMagic, n: 10, typ: "protocol_magic", fields: []kv{{"magic", dissect.Str("DeltaRVr")}}},
	{name: "fresh unknown", fresh: true, in: h("0a 20 01 02 03 04"), code: "no_sync"},
	{name: "fresh mismatched", fresh: true, in: h("01 20 44 65 6c 74"), code: "no_sync"},
	{name: "fresh var over 1 MiB", fresh: true, in: h("06 f0 01 00 10 00"), code: "no_sync"},
	{name: "fresh var 1 MiB", fresh: true, in: h("09 f0 00 00 10 00"), n: 6 + 1<<20, code: "more"},
	{name: "fresh one unknown byte", fresh: true, in: h("ff"), n: 0, code: "more"},
	{name: "fresh one known byte", fresh: true, in: h("09"), n: 0, code: "more"},
}

func unk(id int64, data string) []kv {
	return []kv{{"message_id", dissect.Int(id)}, {"data", dissect.Bytes(h(data))}}
}

func runParseCase(t *testing.T, tc parseCase, decode bool) {
	t.Helper()
	s := newSession(decode)
	if !tc.fresh {
		s.prime(t)
	}
	n, err := s.Parse(0, tc.in)
	var de *dissect.Error
	switch tc.code {
	case "":
		if err != nil || n != tc.n {
			t.Fatalf("Parse = %d, %v; want %d, nil", n, err, tc.n)
		}
	case "more":
		if !errors.Is(err, dissect.ErrNeedMore) || n != tc.n {
			t.Fatalf("Parse = %d, %v; want %d, ErrNeedMore", n, err, tc.n)
		}
		return
	default:
		if !errors.As(err, &de) || de.Code != tc.code || n != 0 || !errors.Is(err, dissect.ErrMalformed) {
			t.Fatalf("Parse = %d, %v; want 0 and code %q", n, err, tc.code)
		}
		if de.Proto != "deltarobot" || de.Offset < 0 || de.Offset >= int64(len(tc.in)) {
			t.Errorf("error %+v: bad proto or offset", de)
		}
		return
	}
	if s.Rec.Type != tc.typ {
		t.Errorf("type %q, want %q", s.Rec.Type, tc.typ)
	}
	checkWarnings(t, s.Rec.Warnings, tc.warn)
	if !decode {
		if len(s.Rec.Fields) != 0 || s.Rec.Summary != "" {
			t.Errorf("decode off: fields %v, summary %q", s.Rec.Fields, s.Rec.Summary)
		}
		return
	}
	checkFields(t, s.Rec.Fields, tc.fields)
	if tc.typ == "unknown" {
		// unk(id, data) gives the fields; the summary names both.
		tc.summary = fmt.Sprintf("id=0x%04x len=%d", tc.fields[0].v.Int(), len(tc.fields[1].v.Raw()))
	}
	if s.Rec.Summary != tc.summary {
		t.Errorf("summary %q, want %q", s.Rec.Summary, tc.summary)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) { runParseCase(t, tc, true) })
		t.Run(tc.name+"/nodecode", func(t *testing.T) { runParseCase(t, tc, false) })
	}
}

func TestParseUnknownSummary(t *testing.T) {
	s := newSession(true)
	s.prime(t)
	if _, err := s.Parse(0, h("0a f0 03 00 00 00 61 62 63")); err != nil {
		t.Fatal(err)
	}
	if s.Rec.Summary != "id=0xf00a len=3" {
		t.Errorf("summary %q", s.Rec.Summary)
	}
}

// valid is every valid message used by the truncation test, with the number
// of bytes after which its total length is known.
var valid = []struct {
	name string
	b    []byte
	hdr  int
}{
	{"magic", vMagic, 2}, {"version", vVersion, 2}, {"ping", vPing, 2}, {"pong", vPong, 2},
	{"eot empty", vEOTEmpty, 6}, {"eot bye", vEOTBye, 6}, {"position", vPosition, 2},
	{"curve", vCurve, 6}, {"direction", vDirection, 2}, {"desired", vDesired, 2},
	{"unknown size 4", h("0a 40 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f"), 2},
	{"unknown var", h("0a f0 03 00 00 00 61 62 63"), 6},
}

// TestTruncated cuts every valid message at every byte: Parse must ask for
// more (with the total once the header is complete), describe no message and
// change no state.
func TestTruncated(t *testing.T) {
	for _, v := range valid {
		for _, fresh := range []bool{false, true} {
			if fresh && v.name[:4] == "unkn" {
				continue // an unknown id is not a boundary in a fresh direction
			}
			s := newSession(true)
			if !fresh {
				s.prime(t)
			}
			for k := 1; k < len(v.b); k++ {
				n, err := s.Parse(1, v.b[:k])
				want := 0
				if k >= v.hdr {
					want = len(v.b)
				}
				if !errors.Is(err, dissect.ErrNeedMore) || n != want {
					t.Fatalf("%s fresh=%v cut at %d: Parse = %d, %v; want %d, ErrNeedMore", v.name, fresh, k, n, err, want)
				}
				if s.Rec.Type != "" || len(s.Rec.Fields) != 0 || len(s.Rec.Warnings) != 0 {
					t.Fatalf("%s cut at %d: record filled: %+v", v.name, k, s.Rec)
				}
			}
			// The state is unchanged: a fresh direction still sees its
			// first message, and the whole message parses.
			n, err := s.Parse(1, v.b)
			if n != len(v.b) || err != nil {
				t.Fatalf("%s whole: Parse = %d, %v", v.name, n, err)
			}
			hs := slices.ContainsFunc(s.Rec.Warnings, func(w string) bool {
				return strings.HasPrefix(w, "stream does not begin with magic + version")
			})
			if hs != (fresh && v.name != "magic") {
				t.Errorf("%s fresh=%v: warnings %q", v.name, fresh, s.Rec.Warnings)
			}
		}
	}
}

func TestHandshake(t *testing.T) {
	const first = "stream does not begin with magic + version: first message is "
	const second = "stream does not begin with magic + version: second message is "
	s := newSession(true)
	steps := []struct {
		dir  dissect.Dir
		in   []byte
		warn []string
	}{
		{0, vMagic, nil},
		{1, vVersion, []string{first + "protocol_version, not protocol_magic"}},
		{0, vVersion, nil},
		{1, vMagic, []string{second + "protocol_magic, not protocol_version"}},
		{0, vPosition, nil},
		{1, vPosition, nil},
		{1, vMagic, nil}, // a later magic is no violation
	}
	for i, st := range steps {
		if n, err := s.Parse(st.dir, st.in); n != len(st.in) || err != nil {
			t.Fatalf("step %d: Parse = %d, %v", i, n, err)
		}
		checkWarnings(t, s.Rec.Warnings, st.warn)
	}

	// Magic then a vector: the second record carries it.
	s = newSession(false)
	for i, st := range []struct {
		in   []byte
		warn []string
	}{
		{vMagic, nil},
		{vDirection, []string{second + "current_direction"}},
		{vDesired, nil},
	} {
		if n, err := s.Parse(0, st.in); n != len(st.in) || err != nil {
			t.Fatalf("step %d: Parse = %d, %v", i, n, err)
		}
		checkWarnings(t, s.Rec.Warnings, st.warn)
	}

	// Neither first nor second: both carry it, and the first message of the
	// other direction too.
	s = newSession(true)
	for i, st := range []struct {
		dir  dissect.Dir
		in   []byte
		warn []string
	}{
		{0, vPosition, []string{first + "actuator_position"}},
		{0, vPing, []string{second + "ping"}},
		{0, vPosition, nil},
		{1, vPong, []string{first + "pong"}},
	} {
		if n, err := s.Parse(st.dir, st.in); n != len(st.in) || err != nil {
			t.Fatalf("step %d: Parse = %d, %v", i, n, err)
		}
		checkWarnings(t, s.Rec.Warnings, st.warn)
	}
}

// ping returns a ping or pong (code 04 or 05) with a one-byte id.
func pingID(code byte, id byte) []byte {
	b := h("04 30 00 00 00 00 00 00 00 00")
	b[0], b[2] = code, id
	return b
}

func TestRTT(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	s := newSession(true)
	s.prime(t)
	pong := func(dir dissect.Dir, at time.Time, b []byte) (float64, bool) {
		t.Helper()
		s.Ctx.Time = at
		if n, err := s.Parse(dir, b); n != len(b) || err != nil || s.Rec.Type != "pong" {
			t.Fatalf("pong: Parse = %d, %v, %q", n, err, s.Rec.Type)
		}
		v, ok := s.Rec.Fields.Get("rtt_ms")
		if ok && v.Kind() != dissect.KindFloat {
			t.Fatalf("rtt_ms kind %v", v.Kind())
		}
		return v.Float(), ok
	}
	s.Ctx.Time = t0
	if _, err := s.Parse(0, vPing); err != nil {
		t.Fatal(err)
	}
	// Same direction: no match.
	if _, ok := pong(0, t0.Add(time.Millisecond), vPong); ok {
		t.Error("pong in the ping's own direction matched")
	}
	if rtt, ok := pong(1, t0.Add(12500*time.Microsecond), vPong); !ok || rtt != 12.5 {
		t.Errorf("rtt = %v, %v; want 12.5", rtt, ok)
	}
	// The table's summary: id_hex, then rtt_ms as the fields would show it.
	if s.Rec.Summary != "id=0x0123456789abcdef rtt_ms=12.5" {
		t.Errorf("pong summary %q", s.Rec.Summary)
	}
	// The ping is answered: a second pong does not match.
	if _, ok := pong(1, t0.Add(20*time.Millisecond), vPong); ok {
		t.Error("answered ping matched twice")
	}

	// 65 pings from dir 1: the oldest is evicted.
	for i := 1; i <= 65; i++ {
		s.Ctx.Time = t0.Add(time.Duration(i) * time.Millisecond)
		if _, err := s.Parse(1, pingID(0x04, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	at := t0.Add(100 * time.Millisecond)
	if _, ok := pong(0, at, pingID(0x05, 1)); ok {
		t.Error("evicted ping 1 matched")
	}
	if rtt, ok := pong(0, at, pingID(0x05, 65)); !ok || rtt != 35 {
		t.Errorf("ping 65: rtt = %v, %v; want 35", rtt, ok)
	}
	if rtt, ok := pong(0, at, pingID(0x05, 2)); !ok || rtt != 98 {
		t.Errorf("ping 2: rtt = %v, %v; want 98", rtt, ok)
	}

	// Decode off still answers the ping: a later pong does not match.
	s.Ctx.Decode = false
	if _, err := s.Parse(0, pingID(0x05, 3)); err != nil {
		t.Fatal(err)
	}
	s.Ctx.Decode = true
	if _, ok := pong(0, at, pingID(0x05, 3)); ok {
		t.Error("ping 3 answered with decode off matched again")
	}
	if rtt, ok := pong(0, at, pingID(0x05, 4)); !ok || rtt != 96 {
		t.Errorf("ping 4: rtt = %v, %v; want 96", rtt, ok)
	}
}

func TestDetect(t *testing.T) {
	p := deltarobot.New()
	cases := []struct {
		name string
		in   []byte
		want dissect.Verdict
	}{
		{"magic", vMagic, dissect.Yes},
		{"magic then version", cat(vMagic, vVersion), dissect.Yes},
		{"prefix 3", h("01 30 44"), dissect.Maybe},
		{"prefix 9", h("01 30 44 65 6c 74 61 52 56"), dissect.Maybe},
		{"prefix 1", h("01"), dissect.Maybe},
		{"wrong second byte", h("01 31"), dissect.No},
		{"wrong magic", h("01 30 44 65 6c 74 61 52 56 58"), dissect.No},
		{"version first", vVersion, dissect.No},
		{"position", vPosition, dissect.No},
	}
	for _, tc := range cases {
		for d := dissect.Dir(0); d < 2; d++ {
			if got := p.Detect(&dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}}, d, tc.in); got != tc.want {
				t.Errorf("%s dir %d: Detect = %v, want %v", tc.name, d, got, tc.want)
			}
		}
	}
}

func TestInfo(t *testing.T) {
	in := deltarobot.New().Info()
	if in.Name != "deltarobot" || in.Proto != "deltarobot" || in.Title == "" || in.Detection == "" {
		t.Errorf("info %+v", in)
	}
	if len(in.Ports) != 0 {
		t.Errorf("default ports %v: none is published", in.Ports)
	}
	if !slices.Equal(in.Transports, []dissect.Transport{dissect.TCP, dissect.Serial}) {
		t.Errorf("transports %v", in.Transports)
	}
	reg, err := dissect.NewRegistry(deltarobot.New())
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{"tcp.port==4000,deltarobot", "serial,deltarobot"} {
		if _, err := reg.ParseDecodeAs(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if _, err := reg.ParseDecodeAs("udp.port==4000,deltarobot"); err == nil {
		t.Error("udp accepted")
	}
}

// TestVarLenImplausible: a trusted direction does not take a length over
// 1 MiB (the limit Sync applies) at face value, up to the largest u32.
func TestVarLenImplausible(t *testing.T) {
	s := newSession(true)
	s.prime(t)
	n, err := s.Parse(0, h("06 f0 ff ff ff ff 00"))
	var e *dissect.Error
	if !errors.As(err, &e) || e.Code != "implausible_length" || n != 0 || !strings.Contains(e.Msg, "4294967295") {
		t.Errorf("Parse = %d, %v; want 0, implausible_length naming 4294967295", n, err)
	}
}

func TestCurveCap(t *testing.T) {
	// 20000 points of zeros: only the first 16384 are decoded, with a warning.
	in := cat(h("09 f0 80 a9 03 00"), make([]byte, 240000)) // 0x0003a980 = 240000
	s := newSession(true)
	s.prime(t)
	n, err := s.Parse(0, in)
	if n != len(in) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, []string{"20000 points, only the first 16384"})
	v, _ := s.Rec.Fields.Get("points")
	if len(v.Items()) != 16384 || s.Rec.Summary != "points=20000" {
		t.Errorf("points %d, summary %q", len(v.Items()), s.Rec.Summary)
	}
}
