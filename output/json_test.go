package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Every expected line below was written by hand from the output contract
// (shared/specs/output-contract.md): key order, RFC 3339 UTC times with nine
// fraction digits, hex bytes, NaN/Inf as strings, exact 64-bit integers.

func record() *dissect.Record {
	r := &dissect.Record{
		Time:      time.Date(2026, 11, 22, 10, 11, 12, 5000, time.UTC),
		Frame:     17,
		Proto:     "vrpn",
		Transport: dissect.TCP,
		Stream:    3,
		Src:       "127.0.0.1:3883",
		Dst:       "[::1]:40000",
		Offset:    24,
		Length:    88,
		Type:      "vrpn_Tracker Pos_Quat",
	}
	return r
}

func encode(t *testing.T, r *dissect.Record) string {
	t.Helper()
	var buf bytes.Buffer
	j := NewJSON(&buf, false)
	if err := j.Record(r); err != nil {
		t.Fatal(err)
	}
	if err := j.Flush(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !json.Valid([]byte(out)) {
		t.Fatalf("invalid JSON: %s", out)
	}
	return out
}

func TestJSONKeysAndNesting(t *testing.T) {
	r := record()
	pos := r.Alloc(3)
	pos[0], pos[1], pos[2] = dissect.Elem(dissect.Float(1.5)), dissect.Elem(dissect.Float(-2.25)), dissect.Elem(dissect.Float(math.Copysign(0, -1)))
	q := r.Alloc(2)
	q[0] = dissect.Field{Key: "x", Value: dissect.Float(0.1)}
	q[1] = dissect.Field{Key: "w", Value: dissect.Float32(0.1)}
	r.Add("sensor", dissect.Int(-1))
	r.Add("pos", dissect.Array(pos))
	r.Add("quat", dissect.Object(q))
	r.Add("big", dissect.Uint(math.MaxUint64))
	r.Add("min", dissect.Int(math.MinInt64))
	r.Add("sent", dissect.Time(time.Unix(1795306099, 479337000)))
	r.Add("data", dissect.Bytes([]byte{0x00, 0xab, 0xff}))
	r.Add("ok", dissect.Bool(true))
	r.Add("none", dissect.Value{})
	r.Warn("padding is not zero")
	want := `{"time":"2026-11-22T10:11:12.000005000Z","frame":17,"proto":"vrpn","transport":"tcp","stream":3,"src":"127.0.0.1:3883","dst":"[::1]:40000","offset":24,"length":88,"type":"vrpn_Tracker Pos_Quat","fields":{"sensor":-1,"pos":[1.5,-2.25,-0.0],"quat":{"x":0.1,"w":0.1},"big":18446744073709551615,"min":-9223372036854775808,"sent":"2026-11-22T00:08:19.479337000Z","data":"00abff","ok":true,"none":null},"warnings":["padding is not zero"]}` + "\n"
	if got := encode(t, r); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestJSONFloats(t *testing.T) {
	for _, tc := range []struct {
		v    dissect.Value
		want string
	}{
		{dissect.Float(math.NaN()), `"NaN"`},
		{dissect.Float(math.Inf(1)), `"Inf"`},
		{dissect.Float(math.Inf(-1)), `"-Inf"`},
		{dissect.Float32(float32(math.Inf(-1))), `"-Inf"`},
		{dissect.Float(0), `0.0`},
		{dissect.Float(math.Copysign(0, -1)), `-0.0`},
		{dissect.Float(100), `100.0`},
		{dissect.Float(-3), `-3.0`},
		{dissect.Float(1e20), `100000000000000000000.0`},
		{dissect.Float(1e300), `1e+300`},
		{dissect.Float(0.5), `0.5`},
		{dissect.Float(9007199254740993), `9007199254740992.0`}, // 2^53+1 rounds to 2^53
		{dissect.Float32(0), `0.0`},
		{dissect.Float32(float32(math.Copysign(0, -1))), `-0.0`},
		{dissect.Float32(100), `100.0`},
		{dissect.Float32(16777216), `16777216.0`},
		{dissect.Float32(3e9), `3000000000.0`},
		{dissect.Float32(1e30), `1e+30`},
		{dissect.Float(1e21), `1e+21`},
		{dissect.Float(1e-7), `1e-07`},
		{dissect.Float(123456789.125), `123456789.125`},
		{dissect.Float(0.18257418583505536), `0.18257418583505536`},
		{dissect.Float32(0.2), `0.2`},
		{dissect.Float32(-0.05), `-0.05`},
	} {
		r := record()
		r.Add("v", tc.v)
		got := encode(t, r)
		if !strings.Contains(got, `"fields":{"v":`+tc.want+`}`) {
			t.Errorf("%v: got %s, want v=%s", tc.v, got, tc.want)
		}
	}
}

func TestJSONStrings(t *testing.T) {
	r := record()
	r.Proto = ""
	r.Type = dissect.TypeSkipped
	r.Add("reason", dissect.Str("a\"b\\c\n\t\x01\xff\u2028é"))
	got := encode(t, r)
	want := `"proto":"",`
	if !strings.Contains(got, want) {
		t.Errorf("missing %s in %s", want, got)
	}
	want = `"fields":{"reason":"a\"b\\c\n\t\u0001\ufffd\u2028é"}`
	if !strings.Contains(got, want) {
		t.Errorf("got %s\nwant it to contain %s", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	if back["fields"].(map[string]any)["reason"] != "a\"b\\c\n\t\x01\ufffd\u2028é" {
		t.Errorf("round trip gave %q", back["fields"].(map[string]any)["reason"])
	}
}

func TestJSONEmptyFieldsAndNoWarnings(t *testing.T) {
	r := record()
	r.Type = dissect.TypeGap
	got := encode(t, r)
	if !strings.HasSuffix(got, `"type":"gap","fields":{}}`+"\n") {
		t.Errorf("got %s", got)
	}
}

func TestTimeCacheAcrossSeconds(t *testing.T) {
	var c timeCache
	base := time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC)
	if got := string(c.append(nil, base)); got != "2026-12-31T23:59:59.999999999Z" {
		t.Errorf("got %s", got)
	}
	if got := string(c.append(nil, base.Add(1))); got != "2027-01-01T00:00:00.000000000Z" {
		t.Errorf("got %s", got)
	}
	// a local time zone is written in UTC
	loc := time.FixedZone("X", 3600)
	if got := string(c.append(nil, time.Date(2027, 1, 1, 1, 0, 0, 7, loc))); got != "2027-01-01T00:00:00.000000007Z" {
		t.Errorf("got %s", got)
	}
}

func TestInfoEscapesTerminalControls(t *testing.T) {
	r := record()
	r.Add("name", dissect.Str("evil\x1b[2Jname\u202e"))
	got := Info(r)
	if strings.ContainsAny(got, "\x1b\u202e") {
		t.Errorf("control characters reached the terminal: %q", got)
	}
	if got != `name="evil\x1b[2Jname\u{202e}"` {
		t.Errorf("got %q", got)
	}
}

func BenchmarkJSONRecord(b *testing.B) {
	r := record()
	r.Type = "actuator_position"
	r.Proto = "deltarobot"
	for _, k := range []string{"x", "y", "z", "u"} {
		r.Add(k, dissect.Float32(0.123456))
	}
	j := NewJSON(discard{}, false)
	b.ReportAllocs()
	b.SetBytes(int64(len(encode(&testing.T{}, r))))
	for b.Loop() {
		_ = j.Record(r)
	}
}

// BenchmarkJSONRecordWholeFloats: the values that gain ".0" (a VRPN
// tracker at rest: whole coordinates, identity quaternion).
func BenchmarkJSONRecordWholeFloats(b *testing.B) {
	r := record()
	for _, k := range []string{"x", "y", "z", "w"} {
		r.Add(k, dissect.Float(0))
	}
	r.Add("u", dissect.Float32(0))
	r.Add("t", dissect.Float(100))
	j := NewJSON(discard{}, false)
	b.ReportAllocs()
	b.SetBytes(int64(len(encode(&testing.T{}, r))))
	for b.Loop() {
		_ = j.Record(r)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestStringCacheIsByContent: strings built at run time (VRPN type names
// come from the wire) must never be confused with earlier ones.
func TestStringCacheIsByContent(t *testing.T) {
	var buf bytes.Buffer
	j := NewJSON(&buf, false)
	for i := 0; i < 2000; i++ {
		r := record()
		r.Type = fmt.Sprintf("type%04d", i)
		r.Src = fmt.Sprintf("10.0.%d.%d:1", i/256, i%256)
		r.Add(fmt.Sprintf("k%04d", i), dissect.Int(int64(i)))
		if err := j.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Flush()
	for i, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m struct {
			Type   string
			Src    string
			Fields map[string]int
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m.Type != fmt.Sprintf("type%04d", i) || m.Src != fmt.Sprintf("10.0.%d.%d:1", i/256, i%256) || m.Fields[fmt.Sprintf("k%04d", i)] != i {
			t.Fatalf("line %d: %s", i, line)
		}
	}
}

// pyNumber is the number grammar of Python's json module (json.scanner's
// NUMBER_RE, the same as RFC 8259's): it reads a float when the fraction or
// the exponent group is present, an int otherwise.
var pyNumber = regexp.MustCompile(`^(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// checkJSONFloat checks the text written for the float f of the given bit
// size: NaN and ±Inf are the contract's strings; any other value is a JSON
// number that Python reads as a float (a fraction or an exponent) and that
// reads back to the same bits, the sign of zero included.
func checkJSONFloat(t testing.TB, text string, f float64, bits int) {
	t.Helper()
	switch {
	case math.IsNaN(f):
		if text != `"NaN"` {
			t.Fatalf("NaN written as %s", text)
		}
		return
	case math.IsInf(f, 0):
		if text != `"Inf"` && text != `"-Inf"` || (text == `"Inf"`) != (f > 0) {
			t.Fatalf("%v written as %s", f, text)
		}
		return
	}
	m := pyNumber.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%v (bits %d) written as %q: not a JSON number", f, bits, text)
	}
	if m[2] == "" && m[3] == "" {
		t.Fatalf("%v (bits %d) written as %q: Python reads an int", f, bits, text)
	}
	back, err := strconv.ParseFloat(text, bits)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	if bits == 32 {
		if math.Float32bits(float32(back)) != math.Float32bits(float32(f)) {
			t.Fatalf("float32 %v written as %q reads back as %v", f, text, back)
		}
	} else if math.Float64bits(back) != math.Float64bits(f) {
		t.Fatalf("float64 %v written as %q reads back as %v", f, text, back)
	}
}

// TestJSONFloatsReadAsFloats: for random float32 and float64 bit patterns
// (and random whole values, the case the rule is about), the written number
// is a float to Python and reads back exactly; FuzzJSONFloat explores more.
func TestJSONFloatsReadAsFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b []byte
	check := func(f float64, bits int) {
		b = appendFloat(b[:0], f, bits)
		checkJSONFloat(t, string(b), f, bits)
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 1e21, 1e-6, 1 << 53, math.MaxFloat64, math.SmallestNonzeroFloat64, math.MaxFloat32, math.SmallestNonzeroFloat32, math.NaN(), math.Inf(1), math.Inf(-1)} {
		check(f, 64)
		check(float64(float32(f)), 32)
	}
	for range 1 << 18 {
		check(math.Float64frombits(rng.Uint64()), 64)
		check(float64(math.Float32frombits(rng.Uint32())), 32)
		w := float64(rng.Int64N(1<<62) - 1<<61)
		check(w, 64)
		check(float64(float32(w)), 32)
		check(math.Ldexp(w, -rng.IntN(70)), 64)
	}
}

// TestJSONStamps: the cached time and frame of the last record are used
// only for a record with both the same; each line's head is what the time
// and the number say, written here with the time package and fmt.
func TestJSONStamps(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 11, 12, 5000, time.UTC)
	stamps := []struct {
		t time.Time
		f int64
	}{{t0, 1}, {t0, 1}, {t0, 2}, {t0.Add(time.Nanosecond), 2}, {t0.Add(time.Second), 2}, {t0, 2}, {t0, 0}, {t0.In(time.FixedZone("x", 3600)), 0}, {time.Time{}, 0}, {t0, -1}, {t0, 1 << 62}}
	j := NewJSONLines(false)
	r := record()
	for i, s := range stamps {
		r.Time, r.Frame = s.t, s.f
		got := string(j.AppendRecord(nil, r))
		want := fmt.Sprintf(`{"time":"%s","frame":%d,"proto":`, s.t.UTC().Format("2006-01-02T15:04:05.000000000Z"), s.f)
		if !strings.HasPrefix(got, want) {
			t.Errorf("record %d: %.80s, want it to begin %s", i, got, want)
		}
	}
}
