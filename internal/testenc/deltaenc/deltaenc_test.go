package deltaenc

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

// TestVectors checks the encoder against the vectors of protocols.md §4.3
// and the spec's own example, copied here by hand.
func TestVectors(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"spec example: version 1", Version(1), "02 20 01 00 00 00"},
		{"magic", Magic(), "01 30 44 65 6c 74 61 52 56 72"},
		{"ping 0x0123456789abcdef", Ping(0x0123456789abcdef), "04 30 ef cd ab 89 67 45 23 01"},
		{"pong 0x0123456789abcdef", Pong(0x0123456789abcdef), "05 30 ef cd ab 89 67 45 23 01"},
		{"eot empty", EndOfTransmission(""), "06 f0 00 00 00 00"},
		{"eot bye", EndOfTransmission("bye"), "06 f0 03 00 00 00 62 79 65"},
		{"position (1,2,3,0)", ActuatorPosition(1, 2, 3, 0), "03 40 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 00 00"},
		{"curve [(0,0,0),(1,0.5,-1)]", Curve([][3]float32{{0, 0, 0}, {1, 0.5, -1}}),
			"09 f0 18 00 00 00" + strings.Repeat("00", 12) + "00 00 80 3f 00 00 00 3f 00 00 80 bf"},
		// Derived by hand from the id table (§4.2): same float layout as the position.
		{"current direction (1,2,3,0)", CurrentDirection(1, 2, 3, 0), "07 40 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 00 00"},
		{"desired direction (-1,0,0.5,2)", DesiredDirection(-1, 0, 0.5, 2), "08 40 00 00 80 bf 00 00 00 00 00 00 00 3f 00 00 00 40"},
		{"empty curve", Curve(nil), "09 f0 00 00 00 00"},
		{"raw mismatched 0x2003", Raw(0x2003, []byte{1, 2, 3, 4}), "03 20 01 02 03 04"},
		{"varraw 0xf00a", VarRaw(0xF00A, []byte("hi")), "0a f0 02 00 00 00 68 69"},
		{"bad size 0x7", BadSize(7, 0x003, []byte{0xaa}), "03 70 aa"},
		{"bad curve (13 bytes)", BadCurve([][3]float32{{1, 0.5, -1}}, []byte{0xee}),
			"09 f0 0d 00 00 00 00 00 80 3f 00 00 00 3f 00 00 80 bf ee"},
		{"truncated", Truncated(Version(1), 3), "02 20 01"},
	}
	for _, tt := range tests {
		if want := unhex(t, tt.want); !bytes.Equal(tt.got, want) {
			t.Errorf("%s: got % x, want % x", tt.name, tt.got, want)
		}
	}
}

func TestIDs(t *testing.T) {
	if got := MakeID(0xF, 0x009); got != IDCurve {
		t.Errorf("MakeID(F, 9) = %#x", got)
	}
	if got := MakeID(0x12, 0xF001); got != 0x2001 {
		t.Errorf("MakeID masks: got %#x, want 0x2001", got)
	}
	sizes := map[uint8]int{0: 1, 1: 2, 2: 4, 3: 8, 4: 16}
	for c := uint8(0); c < 16; c++ {
		n, ok := ContentSize(c)
		if want, def := sizes[c]; ok != def || n != want {
			t.Errorf("ContentSize(%#x) = %d, %v", c, n, ok)
		}
	}
	for _, id := range []uint16{0x3000, 0x2003, 0x4001, 0x300A, 0xF003} {
		if _, ok := TypeName(id); ok {
			t.Errorf("TypeName(%#x) known", id)
		}
	}
	if n, ok := TypeName(0x4008); !ok || n != "desired_direction" {
		t.Errorf("TypeName(0x4008) = %q, %v", n, ok)
	}
}

// TestBuilderBadSize: an undefined size code is skipped up to the first of
// three known messages; the expected records were worked out by hand.
func TestBuilderBadSize(t *testing.T) {
	var b Builder
	b.Magic()                                     // [0,10)
	b.BadSize(7, 0x001, []byte{0x01, 0x30, 0x00}) // [10,15): junk has a known-looking id at 11
	b.Version(1)                                  // [15,21)
	b.Ping(5)                                     // [21,31)
	b.Pong(5)                                     // [31,41)
	b.Unknown(0x300A, make([]byte, 8))            // [41,51)
	buf, msgs, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(buf) != 51 {
		t.Fatalf("len = %d", len(buf))
	}
	want := []struct {
		typ      string
		off, len int64
	}{
		{TypeMagic, 0, 10}, {TypeSkipped, 10, 5}, {TypeVersion, 15, 6}, {TypePing, 21, 10}, {TypePong, 31, 10}, {TypeUnknown, 41, 10},
	}
	if len(msgs) != len(want) {
		t.Fatalf("got %d records: %v", len(msgs), msgs)
	}
	for i, w := range want {
		if m := msgs[i]; m.Type != w.typ || m.Offset != w.off || m.Length != w.len {
			t.Errorf("record %d = %s, want %s@%d+%d", i, m.String(), w.typ, w.off, w.len)
		}
	}

	// Only two known messages after the bad id, then an unknown one: no
	// resync point, everything after it is skipped.
	var c Builder
	c.Version(1)
	c.BadSize(0xE, 0x002, nil)
	c.Version(1)
	c.Version(1)
	c.Unknown(0x000A, []byte{1})
	_, msgs, err = c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Type != TypeSkipped || msgs[1].Offset != 6 || msgs[1].Length != 2+6+6+3 {
		t.Errorf("got %v", msgs)
	}
}

func TestBuilderErrors(t *testing.T) {
	cases := map[string]func(b *Builder){
		"known id as unknown": func(b *Builder) { b.Unknown(IDPing, make([]byte, 8)) },
		"wrong content size":  func(b *Builder) { b.Unknown(0x300A, make([]byte, 4)) },
		"undefined code":      func(b *Builder) { b.Unknown(0x500A, nil) },
		"defined bad size":    func(b *Builder) { b.BadSize(4, 1, nil) },
		"curve multiple":      func(b *Builder) { b.BadCurve(nil, make([]byte, 12)) },
		"after truncation":    func(b *Builder) { b.Truncated(Magic(), 4); b.Magic() },
		"not a truncation":    func(b *Builder) { b.Truncated(Magic(), 10) },
		// The junk holds an EOT whose length runs past the end: a decoder
		// would wait for it, so the outcome is ambiguous.
		"ambiguous": func(b *Builder) {
			b.BadSize(9, 1, []byte{0x06, 0xf0, 0xff, 0xff, 0, 0})
			b.Magic()
			b.Magic()
			b.Magic()
		},
	}
	for name, f := range cases {
		var b Builder
		f(&b)
		if _, _, err := b.Finish(); err == nil {
			t.Errorf("%s: no error", name)
		} else if name == "ambiguous" && !errors.Is(err, ErrAmbiguous) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTruncatedAtEnd(t *testing.T) {
	var b Builder
	b.Magic()
	b.Truncated(Curve([][3]float32{{1, 2, 3}}), 9)
	buf, msgs, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(buf) != 19 || len(msgs) != 2 || msgs[1].Type != TypeSkipped || msgs[1].Offset != 10 || msgs[1].Length != 9 {
		t.Errorf("got %d bytes, %v", len(buf), msgs)
	}
}

func TestFirstSync(t *testing.T) {
	three := append(append(Magic(), Version(1)...), Ping(1)...) // 26 bytes
	cases := []struct {
		name string
		b    []byte
		from int
		want int
		err  bool
	}{
		{"at start", three, 0, 0, false},
		{"from 1: version and ping end the data", three, 1, 10, false}, // two complete messages ending exactly at the end
		{"junk then three", append([]byte{0xff, 0xff, 0xff}, three...), 0, 3, false},
		{"two only", three[10:], 0, 0, false}, // two complete messages ending exactly at the end: a hit
		{"magic alone (decoder's extra rule)", append(Magic(), 0xff), 0, 11, true},
		{"magic rule and three-message rule agree", append([]byte{0xff}, three...), 0, 1, false},
		{"mismatched size is not known", append(Raw(0x2003, make([]byte, 4)), three...), 0, 6, false},
		{"huge var length before", append([]byte{0x09, 0xf0, 0, 0, 0, 1}, three...), 0, 6, true},
	}
	for _, c := range cases {
		got, err := FirstSync(c.b, c.from)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: FirstSync = %d, %v; want %d, err %v", c.name, got, err, c.want, c.err)
		}
	}
}

func TestApplyGapAndCut(t *testing.T) {
	var b Builder
	for i := range 6 {
		b.Ping(uint64(i) * 0x0101010101010101) // [10i, 10i+10)
	}
	buf, msgs, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	// Gap [15,22): ping 1 cut short at 15, pings 2 lost/cut, resync at 30.
	got, err := ApplyGap(buf, msgs, 15, 22)
	if err != nil {
		t.Fatal(err)
	}
	want := "ping@0+10 skipped@10+5 gap@15+7 skipped@22+8 ping@30+10 ping@40+10 ping@50+10"
	if s := summary(got); s != want {
		t.Errorf("gap: got %s\nwant %s", s, want)
	}
	// The three pings after the gap form the resync chain: all are emitted
	// once the third is complete.
	if got[0].Ready != 10 || got[4].Ready != 60 || got[5].Ready != 60 || got[6].Ready != 60 {
		t.Errorf("gap: Ready = %d %d %d %d", got[0].Ready, got[4].Ready, got[5].Ready, got[6].Ready)
	}
	// A gap on boundaries leaves no skipped runs.
	got, err = ApplyGap(buf, msgs, 10, 20)
	if err != nil {
		t.Fatal(err)
	}
	if s, w := summary(got), "ping@0+10 gap@10+10 ping@20+10 ping@30+10 ping@40+10 ping@50+10"; s != w {
		t.Errorf("gap on boundaries: got %s", s)
	}
	// Two messages after the gap's cut one, ending exactly at the end of
	// the direction: the decoder resynchronises on them (worked out by
	// hand: ping 3's tail 35..40 skipped, pings 4 and 5 decoded).
	got, err = ApplyGap(buf, msgs, 10, 35)
	if err != nil {
		t.Fatal(err)
	}
	if s, w := summary(got), "ping@0+10 gap@10+25 skipped@35+5 ping@40+10 ping@50+10"; s != w {
		t.Errorf("gap near the end: got %s", s)
	}

	// A gap inside the chain the decoder needs to resynchronise after an
	// undefined size code: the chain's complete messages were never
	// emitted, so they join the skipped run. Worked out by hand:
	// magic [0,10) version [10,16) bad [16,21) pings at 21, 31, ..., 71.
	var g Builder
	g.Magic()
	g.Version(1)
	g.BadSize(7, 3, []byte{0xa5, 0x5a, 0xa5})
	for i := range 6 {
		g.Ping(uint64(i + 1))
	}
	gb, gm, err := g.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if gm[3].Ready != 51 {
		t.Errorf("chain Ready = %d, want 51", gm[3].Ready)
	}
	got, err = ApplyGap(gb, gm, 45, 47)
	if err != nil {
		t.Fatal(err)
	}
	if s, w := summary(got), "protocol_magic@0+10 protocol_version@10+6 skipped@16+29 gap@45+2 skipped@47+4 ping@51+10 ping@61+10 ping@71+10"; s != w {
		t.Errorf("gap in a resync chain: got %s\nwant %s", s, w)
	}

	// Cut at 1: the first bytes seen are "30 00" (id 0x0030, size 0): framable.
	if _, _, err := Cut(buf, msgs, 1); err == nil {
		t.Error("cut at 1 accepted")
	}
	// Cut at 13 (inside ping 1, id 0x0101...): bytes 01 01 -> size code 0: framable.
	if _, _, err := Cut(buf, msgs, 13); err == nil {
		t.Error("cut at 13 accepted")
	}
	// Pings with ids 0x77..: a cut inside gives id 0x7777, size code 7.
	var c Builder
	c.Ping(0x7777777777777777)
	for range 3 {
		c.Version(1)
	}
	buf, msgs, err = c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	nb, got, err := Cut(buf, msgs, 4)
	if err != nil {
		t.Fatal(err)
	}
	if s, w := summary(got), "skipped@0+6 protocol_version@6+6 protocol_version@12+6 protocol_version@18+6"; s != w || len(nb) != 24 {
		t.Errorf("cut: got %s (%d bytes)", s, len(nb))
	}
	if got[1].Ready != 24 || got[3].Ready != 24 || got[1].Warn != truth.Any || got[3].Warn != truth.No {
		t.Errorf("cut: Ready %d %d, Warn %v %v", got[1].Ready, got[3].Ready, got[1].Warn, got[3].Warn)
	}
	nb, got, err = Cut(buf, msgs, 10)
	if err != nil || summary(got) != "protocol_version@0+6 protocol_version@6+6 protocol_version@12+6" || len(nb) != 18 {
		t.Errorf("cut on a boundary: %s %v", summary(got), err)
	}
}

func summary(msgs []Message) string {
	var s []string
	for _, m := range msgs {
		s = append(s, strings.SplitN(m.String(), " ", 2)[0])
	}
	return strings.Join(s, " ")
}

func TestMarshalJSON(t *testing.T) {
	cases := []struct {
		m    Message
		want string
	}{
		{Message{Type: TypeActuatorPosition, Offset: 3, Length: 18, Vec: [4]float32{0.1, -2, 1e-7, 0}, Warn: truth.No},
			`{"type":"actuator_position","offset":3,"length":18,"fields":{"x":0.1,"y":-2,"z":1e-07,"u":0},"warning":"no"}`},
		{Message{Type: TypePong, Length: 10, PingID: 18446744073709551615, RTT: truth.Yes},
			`{"type":"pong","offset":0,"length":10,"fields":{"id":18446744073709551615},"rtt_ms":"yes"}`},
		{Message{Type: TypeUnknown, ID: 0x2003, Length: 6, Data: []byte{1, 0xab}, Warn: truth.Yes},
			`{"type":"unknown","offset":0,"length":6,"fields":{"message_id":8195,"data":"01ab"},"warning":"yes"}`},
		{Message{Type: TypeCurve, Length: 19, Points: [][3]float32{{1, 0.5, -1}}, Trailing: []byte{0xee}},
			`{"type":"curve","offset":0,"length":19,"fields":{"points":[[1,0.5,-1]]},"trailing":"ee"}`},
		{Message{Type: TypeEndOfTransmission, Length: 9, Reason: `a"b`},
			`{"type":"end_of_transmission","offset":0,"length":9,"fields":{"reason":"a\"b"}}`},
		{Message{Type: TypeGap, Offset: 7, Length: 2}, `{"type":"gap","offset":7,"length":2,"fields":{}}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.m)
		if err != nil || string(got) != c.want {
			t.Errorf("got %s (%v)\nwant %s", got, err, c.want)
		}
	}
}

// reencode rebuilds the wire bytes of a decoded-message record from its
// values: the truth must describe exactly the bytes.
func reencode(m *Message) []byte {
	switch m.Type {
	case TypeMagic:
		return Raw(IDMagic, []byte(m.Magic))
	case TypeVersion:
		return Version(m.Version)
	case TypeActuatorPosition:
		return ActuatorPosition(m.Vec[0], m.Vec[1], m.Vec[2], m.Vec[3])
	case TypeCurrentDirection:
		return CurrentDirection(m.Vec[0], m.Vec[1], m.Vec[2], m.Vec[3])
	case TypeDesiredDirection:
		return DesiredDirection(m.Vec[0], m.Vec[1], m.Vec[2], m.Vec[3])
	case TypePing:
		return Ping(m.PingID)
	case TypePong:
		return Pong(m.PingID)
	case TypeEndOfTransmission:
		return EndOfTransmission(m.Reason)
	case TypeCurve:
		return BadCurve(m.Points, m.Trailing)
	}
	return nil
}

func TestSession(t *testing.T) {
	for seed := range uint64(5) {
		s := NewSession(Options{Seed: seed})
		pings := map[uint64]bool{}
		for _, d := range []int{Server, Client} {
			var off int64
			for i, m := range s.Truth[d] {
				if m.Offset != off || m.Length <= 0 {
					t.Fatalf("seed %d %s record %d %s does not follow offset %d", seed, RoleName(d), i, m.String(), off)
				}
				off = m.End()
				if w := reencode(&m); !bytes.Equal(w, s.Stream[d][m.Offset:m.End()]) {
					t.Errorf("seed %d %s: %s does not describe its bytes", seed, RoleName(d), m.String())
				}
				if m.Type == TypePing {
					pings[m.PingID] = true
				}
				if m.Type == TypePong && (!pings[m.PingID] || m.RTT != truth.Yes) {
					t.Errorf("seed %d: pong %x answers no earlier ping", seed, m.PingID)
				}
			}
			if off != int64(len(s.Stream[d])) {
				t.Errorf("seed %d %s: records end at %d of %d", seed, RoleName(d), off, len(s.Stream[d]))
			}
			tr := s.Truth[d]
			if tr[0].Type != TypeMagic || tr[1].Type != TypeVersion || tr[len(tr)-1].Type != TypeEndOfTransmission {
				t.Errorf("seed %d %s: starts %s %s, ends %s", seed, RoleName(d), tr[0].Type, tr[1].Type, tr[len(tr)-1].Type)
			}
		}
		if s.Truth[Server][2].Type != TypeCurve || len(s.Truth[Server][2].Points) != 24 {
			t.Errorf("seed %d: third server message is %s", seed, s.Truth[Server][2].String())
		}
		if n := len(pings); n != 5 {
			t.Errorf("seed %d: %d pings, want 40/8 = 5", seed, n)
		}
		// Writes are in time order and cover each stream once, in order.
		var next [2]int64
		for i, w := range s.Sends {
			if i > 0 && w.At < s.Sends[i-1].At {
				t.Errorf("seed %d: send %d out of time order", seed, i)
			}
			if w.Start != next[w.Dir] || w.End <= w.Start {
				t.Errorf("seed %d: send %d covers [%d,%d), want start %d", seed, i, w.Start, w.End, next[w.Dir])
			}
			next[w.Dir] = w.End
		}
		if next[0] != int64(len(s.Stream[0])) || next[1] != int64(len(s.Stream[1])) {
			t.Errorf("seed %d: sends cover %v", seed, next)
		}
	}
	a, b, c := NewSession(Options{Seed: 7}), NewSession(Options{Seed: 7}), NewSession(Options{Seed: 8})
	if !bytes.Equal(a.Stream[1], b.Stream[1]) || !bytes.Equal(a.Stream[0], b.Stream[0]) {
		t.Error("same seed, different sessions")
	}
	if bytes.Equal(a.Stream[1], c.Stream[1]) {
		t.Error("different seeds, same session")
	}
}

// TestBrokenSession checks the broken session's expected records against
// the layout worked out by hand from NewSession's documentation.
func TestBrokenSession(t *testing.T) {
	s := NewSession(Options{Seed: 3, Broken: true})
	count := map[string]int{}
	var sk []Message
	for _, m := range s.Truth[Server] {
		count[m.Type]++
		if m.Type == TypeSkipped {
			sk = append(sk, m)
		}
	}
	// One skipped run: the 2-byte id 03 70 and 3 junk bytes; the position
	// message of tick 4 follows it.
	if len(sk) != 1 || sk[0].Length != 5 || !bytes.Equal(s.Stream[Server][sk[0].Offset:sk[0].End()], []byte{0x03, 0x70, 0xa5, 0x5a, 0xa5}) {
		t.Fatalf("skipped runs: %v", sk)
	}
	var next *Message
	var unknown []string
	for i, m := range s.Truth[Server] {
		if m.Offset == sk[0].End() {
			next = &s.Truth[Server][i]
		}
		if m.Type == TypeUnknown {
			unknown = append(unknown, m.String())
		}
	}
	if next == nil || next.Type != TypeActuatorPosition {
		t.Errorf("after the skipped run: %v", next)
	}
	want := []string{
		`"message_id":12298,"data":"0102030405060708"`,
		`"message_id":8195,"data":"0000803f"`,
		`"message_id":61451,"data":"` + hex.EncodeToString([]byte("future message")) + `"`,
		`"message_id":4096,"data":"ffee"`,
	}
	if len(unknown) != 4 {
		t.Fatalf("unknown records: %v", unknown)
	}
	for i, u := range unknown {
		if !strings.Contains(u, want[i]) {
			t.Errorf("unknown %d = %s, want %s", i, u, want[i])
		}
	}
	if count[TypeCurve] != 2 {
		t.Errorf("%d curves", count[TypeCurve])
	}
	cl := s.Truth[Client]
	last := cl[len(cl)-1]
	if last.Type != TypeSkipped || last.Length != 7 || last.End() != int64(len(s.Stream[Client])) {
		t.Errorf("client ends with %s", last.String())
	}
	if cl[3].Type != TypeUnknown || cl[3].ID != 0x3006 || cl[3].Length != 10 {
		t.Errorf("client record 3 = %s", cl[3].String())
	}
}

// TestRand: NewRand xors the seed with a constant, so this is SplitMix64
// from state 0, whose first outputs are the published reference values.
func TestRand(t *testing.T) {
	r := NewRand(0x64656c7461726f62)
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := r.Uint64(); got != want {
			t.Errorf("output %d = %#x, want %#x", i, got, want)
		}
	}
}

// FuzzFirstSync checks the resync scanner on arbitrary bytes: the offset is
// in range, a hit is a real chain of complete known messages, and no
// earlier offset is one.
func FuzzFirstSync(f *testing.F) {
	three := append(append(Magic(), Version(1)...), Ping(1)...)
	f.Add(three, 0)
	f.Add(append([]byte{0x03, 0x70, 0xa5}, three...), 1)
	f.Add([]byte{0x09, 0xf0, 0, 0, 0, 1, 0x01, 0x30}, 0)
	f.Fuzz(func(t *testing.T, b []byte, from int) {
		from = max(from, 0)
		i, err := FirstSync(b, from)
		if i < min(from, len(b)) || i > len(b) {
			t.Fatalf("FirstSync = %d for %d bytes from %d", i, len(b), from)
		}
		if err == nil && i < len(b) {
			if r3, _ := knownChain(b[i:]); r3 != chainHit {
				t.Fatalf("FirstSync = %d, which is no chain", i)
			}
		}
		for j := from; j < min(i, len(b)); j++ {
			if r3, _ := knownChain(b[j:]); r3 == chainHit {
				t.Fatalf("chain at %d before FirstSync's %d", j, i)
			}
		}
	})
}
