// Package foxws serves records live to Foxglove and Lichtblick over the
// Foxglove WebSocket protocol (subprotocol foxglove.websocket.v1,
// https://github.com/foxglove/ws-protocol/blob/main/docs/spec.md), with
// the topics, schemas and messages of -o mcap: an [mcapout.Writer] made
// with [mcapout.NewEmitter] makes them, and the server advertises each
// channel to every client and sends each message to the clients
// subscribed to its channel. The WebSocket is github.com/coder/websocket.
//
// # Clients and queues
//
// Each client has a queue of at most Options.Queue messages
// (Options.QueueBytes bytes) and a goroutine that sends it. A record is
// put on the queue of each client that wants its channel and the
// capture goes on: a client whose queue is full misses the message,
// which is counted, told to the client in a status message (level
// warning) and returned by [Server.Notes] for the run's summary. With
// Options.Block (a file played back as fast as the clients take it) the
// server waits for room instead, and no client misses anything. The
// kernel's send buffer of each connection is kept small (sendBuffer), so
// that a slow client's backlog is in its queue, bounded and counted.
//
// Channels appear as their first record comes (a topic names its stream
// and sender, which no declaration knows beforehand). A client is told
// of the channels that exist when it connects and of each new one as it
// appears; the messages of a channel it has just been told of wait, in
// order with the rest of its queue, until it subscribes or
// Options.Grace has passed since it answered a ping sent after the
// advertisement (so a busy client is given the time it needs), so a client
// that subscribes to what it is told of gets every message, the first
// included. Advertisements and status messages are never dropped.
//
// # Files
//
// With Options.Playback (records from a file), the first record waits
// for a client; the clock of the playback starts when a client has
// subscribed to a channel (or Options.Start after the first client
// connected), and each record is then sent at its capture time scaled by
// 1/Options.Speed. Speed 0 sends as fast as the clients take them.
package foxws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/foxglove/mcap/go/mcap"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output/mcapout"
)

// maxClients bounds the clients connected at once (each may hold a
// queue of Options.QueueBytes).
const maxClients = 64

// Subprotocol is the WebSocket subprotocol spoken: Foxglove WebSocket v1.
const Subprotocol = "foxglove.websocket.v1"

// DefaultAddr is where the server listens when Options.Addr is empty:
// loopback only.
const DefaultAddr = "127.0.0.1:8765"

// Options configures a [Server]. The zero value serves on DefaultAddr.
type Options struct {
	// Addr is the HOST:PORT listened on (DefaultAddr when empty; port 0
	// picks a free one, see Server.Addr).
	Addr string
	// Name is the server's name in its serverInfo ("dissect v1.2.3").
	Name string
	// Decl and MaxTopics are those of mcapout.Options.
	Decl      func(*dissect.Record) *dissect.TypeDecl
	MaxTopics int
	// Queue and QueueBytes bound each client's queue of messages
	// (default 8192 messages, 16 MiB).
	Queue, QueueBytes int
	// Block makes a full queue wait for room instead of dropping the
	// message: for files, where waiting loses nothing upstream.
	Block bool
	// Playback paces the records as a file's (see the package's doc):
	// the first waits for a client, then Speed scales capture time.
	Playback bool
	// Speed is the playback's speed (1 is capture time); 0 or less, as
	// fast as the clients take the messages.
	Speed float64
	// Grace is how long the messages of a channel just advertised to a
	// client wait for its subscription (default 1 s).
	Grace time.Duration
	// Start is how long after the first client connects a playback
	// starts without a subscription (default 2 s).
	Start time.Duration
}

// Server is a Foxglove WebSocket server of records. Record is called
// from one goroutine (a dissect.Sink); the clients are served on their
// own goroutines.
type Server struct {
	o    Options
	ctx  context.Context
	ln   net.Listener
	hs   *http.Server
	w    *mcapout.Writer
	em   emitter
	wg   sync.WaitGroup // Serve and the clients' handlers
	sess string

	mu         sync.Mutex
	closed     bool
	clients    []*client
	nclients   atomic.Int32   // len(clients), read without the lock
	stats      []*clientStats // every client served, for Notes
	schemas    map[uint16]*mcap.Schema
	adverts    []advert
	connected  chan struct{} // closed when the first client connects
	subscribed chan struct{} // closed at the first subscription
	firstConn  bool
	firstSub   bool

	// Playback's clock (Record's goroutine only).
	waited       bool
	clockSet     bool
	t0           time.Time
	wall0        time.Time
	recordClosed bool
}

// sendBuffer is the kernel's send buffer of a client's connection: small,
// so that what a slow client has not taken waits in its queue, where it
// is bounded and counted, rather than in the kernel (where the automatic
// sizing would hold megabytes, seconds behind the capture).
const sendBuffer = 256 << 10

type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(sendBuffer)
	}
	return c, err
}

// An advert is one channel as advertised.
type advert struct {
	id   uint16
	json []byte // the channel's entry in an advertise message
}

// Listen starts serving on o.Addr. ctx ends the waits of a playback (for
// a client, for the next record's time, for room in a queue); Close ends
// the server.
func Listen(ctx context.Context, o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Queue <= 0 {
		o.Queue = 8192
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 16 << 20
	}
	if o.Grace <= 0 {
		o.Grace = time.Second
	}
	if o.Start <= 0 {
		o.Start = 2 * time.Second
	}
	if o.Speed < 0 {
		o.Speed = 0
	}
	tl, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("-o foxglove: listening on %s: %w", o.Addr, err)
	}
	ln := smallSendBuffers{tl}
	s := &Server{
		o: o, ctx: ctx, ln: ln, schemas: map[uint16]*mcap.Schema{},
		connected: make(chan struct{}), subscribed: make(chan struct{}),
		sess: strconv.FormatInt(time.Now().UnixNano(), 10),
	}
	s.em.s = s
	s.w = mcapout.NewEmitter(&s.em, mcapout.Options{Decl: o.Decl, MaxTopics: o.MaxTopics})
	s.hs = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.hs.Serve(ln) // ends with Close
	}()
	return s, nil
}

// Addr is the address listened on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the ws:// URL to give Foxglove.
func (s *Server) URL() string { return "ws://" + s.ln.Addr().String() }

// Record sends r on its record topic and derived topics (those of -o
// mcap) to the clients subscribed to them.
func (s *Server) Record(r *dissect.Record) error {
	if s.recordClosed {
		return errors.New("foxglove: record after Close")
	}
	if s.o.Playback {
		s.pace(r)
	}
	if err := s.w.Record(r); err != nil {
		return err
	}
	if s.o.Playback && !s.clockSet {
		// The first record's channels are advertised: wait for a
		// subscription, then start the clock.
		s.clockSet = true
		t := time.NewTimer(s.o.Start)
		select {
		case <-s.subscribed:
		case <-t.C:
		case <-s.ctx.Done():
		}
		t.Stop()
		s.t0, s.wall0 = r.Time, time.Now()
	}
	return nil
}

// pace waits, in a playback, for a client before the first record and
// for the capture time of the others.
func (s *Server) pace(r *dissect.Record) {
	if !s.waited {
		s.waited = true
		select {
		case <-s.connected:
		case <-s.ctx.Done():
		}
	}
	if !s.clockSet || s.o.Speed <= 0 || s.ctx.Err() != nil {
		return
	}
	at := s.wall0.Add(time.Duration(float64(r.Time.Sub(s.t0)) / s.o.Speed))
	d := time.Until(at)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctx.Done():
	}
}

// Flush sends nothing: every message is on the clients' queues already.
func (s *Server) Flush() error { return nil }

// Clients is the number of clients connected now.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// Close stops accepting clients, lets each send what its queue holds
// (for at most 2 s), closes the connections and ends every goroutine the
// server started.
func (s *Server) Close() error {
	s.recordClosed = true
	werr := s.w.Close()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return werr
	}
	s.closed = true
	clients := append([]*client(nil), s.clients...)
	s.mu.Unlock()
	herr := s.hs.Close() // the listener; the WebSockets are the clients'
	for _, c := range clients {
		c.finish()
	}
	deadline := time.NewTimer(2 * time.Second)
	for _, c := range clients {
		select {
		case <-c.done:
		case <-deadline.C:
		}
	}
	deadline.Stop()
	for _, c := range clients {
		c.abort()
	}
	s.wg.Wait()
	if errors.Is(herr, http.ErrServerClosed) {
		herr = nil
	}
	return errors.Join(werr, herr)
}

// serveHTTP accepts a WebSocket of the Foxglove subprotocol and serves
// it until it ends.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "dissect: the capture has ended", http.StatusServiceUnavailable)
		return
	}
	if len(s.clients) >= maxClients {
		s.mu.Unlock()
		http.Error(w, fmt.Sprintf("dissect: %d clients are connected, the most it serves", maxClients), http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	// Foxglove's web app connects from its own origin: any origin is
	// accepted, as Foxglove's own servers do (hence loopback by default).
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}, InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered the request
	}
	if conn.Subprotocol() != Subprotocol {
		conn.Close(websocket.StatusPolicyViolation, "dissect speaks "+Subprotocol+" only")
		return
	}
	conn.SetReadLimit(1 << 20)
	c := newClient(s, conn, r.RemoteAddr)
	if !s.join(c) {
		conn.Close(websocket.StatusGoingAway, "the capture has ended")
		return
	}
	go c.send()
	c.receive()
	s.leave(c)
}

// join tells c of the server and of every channel, and adds it to the
// clients; false when the server is closing.
func (s *Server) join(c *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	info, _ := json.Marshal(map[string]any{
		"op": "serverInfo", "name": s.o.Name, "capabilities": []string{},
		"supportedEncodings": []string{}, "metadata": map[string]string{}, "sessionId": s.sess,
	})
	c.control(info, nil)
	c.control(advertise(s.adverts))
	s.clients = append(s.clients, c)
	s.nclients.Store(int32(len(s.clients)))
	s.stats = append(s.stats, &c.st)
	if !s.firstConn {
		s.firstConn = true
		close(s.connected)
	}
	return true
}

// leave removes c from the clients once its connection has ended.
func (s *Server) leave(c *client) {
	c.abort()
	<-c.done
	s.mu.Lock()
	defer s.mu.Unlock()
	// A new slice: publish reads the old one without the lock.
	rest := make([]*client, 0, len(s.clients))
	for _, x := range s.clients {
		if x != c {
			rest = append(rest, x)
		}
	}
	s.clients = rest
	s.nclients.Store(int32(len(rest)))
}

// gotSubscription notes that a client subscribed (a playback starts).
func (s *Server) gotSubscription() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.firstSub {
		s.firstSub = true
		close(s.subscribed)
	}
}

// advertise returns the advertise message of channels, and their ids.
func advertise(as []advert) ([]byte, []uint16) {
	b := []byte(`{"op":"advertise","channels":[`)
	ids := make([]uint16, len(as))
	for i, a := range as {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, a.json...)
		ids[i] = a.id
	}
	return append(b, "]}"...), ids
}

// Notes are the lines of the run's summary about the clients: what each
// was sent and missed.
func (s *Server) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var notes []string
	var missed uint64
	for i, st := range s.stats {
		st.mu.Lock()
		sent, drop := st.sent, st.missed
		st.mu.Unlock()
		missed += drop
		if i < 20 {
			line := fmt.Sprintf("-o foxglove: client %s: %d messages sent", st.addr, sent)
			if drop > 0 {
				line += fmt.Sprintf(", %d missed (its queue was full; the capture was not slowed)", drop)
			}
			notes = append(notes, line)
		}
	}
	if n := len(s.stats); n > 20 {
		notes = append(notes, fmt.Sprintf("-o foxglove: %d clients in all, %d messages missed", n, missed))
	}
	if len(s.stats) == 0 {
		notes = append(notes, "-o foxglove: no client connected")
	}
	return notes
}

// emitter is the server's mcapout.Emitter: each channel is advertised,
// each message offered to the clients.
type emitter struct {
	s       *Server
	scratch []byte
	ch      uint16
	t       uint64
}

func (e *emitter) Schema(sc *mcap.Schema) {
	e.s.mu.Lock()
	e.s.schemas[sc.ID] = sc
	e.s.mu.Unlock()
}

func (e *emitter) Channel(c *mcap.Channel) {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.schemas[c.SchemaID]
	entry := struct {
		ID             uint16 `json:"id"`
		Topic          string `json:"topic"`
		Encoding       string `json:"encoding"`
		SchemaName     string `json:"schemaName"`
		Schema         string `json:"schema"`
		SchemaEncoding string `json:"schemaEncoding"`
	}{c.ID, c.Topic, c.MessageEncoding, sc.Name, string(sc.Data), sc.Encoding}
	j, _ := json.Marshal(entry)
	a := advert{id: c.ID, json: j}
	s.adverts = append(s.adverts, a)
	msg, ids := advertise([]advert{a})
	for _, cl := range s.clients {
		cl.control(msg, ids)
	}
}

func (e *emitter) Begin(ch uint16, _ uint32, t uint64) []byte {
	e.ch, e.t = ch, t
	return e.scratch[:0]
}

func (e *emitter) End(b []byte) {
	e.scratch = b
	if e.s.nclients.Load() == 0 {
		return // no client: no copy
	}
	e.s.publish(&message{ch: e.ch, t: e.t, data: append([]byte(nil), b...)})
}

// publish offers m to every client.
func (s *Server) publish(m *message) {
	s.mu.Lock()
	clients := s.clients // never changed in place (join appends, leave copies)
	s.mu.Unlock()
	for _, c := range clients {
		c.offer(m, s.o.Block)
	}
}
