package vrpn

// Round trips of ping and pong (roundtrip.go): on the real captures, and on
// connections built by hand from the README's wire format.

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// pcapTimes reads the frame times of a classic pcap file (1-based frame
// numbers), independently of the capture package.
func pcapTimes(t *testing.T, file string) map[int]time.Time {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 24 {
		t.Fatalf("%s: no pcap header", file)
	}
	var bo binary.ByteOrder = binary.LittleEndian
	magic := bo.Uint32(b)
	if magic != 0xa1b2c3d4 && magic != 0xa1b23c4d {
		bo = binary.BigEndian
		magic = bo.Uint32(b)
	}
	frac := time.Microsecond
	switch magic {
	case 0xa1b2c3d4:
	case 0xa1b23c4d:
		frac = time.Nanosecond
	default:
		t.Fatalf("%s: not a classic pcap file", file)
	}
	out := map[int]time.Time{}
	for off, n := 24, 1; off+16 <= len(b); n++ {
		sec, sub, incl := bo.Uint32(b[off:]), bo.Uint32(b[off+4:]), int(bo.Uint32(b[off+8:]))
		out[n] = time.Unix(int64(sec), int64(sub)*int64(frac))
		off += 16 + incl
	}
	return out
}

// TestCaptureRTT checks rtt_ms on the real captures. In each, one client
// pings the server once per remote object and the server answers each
// ping (README fact 17), so every pong has a ping waiting; the first pong
// of each sender answers its first ping, whose frames truth.json names,
// and its rtt_ms is the difference of the two frames' pcap times.
func TestCaptureRTT(t *testing.T) {
	tf := loadTruth(t)
	reg, _ := registry(t)
	for _, name := range tf.captureNames() {
		if !strings.HasSuffix(name, ".pcap") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("testdata", name)
			frames := pcapTimes(t, file)
			recs := dissecttest.Decode(t, reg, file)
			firsts := map[[3]string]*dissect.Record{} // first ping/pong per src, sender, type
			pongs := 0
			for _, r := range recs {
				if r.Type != namePing && r.Type != namePong {
					continue
				}
				s, _ := r.Fields.Get("sender")
				k := [3]string{r.Src, s.Str(), r.Type}
				if firsts[k] == nil {
					firsts[k] = r
				}
				if r.Type == namePong {
					pongs++
					if v, ok := r.Fields.Get("rtt_ms"); !ok || v.Float() <= 0 || v.Float() > 1000 {
						t.Errorf("pong of %s at %s+%d: rtt_ms %v (present %v), want a few ms", s.Str(), r.Src, r.Offset, v.Float(), ok)
					}
				}
			}
			if pongs == 0 {
				t.Fatal("no pong")
			}
			c := tf.Captures[name]
			checked := 0
			for _, pm := range c.Examples {
				if pm.TypeName != namePong || pm.SenderName == nil {
					continue
				}
				var qm *truthMsg
				for _, m := range c.Examples {
					if m.TypeName == namePing && m.From == pm.To && m.To == pm.From && m.SenderName != nil && *m.SenderName == *pm.SenderName {
						qm = m
					}
				}
				if qm == nil {
					t.Fatalf("no ping example for the pong of %s", *pm.SenderName)
				}
				pong := firsts[[3]string{pm.From, *pm.SenderName, namePong}]
				ping := firsts[[3]string{qm.From, *qm.SenderName, namePing}]
				if pong == nil || ping == nil {
					t.Fatalf("%s: ping or pong record missing", *pm.SenderName)
				}
				for _, x := range []struct {
					r *dissect.Record
					m *truthMsg
				}{{ping, qm}, {pong, pm}} {
					if seq, _ := x.r.Fields.Get("sequence"); seq.Uint() != uint64(x.m.Header.Seq) || !x.r.Time.Equal(frames[x.m.Frame]) {
						t.Fatalf("%s: first %s is sequence %d at %v, truth's example sequence %d in frame %d at %v", *pm.SenderName, x.r.Type, seq.Uint(), x.r.Time, x.m.Header.Seq, x.m.Frame, frames[x.m.Frame])
					}
				}
				want := float64(frames[pm.Frame].Sub(frames[qm.Frame])) / 1e6
				if v, _ := pong.Fields.Get("rtt_ms"); v.Float() != want {
					t.Errorf("%s: rtt_ms %v, want %v (frames %d and %d)", *pm.SenderName, v.Float(), want, qm.Frame, pm.Frame)
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("truth has no pong example")
			}
		})
	}
}

// rttConn is a TCP connection built by hand from the README's wire format:
// the client (dir 0) describes sender 3 "Tracker0", 4 "Pose0" and type 7
// "vrpn_Base ping_message"; the server (dir 1) describes sender 5
// "Tracker0", 6 "Pose0" and type 9 "vrpn_Base pong_message", and also type
// 8 "vrpn_Base ping_message" for the hostile orders. Ids differ between
// directions, as mainline's do (fact 5).
type rttConn struct {
	st   *dissect.Stream
	col  *dissecttest.Collector
	t0   time.Time
	seq  [2]uint32
	reg  *dissect.Registry
	test *testing.T
}

const (
	clientTracker, clientPose, clientPing = 3, 4, 7
	serverTracker, serverPose, serverPong = 5, 6, 9
	serverPing                            = 8
	undescribed                           = 99
)

func newRTTConn(t *testing.T) *rttConn {
	reg, _ := registry(t)
	a, b := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:3883")
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP, Addr: [2]netip.AddrPort{a, b}}, Name: [2]string{a.String(), b.String()}}
	c := &rttConn{col: &dissecttest.Collector{}, t0: time.Unix(1795306100, 0), reg: reg, test: t}
	c.st = dissect.NewStream(info, reg, c.col, dissect.StreamOptions{Decode: true})
	cookie := []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")
	d0 := append(append([]byte(nil), cookie...), encDescription(-1, clientTracker, "Tracker0", 0)...)
	d0 = append(d0, encDescription(-1, clientPose, "Pose0", 1)...)
	d0 = append(d0, encDescription(-2, clientPing, namePing, 2)...)
	d1 := append(append([]byte(nil), cookie...), encDescription(-1, serverTracker, "Tracker0", 0)...)
	d1 = append(d1, encDescription(-1, serverPose, "Pose0", 1)...)
	d1 = append(d1, encDescription(-2, serverPong, namePong, 2)...)
	d1 = append(d1, encDescription(-2, serverPing, namePing, 3)...)
	c.seq = [2]uint32{3, 4}
	c.st.Data(0, c.t0, d0)
	c.st.Data(1, c.t0, d1)
	return c
}

// send sends a message with an empty body (or body) on dir, captured
// at t0 + at, and returns its record.
func (c *rttConn) send(dir dissect.Dir, at time.Duration, sender, typ int32, body []byte) *dissect.Record {
	c.test.Helper()
	n := len(c.col.Records)
	c.st.Data(dir, c.t0.Add(at), encMsg(1795306100, 0, sender, typ, c.seq[dir], body))
	c.seq[dir]++
	if len(c.col.Records) != n+1 {
		c.test.Fatalf("%d records for one message", len(c.col.Records)-n)
	}
	r := c.col.Records[n]
	dissecttest.CheckDeclared(c.test, c.reg, []*dissect.Record{r})
	return r
}

func (c *rttConn) ping(at time.Duration, sender int32) {
	c.test.Helper()
	if r := c.send(0, at, sender, clientPing, nil); r.Type != namePing {
		c.test.Fatalf("ping came out as %q %q", r.Type, r.Warnings)
	}
}

// pong sends a pong from the server's sender and checks its rtt_ms: want
// < 0 means none.
func (c *rttConn) pong(at time.Duration, sender int32, want float64) {
	c.test.Helper()
	r := c.send(1, at, sender, serverPong, nil)
	checkRTT(c.test, r, want)
}

func checkRTT(t *testing.T, r *dissect.Record, want float64) {
	t.Helper()
	v, ok := r.Fields.Get("rtt_ms")
	switch {
	case r.Type != namePong:
		t.Fatalf("pong came out as %q %q", r.Type, r.Warnings)
	case want < 0 && ok:
		t.Errorf("pong at %v: rtt_ms %v, want none", r.Time, v.Float())
	case want >= 0 && (!ok || v.Kind() != dissect.KindFloat || v.Float() != want):
		t.Errorf("pong at %v: rtt_ms %v (present %v), want %v", r.Time, v.Float(), ok, want)
	}
}

const ms = time.Millisecond

// TestPingPongRTT checks the matching of pongs to pings on hand-built
// frames; each expected rtt_ms is the difference of the capture times the
// test gives the frames.
func TestPingPongRTT(t *testing.T) {
	t.Run("answered", func(t *testing.T) {
		c := newRTTConn(t)
		c.ping(1000*ms, clientTracker)
		c.pong(1002500*time.Microsecond, serverTracker, 2.5)
		c.pong(1003*ms, serverTracker, -1) // the ping is answered: a broadcast pong
	})
	t.Run("pong without ping", func(t *testing.T) {
		c := newRTTConn(t)
		c.pong(1000*ms, serverTracker, -1)
		c.ping(1100*ms, clientTracker) // the earlier pong does not answer a later ping
		c.pong(1500*ms, serverTracker, 400)
	})
	t.Run("oldest first", func(t *testing.T) {
		// Five remote objects of one device ping together (fact 17).
		c := newRTTConn(t)
		for i := range 5 {
			c.ping(time.Duration(2000+i)*ms, clientTracker)
		}
		for i := range 5 {
			c.pong(time.Duration(2010+2*i)*ms, serverTracker, float64(10+i))
		}
		c.pong(2100*ms, serverTracker, -1)
	})
	t.Run("by sender name", func(t *testing.T) {
		c := newRTTConn(t)
		c.ping(1000*ms, clientTracker)
		c.ping(1001*ms, clientPose)
		c.pong(1004*ms, serverPose, 3) // Pose0 answered first
		c.pong(1006*ms, serverTracker, 6)
		// The client's id of Tracker0 is 3; the server's 3 is no sender.
		c.ping(1010*ms, clientTracker)
		c.pong(1011*ms, clientTracker, -1)
		c.pong(1012*ms, serverTracker, 2)
	})
	t.Run("same direction", func(t *testing.T) {
		// A ping from the server is not answered by the server's pong.
		c := newRTTConn(t)
		if r := c.send(1, 1000*ms, serverTracker, serverPing, nil); r.Type != namePing {
			t.Fatalf("server ping came out as %q", r.Type)
		}
		c.pong(1001*ms, serverTracker, -1)
	})
	t.Run("undescribed sender", func(t *testing.T) {
		// An id never described names nothing: the same number in the
		// other direction is another sender.
		c := newRTTConn(t)
		c.ping(1000*ms, undescribed)
		c.pong(1001*ms, undescribed, -1)
		c.pong(1002*ms, serverTracker, -1)
	})
	t.Run("with bodies", func(t *testing.T) {
		// A body is unexpected (written as data, with a warning) but
		// the messages are still a ping and its pong.
		c := newRTTConn(t)
		if r := c.send(0, 1000*ms, clientTracker, clientPing, []byte{1, 2, 3}); len(r.Warnings) != 1 {
			t.Fatalf("ping with a body: warnings %q", r.Warnings)
		}
		r := c.send(1, 1007*ms, serverTracker, serverPong, []byte{4})
		checkRTT(t, r, 7)
		if v, ok := r.Fields.Get("data"); !ok || string(v.Raw()) != "\x04" || len(r.Warnings) != 1 {
			t.Errorf("pong with a body: data %v, warnings %q", v, r.Warnings)
		}
	})
	t.Run("capture time backwards", func(t *testing.T) {
		// Out-of-order capture times give a negative round trip, as the
		// capture says.
		c := newRTTConn(t)
		c.ping(1000*ms, clientTracker)
		r := c.send(1, 999*ms, serverTracker, serverPong, nil)
		if v, ok := r.Fields.Get("rtt_ms"); !ok || v.Float() != -1 {
			t.Errorf("rtt_ms %v (present %v), want -1", v.Float(), ok)
		}
	})
	t.Run("pings of one sender bounded", func(t *testing.T) {
		// Past PerKey waiting pings of one sender, the oldest are
		// forgotten.
		maxPings := exchangeRules().PerKey
		c := newRTTConn(t)
		for i := range maxPings + 2 {
			c.ping(time.Duration(1000+i)*ms, clientTracker)
		}
		for i := 2; i < maxPings+2; i++ {
			c.pong(1100*ms, serverTracker, float64(100-i))
		}
		c.pong(1100*ms, serverTracker, -1)
	})
}

// TestPingSendersBounded describes one sender more than a direction keeps
// waiting pings for (one ping each): the oldest ping is forgotten.
func TestPingSendersBounded(t *testing.T) {
	reg, _ := registry(t)
	a, b := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:3883")
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP, Addr: [2]netip.AddrPort{a, b}}, Name: [2]string{a.String(), b.String()}}
	col := &dissecttest.Collector{}
	st := dissect.NewStream(info, reg, col, dissect.StreamOptions{Decode: true})
	t0 := time.Unix(1795306100, 0)
	cookie := []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")
	n := exchangeRules().Bound + 1
	var d [2][]byte
	for dir := range d {
		d[dir] = append(d[dir], cookie...)
		for i := range n {
			// The server numbers its senders from 1000.
			d[dir] = append(d[dir], encDescription(-1, int32(1000*dir+i), "Dev"+strconv.Itoa(i), uint32(i))...)
		}
		d[dir] = append(d[dir], encDescription(-2, 0, []string{namePing, namePong}[dir], uint32(n))...)
		st.Data(dissect.Dir(dir), t0, d[dir])
	}
	var seq [2]uint32
	msg := func(dir dissect.Dir, at time.Duration, sender int32) *dissect.Record {
		k := len(col.Records)
		st.Data(dir, t0.Add(at), encMsg(1, 0, sender, 0, seq[dir], nil))
		seq[dir]++
		if len(col.Records) != k+1 {
			t.Fatalf("%d records for one message", len(col.Records)-k)
		}
		return col.Records[k]
	}
	for i := range n {
		msg(0, time.Duration(i)*ms, int32(i))
	}
	for i := range n {
		r := msg(1, 1000*ms, int32(1000+i))
		want := float64(1000 - i) // ping i at i ms
		if i == 0 {
			want = -1
		}
		checkRTT(t, r, want)
	}
	dissecttest.CheckDeclared(t, reg, col.Records)
	st.End(0, t0)
	st.End(1, t0)
	want := "vrpn: stream 1: 1 request forgotten unanswered past the bound of 512 per direction (8 per key)"
	if notes := st.Notes(); len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want %q", notes, want)
	}
}
