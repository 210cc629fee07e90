package roboidenc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
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

// TestDataTypes checks the data-type byte against the spec's tables, worked
// out by hand from the bit layout aa ll ssss (protocols.md §3.3).
func TestDataTypes(t *testing.T) {
	cases := []struct {
		ang, lin int
		sem      byte
		want     byte
		size     int
	}{
		{1, 2, SemLinearVelocity, 0x62, 3},     // implemented: polar velocity, 2-byte distance
		{1, 0, SemDirection, 0x48, 1},          // 2D direction
		{2, 0, SemDirection, 0x88, 2},          // 3D direction
		{2, 0, SemLinearAcceleration, 0x83, 2}, // spec: "spherical position"
		{3, 1, 4, 0xD4, 4},                     // spec: quaternion
		{3, 2, SemOrientation, 0xE5, 5},        // spec: angle-axis
		{3, 4, SemOrientation, 0xF5, 7},        // spec: angle-axis, float magnitude
	}
	for _, c := range cases {
		got, err := DataType(c.ang, c.lin, c.sem)
		if err != nil || got != c.want {
			t.Errorf("DataType(%d,%d,%d) = %#02x, %v; want %#02x", c.ang, c.lin, c.sem, got, err, c.want)
		}
		a, l := Syntax(c.want)
		if a != c.ang || l != c.lin || a+l != c.size {
			t.Errorf("Syntax(%#02x) = %d, %d", c.want, a, l)
		}
	}
	// The size table's syntax nibbles: 0x1 1 byte, 0x4 1, 0x5 2, 0xD 4,
	// 0x2 2 ("0002"), 0xB 6.
	for nib, size := range map[byte]int{0x1: 1, 0x4: 1, 0x5: 2, 0xD: 4, 0x2: 2, 0xB: 6} {
		if a, l := Syntax(nib << 4); a+l != size {
			t.Errorf("syntax %#x: %d+%d bytes, want %d", nib, a, l, size)
		}
	}
	for _, bad := range [][3]int{{4, 0, 1}, {-1, 0, 1}, {0, 3, 1}, {0, 8, 1}, {0, 0, 16}} {
		if _, err := DataType(bad[0], bad[1], byte(bad[2])); err == nil {
			t.Errorf("DataType%v: no error", bad)
		}
	}
	names := map[byte]string{1: "position", 2: "linear_velocity", 3: "linear_acceleration", 5: "orientation",
		6: "angular_velocity", 7: "angular_acceleration", 8: "direction"}
	for c := byte(0); c < 16; c++ {
		n, ok := SemanticsName(c)
		if want, def := names[c]; ok != def || (def && n != want) || (!def && n != SemUndefined) {
			t.Errorf("SemanticsName(%d) = %q, %v", c, n, ok)
		}
	}
}

func TestAngle8(t *testing.T) {
	cases := map[float64]byte{
		0: 0, 90: 64, 180: 128, 270: 192, 360: 0, 720 + 45: 32, -90: 192, 45: 32, 1.40625: 1, 359: 255,
		0.703125: 1, -0.703125: 255, // half steps round away from zero
		-180: 128, -1.40625: 255,
	}
	for deg, want := range cases {
		if got := Angle8(deg); got != want {
			t.Errorf("Angle8(%v) = %d, want %d", deg, got, want)
		}
	}
	if Angle8Degrees(64) != 90 || Angle8Degrees(255) != 358.59375 {
		t.Errorf("Angle8Degrees")
	}
}

// TestFloat16Vectors: values worked out by hand from the binary16 layout
// (sign, 5-bit exponent biased by 15, 10-bit fraction).
func TestFloat16Vectors(t *testing.T) {
	cases := []struct {
		f    float32
		want uint16
	}{
		{1, 0x3C00}, {1.5, 0x3E00}, {-2, 0xC000}, {0.25, 0x3400}, {0.5, 0x3800},
		{65504, 0x7BFF}, {65519.99, 0x7BFF}, {65520, 0x7C00}, {1e6, 0x7C00}, {-1e6, 0xFC00},
		{0.1, 0x2E66}, {float32(math.Pi), 0x4248},
		{float32(math.Ldexp(1, -24)), 0x0001},     // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000},     // half of it: tie, to even (0)
		{float32(math.Ldexp(3, -26)), 0x0001},     // 0.75 of it: up
		{float32(math.Ldexp(3, -25)), 0x0002},     // 1.5 of it: tie, to even (2)
		{float32(math.Ldexp(1, -14)), 0x0400},     // smallest normal
		{float32(math.Ldexp(1023, -24)), 0x03FF},  // largest subnormal
		{float32(math.Ldexp(2047, -25)), 0x0400},  // tie between 0x3ff and 0x400: to even
		{1 + float32(math.Ldexp(1, -11)), 0x3C00}, // tie: to even
		{1 + float32(math.Ldexp(3, -11)), 0x3C02}, // tie: to even
		{1 + float32(math.Ldexp(5, -13)), 0x3C01}, // above the tie... below 1.5 steps
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000},
		{float32(math.Inf(1)), 0x7C00}, {float32(math.Inf(-1)), 0xFC00},
		{float32(math.Ldexp(1, -30)), 0}, {-float32(math.Ldexp(1, -30)), 0x8000},
	}
	for _, c := range cases {
		if got := Float16(c.f); got != c.want {
			t.Errorf("Float16(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if h := Float16(float32(math.NaN())); h&0x7C00 != 0x7C00 || h&0x3FF == 0 {
		t.Errorf("Float16(NaN) = %#04x", h)
	}
	if Float16Value(0x3E00) != 1.5 || Float16Value(0xC000) != -2 || Float16Value(0x0001) != float32(math.Ldexp(1, -24)) || !math.IsInf(float64(Float16Value(0x7C00)), 1) {
		t.Error("Float16Value")
	}
}

// TestFloat16Exhaustive checks every half float: it reads back to itself,
// and the midpoints between neighbours round to the even one (just above
// and below them, to the nearer one).
func TestFloat16Exhaustive(t *testing.T) {
	for h := 0; h < 0x10000; h++ {
		if h&0x7C00 == 0x7C00 && h&0x3FF != 0 {
			continue // NaN
		}
		if got := Float16(Float16Value(uint16(h))); got != uint16(h) {
			t.Fatalf("round trip %#04x -> %v -> %#04x", h, Float16Value(uint16(h)), got)
		}
	}
	for h := uint16(0); h < 0x7BFF; h++ {
		a, b := float64(Float16Value(h)), float64(Float16Value(h+1))
		m := float32((a + b) / 2) // exact: 12 significant bits
		if float64(m) != (a+b)/2 {
			t.Fatalf("midpoint of %#04x not exact", h)
		}
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		if got := Float16(m); got != even {
			t.Fatalf("midpoint after %#04x -> %#04x, want %#04x", h, got, even)
		}
		if got := Float16(math.Nextafter32(m, float32(math.Inf(1)))); got != h+1 {
			t.Fatalf("just above the midpoint after %#04x -> %#04x", h, got)
		}
		if got := Float16(math.Nextafter32(m, 0)); got != h {
			t.Fatalf("just below the midpoint after %#04x -> %#04x", h, got)
		}
		if got := Float16(-m); got != even|0x8000 {
			t.Fatalf("negative midpoint after %#04x -> %#04x", h, got)
		}
	}
}

// TestMessages: message bytes worked out by hand from the layouts in the
// package comment.
func TestMessages(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"client", ClientMsg(), "a0"},
		{"network id 5", NetworkIDMsg(5), "a1 05"},
		{"new thing", NewThingMsg(5, 1, 2), "80 05 01 02"},
		{"investigate", InvestigateMsg(0, 7), "81 00 07"},
		{"model url", ModelURLMsg(5, 1, "ab"), "90 05 01 61 62"},
		// 0x62: angle 90° = 64 = 0x40, then 1.5 as half (0x3e00) LE.
		{"pose 0x62", PoseMsg(5, 1, V(SemLinearVelocity, []float64{90}, F16(1.5)).Value), "10 05 01 62 40 00 3e"},
		// 0xF5: angles -45 (224 = 0xe0), 135 (96 = 0x60), 270 (0xc0), then float32 0.5 = 0x3f000000 LE.
		{"pose 0xf5", PoseMsg(0, 2, V(SemOrientation, []float64{-45, 135, 270}, F32(0.5)).Value), "10 00 02 f5 e0 60 c0 00 00 00 3f"},
		// 0x21: u16 1234 = 0x04d2 LE.
		{"pose 0x21 + 0x48", PoseMsg(1, 1, V(SemPosition, nil, U16(1234)).Value, V(SemDirection, []float64{45}, NoMag()).Value), "10 01 01 21 d2 04 48 20"},
		{"pose literal zero-size", PoseMsg(1, 2, Lit(0x01).Value, Lit(0x0d).Value), "10 01 02 01 0d"},
		{"pose u32", PoseMsg(1, 3, V(SemPosition, []float64{180, 0}, U32(0x01020304)).Value), "10 01 03 b1 80 00 04 03 02 01"},
	}
	for _, c := range cases {
		if want := unhex(t, c.want); !bytes.Equal(c.got, want) {
			t.Errorf("%s: got % x, want % x", c.name, c.got, want)
		}
	}
	if v := Lit(0x62, 0x40, 0x00, 0x3e); v.DataType != 0x62 || !bytes.Equal(v.Angles, []byte{0x40}) || !bytes.Equal(v.Magnitude, []byte{0, 0x3e}) {
		t.Errorf("Lit: %+v", v)
	}
	defer func() {
		if recover() == nil {
			t.Error("Lit with the wrong size did not panic")
		}
	}()
	Lit(0x62, 1)
}

func TestSpecExamples(t *testing.T) {
	var got []byte
	for _, v := range SpecTypical() {
		got = append(got, v.DataType)
	}
	if want := unhex(t, "62 48 88 83 d4 e5 f5"); !bytes.Equal(got, want) {
		t.Errorf("typical: % x", got)
	}
	got = got[:0]
	for _, v := range SpecSyntax() {
		got = append(got, v.DataType)
	}
	if want := unhex(t, "10 45 51 d5 21 b1"); !bytes.Equal(got, want) {
		t.Errorf("syntax: % x", got)
	}
	got = got[:0]
	for _, v := range Undefined() {
		got = append(got, v.DataType)
		if _, ok := SemanticsName(v.DataType); ok {
			t.Errorf("%#02x has defined semantics", v.DataType)
		}
	}
	if want := unhex(t, "40 94 6f 29"); !bytes.Equal(got, want) {
		t.Errorf("undefined: % x", got)
	}
	// 0xE5's magnitude: 0.25 as half is 0x3400.
	if e5 := SpecTypical()[5]; !bytes.Equal(e5.Magnitude, []byte{0x00, 0x34}) || e5.Intended.Mag != 0.25 {
		t.Errorf("0xe5 magnitude % x (%v)", e5.Magnitude, e5.Intended.Mag)
	}
}

// TestFlowTruth builds a small flow and checks the records and the truth
// JSON, worked out by hand.
func TestFlowTruth(t *testing.T) {
	var f Flow
	f.Client(Client, 0)                                                                       // c [0,1)
	f.NetworkID(Site, 1, 5)                                                                   // s [0,2)
	f.Pose(Client, 2, 5, 1, V(SemLinearVelocity, []float64{90}, F16(1.5)))                    // c [1,8)
	f.PoseExtension(Site, 3, 0, 1, nil, []byte{7})                                            // s [2,7): 10 00 01 00 07
	f.PoseTruncated(Client, 4, 5, 1, nil, V(SemOrientation, []float64{1, 2, 3}, F32(0.5)), 4) // c [8,16): 10 05 01 f5 + 4
	f.PoseShort(Client, 5, 5)                                                                 // c [16,18)
	f.Unknown(Site, 6, 0x42, []byte{1})                                                       // s [7,9)
	s, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(s.Stream[Client]); got != "a0"+"1005016240003e"+"100501f501010200"+"1005" {
		t.Errorf("client stream %s", got)
	}
	if got := hex.EncodeToString(s.Stream[Site]); got != "a105"+"1000010007"+"4201" {
		t.Errorf("site stream %s", got)
	}
	c := s.Truth[Client]
	want := []string{
		`{"type":"Client","offset":0,"length":1,"fields":{"data":""},"match":"exact","warning":"no","wire":"a0"}`,
		`{"type":"Pose","offset":1,"length":7,"fields":{"network_id":5,"thing_id":1,"values":[{"data_type":"0x62","semantics":"linear_velocity","angular_bytes":1,"linear_bytes":2,"raw":"40003e"}]},"match":"subset","not_asserted":[` + jq(notAsserted) + `],"warning":"no","wire":"1005016240003e"}`,
		`{"type":"Pose","offset":8,"length":8,"fields":{"network_id":5,"thing_id":1,"values":[{"data_type":"0xf5","semantics":"orientation","angular_bytes":3,"linear_bytes":4,"raw":"01010200","truncated":true}]},"match":"subset","not_asserted":[` + jq(notAsserted) + `],"warning":"yes","wire":"100501f501010200"}`,
		`{"type":"Pose","offset":16,"length":2,"fields":{"network_id":5},"match":"subset","not_asserted":[` + jq(notAsserted) + `],"warning":"yes","wire":"1005"}`,
	}
	if len(c) != len(want) {
		t.Fatalf("%d client records", len(c))
	}
	for i, w := range want {
		j, err := json.Marshal(c[i])
		if err != nil || string(j) != w {
			t.Errorf("client record %d:\n got %s\nwant %s", i, j, w)
		}
	}
	sv := s.Truth[Site]
	if len(sv) != 3 || sv[1].FieldsJSON() != `{"network_id":0,"thing_id":1,"values":[],"rest":"0007"}` || sv[1].Warn != truth.Yes ||
		sv[2].FieldsJSON() != `{"message_id":66,"data":"01"}` || sv[2].Warn != truth.Yes || sv[0].FieldsJSON() != `{"network_id":5,"data":""}` {
		t.Errorf("site records: %v", sv)
	}
	// Angles 1°, 2°, 3° are bytes 1 (0.711 steps), 1 (1.42), 2 (2.13).
	if !bytes.Equal(c[2].Values[0].Angles, []byte{1, 1, 2}) || len(c[2].Values[0].Magnitude) != 1 {
		t.Errorf("truncated value %+v", c[2].Values[0])
	}
}

func TestFlowErrors(t *testing.T) {
	cases := map[string]func(f *Flow){
		"known as unknown": func(f *Flow) { f.Unknown(Client, 0, IDPose, nil) },
		"not truncated":    func(f *Flow) { f.PoseTruncated(Client, 0, 1, 1, nil, V(1, []float64{1}, NoMag()), 1) },
		"not short":        func(f *Flow) { f.PoseShort(Client, 0, 1, 2) },
		"time backwards":   func(f *Flow) { f.Client(Client, 5); f.Client(Client, 4) },
	}
	for name, fn := range cases {
		var f Flow
		fn(&f)
		if _, err := f.Finish(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestSession(t *testing.T) {
	a, b := NewSession(Options{Seed: 1, Broken: true}), NewSession(Options{Seed: 1, Broken: true})
	for d := range 2 {
		if !bytes.Equal(a.Stream[d], b.Stream[d]) {
			t.Fatal("not deterministic")
		}
		var off int64
		for _, m := range a.Truth[d] {
			if m.Offset != off || !bytes.Equal(a.Stream[d][m.Offset:m.End()], m.Wire) {
				t.Fatalf("%s: records do not tile at %d", RoleName(d), off)
			}
			off = m.End()
		}
		if off != int64(len(a.Stream[d])) {
			t.Fatalf("%s: records end at %d of %d", RoleName(d), off, len(a.Stream[d]))
		}
	}
	count := map[string]int{}
	for d := range 2 {
		for _, m := range a.Truth[d] {
			count[m.Type]++
			if m.Type == TypePose && m.HasRest {
				count["rest"]++
			}
			for _, v := range m.Values {
				if v.Truncated {
					count["truncated"]++
				}
			}
		}
	}
	if count[TypeClient] != 1 || count[TypeNetworkID] != 1 || count[TypeUnknown] != 1 || count["rest"] != 1 || count["truncated"] != 1 ||
		count[TypeInvestigate] != 6 || count[TypeNewThing] != 6 || count[TypeModelURL] != 1 {
		t.Errorf("counts %v", count)
	}
	if len(a.Datagrams) != len(a.Truth[0])+len(a.Truth[1]) {
		t.Errorf("%d datagrams", len(a.Datagrams))
	}
	for i := 1; i < len(a.Datagrams); i++ {
		if a.Datagrams[i].At < a.Datagrams[i-1].At {
			t.Fatal("datagrams not in time order")
		}
	}
}
