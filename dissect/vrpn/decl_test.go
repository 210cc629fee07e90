package vrpn

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// declCaptures lists every VRPN capture: this package's testdata, the
// repository's pcaps/vrpn_*, and the shared corpus (../shared beside the
// repository, as CI has it), which may be missing.
func declCaptures(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"testdata/*.pcap*", "../../pcaps/vrpn_*.pcap*"} {
		m, _ := filepath.Glob(g)
		if len(m) == 0 {
			t.Fatalf("no capture matches %s", g)
		}
		files = append(files, m...)
	}
	shared := "../../../shared/captures/vrpn"
	if _, err := os.Stat(shared); err != nil {
		t.Logf("%s not found: the shared captures are not checked", shared)
		return files
	}
	m, _ := filepath.Glob(shared + "/*.pcap*")
	if len(m) == 0 {
		t.Fatalf("no capture in %s", shared)
	}
	return append(files, m...)
}

// neverInCaptures are the declared types no real capture holds, and why.
var neverInCaptures = map[string]string{
	TypeLogDescription: "only sent when a client asks for remote logging; the capture that does (f) is not in the corpus",
	TypeDisconnect:     "mainline only writes it to log files (README fact 10)",
	TypeUnknown:        "every type id in the captures is described before use",
	"*":                "every application message in the captures is of a type the dissector decodes",
}

// TestDeclaredCaptures checks every record of every VRPN capture against
// its declaration, and that the declared types the captures never produce
// are exactly those of neverInCaptures.
func TestDeclaredCaptures(t *testing.T) {
	reg, _ := registry(t)
	seen := map[string]int{}
	for _, f := range declCaptures(t) {
		recs := dissecttest.Decode(t, reg, f)
		if len(recs) == 0 {
			t.Errorf("%s: no records", f)
		}
		for k, n := range dissecttest.CheckDeclared(t, reg, recs) {
			seen[k] += n
		}
	}
	var missing, want []string
	for _, d := range reg.Types(protoName) {
		// The catalogue's types are in pcaps/vrpn, not in this corpus.
		if _, cat := catalogued[d.Type]; seen[protoName+" "+d.Table()] == 0 && !cat {
			missing = append(missing, d.Table())
		}
	}
	for k := range neverInCaptures {
		want = append(want, k)
	}
	slices.Sort(missing)
	slices.Sort(want)
	if !slices.Equal(missing, want) {
		t.Errorf("declared types never produced by the captures: %q, want %q", missing, want)
	}
}

// TestDeclarations checks what the declarations promise consumers: the
// sender is a sender only on application types, the tracker sensor and the
// header's sequence and sent time carry their roles, Pos_Quat is a pose,
// and ping/pong are an exchange whose reply carries the round trip.
func TestDeclarations(t *testing.T) {
	reg, _ := registry(t)
	system := []string{TypeSenderDescription, TypeTypeDescription, TypeUDPDescription, TypeLogDescription, TypeDisconnect}
	for _, d := range reg.Types(protoName) {
		if d.Type == TypeCookie || d.Type == TypeUDPCallback {
			if d.Field("sender") != nil {
				t.Errorf("%s: unframed, yet declares sender", d.Type)
			}
			continue
		}
		s := d.Field("sender")
		if s == nil || !s.Required {
			t.Errorf("%s: no required sender", d.Type)
			continue
		}
		if want := !slices.Contains(system, d.Type); (s.Role == dissect.RoleSender) != want {
			t.Errorf("%s: sender role %q, want a sender: %v", d.Type, s.Role, want)
		}
		if f := d.FieldWith(dissect.RoleSequence); f == nil || f.Name != "sequence" || f.Kind != dissect.KindUint {
			t.Errorf("%s: sequence not declared as the uint sequence", d.Type)
		}
		if f := d.FieldWith(dissect.RoleSentTime); f == nil || f.Name != "sent" || f.Kind != dissect.KindTime {
			t.Errorf("%s: sent not declared as the sent time", d.Type)
		}
	}
	for _, name := range []string{namePosQuat, nameVelocity, nameAcceleration} {
		d := reg.Decl(&dissect.Record{Proto: protoName, Type: name})
		if f := d.FieldWith(dissect.RoleSensor); f == nil || f.Name != "sensor" {
			t.Errorf("%s: no sensor role", name)
		}
		if (d.Pose != nil) != (name == namePosQuat) {
			t.Errorf("%s: pose %v", name, d.Pose)
		}
	}
	pq := reg.Decl(&dissect.Record{Proto: protoName, Type: namePosQuat})
	if pq.Pose == nil || pq.Pose.Position != "pos" || pq.Pose.Orientation != "quat" {
		t.Errorf("Pos_Quat pose %+v", pq.Pose)
	}
	ping := reg.Decl(&dissect.Record{Proto: protoName, Type: namePing})
	pong := reg.Decl(&dissect.Record{Proto: protoName, Type: namePong})
	if ping.Exchange != (dissect.Exchange{Role: dissect.Request}) || pong.Exchange != (dissect.Exchange{Role: dissect.Reply, Answers: namePing}) {
		t.Errorf("exchange: ping %+v, pong %+v", ping.Exchange, pong.Exchange)
	}
	if f := pong.FieldWith(dissect.RoleLatency); f == nil || f.Name != "rtt_ms" || f.Kind != dissect.KindFloat || f.Unit != "ms" || f.Required {
		t.Errorf("pong latency field %+v", f)
	}
	if d := reg.Decl(&dissect.Record{Proto: protoName, Type: "lab_Glove Calibration"}); d == nil || d.Type != "*" {
		t.Errorf("an undecoded application type matches %+v, want the * declaration", d)
	}
}

// TestReservedNames describes application types with the names of other
// record types: their messages are unknown, with a warning, so that a
// record's type always says what its fields are.
func TestReservedNames(t *testing.T) {
	names := []string{"", "*", TypeCookie, TypeUDPCallback, TypeSenderDescription, TypeTypeDescription, TypeUDPDescription,
		TypeLogDescription, TypeDisconnect, TypeUnknown, dissect.TypeGap, dissect.TypeSkipped}
	var in []byte
	for i, n := range names {
		in = append(in, encDescription(-2, int32(i), n, uint32(2*i))...)
		in = append(in, encMsg(1, 0, 0, int32(i), uint32(2*i+1), []byte("abc"))...)
	}
	run := fuzzFeed(in, 0, 1, true)
	reg, _ := registry(t)
	dissecttest.CheckDeclared(t, reg, run.recs)
	var got []*dissect.Record
	for _, r := range run.recs {
		if r.Type != TypeCookie && r.Type != TypeTypeDescription {
			got = append(got, r)
		}
	}
	if len(got) != len(names) {
		t.Fatalf("%d messages, want %d", len(got), len(names))
	}
	for i, r := range got {
		if r.Type != TypeUnknown || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "the name of another record type") {
			t.Errorf("type described as %q: record %q, warnings %q", names[i], r.Type, r.Warnings)
		}
		if v, _ := r.Fields.Get("data"); string(v.Raw()) != "abc" {
			t.Errorf("type described as %q: data %q", names[i], v.Raw())
		}
	}
}

// hostileStream describes every decoded type, then sends each type bodies
// of every length up to 80 bytes, random, or built to hit the counted
// forms (button states, analog channels, log names) with lying counts.
func hostileStream(rng *rand.Rand) []byte {
	decoded := []string{namePosQuat, nameVelocity, nameAcceleration, nameButtonChange, nameButtonStates, nameAnalog, nameDial, namePing, namePong, "vrpn_Other thing"}
	var out []byte
	var seq uint32
	add := func(m []byte) { out = append(out, m...); seq++ }
	add(encDescription(-1, 0, "Dev0", seq))
	for i, n := range decoded {
		add(encDescription(-2, int32(i), n, seq))
	}
	word := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	f64 := func(v float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)) }
	for l := 0; l <= 80; l++ {
		for i := range decoded {
			body := make([]byte, l)
			for j := range body {
				body[j] = byte(rng.Uint32())
			}
			add(encMsg(1, uint32(rng.IntN(2_000_000)), int32(rng.IntN(3)), int32(i), seq, body))
		}
		// Lying counts.
		for _, c := range []uint32{0, 1, 2, uint32(l), 0xffffffff, 0x80000000} {
			add(encMsg(1, 0, 0, 4, seq, append(word(c), make([]byte, l)...)))
		}
		for _, c := range []float64{0, 1, float64(l), -1, 0.5, 1e300, math.NaN()} {
			add(encMsg(1, 0, 0, 5, seq, append(f64(c), make([]byte, l)...)))
		}
		add(encMsg(1, 0, int32(l), -4, seq, append(append(word(uint32(l/3)), word(uint32(l/4))...), make([]byte, l)...)))
		add(encMsg(1, 0, int32(l), -4, seq, append(append(word(0xfffffff0), word(2)...), make([]byte, l)...)))
		add(encMsg(1, 0, int32(l)-5, -3, seq, make([]byte, l)))
		add(encMsg(1, 0, int32(l), -1-int32(l%9), seq, append(word(uint32(l)-3), make([]byte, l)...)))
	}
	return out
}

// TestDeclaredHostile runs hostile and random input through the parser, in
// every mode of fuzzFeed (TCP after a cookie, TCP as is, UDP datagrams to
// an announced port, TCP with a gap), and checks that every record it still
// produces conforms to its declaration.
func TestDeclaredHostile(t *testing.T) {
	reg, _ := registry(t)
	rng := rand.New(rand.NewPCG(20, 1))
	inputs := [][]byte{hostileStream(rng)}
	seeds := fuzzSeeds(t)
	inputs = append(inputs, seeds...)
	for range 200 {
		s := slices.Clone(seeds[rng.IntN(len(seeds))])
		for range 1 + rng.IntN(8) {
			switch k := rng.IntN(4); {
			case len(s) == 0 || k == 0:
				s = append(s, byte(rng.Uint32()))
			case k == 1:
				s[rng.IntN(len(s))] = byte(rng.Uint32())
			case k == 2:
				i := rng.IntN(len(s))
				s = append(s[:i], s[i+1:]...)
			default: // a plausible length word where no message starts
				i := rng.IntN(len(s))
				s = append(s[:i], append([]byte{0, 0, 0, byte(rng.IntN(200))}, s[i:]...)...)
			}
		}
		inputs = append(inputs, s)
	}
	for range 50 {
		s := make([]byte, rng.IntN(2000))
		for i := range s {
			s[i] = byte(rng.Uint32())
		}
		inputs = append(inputs, s)
	}
	seen := map[string]int{}
	for i, in := range inputs {
		for mode := range uint8(4) {
			run := fuzzFeed(in, mode, uint64(i), true)
			for k, n := range dissecttest.CheckDeclared(t, reg, run.recs) {
				seen[k] += n
			}
		}
		if t.Failed() {
			t.Fatalf("input %d departs from the declarations", i)
		}
	}
	// The inputs reach every declared type, so none is checked vacuously.
	for _, d := range reg.Types(protoName) {
		if seen[protoName+" "+d.Table()] == 0 {
			t.Errorf("hostile inputs never produced %q", d.Table())
		}
	}
}
