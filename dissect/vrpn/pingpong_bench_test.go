package vrpn

import (
	"net/netip"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// BenchmarkPingPong measures a client's ping and the server's pong of one
// sender through dissect.Stream, with fields: the cost of the
// request/reply matching in steady state.
func BenchmarkPingPong(b *testing.B) {
	reg, _ := registry(b)
	a, z := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:3883")
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP, Addr: [2]netip.AddrPort{a, z}}}
	pongs := 0
	sink := dissect.SinkFunc(func(r *dissect.Record) error {
		if _, ok := r.Fields.Get("rtt_ms"); ok {
			pongs++
		}
		return nil
	})
	st := dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: true})
	cookie := []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")
	t0 := time.Unix(1795306100, 0)
	st.Data(0, t0, append(append([]byte(nil), cookie...), append(encDescription(-1, 3, "Tracker0", 0), encDescription(-2, 7, namePing, 1)...)...))
	st.Data(1, t0, append(append([]byte(nil), cookie...), append(encDescription(-1, 5, "Tracker0", 0), encDescription(-2, 9, namePong, 1)...)...))
	ping, pong := encMsg(1795306100, 0, 3, 7, 2, nil), encMsg(1795306100, 0, 5, 9, 2, nil)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		st.Data(0, t0, ping)
		st.Data(1, t0.Add(time.Millisecond), pong)
		n++
	}
	if pongs != n {
		b.Fatalf("%d pongs with rtt_ms, want %d", pongs, n)
	}
}
