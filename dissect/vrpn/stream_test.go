package vrpn

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sort"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// checkTiling checks that recs (one direction, in output order) cover
// [0, total) exactly, in order.
func checkTiling(t testing.TB, what string, recs []*dissect.Record, total int64) {
	t.Helper()
	var off int64
	for _, r := range recs {
		if r.Offset != off || r.Length <= 0 {
			t.Fatalf("%s: record %s at %d+%d, want offset %d", what, r.Type, r.Offset, r.Length, off)
		}
		off += r.Length
	}
	if off != total {
		t.Fatalf("%s: records cover %d bytes, want %d", what, off, total)
	}
}

// dirStream is the synthetic byte stream of one TCP direction, built from
// truth.json messages, with the records it must give.
type dirStream struct {
	d     *truthDir
	data  []byte
	types []string
	msgs  map[int64]*truthMsg // by offset: messages to check value by value
}

func buildDirStream(t testing.TB, c *truthCapture, d *truthDir) *dirStream {
	t.Helper()
	s := &dirStream{d: d, msgs: map[int64]*truthMsg{}}
	s.data = append(s.data, mustHex(t, d.Cookie.Hex)...)
	s.types = append(s.types, TypeCookie)
	add := func(m *truthMsg) {
		s.msgs[int64(len(s.data))] = m
		s.data = append(s.data, m.bytes(t)...)
		typ := m.TypeName
		if st, ok := systemTypes[typ]; ok {
			typ = st
		}
		s.types = append(s.types, typ)
	}
	for _, m := range d.FirstThree {
		add(m)
	}
	descs := encDescriptions(t, d)
	s.data = append(s.data, descs...)
	for i := 0; i < len(d.SenderIDs); i++ {
		s.types = append(s.types, TypeSenderDescription)
	}
	for i := 0; i < len(d.TypeIDs); i++ {
		s.types = append(s.types, TypeTypeDescription)
	}
	for _, m := range d.Descriptions {
		add(m)
	}
	for _, m := range c.Examples {
		if m.Transport == "tcp" && m.From == d.From && m.To == d.To {
			add(m)
		}
	}
	return s
}

// feedChunks feeds both directions of a TCP stream in random chunks,
// interleaving the directions at random.
func feedChunks(st *dissect.Stream, rng *rand.Rand, data [2][]byte, maxChunk int) {
	t0 := time.Unix(1795306106, 0)
	var pos [2]int
	// The cookie of dir 0 comes in one piece, as it does on the wire
	// (README fact 1): dissect.Stream gives up content detection after
	// MaxDetectDatagrams held units even on TCP, so 1-byte chunks from the
	// start would never be detected on a non-default port.
	st.Data(0, t0, data[0][:cookieLen])
	pos[0] = cookieLen
	for pos[0] < len(data[0]) || pos[1] < len(data[1]) {
		d := rng.IntN(2)
		if pos[d] >= len(data[d]) {
			d ^= 1
		}
		n := min(1+rng.IntN(maxChunk), len(data[d])-pos[d])
		st.Data(dissect.Dir(d), t0, data[d][pos[d]:pos[d]+n])
		pos[d] += n
	}
	st.End(0, t0)
	st.End(1, t0)
}

func registry(t testing.TB) (*dissect.Registry, *protocol) {
	t.Helper()
	p := New().(*protocol)
	reg, err := dissect.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	return reg, p
}

// TestStreamChunkings feeds each truth connection, rebuilt as byte streams,
// through dissect.Stream in random chunkings: the records tile each
// direction exactly, carry the expected types in order and decode the
// truth values. The UDP examples are then fed as datagrams on a flow to the
// announced port, through the same protocol value.
func TestStreamChunkings(t *testing.T) {
	tf := loadTruth(t)
	for _, name := range tf.captureNames() {
		c := tf.Captures[name]
		for ci, conn := range c.TCP {
			ds := [2]*dirStream{buildDirStream(t, c, conn.Directions[0]), buildDirStream(t, c, conn.Directions[1])}
			for trial := 0; trial < 12; trial++ {
				t.Run(fmt.Sprintf("%s/conn%d/trial%d", name, ci, trial), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(trial), 7))
					maxChunk := []int{1, 3, 7, 24, 100, 4096}[trial%6]
					reg, p := registry(t)
					var a [2]netip.AddrPort
					for i := range a {
						a[i] = mustAddrPort(t, ds[i].d.From)
					}
					info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP, Addr: a}, Name: [2]string{ds[0].d.From, ds[1].d.From}}
					col := &dissecttest.Collector{}
					st := dissect.NewStream(info, reg, col, dissect.StreamOptions{Decode: trial%4 != 3})
					feedChunks(st, rng, [2][]byte{ds[0].data, ds[1].data}, maxChunk)
					if st.Protocol() == nil {
						t.Fatal("VRPN not detected")
					}
					for i, s := range ds {
						recs := col.From(s.d.From)
						checkTiling(t, s.d.From, recs, int64(len(s.data)))
						if len(recs) != len(s.types) {
							t.Fatalf("dir %d: %d records, want %d", i, len(recs), len(s.types))
						}
						for j, r := range recs {
							if r.Type != s.types[j] || r.Proto != "vrpn" || r.Dst != s.d.To {
								t.Errorf("dir %d record %d: %s %s->%s type %q, want %q", i, j, r.Proto, r.Src, r.Dst, r.Type, s.types[j])
							}
							if m := s.msgs[r.Offset]; m != nil && trial%4 != 3 {
								checkRecord(t, r, m)
							}
						}
					}
					if trial%4 != 3 {
						checkUDPExamples(t, c, reg, p)
					}
				})
			}
		}
	}
}

// checkUDPExamples feeds the capture's UDP decoded_examples, grouped into
// their datagrams (by frame), as a UDP flow; the TCP connection that
// announced the destination has already been fed through reg.
func checkUDPExamples(t *testing.T, c *truthCapture, reg *dissect.Registry, p *protocol) {
	t.Helper()
	frames := map[int][]*truthMsg{}
	var order []int
	for _, m := range c.Examples {
		if m.Transport != "udp" {
			continue
		}
		if frames[m.Frame] == nil {
			order = append(order, m.Frame)
		}
		frames[m.Frame] = append(frames[m.Frame], m)
	}
	sort.Ints(order)
	for _, fr := range order {
		msgs := frames[fr]
		from, to := mustAddrPort(t, msgs[0].From), mustAddrPort(t, msgs[0].To)
		info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 2, Transport: dissect.UDP, Addr: [2]netip.AddrPort{from, to}}, Name: [2]string{msgs[0].From, msgs[0].To}}
		col := &dissecttest.Collector{}
		st := dissect.NewStream(info, reg, col, dissect.StreamOptions{Decode: true})
		var dg []byte
		for _, m := range msgs {
			dg = append(dg, m.bytes(t)...)
		}
		st.Datagram(0, time.Unix(1795306106, 0), dg)
		st.End(0, time.Unix(1795306106, 0))
		if st.Protocol() != p {
			t.Fatalf("frame %d: UDP flow to an announced port not detected", fr)
		}
		checkTiling(t, fmt.Sprint("udp frame ", fr), col.Records, int64(len(dg)))
		if len(col.Records) != len(msgs) {
			t.Fatalf("frame %d: %d records, want %d", fr, len(col.Records), len(msgs))
		}
		for i, r := range col.Records {
			checkRecord(t, r, msgs[i])
		}
	}
}

// TestStreamGapAndLateJoin: a gap inside a message, and a capture that
// starts mid-stream, are resynchronised on the next plausible header.
func TestStreamGapAndLateJoin(t *testing.T) {
	tf := loadTruth(t)
	c := tf.Captures["c3_multi_device_truth.pcap"]
	d := c.dir("127.0.0.1:3883", "127.0.0.1:55605")
	s := buildDirStream(t, c, d)
	offs := make([]int64, 0, len(s.msgs))
	for off := range s.msgs {
		offs = append(offs, off)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	// The last two messages, and a cut 10 bytes into the one before.
	last, prev, cut := offs[len(offs)-1], offs[len(offs)-2], offs[len(offs)-3]+10
	t0 := time.Unix(1795306106, 0)
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP, Addr: [2]netip.AddrPort{mustAddrPort(t, d.From), mustAddrPort(t, d.To)}}, Name: [2]string{d.From, d.To}}

	t.Run("gap", func(t *testing.T) {
		reg, _ := registry(t)
		col := &dissecttest.Collector{}
		st := dissect.NewStream(info, reg, col, dissect.StreamOptions{Decode: true})
		st.Data(0, t0, s.data[:cut])
		st.Gap(0, t0, 5)
		st.Data(0, t0, s.data[cut+5:])
		st.End(0, t0)
		recs := col.From(d.From)
		checkTiling(t, "gap", recs, int64(len(s.data)))
		n := len(recs)
		if n < 4 || recs[n-1].Offset != last || recs[n-2].Offset != prev || recs[n-3].Type != dissect.TypeSkipped || recs[n-4].Type != dissect.TypeGap {
			for _, r := range recs[max(0, n-5):] {
				t.Logf("%s %d+%d", r.Type, r.Offset, r.Length)
			}
			t.Fatal("want gap, skipped, then the last two messages")
		}
		checkRecord(t, recs[n-1], s.msgs[last])
	})

	t.Run("late join at a message", func(t *testing.T) {
		reg, _ := registry(t)
		reg.AddRule(dissect.Rule{Transport: dissect.TCP, Port: 3883, Proto: reg.Lookup("vrpn")})
		col := &dissecttest.Collector{}
		st := dissect.NewStream(info, reg, col, dissect.StreamOptions{Decode: true})
		st.Data(0, t0, s.data[prev:])
		st.End(0, t0)
		recs := col.From(d.From)
		checkTiling(t, "late join", recs, int64(len(s.data))-prev)
		if len(recs) != 2 || recs[0].Type != TypeUnknown || recs[1].Type != TypeUnknown {
			t.Fatalf("records %v", recs)
		}
		if len(st.Notes()) != 1 {
			t.Errorf("notes %q", st.Notes())
		}
	})

	t.Run("late join inside a message", func(t *testing.T) {
		reg, _ := registry(t)
		reg.AddRule(dissect.Rule{Transport: dissect.TCP, Port: 3883, Proto: reg.Lookup("vrpn")})
		col := &dissecttest.Collector{}
		st := dissect.NewStream(info, reg, col, dissect.StreamOptions{Decode: true})
		// The capture starts 10 bytes into a message; more messages follow
		// (a copy, numbered on from the last as one stream's are: a run
		// of headers is confirmed by its sequence numbers).
		in := append(append([]byte(nil), s.data[cut:]...), s.data[offs[0]:]...)
		seq := binary.BigEndian.Uint32(s.data[last+20:])
		for _, o := range offs {
			seq++
			binary.BigEndian.PutUint32(in[int64(len(s.data))-cut+o-offs[0]+20:], seq)
		}
		st.Data(0, t0, in)
		st.End(0, t0)
		recs := col.From(d.From)
		checkTiling(t, "late join", recs, int64(len(in)))
		want := 1 + 2 + len(s.types) - 1 // skipped, the two messages after the cut, the copy without its cookie
		if len(recs) != want || recs[0].Type != dissect.TypeSkipped || recs[1].Offset != prev-cut || recs[2].Offset != last-cut {
			for _, r := range recs {
				t.Logf("%s %d+%d", r.Type, r.Offset, r.Length)
			}
			t.Fatalf("%d records, want skipped, then %d messages", len(recs), want-1)
		}
		for _, r := range recs[1:] {
			if r.Type == dissect.TypeSkipped || len(r.Warnings) > 1 {
				t.Errorf("record %s at %d, warnings %q", r.Type, r.Offset, r.Warnings)
			}
		}
	})
}
