package handcontrolenc

import (
	"bytes"
	"testing"
)

// TestSFDInCRC checks the Android host app's convention against the CRCs
// protocols.md §1.4 gives with the SFD included: its own test's two frames
// (crc8(SFD+03 02 00 34 df) = 0x70, crc8(SFD+02 00 00) = 0xef) and the
// "crc(incl SFD)" column of the verification table.
func TestSFDInCRC(t *testing.T) {
	for _, v := range []struct {
		code    byte
		payload string
		crc     byte
	}{
		{CodeTelemetry, "34df", 0x70},
		{CodeERR, "", 0xef},
		{CodePerformGestureID, "ffffffffff", 0xeb},
		{CodeSetSettings, "abcd", 0x67},
		{CodeGetGestures, "ba05", 0xf5},
		{CodeGetSettings, "", 0x92},
		{CodeSetSettings, "", 0xf9},
		{CodeSetSettings, "32", 0x14},
		{CodeGetGestures, "fbac", 0xed},
	} {
		f := MustFrame(v.code, unhex(t, v.payload), SFDInCRC())
		right := MustFrame(v.code, unhex(t, v.payload))
		if !bytes.Equal(f[:len(f)-1], right[:len(right)-1]) || f[len(f)-1] != v.crc {
			t.Errorf("code %d %s: %x, want the same frame with crc %#02x", v.code, v.payload, f, v.crc)
		}
		if got := CRCScope(f); got != ScopeSFD || !CRCOK(f) {
			t.Errorf("code %d %s: scope %q, want %q", v.code, v.payload, got, ScopeSFD)
		}
		if got := CRCScope(right); got != ScopeHeader {
			t.Errorf("code %d %s, usual crc: scope %q, want %q", v.code, v.payload, got, ScopeHeader)
		}
		for _, bad := range [][]byte{MustFrame(v.code, unhex(t, v.payload), SFDInCRC(), CorruptCRC()), MustFrame(v.code, unhex(t, v.payload), CorruptCRC())} {
			if CRCOK(bad) || CRCScope(bad) != "" {
				t.Errorf("code %d %s: corrupted frame %x is valid", v.code, v.payload, bad)
			}
		}
	}
	// The two deliberately corrupted frames of §1.9 are wrong under both.
	for _, s := range []string{"fd ba dc 01 50 b4 11 ff 09 05 00 ff ff ff ff ff b6", "fd ba dc 01 50 b4 11 ff 05 02 00 ab cd 8a"} {
		if f := unhex(t, s); CRCOK(f) {
			t.Errorf("%s: valid", s)
		}
	}
}

// TestFlowSFDInCRC: a flow's frame options reach every frame, and the
// records say which convention their CRC follows.
func TestFlowSFDInCRC(t *testing.T) {
	f := NewFlow()
	f.FrameOptions(SFDInCRC())
	f.Request(ms(10), CodeStartTelemetry, StartTelemetry(100))
	f.Reply(ms(12), CodeACK, nil)
	f.Telemetry(ms(20), tele(0, ""))
	s, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for d := range 2 {
		for _, m := range s.Truth[d] {
			if !m.CRCOK || m.CRCScope != ScopeSFD || CRC8(m.Wire[:len(m.Wire)-1]) != m.CRC {
				t.Errorf("%s: crc_ok %v scope %q", m.String(), m.CRCOK, m.CRCScope)
			}
		}
	}
}
