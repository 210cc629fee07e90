package query

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

var t0 = time.Date(2026, 11, 21, 8, 8, 19, 479337000, time.UTC)

func deltaRecord() *dissect.Record {
	r := &dissect.Record{Time: t0, Proto: "deltarobot", Transport: dissect.TCP, Stream: 0,
		Src: "10.20.0.77:50514", Dst: "10.20.0.1:4000", Offset: 8, Length: 20, Type: "actuator_position"}
	r.Add("x", dissect.Float32(0.2))
	r.Add("y", dissect.Float32(-0.1))
	r.Add("z", dissect.Float32(-0.35))
	r.Add("u", dissect.Float32(0))
	return r
}

func vrpnRecord() *dissect.Record {
	r := &dissect.Record{Time: t0.Add(time.Second), Proto: "vrpn", Transport: dissect.TCP, Stream: 2,
		Src: "10.0.0.5:3883", Dst: "10.0.0.9:51000", Offset: 1000, Length: 96, Type: "vrpn_Tracker Pos_Quat"}
	r.Add("sender", dissect.Str("Tracker0"))
	r.Add("sent", dissect.Time(t0))
	r.Add("sensor", dissect.Int(1))
	r.Add("pos", dissect.Array([]dissect.Field{dissect.Elem(dissect.Float(0.5)), dissect.Elem(dissect.Float(-1.25)), dissect.Elem(dissect.Float(2))}))
	r.Add("quat", dissect.Object([]dissect.Field{{Key: "x", Value: dissect.Float(0)}, {Key: "y", Value: dissect.Float(0)},
		{Key: "z", Value: dissect.Float(0)}, {Key: "w", Value: dissect.Float(1)}}))
	return r
}

func handRecord() *dissect.Record {
	r := &dissect.Record{Time: t0.Add(2 * time.Second), Proto: "handcontrol", Transport: dissect.Serial, Stream: 5,
		Src: "/dev/ttyUSB0", Dst: "host", Offset: 40, Length: 14, Type: "ACK"}
	r.Add("request_code", dissect.Uint(0x21))
	r.Add("latency_ms", dissect.Float(12.5))
	r.Add("payload", dissect.Object([]dissect.Field{{Key: "status", Value: dissect.Str("ok")}, {Key: "battery", Value: dissect.Uint(87)}}))
	return r
}

// oddRecord holds values at the edges of their kinds.
func oddRecord() *dissect.Record {
	r := &dissect.Record{Time: t0, Proto: "roboid", Transport: dissect.UDP, Stream: 7, Type: "Pose"}
	r.Add("big", dissect.Uint(1<<63+5))
	r.Add("neg", dissect.Int(math.MinInt64))
	r.Add("nan", dissect.Float(math.NaN()))
	r.Add("negzero", dissect.Float(math.Copysign(0, -1)))
	r.Add("exact", dissect.Int(1<<53+1))
	r.Add("ok", dissect.Bool(true))
	r.Add("raw", dissect.Bytes([]byte{0x0a, 0x1b, 0xff}))
	r.Add("text", dissect.Str("say \"hi\"\n\tdone\x01"))
	r.Add("empty", dissect.Array(nil))
	r.Add("values", dissect.Array([]dissect.Field{
		dissect.Elem(dissect.Object([]dissect.Field{{Key: "semantics", Value: dissect.Str("position")}, {Key: "n", Value: dissect.Int(1)}})),
		dissect.Elem(dissect.Object([]dissect.Field{{Key: "semantics", Value: dissect.Str("orientation")}, {Key: "n", Value: dissect.Int(2)}})),
	}))
	return r
}

var records = map[string]*dissect.Record{"delta": deltaRecord(), "vrpn": vrpnRecord(), "hand": handRecord(), "odd": oddRecord()}

func known(proto, field string) bool {
	fields := map[string][]string{
		"deltarobot":  {"x", "y", "z", "u", "id"},
		"vrpn":        {"sender", "sent", "sensor", "pos", "quat"},
		"handcontrol": {"request_code", "latency_ms", "payload"},
		"roboid":      {"big", "neg", "nan", "negzero", "exact", "ok", "raw", "text", "empty", "values"},
		"neptune":     {"motor"},
	}
	fs, ok := fields[proto]
	if !ok || field == "" {
		return ok
	}
	for _, f := range fs {
		if f == field {
			return true
		}
	}
	return false
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want string // the records it matches, sorted: delta hand odd vrpn
	}{
		// Presence, protocols, record keys.
		{"deltarobot", "delta"},
		{"vrpn || handcontrol", "hand vrpn"},
		{"stream", "delta hand odd vrpn"},
		{"deltarobot.x", "delta"},
		{"deltarobot.id", ""},
		{"vrpn.pos[2]", "vrpn"},
		{"vrpn.pos[3]", ""},
		{"roboid.empty", "odd"},
		{"roboid.values.semantics", "odd"},
		{"handcontrol.payload.status", "hand"},
		{"handcontrol.payload.nosuch", ""},
		// Comparisons of record keys.
		{"stream == 0", "delta"},
		{"stream eq 2", "vrpn"},
		{"stream != 0", "hand odd vrpn"},
		{"stream ne 0", "hand odd vrpn"},
		{"stream > 2", "hand odd"},
		{"stream gt 2", "hand odd"},
		{"stream >= 2", "hand odd vrpn"},
		{"stream ge 5", "hand odd"},
		{"stream < 2", "delta"},
		{"stream lt 2", "delta"},
		{"stream <= 2", "delta vrpn"},
		{"stream le 0", "delta"},
		{"length == 96.0", "vrpn"},
		{"length < 96.5", "delta hand odd vrpn"},
		{"offset == 0x3e8", "vrpn"},
		{"stream > -1", "delta hand odd vrpn"},
		{"proto == vrpn", "vrpn"},
		{`proto == "vrpn"`, "vrpn"},
		{"type == ACK", "hand"},
		{`type == "vrpn_Tracker Pos_Quat"`, "vrpn"},
		{`type contains "Pos_"`, "vrpn"},
		{`type matches "(?i)^ack$"`, "hand"},
		{`type ~ "^actuator_"`, "delta"},
		{"transport == serial", "hand"},
		{"transport in {udp, serial}", "hand odd"},
		{`src == "10.20.0.77:50514"`, "delta"},
		{`dst contains ":4000"`, "delta"},
		{"src == dst", "odd"},
		{"src != dst", "delta hand vrpn"},
		{"stream == stream", "delta hand odd vrpn"},
		{"2 < stream", "hand odd"},
		{"2 <= stream", "hand odd vrpn"},
		{"0 == stream", "delta"},
		// Time: seconds since 1970 or RFC 3339.
		{`time == "2026-11-21T08:08:19.479337Z"`, "delta odd"},
		{`time >= "2026-11-21T08:08:20Z"`, "hand vrpn"},
		{`time > "2026-11-21T08:08:20.479337Z"`, "hand"},
		{"time < 1795248499.479337", ""},
		{"time <= 1795248499.479337", "delta odd"},
		{"time == 1795248499.479337", "delta odd"},
		{"time > 1795248499.4793369", "delta hand odd vrpn"},
		{"time > 1795248500", "hand vrpn"},
		{`vrpn.sent == "2026-11-21T08:08:19.479337000Z"`, "vrpn"},
		{"vrpn.sent < time", "vrpn"}, {"vrpn.sent == time", ""},
		{"vrpn.sent != time", "delta hand odd vrpn"},
		// Fields, numbers across kinds.
		{"deltarobot.x > 0.1", "delta"},
		{"deltarobot.x == 0.2", "delta"}, // a float32 compares at float32 precision
		{"deltarobot.y == -0.1", "delta"},
		{"deltarobot.u == 0", "delta"},
		{"deltarobot.u == -0.0", "delta"},
		{"deltarobot.x > deltarobot.y", "delta"},
		{"deltarobot.x < 1 && deltarobot.z < -0.3", "delta"},
		{"vrpn.sensor == 1.0", "vrpn"},
		{"vrpn.sensor in {0, 1}", "vrpn"},
		{"vrpn.sensor in {2..5}", ""},
		{"vrpn.sensor in {-3..1}", "vrpn"},
		{"vrpn.sensor not in {0, 2}", "delta hand odd vrpn"},
		{"vrpn.quat.w == 1", "vrpn"},
		{"vrpn.quat.w == true", ""},
		{"vrpn.sender == Tracker0", "vrpn"},
		{`vrpn.sender matches "^Track"`, "vrpn"},
		{"handcontrol.latency_ms >= 12.5", "hand"},
		{"handcontrol.latency_ms > 12", "hand"},
		{"handcontrol.payload.battery in {80..90}", "hand"},
		{"handcontrol.payload.status == ok", "hand"},
		{"handcontrol.request_code == 0x21", "hand"},
		{"handcontrol.request_code == 33.0", "hand"},
		{"handcontrol.request_code > -1", "hand"},
		{"handcontrol.request_code == \"33\"", ""}, // a runtime kind mismatch is false
		// Any-element semantics.
		{"vrpn.pos == 2", "vrpn"},
		{"vrpn.pos > 1.5", "vrpn"},
		{"vrpn.pos < -2", ""},
		{"vrpn.pos[1] == -1.25", "vrpn"},
		{"vrpn.pos != 2", "delta hand odd"}, // != is !(==): an element equals 2
		{"vrpn.pos !== 2", "vrpn"},          // !== is "some element differs"
		{"vrpn.pos != 7", "delta hand odd vrpn"},
		{"roboid.values.semantics == orientation", "odd"},
		{"roboid.values[0].semantics == orientation", ""},
		{"roboid.values.n > 1", "odd"},
		{"roboid.values.n == roboid.values.n", "odd"},
		{"roboid.values.semantics contains \"ient\"", "odd"},
		// Absent fields.
		{"deltarobot.x == 1 || vrpn.sensor == 1", "vrpn"},
		{"!(deltarobot.x == 1)", "delta hand odd vrpn"},
		{"handcontrol.payload.nosuch != 1", "delta hand odd vrpn"},
		{"handcontrol.payload.nosuch !== 1", ""},
		// Edges of numbers.
		{"roboid.big == 9223372036854775813", "odd"},
		{"roboid.big > 9223372036854775807", "odd"},
		{"roboid.big > 1", "odd"},
		{"roboid.big < -1", ""},
		{"roboid.big == 9223372036854775808.0", ""},
		{"roboid.big > 9223372036854775808.0", "odd"},
		{"roboid.neg == -9223372036854775808", "odd"},
		{"roboid.neg == -0x8000000000000000", "odd"},
		{"roboid.neg < -9223372036854775807", "odd"},
		{"roboid.neg < -1e300", ""},
		{"roboid.exact == 9007199254740993", "odd"},
		{"roboid.exact == 9007199254740992", ""},     // not via float64
		{"roboid.exact == 9007199254740992.0", ""},   // exact int/float comparison
		{"roboid.exact > 9007199254740992.0", "odd"}, //
		{"roboid.negzero == 0", "odd"},
		{"roboid.negzero == -0.0", "odd"},
		{"roboid.negzero >= 0", "odd"},
		{"roboid.nan == 0", ""},
		{"roboid.nan < 0 || roboid.nan >= 0", ""},
		{"roboid.nan != 0", "delta hand odd vrpn"},
		{"roboid.nan == roboid.nan", ""},
		{"roboid.nan in {0..1}", ""},
		{"roboid.ok", "odd"},
		{"roboid.ok == true", "odd"},
		{"roboid.ok != false", "delta hand odd vrpn"},
		{"roboid.ok == 1", ""},
		// Bytes: the hex of JSON.
		{`roboid.raw == "0a1bff"`, "odd"},
		{`roboid.raw == "0A:1B:FF"`, "odd"},
		{`roboid.raw > "0a1b"`, "odd"},
		{`roboid.raw contains "1bff"`, "odd"},
		{`roboid.raw contains "1b:ff"`, "odd"},
		{`roboid.raw contains "ff0a"`, ""},
		{`roboid.raw == "zz"`, ""},
		// Strings with escapes.
		{`roboid.text == "say \"hi\"\n\tdone\x01"`, "odd"},
		{`roboid.text contains "\"hi\""`, "odd"},
		{`roboid.text matches "(?s)hi.*done"`, "odd"},
		{`roboid.text matches "^done"`, ""},
		{`roboid.text < "t"`, "odd"},
		// Precedence and keyword forms.
		{"deltarobot || vrpn && stream == 0", "delta"},
		{"(deltarobot || vrpn) && stream == 0", "delta"},
		{"deltarobot or vrpn and stream == 2", "delta vrpn"},
		{"not deltarobot and not vrpn", "hand odd"},
		{"!deltarobot && !vrpn", "hand odd"},
		{"!!deltarobot", "delta"},
		{"not (deltarobot or vrpn)", "hand odd"},
		{"handcontrol && handcontrol.latency_ms > 10", "hand"},
		{"deltarobot && deltarobot.x > 0.1 && stream == 0", "delta"},
		{"stream in {0, 5}", "delta hand"},
		{"stream in {0..2, 7}", "delta odd vrpn"},
		{"type in {ACK, \"vrpn_Tracker Pos_Quat\"}", "hand vrpn"},
	} {
		f, err := Compile(tc.expr, known)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		var got []string
		for _, name := range []string{"delta", "hand", "odd", "vrpn"} {
			if f.Match(records[name]) {
				got = append(got, name)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: matches %q, want %q", tc.expr, g, tc.want)
		}
		// The canonical form compiles to a filter that matches the same.
		g, err := Compile(f.String(), known)
		if err != nil {
			t.Errorf("%s: String %q: %v", tc.expr, f.String(), err)
			continue
		}
		for name, r := range records {
			if f.Match(r) != g.Match(r) {
				t.Errorf("%s: String %q differs on %s", tc.expr, f.String(), name)
			}
		}
	}
}

func TestString(t *testing.T) {
	for _, tc := range [][2]string{
		{"a.b", "a.b"},
		{"type == ping", `type == "ping"`},
		{"stream eq 0x10 and not proto ne vrpn", `stream == 0x10 && !proto != "vrpn"`},
		{"(a || b) && c", "(a || b) && c"},
		{"a || (b && c)", "a || b && c"},
		{"a || (b || c)", "a || (b || c)"},
		{"!(a && b)", "!(a && b)"},
		{"x.y not in {1, 2..3, \"q\\x01\"}", `x.y not in {1, 2..3, "q\x01"}`},
		{`x.y ~ "a\\.b"`, `x.y matches "a\\.b"`},
		{"1.5 <= x.y", "x.y >= 1.5"},
		{"x.y contains z", `x.y contains "z"`},
	} {
		f, err := Compile(tc[0], nil)
		if err != nil {
			t.Errorf("%s: %v", tc[0], err)
			continue
		}
		if got := f.String(); got != tc[1] {
			t.Errorf("%s: String %q, want %q", tc[0], got, tc[1])
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		col  int
		msg  string // a part of the message
	}{
		{"", 1, "empty expression"},
		{"   ", 1, "empty expression"},
		{"(deltarobot", 12, `expected ")" to close the "(" at column 1`},
		{"deltarobot)", 11, `unbalanced ")"`},
		{"stream = 0", 8, `unknown operator "="`},
		{"stream === 0", 10, `unknown operator "="`},
		{"stream & stream", 8, `unknown operator "&"`},
		{"stream | stream", 8, `unknown operator "|"`},
		{"stream == 0 @", 13, `unexpected character '@'`},
		{"type == 'x'", 9, "double quotes"},
		{`vrpn.sender matches "(a"`, 21, "bad regular expression: missing closing )"},
		{`vrpn.sender matches 1`, 21, "matches takes a regular expression"},
		{"deltarobot.xx == 1", 1, "deltarobot.xx is neither a field nor a protocol name"},
		{"stream == 0 || dletarobot", 16, "dletarobot is neither a field nor a protocol name"},
		{"x.y == vrpn.nosuch", 1, "x.y is neither"},
		{"vrpn.sensor == vrpn.nosuch", 16, "vrpn.nosuch is neither"},
		{"type == vrpn_Tracker Pos_Quat", 22, "quote a string that has spaces"},
		{"stream == 0 1", 13, "unexpected number 1"},
		{"stream == 18446744073709551616", 11, "too large"},
		{"stream == -9223372036854775809", 11, "too large"},
		{"stream == 0x1ffffffffffffffff", 11, "too large"},
		{"stream == 1e400", 11, "out of the float64 range"},
		{"src == 10.0.0.1:4000", 8, "quote addresses"},
		{"stream == 12abc", 11, "bad number"},
		{`stream == "0"`, 11, "stream is a number"},
		{"proto == 1", 10, "proto is a string"},
		{"proto == true", 10, "proto is a string"},
		{`time > "yesterday"`, 8, "not an RFC 3339 time"},
		{"time == true", 9, "time is an instant"},
		{"stream contains \"1\"", 8, "contains applies to strings"},
		{"time matches \"1\"", 6, "matches applies to strings"},
		{"vrpn.sensor < true", 15, "true and false compare only with == and !="},
		{"stream == src", 11, "stream is a number and src is a string"},
		{"stream ==", 10, "expected a value after =="},
		{"stream == )", 11, "expected a value after =="},
		{"stream == and", 11, "expected a value after =="},
		{"&& stream", 1, `expected a field or protocol name, got "&&"`},
		{"stream &&", 10, "expression ends where a test was expected"},
		{"not", 4, "expression ends"},
		{"1 stream", 1, "a test starts with a field"},
		{"1 == 2", 6, "expected a field name"},
		{"stream in 1", 11, `expected "{" after in`},
		{"stream in {}", 12, "empty set"},
		{"stream in {1,}", 14, "expected a value in the set"},
		{"stream in {1 2}", 14, `expected "," or "}"`},
		{"stream in {x.y}", 12, "expected a value in the set"},
		{"stream in {1..x}", 15, "a range in a set is number..number"},
		{"stream in {\"a\"}", 12, "stream is a number"},
		{`type == "abc`, 9, "unterminated string"},
		{`type == "a\q"`, 11, `unknown escape \q`},
		{`type == "a\x4"`, 11, `\x takes two hex digits`},
		{"vrpn.pos[x] == 1", 1, "bad index"},
		{"vrpn.sender contains 1", 22, "contains takes a string"},
		{"é == 1", 1, "unexpected character 'é'"},
		{"type == \"é\" !", 13, `unexpected "!"`}, {"type == \"é\" && !", 17, "expression ends"},
		{"\xff", 1, "unexpected byte 0xff"},
	} {
		_, err := Compile(tc.expr, known)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("%q: error %v, want an *Error", tc.expr, err)
			continue
		}
		if fe.Column() != tc.col || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("%q: %v, want column %d and %q", tc.expr, err, tc.col, tc.msg)
		}
		if strings.ContainsAny(fe.Error(), "\n\r") || !strings.HasPrefix(fe.Error(), "at column ") {
			t.Errorf("%q: error %q is not one line", tc.expr, fe.Error())
		}
	}
}

func TestCaret(t *testing.T) {
	_, err := Compile("stream == 0 && dletarobot", known)
	fe := err.(*Error)
	want := "stream == 0 && dletarobot\n               ^"
	if got := fe.Caret(); got != want {
		t.Errorf("caret:\n%s\nwant:\n%s", got, want)
	}
	if got := fe.Error(); got != "at column 16: dletarobot is neither a field nor a protocol name" {
		t.Errorf("error %q", got)
	}
	_, err = Compile("type == \"é\" && 1", nil)
	if got := err.(*Error).Caret(); !strings.HasSuffix(got, "\n               ^") {
		t.Errorf("caret after a non-ASCII character:\n%s", got)
	}
}

// Without a known function every protocol and field name is accepted.
func TestCompileUnknownNames(t *testing.T) {
	f, err := Compile("nosuch.field == 1 || nosuch", nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Match(deltaRecord()) {
		t.Error("matched")
	}
	if f.Func()(deltaRecord()) {
		t.Error("Func matched")
	}
	if f.Expr() != "nosuch.field == 1 || nosuch" {
		t.Error("Expr")
	}
}

func TestMatchAllocatesNothing(t *testing.T) {
	rs := []*dissect.Record{deltaRecord(), vrpnRecord(), handRecord(), oddRecord()}
	for _, expr := range []string{
		"deltarobot && deltarobot.x > 0.1 && stream == 0",
		"vrpn.pos > 1 || vrpn.quat.w == 1 || type == ACK",
		"roboid.values.semantics in {position, velocity} && !(roboid.big != 3)",
		`handcontrol.payload.status contains "o" || time > "2026-11-21T08:08:19Z"`,
		`vrpn.sender matches "^Track" && transport == tcp`,
		"deltarobot.x > deltarobot.y && roboid.raw == \"0a1bff\"",
	} {
		f, err := Compile(expr, known)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		allocs := testing.AllocsPerRun(200, func() {
			for _, r := range rs {
				if f.Match(r) {
					n++
				}
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per run", expr, allocs)
		}
	}
}
