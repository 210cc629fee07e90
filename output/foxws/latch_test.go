package foxws

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

func hello(n int, s string) *dissect.Record {
	return &dissect.Record{
		Time: t0.Add(time.Duration(n) * time.Millisecond), Proto: "p", Transport: dissect.TCP, Stream: 2, Src: "a:1", Dst: "b:2",
		Type: "hello", Length: 4, Fields: []dissect.Field{{Key: "s", Value: dissect.Str(s)}},
	}
}

// subscribeTopics subscribes to the channels of topics (from an
// advertise), returning the topic of each subscription id.
func (tc *tclient) subscribeTopics(chs []channel, topics ...string) map[uint32]string {
	tc.t.Helper()
	byID := map[uint32]string{}
	var subs []map[string]any
	for i, ch := range chs {
		for _, topic := range topics {
			if ch.Topic == topic {
				subs = append(subs, map[string]any{"id": i, "channelId": ch.ID})
				byID[uint32(i)] = topic
			}
		}
	}
	if len(subs) != len(topics) {
		tc.t.Fatalf("channels %v: not all of %v", chs, topics)
	}
	tc.send(map[string]any{"op": "subscribe", "subscriptions": subs})
	return byID
}

// A live client that subscribes after the context went by is sent at
// once the last message of each context channel (a type declared
// Context) and the last transform to each frame on /tf (the world's to
// the arm's frame), at their own capture times; the other messages that
// went by are counted as missed, told to it and in the summary.
func TestLatchedContext(t *testing.T) {
	s := listen(t, Options{})
	defer s.Close()
	early := dial(t, s) // the log keeps messages while a client is there
	early.expectOp("serverInfo")
	mustRecord(t, s, hello(0, "first"))
	mustRecord(t, s, arm(1))
	mustRecord(t, s, hello(2, "second"))
	for i := 3; i < 6; i++ {
		mustRecord(t, s, plain(i, 1))
	}
	c := dial(t, s)
	c.expectOp("serverInfo")
	chs := channels(t, c.expectOp("advertise"))
	byID := c.subscribeTopics(chs, "/tf", "/p/2/hello", "/p/0/plain")
	got := map[string]string{}
	var ns = map[string]uint64{}
	var status string
	for len(got) < 2 || status == "" {
		g := c.next()
		if g.bin {
			got[byID[g.sub]] = string(g.data)
			ns[byID[g.sub]] = g.ns
			continue
		}
		if g.text["op"] == "status" {
			status = fmt.Sprint(g.text["message"])
		}
	}
	if !strings.Contains(got["/p/2/hello"], `"s":"second"`) || ns["/p/2/hello"] != uint64(t0.Add(2*time.Millisecond).UnixNano()) {
		t.Errorf("context: %s at %d, want the second hello at its capture time", got["/p/2/hello"], ns["/p/2/hello"])
	}
	var tf struct {
		Transforms []struct {
			Parent string `json:"parent_frame_id"`
			Child  string `json:"child_frame_id"`
		}
	}
	if err := json.Unmarshal([]byte(got["/tf"]), &tf); err != nil || len(tf.Transforms) == 0 || tf.Transforms[0].Parent != "world" {
		t.Errorf("/tf: %s (%v), want the transform from world", got["/tf"], err)
	}
	if got["/p/0/plain"] != "" {
		t.Errorf("a plain record (not context) was sent late: %s", got["/p/0/plain"])
	}
	want := "missed 4 messages (4 in all): /p/0/plain 3, /p/2/hello 1: they went by before it subscribed"
	if !strings.Contains(status, want) {
		t.Errorf("status %q, want %q", status, want)
	}
	if notes := strings.Join(s.Notes(), "\n"); !strings.Contains(notes, "2 messages sent, 4 missed (/p/0/plain 3, /p/2/hello 1: they went by") {
		t.Errorf("notes:\n%s", notes)
	}
}

// A file's client that subscribes to a topic its playback has passed is
// played the file again from the start: its clock goes back to the
// first message's time, then it gets every message of both topics.
func TestPlaybackLateSubscription(t *testing.T) {
	s := listen(t, Options{Playback: true})
	defer s.Close()
	for i := range 10 {
		mustRecord(t, s, plain(i, 1))
		mustRecord(t, s, hello(i, "h"))
	}
	c := dial(t, s)
	c.expectOp("serverInfo")
	chs := channels(t, c.expectOp("advertise"))
	byID := c.subscribeTopics(chs, "/p/0/plain")
	for range 10 {
		if g := c.next(); !g.bin || byID[g.sub] != "/p/0/plain" {
			t.Fatalf("got %s, want a plain record", g.describe())
		}
	}
	clocks := len(c.clocks)
	for id, topic := range c.subscribeTopics(chs, "/p/2/hello") {
		byID[id] = topic
	}
	var order []string
	for len(order) < 20 {
		g := c.next()
		if !g.bin {
			t.Fatalf("got %s", g.raw)
		}
		order = append(order, fmt.Sprintf("%s@%d", strings.TrimPrefix(byID[g.sub], "/p/"), (g.ns-uint64(t0.UnixNano()))/1e6))
	}
	if len(c.clocks) <= clocks || c.clocks[clocks] != uint64(t0.UnixNano()) {
		t.Errorf("clocks %v after the new subscription, want the file's start %d", c.clocks[clocks:], t0.UnixNano())
	}
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("0/plain@%d", i), fmt.Sprintf("2/hello@%d", i))
	}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("after the new subscription: %v, want %s", order, want)
	}
}
