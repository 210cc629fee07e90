package stats

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// name4k returns a distinct name of exactly 4,096 bytes.
func name4k(i int) string {
	s := fmt.Sprintf("n%d-", i)
	return s + strings.Repeat("x", 4096-len(s))
}

// TestRateKeyBytesBounded: keys holding 4 KB type names stop at the byte
// bound, well before the key count, and the rest is added up in "(other)".
func TestRateKeyBytesBounded(t *testing.T) {
	s := NewRate(testDecls(t))
	const n = 5000
	for i := range n {
		s.Record(rec(1, "a", "b", 0, "vrpn", name4k(i), 8))
	}
	cost := rateKeyCost + len("vrpn") + 4096 + len("a")
	fit := maxRateBytes / cost
	if len(s.keys) != fit || len(s.order) != fit {
		t.Errorf("%d keys, want %d (bytes bound)", len(s.keys), fit)
	}
	if s.bytes.held > maxRateBytes {
		t.Errorf("held %d bytes, bound %d", s.bytes.held, maxRateBytes)
	}
	if s.other == nil || s.other.count != int64(n-fit) {
		t.Fatalf("other row %+v, want %d messages", s.other, n-fit)
	}
	var total int64
	for _, a := range s.rows() {
		total += a.count
	}
	if total != n {
		t.Errorf("rows count %d messages, want %d", total, n)
	}
}

// TestRTTBytesBounded: request keys of 4 KB fill the names' byte bound;
// past it requests are not remembered (counted in a note) and the replies'
// "code KEY" rows stop at the keys' byte bound.
func TestRTTBytesBounded(t *testing.T) {
	fd := func(name string, k dissect.Kind, ro dissect.Role) dissect.FieldDecl {
		return dissect.FieldDecl{Name: name, Kind: k, Role: ro}
	}
	decl := testDecls(t, declOnly{dissect.Info{Name: "arm", Proto: "arm", Types: []dissect.TypeDecl{
		{Type: "move", Fields: []dissect.FieldDecl{fd("tag", dissect.KindString, dissect.RoleRequestKey)},
			Exchange: dissect.Exchange{Role: dissect.Request}},
		{Type: "done", Fields: []dissect.FieldDecl{fd("tag", dissect.KindString, dissect.RoleRequestKey), fd("took", dissect.KindUint, dissect.RoleLatency)},
			Exchange: dissect.Exchange{Role: dissect.Reply}},
	}}})
	s := NewRTT(decl)
	const n = 3000
	for i := range n {
		s.Record(rec(1, "a", "b", 0, "arm", "move", 8, f("tag", dissect.Str(name4k(i)))))
	}
	fitNames := maxRTTNameBytes / (rttNameCost + 4096 + len("move"))
	if len(s.names) != fitNames || s.unnamed != int64(n-fitNames) {
		t.Errorf("%d names, %d not remembered; want %d and %d", len(s.names), s.unnamed, fitNames, n-fitNames)
	}
	if s.nameBytes.held > maxRTTNameBytes {
		t.Errorf("names hold %d bytes, bound %d", s.nameBytes.held, maxRTTNameBytes)
	}
	// Replies: remembered keys go to the "move" row, the others each make
	// a "code KEY" row until the keys' bytes are full.
	for i := range n {
		s.Record(rec(1, "b", "a", 0, "arm", "done", 8, f("tag", dissect.Str(name4k(i))), f("took", dissect.Uint(1))))
	}
	if s.keyBytes.held > maxRTTKeyBytes {
		t.Errorf("keys hold %d bytes, bound %d", s.keyBytes.held, maxRTTKeyBytes)
	}
	fitKeys := (maxRTTKeyBytes - (rttKeyCost + len("arm") + len("move"))) / (rttKeyCost + len("arm") + len("code ") + 4096)
	if len(s.keys) != 1+fitKeys {
		t.Errorf("%d keys, want 1 + %d", len(s.keys), fitKeys)
	}
	var samples int64
	for _, a := range s.rows() {
		samples += a.count
	}
	if samples != n || s.other == nil || s.other.count != int64(n-fitNames-fitKeys) {
		t.Errorf("%d samples (want %d), other %+v (want %d)", samples, n, s.other, n-fitNames-fitKeys)
	}
	if tab := tableOf(t, s, TableOptions{}); !strings.Contains(tab, fmt.Sprintf("%d requests not remembered (bound reached)", n-fitNames)) {
		t.Errorf("table lacks the note:\n%s", tab[len(tab)-min(len(tab), 600):])
	}
}
