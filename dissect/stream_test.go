package dissect_test

import (
	"errors"
	"fmt"
	"math/rand"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// toy is a test protocol: each message is [len u8][len bytes], with len in
// 1..toyMax; len 0 or > toyMax is malformed. A message whose first body
// byte is 0xEE declares a "big" message: [0xFF? no]. Detection: a direction
// starting with "TOY".
type toy struct {
	ports []dissect.Port
}

const toyMax = 100

func (t *toy) Info() dissect.Info {
	return dissect.Info{Name: "toy", Proto: "toy", Transports: []dissect.Transport{dissect.TCP, dissect.UDP}, Ports: t.ports}
}

func (t *toy) Detect(s *dissect.StreamInfo, dir dissect.Dir, b []byte) dissect.Verdict {
	switch {
	case len(b) >= 4 && string(b[1:4]) == "TOY":
		return dissect.Yes
	case len(b) < 4 && strings.HasPrefix("\x03TOY"[:len(b)], string(b)) && len(b) > 0 && b[0] == 3:
		return dissect.Maybe
	}
	return dissect.No
}

func (t *toy) NewParser(s *dissect.StreamInfo) dissect.Parser { return toyParser{} }

type toyParser struct{}

// Parse: [len][body]; len 0xFE means a 4-byte big-endian length follows
// (to test oversize messages).
func (toyParser) Parse(c *dissect.Ctx, b []byte) (int, error) {
	l := int(b[0])
	if l == 0xFE {
		if len(b) < 5 {
			return 0, dissect.ErrNeedMore
		}
		n := int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4])
		if len(b) < 5+n {
			return 5 + n, dissect.ErrNeedMore
		}
		c.Rec.Type = "big"
		return 5 + n, nil
	}
	if l == 0 || l > toyMax {
		return 0, dissect.Malformed("toy", "bad_len", 0, "length %d", l)
	}
	if len(b) < 1+l {
		return 1 + l, dissect.ErrNeedMore
	}
	c.Rec.Type = "msg"
	c.Rec.Add("body", dissect.Bytes(b[1:1+l]))
	return 1 + l, nil
}

// Sync: the first offset whose byte is a valid length and whose message is
// followed by another valid length byte (or ends b exactly).
func (toyParser) Sync(c *dissect.Ctx, b []byte) (int, bool) {
	for i := 0; i < len(b); i++ {
		l := int(b[i])
		if l == 0 || l > toyMax {
			continue
		}
		end := i + 1 + l
		if end >= len(b) {
			return i, false
		}
		if n := int(b[end]); n > 0 && n <= toyMax {
			return i, true
		}
	}
	return len(b), false
}

type collector struct{ recs []*dissect.Record }

func (c *collector) Record(r *dissect.Record) error {
	c.recs = append(c.recs, r.Clone())
	return nil
}

func tcpInfo(port uint16) dissect.StreamInfo {
	return dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP, Addr: [2]netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:5000"), netip.MustParseAddrPort(fmt.Sprintf("10.0.0.2:%d", port))}}, Name: [2]string{"10.0.0.1:5000", fmt.Sprintf("10.0.0.2:%d", port)}}
}

func newToyStream(t *testing.T, info dissect.StreamInfo, rule bool, lim dissect.Limits) (*dissect.Stream, *collector) {
	t.Helper()
	reg, err := dissect.NewRegistry(&toy{})
	if err != nil {
		t.Fatal(err)
	}
	if rule {
		r, err := reg.ParseDecodeAs("tcp.port==7000,toy")
		if err != nil {
			t.Fatal(err)
		}
		reg.AddRule(r)
	}
	col := &collector{}
	return dissect.NewStream(info, reg, col, dissect.StreamOptions{Limits: lim, Decode: true}), col
}

// checkTiling asserts that the records of dir tile [0, total) exactly.
func checkTiling(t *testing.T, recs []*dissect.Record, src string, total int64) {
	t.Helper()
	var off int64
	for _, r := range recs {
		if r.Src != src {
			continue
		}
		if r.Offset != off {
			t.Fatalf("record %s at offset %d, want %d (records: %s)", r.Type, r.Offset, off, dump(recs))
		}
		if r.Length <= 0 {
			t.Fatalf("record %s at %d has length %d", r.Type, r.Offset, r.Length)
		}
		off += r.Length
	}
	if off != total {
		t.Fatalf("records cover %d bytes, want %d (records: %s)", off, total, dump(recs))
	}
}

func dump(recs []*dissect.Record) string {
	var sb strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&sb, "\n  %s %s [%d,+%d)", r.Src, r.Type, r.Offset, r.Length)
		if v, ok := r.Fields.Get("reason"); ok {
			fmt.Fprintf(&sb, " %s", v.Str())
		}
	}
	return sb.String()
}

type want struct {
	typ      string
	off, len int64
}

func checkRecords(t *testing.T, recs []*dissect.Record, src string, w []want) {
	t.Helper()
	var got []want
	for _, r := range recs {
		if r.Src == src {
			got = append(got, want{r.Type, r.Offset, r.Length})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(w) {
		t.Fatalf("records\n got %v\nwant %v%s", got, w, dump(recs))
	}
}

// feedChunks feeds b to dir 0 in random chunks.
func feedChunks(s *dissect.Stream, rng *rand.Rand, b []byte) {
	t0 := time.Unix(1700000000, 0)
	for len(b) > 0 {
		n := 1 + rng.Intn(min(len(b), 9))
		s.Data(0, t0, b[:n])
		b = b[n:]
	}
}

func TestStreamFramesInEveryChunking(t *testing.T) {
	// three messages, garbage (0x00 0xC8: lengths 0 and 200 are malformed), two messages
	in := []byte{2, 'a', 'b', 1, 'c', 3, 'd', 'e', 'f', 0x00, 0xC8, 1, 'g', 2, 'h', 'i'}
	for seed := int64(0); seed < 200; seed++ {
		s, col := newToyStream(t, tcpInfo(7000), true, dissect.Limits{})
		feedChunks(s, rand.New(rand.NewSource(seed)), in)
		s.End(0, time.Unix(1700000001, 0))
		checkRecords(t, col.recs, "10.0.0.1:5000", []want{
			{"msg", 0, 3}, {"msg", 3, 2}, {"msg", 5, 4}, {"skipped", 9, 2}, {"msg", 11, 2}, {"msg", 13, 3},
		})
	}
}

func TestStreamSkippedReasonHasOffset(t *testing.T) {
	s, col := newToyStream(t, tcpInfo(7000), true, dissect.Limits{})
	s.Data(0, time.Unix(1, 0), []byte{1, 'a', 0xC8, 0xC8, 1, 'b', 1, 'c'})
	s.End(0, time.Unix(2, 0))
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"msg", 0, 2}, {"skipped", 2, 2}, {"msg", 4, 2}, {"msg", 6, 2}})
	reason, _ := col.recs[1].Fields.Get("reason")
	if want := "toy: malformed at offset 2: length 200"; reason.Str() != want {
		t.Errorf("reason %q, want %q", reason.Str(), want)
	}
}

func TestStreamIncompleteAtEnd(t *testing.T) {
	s, col := newToyStream(t, tcpInfo(7000), true, dissect.Limits{})
	s.Data(0, time.Unix(1, 0), []byte{1, 'a', 5, 'b', 'c'})
	s.End(0, time.Unix(2, 0))
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"msg", 0, 2}, {"skipped", 2, 3}})
	reason, _ := col.recs[1].Fields.Get("reason")
	if !strings.Contains(reason.Str(), dissect.ReasonIncomplete) {
		t.Errorf("reason %q does not say the message was incomplete", reason.Str())
	}
	// data after End is ignored
	s.Data(0, time.Unix(3, 0), []byte{1, 'x'})
	if len(col.recs) != 2 {
		t.Errorf("data after End produced records: %s", dump(col.recs))
	}
}

func TestStreamGapThenResync(t *testing.T) {
	s, col := newToyStream(t, tcpInfo(7000), true, dissect.Limits{})
	t0 := time.Unix(1, 0)
	s.Data(0, t0, []byte{1, 'a', 4, 'b'}) // second message cut by the gap
	s.Gap(0, t0, 10)
	// after the gap: the tail of a lost message ('z' 'z'), then messages
	s.Data(0, t0, []byte{'z', 0xC8, 2, 'c', 'd', 1, 'e'})
	s.End(0, t0)
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{
		{"msg", 0, 2}, {"skipped", 2, 2}, {"gap", 4, 10}, {"skipped", 14, 2}, {"msg", 16, 3}, {"msg", 19, 2},
	})
	checkTiling(t, col.recs, "10.0.0.1:5000", 21)
}

func TestStreamOversizeIsPassedOverWithoutBuffering(t *testing.T) {
	lim := dissect.Limits{MaxMessage: 64}
	s, col := newToyStream(t, tcpInfo(7000), true, lim)
	t0 := time.Unix(1, 0)
	big := []byte{0xFE, 0, 0, 4, 0} // a 1024-byte body follows
	s.Data(0, t0, big)
	for i := 0; i < 16; i++ {
		s.Data(0, t0, make([]byte, 64))
	}
	s.Data(0, t0, []byte{1, 'a'})
	s.End(0, t0)
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"skipped", 0, 1029}, {"msg", 1029, 2}})
	reason, _ := col.recs[0].Fields.Get("reason")
	if !strings.Contains(reason.Str(), "exceeds the 64-byte limit") {
		t.Errorf("reason %q", reason.Str())
	}
}

func TestStreamOversizeCutByGapAndEnd(t *testing.T) {
	s, col := newToyStream(t, tcpInfo(7000), true, dissect.Limits{MaxMessage: 64})
	t0 := time.Unix(1, 0)
	s.Data(0, t0, []byte{0xFE, 0, 0, 4, 0, 1, 2, 3})
	s.Gap(0, t0, 100)
	s.Data(0, t0, []byte{1, 'a', 1, 'b'})
	s.End(0, t0)
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"skipped", 0, 8}, {"gap", 8, 100}, {"msg", 108, 2}, {"msg", 110, 2}})
}

func TestStreamNoBoundaryWithinLimitResyncs(t *testing.T) {
	// garbage that Sync cannot place is bounded by MaxSync
	lim := dissect.Limits{MaxSync: 32}
	s, col := newToyStream(t, tcpInfo(7000), true, lim)
	t0 := time.Unix(1, 0)
	s.Data(0, t0, []byte{0})
	for i := 0; i < 100; i++ {
		s.Data(0, t0, []byte{0xC8, 0xC9, 0xCA, 0xCB}) // never a valid length
	}
	s.Data(0, t0, []byte{1, 'a', 1, 'b'})
	s.End(0, t0)
	checkTiling(t, col.recs, "10.0.0.1:5000", 405)
	last := col.recs[len(col.recs)-1]
	if last.Type != "msg" || last.Offset != 403 {
		t.Errorf("last record %s at %d, want msg at 403%s", last.Type, last.Offset, dump(col.recs))
	}
}

func TestStreamDetectionHoldsAndReplays(t *testing.T) {
	s, col := newToyStream(t, tcpInfo(9999), false, dissect.Limits{})
	t0 := time.Unix(1, 0)
	s.Data(0, t0, []byte{3})             // Maybe
	s.Data(1, t0, []byte{1, 'z'})        // reverse direction, No
	s.Data(0, t0, []byte{'T', 'O', 'Y'}) // Yes: replay
	if s.Protocol() == nil {
		t.Fatal("not detected")
	}
	s.Data(0, t0, []byte{1, 'q'})
	s.End(0, t0)
	s.End(1, t0)
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"msg", 0, 4}, {"msg", 4, 2}})
	checkRecords(t, col.recs, "10.0.0.2:9999", []want{{"msg", 0, 2}})
}

func TestStreamUnknownProtocolIsSkipped(t *testing.T) {
	s, col := newToyStream(t, tcpInfo(9999), false, dissect.Limits{})
	t0 := time.Unix(1, 0)
	s.Data(0, t0, []byte("GET / HTTP/1.1\r\n"))
	s.Data(0, t0, []byte("Host: x\r\n\r\n"))
	s.Gap(0, t0, 5)
	s.Data(0, t0, []byte("more"))
	s.End(0, t0)
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"skipped", 0, 27}, {"gap", 27, 5}, {"skipped", 32, 4}})
	for _, r := range col.recs {
		if r.Proto != "" {
			t.Errorf("unknown stream record has proto %q", r.Proto)
		}
	}
}

func TestStreamDefaultPortAfterDetectionFails(t *testing.T) {
	reg, _ := dissect.NewRegistry(&toy{ports: []dissect.Port{{Transport: dissect.TCP, Port: 7001}}})
	col := &collector{}
	s := dissect.NewStream(tcpInfo(7001), reg, col, dissect.StreamOptions{Decode: true})
	s.Data(0, time.Unix(1, 0), []byte{1, 'a', 1, 'b'})
	s.End(0, time.Unix(1, 0))
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"msg", 0, 2}, {"msg", 2, 2}})
}

func TestStreamDatagramBoundaries(t *testing.T) {
	info := tcpInfo(7000)
	info.Transport = dissect.UDP
	reg, _ := dissect.NewRegistry(&toy{})
	r, err := reg.ParseDecodeAs("udp.port==7000,toy")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(r)
	col := &collector{}
	s := dissect.NewStream(info, reg, col, dissect.StreamOptions{Decode: true})
	t0 := time.Unix(1, 0)
	s.Datagram(0, t0, []byte{1, 'a', 2, 'b', 'c'})
	s.Datagram(0, t0, []byte{3, 'x'}) // truncated: never joined with the next datagram
	s.Datagram(0, t0, []byte{1, 'y'})
	s.Datagram(0, t0, []byte{1, 'y', 0, 9}) // a malformed tail
	s.End(0, t0)
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{
		{"msg", 0, 2}, {"msg", 2, 3}, {"skipped", 5, 2}, {"msg", 7, 2}, {"msg", 9, 2}, {"skipped", 11, 2},
	})
	reason, _ := col.recs[2].Fields.Get("reason")
	if !strings.Contains(reason.Str(), "truncated message at offset 5") {
		t.Errorf("reason %q", reason.Str())
	}
}

func TestStreamStopsOnSinkError(t *testing.T) {
	reg, _ := dissect.NewRegistry(&toy{})
	r, _ := reg.ParseDecodeAs("tcp.port==7000,toy")
	reg.AddRule(r)
	boom := errors.New("boom")
	n := 0
	s := dissect.NewStream(tcpInfo(7000), reg, dissect.SinkFunc(func(*dissect.Record) error { n++; return boom }), dissect.StreamOptions{})
	s.Data(0, time.Unix(1, 0), []byte{1, 'a', 1, 'b', 1, 'c'})
	if !errors.Is(s.Err(), boom) || n != 1 {
		t.Errorf("err %v after %d records, want boom after 1", s.Err(), n)
	}
}

func TestParseDecodeAs(t *testing.T) {
	reg, _ := dissect.NewRegistry(&toy{})
	for _, tc := range []struct {
		in   string
		ok   bool
		tr   dissect.Transport
		port uint16
	}{
		{"tcp.port==4000,toy", true, dissect.TCP, 4000},
		{"udp.port == 53 , toy", true, dissect.UDP, 53},
		{"tcp.port==0,toy", false, 0, 0},
		{"tcp.port==70000,toy", false, 0, 0},
		{"tcp.port==80,nosuch", false, 0, 0},
		{"ip.addr==1.2.3.4,toy", false, 0, 0},
		{"toy", false, 0, 0},
		{"serial,toy", false, 0, 0}, // toy does not run over serial
	} {
		r, err := reg.ParseDecodeAs(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && (r.Transport != tc.tr || r.Port != tc.port) {
			t.Errorf("%q: got %v/%d", tc.in, r.Transport, r.Port)
		}
	}
}

func TestRegistryRejectsDuplicates(t *testing.T) {
	if _, err := dissect.NewRegistry(&toy{}, &toy{}); err == nil {
		t.Error("duplicate names accepted")
	}
}

// FuzzStream feeds arbitrary bytes in arbitrary chunks, with gaps, through
// the toy protocol and checks that the records tile every byte.
func FuzzStream(f *testing.F) {
	f.Add([]byte{2, 'a', 'b', 0, 0xC8, 1, 'c'}, int64(1))
	f.Add([]byte{0xFE, 0, 0, 0, 9, 1, 2}, int64(2))
	f.Add([]byte{3, 'T', 'O', 'Y', 1}, int64(3))
	f.Fuzz(func(t *testing.T, in []byte, seed int64) {
		rng := rand.New(rand.NewSource(seed))
		s, col := newToyStream(t, tcpInfo(uint16(7000+seed%2)), seed%3 == 0, dissect.Limits{MaxMessage: 32, MaxSync: 16, MaxDetect: 8})
		var total int64
		t0 := time.Unix(1, 0)
		for len(in) > 0 {
			n := 1 + rng.Intn(min(len(in), 7))
			if rng.Intn(10) == 0 {
				s.Gap(0, t0, int64(n))
			} else {
				s.Data(0, t0, in[:n])
			}
			total += int64(n)
			in = in[n:]
		}
		s.End(0, t0)
		checkTiling(t, col.recs, "10.0.0.1:5000", total)
	})
}

// TestStreamDetectionAcrossManySmallSegments: a signature that arrives one
// byte per TCP segment is still found (only UDP counts held datagrams).
func TestStreamDetectionAcrossManySmallSegments(t *testing.T) {
	s, col := newToyStream(t, tcpInfo(9999), false, dissect.Limits{})
	t0 := time.Unix(1, 0)
	for _, c := range []byte{3, 'T', 'O', 'Y', 1, 'q'} {
		s.Data(0, t0, []byte{c})
	}
	s.End(0, t0)
	if s.Protocol() == nil {
		t.Fatal("not detected")
	}
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"msg", 0, 4}, {"msg", 4, 2}})
}

// ender is a toy parser that notes when its stream ends.
type ender struct{ toyParser }

func (ender) End(c *dissect.Ctx) { c.Note("ended at %d", c.Time.Unix()) }

type enderProto struct{ toy }

func (*enderProto) NewParser(s *dissect.StreamInfo) dissect.Parser { return ender{} }

func TestStreamEnderIsCalledOnceAfterBothDirections(t *testing.T) {
	reg, _ := dissect.NewRegistry(&enderProto{})
	r, _ := reg.ParseDecodeAs("tcp.port==7000,toy")
	reg.AddRule(r)
	s := dissect.NewStream(tcpInfo(7000), reg, &collector{}, dissect.StreamOptions{})
	s.Data(0, time.Unix(1, 0), []byte{1, 'a'})
	s.End(0, time.Unix(2, 0))
	if len(s.Notes()) != 0 {
		t.Fatalf("End called after one direction: %q", s.Notes())
	}
	s.End(1, time.Unix(3, 0))
	s.End(1, time.Unix(4, 0))
	if got := s.Notes(); len(got) != 1 || got[0] != "ended at 3" {
		t.Errorf("notes %q, want one note at the second direction's end", got)
	}
}
