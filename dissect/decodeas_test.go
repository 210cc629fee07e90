package dissect_test

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
)

// TestDecodeAsPortRange checks tshark's range form of -d,
// tcp.port==FIRST-LAST,PROTO: a stream with a port from FIRST to LAST at
// either end is decoded as PROTO, and one just outside is not. The bytes
// are toy messages without toy's signature, so only a rule makes them toy.
func TestDecodeAsPortRange(t *testing.T) {
	reg, err := dissect.NewRegistry(&toy{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := reg.ParseDecodeAs("tcp.port==3999-4001,toy")
	if err != nil {
		t.Fatal(err)
	}
	if r.Transport != dissect.TCP || r.Port != 3999 || r.Last != 4001 {
		t.Fatalf("rule %+v, want tcp 3999-4001", r)
	}
	reg.AddRule(r)
	for port, want := range map[uint16]bool{3998: false, 3999: true, 4000: true, 4001: true, 4002: false} {
		col := &collector{}
		s := dissect.NewStream(tcpInfo(port), reg, col, dissect.StreamOptions{Decode: true})
		t0 := time.Unix(1, 0)
		s.Data(0, t0, []byte("\x03abc\x03abc"))
		s.End(0, t0)
		s.End(1, t0)
		toy := 0
		for _, rec := range col.recs {
			if rec.Proto == "toy" {
				toy++
			}
		}
		if got := toy == 2; got != want {
			t.Errorf("port %d: %d toy records (records: %s), want decoded: %v", port, toy, dump(col.recs), want)
		}
	}
}

// TestDecodeAsPortRangeErrors checks the malformed ranges are refused
// with a message naming the range, and that the whole range of ports is
// one rule of fixed size (no allocation per port).
func TestDecodeAsPortRangeErrors(t *testing.T) {
	reg, err := dissect.NewRegistry(&toy{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"tcp.port==4001-3999,toy", "tcp.port==0-10,toy", "tcp.port==1-65536,toy", "tcp.port==1-,toy", "tcp.port==-5,toy", "tcp.port==1-2-3,toy"} {
		_, err := reg.ParseDecodeAs(bad)
		if err == nil {
			t.Errorf("%s: accepted", bad)
			continue
		}
		sel := strings.TrimSuffix(strings.TrimPrefix(bad, "tcp.port=="), ",toy")
		if !strings.Contains(err.Error(), sel) {
			t.Errorf("%s: error %q does not name %q", bad, err, sel)
		}
	}
	r, err := reg.ParseDecodeAs("udp.port==1-65535,toy")
	if err != nil {
		t.Fatal(err)
	}
	if r.Port != 1 || r.Last != 65535 {
		t.Fatalf("rule %+v, want 1-65535", r)
	}
	if n := unsafe.Sizeof(r); n > 64 {
		t.Errorf("a rule takes %d bytes", n)
	}
	one, err := reg.ParseDecodeAs("udp.port==7,toy")
	if err != nil || one.Port != 7 || one.Last != 0 {
		t.Fatalf("single port: %+v, %v", one, err)
	}
}
