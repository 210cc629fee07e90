package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
)

// TestRateHandBuilt checks rate against values computed here in two
// passes from the arrival times: rate (n−1)/span, mean and max gap, jitter
// as the population standard deviation, the stall's start; VRPN rows per
// sender and sensor; events ignored.
func TestRateHandBuilt(t *testing.T) {
	s := NewRate(testDecls(t))
	ms := time.Millisecond
	at := []time.Duration{0, 10 * ms, 20 * ms, 50 * ms, 60 * ms}
	for _, a := range at {
		s.Record(rec(1, "a", "b", a, "deltarobot", "actuator_position", 18))
		s.Record(rec(1, "a", "b", a, "", "skipped", 3))
	}
	s.Record(rec(1, "b", "a", 5*ms, "deltarobot", "actuator_position", 18)) // the other direction: its own row
	// VRPN: sensor 0 every 250 ms, sensor 1 at 0 and 1 s.
	vr := func(a time.Duration, sensor int64) {
		s.Record(rec(4, "s", "c", a, "vrpn", "vrpn_Tracker Pos_Quat", 88, f("sender", dissect.Str("Tracker0")), f("sensor", dissect.Int(sensor))))
	}
	for i := range 5 {
		vr(time.Duration(i)*250*ms, 0)
	}
	vr(0, 1)
	vr(time.Second, 1)
	s.Record(rec(4, "s", "c", 2*time.Second, "vrpn", "vrpn_Base ping_message", 24))

	var gaps []float64
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, (at[i]-at[i-1]).Seconds()*1e3)
	}
	var mean, maxGap float64
	for _, g := range gaps {
		mean += g / float64(len(gaps))
		maxGap = math.Max(maxGap, g)
	}
	var v float64
	for _, g := range gaps {
		v += (g - mean) * (g - mean) / float64(len(gaps))
	}
	rows := jsonRows(t, s)
	if len(rows) != 5 {
		t.Fatalf("%d rows: %v", len(rows), rows)
	}
	r := rows[0]
	for _, c := range []struct {
		key  string
		want float64
	}{
		{"rate_per_s", 4 / 0.060}, {"mean_gap_ms", mean}, {"max_gap_ms", maxGap}, {"jitter_ms", math.Sqrt(v)},
		{"messages", 5}, {"span_s", 0.06},
	} {
		got := num(t, r[c.key])
		switch {
		case strings.HasSuffix(c.key, "_ms"):
			if !nearRounded(got, c.want, 3) {
				t.Errorf("%s = %v, want %v rounded to 3 decimals", c.key, got, c.want)
			}
		case strings.HasSuffix(c.key, "_s") && c.key != "rate_per_s":
			if !nearRounded(got, c.want, 6) {
				t.Errorf("%s = %v, want %v rounded to 6 decimals", c.key, got, c.want)
			}
		case !near(got, c.want):
			t.Errorf("%s = %v, want %v", c.key, got, c.want)
		}
	}
	if r["stall_start"] != t0.Add(20*ms).Format("2006-01-02T15:04:05.000000000Z") {
		t.Errorf("stall_start %v", r["stall_start"])
	}
	var got []string
	for _, r := range rows[1:] {
		got = append(got, fmt.Sprintf("%v %v %v %v %v %v", r["src"], r["type"], r["sender"], r["sensor"], r["messages"], r["rate_per_s"]))
	}
	want := "b actuator_position <nil> <nil> 1 <nil>|s vrpn_Base ping_message <nil> <nil> 1 <nil>|s vrpn_Tracker Pos_Quat Tracker0 0 5 4.0|s vrpn_Tracker Pos_Quat Tracker0 1 2 1.0"
	if strings.Join(got, "|") != want {
		t.Errorf("vrpn rows\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	tab := tableOf(t, s, TableOptions{})
	wantTab := `rate: message rates and inter-arrival gaps
STREAM  PROTO       DIR  TYPE                    SENDER    SENSOR  MSGS   msg/s  MEAN GAP ms  MAX GAP ms  JITTER ms  STALL AT s
     1  deltarobot  A→B  actuator_position                            5  66.667       15.000      30.000      8.660    0.020000
     1  deltarobot  B→A  actuator_position                            1       -            -           -          -           -
     4  vrpn        A→B  vrpn_Base ping_message                       1       -            -           -          -           -
     4  vrpn        A→B  vrpn_Tracker Pos_Quat   Tracker0       0     5   4.000      250.000     250.000      0.000    0.000000
     4  vrpn        A→B  vrpn_Tracker Pos_Quat   Tracker0       1     2   1.000     1000.000    1000.000      0.000    0.000000
DIR: A is the source of the stream's first record (as in -z conv); msg/s = (messages-1)/span; jitter = standard deviation of the gaps; stall = the longest gap, at its start (s from the first record)
`
	if tab != wantTab {
		t.Errorf("table\n%s\nwant\n%s", tab, wantTab)
	}
	for _, w := range []int{100, 80, 60, 40} {
		for _, l := range strings.Split(strings.TrimSuffix(tableOf(t, s, TableOptions{Width: w}), "\n"), "\n") {
			if width(l) > w {
				t.Errorf("width %d: line of %d: %q", w, width(l), l)
			}
		}
	}
}

// TestRateSenderByRole checks that rate splits rows by the fields with
// RoleSender and RoleSensor, whatever their names, and by nothing else: a
// field named sender without the role, or of another kind, does not split.
func TestRateSenderByRole(t *testing.T) {
	decl := testDecls(t, declOnly{dissect.Info{Name: "arm", Proto: "arm", Types: []dissect.TypeDecl{
		{Type: "pose", Fields: []dissect.FieldDecl{
			{Name: "device", Kind: dissect.KindString, Role: dissect.RoleSender},
			{Name: "joint", Kind: dissect.KindUint, Role: dissect.RoleSensor}}},
		{Type: "announce", Fields: []dissect.FieldDecl{
			{Name: "sender", Kind: dissect.KindString}, {Name: "sensor", Kind: dissect.KindInt}}},
	}}})
	s := NewRate(decl)
	arm := func(typ string, fs ...dissect.Field) { s.Record(rec(1, "a", "b", 0, "arm", typ, 4, fs...)) }
	arm("pose", f("device", dissect.Str("left")), f("joint", dissect.Uint(2)))
	arm("pose", f("device", dissect.Str("left")), f("joint", dissect.Uint(2)))
	arm("pose", f("device", dissect.Str("left")), f("joint", dissect.Uint(3)))
	arm("pose", f("device", dissect.Str("right")))
	arm("pose", f("device", dissect.Int(7)), f("joint", dissect.Str("x"))) // not a name, not a number
	arm("announce", f("sender", dissect.Str("left")), f("sensor", dissect.Int(1)))
	arm("announce", f("sender", dissect.Str("right")), f("sensor", dissect.Int(2)))
	var got []string
	for _, r := range jsonRows(t, s) {
		got = append(got, fmt.Sprintf("%v %v %v %v", r["type"], r["sender"], r["sensor"], r["messages"]))
	}
	want := "announce <nil> <nil> 2|pose <nil> <nil> 1|pose left 2 2|pose left 3 1|pose right <nil> 1"
	if strings.Join(got, "|") != want {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

// TestConvHandBuilt checks conv on hand-built records of two streams.
func TestConvHandBuilt(t *testing.T) {
	s := NewConv()
	ms := time.Millisecond
	s.Record(rec(3, "10.0.0.1:5000", "10.0.0.2:4000", 100*ms, "deltarobot", "protocol_magic", 10))
	s.Record(rec(3, "10.0.0.2:4000", "10.0.0.1:5000", 150*ms, "deltarobot", "protocol_magic", 10))
	w := rec(3, "10.0.0.1:5000", "10.0.0.2:4000", 200*ms, "deltarobot", "unknown", 8)
	w.Warnings = []string{"unknown id"}
	s.Record(w)
	s.Record(rec(3, "10.0.0.2:4000", "10.0.0.1:5000", 300*ms, "deltarobot", "gap", 22))
	s.Record(rec(3, "10.0.0.2:4000", "10.0.0.1:5000", 350*ms, "deltarobot", "skipped", 4))
	s.Record(rec(1, "host", "/dev/ttyUSB0", 0, "", "skipped", 40))
	rows := jsonRows(t, s)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%v %v %v>%v %v msgs=%v/%v/%v bytes=%v/%v/%v gaps=%v/%v skip=%v/%v warned=%v dur=%v",
			r["stream"], r["transport"], r["a"], r["b"], r["proto"], r["messages"], r["messages_ab"], r["messages_ba"],
			r["bytes"], r["bytes_ab"], r["bytes_ba"], r["gaps"], r["gap_bytes"], r["skipped"], r["skipped_bytes"], r["warned"], r["duration_s"]))
	}
	want := []string{
		"1 tcp host>/dev/ttyUSB0  msgs=0/0/0 bytes=0/0/0 gaps=0/0 skip=1/40 warned=0 dur=0.0",
		"3 tcp 10.0.0.1:5000>10.0.0.2:4000 deltarobot msgs=3/2/1 bytes=28/18/10 gaps=1/22 skip=1/4 warned=1 dur=0.25",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tab := tableOf(t, s, TableOptions{ASCII: true})
	if strings.ContainsFunc(tab, func(r rune) bool { return r > 127 }) || !strings.Contains(tab, "10.0.0.1:5000 -> 10.0.0.2:4000") {
		t.Errorf("ASCII table:\n%s", tab)
	}
}

// vrpnTruth is the part of the VRPN corpus's truth used here: per capture,
// the expected message counts per sender and type (and direction), the
// TCP connections (their cookies) and the UDP lob datagrams.
type vrpnTruth struct {
	Captures map[string]struct {
		ExpectedCounts struct {
			Rows [][]any `json:"rows"`
		} `json:"expected_counts"`
		TCP []struct {
			Directions []struct {
				Cookie json.RawMessage `json:"cookie"`
			} `json:"directions"`
		} `json:"tcp_connections"`
		Lobs []json.RawMessage `json:"udp_lob_datagrams"`
	} `json:"captures"`
}

// TestVRPNRateAndConvAgainstTruth runs the real VRPN captures through rate
// and conv: the messages per type (rate rows added up over streams,
// senders and sensors) equal the corpus truth's expected counts (its
// system types in dissect's lower-case names), plus one cookie per TCP
// direction that sent one and one udp_callback per lob datagram; conv's
// messages add up to the same total, and nothing is gap or skipped.
func TestVRPNRateAndConvAgainstTruth(t *testing.T) {
	type capture struct{ file, truth, key string }
	caps := []capture{
		{"../pcaps/vrpn_tcp_only.pcap", "../pcaps/vrpn_truth.json", "a_tcp_only.pcap"},
		{"../pcaps/vrpn_udp_tcp.pcapng", "../pcaps/vrpn_truth.json", "b_udp_tcp.pcap"},
		{"../pcaps/vrpn_multi_device.pcap", "../pcaps/vrpn_truth.json", "c2_multi_device_analog.pcap"},
	}
	m, _ := filepath.Glob("../dissect/vrpn/testdata/*.pcap*")
	for _, p := range m {
		key := filepath.Base(p)
		if key == "b_udp_tcp.pcapng" {
			key = "b_udp_tcp.pcap"
		}
		caps = append(caps, capture{p, "../dissect/vrpn/testdata/truth.json", key})
	}
	for _, c := range caps {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			b, err := os.ReadFile(c.truth)
			if err != nil {
				t.Fatal(err)
			}
			var vt vrpnTruth
			if err := json.Unmarshal(b, &vt); err != nil {
				t.Fatal(err)
			}
			ct, ok := vt.Captures[c.key]
			if !ok || len(ct.ExpectedCounts.Rows) == 0 {
				t.Fatalf("no expected counts for %s", c.key)
			}
			want := map[string]int64{}
			var total int64
			for _, r := range ct.ExpectedCounts.Rows {
				typ := r[5].(string)
				if typ == strings.ToUpper(typ) {
					typ = strings.ToLower(typ)
				}
				want[typ] += int64(r[6].(float64))
			}
			for _, tc := range ct.TCP {
				for _, d := range tc.Directions {
					if len(d.Cookie) > 0 && string(d.Cookie) != "null" {
						want["cookie"]++
					}
				}
			}
			if n := len(ct.Lobs); n > 0 {
				want["udp_callback"] += int64(n)
			}
			for _, n := range want {
				total += n
			}
			rate, conv := NewRate(runDecls(t, all.Options{})), NewConv()
			runCapture(t, c.file, "", all.Options{}, rate, conv)
			got := map[string]int64{}
			for _, r := range jsonRows(t, rate) {
				if r["proto"] != "vrpn" {
					t.Errorf("not vrpn: %v", r)
				}
				got[r["type"].(string)] += int64(num(t, r["messages"]))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("messages per type\n%v\nwant\n%v", got, want)
			}
			var msgs, gapB, skipB int64
			for _, r := range jsonRows(t, conv) {
				msgs += int64(num(t, r["messages"]))
				gapB += int64(num(t, r["gap_bytes"]))
				skipB += int64(num(t, r["skipped_bytes"]))
			}
			if msgs != total || gapB != 0 || skipB != 0 {
				t.Errorf("conv: %d messages, %d gap bytes, %d skipped bytes; want %d, 0, 0", msgs, gapB, skipB, total)
			}
		})
	}
}
