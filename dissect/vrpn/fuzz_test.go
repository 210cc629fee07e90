package vrpn

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// fixedTypes are the record types that do not come from a description.
var fixedTypes = []string{
	TypeCookie, TypeUDPCallback, TypeSenderDescription, TypeTypeDescription, TypeUDPDescription,
	TypeLogDescription, TypeDisconnect, TypeUnknown, dissect.TypeSkipped, dissect.TypeGap,
}

// fuzzPreamble is a TCP connection on which 10.0.0.1 announces UDP port
// 4000 and 10.0.0.2 describes sender 1 and the decoded types, so that
// fuzzed datagrams to 10.0.0.1:4000 are named.
func fuzzPreamble() [2][]byte {
	cookie := []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")
	d0 := append(append([]byte(nil), cookie...), encMsg(1, 2, 4000, -3, 0, []byte("10.0.0.1\x00"))...)
	d1 := append([]byte(nil), cookie...)
	d1 = append(d1, encDescription(-1, 1, "Tracker0", 0)...)
	for i, n := range []string{namePosQuat, nameVelocity, nameAcceleration, nameButtonChange, nameButtonStates, nameAnalog, nameDial, namePing, namePong} {
		d1 = append(d1, encDescription(-2, int32(i), n, uint32(1+i))...)
	}
	return [2][]byte{d0, d1}
}

// fuzzKey is one direction of one stream: its stream id and sender.
type fuzzKey struct {
	stream int
	src    string
}

type fuzzRun struct {
	recs  []*dissect.Record
	sizes map[fuzzKey]int64 // bytes fed, gaps included
}

// fuzzFeed runs data through dissect.Stream, forced to VRPN, as selected by
// mode: 0 a TCP direction after a cookie, 1 a TCP direction as is (both
// directions, chunked differently), 2 UDP datagrams to an announced port,
// 3 a TCP direction after a cookie with a gap at a random place.
func fuzzFeed(data []byte, mode uint8, seed uint64, decode bool) *fuzzRun {
	rng := rand.New(rand.NewPCG(seed, 99))
	p := New()
	reg, err := dissect.NewRegistry(p)
	if err != nil {
		panic(err)
	}
	reg.AddRule(dissect.Rule{Transport: dissect.TCP, Port: 3883, Proto: p})
	reg.AddRule(dissect.Rule{Transport: dissect.UDP, Port: 4000, Proto: p})
	run := &fuzzRun{sizes: map[fuzzKey]int64{}}
	sink := dissect.SinkFunc(func(r *dissect.Record) error {
		run.recs = append(run.recs, r.Clone())
		return nil
	})
	t0 := time.Unix(1795306106, 0)
	a := netip.MustParseAddrPort("10.0.0.1:40000")
	b := netip.MustParseAddrPort("10.0.0.2:3883")
	opt := dissect.StreamOptions{Decode: decode}
	chunks := func(st *dissect.Stream, dir dissect.Dir, in []byte) {
		for len(in) > 0 {
			n := min(1+rng.IntN(64), len(in))
			st.Data(dir, t0, in[:n])
			in = in[n:]
		}
	}
	ka, kb := fuzzKey{0, a.String()}, fuzzKey{0, b.String()}
	switch mode % 4 {
	case 0, 3:
		st := dissect.NewStream(dissect.StreamInfo{StreamID: dissect.StreamID{ID: 0, Transport: dissect.TCP, Addr: [2]netip.AddrPort{a, b}}, Name: [2]string{a.String(), b.String()}}, reg, sink, opt)
		in := append([]byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"), data...)
		if mode%4 == 3 && len(in) > 0 {
			cut := rng.IntN(len(in))
			chunks(st, 0, in[:cut])
			gap := int64(1 + rng.IntN(100))
			st.Gap(0, t0, gap)
			chunks(st, 0, in[cut:])
			run.sizes[ka] = int64(len(in)) + gap
		} else {
			chunks(st, 0, in)
			run.sizes[ka] = int64(len(in))
		}
		st.End(0, t0)
	case 1:
		st := dissect.NewStream(dissect.StreamInfo{StreamID: dissect.StreamID{ID: 0, Transport: dissect.TCP, Addr: [2]netip.AddrPort{a, b}}, Name: [2]string{a.String(), b.String()}}, reg, sink, opt)
		chunks(st, 0, data)
		chunks(st, 1, data)
		st.End(0, t0)
		st.End(1, t0)
		run.sizes[ka] = int64(len(data))
		run.sizes[kb] = int64(len(data))
	case 2:
		pre := fuzzPreamble()
		tcp := dissect.NewStream(dissect.StreamInfo{StreamID: dissect.StreamID{ID: 0, Transport: dissect.TCP, Addr: [2]netip.AddrPort{a, b}}, Name: [2]string{a.String(), b.String()}}, reg, sink, opt)
		tcp.Data(0, t0, pre[0])
		tcp.Data(1, t0, pre[1])
		run.sizes[ka] = int64(len(pre[0]))
		run.sizes[kb] = int64(len(pre[1]))
		src := netip.MustParseAddrPort("10.0.0.2:5000")
		dst := netip.MustParseAddrPort("10.0.0.1:4000")
		udp := dissect.NewStream(dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.UDP, Addr: [2]netip.AddrPort{src, dst}}, Name: [2]string{src.String(), dst.String()}}, reg, sink, opt)
		in := data
		for len(in) > 0 {
			n := min(1+rng.IntN(600), len(in))
			udp.Datagram(0, t0, in[:n])
			in = in[n:]
		}
		run.sizes[fuzzKey{1, src.String()}] = int64(len(data))
		udp.End(0, t0)
		tcp.End(0, t0)
		tcp.End(1, t0)
	}
	return run
}

// fuzzSeeds returns seed inputs built from the truth messages.
func fuzzSeeds(t testing.TB) [][]byte {
	tf := loadTruth(t)
	var out [][]byte
	for _, name := range tf.captureNames() {
		c := tf.Captures[name]
		for _, conn := range c.TCP {
			for _, d := range conn.Directions {
				out = append(out, buildDirStream(t, c, d).data[cookieLen:])
			}
		}
		var dg []byte
		for _, m := range c.Examples {
			if m.Transport == "udp" {
				dg = append(dg, m.bytes(t)...)
			}
		}
		if dg != nil {
			out = append(out, dg)
		}
		for _, l := range c.Lobs {
			out = append(out, mustHex(t, l.Hex))
		}
	}
	return append(out, catalogueStream(catalogueSamples()))
}

func FuzzParse(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint8(i), uint64(i))
	}
	f.Add([]byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"), uint8(1), uint64(1))
	f.Add([]byte("127.0.0.1 56707\x00"), uint8(2), uint64(2))
	f.Add([]byte{}, uint8(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8, seed uint64) {
		if len(data) > 1<<16 {
			return
		}
		p := New()
		tcp := &dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}}
		if v := p.Detect(tcp, 0, data); (v == dissect.Yes) != (len(data) >= len(magic) && string(data[:len(magic)]) == magic) {
			t.Fatalf("Detect(tcp) = %d", v)
		}
		udp := &dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.UDP, Addr: [2]netip.AddrPort{netip.MustParseAddrPort("10.0.0.2:5000"), netip.MustParseAddrPort("10.0.0.1:4000")}}}
		if v := p.Detect(udp, 0, data); v == dissect.Maybe {
			t.Fatal("Detect(udp) = Maybe: a datagram is judged whole")
		}
		full := fuzzFeed(data, mode, seed, true)
		lite := fuzzFeed(data, mode, seed, false)
		checkFuzzRun(t, full, true)
		if len(lite.recs) != len(full.recs) {
			t.Fatalf("Decode false gave %d records, Decode true %d", len(lite.recs), len(full.recs))
		}
		for i := range full.recs {
			a, b := full.recs[i], lite.recs[i]
			if a.Type != b.Type || a.Src != b.Src || a.Offset != b.Offset || a.Length != b.Length || !slices.Equal(a.Warnings, b.Warnings) {
				t.Fatalf("record %d: Decode true %s@%d+%d %q, Decode false %s@%d+%d %q", i, a.Type, a.Offset, a.Length, a.Warnings, b.Type, b.Offset, b.Length, b.Warnings)
			}
			if b.Type != dissect.TypeSkipped && len(b.Fields) != 0 {
				t.Fatalf("record %d: Decode false gave fields %v", i, b.Fields)
			}
		}
	})
}

// checkFuzzRun asserts the invariants of one run: the records of every
// direction tile the bytes fed; every type is a fixed one or a name
// described earlier on that direction (or, on the UDP flow, by the TCP
// direction that names it); framed messages start with the header fields;
// TCP records other than events are whole multiples of 8 bytes.
func checkFuzzRun(t *testing.T, run *fuzzRun, decoded bool) {
	t.Helper()
	off := map[fuzzKey]int64{}
	names := map[string]map[string]bool{} // src -> described type names
	udpNamer := "10.0.0.2:3883"           // the TCP direction that names the UDP flow
	for _, r := range run.recs {
		k := fuzzKey{r.Stream, r.Src}
		if r.Offset != off[k] || r.Length <= 0 {
			t.Fatalf("%s stream %d: record %s at %d+%d, want offset %d", r.Src, r.Stream, r.Type, r.Offset, r.Length, off[k])
		}
		off[k] += r.Length
		switch r.Type {
		case dissect.TypeSkipped, dissect.TypeGap, TypeCookie, TypeUDPCallback:
			if r.Type == TypeCookie && (r.Transport != dissect.TCP || r.Offset != 0 || r.Length != cookieLen) {
				t.Fatalf("cookie at %d+%d on %s", r.Offset, r.Length, r.Transport)
			}
			continue
		}
		if r.Transport == dissect.TCP && r.Length%8 != 0 {
			t.Fatalf("TCP message %s of %d bytes", r.Type, r.Length)
		}
		if decoded {
			keys := fieldKeys(r.Fields)
			if len(keys) < 5 || strings.Join(keys[:5], ",") != strings.Join(headerKeys, ",") {
				t.Fatalf("%s: fields %v", r.Type, keys)
			}
		}
		ok := slices.Contains(fixedTypes, r.Type) || names[r.Src][r.Type]
		if r.Transport == dissect.UDP {
			ok = ok || names[udpNamer][r.Type]
		}
		if !ok {
			t.Fatalf("%s: type %q neither fixed nor described", r.Src, r.Type)
		}
		if r.Type == TypeTypeDescription {
			if v, ok := r.Fields.Get("name"); ok {
				n := v.Str()
				if len(n) > maxNameLen {
					n = n[:maxNameLen]
				}
				if names[r.Src] == nil {
					names[r.Src] = map[string]bool{}
				}
				names[r.Src][n] = true
			}
		}
	}
	for k, n := range run.sizes {
		if off[k] != n {
			t.Fatalf("%v: records cover %d bytes, fed %d", k, off[k], n)
		}
	}
	for k := range off {
		if _, ok := run.sizes[k]; !ok {
			t.Fatalf("records on %v, which was not fed", k)
		}
	}
}
