// Package foxws serves records live to Foxglove and Lichtblick over the
// Foxglove WebSocket protocol (subprotocols foxglove.websocket.v1 and
// foxglove.sdk.v1, https://github.com/foxglove/ws-protocol/blob/main/docs/spec.md),
// with the topics, schemas and messages of -o mcap: an [mcapout.Writer]
// made with [mcapout.NewEmitter] makes them, and the server advertises
// each channel to every client and sends each message to the clients
// subscribed to its channel. The WebSocket is github.com/coder/websocket.
//
// # Time
//
// The server declares the capability "time" and sends each client a Time
// message before a message of a later capture time, so a viewer's clock,
// and the receive time it gives each message, is the capture time, for a
// file played at any speed as for a live capture. A message's log time
// (Message Data's timestamp) is its capture time too.
//
// # The run's log
//
// Every message goes into one log that all clients read, each at its own
// place (its cursor): a client's queue is its part of the log, and the
// log's cost (the messages' JSON and msgOverhead each) is bounded by
// Options.Budget for all clients together.
//
// A file (Options.Playback) is played as by a player, to each client on
// its own: the log keeps the file's messages, and a client's playback
// starts from the file's start once it has subscribed (Options.Settle
// later, so that its first subscriptions all count), at
// Options.Speed times capture time (0: as fast as it takes them). A
// client that subscribes to a topic whose messages its playback has
// passed is played the file again from the start: its clock goes back
// to the first message's time (Foxglove and Lichtblick take that as a
// seek and clear their panels), and the messages up to where it was are
// sent as fast as it takes them, then in time again; so every panel gets
// every message of its topic, in capture order. When the file's messages
// cost more than the budget, the oldest are dropped once no playing
// client needs them (reading waits for the slowest); a client that
// starts later misses them, counted.
//
// A live capture (or a pipe) sends each message as it comes: a client
// starts at the log's end when it connects, and the log keeps only what a
// client has not sent. A client that falls more than Options.Queue
// messages or Options.QueueBytes behind misses the oldest: the capture
// is never slowed. The messages of a channel just advertised to a client
// wait for its subscription until Options.Grace after it answered a ping
// sent after the advertisement, so a client that subscribes to what it
// is told of gets every message from the first.
//
// # Latched context
//
// The last message of each context channel (the records of a type
// declared Context or with a Polyline, and their pictures: VRPN's
// descriptions, the Deltarobot's curve) and the last transform to each
// frame on /tf are kept, and sent at once to a client that subscribes
// after they went by (live, or dropped from a file's log).
//
// # Losses
//
// Every message a client never gets of a channel it subscribed to (it
// fell behind, subscribed late to a live capture, or the file's log had
// dropped it) is counted per client and channel, told to the client in a
// status message (level warning) and returned by [Server.Notes] for the
// run's summary.
//
// # Safety
//
// See guard.go: the origins and hosts accepted, the bounds on
// connections before and after the upgrade, and what closes a client.
package foxws

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output/mcapout"
)

// maxClients bounds the clients connected at once.
const maxClients = 64

// Subprotocols are the WebSocket subprotocols spoken, the one chosen
// first when a client offers both: Foxglove WebSocket v1 and its new name
// in the Foxglove SDK (the same messages for what dissect serves).
var Subprotocols = []string{"foxglove.websocket.v1", "foxglove.sdk.v1"}

// Subprotocol is the first of Subprotocols.
const Subprotocol = "foxglove.websocket.v1"

// DefaultAddr is where the server listens when Options.Addr is empty:
// loopback only.
const DefaultAddr = "127.0.0.1:8765"

// DefaultBudget is the default Options.Budget: the run's log for every
// client together, within the 256 MB a run stays under
// (docs/performance-24-34.md).
const DefaultBudget = 64 << 20

// Options configures a [Server]. The zero value serves on DefaultAddr.
type Options struct {
	// Addr is the HOST:PORT listened on (DefaultAddr when empty; port 0
	// picks a free one, see Server.Addr).
	Addr string
	// Name is the server's name in its serverInfo ("dissect v1.2.3").
	Name string
	// Decl, MaxTopics and Encoding are those of mcapout.Options: the
	// channels are protobuf unless Encoding is mcapout.EncodingJSON.
	Decl      func(*dissect.Record) *dissect.TypeDecl
	MaxTopics int
	Encoding  string
	// Budget bounds the cost of the run's log, all clients' queues
	// together (default DefaultBudget).
	Budget int
	// Queue and QueueBytes bound how far a client of a live capture may
	// fall behind (default 8192 messages, 16 MiB).
	Queue, QueueBytes int
	// Playback plays the records as a file's to each client (see the
	// package's doc) at Speed times capture time (0: as fast as the
	// client takes them).
	Playback bool
	Speed    float64
	// Now is the clock of a live capture before its first record (the
	// real-time clock the kernel stamps packets with), told to a client
	// that joins before any record so that its viewer's clock starts at
	// capture time, not at 0; nil (a pipe, whose records may be of any
	// time, and a file) leaves the clock untold until the first record.
	Now func() time.Time
	// Settle is how long after its first subscription a client's
	// playback starts (default 300 ms).
	Settle time.Duration
	// Grace is how long the messages of a channel just advertised to a
	// client of a live capture wait for its subscription (default 1 s).
	Grace time.Duration
	// AllowOrigins are patterns of the Origin headers accepted beside
	// those of guard.go (path.Match patterns over the whole origin,
	// "https://*.example.com").
	AllowOrigins []string
	// Stall is how long a client may take none of what is sent, or not
	// answer a ping, before it is closed (default 30 s); Idle how long a
	// client that has not subscribed keeps its place while the server is
	// full (default 5 s).
	Stall, Idle time.Duration
}

// Server is a Foxglove WebSocket server of records. Record is called
// from one goroutine (a dissect.Sink); the clients are served on their
// own goroutines.
type Server struct {
	o       Options
	ctx     context.Context
	ln      net.Listener
	hs      *http.Server
	w       *mcapout.Writer
	em      emitter
	wg      sync.WaitGroup // Serve, the clients' handlers, the watchdog
	sess    string
	loop    bool          // listening on loopback: Host must be loopback
	pending pendingConns  // connections before their upgrade
	room    chan struct{} // a playing client moved on (a full log may drop)
	stop    chan struct{} // closed by Close

	mu         sync.Mutex
	closed     bool
	log        runLog
	clients    []*client
	slots      int          // clients joined or joining (maxClients)
	nclients   atomic.Int32 // len(clients), read without the lock
	gone       goneClients  // the summary of the clients that have left
	topics     map[uint16]string
	schemas    map[uint16]*mcap.Schema
	adverts    []advert
	advAll     []byte   // the advertise message of every channel, built once
	advIDs     []uint16 // its channels
	waitRoom   bool     // Record waits for room
	played     bool     // a client has started playing the file
	tfCh       uint16
	hasTF      bool
	recordDone bool
}

// An advert is one channel as advertised.
type advert struct {
	id   uint16
	json []byte // the channel's entry in an advertise message
}

// Listen starts serving on o.Addr. ctx ends the waits of a file's reading
// for room in its log; Close ends the server.
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
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.Grace <= 0 {
		o.Grace = time.Second
	}
	if o.Settle <= 0 {
		o.Settle = 300 * time.Millisecond
	}
	if o.Stall <= 0 {
		o.Stall = 30 * time.Second
	}
	if o.Idle <= 0 {
		o.Idle = 5 * time.Second
	}
	if o.Speed < 0 {
		o.Speed = 0
	}
	for _, p := range o.AllowOrigins {
		if err := checkPattern(p); err != nil {
			return nil, err
		}
	}
	tl, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("-o foxglove: listening on %s: %w", o.Addr, err)
	}
	s := &Server{
		o: o, ctx: ctx, ln: smallSendBuffers{tl}, schemas: map[uint16]*mcap.Schema{}, topics: map[uint16]string{},
		log: newRunLog(), room: make(chan struct{}, 1), stop: make(chan struct{}),
		sess: strconv.FormatInt(time.Now().UnixNano(), 10),
		loop: isLoopback(tl.Addr()),
	}
	s.em.s = s
	s.w = mcapout.NewEmitter(&s.em, mcapout.Options{Decl: o.Decl, MaxTopics: o.MaxTopics, Encoding: o.Encoding})
	s.hs = &http.Server{
		Handler: http.HandlerFunc(s.serveHTTP), ConnState: s.pending.track,
		ReadHeaderTimeout: headerTimeout, MaxHeaderBytes: maxHeaderBytes,
	}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		_ = s.hs.Serve(s.ln) // ends with Close
	}()
	go s.watchdog()
	return s, nil
}

// Addr is the address listened on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the ws:// URL to give Foxglove: on an address of every
// interface, that of loopback (the URL to open on this machine).
func (s *Server) URL() string {
	a, ok := s.ln.Addr().(*net.TCPAddr)
	if !ok {
		return "ws://" + s.ln.Addr().String()
	}
	ip := a.IP
	if ip.IsUnspecified() { // Go listens on both IPv4 and IPv6 then
		ip = net.IPv4(127, 0, 0, 1)
	}
	return "ws://" + net.JoinHostPort(ip.String(), strconv.Itoa(a.Port))
}

// Record sends r on its record topic and derived topics (those of -o
// mcap) to the clients subscribed to them.
func (s *Server) Record(r *dissect.Record) error {
	if s.recordDone {
		return errors.New("foxglove: record after Close")
	}
	s.em.latch = false
	if s.o.Decl != nil {
		if d := s.o.Decl(r); d != nil {
			s.em.latch = d.Context || d.Polyline != ""
		}
	}
	return s.w.Record(r)
}

// Flush sends nothing: every message is in the log already.
func (s *Server) Flush() error { return nil }

// Clients is the number of clients connected now.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// Close stops accepting clients, lets each send what it has still to
// send (a file's playback to its end, as fast as it takes it; for at
// most 2 s), closes the connections and ends every goroutine the server
// started.
func (s *Server) Close() error {
	s.recordDone = true
	werr := s.w.Close()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return werr
	}
	s.closed = true
	close(s.stop)
	clients := append([]*client(nil), s.clients...)
	for _, c := range clients {
		c.finishing = true
		signal(c.wake)
	}
	s.mu.Unlock()
	herr := s.hs.Close() // the listener and the connections not upgraded
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

// serverInfo is the serverInfo message.
func (s *Server) serverInfo() []byte {
	info, _ := json.Marshal(map[string]any{
		"op": "serverInfo", "name": s.o.Name, "capabilities": []string{"time"},
		"supportedEncodings": []string{}, "metadata": map[string]string{}, "sessionId": s.sess,
	})
	return info
}

// advertiseAll returns the advertise message of every channel, built
// once for every client that joins until a channel is added. s.mu is
// held.
func (s *Server) advertiseAll() ([]byte, []uint16) {
	if s.advAll == nil {
		s.advAll, s.advIDs = advertise(s.adverts)
	}
	return s.advAll, s.advIDs
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

// schemaText is a schema as advertise gives it: a JSON Schema's text, a
// protobuf FileDescriptorSet's bytes in base64 (the protocol's rule for
// binary schema encodings).
func schemaText(sc *mcap.Schema) string {
	if sc.Encoding == "protobuf" {
		return base64.StdEncoding.EncodeToString(sc.Data)
	}
	return string(sc.Data)
}

// emitter is the server's mcapout.Emitter: each channel is advertised,
// each message put in the log.
type emitter struct {
	s       *Server
	scratch []byte
	ch      uint16
	t       uint64
	latch   bool // the record being written is context
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
	}{c.ID, c.Topic, c.MessageEncoding, sc.Name, schemaText(sc), sc.Encoding}
	j, _ := json.Marshal(entry)
	a := advert{id: c.ID, json: j}
	s.adverts = append(s.adverts, a)
	s.advAll, s.advIDs = nil, nil
	s.topics[c.ID] = c.Topic
	if c.Topic == "/tf" && sc.Name == "foxglove.FrameTransforms" {
		s.tfCh, s.hasTF = c.ID, true
	}
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
	e.s.add(e.ch, e.t, b, e.latch)
}

// add puts a message in the log (a copy of b), keeps it as latched
// context, and lets the clients take it.
func (s *Server) add(ch uint16, t uint64, b []byte, latch bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.log
	seq := l.note(ch, t)
	tf := s.hasTF && ch == s.tfCh
	if tf {
		l.tf.add(b, t)
	}
	latch = latch && !tf && s.topics[ch] != "/dissect/events"
	keep := s.o.Playback || len(s.clients) > 0
	if !keep && !latch {
		return // no client: no copy
	}
	m := &message{seq: seq, t: t, ch: ch, data: bytes.Clone(b)}
	if latch {
		l.latched[ch] = m
	}
	if !keep {
		return
	}
	l.push(m)
	if s.o.Playback {
		s.trimFile()
	} else {
		s.trimLive()
	}
	for _, c := range s.clients {
		if c.waiting {
			c.waiting = false
			signal(c.wake)
		}
	}
}

// trimLive makes each client that has fallen more than its queue behind
// miss its oldest messages, and drops what every client has sent (or
// what is over the budget). s.mu is held.
func (s *Server) trimLive() {
	l := &s.log
	now := time.Now()
	low := l.next
	for _, c := range s.clients {
		for {
			n, b := l.backlog(c.cursor)
			if n <= uint64(s.o.Queue) && b <= uint64(s.o.QueueBytes) {
				break
			}
			c.skip(l.at(c.cursor), whyQueue, now)
		}
		low = min(low, c.cursor)
	}
	for l.start < len(l.msgs) && (l.base() < low || l.bytes > uint64(s.o.Budget)) {
		m := l.evict()
		for _, c := range s.clients {
			if c.cursor == m.seq {
				c.skip(m, whyQueue, now)
			}
		}
	}
}

// trimFile drops a file's oldest messages while the log is over its
// budget, once no playing client has still to send them, nor one about
// to start, and one has started: Record waits for them (or for the run's
// end, when they are dropped all the same).
// s.mu is held; it is let go while waiting.
func (s *Server) trimFile() {
	l := &s.log
	for l.bytes > uint64(s.o.Budget) && l.start < len(l.msgs) {
		oldest := l.msgs[l.start].seq
		held := false
		if s.ctx.Err() == nil && !s.closed {
			held = !s.played // the file's start waits for a first client
			for _, c := range s.clients {
				if c.started && c.cursor <= oldest || !c.started && !c.startAt.IsZero() {
					held = true
					break
				}
			}
		}
		if held {
			s.waitRoom = true
			s.mu.Unlock()
			t := time.NewTimer(time.Second)
			select {
			case <-s.room:
			case <-s.ctx.Done():
			case <-s.stop:
			case <-t.C:
			}
			t.Stop()
			s.mu.Lock()
			s.waitRoom = false
			continue
		}
		m := l.evict()
		now := time.Now()
		for _, c := range s.clients {
			if c.started && c.cursor == m.seq {
				c.skip(m, whyBudget, now)
			}
		}
	}
}
