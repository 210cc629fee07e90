package neptune_test

// Cross-check of the decoder against the encoder in
// internal/testenc/neptuneenc, which was written from the wiki page and
// protocols.md §2 without reading the decoder (only this package's doc
// comment, for the wiki mode's type and field names and the resync rule,
// which the encoder models).
// Every expected record (type, offset, length, fields, warnings) comes from
// what the encoder put on the wire; nothing here is derived from running
// the decoder.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/neptune"
	"github.com/dissect-tools/dissect/internal/testenc/neptuneenc"
	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

var (
	ccConsole = netip.MustParseAddrPort("192.0.2.10:49731")
	ccROV     = netip.MustParseAddrPort("192.0.2.177:1493")
	ccWikiDst = netip.MustParseAddrPort("192.0.2.177:9000")
	ccT0      = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
)

// ccDelivery is one call into the Stream: bytes [start,end) of the
// console's direction at time at, or (gap > 0) a gap of that many bytes.
type ccDelivery struct {
	at         time.Duration
	start, end int64
	gap        int64
}

// ccChunker splits one write of n bytes into chunk lengths.
type ccChunker struct {
	name   string
	split  func(r *rand.Rand, n int) []int
	across bool // cut the whole stream instead of each write
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

var ccChunkers = []ccChunker{
	{name: "writes", split: func(_ *rand.Rand, n int) []int { return []int{n} }},
	{name: "bytes", split: ccRandomSplit(1, 1)},
	{name: "random", split: ccRandomSplit(1, 7)},
	{name: "coalesced", split: ccRandomSplit(1, 90), across: true},
}

// ccPlan returns the deliveries of a session under a chunker.
func ccPlan(s *neptuneenc.DeviceSession, ch ccChunker, seed uint64) []ccDelivery {
	r := rand.New(rand.NewPCG(seed, 1493))
	var out []ccDelivery
	if !ch.across {
		for _, w := range s.Sends {
			off := w.Start
			for _, k := range ch.split(r, int(w.End-w.Start)) {
				out = append(out, ccDelivery{at: w.At, start: off, end: off + int64(k)})
				off += int64(k)
			}
		}
		return out
	}
	off := int64(0)
	for _, k := range ch.split(r, len(s.Stream)) {
		at, _ := s.SentAt(off + int64(k) - 1)
		out = append(out, ccDelivery{at: at, start: off, end: off + int64(k)})
		off += int64(k)
	}
	return out
}

// ccWithGap removes bytes [from,to) from p and reports them as a gap.
func ccWithGap(p []ccDelivery, from, to int64) []ccDelivery {
	var out []ccDelivery
	done := false
	for _, d := range p {
		if d.end <= from || d.start >= to && done {
			out = append(out, d)
			continue
		}
		if d.start < from {
			out = append(out, ccDelivery{at: d.at, start: d.start, end: from})
		}
		if d.end > to {
			if !done {
				out = append(out, ccDelivery{at: d.at, start: from, end: to, gap: to - from})
				done = true
			}
			out = append(out, ccDelivery{at: d.at, start: max(d.start, to), end: d.end})
		}
	}
	if !done {
		out = append(out, ccDelivery{at: p[len(p)-1].at, start: from, end: to, gap: to - from})
	}
	return out
}

// ccCollect returns a sink keeping clones of the records sent by src, and
// failing on records from any other sender.
func ccCollect(t testing.TB, src string, got *[]*dissect.Record) dissect.Sink {
	return dissect.SinkFunc(func(r *dissect.Record) error {
		if r.Src != src {
			t.Errorf("record from %q: %s", r.Src, dissecttest.DescribeRecord(r))
			return nil
		}
		*got = append(*got, r.Clone())
		return nil
	})
}

// ccRunDevice feeds the deliveries through a TCP Stream decoding as
// "neptune" and returns the console's records.
func ccRunDevice(t testing.TB, stream []byte, p []ccDelivery) []*dissect.Record {
	t.Helper()
	reg := dissecttest.Registry(t, []string{"tcp.port==1493,neptune"}, neptune.New())
	info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP, Addr: [2]netip.AddrPort{ccConsole, ccROV}}, Name: [2]string{ccConsole.String(), ccROV.String()}}
	var got []*dissect.Record
	st := dissect.NewStream(info, reg, ccCollect(t, info.Name[0], &got), dissect.StreamOptions{Decode: true})
	var last time.Duration
	for _, d := range p {
		last = max(last, d.at)
		if d.gap > 0 {
			st.Gap(0, ccT0.Add(d.at), d.gap)
			continue
		}
		st.Data(0, ccT0.Add(d.at), stream[d.start:d.end])
	}
	st.End(0, ccT0.Add(last+time.Millisecond))
	st.End(1, ccT0.Add(last+time.Millisecond))
	if st.Err() != nil {
		t.Fatal(st.Err())
	}
	return got
}

// ccRunWiki feeds a wiki session's datagrams through a UDP Stream decoding
// as "neptune-wiki" with the session's int width.
func ccRunWiki(t testing.TB, s *neptuneenc.WikiSession) []*dissect.Record {
	t.Helper()
	reg := dissecttest.Registry(t, []string{"udp.port==9000,neptune-wiki"}, neptune.NewWiki(neptune.WikiOptions{Int16: s.Int == neptuneenc.Int16}))
	info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.UDP, Addr: [2]netip.AddrPort{ccConsole, ccWikiDst}}, Name: [2]string{ccConsole.String(), ccWikiDst.String()}}
	var got []*dissect.Record
	st := dissect.NewStream(info, reg, ccCollect(t, info.Name[0], &got), dissect.StreamOptions{Decode: true})
	var last time.Duration
	for _, d := range s.Datagrams {
		st.Datagram(0, ccT0.Add(d.At), s.Stream[d.Start:d.End])
		last = d.At
	}
	st.End(0, ccT0.Add(last+time.Millisecond))
	if st.Err() != nil {
		t.Fatal(st.Err())
	}
	return got
}

// ccEqual reports whether a decoded value is the expected one.
func ccEqual(v dissect.Value, w neptuneenc.Value) bool {
	switch w.Kind {
	case neptuneenc.KindInt:
		switch v.Kind() {
		case dissect.KindInt:
			return v.Int() == w.I
		case dissect.KindUint:
			return w.I >= 0 && v.Uint() == uint64(w.I)
		}
	case neptuneenc.KindStr:
		return v.Kind() == dissect.KindString && v.Str() == w.S
	case neptuneenc.KindBool:
		return v.Kind() == dissect.KindBool && v.Bool() == w.B
	case neptuneenc.KindBytes:
		return v.Kind() == dissect.KindBytes && bytes.Equal(v.Raw(), w.X)
	case neptuneenc.KindF32:
		return (v.Kind() == dissect.KindFloat32 || v.Kind() == dissect.KindFloat) &&
			math.Float32bits(float32(v.Float())) == math.Float32bits(w.F) && float64(float32(v.Float())) == v.Float()
	}
	return false
}

// ccCompare compares a record with the encoder's expectation.
func ccCompare(r *dissect.Record, m *neptuneenc.Message, transport dissect.Transport) error {
	if r.Type != m.Type || r.Offset != m.Offset || r.Length != m.Length {
		return fmt.Errorf("type/offset/length differ")
	}
	if r.Proto != "neptune" || r.Transport != transport {
		return fmt.Errorf("proto %q transport %v", r.Proto, r.Transport)
	}
	switch m.Type {
	case neptuneenc.TypeSkipped:
		if v, ok := r.Fields.Get("reason"); !ok || v.Str() == "" {
			return fmt.Errorf("skipped without a reason")
		}
		return nil
	case neptuneenc.TypeGap:
		if len(r.Fields) != 0 {
			return fmt.Errorf("gap with fields")
		}
		return nil
	}
	switch {
	case m.Warn == truth.Yes && len(r.Warnings) == 0:
		return fmt.Errorf("a warning is expected")
	case m.Warn == truth.No && len(r.Warnings) != 0:
		return fmt.Errorf("no warning is expected")
	}
	if m.Match == neptuneenc.Exact && len(r.Fields) != len(m.Fields) {
		return fmt.Errorf("%d fields, want exactly %s", len(r.Fields), m.FieldsJSON())
	}
	for i, f := range m.Fields {
		if m.Match == neptuneenc.Exact && r.Fields[i].Key != f.Key {
			return fmt.Errorf("field %d is %q, want %q", i, r.Fields[i].Key, f.Key)
		}
		v, ok := r.Fields.Get(f.Key)
		if !ok || !ccEqual(v, f.Value) {
			return fmt.Errorf("field %q: want %s", f.Key, f.Value)
		}
	}
	return nil
}

// ccCheck compares the records of one direction with the encoder's truth.
func ccCheck(t testing.TB, label string, got []*dissect.Record, want []neptuneenc.Message, transport dissect.Transport) {
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
		case i >= len(want):
			t.Errorf("%s: extra record %d: %s", label, i, dissecttest.DescribeRecord(got[i]))
			n++
		default:
			if err := ccCompare(got[i], &want[i], transport); err != nil {
				t.Errorf("%s: record %d: %v\n got: %s\nwant: %s", label, i, err, dissecttest.DescribeRecord(got[i]), want[i].String())
				n++
			}
		}
	}
}

func TestEncoderCrossCheckPilot(t *testing.T) {
	for seed := range uint64(4) {
		for _, broken := range []bool{false, true} {
			s := neptuneenc.NewPilotSession(neptuneenc.Options{Seed: seed, Broken: broken, Ticks: 24 + int(seed)*5})
			for _, ch := range ccChunkers {
				label := fmt.Sprintf("seed %d broken %v chunks %s", seed, broken, ch.name)
				ccCheck(t, label, ccRunDevice(t, s.Stream, ccPlan(s, ch, seed)), s.Truth, dissect.TCP)
			}
		}
	}
}

// TestEncoderCrossCheckVector feeds the vector of protocols.md §2.6 alone.
func TestEncoderCrossCheckVector(t *testing.T) {
	var p neptuneenc.Pilot
	p.Write(0, func(b *neptuneenc.Builder) { b.SetMotor(0, 0, 0) })
	s, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.Stream, []byte{0x04, 0x01, 0x00, 0x00, 0x00}) {
		t.Fatalf("encoder: % x", s.Stream)
	}
	for _, ch := range ccChunkers {
		ccCheck(t, "§2.6 "+ch.name, ccRunDevice(t, s.Stream, ccPlan(s, ch, 1)), s.Truth, dissect.TCP)
	}
}

// TestEncoderCrossCheckGaps drops a range of bytes at several places; the
// encoder's ApplyGap says what the decoder should emit (the message cut by
// the gap's start skipped, the gap, a skipped run up to the first offset
// where three well-formed messages start).
func TestEncoderCrossCheckGaps(t *testing.T) {
	tried, checked := 0, 0
	for seed := range uint64(4) {
		s := neptuneenc.NewPilotSession(neptuneenc.Options{Seed: seed, Ticks: 30, Broken: seed%2 == 1})
		r := rand.New(rand.NewPCG(seed, 7))
		for range 12 {
			n := int64(len(s.Stream))
			from := 10 + r.Int64N(n/2)
			to := min(from+1+r.Int64N(40), n-1)
			tried++
			truth, err := neptuneenc.ApplyGap(s.Stream, s.Truth, from, to)
			if err != nil {
				continue // the encoder cannot tell what a decoder does here
			}
			checked++
			for _, ch := range ccChunkers[1:] {
				p := ccWithGap(ccPlan(s, ch, seed), from, to)
				ccCheck(t, fmt.Sprintf("seed %d gap [%d,%d) chunks %s", seed, from, to, ch.name), ccRunDevice(t, s.Stream, p), truth, dissect.TCP)
			}
		}
	}
	t.Logf("%d of %d gaps had a definite truth", checked, tried)
	if checked < tried/2 {
		t.Errorf("only %d of %d gaps had a definite truth", checked, tried)
	}
}

// TestEncoderCrossCheckResyncAbortArgs pins what follows a dropped length
// byte: nep_network.ino drops ff alone and reads the next byte as a length,
// so the abort with arguments after it runs (the device checks no length
// for an abort). The stream is: ff [0,1); abort with arguments de ad
// [1,5): 03 00 de ad; then three set_motor [5,20). The decoder must skip
// [0,1) only and decode the abort at 1.
func TestEncoderCrossCheckResyncAbortArgs(t *testing.T) {
	var p neptuneenc.Pilot
	p.Write(0, func(b *neptuneenc.Builder) {
		b.Garbage([]byte{0xff})
		b.AbortArgs(0xde, 0xad)
		b.SetMotor(0, 0, 10)
		b.SetMotor(1, 0, 20)
		b.SetMotor(2, 1, 30)
	})
	s, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Truth) != 5 || s.Truth[0].Type != neptuneenc.TypeSkipped || s.Truth[0].Length != 1 || s.Truth[1].Type != neptuneenc.TypeAbort || s.Truth[1].Offset != 1 {
		t.Fatalf("encoder truth: %v", s.Truth)
	}
	for _, ch := range ccChunkers {
		ccCheck(t, "abort args "+ch.name, ccRunDevice(t, s.Stream, ccPlan(s, ch, 2)), s.Truth, dissect.TCP)
	}
}

// TestEncoderCrossCheckEdges covers edge values: a direction byte other
// than 0 and 1 (reverse), bool bytes other than 0 and 1 (true), the
// longest length (99), a length of exactly 100 (not a message), several
// length-0 messages in a row, a relay id (6); and in wiki mode an empty
// sensor data, a 1-byte datagram, type 0, a packet cut right after the
// header, infinite and negative-zero floats.
func TestEncoderCrossCheckEdges(t *testing.T) {
	var p neptuneenc.Pilot
	p.Write(0, func(b *neptuneenc.Builder) {
		b.SetMotor(4, 7, 255)
		b.Stabilize(2)
		b.Lamp(0xff)
		b.Unknown(200, make([]byte, neptuneenc.MaxLength-1)...)
		b.Garbage([]byte{neptuneenc.MaxLength + 1})
		b.Lamp(1)
		b.Lamp(0)
		b.Abort()
		b.ZeroLength()
		b.ZeroLength()
		b.SetMotor(6, 1, 0)
	})
	s, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range ccChunkers {
		ccCheck(t, "edges "+ch.name, ccRunDevice(t, s.Stream, ccPlan(s, ch, 3)), s.Truth, dissect.TCP)
	}
	for _, w := range []neptuneenc.IntWidth{neptuneenc.Int32, neptuneenc.Int16} {
		f := neptuneenc.WikiFlow{W: neptuneenc.Wiki{Int: w}}
		f.SensorData(0, 0, 1, -7, 32767, nil)
		f.ShortHeader(1, neptuneenc.WikiRawMotor)
		f.Unknown(2, 0, 0, 2, nil)
		f.Cut(3, 3, 3, 1, false, 1, 1, 0)
		f.PositionMotor(4, 255, 4, 255, float32(math.Inf(-1)), float32(math.Copysign(0, -1)))
		f.SpeedMotor(5, 0, 5, 0, false, float32(math.Inf(1)), -32768)
		ws, err := f.Finish()
		if err != nil {
			t.Fatal(err)
		}
		ccCheck(t, fmt.Sprintf("wiki edges int%d", 8*w), ccRunWiki(t, ws), ws.Truth, dissect.UDP)
	}
}

// TestEncoderCrossCheckDocumented checks what the package documents beyond
// the contract, on the encoder's broken forms: translate/rotate's sign is
// the raw byte as an unsigned integer; a known type with the wrong length
// and an abort with arguments show the whole payload as "data"; an unknown
// type's data is the payload, type byte included.
func TestEncoderCrossCheckDocumented(t *testing.T) {
	s := neptuneenc.NewPilotSession(neptuneenc.Options{Seed: 5, Broken: true})
	got := ccRunDevice(t, s.Stream, ccPlan(s, ccChunkers[0], 5))
	if len(got) != len(s.Truth) {
		t.Fatalf("%d records, truth %d", len(got), len(s.Truth))
	}
	checked := 0
	for i, m := range s.Truth {
		r := got[i]
		if r.Type != m.Type || r.Offset != m.Offset || m.IsEvent() {
			continue
		}
		switch {
		case (m.Type == neptuneenc.TypeTranslate || m.Type == neptuneenc.TypeRotate) && len(m.Wire) == 4:
			v, ok := r.Fields.Get("sign")
			if !ok || !ccEqual(v, neptuneenc.Int(int64(m.Wire[3]))) {
				t.Errorf("%s: sign is not the raw byte %d", dissecttest.DescribeRecord(r), m.Wire[3])
			}
			checked++
		case m.Warn == truth.Yes && m.Match == neptuneenc.Subset && m.Wire[0] > 0, m.Type == neptuneenc.TypeAbort && m.Match == neptuneenc.Subset:
			if m.Type == neptuneenc.TypeTranslate {
				continue
			}
			v, ok := r.Fields.Get("data")
			if !ok || !ccEqual(v, neptuneenc.Bytes(m.Wire[1:])) {
				t.Errorf("%s: data is not the payload %x", dissecttest.DescribeRecord(r), m.Wire[1:])
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d records checked", checked)
	}
}

func TestEncoderCrossCheckWiki(t *testing.T) {
	for seed := range uint64(3) {
		for _, w := range []neptuneenc.IntWidth{neptuneenc.Int32, neptuneenc.Int16} {
			for _, broken := range []bool{false, true} {
				s := neptuneenc.NewWikiSession(neptuneenc.WikiOptions{Seed: seed, Int: w, Broken: broken, Ticks: 20 + int(seed)*4})
				ccCheck(t, fmt.Sprintf("wiki seed %d int%d broken %v", seed, 8*w, broken), ccRunWiki(t, s), s.Truth, dissect.UDP)
			}
		}
	}
}

// FuzzEncoderCrossCheck generates sessions from the fuzzed seed and options
// (mode bit 0: broken messages; bits 1-2: chunker; bit 3: a gap where the
// encoder can tell the outcome; bit 4: a wiki session instead, bit 5 with
// int16) and checks every record against the encoder's truth.
func FuzzEncoderCrossCheck(f *testing.F) {
	f.Add(uint64(0), uint64(0), uint8(0))
	f.Add(uint64(1), uint64(5), uint8(1))
	f.Add(uint64(42), uint64(7), uint8(6))
	f.Add(uint64(9), uint64(1234), uint8(13))
	f.Add(uint64(3), uint64(8), uint8(17))
	f.Add(uint64(4), uint64(9), uint8(49))
	f.Fuzz(func(t *testing.T, seed, chunkSeed uint64, mode uint8) {
		if mode&16 != 0 {
			w := neptuneenc.Int32
			if mode&32 != 0 {
				w = neptuneenc.Int16
			}
			s := neptuneenc.NewWikiSession(neptuneenc.WikiOptions{Seed: seed, Int: w, Broken: mode&1 != 0, Ticks: 20 + int(seed%20)})
			ccCheck(t, "fuzz wiki", ccRunWiki(t, s), s.Truth, dissect.UDP)
			return
		}
		s := neptuneenc.NewPilotSession(neptuneenc.Options{Seed: seed, Ticks: 20 + int(seed%20), Broken: mode&1 != 0})
		p := ccPlan(s, ccChunkers[int(mode>>1)%len(ccChunkers)], chunkSeed)
		truth := s.Truth
		if mode&8 != 0 {
			n := int64(len(s.Stream))
			from := 1 + int64(chunkSeed%uint64(n-2))
			to := min(n-1, from+1+int64(chunkSeed>>32%60))
			g, err := neptuneenc.ApplyGap(s.Stream, s.Truth, from, to)
			if err != nil {
				t.Skip("the encoder cannot tell the outcome of this gap")
			}
			truth = g
			p = ccWithGap(p, from, to)
		}
		ccCheck(t, "fuzz", ccRunDevice(t, s.Stream, p), truth, dissect.TCP)
	})
}

// The committed sample files are checked against their truth sidecars
// through the CLI by TestSamplesMatchEncoderTruth in cmd/dissect.
