package foxws

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/leakcheck"
	"github.com/dissect-tools/dissect/output/mcapout"
)

// describer is a protocol that only declares its types.
type describer struct{ info dissect.Info }

func (p describer) Info() dissect.Info { return p.info }
func (describer) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict {
	return dissect.No
}
func (describer) NewParser(*dissect.StreamInfo) dissect.Parser { return nil }

// registry declares the protocol "p": "plain" (n, and a string s) and
// "arm", a pose from its own x, y, z.
func registry(t testing.TB) *dissect.Registry {
	t.Helper()
	fd := func(name string, k dissect.Kind) dissect.FieldDecl {
		return dissect.FieldDecl{Name: name, Kind: k, Required: true}
	}
	types := []dissect.TypeDecl{
		{Type: "plain", Fields: []dissect.FieldDecl{fd("n", dissect.KindUint), fd("s", dissect.KindString)}},
		{Type: "arm", Fields: []dissect.FieldDecl{fd("x", dissect.KindFloat), fd("y", dissect.KindFloat), fd("z", dissect.KindFloat)}, Pose: &dissect.Pose{}},
		{Type: "hello", Context: true, Fields: []dissect.FieldDecl{fd("s", dissect.KindString)}},
	}
	reg, err := dissect.NewRegistry(describer{dissect.Info{Name: "p", Proto: "p", Types: types}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

var t0 = time.Date(2026, 11, 24, 1, 2, 3, 456789000, time.UTC)

// plain is record n of type plain on stream 0, 1 ms after the one before,
// its field s pad bytes long.
func plain(n, pad int) *dissect.Record {
	return &dissect.Record{
		Time: t0.Add(time.Duration(n) * time.Millisecond), Proto: "p", Transport: dissect.TCP, Src: "a:1", Dst: "b:2",
		Type: "plain", Length: 4, Offset: int64(n),
		Fields: []dissect.Field{{Key: "n", Value: dissect.Uint(uint64(n))}, {Key: "s", Value: dissect.Str(strings.Repeat("x", pad))}},
	}
}

func arm(n int) *dissect.Record {
	return &dissect.Record{
		Time: t0.Add(time.Duration(n) * time.Millisecond), Proto: "p", Transport: dissect.UDP, Stream: 1, Src: "a:1", Dst: "b:2",
		Type: "arm", Length: 12,
		Fields: []dissect.Field{{Key: "x", Value: dissect.Float(1.5)}, {Key: "y", Value: dissect.Float(-2)}, {Key: "z", Value: dissect.Float(float64(n))}},
	}
}

func listen(t *testing.T, o Options) *Server {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	o.Name = "dissect test"
	if o.Encoding == "" {
		o.Encoding = mcapout.EncodingJSON // the tests read the payloads as JSON; TestSubscribeAndFraming both
	}
	if o.Decl == nil {
		o.Decl = registry(t).Decl
	}
	s, err := Listen(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tclient is a test's client: it reads the server's messages in order.
type tclient struct {
	t      *testing.T
	c      *websocket.Conn
	ctx    context.Context
	stop   context.CancelFunc
	clocks []uint64 // the Time messages read, in order
}

// got is one message from the server: a text message's JSON, or a
// Message Data's subscription, time and payload.
type got struct {
	text map[string]any
	raw  []byte
	bin  bool
	sub  uint32
	ns   uint64
	data []byte
}

func dial(t *testing.T, s *Server) *tclient {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	c, resp, err := websocket.Dial(ctx, s.URL(), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	if c.Subprotocol() != Subprotocol {
		t.Fatalf("subprotocol %q, want %q (HTTP %d)", c.Subprotocol(), Subprotocol, resp.StatusCode)
	}
	c.SetReadLimit(64 << 20)
	tc := &tclient{t: t, c: c, ctx: ctx, stop: stop}
	t.Cleanup(func() { c.CloseNow(); stop() })
	return tc
}

func (tc *tclient) next() got {
	tc.t.Helper()
	g, err := tc.read()
	if err != nil {
		tc.t.Fatal(err)
	}
	return g
}

// read returns the next message but a Time message, which it keeps in
// clocks.
func (tc *tclient) read() (got, error) {
	typ, b, err := tc.c.Read(tc.ctx)
	if err != nil {
		return got{}, err
	}
	if typ == websocket.MessageBinary && len(b) == 9 && b[0] == 2 {
		tc.clocks = append(tc.clocks, binary.LittleEndian.Uint64(b[1:]))
		return tc.read()
	}
	if typ == websocket.MessageText {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return got{}, fmt.Errorf("text message not JSON: %v: %s", err, b)
		}
		return got{text: m, raw: b}, nil
	}
	if len(b) < 13 || b[0] != 1 {
		return got{}, fmt.Errorf("binary message %x: want opcode 1 and 12 bytes of header", b)
	}
	return got{bin: true, sub: binary.LittleEndian.Uint32(b[1:]), ns: binary.LittleEndian.Uint64(b[5:]), data: b[13:]}, nil
}

// expectOp reads the next message, which must be a text message of op.
func (tc *tclient) expectOp(op string) got {
	tc.t.Helper()
	g := tc.next()
	if g.bin || g.text["op"] != op {
		tc.t.Fatalf("got %s, want op %q", g.describe(), op)
	}
	return g
}

func (g got) describe() string {
	if g.bin {
		return fmt.Sprintf("message data (subscription %d): %s", g.sub, g.data)
	}
	return string(g.raw)
}

func (tc *tclient) send(v any) {
	tc.t.Helper()
	b, _ := json.Marshal(v)
	if err := tc.c.Write(tc.ctx, websocket.MessageText, b); err != nil {
		tc.t.Fatal(err)
	}
}

// channel is an advertised channel.
type channel struct {
	ID             float64 `json:"id"`
	Topic          string  `json:"topic"`
	Encoding       string  `json:"encoding"`
	SchemaName     string  `json:"schemaName"`
	Schema         string  `json:"schema"`
	SchemaEncoding string  `json:"schemaEncoding"`
}

func channels(t *testing.T, g got) []channel {
	t.Helper()
	var a struct{ Channels []channel }
	if err := json.Unmarshal(g.raw, &a); err != nil {
		t.Fatal(err)
	}
	return a.Channels
}

func mustRecord(t *testing.T, s *Server, r *dissect.Record) {
	t.Helper()
	if err := s.Record(r); err != nil {
		t.Fatal(err)
	}
}

// A client is told who the server is, then of the channels (none yet); a
// client of either subprotocol is taken, foxglove.websocket.v1 when it
// offers both; a client that speaks neither is refused.
func TestHandshake(t *testing.T) {
	s := listen(t, Options{})
	defer s.Close()
	c := dial(t, s)
	info := c.expectOp("serverInfo")
	if info.text["name"] != "dissect test" || info.text["sessionId"] == "" {
		t.Errorf("serverInfo %s", info.raw)
	}
	if caps, ok := info.text["capabilities"].([]any); !ok || len(caps) != 1 || caps[0] != "time" {
		t.Errorf("capabilities %v, want [time] (dissect publishes, in capture time)", info.text["capabilities"])
	}
	if chs := channels(t, c.expectOp("advertise")); len(chs) != 0 {
		t.Errorf("channels %v before any record", chs)
	}

	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	// The Foxglove SDK's name alone (PlotJuggler), or both (Lichtblick).
	for _, offer := range [][]string{{"foxglove.sdk.v1"}, {"foxglove.sdk.v1", "foxglove.websocket.v1"}} {
		c, _, err := websocket.Dial(ctx, s.URL(), &websocket.DialOptions{Subprotocols: offer})
		if err != nil {
			t.Fatalf("offering %v: %v", offer, err)
		}
		if want := offer[len(offer)-1]; c.Subprotocol() != want {
			t.Errorf("offering %v: subprotocol %q, want %q", offer, c.Subprotocol(), want)
		}
		if _, _, err := c.Read(ctx); err != nil { // serverInfo
			t.Errorf("offering %v: %v", offer, err)
		}
		c.CloseNow()
	}
	other, _, err := websocket.Dial(ctx, s.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.CloseNow()
	_, _, err = other.Read(ctx)
	if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
		t.Fatalf("a client without the subprotocol: %v (status %d), want closed with %d", err, st, websocket.StatusPolicyViolation)
	}
}

// A channel is advertised when its first record comes; a client that
// subscribes then gets that record and the ones after, framed as the
// spec says, the same topics and messages as the MCAP file of the same
// records; after unsubscribing it gets no more of that channel.
func TestSubscribeAndFraming(t *testing.T) {
	for _, enc := range []string{mcapout.EncodingJSON, mcapout.EncodingProtobuf} {
		t.Run(enc, func(t *testing.T) { testSubscribeAndFraming(t, enc) })
	}
}

func testSubscribeAndFraming(t *testing.T, enc string) {
	s := listen(t, Options{Encoding: enc})
	defer s.Close()
	c := dial(t, s)
	c.expectOp("serverInfo")
	c.expectOp("advertise")

	recs := []*dissect.Record{plain(0, 3), plain(1, 0), arm(2), plain(3, 1)}
	var file bytes.Buffer
	mw, err := mcapout.New(&file, mcapout.Options{Decl: registry(t).Decl, Encoding: enc})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := mw.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	want := readMCAP(t, file.Bytes())

	mustRecord(t, s, recs[0])
	chs := channels(t, c.expectOp("advertise"))
	if len(chs) != 1 {
		t.Fatalf("advertised %v, want the channel of the first record", chs)
	}
	ch := chs[0]
	schemaEnc := map[string]string{mcapout.EncodingJSON: "jsonschema", mcapout.EncodingProtobuf: "protobuf"}[enc]
	if ch.Topic != "/p/0/plain" || ch.Encoding != enc || ch.SchemaName != "dissect.p.plain" || ch.SchemaEncoding != schemaEnc {
		t.Errorf("channel %+v", ch)
	}
	want.sameSchema(t, ch.Topic, ch.Schema, enc)
	// Subscribed after the record was sent: it waited for the
	// subscription.
	c.send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": 7, "channelId": ch.ID}}})
	byID := map[uint32]string{7: ch.Topic}
	var topics, payloads []string
	var times []uint64
	receive := func(g got) {
		topics = append(topics, byID[g.sub])
		payloads = append(payloads, string(g.data))
		times = append(times, g.ns)
	}
	g := c.next()
	if !g.bin || g.sub != 7 {
		t.Fatalf("got %s, want the first record on subscription 7", g.describe())
	}
	receive(g)
	for _, r := range recs[1:] {
		mustRecord(t, s, r)
	}
	// arm: its record topic and its pose, each advertised, subscribed,
	// then the rest.
	for sub := uint32(8); len(payloads) < len(want.payloads); {
		g := c.next()
		if g.bin {
			receive(g)
			continue
		}
		if g.text["op"] != "advertise" {
			t.Fatalf("got %s", g.raw)
		}
		for _, ch := range channels(t, g) {
			c.send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": sub, "channelId": ch.ID}}})
			byID[sub] = ch.Topic
			want.sameSchema(t, ch.Topic, ch.Schema, enc)
			sub++
		}
	}
	if fmt.Sprint(topics) != fmt.Sprint(want.topics) || fmt.Sprint(times) != fmt.Sprint(want.times) {
		t.Errorf("topics %v, times %v;\nthe MCAP file's %v, %v", topics, times, want.topics, want.times)
	}
	for i := range payloads {
		want.samePayload(t, i, payloads[i])
	}
	// The payload is the record's JSON (docs/output.md), by hand.
	if enc == mcapout.EncodingJSON && (!strings.Contains(payloads[0], `"type":"plain"`) || !strings.Contains(payloads[0], `"fields":{"n":0,"s":"xxx"}`)) {
		t.Errorf("payload %s", payloads[0])
	}
	if times[0] != uint64(t0.UnixNano()) {
		t.Errorf("receive time %d, want the capture time %d", times[0], t0.UnixNano())
	}

	// Unsubscribed from /p/0/plain: the next plain record is not sent,
	// the next arm is.
	c.send(map[string]any{"op": "unsubscribe", "subscriptionIds": []int{7}})
	// A request the server must answer proves the unsubscribe was read.
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{}})
	if st := c.expectOp("status"); st.text["level"] != float64(levelError) {
		t.Errorf("status %s, want an error for an unsupported operation", st.raw)
	}
	mustRecord(t, s, plain(10, 0))
	mustRecord(t, s, arm(11))
	g = c.next()
	if !g.bin || byID[g.sub] != "/p/1/arm" {
		t.Fatalf("got %s (%s), want the arm record: the plain one was unsubscribed", g.describe(), byID[g.sub])
	}
}

// subscribeAll reads the handshake and subscribes to the first channel
// advertised after it, returning its id; the record must come next.
func subscribeFirst(t *testing.T, c *tclient, s *Server, r *dissect.Record) {
	t.Helper()
	c.expectOp("serverInfo")
	c.expectOp("advertise")
	mustRecord(t, s, r)
	ch := channels(t, c.expectOp("advertise"))[0]
	c.send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": 1, "channelId": ch.ID}}})
}

var missedRE = regexp.MustCompile(`missed (\d+) messages \((\d+) in all\)`)

// tally is what a client read until the server closed: data messages,
// in order, and the misses its status messages told of.
type tally struct {
	data, missed, allMissed int
	err                     error
}

func (tc *tclient) drain() (t tally) {
	last := -1
	for {
		g, err := tc.read()
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.err = fmt.Errorf("%v, want a normal closure", err)
			}
			return t
		}
		if g.bin {
			t.data++
			var rec struct{ Fields struct{ N int } }
			if err := json.Unmarshal(g.data, &rec); err != nil {
				t.err = err
				return t
			}
			if rec.Fields.N <= last {
				t.err = fmt.Errorf("record %d after %d: out of order", rec.Fields.N, last)
				return t
			}
			last = rec.Fields.N
			continue
		}
		m := missedRE.FindStringSubmatch(fmt.Sprint(g.text["message"]))
		if g.text["op"] != "status" || g.text["level"] != float64(levelWarning) || m == nil {
			t.err = fmt.Errorf("got %s, want a warning with a count", g.raw)
			return t
		}
		k, _ := strconv.Atoi(m[1])
		t.missed += k
		t.allMissed, _ = strconv.Atoi(m[2])
	}
}

// A client that does not read loses messages once its queue is full,
// and only with a count: what it got and what it was told it missed add
// up to what was sent, in order, and the summary's notes say the same;
// so for a client that reads all along. Record never waited for either
// (it returned while the slow one read nothing).
func TestSlowClientMissesCounted(t *testing.T) {
	before := runtime.NumGoroutine()
	s := listen(t, Options{Queue: 16})
	slow, fast := dial(t, s), dial(t, s)
	// fast's handshake read: it has joined before the first record.
	fast.expectOp("serverInfo")
	fast.expectOp("advertise")
	subscribeFirst(t, slow, s, plain(0, 100))
	// fast subscribes too: the advertisement, then the first record
	// waiting for its subscription.
	fch := channels(t, fast.expectOp("advertise"))[0]
	fast.send(map[string]any{"op": "subscribe", "subscriptions": []map[string]any{{"id": 5, "channelId": fch.ID}}})
	// Each client's first message proves its subscription is in.
	for _, c := range []*tclient{slow, fast} {
		if g := c.next(); !g.bin {
			t.Fatalf("got %s, want the first record", g.describe())
		}
	}
	fastGot := make(chan tally, 1)
	go func() { fastGot <- fast.drain() }()
	// 2000 records of 20 kB: 40 MB, more than the socket's buffers and
	// the queue hold while the slow client reads nothing.
	const n = 2000
	for i := 1; i <= n; i++ {
		mustRecord(t, s, plain(i, 20000))
	}
	// Close lets the slow client have what its queue holds: it reads
	// from now on.
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	st := slow.drain()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	ft := <-fastGot
	for _, c := range []struct {
		name string
		t    tally
	}{{"slow", st}, {"fast", ft}} {
		if c.t.err != nil {
			t.Errorf("%s client: %v", c.name, c.t.err)
		}
		if c.t.data+c.t.missed != n || c.t.allMissed != c.t.missed {
			t.Errorf("%s client: %d messages and %d missed (%d in all said), want %d together", c.name, c.t.data, c.t.missed, c.t.allMissed, n)
		}
	}
	if st.missed == 0 {
		t.Fatalf("the slow client got %d messages of %d and missed none: it was not slow enough for the test", st.data, n)
	}
	notes := strings.Join(s.Notes(), "\n")
	if !strings.Contains(notes, fmt.Sprintf("%d messages sent, %d missed", st.data+1, st.missed)) {
		t.Errorf("notes:\n%s\nwant the slow client's %d sent, %d missed", notes, st.data+1, st.missed)
	}
	slow.c.CloseNow()
	fast.c.CloseNow()
	leakcheck.Settled(t, before, "Close")
}

// At most maxClients are served at once: one more is refused with 503
// (Service Unavailable), and taken once another has left.
func TestTooManyClients(t *testing.T) {
	s := listen(t, Options{})
	defer s.Close()
	var cs []*tclient
	for range maxClients {
		c := dial(t, s)
		c.expectOp("serverInfo") // it has joined
		cs = append(cs, c)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_, resp, err := websocket.Dial(ctx, s.URL(), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err == nil || resp == nil || resp.StatusCode != 503 {
		t.Fatalf("client %d: %v (%v), want refused with 503", maxClients+1, err, resp)
	}
	cs[0].c.CloseNow()
	for s.Clients() == maxClients { // until the server has seen it go
		time.Sleep(time.Millisecond)
	}
	c := dial(t, s)
	c.expectOp("serverInfo")
}

// A client that joins a live capture before its first record is told the
// live clock (Options.Now) before any channel, so that a viewer's start
// time is capture time, not 0 (Foxglove Studio 1.48 takes it from its
// first published state, which the advertisement sets off); one that
// joins a pipe before its first record is told no time until it has one.
func TestClockBeforeChannels(t *testing.T) {
	at := time.Date(2026, 12, 2, 0, 30, 0, 123456789, time.UTC)
	s := listen(t, Options{Now: func() time.Time { return at }})
	defer s.Close()
	c := dial(t, s)
	c.expectOp("serverInfo")
	c.expectOp("advertise")
	if len(c.clocks) != 1 || c.clocks[0] != uint64(at.UnixNano()) {
		t.Errorf("clocks before the channels %v, want [%d]", c.clocks, at.UnixNano())
	}
	pipe := listen(t, Options{})
	defer pipe.Close()
	p := dial(t, pipe)
	p.expectOp("serverInfo")
	p.expectOp("advertise")
	if len(p.clocks) != 0 {
		t.Errorf("a pipe's clock %v before any record, want none", p.clocks)
	}
}
