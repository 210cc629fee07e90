package foxws

import (
	"context"
	"github.com/dissect-tools/dissect/output/mcapout"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A client's requests are whatever it sends: any bytes are answered
// without a panic, a subscription only ever names a channel advertised
// to it, one subscription a channel, and the answers waiting for a
// client that does not read stay bounded.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"op":"subscribe","subscriptions":[{"id":1,"channelId":0}]}`,
		`{"op":"subscribe","subscriptions":[{"id":1,"channelId":0},{"id":1,"channelId":1},{"id":2}]}`,
		`{"op":"unsubscribe","subscriptionIds":[1,2,3]}`,
		`{"op":"getParameters","parameterNames":[]}`,
		`{"op":"subscribe","subscriptions":[{"id":-1,"channelId":70000}]}`,
		`{"op":"subscribe","subscriptions":null}`,
		`[1,2]`, `null`, ``, `{"op":7}`,
	} {
		f.Add([]byte(s))
	}
	reg := registry(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &Server{o: Options{Queue: 4, QueueBytes: 1 << 10, Grace: time.Second, Decl: reg.Decl, Encoding: mcapout.EncodingJSON}, ctx: context.Background(),
			log: newRunLog(), topics: map[uint16]string{}}
		c := newClient(s, nil, "fuzz")
		defer c.cancel()
		c.control(advertise([]advert{{id: 0, json: []byte(`{}`)}, {id: 1, json: []byte(`{}`)}}))
		for range maxAnswers + 2 {
			c.request(data)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for ch, sub := range c.subs {
			if ch > 1 {
				t.Fatalf("subscribed to channel %d, never advertised", ch)
			}
			if c.bySub[sub] != ch {
				t.Fatalf("subscription %d of channel %d is not found back", sub, ch)
			}
		}
		if len(c.subs) != len(c.bySub) {
			t.Fatalf("%d channels subscribed, %d subscriptions", len(c.subs), len(c.bySub))
		}
		if len(c.ctrls) > maxAnswers+1 {
			t.Fatalf("%d messages waiting for a client that does not read", len(c.ctrls))
		}
	})
}

// BenchmarkRecord sends a record to one client subscribed to its
// channel, which reads everything: an op is a record, its JSON made and
// queued (the client's goroutine sends it beside). MB/s of the records'
// wire bytes.
func BenchmarkRecord(b *testing.B) {
	s, err := Listen(context.Background(), Options{Addr: "127.0.0.1:0", Decl: registry(b).Decl, Encoding: mcapout.EncodingJSON})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c, _, err := websocket.Dial(ctx, s.URL(), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	for range 2 { // serverInfo, advertise
		if _, _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Record(plain(0, 8)); err != nil {
		b.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil { // the channel
		b.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"op":"subscribe","subscriptions":[{"id":1,"channelId":0}]}`)); err != nil {
		b.Fatal(err)
	}
	go func() {
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	}()
	r := plain(1, 8)
	b.SetBytes(r.Length)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Time = t0.Add(time.Duration(i) * time.Millisecond)
		if err := s.Record(r); err != nil {
			b.Fatal(err)
		}
	}
}
