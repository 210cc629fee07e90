package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// FuzzCompile checks that Compile never panics, that its errors are
// one-line *Error values with a position inside the expression, and that a
// filter that compiles matches without panicking and prints a canonical
// form that compiles to itself and matches the same records.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"deltarobot && deltarobot.x > 0.1 && stream == 0",
		"vrpn.pos[0] == -1.25 || vrpn.quat.w >= 1e-3",
		`type == "vrpn_Tracker Pos_Quat" and not proto == vrpn`,
		"handcontrol.payload.status in {ok, \"bad\\x01\", 1..5}",
		`roboid.values.semantics matches "(?i)^pos"`,
		`roboid.raw contains "0a:1b"`,
		`time >= "2026-11-21T08:08:19Z" && time < 1795248500.5`,
		"roboid.big == 0xffffffffffffffff || roboid.neg ne -9223372036854775808",
		"!(a.b !== c.d) || x.y not in {true}",
		"2 < stream",
		"(((a)))",
		"stream eq 1 or stream gt 2",
	} {
		f.Add(s)
	}
	rs := []*dissect.Record{deltaRecord(), vrpnRecord(), handRecord(), oddRecord(), {}}
	f.Fuzz(func(t *testing.T, expr string) {
		for _, kn := range []func(string, string) bool{nil, known} {
			flt, err := Compile(expr, kn)
			if err != nil {
				var fe *Error
				if !errors.As(err, &fe) {
					t.Fatalf("%q: error %T %v", expr, err, err)
				}
				if fe.Pos < 0 || fe.Pos > len(expr) || strings.ContainsAny(fe.Error(), "\n\r") {
					t.Fatalf("%q: bad error %q at %d", expr, fe.Error(), fe.Pos)
				}
				_ = fe.Caret()
				continue
			}
			s := flt.String()
			g, err := Compile(s, kn)
			if err != nil {
				t.Fatalf("%q: String %q does not compile: %v", expr, s, err)
			}
			if g.String() != s {
				t.Fatalf("%q: String %q recompiles to %q", expr, s, g.String())
			}
			for i, r := range rs {
				if flt.Match(r) != g.Match(r) {
					t.Fatalf("%q: String %q differs on record %d", expr, s, i)
				}
			}
		}
	})
}
