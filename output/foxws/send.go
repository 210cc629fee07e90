package foxws

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/coder/websocket"
)

// Opcodes of the server's binary messages.
const (
	opMessageData = 1
	opTime        = 2
)

// timeMessage is a Time message: the viewer's clock is t.
func timeMessage(t uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{opTime}, t)
}

// pongWait is how long the pong of the ping after advertisements is
// waited for; then the client is taken to have read them.
const pongWait = 10 * time.Second

// An action is what send does next.
type action struct {
	ctrls []ctrl
	m     *message
	sub   uint32
	clock uint64        // a Time message before m; 0: none
	wait  time.Duration // nothing to send for this long; 0: until woken
	close bool          // everything sent at the server's close
	gone  bool
}

// step says what c sends next. s.mu is held.
func (c *client) step(now time.Time) action {
	s := c.s
	if c.gone {
		return action{gone: true}
	}
	if len(c.ctrls) > 0 {
		if b := c.miss.report(s, now, false); b != nil {
			c.ctrls = append(c.ctrls, ctrl{data: b})
		}
		a := action{ctrls: c.ctrls}
		c.ctrls, c.answers = nil, 0
		return a
	}
	m, wait := c.next(now)
	if m != nil {
		sub, ok := c.subs[m.ch]
		if !ok {
			return c.step(now) // latched context of a channel left since
		}
		a := action{m: m, sub: sub}
		if m.t > c.clock {
			a.clock, c.clock = m.t, m.t
		}
		c.sent++
		return a
	}
	if b := c.miss.report(s, now, true); b != nil {
		return action{ctrls: []ctrl{{data: b}}}
	}
	if t := c.target(now); t > c.clock && !c.finishing {
		d := tick - now.Sub(c.clockAt)
		if d <= 0 {
			c.clock, c.clockAt = t, now
			return action{ctrls: []ctrl{{data: timeMessage(t), bin: true}}}
		}
		if wait == 0 || d < wait {
			wait = d
		}
	}
	if c.finishing && wait == 0 {
		return action{close: true}
	}
	// A new message may change what to do, but not a playback's wait
	// for its time.
	c.waiting = wait == 0 || !s.o.Playback
	return action{wait: wait}
}

// tick is how often the clock of a client that has nothing to send is
// moved on.
const tick = 100 * time.Millisecond

// target is where c's clock is due when it has nothing to send: the
// capture time of the last message its cursor passed; in a file played
// in time, the playback's time (up to the next message's). s.mu is
// held.
func (c *client) target(now time.Time) uint64 {
	s, l := c.s, &c.s.log
	if !l.started || s.o.Playback && !c.started {
		return 0
	}
	var passed uint64
	switch {
	case c.cursor >= l.next:
		passed = l.last
	case c.cursor > l.base():
		passed = l.at(c.cursor - 1).t
	}
	if !s.o.Playback || s.o.Speed <= 0 || c.cursor >= l.next || l.base() >= l.next {
		return passed
	}
	played := l.t0 + uint64(float64(now.Sub(c.wall0))*s.o.Speed)
	return max(passed, min(played, l.at(max(c.cursor, l.base())).t))
}

// next returns the message c sends next, or how long until it may
// (0: until something changes). s.mu is held.
func (c *client) next(now time.Time) (*message, time.Duration) {
	if len(c.pri) > 0 {
		m := c.pri[0]
		c.pri[0] = nil
		c.pri = c.pri[1:]
		return m, 0
	}
	s, l := c.s, &c.s.log
	if s.o.Playback {
		if !c.started {
			if c.startAt.IsZero() {
				return nil, 0
			}
			if d := c.startAt.Sub(now); d > 0 && !c.finishing {
				return nil, d
			}
			c.begin(now)
			if len(c.pri) > 0 { // latched context the log has dropped
				return c.next(now)
			}
		}
		for c.cursor = max(c.cursor, l.base()); c.cursor < l.next; c.cursor++ {
			m := l.at(c.cursor)
			_, sub := c.subs[m.ch]
			if sub && s.o.Speed > 0 && !c.finishing {
				due := c.wall0.Add(time.Duration(float64(dur(l.t0, m.t)) / s.o.Speed))
				if d := due.Sub(now); d > 0 {
					return nil, d
				}
			}
			if !sub && !c.finishing {
				if d, held := c.grace(m.ch, now); held {
					return nil, d
				}
			}
			if s.waitRoom {
				signal(s.room) // Record may drop what c has passed
			}
			if sub {
				c.cursor++
				return m, 0
			}
		}
		return nil, 0
	}
	for c.cursor = max(c.cursor, l.base()); c.cursor < l.next; c.cursor++ {
		m := l.at(c.cursor)
		if _, ok := c.subs[m.ch]; ok {
			c.cursor++
			return m, 0
		}
		if !c.finishing {
			if d, held := c.grace(m.ch, now); held {
				return nil, d
			}
		}
		// not subscribed: not sent, not missed
	}
	return nil, 0
}

// grace says whether a message of ch, not subscribed to, waits for c's
// subscription: its advertisement is being sent, or was read less than
// Grace ago (d is how long; 0: until it is read). s.mu is held.
func (c *client) grace(ch uint16, now time.Time) (d time.Duration, held bool) {
	at, ok := c.advertised[ch]
	if !ok {
		return 0, false
	}
	if at.IsZero() {
		return 0, true
	}
	d = c.s.o.Grace - now.Sub(at)
	return d, d > 0
}

// begin starts a file's playback to c, from the log's start. s.mu is
// held.
func (c *client) begin(now time.Time) {
	c.started, c.cursor, c.wall0 = true, c.s.log.base(), now
	c.s.played = true
	for ch := range c.subs {
		c.dropped(ch)
	}
}

// send writes the client's messages: text messages first (in order), then
// latched context and the log, each message to its subscription, with a
// Time message before a message of a later time. It closes the
// connection when the server finishes or the connection fails.
func (c *client) send() {
	defer close(c.done)
	defer c.conn.CloseNow()
	var frame []byte
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		c.s.mu.Lock()
		a := c.step(time.Now())
		c.s.mu.Unlock()
		switch {
		case a.gone:
			return
		case a.ctrls != nil:
			if !c.sendCtrls(a.ctrls) {
				return
			}
		case a.m != nil:
			if a.clock != 0 && c.write(websocket.MessageBinary, timeMessage(a.clock)) != nil {
				return
			}
			frame = append(frame[:0], opMessageData)
			frame = binary.LittleEndian.AppendUint32(frame, a.sub)
			frame = binary.LittleEndian.AppendUint64(frame, a.m.t)
			frame = append(frame, a.m.data...)
			if c.write(websocket.MessageBinary, frame) != nil {
				return
			}
		case a.close:
			c.conn.Close(websocket.StatusNormalClosure, "the capture has ended")
			return
		default:
			d := a.wait
			if d == 0 {
				d = c.s.o.Stall / 2
			}
			timer.Reset(d)
			select {
			case <-c.wake:
			case <-c.ctx.Done():
				return
			case <-timer.C:
				if a.wait == 0 && !c.alive() {
					return
				}
			}
			timer.Stop()
		}
	}
}

// alive pings an idle client: false when it does not answer within
// Options.Stall (it is closed).
func (c *client) alive() bool {
	ctx, cancel := context.WithTimeout(c.ctx, c.s.o.Stall)
	defer cancel()
	if err := c.conn.Ping(ctx); err != nil {
		if c.ctx.Err() == nil {
			c.s.mu.Lock()
			c.why = fmt.Sprintf("closed: it did not answer a ping in %v", c.s.o.Stall)
			c.s.mu.Unlock()
		}
		return false
	}
	return true
}

// write writes one message, with the watchdog told how long it takes.
func (c *client) write(typ websocket.MessageType, b []byte) error {
	c.writing.Store(time.Now().UnixNano())
	err := c.conn.Write(c.ctx, typ, b)
	c.writing.Store(0)
	return err
}

// sendCtrls writes text messages; after advertisements, a ping: its pong
// comes once the client has read them (a client such as Node's ws
// answers it after handling the messages before it), so a busy client
// is not taken to have declined the channels; Grace counts from then.
func (c *client) sendCtrls(ctrls []ctrl) bool {
	var told []uint16
	for _, x := range ctrls {
		typ := websocket.MessageText
		if x.bin {
			typ = websocket.MessageBinary
		}
		if c.write(typ, x.data) != nil {
			return false
		}
		told = append(told, x.chans...)
	}
	if len(told) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(c.ctx, pongWait)
	err := c.conn.Ping(ctx)
	cancel()
	if c.ctx.Err() != nil || err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	now := time.Now()
	c.s.mu.Lock()
	for _, id := range told {
		if _, ok := c.advertised[id]; ok {
			c.advertised[id] = now
		}
	}
	c.s.mu.Unlock()
	signal(c.wake)
	return true
}
