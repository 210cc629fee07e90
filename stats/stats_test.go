package stats

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
)

func compileStub(expr string) (func(*dissect.Record) bool, error) {
	if expr == "bad(" {
		return nil, errors.New("unexpected end of filter")
	}
	return func(r *dissect.Record) bool { return r.Proto == expr }, nil
}

// TestParse checks every -z form and its errors (one line naming the
// argument and what is wanted).
func TestParse(t *testing.T) {
	for _, c := range []struct {
		arg, name string
		check     func(Stat) bool
	}{
		{"rtt", "rtt", nil},
		{"rate", "rate", nil},
		{"conv", "conv", nil},
		{"io,stat,1", "io,stat", func(s Stat) bool { return s.(*IOStat).interval == 1e9 && s.(*IOStat).filter == nil }},
		{"io,stat,0.5", "io,stat", func(s Stat) bool { return s.(*IOStat).interval == 5e8 }},
		{"io,stat,0.000001", "io,stat", func(s Stat) bool { return s.(*IOStat).interval == 1e3 }},
		{"io,stat,2,vrpn", "io,stat", func(s Stat) bool {
			io := s.(*IOStat)
			return io.filterText == "vrpn" && io.filter(&dissect.Record{Proto: "vrpn"})
		}},
		{"io,stat,1,a && b == 1, c", "io,stat", func(s Stat) bool { return s.(*IOStat).filterText == "a && b == 1, c" }},
		{"follow,3", "follow", func(s Stat) bool { return s.(*Follow).stream == 3 }},
		{"follow,0", "follow", func(s Stat) bool { return s.(*Follow).stream == 0 }},
		{"follow, 7 ", "follow", func(s Stat) bool { return s.(*Follow).stream == 7 && s.(*Follow).sel == nil }},
		{"follow,tcp,ascii,0", "follow", func(s Stat) bool {
			f := s.(*Follow)
			return f.sel != nil && f.sel.transport == dissect.TCP && f.sel.mode == "ascii" && f.sel.index == 0 && !f.NeedsRaw()
		}},
		{"follow,udp,hex,12", "follow", func(s Stat) bool {
			f := s.(*Follow)
			return f.sel.transport == dissect.UDP && f.sel.mode == "hex" && f.sel.index == 12 && f.NeedsRaw()
		}},
		{"follow,tcp,raw,3", "follow", func(s Stat) bool { return s.(*Follow).sel.mode == "raw" && s.(*Follow).NeedsRaw() }},
		{"conv,tcp", "conv", func(s Stat) bool { return s.(*Conv).only == dissect.TCP }},
		{"conv,udp", "conv", func(s Stat) bool { return s.(*Conv).only == dissect.UDP }},
	} {
		s, err := Parse(c.arg, compileStub, nil)
		if err != nil {
			t.Errorf("%s: %v", c.arg, err)
			continue
		}
		if s.Name() != c.name || (c.check != nil && !c.check(s)) {
			t.Errorf("%s: %s %+v", c.arg, s.Name(), s)
		}
	}
	for _, c := range []struct{ arg, err string }{
		{"", "-z: empty; want rtt, io,stat,SECONDS[,FILTER], rate, conv[,tcp|udp], follow,STREAM or follow,tcp|udp,ascii|hex|raw,N"},
		{"nope", "-z nope: unknown statistic; want rtt, io,stat,SECONDS[,FILTER], rate, conv[,tcp|udp], follow,STREAM or follow,tcp|udp,ascii|hex|raw,N"},
		{"rtt,1", "-z rtt,1: rtt takes no arguments"},
		{"io", "-z io: want io,stat,SECONDS[,FILTER]"},
		{"io,phs", "-z io,phs: want io,stat,SECONDS[,FILTER]"},
		{"io,stat", "-z io,stat: interval: want seconds > 0 (io,stat,SECONDS[,FILTER])"},
		{"io,stat,x", "-z io,stat,x: interval: want seconds > 0"},
		{"io,stat,0", "-z io,stat,0: interval: want seconds > 0"},
		{"io,stat,-1", "-z io,stat,-1: interval: want seconds > 0"},
		{"io,stat,NaN", "-z io,stat,NaN: interval: want seconds > 0"},
		{"io,stat,1e-9", "-z io,stat,1e-9: interval: want at least 0.000001 seconds"},
		{"io,stat,1e10", "-z io,stat,1e10: interval: want at most 1000000000 seconds"},
		{"io,stat,1,", "-z io,stat,1,: filter: empty"},
		{"io,stat,1,bad(", "-z io,stat,1,bad(: filter: unexpected end of filter"},
		{"follow", "-z follow: want follow,STREAM (a stream number) or follow,tcp|udp,ascii|hex|raw,N"},
		{"follow,", "-z follow,: want follow,STREAM (a stream number) or follow,tcp|udp,ascii|hex|raw,N"},
		{"follow,x", "-z follow,x: stream: want a stream number (0, 1, ...) or tcp|udp,ascii|hex|raw,N"},
		{"follow,-1", "-z follow,-1: stream: want a stream number (0, 1, ...) or tcp|udp,ascii|hex|raw,N"},
		{"follow,tcp,ascii", "-z follow,tcp,ascii: want follow,STREAM or follow,tcp|udp,ascii|hex|raw,N"},
		{"follow,sctp,ascii,0", "-z follow,sctp,ascii,0: transport \"sctp\": want tcp or udp (follow,tcp|udp,ascii|hex|raw,N)"},
		{"follow,tcp,ebcdic,0", "-z follow,tcp,ebcdic,0: mode \"ebcdic\": want ascii, hex or raw (follow,tcp,ascii|hex|raw,N)"},
		{"follow,udp,raw,x", "-z follow,udp,raw,x: index \"x\": want the udp stream's index as tshark numbers udp.stream (0, 1, ...)"},
		{"follow,udp,raw,-1", "-z follow,udp,raw,-1: index \"-1\": want the udp stream's index as tshark numbers udp.stream (0, 1, ...)"},
		{"conv,sctp", "-z conv,sctp: want conv, conv,tcp or conv,udp"},
		{"conv,", "-z conv,: want conv, conv,tcp or conv,udp"},
	} {
		_, err := Parse(c.arg, compileStub, nil)
		if err == nil || err.Error() != c.err {
			t.Errorf("%q: error %v, want %q", c.arg, err, c.err)
		}
	}
	if _, err := Parse("io,stat,1,vrpn", nil, nil); err == nil || err.Error() != "-z io,stat,1,vrpn: filter: display filters are not available here" {
		t.Errorf("nil compile: %v", err)
	}
	if !strings.Contains(Usage(), "-z io,stat,SECS[,FILTER]") {
		t.Error("usage")
	}
}

// TestJSONValues checks the JSON writers: floats always with a fraction or
// an exponent, NaN and infinities as strings, hidden characters escaped.
func TestJSONValues(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0.0"}, {100, "100.0"}, {1.5, "1.5"}, {math.Copysign(0, -1), "-0.0"}, {1e21, "1e+21"}, {1e-7, "1e-07"},
		{math.NaN(), `"NaN"`}, {math.Inf(1), `"Inf"`}, {math.Inf(-1), `"-Inf"`}} {
		if got := string(output.AppendFloat(nil, c.v)); got != c.want {
			t.Errorf("%v: %s, want %s", c.v, got, c.want)
		}
	}
	if got := string(appendJSONString(nil, "a\"\\\n\x1b\u009b\u202e\xffé")); got != `"a\"\\\n\u001b\u009b\u202e\ufffdé"` {
		t.Errorf("string %s", got)
	}
	// A hostile protocol and type name in each stat's JSON and table.
	hostile := "\x1b]0;x\x07\u202e"
	decl := testDecls(t, declOnly{dissect.Info{Name: hostile, Proto: hostile, Types: []dissect.TypeDecl{{
		Type: hostile, Exchange: dissect.Exchange{Role: dissect.Reply},
		Fields: []dissect.FieldDecl{
			{Name: "latency_ms", Kind: dissect.KindFloat, Role: dissect.RoleLatency},
			{Name: "request_code", Kind: dissect.KindString, Role: dissect.RoleRequestKey},
			{Name: "sender", Kind: dissect.KindString, Role: dissect.RoleSender},
		},
	}}}})
	ss := []Stat{NewRTT(decl), NewRate(decl), NewConv(), NewIOStat(1e9, "", nil), NewFollow(0)}
	r := rec(0, hostile, hostile, 0, hostile, hostile, 1, f("latency_ms", dissect.Float(1)), f("request_code", dissect.Str(hostile)),
		f("sender", dissect.Str(hostile)))
	for _, s := range ss {
		s.Record(r)
		if rows := jsonRows(t, s); len(rows) == 0 {
			t.Errorf("%s: no row", s.Name())
		}
		if tab := tableOf(t, s, TableOptions{}); strings.ContainsAny(tab, "\x1b\x07\u202e") {
			t.Errorf("%s: raw control characters in the table:\n%q", s.Name(), tab)
		}
	}
}

// BenchmarkRecord measures Record of each stat on a VRPN-like record with
// a few fields, time advancing by 1 ms.
func BenchmarkRecord(b *testing.B) {
	decl := testDecls(b)
	mk := map[string]func() Stat{
		"rtt":     func() Stat { return NewRTT(decl) },
		"io,stat": func() Stat { return NewIOStat(1e9, "", nil) },
		"rate":    func() Stat { return NewRate(decl) },
		"conv":    func() Stat { return NewConv() },
		"follow":  func() Stat { return NewFollow(1) },
	}
	for _, name := range []string{"rtt", "io,stat", "rate", "conv", "follow"} {
		b.Run(name, func(b *testing.B) {
			s := mk[name]()
			r := rec(1, "127.0.0.1:3883", "127.0.0.1:41000", 0, "vrpn", "vrpn_Tracker Pos_Quat", 88,
				f("sender", dissect.Str("Tracker0")), f("sender_id", dissect.Int(1)), f("sensor", dissect.Int(0)),
				f("pos", dissect.Float(1.5)))
			pong := rec(1, "127.0.0.1:3883", "127.0.0.1:41000", 0, "deltarobot", "pong", 10, f("rtt_ms", dissect.Float(1.25)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Time = r.Time.Add(time.Millisecond)
				if name == "rtt" {
					pong.Time = r.Time
					s.Record(pong)
				} else {
					s.Record(r)
				}
				i++
			}
			_ = s.WriteJSON(io.Discard)
		})
	}
}
