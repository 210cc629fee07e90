package main

import (
	"context"
	"fmt"
	"github.com/dissect-tools/dissect/internal/longtest"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/dissect-tools/dissect/internal/foxwscheck"
)

// fxClocks checks that a client's clock (the Time messages, the
// viewer's receive time) is the capture time: each message's is the
// latest log time of the messages before it and itself.
func fxClocks(t *testing.T, name string, rep *foxwscheck.Report) {
	t.Helper()
	var latest uint64
	for i, m := range rep.Messages {
		ns, _ := strconv.ParseUint(m.NS, 10, 64)
		latest = max(latest, ns)
		if m.Clock == nil {
			t.Fatalf("%s client: message %d (%s) before any Time message", name, i, m.Topic)
		}
		clock, _ := strconv.ParseUint(*m.Clock, 10, 64)
		if clock != latest {
			t.Fatalf("%s client: message %d (%s at %d) received at clock %d, want %d (capture time)", name, i, m.Topic, ns, clock, latest)
		}
	}
}

// Clients of Foxglove's own library that subscribe 0, 3, 10 and 30 s
// after connecting to a file's run (all at once, so the test takes
// about 30 s) each get every message of every topic, as many as -o mcap
// writes, in capture order on the capture's clock; the first offers only
// the Foxglove SDK's subprotocol foxglove.sdk.v1, the others only
// foxglove.websocket.v1. (Before issue 30, a client subscribing 6 s or
// more after connecting got none.)
func TestFoxgloveLateSubscribers(t *testing.T) {
	longtest.Skip(t)
	if err := foxwscheck.Available(); err != nil {
		t.Skip(err)
	}
	file := filepath.Join(pcapDir, "deltarobot_session.pcap")
	mcapFile := filepath.Join(t.TempDir(), "want.mcap")
	if _, stderr, code := cli(t, "-r", file, "-o", "mcap", "--out", mcapFile); code != 0 {
		t.Fatalf("-o mcap: exit %d: %s", code, stderr)
	}
	f, err := os.Open(mcapFile)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := readMCAP(t, f)
	f.Close()
	wantBy := map[string][]uint64{}
	for _, m := range want {
		wantBy[m.topic] = append(wantBy[m.topic], m.logTime)
	}

	port := fxFreePort(t)
	url := fmt.Sprintf("ws://127.0.0.1:%d", port)
	r := fxStart(t, "-r", file, "-o", "foxglove", "--mcap-encoding", "json", "--out", fmt.Sprintf(":%d", port))
	if !strings.Contains(r.stderr.String(), "serving Foxglove WebSocket on "+url) {
		t.Fatalf("--out :PORT does not serve loopback's %s:\n%s", url, r.stderr.String())
	}
	delays := []int{0, 3000, 10000, 30000}
	clients := make([]*foxwscheck.Client, len(delays))
	for i, d := range delays {
		proto := "foxglove.websocket.v1"
		if i == 0 {
			proto = "foxglove.sdk.v1"
		}
		clients[i] = foxwscheck.StartWith(t, url, "--subscribe-after", strconv.Itoa(d), "--protocols", proto)
	}
	for _, c := range clients {
		c.WaitReady(t)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		done := 0
		for _, c := range clients {
			if _, d, _ := c.Counts(); d >= len(want) {
				done++
			}
		}
		if done == len(clients) {
			break
		}
		if time.Now().After(deadline) {
			for i, c := range clients {
				p, d, m := c.Counts()
				t.Logf("client %d (after %d ms): %d positions, %d messages, %d missed: %s", i, delays[i], p, d, m, c.Stderr())
			}
			t.Fatalf("not every client has the %d messages of -o mcap in 90 s\nstderr:\n%s", len(want), r.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // nothing more comes
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGINT\nstderr:\n%s", code, r.stderr.String())
	}
	for i, c := range clients {
		name := fmt.Sprintf("after %d ms", delays[i])
		rep := c.Wait(t)
		fxProblems(t, name, rep)
		fxClocks(t, name, rep)
		if wantProto := map[bool]string{true: "foxglove.sdk.v1", false: "foxglove.websocket.v1"}[i == 0]; rep.Protocol != wantProto {
			t.Errorf("%s: subprotocol %q, want %q", name, rep.Protocol, wantProto)
		}
		got := map[string][]uint64{}
		for _, m := range rep.Messages {
			ns, _ := strconv.ParseUint(m.NS, 10, 64)
			got[m.Topic] = append(got[m.Topic], ns)
		}
		if fmt.Sprint(got) != fmt.Sprint(wantBy) {
			for topic, ns := range wantBy {
				if len(got[topic]) != len(ns) {
					t.Errorf("%s: %s: %d messages, -o mcap has %d", name, topic, len(got[topic]), len(ns))
				}
			}
			t.Fatalf("%s: the messages by topic differ from -o mcap's", name)
		}
		if len(rep.Statuses) > 0 {
			t.Errorf("%s: statuses %v", name, rep.Statuses)
		}
	}
	if n := strings.Count(r.stderr.String(), fmt.Sprintf(": %d messages sent\n", len(want))); n != len(clients) {
		t.Errorf("the summary has %d lines of %d messages sent and none missed, want %d:\n%s", n, len(want), len(clients), r.stderr.String())
	}
}

// The server refuses, with 403, a handshake from a web page of another
// origin, and one naming another host (a page of a name made to resolve
// to 127.0.0.1: DNS rebinding); it accepts Foxglove's and Lichtblick's
// web apps, pages of loopback, no Origin, and an origin of
// --allow-origin; --out without an address serves loopback only.
func TestFoxgloveOriginHost(t *testing.T) {
	port := fxFreePort(t)
	r := fxStart(t, "-r", filepath.Join(pcapDir, "deltarobot_session.pcap"), "-o", "foxglove", "--mcap-encoding", "json",
		"--out", fmt.Sprintf(":%d", port), "--allow-origin", "https://*.example.org")
	url := fmt.Sprintf("ws://127.0.0.1:%d", port)
	dial := func(origin, host string) (int, error) {
		ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		o := &websocket.DialOptions{Subprotocols: []string{"foxglove.websocket.v1"}, HTTPHeader: h, Host: host}
		c, resp, err := websocket.Dial(ctx, url, o)
		if err != nil {
			if resp != nil {
				return resp.StatusCode, err
			}
			return 0, err
		}
		c.CloseNow()
		return 101, nil
	}
	for _, c := range []struct {
		origin, host string
		code         int
	}{
		{"", "", 101},
		{"https://app.foxglove.dev", "", 101},
		{"https://lichtblick-suite.github.io", "", 101},
		{"http://localhost:8080", "", 101},
		{"http://127.0.0.1:3000", "", 101},
		{"https://viz.example.org", "", 101},
		{"https://evil.example", "", 403},
		{"http://localhost.evil.example", "", 403},
		{"https://app.foxglove.dev.evil.example", "", 403},
		{"null", "", 403},
		{"", "evil.example:" + strconv.Itoa(port), 403},
		{"", "localhost:" + strconv.Itoa(port), 101},
	} {
		code, err := dial(c.origin, c.host)
		if code != c.code {
			t.Errorf("Origin %q Host %q: %d (%v), want %d", c.origin, c.host, code, err, c.code)
		}
	}
	// Nothing listens beyond loopback.
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			ip, _, _ := net.ParseCIDR(a.String())
			if ip == nil || ip.IsLoopback() {
				continue
			}
			if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)), time.Second); err == nil {
				c.Close()
				t.Errorf("--out :%d: reachable on %s", port, ip)
			}
		}
	}
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, r.stderr.String())
	}
}
