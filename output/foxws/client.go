package foxws

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// A ctrl is a text message that is never dropped: serverInfo, advertise,
// status. chans are the channels an advertise tells of.
type ctrl struct {
	data   []byte
	chans  []uint16
	answer bool // a status answering a request
	bin    bool // a binary message (Time)
}

// A client is one WebSocket connection: receive reads its requests in
// the handler's goroutine, send writes what it has to send in its own.
// What is not set at newClient is guarded by the Server's mu.
type client struct {
	s       *Server
	conn    *websocket.Conn
	addr    string
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{} // closed when send has returned
	left    chan struct{} // closed when leave has given back its place
	wake    chan struct{} // something to send, or a subscription changed
	writing atomic.Int64  // when the write under way began (unix ns); 0: none

	joined     time.Time
	ctrls      []ctrl
	answers    int                  // answers in ctrls
	pri        []*message           // latched context to send before the log
	subs       map[uint16]uint32    // channel → subscription id
	bySub      map[uint32]uint16    // subscription id → channel
	advertised map[uint16]time.Time // when the channel's advertisement was read; zero: not yet
	subscribed bool                 // it has subscribed once
	cursor     uint64               // the seq of the next message of the log to send
	clock      uint64               // the time last sent in a Time message
	clockAt    time.Time            // ... when, if not before a message
	startAt    time.Time            // a file: when its playback starts (zero: no subscription yet)
	started    bool                 // a file: its playback has started
	wall0      time.Time            // ... when
	sent       uint64
	miss       misses
	finishing  bool   // the server closes: send what is left, then close
	gone       bool   // the connection has ended
	waiting    bool   // send waits for a message
	why        string // why the server closed it, for the summary
}

func newClient(s *Server, conn *websocket.Conn, addr string) *client {
	ctx, cancel := context.WithCancel(context.Background())
	return &client{
		s: s, conn: conn, addr: addr, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), left: make(chan struct{}), wake: make(chan struct{}, 1),
		subs: map[uint16]uint32{}, bySub: map[uint32]uint16{}, advertised: map[uint16]time.Time{},
		miss: misses{byCh: map[uint16]*missed{}},
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// join tells c of the server, the time and every channel, and adds it to
// the clients; false when the server is closing.
func (s *Server) join(c *client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	c.joined = time.Now()
	c.control(s.serverInfo(), nil)
	// The clock before any channel: a viewer (Foxglove Studio 1.48) takes
	// its start time from the first state it publishes, which an
	// advertisement sets off; told no time by then, it starts at 0 (1970).
	if t, ok := s.joinClock(); ok {
		c.clock = t
		c.ctrls = append(c.ctrls, ctrl{data: timeMessage(t), bin: true})
	}
	c.control(s.advertiseAll())
	c.cursor = s.log.next
	if s.o.Playback {
		c.cursor = s.log.base()
	}
	s.clients = append(s.clients, c)
	s.nclients.Store(int32(len(s.clients)))
	return true
}

// joinClock is the time a joining client's clock starts at: a file's
// first record's, the latest record's of a live capture, or before any
// record of a live capture Options.Now; false when none is known yet.
func (s *Server) joinClock() (uint64, bool) {
	switch {
	case s.log.started && s.o.Playback:
		return s.log.t0, true
	case s.log.started:
		return s.log.last, true
	case s.o.Now != nil:
		return uint64(s.o.Now().UnixNano()), true
	}
	return 0, false
}

// leave removes c from the clients once its connection has ended, keeps
// its summary line and gives back its place.
func (s *Server) leave(c *client) {
	c.abort()
	<-c.done
	s.mu.Lock()
	defer s.mu.Unlock()
	// A new slice: nothing holds the old one past the lock, but a
	// client's memory must not stay reachable from it.
	rest := make([]*client, 0, len(s.clients))
	for _, x := range s.clients {
		if x != c {
			rest = append(rest, x)
		}
	}
	s.clients = rest
	s.nclients.Store(int32(len(rest)))
	s.gone.add(c.summary())
	s.slots--
	if !s.o.Playback {
		s.trimLive() // what only c had still to send
	}
	if s.waitRoom {
		signal(s.room)
	}
	close(c.left)
}

// control queues a text message that is never dropped; chans are the
// channels it advertises. s.mu is held.
func (c *client) control(data []byte, chans []uint16) {
	c.ctrls = append(c.ctrls, ctrl{data: data, chans: chans})
	for _, id := range chans {
		c.advertised[id] = time.Time{}
	}
	signal(c.wake)
}

// abort ends the connection at once.
func (c *client) abort() {
	c.s.mu.Lock()
	c.gone = true
	c.s.mu.Unlock()
	c.cancel()
	signal(c.wake)
}

// wants says whether a message of channel ch is one c should get: it is
// subscribed, or (live) the channel's advertisement is not read yet or
// was read less than Grace ago. s.mu is held.
func (c *client) wants(ch uint16, now time.Time) bool {
	if _, ok := c.subs[ch]; ok {
		return true
	}
	if c.s.o.Playback {
		return false
	}
	at, ok := c.advertised[ch]
	return ok && (at.IsZero() || now.Sub(at) < c.s.o.Grace)
}

// skip passes over the message at c's cursor, which c will not get:
// missed if c wants it. s.mu is held.
func (c *client) skip(m *message, why int, now time.Time) {
	c.cursor = m.seq + 1
	if c.wants(m.ch, now) {
		c.miss.add(c.s.topics[m.ch], m.ch, why, 1)
		signal(c.wake)
	}
}

// receive reads the client's requests until the connection ends.
func (c *client) receive() {
	for {
		typ, data, err := c.readRequest()
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			c.status(levelError, "dissect does not take messages from clients (no clientPublish)")
			continue
		}
		c.request(data)
	}
}

// readRequest reads the client's next message, at most maxRequest bytes.
// A longer one ends the connection with status 1009 (message too big)
// after the close handshake, which reads and drops the rest of it: the
// client then reads the status. Closed at once with its message unread,
// the connection would be reset, and a client still writing it would get
// the reset instead (the library's own read limit does that).
func (c *client) readRequest() (websocket.MessageType, []byte, error) {
	typ, r, err := c.conn.Reader(c.ctx)
	if err != nil {
		return typ, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, maxRequest+1))
	if err == nil && len(data) > maxRequest {
		err = fmt.Errorf("a request over %d bytes", maxRequest)
		c.conn.Close(websocket.StatusMessageTooBig, fmt.Sprintf("a request is at most %d bytes", maxRequest))
	}
	return typ, data, err
}

// Status levels of the protocol.
const (
	levelInfo    = 0
	levelWarning = 1
	levelError   = 2
)

// A subscription of a subscribe request.
type subscription struct {
	ID        *uint32 `json:"id"`
	ChannelID *uint16 `json:"channelId"`
}

// request handles one JSON request: subscribe, unsubscribe; other
// operations are answered with an error status quoting a few bytes.
func (c *client) request(data []byte) {
	var req struct {
		Op              string         `json:"op"`
		Subscriptions   []subscription `json:"subscriptions"`
		SubscriptionIDs []uint32       `json:"subscriptionIds"`
	}
	if err := json.Unmarshal(data, &req); err != nil {
		c.status(levelError, fmt.Sprintf("not a JSON request (%d bytes)", len(data)))
		return
	}
	switch req.Op {
	case "subscribe":
		if bad := c.subscribe(req.Subscriptions); len(bad) > 0 {
			msg := "subscribe: " + strings.Join(bad[:min(len(bad), 3)], "; ")
			if len(bad) > 3 {
				msg += fmt.Sprintf("; and %d more", len(bad)-3)
			}
			c.status(levelWarning, msg)
		}
	case "unsubscribe":
		c.s.mu.Lock()
		for _, id := range req.SubscriptionIDs {
			if ch, ok := c.bySub[id]; ok {
				delete(c.bySub, id)
				delete(c.subs, ch)
			}
		}
		c.s.mu.Unlock()
		signal(c.wake)
	default:
		c.status(levelError, fmt.Sprintf("operation %s is not supported by dissect (it serves channels to subscribe to)", brief(req.Op)))
	}
}

// subscribe adds subscriptions, and returns what is wrong with the
// others.
func (c *client) subscribe(subs []subscription) (bad []string) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for _, sub := range subs {
		switch {
		case sub.ID == nil || sub.ChannelID == nil:
			bad = append(bad, "a subscription without id or channelId")
			continue
		case c.taken(*sub.ID):
			bad = append(bad, fmt.Sprintf("subscription id %d is in use", *sub.ID))
			continue
		case !c.known(*sub.ChannelID):
			bad = append(bad, fmt.Sprintf("channel %d was not advertised", *sub.ChannelID))
			continue
		}
		ch := *sub.ChannelID
		old, again := c.subs[ch]
		if again {
			delete(c.bySub, old) // one subscription a channel: the new one
		}
		c.subs[ch] = *sub.ID
		c.bySub[*sub.ID] = ch
		c.subscribed = true
		if !again {
			c.caughtUp(ch, now)
		}
	}
	signal(c.wake)
	return bad
}

// caughtUp gives c what it needs of channel ch, just subscribed to: a
// file's playback starts (Settle from now), or starts again from the
// start when it has passed messages of ch; the latched context of ch
// that c would not get from the log is sent at once; what c can never
// get is counted. s.mu is held.
func (c *client) caughtUp(ch uint16, now time.Time) {
	s, l := c.s, &c.s.log
	topic := s.topics[ch]
	if s.o.Playback {
		if !c.started {
			if c.startAt.IsZero() {
				c.startAt = now.Add(s.o.Settle)
			}
			return // begin counts the rest
		}
		if first, ok := l.first[ch]; ok && first < c.cursor {
			c.cursor, c.clock = l.base(), 0 // again from the start
		}
		c.dropped(ch)
		return
	}
	// Live: the messages of ch before the cursor went by.
	before := l.count[ch]
	for seq := max(c.cursor, l.base()); seq < l.next; seq++ {
		if l.at(seq).ch == ch {
			before--
		}
	}
	if before == 0 {
		return
	}
	if s.hasTF && ch == s.tfCh {
		c.latch(l.tf.message(ch))
		before-- // the latest of every frame stands for them
	} else if m, ok := l.latched[ch]; ok && m.seq < c.cursor {
		c.latch(m)
		before--
	}
	if before > 0 {
		c.miss.add(topic, ch, whyLate, before)
	}
}

// dropped counts the messages of ch a file's log has dropped, which a
// playing client subscribed to ch never gets; the latched context among
// them is sent at once. s.mu is held.
func (c *client) dropped(ch uint16) {
	l := &c.s.log
	n := l.evicted[ch]
	if n == 0 {
		return
	}
	if c.s.hasTF && ch == c.s.tfCh {
		c.latch(l.tf.message(ch))
		n--
	} else if m, ok := l.latched[ch]; ok && m.seq < l.base() {
		c.latch(m)
		n--
	}
	if n > 0 {
		c.miss.add(c.s.topics[ch], ch, whyBudget, n)
	}
}

// latch queues latched context to send at once, in the place of what
// of its channel waits still (at most one a channel). s.mu is held.
func (c *client) latch(m *message) {
	for i, x := range c.pri {
		if x.ch == m.ch {
			c.pri[i] = m
			return
		}
	}
	c.pri = append(c.pri, m)
}

func (c *client) taken(id uint32) bool { _, ok := c.bySub[id]; return ok }

func (c *client) known(ch uint16) bool { _, ok := c.advertised[ch]; return ok }

// maxAnswers bounds the answers to a client's requests waiting to be
// sent (each a status of at most a few hundred bytes): a client that
// sends bad requests faster than it reads the answers is closed.
const maxAnswers = 16

// status queues a status message answering a request; past maxAnswers
// waiting, the client is closed.
func (c *client) status(level int, msg string) {
	b, _ := json.Marshal(map[string]any{"op": "status", "level": level, "message": "dissect: " + msg})
	c.s.mu.Lock()
	if c.answers >= maxAnswers {
		c.why = fmt.Sprintf("closed: it sent bad requests faster than it read the answers (%d waiting)", maxAnswers)
		c.s.mu.Unlock()
		c.abort()
		return
	}
	c.answers++
	c.ctrls = append(c.ctrls, ctrl{data: b, answer: true})
	c.s.mu.Unlock()
	signal(c.wake)
}
