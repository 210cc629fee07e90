package deltaenc

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// Directions of a conversation. The Unity follower connects to the Qt
// leader, so the client's direction is the one the TCP initiator sends
// (dissect's Dir 0) and the server's is Dir 1.
const (
	Client = 0 // Unity follower → Qt leader
	Server = 1 // Qt leader → Unity follower
)

// RoleName returns "client" or "server".
func RoleName(dir int) string {
	if dir == Client {
		return "client"
	}
	return "server"
}

// Send is one write by one side: whole messages appended at one time.
type Send struct {
	Dir   int           // Client or Server
	At    time.Duration // since the connection was established
	Start int64         // byte range of the write in Session.Stream[Dir]
	End   int64
}

// Session is a conversation: the two byte streams, the records each should
// produce, and the writes in time order.
type Session struct {
	Stream [2][]byte
	Truth  [2][]Message
	Sends  []Send
}

// Conversation builds a [Session] write by write.
type Conversation struct {
	b     [2]Builder
	sends []Send
}

// Builder returns the builder of direction dir, for writes that need no
// time of their own (they join the previous write of that direction).
func (c *Conversation) Builder(dir int) *Builder { return &c.b[dir&1] }

// Write appends the messages that add appends to direction dir as one
// write at time at.
func (c *Conversation) Write(dir int, at time.Duration, add func(b *Builder)) {
	dir &= 1
	start := c.b[dir].Len()
	add(&c.b[dir])
	if end := c.b[dir].Len(); end > start {
		c.sends = append(c.sends, Send{Dir: dir, At: at, Start: start, End: end})
	}
}

// Finish returns the session. Sends are put in time order (stable). A pong
// expects rtt_ms exactly when the server sent a ping with its id, which is
// a record of its own, in an earlier write.
func (c *Conversation) Finish() (*Session, error) {
	s := &Session{}
	for d := range 2 {
		b, m, err := c.b[d].Finish()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", RoleName(d), err)
		}
		s.Stream[d], s.Truth[d] = b, m
	}
	s.Sends = append([]Send(nil), c.sends...)
	sort.SliceStable(s.Sends, func(i, j int) bool { return s.Sends[i].At < s.Sends[j].At })
	pingAt := map[uint64]time.Duration{}
	for _, m := range s.Truth[Server] {
		if m.Type == TypePing {
			if at, ok := s.SentAt(Server, m.Ready-1); ok {
				pingAt[m.PingID] = at
			}
		}
	}
	for i := range s.Truth[Client] {
		m := &s.Truth[Client][i]
		if m.Type != TypePong {
			continue
		}
		at, seen := pingAt[m.PingID]
		pongAt, _ := s.SentAt(Client, m.Ready-1)
		if seen && at < pongAt {
			m.RTT, m.Warn = truth.Yes, truth.No
		} else {
			m.RTT = truth.No // a decoder may warn about a pong that answers no ping
		}
	}
	return s, nil
}

// SentAt returns the time of the write holding byte off of direction dir.
func (s *Session) SentAt(dir int, off int64) (time.Duration, bool) {
	for _, w := range s.Sends {
		if w.Dir == dir && off >= w.Start && off < w.End {
			return w.At, true
		}
	}
	return 0, false
}

// Options shape a generated session. Zero fields take defaults.
type Options struct {
	Seed        uint64        // seed of the random values (ping ids, noise, delays)
	Ticks       int           // progress updates sent by the server (default 40)
	CurvePoints int           // points of the exercise curve (default 24)
	PingEvery   int           // ticks between pings (default 8)
	Period      time.Duration // time between progress updates (default 20 ms)
	// ServerReason and ClientReason are the end_of_transmission reasons
	// (defaults "exercise finished" and "").
	ServerReason, ClientReason string
	// Broken adds malformed and unusual messages (see [NewSession]).
	Broken bool
}

func (o Options) withDefaults() Options {
	if o.Ticks <= 0 {
		o.Ticks = 40
	}
	if o.CurvePoints <= 0 {
		o.CurvePoints = 24
	}
	if o.PingEvery <= 0 {
		o.PingEvery = 8
	}
	if o.Period <= 0 {
		o.Period = 20 * time.Millisecond
	}
	if o.ServerReason == "" {
		o.ServerReason = "exercise finished"
	}
	return o
}

// NewSession generates a conversation between the Qt leader (server) and
// the Unity follower (client) as the protocol text describes it: both sides
// send magic and version first; the server sends the exercise curve, then a
// position, current direction and desired direction every period, and a
// ping every PingEvery ticks; the client answers each ping with a pong; the
// server ends with end_of_transmission and the client answers with its own.
// The same options give the same session.
//
// With Broken, the session also holds, at fixed ticks (Ticks must be at
// least 20): in the server's stream, an id with the undefined size code 0x7
// and 3 junk bytes before a progress update (tick 4), an unknown type 0x00A
// with 8 bytes (tick 7), a known type under another size code, 0x2003 with
// 4 bytes (tick 9), a curve of 5 points and 7 trailing bytes (tick 11), an
// unknown variable-length type 0xF00B (tick 13) and the reserved type 0x000
// as 0x1000 with 2 bytes (tick 15); in the client's stream, 0x3006 with 8
// bytes (end_of_transmission's type under size code 3) after the first pong,
// and instead of its end_of_transmission a message of that type cut short
// after 7 of its 9 bytes (the stream ends inside it).
func NewSession(o Options) *Session {
	o = o.withDefaults()
	r := NewRand(o.Seed)
	var c Conversation
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }

	// Handshake: the client writes as soon as it has connected; the server
	// as soon as it has accepted.
	c.Write(Client, us(40+r.IntN(200)), func(b *Builder) { b.Magic(); b.Version(ProtocolVersion) })
	c.Write(Server, us(100+r.IntN(200)), func(b *Builder) { b.Magic(); b.Version(ProtocolVersion) })

	// Values are computed in integer micrometres and converted to float32
	// by correctly rounded operations only, so that every platform makes
	// the same bytes (no fused multiply-add, no platform maths beyond the
	// curve's rounding to whole micrometres).
	//
	// Exercise information: a curve in the robot's workspace, a tilted
	// ellipse 0.35 m below the base.
	radius := float64(80000 + r.IntN(40000)) // µm
	tilt := float64(r.IntN(20000))
	ring := make([][3]int64, o.CurvePoints)
	curve := make([][3]float32, o.CurvePoints)
	for i := range ring {
		th := 2 * math.Pi * float64(i) / float64(o.CurvePoints)
		ring[i] = [3]int64{
			int64(math.Round(radius * math.Cos(th))),
			int64(math.Round(0.7 * radius * math.Sin(th))),
			-350000 + int64(math.Round(tilt*math.Sin(th))),
		}
		curve[i] = metres(ring[i])
	}
	t := us(2000 + r.IntN(3000))
	c.Write(Server, t, func(b *Builder) { b.Curve(curve) })

	// Exercise progress: the actuator follows a target moving along the
	// curve; the patient pushes roughly towards it.
	pos := ring[0]
	for k := range o.Ticks {
		t += o.Period + us(r.IntN(400)) - us(200)
		target := ring[(k/2+1)%len(ring)]
		var want, cur [3]int64
		for i := range 3 {
			want[i] = target[i] - pos[i]
		}
		if want == [3]int64{} {
			want[2] = -1
		}
		wn := isqrt(want[0]*want[0] + want[1]*want[1] + want[2]*want[2])
		for i := range 3 {
			cur[i] = want[i]*1000/max(wn, 1) + int64(r.IntN(301)) - 150
		}
		if cur == [3]int64{} {
			cur[2] = -1
		}
		cn := isqrt(cur[0]*cur[0] + cur[1]*cur[1] + cur[2]*cur[2])
		for i := range 3 {
			pos[i] += cur[i] * 4000 / max(cn, 1)
		}
		p, cu, w := metres(pos), unit(cur), unit(want)
		ping := k%o.PingEvery == 0
		id := r.Uint64()
		c.Write(Server, t, func(b *Builder) {
			if o.Broken {
				brokenBefore(b, k)
			}
			b.ActuatorPosition(p[0], p[1], p[2], 0)
			b.CurrentDirection(cu[0], cu[1], cu[2], 0)
			b.DesiredDirection(w[0], w[1], w[2], 0)
			if ping {
				b.Ping(id)
			}
			if o.Broken {
				brokenAfter(b, k)
			}
		})
		if ping {
			first := k == 0
			c.Write(Client, t+us(300+r.IntN(1500)), func(b *Builder) {
				b.Pong(id)
				if o.Broken && first {
					b.Unknown(MakeID(3, IDEndOfTransmission), []byte("mismatch"))
				}
			})
		}
	}
	t += o.Period
	c.Write(Server, t, func(b *Builder) { b.EndOfTransmission(o.ServerReason) })
	c.Write(Client, t+us(500+r.IntN(1000)), func(b *Builder) {
		if o.Broken {
			b.Truncated(EndOfTransmission("bye"), 7)
			return
		}
		b.EndOfTransmission(o.ClientReason)
	})
	s, err := c.Finish()
	if err != nil {
		// The messages and junk are fixed and were checked: an error is a
		// bug here.
		panic(err)
	}
	return s
}

// metres converts micrometres to float32 metres (one correctly rounded
// division, then a conversion).
func metres(v [3]int64) [3]float32 {
	var f [3]float32
	for i, x := range v {
		f[i] = float32(float64(x) / 1e6)
	}
	return f
}

// unit returns v scaled to length 1 as float32.
func unit(v [3]int64) [3]float32 {
	n := math.Sqrt(float64(v[0]*v[0] + v[1]*v[1] + v[2]*v[2]))
	var f [3]float32
	for i, x := range v {
		f[i] = float32(float64(x) / n)
	}
	return f
}

// isqrt returns the integer square root of n >= 0.
func isqrt(n int64) int64 {
	x := int64(math.Sqrt(float64(n)))
	for x*x > n {
		x--
	}
	for (x+1)*(x+1) <= n {
		x++
	}
	return x
}

// Rand is a small deterministic random source (SplitMix64), used instead of
// math/rand so that the generated bytes depend on nothing but this code.
type Rand struct{ s uint64 }

// NewRand returns a source seeded with seed.
func NewRand(seed uint64) *Rand { return &Rand{s: seed ^ 0x64656c7461726f62} }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// IntN returns a number in [0, n) (n > 0; the tiny modulo bias does not
// matter here).
func (r *Rand) IntN(n int) int { return int(r.Uint64() % uint64(n)) }

// brokenBefore appends the broken messages that precede the progress
// update of tick k.
func brokenBefore(b *Builder, k int) {
	if k == 4 {
		// The junk cannot start a known id: the decoder resynchronises at
		// the position message that follows.
		b.BadSize(0x7, 0x003, []byte{0xa5, 0x5a, 0xa5})
	}
}

// brokenAfter appends the unusual messages that follow the progress
// update of tick k.
func brokenAfter(b *Builder, k int) {
	switch k {
	case 7:
		b.Unknown(MakeID(3, 0x00A), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	case 9:
		b.Unknown(MakeID(2, 0x003), []byte{0, 0, 0x80, 0x3f})
	case 11:
		b.BadCurve([][3]float32{{0, 0, -0.3}, {0.1, 0, -0.3}, {0.1, 0.1, -0.3}, {0, 0.1, -0.3}, {0, 0, -0.3}},
			[]byte{0, 0, 0x80, 0x3f, 0, 0, 0})
	case 13:
		b.Unknown(MakeID(SizeVariable, 0x00B), []byte("future message"))
	case 15:
		b.Unknown(MakeID(1, 0x000), []byte{0xff, 0xee})
	}
}
