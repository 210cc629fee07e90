package roboid_test

// Cross-check of the decoder against the encoder in
// internal/testenc/roboidenc, which was written from MessageFormat.md and
// protocols.md §3 without reading the decoder (only this package's doc
// comment, for the fields each message type carries and the names of the
// decoded interpretations). Every expected record (type, offset, length,
// fields, warnings) comes from what the encoder put on the wire; nothing
// here is derived from running the decoder.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/roboid"
	"github.com/dissect-tools/dissect/internal/testenc/roboidenc"
	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

var (
	ccClient = netip.MustParseAddrPort("192.0.2.20:50123")
	ccSite   = netip.MustParseAddrPort("192.0.2.1:7681")
	ccT0     = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
)

// ccRun feeds a session's datagrams, in time order, through a UDP Stream
// decoding as roboid and returns the records of each direction.
func ccRun(t testing.TB, s *roboidenc.Session) [2][]*dissect.Record {
	t.Helper()
	reg := dissecttest.Registry(t, []string{"udp.port==7681,roboid"}, roboid.New())
	info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.UDP, Addr: [2]netip.AddrPort{ccClient, ccSite}}, Name: [2]string{ccClient.String(), ccSite.String()}}
	var got [2][]*dissect.Record
	sink := dissecttest.SplitSink(t, info.Name, &got)
	st := dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: true})
	var last time.Duration
	for _, d := range s.Datagrams {
		st.Datagram(dissect.Dir(d.Dir), ccT0.Add(d.At), s.Stream[d.Dir][d.Start:d.End])
		last = d.At
	}
	st.End(0, ccT0.Add(last+time.Millisecond))
	st.End(1, ccT0.Add(last+time.Millisecond))
	if st.Err() != nil {
		t.Fatal(st.Err())
	}
	return got
}

func ccKeysOf(fs []dissect.Field) string {
	var k []string
	for _, f := range fs {
		k = append(k, f.Key)
	}
	return strings.Join(k, ",")
}

// ccInt reports whether v is the integer want.
func ccInt(v dissect.Value, ok bool, want int64) bool {
	if !ok {
		return false
	}
	switch v.Kind() {
	case dissect.KindInt:
		return v.Int() == want
	case dissect.KindUint:
		return want >= 0 && v.Uint() == uint64(want)
	}
	return false
}

// ccBytes reports whether v is the byte string want.
func ccBytes(v dissect.Value, ok bool, want []byte) bool {
	return ok && v.Kind() == dissect.KindBytes && bytes.Equal(v.Raw(), want)
}

// ccCompareValue compares one element of "values" with the encoder's value:
// data_type, semantics, angular_bytes, linear_bytes, raw, and truncated
// (true exactly for a value cut short).
func ccCompareValue(v dissect.Value, w roboidenc.ValueTruth) error {
	if v.Kind() != dissect.KindObject {
		return fmt.Errorf("not an object")
	}
	fs := dissect.Fields(v.Items())
	if x, ok := fs.Get("data_type"); !ok || x.Kind() != dissect.KindString || x.Str() != w.DataTypeHex() {
		return fmt.Errorf("data_type, want %q", w.DataTypeHex())
	}
	if x, ok := fs.Get("semantics"); !ok || x.Kind() != dissect.KindString || x.Str() != w.Semantics() {
		return fmt.Errorf("semantics, want %q", w.Semantics())
	}
	if x, ok := fs.Get("angular_bytes"); !ccInt(x, ok, int64(w.AngularBytes())) {
		return fmt.Errorf("angular_bytes, want %d", w.AngularBytes())
	}
	if x, ok := fs.Get("linear_bytes"); !ccInt(x, ok, int64(w.LinearBytes())) {
		return fmt.Errorf("linear_bytes, want %d", w.LinearBytes())
	}
	if x, ok := fs.Get("raw"); !ccBytes(x, ok, w.Raw()) {
		return fmt.Errorf("raw, want %x", w.Raw())
	}
	x, ok := fs.Get("truncated")
	if w.Truncated && (!ok || x.Kind() != dissect.KindBool || !x.Bool()) {
		return fmt.Errorf("truncated: true expected")
	}
	if !w.Truncated && ok && (x.Kind() != dissect.KindBool || x.Bool()) {
		return fmt.Errorf("truncated set on a whole value")
	}
	return nil
}

// ccCompare compares a record with the encoder's expectation.
func ccCompare(r *dissect.Record, m *roboidenc.Message) error {
	if r.Type != m.Type || r.Offset != m.Offset || r.Length != m.Length {
		return fmt.Errorf("type/offset/length differ")
	}
	if r.Proto != "roboid" || r.Transport != dissect.UDP {
		return fmt.Errorf("proto %q transport %v", r.Proto, r.Transport)
	}
	switch m.Type {
	case roboidenc.TypeSkipped:
		if v, ok := r.Fields.Get("reason"); !ok || v.Str() == "" {
			return fmt.Errorf("skipped without a reason")
		}
		return nil
	case roboidenc.TypeGap:
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
	got, want := ccKeysOf(r.Fields), strings.Join(m.Keys(), ",")
	if m.ShortIDs {
		// an empty "values" after the ids is not asserted
		if v, ok := r.Fields.Get("values"); ok && v.Kind() == dissect.KindArray && len(v.Items()) == 0 {
			got = strings.TrimSuffix(strings.TrimSuffix(got, "values"), ",")
		}
	}
	if got != want {
		return fmt.Errorf("keys %q, want %q", got, want)
	}
	for _, f := range r.Fields {
		v, ok := f.Value, true
		switch f.Key {
		case "message_id":
			ok = ccInt(v, ok, int64(m.MessageID))
		case "network_id":
			ok = ccInt(v, ok, int64(m.NetworkID))
		case "thing_id":
			ok = ccInt(v, ok, int64(m.ThingID))
		case "data":
			ok = ccBytes(v, ok, m.Data)
		case "rest":
			ok = ccBytes(v, ok, m.Rest)
		case "values":
			items := v.Items()
			if v.Kind() != dissect.KindArray || len(items) != len(m.Values) {
				return fmt.Errorf("values: %d items, want %d", len(items), len(m.Values))
			}
			for i, it := range items {
				if err := ccCompareValue(it.Value, m.Values[i]); err != nil {
					return fmt.Errorf("values[%d]: %w", i, err)
				}
			}
		}
		if !ok {
			return fmt.Errorf("field %q", f.Key)
		}
	}
	return nil
}

// ccCheck compares the records of one direction with the encoder's truth.
func ccCheck(t testing.TB, label string, got []*dissect.Record, want []roboidenc.Message) {
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
			if err := ccCompare(got[i], &want[i]); err != nil {
				t.Errorf("%s: record %d: %v\n got: %s\nwant: %s", label, i, err, dissecttest.DescribeRecord(got[i]), want[i].String())
				n++
			}
		}
	}
}

func TestEncoderCrossCheckSessions(t *testing.T) {
	for seed := range uint64(4) {
		for _, broken := range []bool{false, true} {
			s := roboidenc.NewSession(roboidenc.Options{Seed: seed, Broken: broken, Ticks: 20 + int(seed)*6})
			got := ccRun(t, s)
			for d := range 2 {
				ccCheck(t, fmt.Sprintf("seed %d broken %v %s", seed, broken, roboidenc.RoleName(d)), got[d], s.Truth[d])
			}
		}
	}
}

// TestEncoderCrossCheckSpecExamples sends every example of the spec's
// data-type tables in a Pose of its own, and all of them together.
func TestEncoderCrossCheckSpecExamples(t *testing.T) {
	var f roboidenc.Flow
	at := time.Duration(0)
	var all []roboidenc.ValueTruth
	for _, set := range [][]roboidenc.ValueTruth{roboidenc.SpecTypical(), roboidenc.SpecSyntax(), roboidenc.SpecLiteral(), roboidenc.Undefined()} {
		for _, v := range set {
			at += time.Millisecond
			f.Pose(roboidenc.Client, at, 1, 2, v)
			all = append(all, v)
		}
	}
	f.Pose(roboidenc.Client, at+time.Millisecond, 1, 3, all...)
	s, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	ccCheck(t, "spec examples", ccRun(t, s)[roboidenc.Client], s.Truth[roboidenc.Client])
}

// TestEncoderCrossCheckEdges covers edge forms: a value cut right after
// its data-type byte, the unknown id 0x00 without a body, a Pose of nine
// values with undefined semantics, a bare [0x10], an extension byte right
// after the ids, ModelURL with an empty URL.
func TestEncoderCrossCheckEdges(t *testing.T) {
	var f roboidenc.Flow
	f.PoseTruncated(roboidenc.Client, 0, 1, 1, nil, roboidenc.V(roboidenc.SemPosition, []float64{1}, roboidenc.U8(1)), 0)
	f.Unknown(roboidenc.Client, 1, 0x00, nil)
	var nine []roboidenc.ValueTruth
	for i := range 9 {
		nine = append(nine, roboidenc.V(byte(9+i%7), []float64{float64(i)}, roboidenc.NoMag()))
	}
	f.Pose(roboidenc.Client, 2, 1, 2, nine...)
	f.PoseShort(roboidenc.Client, 3)
	f.PoseExtension(roboidenc.Site, 4, 0, 1, nil, nil)
	f.ModelURL(roboidenc.Site, 5, 0, 1, "")
	s, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	got := ccRun(t, s)
	for d := range 2 {
		ccCheck(t, "edges "+roboidenc.RoleName(d), got[d], s.Truth[d])
	}
}

// TestEncoderCrossCheckInterpretations checks the decoded interpretations
// the package documents (angles_deg, magnitude_uint, magnitude_f16,
// magnitude_f32) against the encoder's own readings of the bytes it wrote:
// unsigned binary angles (b × 360/256), little-endian magnitudes, its own
// half-float reader. These encodings are unverified guesses (protocols.md
// §3.4), so this tests the decoder's documented choices, not the protocol.
func TestEncoderCrossCheckInterpretations(t *testing.T) {
	s := roboidenc.NewSession(roboidenc.Options{Seed: 7, Broken: true})
	got := ccRun(t, s)
	checked := 0
	for d := range 2 {
		if len(got[d]) != len(s.Truth[d]) {
			t.Fatalf("%s: %d records, truth %d", roboidenc.RoleName(d), len(got[d]), len(s.Truth[d]))
		}
		for i, m := range s.Truth[d] {
			r := got[d][i]
			vals, ok := r.Fields.Get("values")
			if m.Type != roboidenc.TypePose || !ok || len(vals.Items()) != len(m.Values) {
				continue
			}
			for k, it := range vals.Items() {
				w := m.Values[k]
				if w.Truncated {
					continue
				}
				if err := ccInterpretation(dissect.Fields(it.Value.Items()), w); err != nil {
					t.Errorf("%s record %d values[%d] (%s): %v", roboidenc.RoleName(d), i, k, w.DataTypeHex(), err)
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d values checked", checked)
	}
}

func ccFloat(v dissect.Value, ok bool) (float64, bool) {
	if !ok || (v.Kind() != dissect.KindFloat && v.Kind() != dissect.KindFloat32) {
		return 0, false
	}
	return v.Float(), true
}

func ccInterpretation(fs dissect.Fields, w roboidenc.ValueTruth) error {
	a, ok := fs.Get("angles_deg")
	switch {
	case len(w.Angles) == 0:
	case !ok || a.Kind() != dissect.KindArray || len(a.Items()) != len(w.Angles):
		return fmt.Errorf("angles_deg: want %d angles", len(w.Angles))
	default:
		for i, b := range w.Angles {
			if f, ok := ccFloat(a.Items()[i].Value, true); !ok || f != roboidenc.Angle8Degrees(b) {
				return fmt.Errorf("angles_deg[%d]: want %v", i, roboidenc.Angle8Degrees(b))
			}
		}
	}
	mag := w.Magnitude
	if len(mag) == 0 {
		return nil
	}
	var u uint64
	for i := len(mag) - 1; i >= 0; i-- {
		u = u<<8 | uint64(mag[i])
	}
	if x, ok := fs.Get("magnitude_uint"); !ok || !(x.Kind() == dissect.KindUint && x.Uint() == u || x.Kind() == dissect.KindInt && x.Int() == int64(u)) {
		return fmt.Errorf("magnitude_uint: want %d", u)
	}
	switch len(mag) {
	case 2:
		want := roboidenc.Float16Value(binary.LittleEndian.Uint16(mag))
		f, ok := ccFloat(fs.Get("magnitude_f16"))
		if !ok || !(float32(f) == want || math.IsNaN(f) && want != want) {
			return fmt.Errorf("magnitude_f16: want %v", want)
		}
		if w.Intended.MagKind == "f16" && f != w.Intended.Mag {
			return fmt.Errorf("magnitude_f16 %v, encoded %v", f, w.Intended.Mag)
		}
	case 4:
		want := math.Float32frombits(binary.LittleEndian.Uint32(mag))
		f, ok := ccFloat(fs.Get("magnitude_f32"))
		if !ok || !(float32(f) == want || math.IsNaN(f) && want != want) {
			return fmt.Errorf("magnitude_f32: want %v", want)
		}
		if w.Intended.MagKind == "f32" && float32(f) != float32(w.Intended.Mag) {
			return fmt.Errorf("magnitude_f32 %v, encoded %v", f, w.Intended.Mag)
		}
	}
	return nil
}

// FuzzEncoderCrossCheck generates sessions from the fuzzed seed and checks
// every record against the encoder's truth.
func FuzzEncoderCrossCheck(f *testing.F) {
	f.Add(uint64(0), false)
	f.Add(uint64(14), true)
	f.Add(uint64(99), true)
	f.Fuzz(func(t *testing.T, seed uint64, broken bool) {
		s := roboidenc.NewSession(roboidenc.Options{Seed: seed, Broken: broken, Ticks: 20 + int(seed%17)})
		got := ccRun(t, s)
		for d := range 2 {
			ccCheck(t, fmt.Sprintf("fuzz %s", roboidenc.RoleName(d)), got[d], s.Truth[d])
		}
	})
}

// The committed sample files are checked against their truth sidecars
// through the CLI by TestSamplesMatchEncoderTruth in cmd/dissect.
