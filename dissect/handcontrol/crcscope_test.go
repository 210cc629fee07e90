package handcontrol

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/testenc/handcontrolenc"
)

// The Android host app's test frames (protocols.md §1.4): its CRC covers
// the SFD too, crc8(SFD+03 02 00 34 df) = 0x70 and crc8(SFD+02 00 00) =
// 0xef.
var (
	vAndroidTelemetry = h("fd ba dc 01 50 b4 11 ff 03 02 00 34 df 70")
	vAndroidERR       = h("fd ba dc 01 50 b4 11 ff 02 00 00 ef")
)

// TestCRCScope: a frame is valid when its CRC covers type, size and
// payload, or the SFD too (the Android convention); the record says which
// in crc_scope, which a frame wrong under both lacks.
func TestCRCScope(t *testing.T) {
	for _, c := range []struct {
		name  string
		dir   dissect.Dir
		b     []byte
		ok    bool
		scope string
	}{
		{"android telemetry", 1, vAndroidTelemetry, true, scopeSFD},
		{"android ERR", 1, vAndroidERR, true, scopeSFD},
		{"usual ACK", 1, vACK, true, scopeHeader},
		{"usual GetGestures", 0, h("fd ba dc 01 50 b4 11 ff 06 02 00 ba 05 b1"), true, scopeHeader},
		{"android GetGestures (§1.4 incl SFD f5)", 0, h("fd ba dc 01 50 b4 11 ff 06 02 00 ba 05 f5"), true, scopeSFD},
		{"wrong under both (§1.9 b6)", 0, vBadPerform, false, ""},
		{"wrong under both (§1.9 8a)", 0, vBadSetSettings, false, ""},
	} {
		s := newSession(t, Options{}, true)
		n, err := s.parse(c.dir, t0, c.b)
		if n != len(c.b) || err != nil {
			t.Fatalf("%s: Parse = %d, %v", c.name, n, err)
		}
		ok, _ := s.Rec.Fields.Get("crc_ok")
		scope, has := s.Rec.Fields.Get("crc_scope")
		if ok.Bool() != c.ok || has != (c.scope != "") || has && scope.Str() != c.scope {
			t.Errorf("%s: crc_ok %v, crc_scope %v %v; want %v %q", c.name, ok.Bool(), has, scope, c.ok, c.scope)
		}
		crcWarn := false
		for _, w := range s.Rec.Warnings {
			crcWarn = crcWarn || strings.HasPrefix(w, "crc ")
		}
		if crcWarn == c.ok {
			t.Errorf("%s: warnings %q", c.name, s.Rec.Warnings)
		}
		if want := []string{"code", "role", "crc", "crc_ok"}; c.ok {
			if s.Rec.Fields[4].Key != "crc_scope" {
				t.Errorf("%s: crc_scope is field %d", c.name, 4)
			}
		} else {
			for i, k := range want {
				if s.Rec.Fields[i].Key != k {
					t.Errorf("%s: field %d is %s", c.name, i, s.Rec.Fields[i].Key)
				}
			}
		}
	}
}

// TestDetectAndroid: a capture holding only frames of the Android
// convention is detected, on a serial link and on TCP.
func TestDetectAndroid(t *testing.T) {
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	serial := &dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.Serial}}
	tcp := &dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}}
	for _, c := range []struct {
		name string
		s    *dissect.StreamInfo
		b    []byte
	}{
		{"serial", serial, vAndroidERR},
		{"serial after garbage", serial, cat(garbage8, vAndroidTelemetry)},
		{"tcp", tcp, vAndroidTelemetry},
		{"encoder", serial, handcontrolenc.MustFrame(handcontrolenc.CodeStartTelemetry, handcontrolenc.StartTelemetry(100).Bytes(), handcontrolenc.SFDInCRC())},
	} {
		if got := p.Detect(c.s, 0, c.b); got != dissect.Yes {
			t.Errorf("%s: Detect = %v, want Yes", c.name, got)
		}
	}
}

// androidSession is a session of the Android host app's convention,
// written by the independent encoder.
func androidSession(t testing.TB) *handcontrolenc.Session {
	t.Helper()
	f := handcontrolenc.NewFlow()
	f.FrameOptions(handcontrolenc.SFDInCRC())
	f.Request(10*time.Millisecond, handcontrolenc.CodeGetSettings, nil)
	f.Reply(25*time.Millisecond, handcontrolenc.CodeGetSettings, handcontrolenc.GetSettings(handcontrolenc.Settings{EnableEMG: true}))
	f.Request(140*time.Millisecond, handcontrolenc.CodeSetPositions, handcontrolenc.SetPositions(handcontrolenc.Fingers{Pointer: 10, Middle: 20, Ring: 30, Little: 40, Thumb: 50}))
	f.Reply(152*time.Millisecond, handcontrolenc.CodeACK, nil)
	f.Request(300*time.Millisecond, handcontrolenc.CodeStartTelemetry, handcontrolenc.StartTelemetry(100))
	f.Reply(305*time.Millisecond, handcontrolenc.CodeACK, nil)
	for k := range 5 {
		f.Telemetry(time.Duration(405+100*k)*time.Millisecond, handcontrolenc.Telemetry{Power: int32(80 + k), LastTimeSync: 1620475200})
	}
	f.Request(950*time.Millisecond, handcontrolenc.CodeStopTelemetry, nil)
	f.Reply(958*time.Millisecond, handcontrolenc.CodeACK, nil)
	s, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStreamAndroid runs an Android-convention session through
// dissect.Stream without a decode-as rule, whole and in random chunks: the
// protocol is detected and every record is the encoder's, with crc_ok true
// and crc_scope "sfd+header+payload", and no warning.
func TestStreamAndroid(t *testing.T) {
	sess := androidSession(t)
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := dissecttest.Registry(t, nil, p)
	var evs []event
	for _, w := range sess.Writes {
		evs = append(evs, event{dir: dissect.Dir(w.Dir), at: t0.Add(w.At), data: sess.Stream[w.Dir][w.Start:w.End]})
	}
	evs = append(evs, event{dir: 0, at: t0.Add(time.Second)}, event{dir: 1, at: t0.Add(time.Second)})
	rng := rand.New(rand.NewPCG(12, 12))
	for trial := range 30 {
		var r *rand.Rand
		if trial > 0 {
			r = rng
		}
		recs, _ := feedStream(t, reg, true, evs, r)
		dissecttest.CheckTiling(t, recs, [2]int64{int64(len(sess.Stream[0])), int64(len(sess.Stream[1]))}, dirOf)
		var got [2][]*dissect.Record
		for _, rec := range recs {
			got[dirOf(rec)] = append(got[dirOf(rec)], rec)
		}
		for d := range 2 {
			want := sess.Truth[d]
			if len(got[d]) != len(want) {
				t.Fatalf("trial %d dir %d: %d records, want %d", trial, d, len(got[d]), len(want))
			}
			for i, m := range want {
				rec := got[d][i]
				ok, _ := rec.Fields.Get("crc_ok")
				scope, _ := rec.Fields.Get("crc_scope")
				crc, _ := rec.Fields.Get("crc")
				_, matched := rec.Fields.Get("request_code")
				if rec.Proto != "handcontrol" || rec.Type != m.Type || rec.Offset != m.Offset || rec.Length != m.Length || len(rec.Warnings) != 0 ||
					!ok.Bool() || scope.Str() != handcontrolenc.ScopeSFD || crc.Int() != int64(m.CRC) || matched != m.Matched {
					t.Fatalf("trial %d dir %d record %d: %s %s %d+%d %v %q; want %s", trial, d, i, rec.Proto, rec.Type, rec.Offset, rec.Length, rec.Fields, rec.Warnings, m.String())
				}
			}
		}
	}
}

// TestImplausibleSize: a device header declaring 65535 payload bytes,
// followed by 100 valid Telemetry frames (written by the encoder, both
// conventions) and the end of the stream, is one skipped record naming the
// size, and the 100 frames are decoded, for any segmentation.
func TestImplausibleSize(t *testing.T) {
	var s script
	tel := func(k int) []byte {
		var opts []handcontrolenc.FrameOption
		if k%2 == 1 {
			opts = append(opts, handcontrolenc.SFDInCRC())
		}
		return handcontrolenc.MustFrame(handcontrolenc.CodeTelemetry, handcontrolenc.Telemetry{Power: int32(k), EMG: 300}.Msg().Bytes(), opts...)
	}
	parts := []part{msg(tel(0), TypeTelemetry, nil, nil), msg(tel(1), TypeTelemetry, nil, nil)}
	parts = append(parts, skip(h("fd ba dc 01 50 b4 11 ff 03 ff ff"), "declares 65535 payload bytes, yet a whole frame with a valid crc starts 11 bytes into it"))
	for k := range 100 {
		parts = append(parts, msg(tel(k), TypeTelemetry, nil, nil))
	}
	s.add(1, t0, parts...)
	s.end(t0.Add(time.Second))
	reg := registry(t, Options{})
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := range 40 {
		var r *rand.Rand
		if trial > 0 {
			r = rng
		}
		recs, _ := feedStream(t, reg, trial%2 == 0, s.evs, r)
		dissecttest.CheckTiling(t, recs, s.size, dirOf)
		checkRecords(t, recs, s.wants, trial%2 == 0)
	}
}

// TestInnerLinear: a frame waiting for 65535 payload bytes that hold no
// SFD, fed one byte at a time, is searched in time linear in its bytes:
// the search resumes where it stopped (see parser.inner).
func TestInnerLinear(t *testing.T) {
	s := newSession(t, Options{}, true)
	p := s.P.(*parser)
	b := append(h("fd ba dc 01 50 b4 11 ff 03 ff ff"), bytes.Repeat([]byte{0x5a}, 65535)...)
	for n := 11; n < len(b); n++ {
		if got, err := s.parse(1, t0, b[:n]); got != len(b)+1 || err != dissect.ErrNeedMore {
			t.Fatalf("Parse(%d bytes) = %d, %v", n, got, err)
		}
		if lk := p.look[1]; !lk.set || lk.pos < n-sfdLen {
			t.Fatalf("after %d bytes the search stands at %d", n, lk.pos)
		}
	}
}
