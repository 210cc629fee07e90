package stats

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
)

// tcpDir is one direction of a TCP connection read straight from the
// capture's packets (not through dissect's reassembly): for every payload
// byte, its value and the capture time of the first packet that carried it.
type tcpDir struct {
	isn    uint32
	hasISN bool
	seen   []time.Time // by offset from ISN+1; zero: not seen
	data   []byte      // by offset from ISN+1, as first seen
}

// readTCP reads every TCP payload of an Ethernet (802.1Q too) or Linux
// SLL2 capture carrying IPv4 or IPv6, per direction "src>dst".
func readTCP(t testing.TB, path string) map[string]*tcpDir {
	t.Helper()
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dirs := map[string]*tcpDir{}
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b := p.Data
		var etype uint16
		switch p.LinkType {
		case capture.LinkEthernet:
			etype, b = binary.BigEndian.Uint16(b[12:]), b[14:]
			for etype == 0x8100 {
				etype, b = binary.BigEndian.Uint16(b[2:]), b[4:]
			}
		case 276: // LINKTYPE_LINUX_SLL2
			etype, b = binary.BigEndian.Uint16(b[0:]), b[20:]
		default:
			t.Fatalf("%s: link type %d not read by this test", path, p.LinkType)
		}
		var from, to netip.Addr
		switch etype {
		case 0x0800:
			ihl := int(b[0]&15) * 4
			total := int(binary.BigEndian.Uint16(b[2:]))
			if b[9] != 6 {
				continue
			}
			from, to = netip.AddrFrom4([4]byte(b[12:16])), netip.AddrFrom4([4]byte(b[16:20]))
			b = b[ihl:total]
		case 0x86dd:
			plen := int(binary.BigEndian.Uint16(b[4:]))
			if b[6] != 6 {
				continue
			}
			from, to = netip.AddrFrom16([16]byte(b[8:24])), netip.AddrFrom16([16]byte(b[24:40]))
			b = b[40 : 40+plen]
		default:
			continue
		}
		sp, dp := binary.BigEndian.Uint16(b[0:]), binary.BigEndian.Uint16(b[2:])
		seq := binary.BigEndian.Uint32(b[4:])
		flags := b[13]
		payload := b[int(b[12]>>4)*4:]
		key := netip.AddrPortFrom(from, sp).String() + ">" + netip.AddrPortFrom(to, dp).String()
		d := dirs[key]
		if d == nil {
			d = &tcpDir{}
			dirs[key] = d
		}
		if flags&2 != 0 { // SYN
			d.isn, d.hasISN = seq, true
			continue
		}
		if !d.hasISN {
			t.Fatalf("%s: %s: payload before the SYN", path, key)
		}
		off := int(seq - d.isn - 1)
		for i := range payload {
			for len(d.seen) <= off+i {
				d.seen = append(d.seen, time.Time{})
				d.data = append(d.data, 0)
			}
			if d.seen[off+i].IsZero() {
				d.seen[off+i] = p.Time
				d.data[off+i] = payload[i]
			}
		}
	}
	return dirs
}

// complete returns when the bytes [0, end) of the direction had all been
// captured: the latest first-seen time among them.
func (d *tcpDir) complete(t testing.TB, end int64) time.Time {
	t.Helper()
	var at time.Time
	for i := range end {
		if d.seen[i].IsZero() {
			t.Fatalf("byte %d never captured", i)
		}
		if d.seen[i].After(at) {
			at = d.seen[i]
		}
	}
	return at
}

type summaryWant struct {
	count, requests    int64
	min, median, max   float64
	p95, p99, mean     float64
	hasSamples         bool
	stream             int
	request            string
	unansweredExpected int64
}

// want computes the expected row from samples: nearest-rank quantiles.
func want(samples []float64) summaryWant {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	rank := func(p float64) float64 { return s[int(math.Ceil(p*float64(n)))-1] }
	var sum float64
	for _, v := range s {
		sum += v
	}
	return summaryWant{count: int64(n), min: s[0], max: s[n-1], median: rank(0.5), p95: rank(0.95),
		p99: rank(0.99), mean: sum / float64(n), hasSamples: true}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// nearRounded reports whether got is want rounded to d decimals: within
// half a unit of the last decimal, and with no more decimals than d.
func nearRounded(got, want float64, d int) bool {
	unit := math.Pow10(-d)
	scaled := got / unit
	return math.Abs(got-want) <= unit/2*(1+1e-9) && math.Abs(scaled-math.Round(scaled)) < 1e-6
}

func checkRTTRow(t *testing.T, row map[string]any, w summaryWant) {
	t.Helper()
	if got := int64(num(t, row["count"])); got != w.count {
		t.Errorf("%v: count %d, want %d", row["request"], got, w.count)
	}
	if got := int64(num(t, row["requests"])); got != w.requests {
		t.Errorf("%v: requests %d, want %d", row["request"], got, w.requests)
	}
	if got := int64(num(t, row["unanswered"])); got != w.unansweredExpected {
		t.Errorf("%v: unanswered %d, want %d", row["request"], got, w.unansweredExpected)
	}
	for _, c := range []struct {
		key  string
		want float64
	}{{"min_ms", w.min}, {"median_ms", w.median}, {"p95_ms", w.p95}, {"p99_ms", w.p99}, {"max_ms", w.max}, {"mean_ms", w.mean}} {
		if got := num(t, row[c.key]); !nearRounded(got, c.want, 3) {
			t.Errorf("%v: %s %v, want %v rounded to the microsecond", row["request"], c.key, got, c.want)
		}
	}
}

// TestRTTDeltarobotAgainstPackets checks -z rtt on the Deltarobot captures
// whose pings were all seen: the expected round trips are computed from the
// capture's packets (read here with capture.OpenFile and a TCP reader of the
// test's own) at the offsets the truth sidecar gives for each ping and its
// pong (matched by id; the id's 8 little-endian bytes are checked at those
// offsets): pong complete − ping complete.
func TestRTTDeltarobotAgainstPackets(t *testing.T) {
	for _, name := range []string{"deltarobot_session.pcap", "deltarobot_garbage.pcap", "deltarobot_vlan_ipv6.pcapng", "deltarobot_sll2.pcap"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("../pcaps", name)
			base := strings.TrimSuffix(strings.TrimSuffix(path, ".pcapng"), ".pcap")
			tf := readTruth(t, base+".truth.json")
			dirs := readTCP(t, path)
			var samples []float64
			var pings int64
			pingAt := map[uint64]time.Time{}
			type pong struct {
				id uint64
				at time.Time
			}
			var pongs []pong
			for _, st := range tf.Streams {
				for _, d := range st.Directions {
					td := dirs[d.Src+">"+d.Dst]
					if td == nil {
						t.Fatalf("no packets %s>%s", d.Src, d.Dst)
					}
					for _, r := range d.Records {
						if r.Type != "ping" && r.Type != "pong" {
							continue
						}
						id, err := strconv.ParseUint(string(r.Fields["id"]), 10, 64)
						if err != nil {
							t.Fatal(err)
						}
						wire := make([]byte, 10)
						binary.LittleEndian.PutUint16(wire, 0x3004)
						if r.Type == "pong" {
							binary.LittleEndian.PutUint16(wire, 0x3005)
						}
						binary.LittleEndian.PutUint64(wire[2:], id)
						if r.Length != 10 {
							t.Fatalf("%s at %d: length %d", r.Type, r.Offset, r.Length)
						}
						for i := range wire {
							if td.seen[r.Offset+int64(i)].IsZero() {
								t.Fatalf("%s at %d: byte %d not captured", r.Type, r.Offset, i)
							}
						}
						at := td.complete(t, r.Offset+r.Length)
						if r.Type == "ping" {
							pings++
							pingAt[id] = at
						} else {
							pongs = append(pongs, pong{id, at})
						}
					}
				}
			}
			for _, p := range pongs {
				if at, ok := pingAt[p.id]; ok {
					samples = append(samples, float64(p.at.Sub(at))/1e6)
				}
			}
			if len(samples) == 0 {
				t.Fatal("no ping/pong pairs in the truth")
			}
			w := want(samples)
			w.requests, w.unansweredExpected = pings, pings-int64(len(samples))
			s := NewRTT(runDecls(t, all.Options{}))
			runCapture(t, path, tf.DecodeAs, all.Options{}, s)
			rows := jsonRows(t, s)
			if len(rows) != 1 || rows[0]["proto"] != "deltarobot" || rows[0]["request"] != "ping" {
				t.Fatalf("rows %v, want one deltarobot ping row", rows)
			}
			checkRTTRow(t, rows[0], w)
			t.Logf("%d pings, round trips %v ms", pings, samples)
		})
	}
}

// TestRTTHandControlAgainstTruth checks -z rtt on the HandControl
// captures against the latencies the encoder wrote into the sidecars (the
// replies' latency_ms, whole milliseconds by construction), grouped by the
// request the reply's request_code names (the host's request of that
// code), and the requests per type counted from the truth's host records.
func TestRTTHandControlAgainstTruth(t *testing.T) {
	for _, name := range []string{"handcontrol_serial.pcapng", "handcontrol_tcp_bridge.pcap"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("../pcaps", name)
			base := strings.TrimSuffix(strings.TrimSuffix(path, ".pcapng"), ".pcap")
			tf := readTruth(t, base+".truth.json")
			names := map[int64]string{}
			requests := map[string]int64{}
			lat := map[string][]float64{}
			for _, st := range tf.Streams {
				for _, d := range st.Directions {
					for _, r := range d.Records {
						var role string
						json.Unmarshal(r.Fields["role"], &role)
						if role == "request" {
							code, _ := strconv.ParseInt(string(r.Fields["code"]), 10, 64)
							names[code] = r.Type
							requests[r.Type]++
						}
					}
				}
				for _, d := range st.Directions {
					for _, r := range d.Records {
						if l, ok := r.Fields["latency_ms"]; ok {
							v, _ := strconv.ParseFloat(string(l), 64)
							code, _ := strconv.ParseInt(string(r.Fields["request_code"]), 10, 64)
							lat[names[code]] = append(lat[names[code]], v)
						}
					}
				}
			}
			s := NewRTT(runDecls(t, all.Options{}))
			runCapture(t, path, tf.DecodeAs, all.Options{}, s)
			rows := jsonRows(t, s)
			if len(rows) != len(requests) {
				t.Errorf("%d rows, want one per request type (%d): %v", len(rows), len(requests), rows)
			}
			for _, row := range rows {
				req := row["request"].(string)
				samples := lat[req]
				if len(samples) == 0 {
					if n := int64(num(t, row["count"])); n != 0 || int64(num(t, row["unanswered"])) != requests[req] {
						t.Errorf("%s: %v, want no sample and %d unanswered", req, row, requests[req])
					}
					continue
				}
				w := want(samples)
				w.requests, w.unansweredExpected = requests[req], requests[req]-int64(len(samples))
				checkRTTRow(t, row, w)
			}
			t.Logf("latencies by request: %v", lat)
		})
	}
}

// TestRTTHistogram checks the memory bound: past the sample budget a key
// switches to the histogram, whose quantiles stay within 1 % of the exact
// ones (computed here from the same values), with min, max, mean and count
// exact, and the table marks them with ≈.
func TestRTTHistogram(t *testing.T) {
	decl := testDecls(t)
	s := NewRTT(decl)
	s.maxSamples = 1000
	exact := NewRTT(decl)
	var vals []float64
	x := uint64(12345)
	for i := range 5000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v := 0.05 + float64(x%1_000_000)/1000 // 0.05 .. 1000 ms
		if i%100 == 0 {
			v = 0
		}
		vals = append(vals, v)
		for _, st := range []*RTT{s, exact} {
			st.Record(rec(1, "b", "a", 0, "deltarobot", "ping", 10))
			st.Record(rec(1, "a", "b", 0, "deltarobot", "pong", 10, f("rtt_ms", dissect.Float(v))))
		}
	}
	if s.samples > 1000 || s.order[0].hist == nil {
		t.Fatalf("%d samples kept, histogram %v", s.samples, s.order[0].hist != nil)
	}
	w := want(vals)
	got := s.order[0]
	for _, c := range []struct {
		p    float64
		want float64
	}{{0.5, w.median}, {0.95, w.p95}, {0.99, w.p99}, {0.01, 0}, {1, w.max}} {
		v := got.quantile(c.p)
		if math.Abs(v-c.want) > 0.01*c.want {
			t.Errorf("p%v = %v, want %v within 1%%", c.p*100, v, c.want)
		}
		if e := exact.order[0].quantile(c.p); e != c.want {
			t.Errorf("exact p%v = %v, want %v", c.p*100, e, c.want)
		}
	}
	if got.min != w.min || got.max != w.max || got.count != 5000 || !near(got.sum/5000, w.mean) {
		t.Errorf("min %v max %v count %d mean %v, want %v %v 5000 %v", got.min, got.max, got.count, got.sum/5000, w.min, w.max, w.mean)
	}
	tab := tableOf(t, s, TableOptions{})
	if !strings.Contains(tab, "≈") || strings.Contains(tableOf(t, exact, TableOptions{}), "≈") {
		t.Errorf("≈ only for the histogram:\n%s", tab)
	}
	if strings.Contains(tableOf(t, s, TableOptions{ASCII: true}), "≈") {
		t.Error("ASCII table has ≈")
	}
	rows := jsonRows(t, s)
	if rows[0]["approximate"] != true {
		t.Errorf("approximate: %v", rows[0]["approximate"])
	}
}

// TestHistogramRelativeError checks every bucket middle against values
// spread over the histogram's range.
func TestHistogramRelativeError(t *testing.T) {
	for v := 2e-6; v < 1e9; v *= 1.0037 {
		var h logHist
		h.add(v)
		if got := h.rank(1); math.Abs(got-v) > 0.01*v {
			t.Fatalf("%v in a bucket whose middle is %v", v, got)
		}
	}
}

// TestRTTUnansweredAndNames checks the HandControl naming of requests by
// code, the unanswered counts and the row order on hand-built records.
func TestRTTUnansweredAndNames(t *testing.T) {
	s := NewRTT(testDecls(t))
	req := func(at time.Duration, typ string, code int64) {
		s.Record(rec(2, "host", "dev", at, "handcontrol", typ, 12, f("code", dissect.Int(code)), f("role", dissect.Str("request"))))
	}
	resp := func(at time.Duration, typ string, code int64, lat float64) {
		s.Record(rec(2, "dev", "host", at, "handcontrol", typ, 12, f("code", dissect.Int(1)), f("role", dissect.Str("response")),
			f("request_code", dissect.Int(code)), f("latency_ms", dissect.Float(lat))))
	}
	req(0, "GetSettings", 4)
	resp(3*time.Millisecond, "GetSettings", 4, 3)
	req(10*time.Millisecond, "SetPositions", 11)
	resp(12*time.Millisecond, "ACK", 11, 2)
	req(20*time.Millisecond, "SetPositions", 11)
	req(30*time.Millisecond, "GetMioPatterns", 16)
	resp(31*time.Millisecond, "GetTelemetry", 16, 1) // the type-13 quirk
	s.Record(rec(0, "b", "a", 0, "deltarobot", "ping", 10))
	got := fmt.Sprint(func() (out []string) {
		for _, row := range jsonRows(t, s) {
			out = append(out, fmt.Sprintf("%v/%v/%v/%v/%v", row["stream"], row["request"], row["count"], row["requests"], row["unanswered"]))
		}
		return
	}())
	if want := "[0/ping/0/1/1 2/GetMioPatterns/1/1/0 2/GetSettings/1/1/0 2/SetPositions/1/2/1]"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// TestRTTByRoles checks rtt on a protocol it has never heard of, whose
// declarations name its fields freely: a request keyed by a string, a
// reply naming its request by that key, a reply that always answers one
// type, and the fallbacks "code KEY" and "(unknown request)". Each row is
// worked out by hand from the records below.
func TestRTTByRoles(t *testing.T) {
	fd := func(name string, k dissect.Kind, ro dissect.Role) dissect.FieldDecl {
		return dissect.FieldDecl{Name: name, Kind: k, Role: ro}
	}
	decl := testDecls(t, declOnly{dissect.Info{Name: "arm", Proto: "arm", Types: []dissect.TypeDecl{
		{Type: "hello", Fields: []dissect.FieldDecl{fd("tag", dissect.KindString, dissect.RoleRequestKey)},
			Exchange: dissect.Exchange{Role: dissect.Request}},
		{Type: "move", Fields: []dissect.FieldDecl{fd("tag", dissect.KindString, dissect.RoleRequestKey)},
			Exchange: dissect.Exchange{Role: dissect.Request}},
		{Type: "done", Fields: []dissect.FieldDecl{fd("tag", dissect.KindString, dissect.RoleRequestKey), fd("took", dissect.KindUint, dissect.RoleLatency)},
			Exchange: dissect.Exchange{Role: dissect.Reply}},
		{Type: "beep", Exchange: dissect.Exchange{Role: dissect.Request}},
		{Type: "boop", Fields: []dissect.FieldDecl{fd("ms", dissect.KindFloat32, dissect.RoleLatency)},
			Exchange: dissect.Exchange{Role: dissect.Reply, Answers: "beep"}},
		// latency_ms without the role is not a latency.
		{Type: "status", Fields: []dissect.FieldDecl{fd("latency_ms", dissect.KindFloat, 0)}},
	}}})
	s := NewRTT(decl)
	arm := func(stream int, typ string, fs ...dissect.Field) {
		s.Record(rec(stream, "a", "b", 0, "arm", typ, 4, fs...))
	}
	tag := func(v string) dissect.Field { return f("tag", dissect.Str(v)) }
	arm(1, "hello", tag("x"))
	arm(1, "move", tag("x")) // the key's first request names it
	arm(1, "move", tag("y"))
	arm(1, "done", tag("x"), f("took", dissect.Uint(4)))
	arm(1, "done", tag("y"), f("took", dissect.Uint(6)))
	arm(1, "done", tag("y"), f("took", dissect.Uint(8)))
	arm(1, "done", tag("z"), f("took", dissect.Uint(1))) // no request of key z
	arm(1, "done", f("took", dissect.Uint(2)))           // no key at all
	arm(1, "done", tag("x"))                             // no latency: no sample
	arm(1, "done", tag("x"), f("took", dissect.Str("5")))
	arm(2, "done", tag("x"), f("took", dissect.Uint(3))) // x is known on stream 1 only
	arm(2, "beep")
	arm(2, "beep")
	arm(2, "boop", f("ms", dissect.Float32(0.5)))
	arm(2, "status", f("latency_ms", dissect.Float(9)))
	s.Record(rec(2, "a", "b", 0, "other", "boop", 4, f("ms", dissect.Float32(0.5)))) // undeclared
	var got []string
	for _, row := range jsonRows(t, s) {
		got = append(got, fmt.Sprintf("%v/%v/%v count=%v requests=%v min=%v max=%v", row["stream"], row["proto"], row["request"],
			row["count"], row["requests"], row["min_ms"], row["max_ms"]))
	}
	want := []string{
		"1/arm/(unknown request) count=1 requests=0 min=2.0 max=2.0",
		"1/arm/code z count=1 requests=0 min=1.0 max=1.0",
		"1/arm/hello count=1 requests=1 min=4.0 max=4.0",
		"1/arm/move count=2 requests=2 min=6.0 max=8.0",
		"2/arm/beep count=1 requests=2 min=0.5 max=0.5",
		"2/arm/code x count=1 requests=0 min=3.0 max=3.0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
