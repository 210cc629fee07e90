package foxstudio

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/internal/childtest"
	"github.com/dissect-tools/dissect/internal/longtest"
	"github.com/foxglove/mcap/go/mcap"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// The file the file test plays, and the topic the layout's Plot draws
// (layout.json: /deltarobot/0/actuator_position.fields.z).
const (
	sessionPcap = "pcaps/deltarobot_session.pcap"
	plotTopic   = "/deltarobot/0/actuator_position"
)

// TestStudioFilePanelsLate plays a shipped capture with -o foxglove to a
// real Foxglove Studio whose panels subscribe 6 s after it connected, at
// --speed 1 and 0, and checks what the panels got and show against the
// same file's -o mcap, read by Foxglove's own Go MCAP reader:
//   - every panel is handed every record of each of its topics, no more
//     (as many as -o mcap has);
//   - the Plot draws every actuator position at its capture time (to the
//     nanosecond) and value, and Studio's time axis (its start and end
//     time) lies within the capture's own packets;
//   - the 3D panel finds the frame it follows ("world", from /tf, sent
//     once in the capture) and reports no error;
//   - the Raw Messages panels show the last record of their topic, at
//     its capture time.
func TestStudioFilePanelsLate(t *testing.T) {
	longtest.Skip(t)
	root := ModuleRoot(t)
	bin := buildDissect(t, root)
	pcap := filepath.Join(root, sessionPcap)
	want := mcapTopics(t, bin, pcap)
	first, last := pcapSpan(t, pcap)
	for _, speed := range []string{"1", "0"} {
		t.Run("speed="+speed, func(t *testing.T) {
			run := startDissect(t, bin, "-r", pcap, "-o", "foxglove", "--out", freeAddr(t), "--speed", speed)
			expect := layoutExpect(t, root, want)
			s := Start(t, Options{URL: run.url, Delay: 6 * time.Second, Expect: expect, Timeout: 75 * time.Second, Out: t.ArtifactDir()})
			r := s.Wait(t, 120*time.Second)
			summary := run.stop(t)
			t.Logf("Studio: connected %d ms before its panels were shown, reported %d ms after; %d seeks; screenshots in %s\ndissect:\n%s",
				r.Waited.ConnectToShowMs, r.Waited.ShowToDoneMs, r.Seeks, t.ArtifactDir(), summary)
			checkAll(t, r, root, want, expect, first, last)
		})
	}
}

// TestStudioOpensMCAPFile opens the -o mcap file of a shipped capture
// (the defaults: protobuf messages, zstd chunks) in a real Foxglove
// Studio, as its "Open local file" does (its MCAP file data source, which
// reads the file through its indexes in a worker), shows the layout's
// panels and plays the file; the checks are those of the WebSocket test,
// against the same file's -o mcap --mcap-encoding json read by
// Foxglove's Go reader: every panel is handed every message of its
// topics, the Plot draws every actuator position at its capture time and
// value, Studio's time axis is the capture's, the 3D panel renders in
// "world" with no error, the Raw Messages panels show each topic's last
// record, and Studio reports no error.
func TestStudioOpensMCAPFile(t *testing.T) {
	longtest.Skip(t)
	root := ModuleRoot(t)
	bin := buildDissect(t, root)
	pcap := filepath.Join(root, sessionPcap)
	want := mcapTopics(t, bin, pcap)
	first, last := pcapSpan(t, pcap)
	file := filepath.Join(t.TempDir(), "session.mcap")
	if b, err := exec.Command(bin, "-r", pcap, "-o", "mcap", "--out", file).CombinedOutput(); err != nil {
		t.Fatalf("dissect -o mcap: %v\n%s", err, b)
	}
	expect := layoutExpect(t, root, want)
	// On a loaded machine Studio sometimes seeks again by itself while it
	// plays (its clock goes back, it resets its panels) and the Plot then
	// never gets every point: such a session times out, and is tried
	// again, at most three times in all. A session that ends in time is
	// checked whatever it shows.
	var r *Report
	for attempt := 1; ; attempt++ {
		out := filepath.Join(t.ArtifactDir(), strconv.Itoa(attempt))
		s := Start(t, Options{File: file, Delay: 2 * time.Second, Expect: expect, Timeout: 75 * time.Second, Out: out})
		r = s.Wait(t, 120*time.Second)
		t.Logf("Studio, attempt %d: opened the file %d ms before its panels were shown, reported %d ms after; %d seeks; screenshots in %s",
			attempt, r.Waited.ConnectToShowMs, r.Waited.ShowToDoneMs, r.Seeks, out)
		if !r.TimedOut || attempt == 3 {
			break
		}
	}
	checkAll(t, r, root, want, expect, first, last)
}

// layoutExpect: the messages each topic of the layout's panels must be
// handed, -o mcap's count.
func layoutExpect(t *testing.T, root string, want map[string]*topicRecords) map[string]int {
	t.Helper()
	expect := map[string]int{}
	for _, topic := range layoutTopics(t, root) {
		if want[topic].count == 0 {
			t.Fatalf("the layout's topic %s has no message in %s's -o mcap", topic, sessionPcap)
		}
		expect[topic] = want[topic].count
	}
	return expect
}

// checkAll makes every check of the report of the layout's panels (Start
// waited at most 75 s for them to be filled).
func checkAll(t *testing.T, r *Report, root string, want map[string]*topicRecords, expect map[string]int, first, last string) {
	t.Helper()
	if r.TimedOut {
		t.Errorf("the panels were not filled in 75 s (see below what they got)")
	}
	checkCounts(t, r, expect)
	checkPlot(t, r, want[plotTopic])
	checkSpan(t, r, first, last, want)
	check3D(t, r)
	checkRawMessages(t, r, root, want)
	checkProblems(t, r)
}

// topicRecords are a topic's messages in -o mcap: how many, their log
// times (decimal nanoseconds, in order) and their JSON.
type topicRecords struct {
	count int
	times []string
	data  [][]byte
}

// mcapTopics writes file's -o mcap and reads it back with
// github.com/foxglove/mcap.
func mcapTopics(t *testing.T, bin, file string) map[string]*topicRecords {
	t.Helper()
	out := filepath.Join(t.TempDir(), "want.mcap")
	if b, err := exec.Command(bin, "-r", file, "-o", "mcap", "--mcap-encoding", "json", "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("dissect -o mcap: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := mcap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	it, err := rd.Messages(mcap.UsingIndex(false))
	if err != nil {
		t.Fatal(err)
	}
	topics := map[string]*topicRecords{}
	for {
		_, ch, msg, err := it.Next(nil)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", out, err)
		}
		tr := topics[ch.Topic]
		if tr == nil {
			tr = &topicRecords{}
			topics[ch.Topic] = tr
		}
		tr.count++
		tr.times = append(tr.times, fmt.Sprint(msg.LogTime))
		tr.data = append(tr.data, slices.Clone(msg.Data))
	}
	return topics
}

// pcapSpan: the capture times of the file's first and last packets
// (decimal nanoseconds).
func pcapSpan(t *testing.T, file string) (first, last string) {
	t.Helper()
	eachPacket(t, file, func(_ []byte, ci gopacket.CaptureInfo, _ layers.LinkType) {
		ns := fmt.Sprint(ci.Timestamp.UnixNano())
		if first == "" {
			first = ns
		}
		last = ns
	})
	return first, last
}

// eachPacket reads a pcap file with gopacket's pcapgo.
func eachPacket(t *testing.T, file string, fn func(data []byte, ci gopacket.CaptureInfo, link layers.LinkType)) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	for {
		data, ci, err := rd.ReadPacketData()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		fn(data, ci, rd.LinkType())
	}
}

// layoutFile is the layouts Studio is given: "empty", then "panels".
type layoutFile struct {
	Panels struct {
		ConfigByID map[string]struct {
			Paths     []struct{ Value string }
			TopicPath string
			Topics    map[string]struct{ Visible bool }
		} `json:"configById"`
	} `json:"panels"`
}

func readLayout(t *testing.T, root string) *layoutFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "internal", "foxstudio", "layout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l layoutFile
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("layout.json: %v", err)
	}
	return &l
}

// layoutTopics are the topics the layout "panels" shows: the Plot's, the
// Raw Messages', the 3D panel's visible topics, and /tf, which a 3D panel
// always takes.
func layoutTopics(t *testing.T, root string) []string {
	t.Helper()
	topics := []string{"/tf"}
	for _, c := range readLayout(t, root).Panels.ConfigByID {
		for _, p := range c.Paths {
			topics = append(topics, strings.SplitN(p.Value, ".", 2)[0])
		}
		if c.TopicPath != "" {
			topics = append(topics, c.TopicPath)
		}
		for topic, v := range c.Topics {
			if v.Visible {
				topics = append(topics, topic)
			}
		}
	}
	slices.Sort(topics)
	return slices.Compact(topics)
}

// checkCounts: every subscriber of each expected topic was handed
// exactly as many messages of it as -o mcap has (since the last seek:
// what the panel shows), and no panel subscribed to a topic it was not
// expected to.
func checkCounts(t *testing.T, r *Report, expect map[string]int) {
	t.Helper()
	for topic, n := range expect {
		subscribed := false
		for _, s := range r.Subscribers {
			if !slices.Contains(s.Topics, topic) {
				continue
			}
			subscribed = true
			if got := s.SinceSeek[topic]; got != n {
				t.Errorf("a panel subscribed to %s was handed %d of its %d records (%d in all, with those before the player's last seek; the player received %d)",
					topic, got, n, s.Received[topic], r.TopicStats[topic])
			}
		}
		if !subscribed {
			t.Errorf("no panel subscribed to %s", topic)
		}
	}
	for _, s := range r.Subscribers {
		for _, topic := range s.Topics {
			if _, ok := expect[topic]; !ok {
				t.Errorf("a panel subscribed to %s, not in the layout", topic)
			}
		}
	}
}

// checkPlot: the Plot draws one point per record of its topic, at the
// record's capture time to the nanosecond and with its fields.z.
func checkPlot(t *testing.T, r *Report, want *topicRecords) {
	t.Helper()
	if len(r.Plots) != 1 || len(r.Plots[0].Datasets) != 1 {
		t.Errorf("want one Plot of one series, got %d plots", len(r.Plots))
		return
	}
	pts := r.Plots[0].Datasets[0].Points
	if len(pts) != want.count {
		t.Errorf("the Plot draws %d points, want %d (one per %s record)", len(pts), want.count, plotTopic)
	}
	for i := range min(len(pts), want.count) {
		var rec struct{ Fields struct{ Z float64 } }
		if err := json.Unmarshal(want.data[i], &rec); err != nil {
			t.Fatal(err)
		}
		// z is declared float32: a protobuf channel carries its bits,
		// which the Plot widens to a double; JSON its shortest digits.
		if pts[i].ReceiveTime != want.times[i] || float32(pts[i].Y) != float32(rec.Fields.Z) {
			t.Errorf("Plot point %d: time %s (%s), z %v; want the record's capture time %s (%s), z %v",
				i, pts[i].ReceiveTime, nsDate(pts[i].ReceiveTime), pts[i].Y, want.times[i], nsDate(want.times[i]), rec.Fields.Z)
		}
	}
}

// checkSpan: Studio's time axis (the player's start and end time, from
// which every panel measures) is the capture's: it starts between the
// first packet and the first record, and ends between the last record
// and the last packet.
func checkSpan(t *testing.T, r *Report, firstPacket, lastPacket string, want map[string]*topicRecords) {
	t.Helper()
	firstRec, lastRec := "", ""
	for _, tr := range want {
		if firstRec == "" || nsLess(tr.times[0], firstRec) {
			firstRec = tr.times[0]
		}
		if lastRec == "" || nsLess(lastRec, tr.times[len(tr.times)-1]) {
			lastRec = tr.times[len(tr.times)-1]
		}
	}
	if r.StartTime == "" || nsLess(r.StartTime, firstPacket) || nsLess(firstRec, r.StartTime) {
		t.Errorf("Studio's start time is %s (%s); want the capture's, from its first packet %s to its first record %s",
			r.StartTime, nsDate(r.StartTime), nsDate(firstPacket), nsDate(firstRec))
	}
	if r.EndTime == "" || nsLess(r.EndTime, lastRec) || nsLess(lastPacket, r.EndTime) {
		t.Errorf("Studio's end time is %s (%s); want the capture's, from its last record %s to its last packet %s",
			r.EndTime, nsDate(r.EndTime), nsDate(lastRec), nsDate(lastPacket))
	}
}

// check3D: the 3D panel renders in the frame it follows, "world", with
// the robot's frame under it, and shows no error.
func check3D(t *testing.T, r *Report) {
	t.Helper()
	if len(r.ThreeDees) != 1 {
		t.Errorf("want one 3D panel, found %d", len(r.ThreeDees))
		return
	}
	p := r.ThreeDees[0]
	if p.RenderFrameID == nil || *p.RenderFrameID != "world" || !slices.Contains(p.Frames, "deltarobot/0") {
		t.Errorf("the 3D panel renders in frame %v, knows the frames %q; want world, and deltarobot/0", deref(p.RenderFrameID), p.Frames)
	}
	for _, e := range p.Errors {
		t.Errorf("the 3D panel says: %s: %s", e.Path, e.Message)
	}
}

// checkRawMessages: each Raw Messages panel shows the last record of its
// topic, stamped with its capture time (Studio writes "@ SEC.NSEC sec").
func checkRawMessages(t *testing.T, r *Report, root string, want map[string]*topicRecords) {
	t.Helper()
	shown := 0
	for id, c := range readLayout(t, root).Panels.ConfigByID {
		if !strings.HasPrefix(id, "RawMessages!") {
			continue
		}
		tr := want[c.TopicPath]
		if tr == nil {
			t.Fatalf("the layout's %s shows %s, which -o mcap does not have", id, c.TopicPath)
		}
		last := tr.times[tr.count-1]
		var rec struct{ Time string }
		if err := json.Unmarshal(tr.data[tr.count-1], &rec); err != nil {
			t.Fatal(err)
		}
		stamp := "@ " + last[:len(last)-9] + "." + last[len(last)-9:] + " sec"
		i := slices.IndexFunc(r.Panels, func(p panelText) bool { return p.Panel == id })
		if i < 0 {
			t.Errorf("Studio shows no panel %s", id)
			continue
		}
		shown++
		// A JSON channel's message shows its time as text; a protobuf
		// one (the default) its message type's name, the time folded.
		if text := r.Panels[i].Text; !strings.Contains(text, stamp) || !strings.Contains(text, rec.Time) && !strings.Contains(text, "dissect.") {
			t.Errorf("the Raw Messages panel of %s shows %q; want its last record (time %s) %s", c.TopicPath, firstLines(text, 3), rec.Time, stamp)
		}
	}
	if shown == 0 {
		t.Errorf("Studio shows no Raw Messages panel")
	}
}

// checkProblems: Studio lists no error among its problems.
func checkProblems(t *testing.T, r *Report) {
	t.Helper()
	for _, p := range r.Problems {
		if p.Severity == "error" {
			t.Errorf("Studio's problems: %s", p.Message)
		} else {
			t.Logf("Studio's problems (%s): %s", p.Severity, p.Message)
		}
	}
}

// buildDissect builds the command into a temporary directory.
func buildDissect(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dissect")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/dissect")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// dissectRun is dissect -o foxglove running.
type dissectRun struct {
	p   *childtest.Process
	url string
}

var servingRE = regexp.MustCompile(`serving Foxglove WebSocket on (ws://\S+)`)

// startDissect runs bin with args and waits until it says where it
// serves (and, with -i, that it captures).
func startDissect(t *testing.T, bin string, args ...string) *dissectRun {
	t.Helper()
	d := &dissectRun{}
	ready := make(chan string, 1)
	url, capturing := "", !slices.Contains(args, "-i")
	d.p = childtest.Start(t, childtest.Options{Line: func(line string) {
		if m := servingRE.FindStringSubmatch(line); m != nil {
			url = m[1]
		}
		capturing = capturing || strings.Contains(line, "capturing on")
		if url != "" && capturing {
			ready <- url
			url = ""
		}
	}}, bin, args...)
	select {
	case d.url = <-ready:
	case <-d.p.Ended():
		t.Fatalf("dissect %s ended before serving: %v\n%s", strings.Join(args, " "), d.p.Err(), d.stderr())
	case <-time.After(30 * time.Second):
		t.Fatalf("dissect %s: not serving after 30 s:\n%s", strings.Join(args, " "), d.stderr())
	}
	return d
}

func (d *dissectRun) stderr() string { return d.p.Stderr() }

// stop interrupts dissect (Ctrl-C) and returns what it said.
func (d *dissectRun) stop(t *testing.T) string {
	t.Helper()
	d.p.Cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-d.p.Ended():
		if err := d.p.Err(); err != nil {
			t.Errorf("dissect after Ctrl-C: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("dissect did not stop in 30 s after Ctrl-C")
	}
	return d.stderr()
}

func nsLess(a, b string) bool {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	return x == nil || y == nil || x.Cmp(y) < 0
}

// nsDate writes decimal nanoseconds since 1970 as a UTC date.
func nsDate(ns string) string {
	x, ok := new(big.Int).SetString(ns, 10)
	if !ok || !x.IsInt64() {
		return "?"
	}
	return time.Unix(0, x.Int64()).UTC().Format("2006-01-02T15:04:05.000000000Z")
}

func deref(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], " | ")
}
