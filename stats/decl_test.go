package stats

import (
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestDeclCache checks that the cache answers what the DeclFunc answers:
// a type shared by two protocols gets each one's declaration, a type with
// variants is looked up for every record (its records match different
// declarations), the same type at another address too; and that a type
// without variants is looked up once.
func TestDeclCache(t *testing.T) {
	decl := testDecls(t)
	calls := 0
	c := declCache{fn: func(r *dissect.Record) *dissect.TypeDecl { calls++; return decl(r) }}
	check := func(r *dissect.Record, table string) {
		t.Helper()
		d := c.of(r)
		got := "<nil>"
		if d != nil {
			got = d.Table()
		}
		if got != table {
			t.Errorf("%s %s: declaration %s, want %s", r.Proto, r.Type, got, table)
		}
	}
	const unknown = "unknown"
	for range 3 {
		check(rec(0, "a", "b", 0, "deltarobot", "ping", 10), "ping")
	}
	if calls != 1 {
		t.Errorf("%d lookups for 3 records of one type, want 1", calls)
	}
	for range 2 {
		check(rec(0, "a", "b", 0, "deltarobot", unknown, 10), unknown)
		check(rec(0, "a", "b", 0, "vrpn", unknown, 10), "<nil>") // vrpn has no "unknown"
		check(rec(0, "a", "b", 0, "deltarobot", strings.Clone("pong"), 10), "pong")
		check(rec(2, "h", "d", 0, "handcontrol", "GetSettings", 12, f("role", dissect.Str("request"))), "GetSettings.request")
		check(rec(2, "d", "h", 0, "handcontrol", "GetSettings", 12, f("role", dissect.Str("response"))), "GetSettings.response")
	}
	if c := (declCache{}); c.of(rec(0, "a", "b", 0, "deltarobot", "ping", 10)) != nil {
		t.Error("a declaration without a DeclFunc")
	}
}
