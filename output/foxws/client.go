package foxws

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// A message is one message of a channel, shared by the clients' queues
// (never changed once made).
type message struct {
	ch   uint16
	t    uint64 // log time, nanoseconds since 1970
	data []byte // the JSON
}

// A ctrl is a text message that is never dropped: serverInfo, advertise,
// status. chans are the channels an advertise tells of.
type ctrl struct {
	data   []byte
	chans  []uint16
	answer bool // a status answering a request (status)
}

// clientStats are what the summary says of a client.
type clientStats struct {
	addr         string
	mu           sync.Mutex
	sent, missed uint64
}

// A client is one WebSocket connection: receive reads its requests in the
// handler's goroutine, send writes its queue in its own.
type client struct {
	s      *Server
	conn   *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when send has returned
	st     clientStats

	mu         sync.Mutex
	ctrls      []ctrl
	q          []*message // q[head:] is the queue
	head       int
	qbytes     int
	subs       map[uint16]uint32    // channel → subscription id
	bySub      map[uint32]uint16    // subscription id → channel
	advertised map[uint16]time.Time // when the channel's advertisement was sent; zero: not yet
	dropped    uint64               // messages missed (queue full)
	reported   uint64               // dropped as last told to the client
	lastStatus time.Time
	finishing  bool // the server closes: send what is queued, then close
	gone       bool // the connection has ended

	wake  chan struct{} // something to send, or a subscription changed
	space chan struct{} // room in q (Options.Block)
}

func newClient(s *Server, conn *websocket.Conn, addr string) *client {
	ctx, cancel := context.WithCancel(context.Background())
	return &client{
		s: s, conn: conn, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		st:   clientStats{addr: addr},
		subs: map[uint16]uint32{}, bySub: map[uint32]uint16{}, advertised: map[uint16]time.Time{},
		wake: make(chan struct{}, 1), space: make(chan struct{}, 1),
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// control queues a text message that is never dropped; chans are the
// channels it advertises.
func (c *client) control(data []byte, chans []uint16) {
	c.mu.Lock()
	c.ctrls = append(c.ctrls, ctrl{data: data, chans: chans})
	for _, id := range chans {
		c.advertised[id] = time.Time{}
	}
	c.mu.Unlock()
	signal(c.wake)
}

// wants says whether a message of channel ch goes on the queue: the
// client is subscribed, or the channel's advertisement is not sent yet or
// was sent less than Grace ago. c.mu is held.
func (c *client) wants(ch uint16, now time.Time) bool {
	if _, ok := c.subs[ch]; ok {
		return true
	}
	at, ok := c.advertised[ch]
	return ok && (at.IsZero() || now.Sub(at) < c.s.o.Grace)
}

// offer puts m on the queue if the client wants it; when the queue is
// full, m is counted as missed, or with block the caller waits for room.
func (c *client) offer(m *message, block bool) {
	now := time.Now()
	c.mu.Lock()
	for {
		if c.gone || c.finishing || !c.wants(m.ch, now) {
			c.mu.Unlock()
			return
		}
		n := len(c.q) - c.head
		if n == 0 || n < c.s.o.Queue && c.qbytes+len(m.data) <= c.s.o.QueueBytes {
			if c.head > 0 && len(c.q) == cap(c.q) { // slide the queue back to the start
				k := copy(c.q, c.q[c.head:])
				clear(c.q[k:])
				c.q, c.head = c.q[:k], 0
			}
			c.q = append(c.q, m)
			c.qbytes += len(m.data)
			c.mu.Unlock()
			signal(c.wake)
			return
		}
		if !block {
			c.dropped++
			c.st.mu.Lock()
			c.st.missed++
			c.st.mu.Unlock()
			c.mu.Unlock()
			signal(c.wake)
			return
		}
		c.mu.Unlock()
		select {
		case <-c.space:
		case <-c.ctx.Done():
		case <-c.s.ctx.Done():
			return
		}
		c.mu.Lock()
	}
}

// finish asks send to send what is queued and close the connection.
func (c *client) finish() {
	c.mu.Lock()
	c.finishing = true
	c.mu.Unlock()
	signal(c.wake)
}

// abort ends the connection at once.
func (c *client) abort() {
	c.mu.Lock()
	c.gone = true
	c.mu.Unlock()
	c.cancel()
	signal(c.wake)
}

// receive reads the client's requests until the connection ends.
func (c *client) receive() {
	for {
		typ, data, err := c.conn.Read(c.ctx)
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

// Status levels of the protocol.
const (
	levelInfo    = 0
	levelWarning = 1
	levelError   = 2
)

// request handles one JSON request: subscribe, unsubscribe; other
// operations are answered with an error status.
func (c *client) request(data []byte) {
	var req struct {
		Op            string `json:"op"`
		Subscriptions []struct {
			ID        *uint32 `json:"id"`
			ChannelID *uint16 `json:"channelId"`
		} `json:"subscriptions"`
		SubscriptionIDs []uint32 `json:"subscriptionIds"`
	}
	if err := json.Unmarshal(data, &req); err != nil {
		c.status(levelError, fmt.Sprintf("not a JSON request: %v", err))
		return
	}
	switch req.Op {
	case "subscribe":
		var bad []string
		added := false
		c.mu.Lock()
		for _, sub := range req.Subscriptions {
			switch {
			case sub.ID == nil || sub.ChannelID == nil:
				bad = append(bad, "a subscription without id or channelId")
			case c.taken(*sub.ID):
				bad = append(bad, fmt.Sprintf("subscription id %d is in use", *sub.ID))
			case !c.known(*sub.ChannelID):
				bad = append(bad, fmt.Sprintf("channel %d was not advertised", *sub.ChannelID))
			default:
				if old, ok := c.subs[*sub.ChannelID]; ok {
					delete(c.bySub, old) // one subscription a channel: the new one
				}
				c.subs[*sub.ChannelID] = *sub.ID
				c.bySub[*sub.ID] = *sub.ChannelID
				added = true
			}
		}
		c.mu.Unlock()
		signal(c.wake)
		if added {
			c.s.gotSubscription()
		}
		if len(bad) > 0 {
			msg := "subscribe: " + strings.Join(bad[:min(len(bad), 3)], "; ")
			if len(bad) > 3 {
				msg += fmt.Sprintf("; and %d more", len(bad)-3)
			}
			c.status(levelWarning, msg)
		}
	case "unsubscribe":
		c.mu.Lock()
		for _, id := range req.SubscriptionIDs {
			if ch, ok := c.bySub[id]; ok {
				delete(c.bySub, id)
				delete(c.subs, ch)
			}
		}
		c.mu.Unlock()
		signal(c.wake)
	default:
		c.status(levelError, fmt.Sprintf("operation %q is not supported by dissect (it serves channels to subscribe to)", req.Op))
	}
}

func (c *client) taken(id uint32) bool { _, ok := c.bySub[id]; return ok }

func (c *client) known(ch uint16) bool { _, ok := c.advertised[ch]; return ok }

// pongWait is how long the pong of the ping after advertisements is
// waited for; then the client is taken to have read them.
const pongWait = 10 * time.Second

// maxAnswers bounds the answers to a client's requests waiting to be
// sent: a client that sends bad requests without reading makes no more.
const maxAnswers = 64

// status queues a status message answering a request, unless maxAnswers
// are waiting already.
func (c *client) status(level int, msg string) {
	c.mu.Lock()
	n := 0
	for _, x := range c.ctrls {
		if x.answer {
			n++
		}
	}
	c.mu.Unlock()
	if n >= maxAnswers {
		return
	}
	b, _ := json.Marshal(map[string]any{"op": "status", "level": level, "message": "dissect: " + msg})
	c.mu.Lock()
	c.ctrls = append(c.ctrls, ctrl{data: b, answer: true})
	c.mu.Unlock()
	signal(c.wake)
}

// send writes the client's messages: text messages first (in order), then
// the queue, each message to its subscription or, for a channel just
// advertised, after waiting for one (Options.Grace). It closes the
// connection when the server finishes or the connection fails.
func (c *client) send() {
	defer close(c.done)
	defer c.conn.CloseNow()
	var frame []byte
	var waitTimer *time.Timer
	defer func() {
		if waitTimer != nil {
			waitTimer.Stop()
		}
	}()
	for {
		c.mu.Lock()
		if c.gone {
			c.mu.Unlock()
			return
		}
		if c.dropped > c.reported && (c.head == len(c.q) || time.Since(c.lastStatus) >= time.Second || c.finishing) {
			msg := fmt.Sprintf("dissect: this client missed %d messages (%d in all): its queue of %d messages was full; the capture was not slowed",
				c.dropped-c.reported, c.dropped, c.s.o.Queue)
			b, _ := json.Marshal(map[string]any{"op": "status", "level": levelWarning, "message": msg})
			c.ctrls = append(c.ctrls, ctrl{data: b})
			c.reported, c.lastStatus = c.dropped, time.Now()
		}
		if len(c.ctrls) > 0 {
			ctrls := c.ctrls
			c.ctrls = nil
			c.mu.Unlock()
			var told []uint16
			for _, x := range ctrls {
				if c.conn.Write(c.ctx, websocket.MessageText, x.data) != nil {
					return
				}
				told = append(told, x.chans...)
			}
			if len(told) > 0 {
				// A ping after the advertisements: its pong comes
				// once the client has read them (a client such as
				// Node's ws answers it after handling the messages
				// before it), so a busy client is not taken to have
				// declined the channels; Grace counts from then.
				ctx, cancel := context.WithTimeout(c.ctx, pongWait)
				err := c.conn.Ping(ctx)
				cancel()
				if c.ctx.Err() != nil {
					return
				}
				if err != nil && !errors.Is(err, context.DeadlineExceeded) {
					return
				}
				now := time.Now()
				c.mu.Lock()
				for _, id := range told {
					c.advertised[id] = now
				}
				c.mu.Unlock()
			}
			continue
		}
		if c.head < len(c.q) {
			m := c.q[c.head]
			sub, ok := c.subs[m.ch]
			if !ok {
				wait := c.s.o.Grace - time.Since(c.advertised[m.ch])
				if wait > 0 {
					c.mu.Unlock()
					if waitTimer == nil {
						waitTimer = time.NewTimer(wait)
					} else {
						waitTimer.Reset(wait)
					}
					select {
					case <-c.wake:
					case <-waitTimer.C:
					case <-c.ctx.Done():
					}
					waitTimer.Stop()
					continue
				}
			}
			c.q[c.head] = nil
			c.head++
			c.qbytes -= len(m.data)
			if c.head == len(c.q) {
				c.q, c.head = c.q[:0], 0
			}
			c.mu.Unlock()
			signal(c.space)
			if !ok {
				continue // not subscribed: not sent, not missed
			}
			frame = append(frame[:0], 1) // Message Data
			frame = binary.LittleEndian.AppendUint32(frame, sub)
			frame = binary.LittleEndian.AppendUint64(frame, m.t)
			frame = append(frame, m.data...)
			if c.conn.Write(c.ctx, websocket.MessageBinary, frame) != nil {
				return
			}
			c.st.mu.Lock()
			c.st.sent++
			c.st.mu.Unlock()
			continue
		}
		if c.finishing {
			c.mu.Unlock()
			c.conn.Close(websocket.StatusNormalClosure, "the capture has ended")
			return
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-c.ctx.Done():
			return
		}
	}
}
