package neptuneenc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVectors: the vector of protocols.md §2.6 and messages worked out by
// hand from the layouts of §2.3 and the wiki tables (§2.4: little-endian,
// float32, bool one byte).
func TestVectors(t *testing.T) {
	w32, w16 := Wiki{}, Wiki{Int: Int16}
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"§2.6 set motor 0 forward 0", SetMotor(0, 0, 0), "04 01 00 00 00"},
		{"abort", Abort(), "01 00"},
		{"set motor 3 reverse 200", SetMotor(3, 1, 200), "04 01 03 01 c8"},
		{"translate z +", Translate(AxisZ, 1), "03 02 02 01"},
		{"rotate x 255", Rotate(AxisX, 0xff), "03 03 00 ff"},
		{"stabilize on", Stabilize(1), "02 04 01"},
		{"lamp off", Lamp(0), "02 05 00"},
		{"unknown 9", Command(9, 0x12, 0x34), "03 09 12 34"},
		{"raw", Raw(0xc8, []byte{1}), "c8 01"},
		// 0.5 = 0x3f000000; 100 = 0x64.
		{"raw motor int32", w32.RawMotorBody(3, true, 0.5, 100), "03 01 00 00 00 3f 64 00 00 00"},
		{"raw motor int16", w16.RawMotorBody(3, false, 0.5, 100), "03 00 00 00 00 3f 64 00"},
		{"raw motor int16 -1", w16.RawMotorBody(0, true, 1, -1), "00 01 00 00 80 3f ff ff"},
		{"raw motor int32 -1", w32.RawMotorBody(0, true, 1, -1), "00 01 00 00 80 3f ff ff ff ff"},
		// -45 = 0xc2340000.
		{"position", w32.PositionMotorBody(6, -45, 0.5), "06 00 00 34 c2 00 00 00 3f"},
		{"relay", w32.RelayBody(1, true), "01 01"},
		{"sensor int32", w32.SensorDataBody(1, 0, []byte{0xaa}), "01 00 00 00 00 00 00 00 aa"},
		{"sensor int16", w16.SensorDataBody(2, 3, []byte("2")), "02 00 03 00 32"},
		{"packet", Packet(WikiRelay, 2, 250, w32.RelayBody(1, false)), "03 02 fa 01 00"},
	}
	for _, c := range cases {
		if want := unhex(t, c.want); !bytes.Equal(c.got, want) {
			t.Errorf("%s: got % x, want % x", c.name, c.got, want)
		}
	}
	for code, n := range map[byte]int{1: 4, 2: 3, 3: 3, 4: 2, 5: 2} {
		if got, ok := WantLength(code); !ok || got != n {
			t.Errorf("WantLength(%d) = %d, %v", code, got, ok)
		}
	}
	if _, ok := WantLength(0); ok {
		t.Error("abort has a required length")
	}
	if n, _ := w16.BodyLen(WikiRawMotor); n != 8 {
		t.Errorf("int16 raw motor body %d", n)
	}
	if n, _ := w32.BodyLen(WikiSensorData); n != 8 {
		t.Errorf("int32 sensor data minimum %d", n)
	}
}

func TestFirstSync(t *testing.T) {
	three := append(append(SetMotor(0, 0, 1), Lamp(1)...), Abort()...) // [0,5) [5,8) [8,10)
	cases := []struct {
		name string
		b    []byte
		from int
		want int
		amb  bool
	}{
		{"at start", three, 0, 0, false},
		{"from 1", three, 1, 10, false},
		{"junk >= 100 first", append([]byte{0xc8, 0x64, 0xff}, three...), 0, 3, false},
		{"wrong length is not well formed", append(Command(CodeLamp, 1, 1), three...), 0, 4, false},
		{"unknown type is not well formed", append(Command(9), three...), 0, 2, false},
		{"zero length is not well formed", append([]byte{0}, three...), 0, 1, false},
		// 05 00 is a long abort; 04 01 00 00 runs past the end: undecided, no hit.
		{"long abort runs past the end", append([]byte{0xff, 0x05, 0x00}, three[:4]...), 0, 7, false},
		{"long abort is not well formed", append([]byte{0x03, 0x00, 0xde, 0xad}, three...), 0, 4, false},
		// 04 01 00 01 00 | 01 00 | end: the chain at 0 runs past the end;
		// three aborts start at 1.
		{"undecided before a hit", []byte{0x04, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00}, 0, 1, true},
	}
	for _, c := range cases {
		got, err := FirstSync(c.b, c.from)
		if got != c.want || errors.Is(err, ErrAmbiguous) != c.amb {
			t.Errorf("%s: FirstSync = %d, %v; want %d, ambiguous %v", c.name, got, err, c.want, c.amb)
		}
	}
}

// summary lists records as type@offset+length.
func summary(ms []Message) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Type+"@"+itoa(m.Offset)+"+"+itoa(m.Length))
	}
	return strings.Join(s, " ")
}

func itoa(v int64) string {
	j, _ := json.Marshal(v)
	return string(j)
}

// TestBuilder checks a stream with every form, records worked out by hand.
func TestBuilder(t *testing.T) {
	var b Builder
	b.Lamp(1)                         // [0,3)
	b.ZeroLength()                    // [3,4): reruns lamp (type 5 left in the buffer)
	b.WrongLength(CodeSetMotor, 2)    // [4,7): 02 01 02
	b.Unknown(9, 0x12)                // [7,10): 02 09 12
	b.Garbage([]byte{0xc8, 0xff})     // [10,12): each byte dropped alone
	b.Translate(AxisY, 1)             // [12,16)
	b.Rotate(3, 0)                    // [16,20): axis 3, well-formed by length
	b.Stabilize(0)                    // [20,23)
	b.AbortArgs(0xde)                 // [23,26)
	b.SetMotor(9, 0, 1)               // [26,31)
	b.Truncated(SetMotor(0, 0, 0), 2) // [31,33)
	buf, ms, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(buf) != 33 {
		t.Fatalf("%d bytes", len(buf))
	}
	want := "lamp@0+3 lamp@3+1 set_motor@4+3 unknown@7+3 skipped@10+2 translate@12+4 rotate@16+4 stabilize@20+3 abort@23+3 set_motor@26+5 skipped@31+2"
	if s := summary(ms); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
	warn := "no yes yes yes any no yes no no yes any"
	var got []string
	for _, m := range ms {
		got = append(got, m.Warn.String())
	}
	if strings.Join(got, " ") != warn {
		t.Errorf("warnings %v", got)
	}
	j, _ := json.Marshal(ms[3])
	if string(j) != `{"type":"unknown","offset":7,"length":3,"fields":{"data":"0912"},"match":"exact","warning":"yes","wire":"020912"}` {
		t.Errorf("unknown: %s", j)
	}
	j, _ = json.Marshal(ms[5])
	if string(j) != `{"type":"translate","offset":12,"length":4,"fields":{"axis":"y"},"match":"subset","warning":"no","not_asserted":["sign: its rendering (the raw byte is 0x01)"],"wire":"03020101"}` {
		t.Errorf("translate: %s", j)
	}
	j, _ = json.Marshal(ms[9])
	if string(j) != `{"type":"set_motor","offset":26,"length":5,"fields":{"motor":9,"direction":"forward","magnitude":1},"match":"exact","warning":"yes","wire":"0401090001"}` {
		t.Errorf("set_motor: %s", j)
	}
	if j, _ = json.Marshal(ms[4]); string(j) != `{"type":"skipped","offset":10,"length":2,"fields":{}}` {
		t.Errorf("skipped: %s", j)
	}

	// Garbage followed by two messages: the device drops the one byte and
	// runs both; a length 0 at the start reruns the zeroed buffer's abort.
	var c Builder
	c.ZeroLength()
	c.Garbage([]byte{0xff})
	c.Lamp(1)
	c.Lamp(0)
	_, ms, err = c.Finish()
	if err != nil || summary(ms) != "abort@0+1 skipped@1+1 lamp@2+3 lamp@5+3" {
		t.Errorf("short tail: %s, %v", summary(ms), err)
	}
}

func TestBuilderErrors(t *testing.T) {
	cases := map[string]func(b *Builder){
		"known as unknown": func(b *Builder) { b.Unknown(CodeLamp) },
		"right length":     func(b *Builder) { b.WrongLength(CodeLamp, 1) },
		"abort length":     func(b *Builder) { b.WrongLength(CodeAbort, 1) },
		"garbage < 100":    func(b *Builder) { b.Garbage([]byte{99}) },
		"after truncation": func(b *Builder) { b.Truncated(Abort(), 1); b.Abort() },
		// 0x01 after 0xff is a length the device reads: no garbage.
		"length after garbage": func(b *Builder) { b.Garbage([]byte{0xff, 0x01}) },
	}
	for name, f := range cases {
		var b Builder
		f(&b)
		if _, _, err := b.Finish(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestApplyGap(t *testing.T) {
	var b Builder
	for i := range 8 {
		b.SetMotor(byte(i%5), 0, byte(i)) // [5i, 5i+5)
	}
	buf, ms, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	// Gap [7,12): the bytes from 12 are 02 00 02 (a long abort, not well
	// formed), 00, then 02 04 01 (stabilize) 03 00 03 04 (a long abort):
	// three set_motor start at 15.
	got, err := ApplyGap(buf, ms, 7, 12)
	if err != nil || summary(got) != "set_motor@0+5 skipped@5+2 gap@7+5 skipped@12+3 set_motor@15+5 set_motor@20+5 set_motor@25+5 set_motor@30+5 set_motor@35+5" {
		t.Errorf("gap [7,12): %s, %v", summary(got), err)
	}
	got, err = ApplyGap(buf, ms, 7, 14)
	if err != nil {
		t.Fatal(err)
	}
	// From 14: 02 04 01 is a stabilize, 03 00 03 04 a long abort: no
	// chain at 14; three set_motor start at 15.
	if s := summary(got); s != "set_motor@0+5 skipped@5+2 gap@7+7 skipped@14+1 set_motor@15+5 set_motor@20+5 set_motor@25+5 set_motor@30+5 set_motor@35+5" {
		t.Errorf("gap [7,14): %s", s)
	}
	got, err = ApplyGap(buf, ms, 10, 20)
	if err != nil || summary(got) != "set_motor@0+5 set_motor@5+5 gap@10+10 set_motor@20+5 set_motor@25+5 set_motor@30+5 set_motor@35+5" {
		t.Errorf("gap [10,20): %s, %v", summary(got), err)
	}
	// A resynchronisation point inside a message: set_motor [0,5), then
	// 0a 09 02 05 01 02 05 01 02 05 01 [5,16); after a gap [3,6) three
	// lamps start at 7.
	var u Builder
	u.SetMotor(0, 0, 0)
	u.Unknown(9, 2, 5, 1, 2, 5, 1, 2, 5, 1)
	u.Lamp(1)
	ubuf, ums, err := u.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyGap(ubuf, ums, 3, 6); err == nil {
		t.Error("gap [3,6): resync inside a message accepted")
	}
	// A gap after a dropped byte: ff [0,1) is dropped alone and each lamp
	// [1,4) [4,7) ... runs as soon as it is read, so nothing before the gap
	// waits for a chain. Gap [5,7) cuts lamp@4: its byte 4 is skipped; from
	// 7 three lamps start.
	var c Builder
	c.Garbage([]byte{0xff})
	for range 5 {
		c.Lamp(1)
	}
	buf, ms, err = c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	got, err = ApplyGap(buf, ms, 5, 7)
	if err != nil || summary(got) != "skipped@0+1 lamp@1+3 skipped@4+1 gap@5+2 lamp@7+3 lamp@10+3 lamp@13+3" {
		t.Errorf("gap [5,7) after garbage: %s, %v", summary(got), err)
	}
	// A gap inside a run of garbage (the fuzz case of issue 22): lamp
	// [0,3), c8 c8 c8 c8 [3,7), lamp [7,10), set_motor [10,15), then three
	// lamps [15,24). Gap [4,6): c8@3 is skipped before it; after it c8@6 is
	// skipped while nothing is known, and lamp@7, set_motor@10, lamp@15
	// chain, so decoding starts afresh at 7.
	var g Builder
	g.Lamp(1)
	g.Garbage([]byte{0xc8, 0xc8, 0xc8, 0xc8})
	g.Lamp(0)
	g.SetMotor(0, 1, 2)
	for range 3 {
		g.Lamp(1)
	}
	buf, ms, err = g.Finish()
	if err != nil {
		t.Fatal(err)
	}
	got, err = ApplyGap(buf, ms, 4, 6)
	if err != nil || summary(got) != "lamp@0+3 skipped@3+1 gap@4+2 skipped@6+1 lamp@7+3 set_motor@10+5 lamp@15+3 lamp@18+3 lamp@21+3" {
		t.Errorf("gap [4,6) inside garbage: %s, %v", summary(got), err)
	}
	// A length 0 right after a gap says nothing: the buffer's type byte is
	// not known (the lost bytes may have held any message), and a chain
	// never starts at a length 0. Abort [0,2), set_motor [2,7), gap [7,9)
	// over a lamp's first two bytes, its last byte 02@9 (read as a length
	// it would make 02 00 a long abort, no chain), 00@10 (a length 0 that
	// truly reruns lamp), then three set_motor [11,26): 9 and 10 are
	// skipped.
	var z Builder
	z.Abort()
	z.SetMotor(1, 0, 0)
	z.Lamp(2)
	z.ZeroLength()
	for range 3 {
		z.SetMotor(2, 0, 9)
	}
	buf, ms, err = z.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if ms[3].Type != TypeLamp || ms[3].Offset != 10 {
		t.Fatalf("length 0 after a lamp: %s", summary(ms))
	}
	got, err = ApplyGap(buf, ms, 7, 9)
	if err != nil || summary(got) != "abort@0+2 set_motor@2+5 gap@7+2 skipped@9+2 set_motor@11+5 set_motor@16+5 set_motor@21+5" {
		t.Errorf("gap [7,9) before a length 0: %s, %v", summary(got), err)
	}
}

func TestPilotSession(t *testing.T) {
	a, b := NewPilotSession(Options{Seed: 3, Broken: true}), NewPilotSession(Options{Seed: 3, Broken: true})
	if !bytes.Equal(a.Stream, b.Stream) {
		t.Fatal("not deterministic")
	}
	var off int64
	count := map[string]int{}
	for _, m := range a.Truth {
		if m.Offset != off {
			t.Fatalf("records do not tile at %d", off)
		}
		if !m.IsEvent() && !bytes.Equal(m.Wire, a.Stream[m.Offset:m.End()]) {
			t.Fatalf("wire of %s", m.String())
		}
		off = m.End()
		count[m.Type]++
	}
	if off != int64(len(a.Stream)) {
		t.Fatalf("records end at %d of %d", off, len(a.Stream))
	}
	// 60 updates × 4 thrusters + 4 stops, 6 relay toggles, motor 9, the
	// wrong-length set_motor; the one unknown is type 9 (the length 0
	// follows a translate and reruns it).
	if count[TypeSkipped] != 2 || count[TypeUnknown] != 1 || count[TypeAbort] != 1 || count[TypeSetMotor] != 60*4+4+6+2 ||
		count[TypeLamp] != 3 || count[TypeStabilize] != 2 {
		t.Errorf("counts %v", count)
	}
	last := a.Truth[len(a.Truth)-1]
	if last.Type != TypeSkipped || last.Length != 1 || a.Stream[last.Offset] != 1 {
		t.Errorf("last record %s", last.String())
	}
	clean := NewPilotSession(Options{Seed: 3})
	for _, m := range clean.Truth {
		if m.Warn != truth.No || m.IsEvent() {
			t.Fatalf("clean session: %s", m.String())
		}
	}
}

func TestWikiSession(t *testing.T) {
	for _, w := range []IntWidth{Int32, Int16} {
		s := NewWikiSession(WikiOptions{Seed: 1, Int: w, Broken: true})
		var off int64
		count := map[string]int{}
		for i, m := range s.Truth {
			d := s.Datagrams[i]
			if m.Offset != off || d.Start != m.Offset || d.End != m.End() || !bytes.Equal(m.Wire, s.Stream[d.Start:d.End]) {
				t.Fatalf("int%d: record %d does not match its datagram", 8*w, i)
			}
			off = m.End()
			count[m.Type]++
		}
		if count[TypeUnknown] != 1 || count[TypeRelay] != 5 || count[TypeSensorData] != 8 || count[TypePositionMotor] != 10 || count[TypeSpeedMotor] != 41 {
			t.Errorf("int%d: counts %v", 8*w, count)
		}
		// The first packet: relay 1 on, priority 1, sequence 250.
		if j, _ := json.Marshal(s.Truth[0]); !strings.HasPrefix(string(j), `{"type":"relay","offset":0,"length":5,"fields":{"priority":1,"sequence":250,"relay_id":1,"enable":true},"match":"exact","warning":"no","wire":"0301fa0101"}`) {
			t.Errorf("first record %s", j)
		}
	}
	// The cut packet keeps motor_id and direction only.
	s := NewWikiSession(WikiOptions{Seed: 1, Broken: true})
	for _, m := range s.Truth {
		if m.Type == TypeSpeedMotor && m.Warn == truth.Yes {
			if m.FieldsJSON() != `{"priority":1,"sequence":`+itoa(int64(m.Wire[2]))+`,"motor_id":2,"direction":"forward"}` || len(m.Wire) != 7 {
				t.Errorf("cut packet %s", m.String())
			}
		}
	}
}
