package foxws

import (
	"encoding/json"
	"time"
)

// A message is one message of a channel in the run's log, shared by every
// client that sends it (never changed once made).
type message struct {
	seq  uint64 // its place in the run's log, from 0
	t    uint64 // log time: the capture time, nanoseconds since 1970
	ch   uint16
	cum  uint64 // the cost of the log's messages up to this one included
	data []byte // the JSON
}

// msgOverhead is what a message costs beyond its JSON: the message and
// its place in the log, counted against the budget.
const msgOverhead = 96

func cost(m *message) uint64 { return uint64(len(m.data)) + msgOverhead }

// runLog is the run's messages: for a file every message (the clients
// play it each from its start), for a live capture those a client has
// not sent yet. It is guarded by the Server's mu.
type runLog struct {
	msgs  []*message // msgs[start:] are kept: seq base() to next-1
	start int
	next  uint64 // the seq of the next message
	bytes uint64 // the cost of the messages kept
	cum   uint64 // the cost of every message appended

	count   map[uint16]uint64 // messages of each channel appended
	first   map[uint16]uint64 // the seq of each channel's first message
	evicted map[uint16]uint64 // messages of each channel dropped from the log
	t0      uint64            // the time of the first message
	last    uint64            // the latest time appended
	started bool              // a message was appended

	// Latched context: the last message of each context channel, and the
	// transforms of /tf by child frame; a client that subscribes after
	// they were sent is sent them at once.
	latched map[uint16]*message
	tf      tfLatch
}

func newRunLog() runLog {
	return runLog{
		count: map[uint16]uint64{}, first: map[uint16]uint64{}, evicted: map[uint16]uint64{},
		latched: map[uint16]*message{}, tf: tfLatch{byChild: map[string]int{}},
	}
}

func (l *runLog) base() uint64 { return l.next - uint64(len(l.msgs)-l.start) }

// at returns the message seq, which is kept.
func (l *runLog) at(seq uint64) *message { return l.msgs[l.start+int(seq-l.base())] }

// note counts a message of ch at t, kept in the log or not.
func (l *runLog) note(ch uint16, t uint64) uint64 {
	if !l.started {
		l.started, l.t0 = true, t
	}
	l.last = max(l.last, t)
	if _, ok := l.first[ch]; !ok {
		l.first[ch] = l.next
	}
	l.count[ch]++
	seq := l.next
	l.next++
	return seq
}

// push keeps m (its seq the last noted).
func (l *runLog) push(m *message) {
	l.cum += cost(m)
	m.cum = l.cum
	l.bytes += cost(m)
	if l.start > 0 && len(l.msgs) == cap(l.msgs) && l.start >= len(l.msgs)/2 { // slide back
		k := copy(l.msgs, l.msgs[l.start:])
		clear(l.msgs[k:])
		l.msgs, l.start = l.msgs[:k], 0
	}
	l.msgs = append(l.msgs, m)
}

// evict drops the oldest message kept.
func (l *runLog) evict() *message {
	m := l.msgs[l.start]
	l.msgs[l.start] = nil
	l.start++
	l.bytes -= cost(m)
	l.evicted[m.ch]++
	if l.start == len(l.msgs) {
		l.msgs, l.start = l.msgs[:0], 0
	}
	return m
}

// backlog is the number and cost of the messages from seq on.
func (l *runLog) backlog(seq uint64) (n, bytes uint64) {
	seq = max(seq, l.base())
	if seq >= l.next {
		return 0, 0
	}
	m := l.at(seq)
	return l.next - seq, l.cum - m.cum + cost(m)
}

// tfLatch keeps the last transform to each child frame of /tf, in the
// order the frames came, at most maxLatchedFrames.
type tfLatch struct {
	byChild map[string]int
	tfs     []json.RawMessage
	t       uint64
}

const maxLatchedFrames = 4096

// add keeps the transforms of a foxglove.FrameTransforms message.
func (x *tfLatch) add(data []byte, t uint64) {
	var ft struct{ Transforms []json.RawMessage }
	if json.Unmarshal(data, &ft) != nil {
		return
	}
	for _, tf := range ft.Transforms {
		var id struct {
			Child string `json:"child_frame_id"`
		}
		if json.Unmarshal(tf, &id) != nil {
			continue
		}
		if i, ok := x.byChild[id.Child]; ok {
			x.tfs[i] = tf
		} else if len(x.tfs) < maxLatchedFrames {
			x.byChild[id.Child] = len(x.tfs)
			x.tfs = append(x.tfs, tf)
		}
	}
	x.t = max(x.t, t)
}

// message is one foxglove.FrameTransforms of every frame kept.
func (x *tfLatch) message(ch uint16) *message {
	b := []byte(`{"transforms":[`)
	for i, tf := range x.tfs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, tf...)
	}
	return &message{ch: ch, t: x.t, data: append(b, "]}"...)}
}

// dur is the time from a to b in nanoseconds since 1970 (negative when b
// is earlier).
func dur(a, b uint64) time.Duration { return time.Duration(int64(b - a)) }
