package dissect

import (
	"fmt"
	"testing"
	"time"
)

// TestEnvelopeViews: the views of the endpoints (ip.*, ipv6.*, tcp.*,
// udp.*) read the endpoints the pipeline writes, worked out by hand;
// a serial record has none of them; tcp.stream and udp.stream are the
// stream's number among its transport's, on that transport only.
func TestEnvelopeViews(t *testing.T) {
	v4 := &Record{Transport: TCP, Src: "10.0.0.1:4000", Dst: "192.168.1.2:50514", Frame: 7, Stream: 5, TransportStream: 2}
	v6 := &Record{Transport: UDP, Src: "[2001:db8::1]:3883", Dst: "[fe80::1]:7", Frame: 1, Stream: 4, TransportStream: 0}
	ser := &Record{Transport: Serial, Src: "host", Dst: "/dev/ttyUSB0", Frame: 12, Stream: 3}
	get := func(name string, r *Record) string {
		k, ok := LookupEnvelope(name)
		if !ok {
			t.Fatalf("%s: not in the envelope", name)
		}
		vs, n := k.Values(r)
		s := ""
		for _, v := range vs[:n] {
			switch v.Kind() {
			case KindString:
				s += v.Str() + ";"
			case KindInt:
				s += fmt.Sprint(v.Int()) + ";"
			case KindBool:
				s += fmt.Sprint(v.Bool()) + ";"
			}
		}
		return s
	}
	for _, c := range []struct {
		name string
		r    *Record
		want string
	}{
		{"ip.src", v4, "10.0.0.1;"}, {"ip.dst", v4, "192.168.1.2;"}, {"ip.addr", v4, "10.0.0.1;192.168.1.2;"},
		{"ipv6.addr", v4, ""}, {"tcp", v4, "true;"}, {"udp", v4, ""},
		{"tcp.srcport", v4, "4000;"}, {"tcp.dstport", v4, "50514;"}, {"tcp.port", v4, "4000;50514;"}, {"udp.port", v4, ""},
		{"ipv6.src", v6, "2001:db8::1;"}, {"ipv6.addr", v6, "2001:db8::1;fe80::1;"}, {"ip.addr", v6, ""},
		{"udp.port", v6, "3883;7;"}, {"udp.dstport", v6, "7;"}, {"tcp.port", v6, ""},
		{"ip.addr", ser, ""}, {"ipv6.addr", ser, ""}, {"tcp.port", ser, ""}, {"udp", ser, ""},
		{"frame.number", v4, "7;"}, {"frame", ser, "12;"}, {"tcp.stream", v4, "2;"}, {"udp.stream", v4, ""},
		{"udp.stream", v6, "0;"}, {"tcp.stream", v6, ""}, {"tcp.stream", ser, ""}, {"udp.stream", ser, ""},
	} {
		if got := get(c.name, c.r); got != c.want {
			t.Errorf("%s of %s→%s = %q, want %q", c.name, c.r.Src, c.r.Dst, got, c.want)
		}
	}
	epoch := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &Record{Time: epoch.Add(1500 * time.Millisecond), Epoch: epoch}
	if got := get("frame.time_relative", r); got != "" {
		t.Errorf("time_relative printed as %q", got)
	}
	k, _ := LookupEnvelope("frame.time_relative")
	if vs, n := k.Values(r); n != 1 || !vs[0].Time().Equal(time.Unix(1, 5e8)) {
		t.Errorf("time_relative = %v, want 1.5 s after 1970", vs[0])
	}
}

// TestEnvelopeNames: every name is found by itself and by its tshark
// names, once; the JSON keys come first.
func TestEnvelopeNames(t *testing.T) {
	seen := map[string]bool{}
	json := true
	for _, k := range Envelope() {
		if k.JSON && !json {
			t.Errorf("%s: a JSON key after a filter-only one", k.Name)
		}
		json = k.JSON
		for _, n := range append([]string{k.Name}, k.TShark...) {
			if seen[n] {
				t.Errorf("%s named twice", n)
			}
			seen[n] = true
			if got, ok := LookupEnvelope(n); !ok || got.Name != k.Name {
				t.Errorf("LookupEnvelope(%s) = %s, %v", n, got.Name, ok)
			}
		}
		if k.Values == nil && k.Name != "info" {
			t.Errorf("%s has no Values", k.Name)
		}
	}
}
