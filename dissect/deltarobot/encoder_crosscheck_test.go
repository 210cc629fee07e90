package deltarobot_test

// Cross-check of the decoder against the encoder in internal/testenc/deltaenc,
// which was written from the protocol text and protocols.md §4 without
// reading the decoder. Every expected record (type, offset, length, values,
// warnings, rtt_ms) comes from what the encoder put on the wire; nothing
// here is derived from running the decoder.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

var (
	ccClient = netip.MustParseAddrPort("192.0.2.10:51234")
	ccServer = netip.MustParseAddrPort("192.0.2.1:4000")
	ccT0     = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
)

// ccDelivery is one call into the Stream: a chunk [start,end) of direction dir
// at time at, or (gap > 0) a gap of that many bytes.
type ccDelivery struct {
	dir        int
	at         time.Duration
	start, end int64
	gap        int64
}

// ccChunker splits one write of n bytes into chunk lengths.
type ccChunker struct {
	name  string
	split func(r *rand.Rand, n int) []int
	// across: cut each direction's whole stream instead of each write (a
	// chunk then gets the time of the write holding its last byte, like a
	// TCP segment that coalesces writes).
	across bool
}

var ccChunkers = []ccChunker{
	{name: "writes", split: func(_ *rand.Rand, n int) []int { return []int{n} }},
	{name: "bytes", split: func(_ *rand.Rand, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}},
	{name: "random", split: ccRandomSplit(1, 23)},
	{name: "coalesced", split: ccRandomSplit(1, 150), across: true},
}

func ccRandomSplit(lo, hi int) func(r *rand.Rand, n int) []int {
	return func(r *rand.Rand, n int) []int {
		var out []int
		for n > 0 {
			k := min(n, lo+r.IntN(hi-lo+1))
			out = append(out, k)
			n -= k
		}
		return out
	}
}

// ccPlan returns the deliveries of a session under a chunker, in time order.
func ccPlan(s *deltaenc.Session, ch ccChunker, seed uint64) []ccDelivery {
	r := rand.New(rand.NewPCG(seed, 99))
	var out []ccDelivery
	if !ch.across {
		for _, w := range s.Sends {
			off := w.Start
			for _, k := range ch.split(r, int(w.End-w.Start)) {
				out = append(out, ccDelivery{dir: w.Dir, at: w.At, start: off, end: off + int64(k)})
				off += int64(k)
			}
		}
		return out
	}
	for d := range 2 {
		off := int64(0)
		for _, k := range ch.split(r, len(s.Stream[d])) {
			at, _ := s.SentAt(d, off+int64(k)-1)
			out = append(out, ccDelivery{dir: d, at: at, start: off, end: off + int64(k)})
			off += int64(k)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// ccWithGap removes bytes [from,to) of direction dir from p and reports them
// as a gap just before the first chunk that follows them.
func ccWithGap(p []ccDelivery, dir int, from, to int64) []ccDelivery {
	var out []ccDelivery
	done := false
	for _, d := range p {
		if d.dir != dir || d.end <= from || d.start >= to && done {
			out = append(out, d)
			continue
		}
		if d.start < from {
			out = append(out, ccDelivery{dir: dir, at: d.at, start: d.start, end: from})
		}
		if d.end > to {
			if !done {
				out = append(out, ccDelivery{dir: dir, at: d.at, start: from, end: to, gap: to - from})
				done = true
			}
			out = append(out, ccDelivery{dir: dir, at: d.at, start: max(d.start, to), end: d.end})
		}
	}
	if !done {
		out = append(out, ccDelivery{dir: dir, at: p[len(p)-1].at, start: from, end: to, gap: to - from})
	}
	return out
}

// ccFromCut drops the bytes before cut[d] of each direction and rebases the
// offsets, as in a capture that starts mid-stream.
func ccFromCut(p []ccDelivery, cut [2]int64) []ccDelivery {
	var out []ccDelivery
	for _, d := range p {
		c := cut[d.dir]
		if d.end <= c {
			continue
		}
		d.start, d.end = max(d.start, c)-c, d.end-c
		out = append(out, d)
	}
	return out
}

// ccRun feeds the deliveries through a Stream decoding as deltarobot and
// returns the records of each direction.
func ccRun(t testing.TB, streams [2][]byte, p []ccDelivery) [2][]*dissect.Record {
	t.Helper()
	reg := dissecttest.Registry(t, []string{rule}, deltarobot.New())
	info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP, Addr: [2]netip.AddrPort{ccClient, ccServer}}, Name: [2]string{ccClient.String(), ccServer.String()}}
	var got [2][]*dissect.Record
	sink := dissecttest.SplitSink(t, info.Name, &got)
	st := dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: true})
	var last time.Duration
	for _, d := range p {
		last = max(last, d.at)
		if d.gap > 0 {
			st.Gap(dissect.Dir(d.dir), ccT0.Add(d.at), d.gap)
			continue
		}
		st.Data(dissect.Dir(d.dir), ccT0.Add(d.at), streams[d.dir][d.start:d.end])
	}
	st.End(0, ccT0.Add(last+time.Millisecond))
	st.End(1, ccT0.Add(last+time.Millisecond))
	if st.Err() != nil {
		t.Fatal(st.Err())
	}
	return got
}

// ccCompletes returns the index of the delivery holding byte off of dir.
func ccCompletes(p []ccDelivery, dir int, off int64) int {
	for i, d := range p {
		if d.dir == dir && d.gap == 0 && off >= d.start && off < d.end {
			return i
		}
	}
	return -1
}

// ccRttWant is whether a pong's rtt_ms is expected, and its value.
type ccRttWant struct {
	want bool
	ms   float64
}

// ccExpectRTT says, for each pong record of the client (by offset), whether
// rtt_ms is expected and its value: the ping record with the same id must
// have been emitted by an earlier delivery than the pong. A record is
// emitted by the delivery holding its byte Ready-1 (its last byte, or the
// last byte of the chain the decoder resynchronised on), but it is parsed
// and stamped with the time of the delivery holding its own last byte:
// rtt_ms is the difference of those.
func ccExpectRTT(truth [2][]deltaenc.Message, p []ccDelivery) map[int64]ccRttWant {
	pingAt := map[uint64]int{}
	pingEnd := map[uint64]int{}
	for i, m := range truth[deltaenc.Server] {
		if m.Type == deltaenc.TypePing {
			pingAt[m.PingID] = ccCompletes(p, deltaenc.Server, m.Ready-1)
			if ccCutChain(truth[deltaenc.Server], i) {
				pingAt[m.PingID] = len(p) // at the direction's end: after every delivery
			}
			pingEnd[m.PingID] = ccCompletes(p, deltaenc.Server, m.Offset+m.Length-1)
		}
	}
	out := map[int64]ccRttWant{}
	for _, m := range truth[deltaenc.Client] {
		if m.Type != deltaenc.TypePong {
			continue
		}
		q := ccCompletes(p, deltaenc.Client, m.Ready-1)
		i, ok := pingAt[m.PingID]
		if !ok || i < 0 || i >= q {
			out[m.Offset] = ccRttWant{}
			continue
		}
		qe, ie := ccCompletes(p, deltaenc.Client, m.Offset+m.Length-1), pingEnd[m.PingID]
		out[m.Offset] = ccRttWant{want: true, ms: float64(p[qe].at-p[ie].at) / float64(time.Millisecond)}
	}
	return out
}

// ccCutChain reports whether msgs[i] is in a resynchronisation chain
// that the direction's end cuts short (fewer than SyncRun messages and
// no magic after a skipped run or a gap): the decoder confirms such a
// chain only at the direction's end (Ctx.End), never before more data or
// a gap, so its messages are emitted after every delivery.
func ccCutChain(msgs []deltaenc.Message, i int) bool {
	ready := msgs[i].Ready
	j := i
	for j > 0 && !msgs[j-1].IsEvent() && msgs[j-1].Ready == ready {
		j--
	}
	if j == 0 || !msgs[j-1].IsEvent() {
		return false // not a chain after a skipped run or a gap
	}
	n := 0
	for k := j; k < len(msgs) && !msgs[k].IsEvent() && msgs[k].Ready == ready; k++ {
		if msgs[k].Type == deltaenc.TypeMagic && msgs[k].Magic == deltaenc.MagicValue {
			return false
		}
		n++
	}
	return n < deltaenc.SyncRun && ready == msgs[len(msgs)-1].End()
}

// ccCheck compares the records of one direction with the encoder's truth.
func ccCheck(t testing.TB, label string, got []*dissect.Record, want []deltaenc.Message, rtt map[int64]ccRttWant) {
	t.Helper()
	n := 0
	for i := range max(len(got), len(want)) {
		if n >= 8 {
			t.Errorf("%s: more differences follow", label)
			return
		}
		switch {
		case i >= len(got):
			t.Errorf("%s: record %d missing, want %s", label, i, want[i].String())
			n++
			continue
		case i >= len(want):
			t.Errorf("%s: extra record %d: %s", label, i, dissecttest.DescribeRecord(got[i]))
			n++
			continue
		}
		if err := ccCompare(got[i], &want[i], rtt); err != nil {
			t.Errorf("%s: record %d: %v\n got: %s\nwant: %s", label, i, err, dissecttest.DescribeRecord(got[i]), want[i].String())
			n++
		}
	}
}

// ccKeys returns the field keys of r, in order.
// ccIDHex checks a ping's or pong's id_hex: the encoder's id as "0x" and 16
// lower-case hex digits (docs/protocols.md), and the table's summary begins
// with the same form.
func ccIDHex(r *dissect.Record, id uint64) error {
	want := fmt.Sprintf("0x%016x", id)
	if v, ok := r.Fields.Get("id_hex"); !ok || v.Kind() != dissect.KindString || v.Str() != want {
		return fmt.Errorf("id_hex %v, want %q", v, want)
	}
	if !strings.HasPrefix(r.Summary, "id="+want) {
		return fmt.Errorf("summary %q, want it to begin with id=%s", r.Summary, want)
	}
	return nil
}

func ccKeys(r *dissect.Record) string {
	var k []string
	for _, f := range r.Fields {
		k = append(k, f.Key)
	}
	return strings.Join(k, ",")
}

func ccEqF32(v dissect.Value, want float32) bool {
	if v.Kind() != dissect.KindFloat32 && v.Kind() != dissect.KindFloat {
		return false
	}
	return math.Float32bits(float32(v.Float())) == math.Float32bits(want)
}

func ccGetU(r *dissect.Record, key string) (uint64, error) {
	v, ok := r.Fields.Get(key)
	if !ok || (v.Kind() != dissect.KindUint && v.Kind() != dissect.KindInt) {
		return 0, fmt.Errorf("field %q missing or not an integer", key)
	}
	return v.Uint(), nil
}

func ccCompare(r *dissect.Record, m *deltaenc.Message, rtt map[int64]ccRttWant) error {
	if r.Type != m.Type || r.Offset != m.Offset || r.Length != m.Length {
		return fmt.Errorf("type/offset/length differ")
	}
	if r.Proto != "deltarobot" || r.Transport != dissect.TCP {
		return fmt.Errorf("proto %q transport %v", r.Proto, r.Transport)
	}
	switch m.Warn {
	case truth.Yes:
		if len(r.Warnings) == 0 {
			return fmt.Errorf("a warning is expected")
		}
	case truth.No:
		if len(r.Warnings) != 0 {
			return fmt.Errorf("no warning is expected")
		}
	}
	switch m.Type {
	case deltaenc.TypeSkipped:
		if v, ok := r.Fields.Get("reason"); !ok || v.Str() == "" {
			return fmt.Errorf("skipped without a reason")
		}
	case deltaenc.TypeGap:
		if len(r.Fields) != 0 {
			return fmt.Errorf("gap with fields")
		}
	case deltaenc.TypeMagic:
		if v, ok := r.Fields.Get("magic"); !ok || v.Kind() != dissect.KindString || v.Str() != m.Magic || ccKeys(r) != "magic" {
			return fmt.Errorf("magic field")
		}
	case deltaenc.TypeVersion:
		if v, err := ccGetU(r, "version"); err != nil || v != uint64(m.Version) || ccKeys(r) != "version" {
			return fmt.Errorf("version field (%v)", err)
		}
	case deltaenc.TypeActuatorPosition, deltaenc.TypeCurrentDirection, deltaenc.TypeDesiredDirection:
		if ccKeys(r) != "x,y,z,u" {
			return fmt.Errorf("ccKeys %q, want x,y,z,u", ccKeys(r))
		}
		for i, f := range r.Fields {
			if !ccEqF32(f.Value, m.Vec[i]) {
				return fmt.Errorf("%s is not exactly %v", f.Key, m.Vec[i])
			}
		}
	case deltaenc.TypePing:
		if v, err := ccGetU(r, "id"); err != nil || v != m.PingID || ccKeys(r) != "id,id_hex" {
			return fmt.Errorf("ping id (%v), keys %q", err, ccKeys(r))
		}
		if err := ccIDHex(r, m.PingID); err != nil {
			return err
		}
	case deltaenc.TypePong:
		if v, err := ccGetU(r, "id"); err != nil || v != m.PingID || r.Fields[0].Key != "id" {
			return fmt.Errorf("pong id (%v)", err)
		}
		if err := ccIDHex(r, m.PingID); err != nil {
			return err
		}
		v, has := r.Fields.Get("rtt_ms")
		w := rtt[m.Offset]
		if m.RTT != truth.Any && has != w.want {
			return fmt.Errorf("rtt_ms present %v, want %v", has, w.want)
		}
		if has && w.want && math.Abs(v.Float()-w.ms) > 1e-6 {
			return fmt.Errorf("rtt_ms %v, want %v", v.Float(), w.ms)
		}
		if has && ccKeys(r) != "id,id_hex,rtt_ms" || !has && ccKeys(r) != "id,id_hex" {
			return fmt.Errorf("ccKeys %q", ccKeys(r))
		}
	case deltaenc.TypeEndOfTransmission:
		if v, ok := r.Fields.Get("reason"); !ok || v.Kind() != dissect.KindString || v.Str() != m.Reason || ccKeys(r) != "reason" {
			return fmt.Errorf("reason field")
		}
	case deltaenc.TypeCurve:
		v, ok := r.Fields.Get("points")
		if !ok || v.Kind() != dissect.KindArray || ccKeys(r) != "points" {
			return fmt.Errorf("points field")
		}
		pts := v.Items()
		if len(pts) != len(m.Points) {
			return fmt.Errorf("%d points, want %d", len(pts), len(m.Points))
		}
		for i, p := range pts {
			xyz := p.Value.Items()
			if p.Value.Kind() != dissect.KindArray || len(xyz) != 3 {
				return fmt.Errorf("point %d is not [x, y, z]", i)
			}
			for j := range 3 {
				if !ccEqF32(xyz[j].Value, m.Points[i][j]) {
					return fmt.Errorf("point %d[%d] is not exactly %v", i, j, m.Points[i][j])
				}
			}
		}
	case deltaenc.TypeUnknown:
		if v, err := ccGetU(r, "message_id"); err != nil || v != uint64(m.ID) {
			return fmt.Errorf("message_id (%v)", err)
		}
		if v, ok := r.Fields.Get("data"); !ok || v.Kind() != dissect.KindBytes || !bytes.Equal(v.Raw(), m.Data) {
			return fmt.Errorf("data field")
		}
		if ccKeys(r) != "message_id,data" {
			return fmt.Errorf("ccKeys %q", ccKeys(r))
		}
	default:
		return fmt.Errorf("no ccCheck for type %q", m.Type)
	}
	return nil
}

// ccCrossCheck runs one session under one plan and compares both directions.
func ccCrossCheck(t testing.TB, label string, streams [2][]byte, truth [2][]deltaenc.Message, p []ccDelivery) {
	t.Helper()
	got := ccRun(t, streams, p)
	rtt := ccExpectRTT(truth, p)
	for d := range 2 {
		ccCheck(t, label+" "+deltaenc.RoleName(d), got[d], truth[d], rtt)
	}
}

func TestEncoderCrossCheckSessions(t *testing.T) {
	for seed := range uint64(4) {
		for _, broken := range []bool{false, true} {
			s := deltaenc.NewSession(deltaenc.Options{Seed: seed, Broken: broken, Ticks: 24 + int(seed)*7})
			for _, ch := range ccChunkers {
				label := fmt.Sprintf("seed %d broken %v chunks %s", seed, broken, ch.name)
				ccCrossCheck(t, label, s.Stream, s.Truth, ccPlan(s, ch, seed))
			}
		}
	}
}

// TestEncoderCrossCheckGaps drops a range of bytes of one direction at
// several places (the encoder's ApplyGap says what the decoder should emit:
// the message cut by the gap's start skipped, the gap, a skipped run up to
// the first offset where three known messages start).
func TestEncoderCrossCheckGaps(t *testing.T) {
	tried, checked := 0, 0
	for seed := range uint64(4) {
		s := deltaenc.NewSession(deltaenc.Options{Seed: seed, Ticks: 30, Broken: seed%2 == 1})
		r := rand.New(rand.NewPCG(seed, 7))
		for range 12 {
			dir := deltaenc.Server
			if r.IntN(4) == 0 {
				dir = deltaenc.Client
			}
			n := int64(len(s.Stream[dir]))
			from := 20 + r.Int64N(n/2)
			to := from + 1 + r.Int64N(80)
			tried++
			var truth [2][]deltaenc.Message
			truth[dir^1] = s.Truth[dir^1]
			var err error
			truth[dir], err = deltaenc.ApplyGap(s.Stream[dir], s.Truth[dir], from, min(to, n-1))
			if err != nil {
				continue // the encoder cannot tell what a decoder does here
			}
			checked++
			for _, ch := range ccChunkers[2:] {
				p := ccWithGap(ccPlan(s, ch, seed), dir, from, min(to, n-1))
				label := fmt.Sprintf("seed %d gap %s [%d,%d) chunks %s", seed, deltaenc.RoleName(dir), from, min(to, n-1), ch.name)
				ccCrossCheck(t, label, s.Stream, truth, p)
			}
		}
	}
	t.Logf("%d of %d gaps had a definite truth", checked, tried)
	if checked < tried/2 {
		t.Errorf("only %d of %d gaps had a definite truth", checked, tried)
	}
}

// TestEncoderCrossCheckMidstream starts both directions inside a message
// whose next two bytes have an undefined size code, as in a capture begun
// mid-conversation.
func TestEncoderCrossCheckMidstream(t *testing.T) {
	for seed := range uint64(3) {
		s := deltaenc.NewSession(deltaenc.Options{Seed: seed, Ticks: 30})
		var cut [2]int64
		var streams [2][]byte
		var truth [2][]deltaenc.Message
		for d := range 2 {
			found := false
			for at := int64(len(s.Stream[d])) / 4; at < int64(len(s.Stream[d])); at++ {
				b, m, err := deltaenc.Cut(s.Stream[d], s.Truth[d], at)
				if err == nil && m[0].Type == deltaenc.TypeSkipped {
					cut[d], streams[d], truth[d], found = at, b, m, true
					break
				}
			}
			if !found {
				t.Fatalf("seed %d: no mid-message cut for the %s", seed, deltaenc.RoleName(d))
			}
		}
		for _, ch := range ccChunkers {
			p := ccFromCut(ccPlan(s, ch, seed), cut)
			ccCrossCheck(t, fmt.Sprintf("seed %d midstream chunks %s", seed, ch.name), streams, truth, p)
		}
	}
}

// TestEncoderCrossCheckSkipped pins the skipped run after an undefined size
// code, worked out by hand: the server's stream is magic [0,10), version
// [10,16), then 03 70 a5 5a a5 at [16,21), then position [21,39), current
// direction [39,57), desired direction [57,75). The decoder must skip
// exactly [16,21) and resynchronise at 21.
func TestEncoderCrossCheckSkipped(t *testing.T) {
	var c deltaenc.Conversation
	c.Write(deltaenc.Client, 0, func(b *deltaenc.Builder) { b.Magic(); b.Version(1) })
	c.Write(deltaenc.Server, time.Millisecond, func(b *deltaenc.Builder) {
		b.Magic()
		b.Version(1)
		b.BadSize(0x7, 0x003, []byte{0xa5, 0x5a, 0xa5})
		b.ActuatorPosition(0.1, 0.2, -0.3, 0)
		b.CurrentDirection(1, 0, 0, 0)
		b.DesiredDirection(0, 1, 0, 0)
	})
	s, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Truth[deltaenc.Server]
	if len(tr) != 6 || tr[2].Type != deltaenc.TypeSkipped || tr[2].Offset != 16 || tr[2].Length != 5 || tr[3].Offset != 21 {
		t.Fatalf("encoder truth: %v", tr)
	}
	for _, ch := range ccChunkers {
		ccCrossCheck(t, "bad size "+ch.name, s.Stream, s.Truth, ccPlan(s, ch, 1))
	}
}

// FuzzEncoderCrossCheck generates sessions from the fuzzed seed and options
// (mode bit 0: broken messages; bits 1-2: chunker; bit 3: a gap in the
// server's stream where the encoder can tell the outcome) and checks every
// record against the encoder's truth.
func FuzzEncoderCrossCheck(f *testing.F) {
	f.Add(uint64(0), uint64(0), uint8(0))
	f.Add(uint64(1), uint64(5), uint8(1))
	f.Add(uint64(42), uint64(7), uint8(6))
	f.Add(uint64(9), uint64(1234), uint8(13))
	f.Fuzz(func(t *testing.T, seed, chunkSeed uint64, mode uint8) {
		o := deltaenc.Options{Seed: seed, Ticks: 20 + int(seed%20), PingEvery: 1 + int(seed%9), Broken: mode&1 != 0}
		s := deltaenc.NewSession(o)
		ch := ccChunkers[int(mode>>1)%len(ccChunkers)]
		p := ccPlan(s, ch, chunkSeed)
		truth := s.Truth
		if mode&8 != 0 {
			n := int64(len(s.Stream[deltaenc.Server]))
			from := 1 + int64(chunkSeed%uint64(n-2))
			to := min(n-1, from+1+int64(chunkSeed>>32%200))
			g, err := deltaenc.ApplyGap(s.Stream[deltaenc.Server], s.Truth[deltaenc.Server], from, to)
			if err != nil {
				t.Skip("the encoder cannot tell the outcome of this gap")
			}
			truth[deltaenc.Server] = g
			p = ccWithGap(p, deltaenc.Server, from, to)
		}
		ccCrossCheck(t, "fuzz", s.Stream, truth, p)
	})
}
