package roboid_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/roboid"
)

var (
	client = netip.MustParseAddrPort("198.51.100.10:50000")
	site   = netip.MustParseAddrPort("192.0.2.1:7681")
	t0     = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
)

// streamInfo is a UDP flow from the client (dir 0) to the site.
func streamInfo(sitePort uint16) dissect.StreamInfo {
	s := netip.AddrPortFrom(site.Addr(), sitePort)
	return dissect.StreamInfo{StreamID: dissect.StreamID{ID: 2, Transport: dissect.UDP, Addr: [2]netip.AddrPort{client, s}}, Name: [2]string{client.String(), s.String()}}
}

func registry(t testing.TB, p dissect.Protocol) *dissect.Registry {
	return dissecttest.Registry(t, nil, p)
}

// dgram is one datagram fed to a stream.
type dgram struct {
	dir  dissect.Dir
	data []byte
}

// feed gives the datagrams a millisecond apart, then ends both
// directions. Each is given as a copy, never nil, so that an empty
// datagram stays a datagram.
func feed(t testing.TB, reg *dissect.Registry, info dissect.StreamInfo, decode bool, ds []dgram) []*dissect.Record {
	evs := make([]dissecttest.Event, 0, len(ds)+2)
	for i, d := range ds {
		evs = append(evs, dissecttest.Event{Dir: d.dir, At: t0.Add(time.Duration(i) * time.Millisecond), Data: append([]byte{}, d.data...)})
	}
	end := t0.Add(time.Second)
	evs = append(evs, dissecttest.Event{Dir: 0, At: end}, dissecttest.Event{Dir: 1, At: end})
	recs, _ := dissecttest.Feed(t, reg, info, dissect.StreamOptions{Decode: decode}, evs, nil, nil)
	return recs
}

func dirOf(r *dissect.Record) dissect.Dir {
	if r.Src == client.String() {
		return 0
	}
	return 1
}

type want struct {
	dg      int // index of the datagram that completed the record
	dir     dissect.Dir
	typ     string
	off     int64
	len     int64
	warn    []string
	reason  string // skipped: a substring of the reason
	fields  []kv
	summary string
}

func checkRecords(t *testing.T, got []*dissect.Record, wants []want, proto string, decode bool) {
	t.Helper()
	if len(got) != len(wants) {
		var b strings.Builder
		for _, r := range got {
			fmt.Fprintf(&b, "\n  dir %d %s %d+%d %q", dirOf(r), r.Type, r.Offset, r.Length, r.Warnings)
		}
		t.Fatalf("%d records, want %d:%s", len(got), len(wants), b.String())
	}
	for i, w := range wants {
		r := got[i]
		if dirOf(r) != w.dir || r.Type != w.typ || r.Offset != w.off || r.Length != w.len || r.Proto != proto || r.Transport != dissect.UDP || r.Stream != 2 {
			t.Fatalf("record %d: dir %d %q %s %d+%d, want dir %d %s %d+%d", i, dirOf(r), r.Proto, r.Type, r.Offset, r.Length, w.dir, w.typ, w.off, w.len)
		}
		if !r.Time.Equal(t0.Add(time.Duration(w.dg) * time.Millisecond)) {
			t.Errorf("record %d: time %v", i, r.Time)
		}
		checkWarnings(t, r.Warnings, w.warn)
		if w.typ == dissect.TypeSkipped {
			v, _ := r.Fields.Get("reason")
			if !strings.Contains(v.Str(), w.reason) {
				t.Errorf("record %d: reason %q does not contain %q", i, v.Str(), w.reason)
			}
			continue
		}
		if !decode {
			continue
		}
		if w.fields != nil {
			checkFields(t, r.Fields, w.fields)
		}
		if r.Summary != w.summary {
			t.Errorf("record %d: summary %q, want %q", i, r.Summary, w.summary)
		}
	}
}

// session is a whole exchange as the README describes it: Client,
// NetworkId, a Pose for an unknown thing, Investigate, NewThing, ModelURL,
// then more Poses (one cut short, one with the extension byte) and an
// unknown id; the empty datagram (index 8) yields no record.
var session1 = []dgram{
	{0, h("a0")},
	{1, h("a1 01")},
	{0, h("10 01 02 62 40 00 3e")},
	{1, h("81 01 02")},
	{0, h("80 01 02 05")},
	{0, h("90 01 02 612e6f626a")},
	{0, h("10 01 02 48 80 b1 40 20 00 00")},
	{1, h("10 00 07 00 ab")},
	{0, h("")},
	{1, h("42 00")},
}

func session1Wants() []want {
	return []want{
		{dg: 0, dir: 0, typ: "Client", off: 0, len: 1, fields: []kv{{"data", hx("")}}},
		{dg: 1, dir: 1, typ: "NetworkId", off: 0, len: 2, fields: []kv{{"network_id", u(1)}, {"data", hx("")}}, summary: "net 1"},
		{dg: 2, dir: 0, typ: "Pose", off: 1, len: 7, summary: "net 1 thing 2: linear_velocity 90° 1.5 (f16)",
			fields: pose(1, 2, val("0x62", "linear_velocity", 1, 2, "40003e", kv{"angles_deg", degs(90)}, kv{"magnitude_uint", u(0x3e00)}, kv{"magnitude_f16", fl(1.5)}))},
		{dg: 3, dir: 1, typ: "Investigate", off: 2, len: 3, fields: []kv{{"network_id", u(1)}, {"thing_id", u(2)}, {"data", hx("")}}, summary: "net 1 thing 2"},
		{dg: 4, dir: 0, typ: "NewThing", off: 8, len: 4, fields: []kv{{"network_id", u(1)}, {"thing_id", u(2)}, {"data", hx("05")}}, summary: "net 1 thing 2 data=05"},
		{dg: 5, dir: 0, typ: "ModelURL", off: 12, len: 8, fields: []kv{{"network_id", u(1)}, {"thing_id", u(2)}, {"data", hx("612e6f626a")}}, summary: `net 1 thing 2 "a.obj"`},
		{dg: 6, dir: 0, typ: "Pose", off: 20, len: 10, warn: []string{"value 1 (data type 0xb1 at byte 5) needs 6 bytes, the datagram ends after 4"},
			summary: "net 1 thing 2: direction 180°; position (truncated)",
			fields:  pose(1, 2, val("0x48", "direction", 1, 0, "80", kv{"angles_deg", degs(180)}), val("0xb1", "position", 2, 4, "40200000", truncated))},
		{dg: 7, dir: 1, typ: "Pose", off: 5, len: 5, warn: []string{"data type 0x00 at byte 3"},
			summary: "net 0 thing 7: no values; rest 2 bytes", fields: append(pose(0, 7), kv{"rest", hx("00ab")})},
		{dg: 9, dir: 1, typ: "unknown", off: 10, len: 2, warn: []string{"unknown message id 0x42"},
			fields: []kv{{"message_id", dissect.Int(0x42)}, {"data", hx("00")}}, summary: "id=0x42 len=2"},
	}
}

// TestStream runs the exchange through dissect.Stream, selected by the
// default port, with and without decoding.
func TestStream(t *testing.T) {
	for _, decode := range []bool{true, false} {
		recs := feed(t, registry(t, roboid.New()), streamInfo(roboid.Port), decode, session1)
		dissecttest.CheckTiling(t, recs, [2]int64{30, 12}, dirOf)
		checkRecords(t, recs, session1Wants(), "roboid", decode)
	}
}

// TestStreamSelection: port 7681 at either end selects the protocol; other
// ports need a decode-as rule (there is no content detection).
func TestStreamSelection(t *testing.T) {
	ds := []dgram{{0, h("10 01 02 48 40")}}
	reg := registry(t, roboid.New())

	// The site's port is the source of dir 0.
	info := streamInfo(roboid.Port)
	info.Addr[0], info.Addr[1] = info.Addr[1], info.Addr[0]
	recs := feed(t, reg, info, true, ds)
	if len(recs) != 1 || recs[0].Type != "Pose" || recs[0].Proto != "roboid" {
		t.Fatalf("port 7681 as source: %+v", recs)
	}

	// The framework reports the unknown bytes when the stream ends, at the
	// time of the datagram that brought them.
	recs = feed(t, reg, streamInfo(9999), true, ds)
	checkRecords(t, recs, []want{{dg: 0, dir: 0, typ: dissect.TypeSkipped, off: 0, len: 5, reason: dissect.ReasonUnknown}}, "", true)

	rule, err := reg.ParseDecodeAs("udp.port==9999,roboid")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(rule)
	recs = feed(t, reg, streamInfo(9999), true, ds)
	checkRecords(t, recs, []want{{dir: 0, typ: "Pose", off: 0, len: 5, summary: "net 1 thing 2: direction 90°",
		fields: pose(1, 2, val("0x48", "direction", 1, 0, "40", kv{"angles_deg", degs(90)}))}}, "roboid", true)

	for _, sel := range []string{"tcp.port==7681,roboid", "serial,roboid"} {
		if _, err := reg.ParseDecodeAs(sel); err == nil {
			t.Errorf("%s: accepted", sel)
		}
	}
}

// TestInfo checks what the registry and `dissect protocols` show.
func TestInfo(t *testing.T) {
	in := roboid.New().Info()
	if in.Name != "roboid" || in.Proto != "roboid" || in.Detection != "" || in.Title == "" ||
		len(in.Transports) != 1 || in.Transports[0] != dissect.UDP ||
		len(in.Ports) != 1 || in.Ports[0] != (dissect.Port{Transport: dissect.UDP, Port: 7681}) {
		t.Errorf("%+v", in)
	}
	for _, b := range [][]byte{h("10 01 02 62 40 00 3e"), h("a0"), h("a1 01")} {
		if v := roboid.New().Detect(nil, 0, b); v != dissect.No {
			t.Errorf("Detect(%x) = %v", b, v)
		}
	}
}
