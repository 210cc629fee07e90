package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/dissect-tools/dissect/internal/foxwscheck"
)

// Tests of -o foxglove with a real client: client.mjs on Foxglove's own
// @foxglove/ws-protocol (internal/foxwscheck), with Ajv checking every
// message against its channel's schema. They skip where Node or the
// packages are missing (npm ci --prefix internal/foxwscheck; .ci/run does)
// and, live, without root.

// fxFreePort returns a loopback port free a moment ago.
func fxFreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// fxStart runs the command line in-process and returns once the server
// says its URL.
func fxStart(t *testing.T, args ...string) *lvRun {
	t.Helper()
	r := &lvRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.code = run(args, strings.NewReader(""), &r.stdout, &r.stderr)
	}()
	lvWaitFor(t, r, "the server's URL", func() bool { return strings.Contains(r.stderr.String(), "serving Foxglove WebSocket on ws://") })
	return r
}

// fxCanon is a JSON value with its keys sorted and its numbers as
// float64 (as JavaScript has them): the form both sides are compared in.
func fxCanon(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// fxRecords are the records of a report (messages of the dissect.*
// schemas), canonical, and their receive times.
func fxRecords(t *testing.T, rep *foxwscheck.Report) (recs []string, ns []uint64) {
	t.Helper()
	for _, m := range rep.Messages {
		if !strings.HasPrefix(m.Schema, "dissect.") {
			continue
		}
		recs = append(recs, fxCanon(t, m.Data))
		n, err := strconv.ParseUint(m.NS, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, n)
	}
	return recs, ns
}

// fxJSON is what -o json writes for args, canonical, with each record's
// time in nanoseconds and its topic as docs/mcap.md names it.
func fxJSON(t *testing.T, args ...string) (recs []string, ns []uint64, topics []string) {
	t.Helper()
	stdout, stderr, code := cli(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("-o json: exit %d: %s", code, stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		recs = append(recs, fxCanon(t, []byte(line)))
		var r jsonRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		tm, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, uint64(tm.UnixNano()))
		topics = append(topics, fmt.Sprintf("/%s/%d/%s", *r.Proto, *r.Stream, r.Type))
	}
	return recs, ns, topics
}

func fxProblems(t *testing.T, name string, rep *foxwscheck.Report) {
	t.Helper()
	if len(rep.Problems) > 0 {
		t.Errorf("%s client: %d problems, the first: %v", name, len(rep.Problems), rep.Problems[0])
	}
	if rep.CloseCode == nil || *rep.CloseCode != 1000 {
		t.Errorf("%s client: closed with %v, want 1000 (normal closure)", name, rep.CloseCode)
	}
}

var fxSentRE = regexp.MustCompile(`-o foxglove: client \S+: (\d+) messages sent(?:, (\d+) missed)?`)

// The test: a live loopback exchange of thousands of Deltarobot
// messages captured with -i lo -o foxglove reaches a client subscribed
// before the traffic, every record, on its declared channel, each valid
// against its channel's schema and equal to the record -o json writes
// from the same packets (saved with -w); a second client that stops
// reading loses messages only with a count (its status messages, the
// summary), and gets the rest in order.
func TestFoxgloveLive(t *testing.T) {
	lvNeedCapture(t)
	if err := foxwscheck.Available(); err != nil {
		t.Skip(err)
	}
	// Positions: with their poses, more than a paused client's queue
	// (8192 messages) and sockets hold; sent at 2,000 a second (4,000
	// messages), which the first client takes as they come with seconds
	// to spare (its queue holds two), also on a busy machine.
	const n = 10000
	port := fxFreePort(t)
	drLn, p1 := lvListenTCP(t)
	saved := filepath.Join(t.TempDir(), "live.pcapng")
	url := fmt.Sprintf("ws://127.0.0.1:%d", port)
	r := lvStart(t, "-i", "lo", "-o", "foxglove", "--mcap-encoding", "json", "--out", fmt.Sprintf("127.0.0.1:%d", port), "-w", saved,
		"-f", fmt.Sprintf("tcp port %d", p1), "-d", fmt.Sprintf("tcp.port==%d,deltarobot", p1))
	if !strings.Contains(r.stderr.String(), "serving Foxglove WebSocket on "+url) {
		t.Fatalf("stderr does not give the URL %s:\n%s", url, r.stderr.String())
	}
	fast := foxwscheck.Start(t, url, false)
	slow := foxwscheck.Start(t, url, true)
	fast.WaitReady(t)
	slow.WaitReady(t)

	client, server := lvTcpPair(t, drLn)
	go io.Copy(io.Discard, client) // the robot's client reads what the robot sends
	lvWriteAll(t, client, append(lvHex(t, lvDRMagic), lvHex(t, lvDRVersion)...))
	lvWriteAll(t, server, append(lvHex(t, lvDRMagic), lvHex(t, lvDRVersion)...))
	pos := lvHex(t, lvDRPos123)
	var batch []byte
	for i := 1; i <= n; i++ {
		batch = append(batch, pos...)
		if i%100 == 0 {
			lvWriteAll(t, server, batch)
			batch = batch[:0]
			time.Sleep(50 * time.Millisecond) // pacing only
		}
	}
	lvWaitFor(t, r, "the first client to have every position", func() bool {
		p, d, m := fast.Counts()
		if p == n {
			return true
		}
		sp, sd, sm := slow.Counts()
		t.Logf("first client: %d positions, %d messages, %d missed; slow: %d, %d, %d", p, d, m, sp, sd, sm)
		time.Sleep(time.Second)
		return false
	})
	slow.Resume()
	lvWaitFor(t, r, "the slow client to catch up (what it got and missed adds up to the first client's)", func() bool {
		_, fd, _ := fast.Counts()
		_, sd, sm := slow.Counts()
		return sd+sm >= fd
	})
	client.Close()
	server.Close()
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGINT\nstderr:\n%s", code, r.stderr.String())
	}
	fr, sr := fast.Wait(t), slow.Wait(t)
	fxProblems(t, "first", fr)
	fxProblems(t, "slow", sr)
	fxClocks(t, "first", fr)
	fxClocks(t, "slow", sr)

	want, wantNS, wantTopics := fxJSON(t, "-r", saved, "-d", fmt.Sprintf("tcp.port==%d,deltarobot", p1))
	if len(want) != n+4 {
		t.Fatalf("the saved capture decodes to %d records, want %d (the positions and the handshakes)", len(want), n+4)
	}
	got, gotNS := fxRecords(t, fr)
	if len(got) != len(want) {
		t.Fatalf("the first client got %d records, -o json of the same packets has %d", len(got), len(want))
	}
	i := 0
	for _, m := range fr.Messages {
		if !strings.HasPrefix(m.Schema, "dissect.") {
			continue
		}
		if m.Topic != wantTopics[i] || m.Schema != "dissect.deltarobot."+strings.TrimPrefix(wantTopics[i], "/deltarobot/0/") {
			t.Fatalf("record %d on %s (schema %s), want %s", i, m.Topic, m.Schema, wantTopics[i])
		}
		if got[i] != want[i] || gotNS[i] != wantNS[i] {
			t.Fatalf("record %d at %d:\n%s\n-o json at %d:\n%s", i, gotNS[i], got[i], wantNS[i], want[i])
		}
		i++
	}

	// The slow client: what it got is what the first got, less what it
	// was told it missed.
	var missed int
	for _, s := range sr.Statuses {
		if m := regexp.MustCompile(`missed (\d+) messages`).FindStringSubmatch(s.Message); m != nil && s.Level == 1 {
			k, _ := strconv.Atoi(m[1])
			missed += k
		} else {
			t.Errorf("slow client: status %+v", s)
		}
	}
	if missed == 0 {
		t.Fatalf("the slow client got %d messages of %d and was told of no miss: it was not slow enough for the test", len(sr.Messages), len(fr.Messages))
	}
	if len(sr.Messages)+missed != len(fr.Messages) {
		t.Errorf("slow client: %d messages and %d missed, want %d together (the first client's)", len(sr.Messages), missed, len(fr.Messages))
	}
	j := 0
	for _, m := range sr.Messages {
		for j < len(fr.Messages) && (fr.Messages[j].NS != m.NS || fr.Messages[j].Topic != m.Topic || string(fr.Messages[j].Data) != string(m.Data)) {
			j++
		}
		if j == len(fr.Messages) {
			t.Fatalf("slow client: a message the first did not get in that order: %s %s", m.Topic, m.Data)
		}
		j++
	}
	// The summary says the same.
	var sums [][]string
	for _, line := range strings.Split(r.stderr.String(), "\n") {
		if m := fxSentRE.FindStringSubmatch(line); m != nil {
			sums = append(sums, m)
		}
	}
	wantSums := map[string]bool{fmt.Sprintf("%d/", len(fr.Messages)): true, fmt.Sprintf("%d/%d", len(sr.Messages), missed): true}
	for _, m := range sums {
		delete(wantSums, m[1]+"/"+m[2])
	}
	if len(sums) != 2 || len(wantSums) != 0 {
		t.Errorf("summary lines %v, want the first client's %d sent and the slow client's %d sent, %d missed\n%s", sums, len(fr.Messages), len(sr.Messages), missed, r.stderr.String())
	}
	t.Logf("%d records; the first client got %d messages, the slow one %d and missed %d", len(got), len(fr.Messages), len(sr.Messages), missed)
}

// A file at --speed 0 is played back to a client that connects after the
// run started: every record, in capture order (the order of -o json),
// each at its capture time; the server stays up when the file ends until
// Ctrl-C, and the run then ends normally.
// TestFoxglovePlayback plays a file to a client: every record -o json
// writes, at its capture time; for a built-in protocol and for one loaded
// from a protocol file.
func TestFoxglovePlayback(t *testing.T) {
	if err := foxwscheck.Available(); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"deltarobot", []string{"-r", filepath.Join(pcapDir, "deltarobot_session.pcap")}},
		{"protocol file", []string{"--protocol", exampleProtocol, "-r", filepath.Join(pcapDir, "acme", "acme_servo_tcp.pcap")}},
	} {
		t.Run(c.name, func(t *testing.T) { fxPlayback(t, c.args) })
	}
}

func fxPlayback(t *testing.T, input []string) {
	port := fxFreePort(t)
	url := fmt.Sprintf("ws://127.0.0.1:%d", port)
	r := fxStart(t, append(input, "-o", "foxglove", "--mcap-encoding", "json", "--out", fmt.Sprintf("127.0.0.1:%d", port), "--speed", "0")...)
	c := foxwscheck.Start(t, url, false)
	c.WaitReady(t)
	lvWaitFor(t, r, "the end of the input", func() bool { return strings.Contains(r.stderr.String(), "the input has ended; still serving "+url) })
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGINT at the end of the file\nstderr:\n%s", code, r.stderr.String())
	}
	rep := c.Wait(t)
	fxProblems(t, "the", rep)
	fxClocks(t, "the", rep)
	want, wantNS, _ := fxJSON(t, input...)
	got, gotNS := fxRecords(t, rep)
	if len(want) == 0 {
		t.Fatal("-o json wrote no record")
	}
	if len(got) != len(want) {
		var topics []string
		for _, m := range rep.Messages {
			topics = append(topics, m.Topic)
		}
		t.Fatalf("the client got %d records, -o json has %d; statuses %v; channels %v; messages on %v\nstderr:\n%s", len(got), len(want), rep.Statuses, rep.Channels, topics, r.stderr.String())
	}
	for i := range want {
		if got[i] != want[i] || gotNS[i] != wantNS[i] {
			t.Fatalf("record %d at %d:\n%s\n-o json at %d:\n%s", i, gotNS[i], got[i], wantNS[i], want[i])
		}
	}
	if m := fxSentRE.FindStringSubmatch(r.stderr.String()); m == nil || m[1] != strconv.Itoa(len(rep.Messages)) || m[2] != "" {
		t.Errorf("summary: %v, want %d messages sent and none missed\n%s", m, len(rep.Messages), r.stderr.String())
	}
}

// -o foxglove's flags: an address without a port and a negative speed
// are usage errors of one line; an address in use is an error naming it.
func TestFoxgloveUsage(t *testing.T) {
	file := filepath.Join(pcapDir, "deltarobot_session.pcap")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--out", "localhost"}, 2, `-o foxglove --out "localhost": want HOST:PORT`},
		{[]string{"--speed", "-1"}, 2, "--speed -1: want 0"},
	} {
		_, stderr, code := cli(t, append([]string{"-r", file, "-o", "foxglove"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	busy, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, stderr, code := cli(t, "-r", file, "-o", "foxglove", "--out", busy.Addr().String())
	if code != 1 || !strings.Contains(stderr, "-o foxglove: listening on "+busy.Addr().String()) || !strings.Contains(stderr, "address already in use") {
		t.Errorf("an address in use: exit %d, stderr %q", code, stderr)
	}
}

// A pipe (-r -) is not played back: each record goes to the clients as
// its packet comes, before the input ends; at its end the server stays
// up until Ctrl-C.
func TestFoxglovePipe(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "deltarobot_session.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	// The global header, then 8 whole packets (a 16-byte header each,
	// its third field the captured length).
	first := 24
	for k := 0; k < 8; k++ { // the handshake, then the first records
		first += 16 + int(binary.LittleEndian.Uint32(raw[first+8:]))
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	port := fxFreePort(t)
	r := &lvRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.code = run([]string{"-r", "-", "-o", "foxglove", "--out", fmt.Sprintf("127.0.0.1:%d", port)}, pr, &r.stdout, &r.stderr)
	}()
	lvWaitFor(t, r, "the server's URL", func() bool { return strings.Contains(r.stderr.String(), "serving Foxglove WebSocket on ws://") })
	if strings.Contains(r.stderr.String(), "played back") {
		t.Errorf("a pipe is played back:\n%s", r.stderr.String())
	}
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	c, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d", port), &websocket.DialOptions{Subprotocols: []string{"foxglove.websocket.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// serverInfo and the channels (none yet) say the client has joined.
	for range 2 {
		if _, _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pw.Write(raw[:first]); err != nil {
		t.Fatal(err)
	}
	// The first record's channel, then the record, while the pipe is open.
	var ch struct {
		Op       string
		Channels []struct {
			ID    int
			Topic string
		}
	}
	for ch.Op != "advertise" || len(ch.Channels) == 0 {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &ch); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
	}
	sub := fmt.Sprintf(`{"op":"subscribe","subscriptions":[{"id":3,"channelId":%d}]}`, ch.Channels[0].ID)
	if err := c.Write(ctx, websocket.MessageText, []byte(sub)); err != nil {
		t.Fatal(err)
	}
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("no record before the pipe's end: %v\nstderr:\n%s", err, r.stderr.String())
		}
		if typ == websocket.MessageBinary {
			if len(b) == 9 && b[0] == 2 {
				continue // a Time message: the capture time of what follows
			}
			if b[0] != 1 || binary.LittleEndian.Uint32(b[1:]) != 3 || !strings.Contains(string(b[13:]), "protocol_magic") { // the record's type, in its protobuf message
				t.Fatalf("message %q, want the first record (protocol_magic) on subscription 3", b)
			}
			break
		}
	}
	pw.Write(raw[first:])
	pw.Close()
	lvWaitFor(t, r, "the end of the input", func() bool { return strings.Contains(r.stderr.String(), "the input has ended; still serving") })
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, r.stderr.String())
	}
}
