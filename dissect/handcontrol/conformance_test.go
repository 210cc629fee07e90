package handcontrol_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/handcontrol"
	enc "github.com/dissect-tools/dissect/internal/testenc/handcontrolenc"
)

// TestConformance runs the checks every protocol passes (dissecttest.Conformance)
// over the separate encoder's sessions: those of the two sample captures
// (the serial link and the TCP bridge) and one with every request the
// samples lack, each over both transports, with the built-in schemas and
// with raw payloads.
func TestConformance(t *testing.T) {
	var valid []dissecttest.Input
	for _, s := range []struct {
		name string
		make func() (*enc.Session, error)
	}{{"serial session", enc.SerialSession}, {"bridge session", enc.BridgeSession}, {"every request", everyRequest}} {
		sess, err := s.make()
		if err != nil {
			t.Fatal(err)
		}
		valid = append(valid, dissecttest.Input{Name: s.name,
			Units: dissecttest.Spans(sess.Stream, sess.Writes, func(w enc.Write) (int, int64, int64) { return w.Dir, w.Start, w.End })})
	}
	for _, o := range []struct {
		name string
		opt  handcontrol.Options
	}{{"schemas", handcontrol.Options{}}, {"raw", handcontrol.Options{Raw: true}}} {
		t.Run(o.name, func(t *testing.T) {
			dissecttest.Conformance(t, dissecttest.Suite{
				New: func() dissect.Protocol {
					p, err := handcontrol.New(o.opt)
					if err != nil {
						t.Fatal(err)
					}
					return p
				},
				Valid:       valid,
				NotProduced: notSent(),
				// Detect checks the CRC of a frame that starts in its
				// 512-byte window once the whole frame is there: up to
				// 12 + 65535 bytes past the window's last byte.
				DetectBound: 512 + 12 + 0xffff,
			})
		})
	}
}

// everyRequest is a session of the requests the samples lack (7, 8, 10,
// 12, 17, and a SetSettings with a valid CRC), each acknowledged.
func everyRequest() (*enc.Session, error) {
	g := enc.Gesture{ID: enc.GesturePinch, Name: "pinch", LastTimeSync: enc.SyncTime, Repetitions: 2,
		Actions: []enc.GestureAction{{Fingers: enc.Fingers{Pointer: 10, Middle: 20, Ring: 30, Little: 40, Thumb: 50}, Delay: 100}}}
	f := enc.NewFlow()
	at := time.Duration(0)
	for _, r := range []struct {
		code byte
		msg  *enc.Msg
	}{
		{enc.CodeSaveGesture, enc.SaveGesture(enc.SyncTime, g)},
		{enc.CodePerformGestureRaw, enc.PerformGestureRaw(g)},
		{enc.CodeDeleteGesture, enc.DeleteGesture(enc.SyncTime, g.ID)},
		{enc.CodeUpdateLastTimeSync, enc.UpdateLastTimeSync(enc.SyncTime + 60)},
		{enc.CodeSetMioPatterns, enc.SetMioPatterns(enc.MioPattern{Pattern: 3, GestureID: enc.GestureFist})},
		{enc.CodeSetSettings, enc.SetSettings(enc.Settings{EnableEMG: true, EnableDriver: true}, false)},
	} {
		at += 20 * time.Millisecond
		f.Request(at, r.code, r.msg)
		f.Reply(at+5*time.Millisecond, enc.CodeACK, nil)
	}
	return f.Finish()
}

// notSent lists the declared types no conversation between a host and a
// device has: each code is declared for both sides (a frame is typed by
// its code and by who sent it), but the host sends only requests (codes
// 4-17) and the device only ACK, ERR, Telemetry and the data replies 4, 6
// and 13 (protocols.md §1.5); code 0 and codes past 17 are no message.
func notSent() map[string]string {
	out := map[string]string{}
	name := func(code byte) string {
		if code > enc.CodeSetMioPatterns {
			return enc.TypeUnknown
		}
		return enc.TypeName(code)
	}
	for code := byte(0); code <= enc.CodeSetMioPatterns+1; code++ {
		if code < enc.CodeGetSettings || code > enc.CodeSetMioPatterns {
			out[name(code)+".request"] = fmt.Sprintf("the host never sends code %d: requests are codes 4-17", code)
		}
		switch code {
		case enc.CodeACK, enc.CodeERR, enc.CodeTelemetry, enc.CodeGetSettings, enc.CodeGetGestures, enc.CodeGetTelemetry:
		case enc.CodeGetMioPatterns:
			out[name(code)+".response"] = "the device answers GetMioPatterns with code 13, its known quirk; a 16 from the device is decoded but never seen"
		default:
			out[name(code)+".response"] = fmt.Sprintf("the device never sends code %d: it sends ACK, ERR, Telemetry and the data replies 4, 6 and 13", code)
		}
	}
	return out
}
