package dissecttest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestCaptures reads sidecars written here: the rule, the one option a
// sidecar names, the record types (distinct, sorted), a VRPN capture
// without one; and fails on a missing sidecar, unknown options, bad JSON
// and a pattern that matches nothing.
func TestCaptures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.pcapng", "")
	write("a.truth.json", `{"decode_as": "udp.port==9000,neptune-wiki", "decoder_options": "neptune.WikiOptions{Int16: true}",
		"streams": [{"directions": [{"records": [{"type": "relay"}, {"type": "gap"}]}, {"records": [{"type": "relay"}]}]},
		{"directions": [{"records": [{"type": "abort"}]}]}]}`)
	write("vrpn_b.pcap", "")
	caps := Captures(t, filepath.Join(dir, "a.pcap*"), filepath.Join(dir, "vrpn_*"))
	want := []Capture{
		{Path: filepath.Join(dir, "a.pcapng"), Sidecar: true, DecodeAs: "udp.port==9000,neptune-wiki", NeptuneInt16: true, Types: []string{"abort", "gap", "relay"}},
		{Path: filepath.Join(dir, "vrpn_b.pcap")},
	}
	if !slices.EqualFunc(caps, want, func(a, b Capture) bool {
		return a.Path == b.Path && a.Sidecar == b.Sidecar && a.DecodeAs == b.DecodeAs && a.NeptuneInt16 == b.NeptuneInt16 && slices.Equal(a.Types, b.Types)
	}) {
		t.Errorf("captures %+v\nwant %+v", caps, want)
	}
	if got := caps[0].Rules(); !slices.Equal(got, []string{"udp.port==9000,neptune-wiki"}) {
		t.Errorf("rules %q", got)
	}
	if got := caps[1].Rules(); got != nil {
		t.Errorf("rules of a capture without a sidecar: %q", got)
	}

	write("c.pcap", "")
	write("d.pcap", "")
	write("d.truth.json", `{"decode_as": "tcp.port==1493,neptune", "decoder_options": "neptune.WikiOptions{Int16: false}"}`)
	write("e.pcap", "")
	write("e.truth.json", `{"decode_as": 1}`)
	for _, c := range []struct{ pattern, want string }{
		{"c.pcap", "no truth file"},
		{"d.pcap", "decoder_options"},
		{"e.pcap", "e.truth.json"},
		{"f*.pcap", "no capture matches"},
	} {
		r := run(func(tb testing.TB) { Captures(tb, filepath.Join(dir, c.pattern)) })
		if !r.failed || !strings.Contains(r.msg, c.want) {
			t.Errorf("%s: failed %v (%q), want a failure saying %q", c.pattern, r.failed, r.msg, c.want)
		}
	}
}

// TestSeenNever: the tables of the proto key and the event tables with no
// record under that key, in declaration order; records of another key
// count for nothing.
func TestSeenNever(t *testing.T) {
	reg, err := dissect.NewRegistry(toy{})
	if err != nil {
		t.Fatal(err)
	}
	seen := Seen{}
	seen.Add(map[string]int{"toy odd": 2, "other even": 3})
	seen.Add(map[string]int{"toy gap": 1, "toy odd": 1})
	if got, want := seen.Never(reg, "toy"), []string{"even", "skipped"}; !slices.Equal(got, want) {
		t.Errorf("never %q, want %q", got, want)
	}
	if seen["toy odd"] != 3 {
		t.Errorf("toy odd counted %d times, want 3", seen["toy odd"])
	}
}

// TestTypes: distinct and sorted.
func TestTypes(t *testing.T) {
	recs := []*dissect.Record{{Type: "pong"}, {Type: "gap"}, {Type: "pong"}, {Type: "ping"}}
	if got, want := Types(recs), []string{"gap", "ping", "pong"}; !slices.Equal(got, want) {
		t.Errorf("types %q, want %q", got, want)
	}
}

// TestCheckCapturesCount: a pattern matching another number of captures
// than the README lists fails before anything is decoded.
func TestCheckCapturesCount(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"x_1.pcap": "", "x_1.truth.json": `{"decode_as": "udp.port==1,toy"}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(func(tb testing.TB) {
		CheckCaptures(tb, filepath.Join(dir, "x_*.pcap"), 2, func(Capture) []dissect.Protocol { return []dissect.Protocol{toy{}} })
	})
	if !r.failed || !strings.Contains(r.msg, "found 1 captures") {
		t.Errorf("failed %v (%q), want a failure counting 1 capture", r.failed, r.msg)
	}
}
