package foxws

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/dissect-tools/dissect/output/mcapout"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/dissect-tools/dissect/internal/leakcheck"
)

// A file whose messages cost more than the log's budget: reading waits
// for the client playing it (at Speed 0, as fast as it takes them), and
// it misses none.
func TestFileOverBudgetLosesNothing(t *testing.T) {
	s := listen(t, Options{Playback: true, Budget: 1 << 20})
	defer s.Close()
	c := dial(t, s)
	c.expectOp("serverInfo")
	c.expectOp("advertise")
	const n = 500 // 20 kB each: 10 MB, ten budgets
	done := make(chan error, 1)
	go func() {
		for i := 0; i <= n; i++ {
			if err := s.Record(plain(i, 20000)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	ch := channels(t, c.expectOp("advertise"))[0]
	c.send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": 1, "channelId": ch.ID}}})
	for i := 0; i <= n; i++ {
		g := c.next()
		if !g.bin {
			t.Fatalf("got %s, want record %d", g.raw, i)
		}
		var rec struct{ Fields struct{ N int } }
		if err := json.Unmarshal(g.data, &rec); err != nil || rec.Fields.N != i {
			t.Fatalf("message %d is record %d (%v)", i, rec.Fields.N, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(s.Notes(), "\n"); strings.Contains(notes, "missed") {
		t.Errorf("notes: %s", notes)
	}
	// A client that comes after the log dropped the file's start gets
	// the rest, and is told it missed the start.
	late := dial(t, s)
	late.expectOp("serverInfo")
	late.expectOp("advertise")
	late.send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": 1, "channelId": ch.ID}}})
	got, missed := 0, 0
	for got+missed <= n {
		g := late.next()
		if g.bin {
			got++
			continue
		}
		m := missedRE.FindStringSubmatch(fmt.Sprint(g.text["message"]))
		if m == nil || !strings.Contains(fmt.Sprint(g.text["message"]), "the file's log had dropped them") {
			t.Fatalf("got %s, want a status of messages the log dropped", g.raw)
		}
		k, _ := strconv.Atoi(m[1])
		missed += k
	}
	if missed == 0 || got+missed != n+1 {
		t.Errorf("the late client got %d and missed %d, want %d together, some missed", got, missed, n+1)
	}
}

// A file is played to a client that connects after the records came:
// every record in capture order, as fast as the client takes them
// (Speed 0) or in capture time (Speed 20: 300 records 1 ms apart in
// 15 ms); the viewer's clock (Time messages) is the capture time and
// only goes back when the playback starts again from the start; Close
// ends the clients with a normal closure and leaves no goroutine behind.
func TestPlaybackAndClose(t *testing.T) {
	t.Run("fast", func(t *testing.T) { testPlayback(t, Options{}) })
	t.Run("speed", func(t *testing.T) { testPlayback(t, Options{Speed: 20}) })
}

func testPlayback(t *testing.T, o Options) {
	before := runtime.NumGoroutine()
	o.Addr, o.Decl, o.Playback, o.Encoding = "127.0.0.1:0", registry(t).Decl, true, mcapout.EncodingJSON
	s, err := Listen(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	done := make(chan error, 1)
	go func() {
		for i := range n {
			r := plain(i, 10)
			if i%3 == 1 {
				r = arm(i)
			}
			if err := s.Record(r); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	c := dial(t, s)
	c.expectOp("serverInfo")
	sub := uint32(0)
	var ns []uint64
	clocks := 0
	for len(ns) < n+n/3 { // every record, and the arms' poses
		g := c.next()
		for _, clock := range c.clocks[clocks:] {
			if clocks > 0 && clock < c.clocks[clocks-1] {
				ns = ns[:0] // played again from the start, as a viewer's seek
			}
			clocks++
		}
		if g.bin {
			if len(c.clocks) == 0 || g.ns > c.clocks[len(c.clocks)-1] {
				t.Fatalf("message at %d, after the clock at %v", g.ns, c.clocks)
			}
			ns = append(ns, g.ns)
			continue
		}
		if g.text["op"] != "advertise" {
			t.Fatalf("got %s", g.raw)
		}
		for _, ch := range channels(t, g) {
			if ch.Topic == "/tf" {
				continue // not counted
			}
			c.send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": sub, "channelId": ch.ID}}})
			sub++
		}
	}
	for i := 1; i < len(ns); i++ {
		if ns[i] < ns[i-1] {
			t.Fatalf("message %d at %d after %d: not in capture order", i, ns[i], ns[i-1])
		}
	}
	if ns[0] != uint64(t0.UnixNano()) || c.clocks[0] != uint64(t0.UnixNano()) {
		t.Errorf("first message at %d, first clock %d; want the capture's start %d", ns[0], c.clocks[0], t0.UnixNano())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for {
		if _, err := c.read(); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Errorf("after Close: %v, want a normal closure", err)
			}
			break
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	c.c.CloseNow()
	leakcheck.Settled(t, before, "Close")
}
