package vrpn

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// longName returns a name of exactly n bytes, distinct for (conn, kind, id).
func longName(conn, kind, id, n int) string {
	s := fmt.Sprintf("c%d k%d id%d ", conn, kind, id)
	return s + strings.Repeat("x", n-len(s))
}

// TestRunNameBudget: the names held by all connections of a run stay
// within maxRunNameBytes; past it descriptions are refused with a warning,
// messages of refused ids are "unknown" and those of recorded ids keep
// their names; a connection that ends gives its names back.
func TestRunNameBudget(t *testing.T) {
	p := New().(*protocol)
	const conns, nameLen = 10, 200
	// Each name costs nameLen+nameCost; the budget fits this many.
	fit := maxRunNameBytes / (nameLen + nameCost)
	var hs []*harness
	var recorded, refused int
	for c := range conns {
		h := newHarness(p, dissect.TCP, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(c)}), 40000), mustAddrPort(t, "127.0.0.1:3883"))
		h.decode = false
		h.off = [2]int64{24, 24}
		hs = append(hs, h)
		for id := range int32(maxIDs) {
			for kind, typ := range []int32{-1, -2} {
				r := h.feed(t, 0, encDescription(typ, id, longName(c, kind, int(id), nameLen), 0), false)[0]
				switch {
				case len(r.Warnings) == 0:
					recorded++
				case strings.Contains(r.Warnings[0], "name not recorded: the name tables of all connections hold their bound (16 MiB)"):
					refused++
				default:
					t.Fatalf("conn %d id %d: warnings %q", c, id, r.Warnings)
				}
				if p.names.held > maxRunNameBytes {
					t.Fatalf("held %d bytes, bound %d", p.names.held, maxRunNameBytes)
				}
			}
		}
	}
	if recorded != fit || refused != conns*2*maxIDs-fit {
		t.Errorf("recorded %d refused %d, want %d and %d", recorded, refused, fit, conns*2*maxIDs-fit)
	}
	if want := int64(fit * (nameLen + nameCost)); p.names.held != want {
		t.Errorf("held %d, want %d", p.names.held, want)
	}
	// The last connection had all its names refused: its messages are
	// unknown; the first one's are named.
	msg := encMsg(1, 2, 7, 7, 1, []byte("abcdefgh"))
	if r := hs[conns-1].feed(t, 0, msg, false)[0]; r.Type != TypeUnknown {
		t.Errorf("refused type: record type %q, want %q", r.Type, TypeUnknown)
	}
	if r := hs[0].feed(t, 0, msg, false)[0]; r.Type != longName(0, 1, 7, nameLen) {
		t.Errorf("recorded type: record type %q", r.Type)
	}
	// A renaming that does not fit is refused too, the old name kept.
	if r := hs[0].feed(t, 0, encDescription(-2, 7, longName(0, 1, 7, nameLen)+strings.Repeat("y", 40), 0), false)[0]; len(r.Warnings) == 0 {
		t.Error("a longer name past the budget was accepted")
	}
	// The first connection ends: its names are given back, and a new
	// connection can name its ids again.
	hs[0].parser.(dissect.Ender).End(hs[0].ctx(0, true))
	if want := int64((fit - 2*maxIDs) * (nameLen + nameCost)); p.names.held != want {
		t.Errorf("after an end: held %d, want %d", p.names.held, want)
	}
	h := newHarness(p, dissect.TCP, mustAddrPort(t, "10.1.0.1:40000"), mustAddrPort(t, "127.0.0.1:3883"))
	h.off = [2]int64{24, 24}
	h.feed(t, 0, encDescription(-2, 7, "vrpn_Tracker Pos_Quat", 0), false)
	if r := h.feed(t, 0, msg, false)[0]; r.Type != "vrpn_Tracker Pos_Quat" {
		t.Errorf("after an end: type %q", r.Type)
	}
	for _, h := range hs[1:] {
		h.parser.(dissect.Ender).End(h.ctx(0, true))
	}
	h.parser.(dissect.Ender).End(h.ctx(0, true))
	if p.names.held != 0 {
		t.Errorf("every connection ended, %d bytes still held", p.names.held)
	}
}

// TestRunNameBudgetRoutes: the table a UDP route reads is released when
// its connection has ended and the route goes, not before.
func TestRunNameBudgetRoutes(t *testing.T) {
	p := New().(*protocol)
	tcp := newHarness(p, dissect.TCP, mustAddrPort(t, "127.0.0.1:41047"), mustAddrPort(t, "127.0.0.1:56707"))
	tcp.off = [2]int64{24, 24}
	tcp.feed(t, 0, encDescription(-2, 4, namePosQuat, 0), false)
	tcp.feed(t, 1, encMsg(1, 2, 38929, -3, 2, []byte("127.0.0.1\x00")), false) // routes dir 0's table
	held := p.names.held
	if held != int64(len(namePosQuat)+nameCost) {
		t.Fatalf("held %d", held)
	}
	tcp.parser.(dissect.Ender).End(tcp.ctx(0, true))
	if p.names.held != held {
		t.Errorf("routed table released at the end of its connection: held %d", p.names.held)
	}
	body := make([]byte, 64)
	u := newHarness(p, dissect.UDP, mustAddrPort(t, "127.0.0.1:39256"), mustAddrPort(t, "127.0.0.1:38929"))
	if r := u.feed(t, 0, encMsg(1, 2, 0, 4, 0, body), true)[0]; r.Type != namePosQuat {
		t.Errorf("UDP after the TCP end: type %q", r.Type)
	}
	// Another connection announces the same address: the route moves, the
	// ended table goes.
	tcp2 := newHarness(p, dissect.TCP, mustAddrPort(t, "127.0.0.1:41048"), mustAddrPort(t, "127.0.0.1:56708"))
	tcp2.off = [2]int64{24, 24}
	tcp2.feed(t, 1, encMsg(1, 2, 38929, -3, 2, []byte("127.0.0.1\x00")), false)
	if p.names.held != 0 {
		t.Errorf("route moved: held %d, want 0", p.names.held)
	}
}

// TestRunNameBudgetNote: a connection whose names were refused says so in
// a stream note, through dissect.Stream.
func TestRunNameBudgetNote(t *testing.T) {
	reg, p := registry(t)
	p.names.max = 3 * (10 + nameCost) // room for three 10-byte names
	info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP, Addr: [2]netip.AddrPort{mustAddrPort(t, "127.0.0.1:40000"), mustAddrPort(t, "127.0.0.1:3883")}}}
	var recs []string
	st := dissect.NewStream(info, reg, dissect.SinkFunc(func(r *dissect.Record) error {
		recs = append(recs, r.Type)
		return nil
	}), dissect.StreamOptions{})
	data := []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")
	for id := range int32(5) {
		data = append(data, encDescription(-2, id, fmt.Sprintf("type %04d", id), 0)...)
	}
	for id := range int32(5) {
		data = append(data, encMsg(1, 2, 0, id, 0, nil)...)
	}
	t0 := time.Unix(1, 0)
	st.Data(0, t0, data)
	st.End(0, t0)
	st.End(1, t0)
	want := "cookie type_description type_description type_description type_description type_description type 0000 type 0001 type 0002 unknown unknown"
	if got := strings.Join(recs, " "); got != want {
		t.Errorf("records %s\nwant    %s", got, want)
	}
	notes := strings.Join(st.Notes(), "\n")
	if !strings.Contains(notes, "vrpn: 2 names not recorded: the name tables of all connections held their bound") {
		t.Errorf("notes: %q", notes)
	}
	if p.names.held != 0 {
		t.Errorf("held %d after the end", p.names.held)
	}
}
