package spec

import (
	"net/netip"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// TestExchangeKeyed runs the example's ping and pong (keyed by a 16-bit
// token) through a parser: a pong takes the oldest ping of its token in
// the other direction, whatever the order; a direction keeps 64 pings of
// a type, and the stream's end notes what it forgot. Each expected
// rtt_ms is the difference of the capture times the test gives.
func TestExchangeKeyed(t *testing.T) {
	p := loadExample(t)
	a, b := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:5600")
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 7, Transport: dissect.TCP, Addr: [2]netip.AddrPort{a, b}}}
	reg := dissecttest.Registry(t, []string{"tcp.port==5600,acme-servo"}, p)
	col := &dissecttest.Collector{}
	st := dissect.NewStream(info, reg, col, dissect.StreamOptions{Decode: true})
	t0 := time.Unix(1795306100, 0)
	seq := 0
	send := func(dir dissect.Dir, ms int, typ string, token uint64) *dissect.Record {
		t.Helper()
		msg := map[string]uint64{"ping": 0x30, "pong": 0x31}[typ]
		b, err := p.Encode(typ, []dissect.Field{{Key: "len", Value: dissect.Uint(2)}, {Key: "seq", Value: dissect.Uint(uint64(seq & 0xff))},
			{Key: "msg", Value: dissect.Uint(msg)}, {Key: "token", Value: dissect.Uint(token)}})
		if err != nil {
			t.Fatal(err)
		}
		seq++
		n := len(col.Records)
		st.Data(dir, t0.Add(time.Duration(ms)*time.Millisecond), b)
		if len(col.Records) != n+1 || col.Records[n].Type != typ {
			t.Fatalf("%s %d: %d records, want one %s", typ, token, len(col.Records)-n, typ)
		}
		return col.Records[n]
	}
	rtt := func(dir dissect.Dir, ms int, token uint64, want float64) {
		t.Helper()
		v, ok := send(dir, ms, "pong", token).Fields.Get(LatencyField)
		switch {
		case want < 0 && ok:
			t.Errorf("pong %d at %d ms: rtt_ms %v, want none", token, ms, v.Float())
		case want >= 0 && (!ok || v.Float() != want):
			t.Errorf("pong %d at %d ms: rtt_ms %v (present %v), want %v", token, ms, v.Float(), ok, want)
		}
	}
	send(0, 0, "ping", 1)
	send(0, 1, "ping", 2)
	send(0, 2, "ping", 1) // the same token again
	rtt(1, 5, 2, 4)       // out of order: 2 first
	rtt(1, 6, 1, 6)       // the oldest 1
	rtt(1, 7, 1, 5)       // then the other
	rtt(1, 8, 1, -1)      // none left
	rtt(0, 9, 1, -1)      // a pong in the pings' direction
	// 66 pings, tokens 65535 (wrapping to) 0..64: the 2 oldest are
	// forgotten.
	send(0, 100, "ping", 65535)
	for k := range uint64(65) {
		send(0, 101+int(k), "ping", k)
	}
	rtt(1, 200, 65535, -1)
	rtt(1, 200, 0, -1)
	rtt(1, 200, 1, 98)
	st.End(0, t0)
	st.End(1, t0)
	want := "acme-servo: stream 7: 2 requests forgotten unanswered past the bound of 64 per direction and type"
	if notes := st.Notes(); len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want %q", notes, want)
	}
}
