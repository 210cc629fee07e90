package neptuneenc

import (
	"fmt"
	"sort"
	"time"
)

// Send is one write by the host: whole messages appended at one time.
type Send struct {
	At         time.Duration // since the connection was established
	Start, End int64         // byte range of the write in DeviceSession.Stream
}

// DeviceSession is the host → device direction of one TCP connection (the
// device never answers): its bytes, the records they should produce, and
// the writes in time order.
type DeviceSession struct {
	Stream []byte
	Truth  []Message
	Sends  []Send
}

// SentAt returns the time of the write holding byte off.
func (s *DeviceSession) SentAt(off int64) (time.Duration, bool) {
	for _, w := range s.Sends {
		if off >= w.Start && off < w.End {
			return w.At, true
		}
	}
	return 0, false
}

// Pilot builds a [DeviceSession] write by write.
type Pilot struct {
	b     Builder
	sends []Send
}

// Builder returns the stream's builder, for messages that join the
// previous write.
func (p *Pilot) Builder() *Builder { return &p.b }

// Write appends the messages that add appends as one write at time at.
func (p *Pilot) Write(at time.Duration, add func(b *Builder)) {
	start := p.b.Len()
	add(&p.b)
	if end := p.b.Len(); end > start {
		p.sends = append(p.sends, Send{At: at, Start: start, End: end})
	}
}

// Finish returns the session, writes in time order.
func (p *Pilot) Finish() (*DeviceSession, error) {
	buf, msgs, err := p.b.Finish()
	if err != nil {
		return nil, err
	}
	s := &DeviceSession{Stream: buf, Truth: msgs, Sends: append([]Send(nil), p.sends...)}
	sort.SliceStable(s.Sends, func(i, j int) bool { return s.Sends[i].At < s.Sends[j].At })
	for i := 1; i < len(s.Sends); i++ {
		if s.Sends[i].Start < s.Sends[i-1].End {
			return nil, fmt.Errorf("neptuneenc: writes out of time order at offset %d", s.Sends[i].Start)
		}
	}
	return s, nil
}

// Options shape a generated pilot session. Zero fields take defaults.
type Options struct {
	Seed   uint64        // seed of the random values
	Ticks  int           // control updates (default 60)
	Period time.Duration // time between updates (default 50 ms)
	// Broken adds malformed and unusual messages (see [NewPilotSession]).
	Broken bool
}

func (o Options) withDefaults() Options {
	if o.Ticks <= 0 {
		o.Ticks = 60
	}
	if o.Period <= 0 {
		o.Period = 50 * time.Millisecond
	}
	return o
}

// NewPilotSession generates what an ROV pilot's console sends to the
// device: lamp on and auto-stabilize on; then every period the four
// thrusters' set_motor commands (motors 0-3, direction and PWM magnitude
// following a joystick sweep); every 8 updates a translate or rotate on an
// axis; every 10 updates relay 5 (set_motor id 5) toggled; at the end all
// thrusters stopped, stabilize off, lamp off and abort. The same options
// give the same session.
//
// With Broken (Ticks at least 20), fixed updates also hold: a length-0
// message (tick 3), set_motor with length 3 (tick 5), an unknown type 9
// with two arguments (tick 7), a garbage run starting with the length byte
// 0xc8 (tick 9, all seven bytes 100 or more, each dropped), lamp with
// length 3 (tick 11), an abort with two arguments (tick 13), translate on
// axis 3 (tick 15) and set_motor for the missing motor 9 (tick 17); and the
// last abort is cut after its length byte (the stream ends inside it).
func NewPilotSession(o Options) *DeviceSession {
	o = o.withDefaults()
	r := NewRand(o.Seed)
	var p Pilot
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	t := us(200 + r.IntN(300))
	p.Write(t, func(b *Builder) { b.Lamp(1); b.Stabilize(1) })
	relay := byte(0)
	for k := range o.Ticks {
		t += o.Period + us(r.IntN(2000)) - us(1000)
		// A joystick sweep: surge and yaw follow a triangle wave, heave a
		// slower one; each thruster mixes them (integers only).
		tri := func(period, phase int) int {
			x := (k*4 + phase) % period
			if x < period/2 {
				return x*510/(period/2) - 255
			}
			return 255 - (x-period/2)*510/(period/2)
		}
		surge, yaw, heave := tri(40, 0), tri(40, 10)/2, tri(64, 5)
		mix := [4]int{surge + yaw, surge - yaw, heave, heave}
		p.Write(t, func(b *Builder) {
			if o.Broken {
				brokenBefore(b, k)
			}
			for m, v := range mix {
				v = max(-255, min(255, v+r.IntN(9)-4))
				dir := byte(0)
				if v < 0 {
					dir, v = 1, -v
				}
				b.SetMotor(byte(m), dir, byte(v))
			}
			switch {
			case k%8 == 3:
				b.Translate(byte(k/8%3), byte(k/8%2))
			case k%8 == 7:
				b.Rotate(byte((k/8+1)%3), 1-byte(k/8%2))
			}
			if k%10 == 9 {
				relay ^= 1
				b.SetMotor(5, relay, 0)
			}
			if o.Broken {
				brokenAfter(b, k)
			}
		})
	}
	t += o.Period
	p.Write(t, func(b *Builder) {
		for m := range 4 {
			b.SetMotor(byte(m), 0, 0)
		}
		b.Stabilize(0)
		b.Lamp(0)
		if o.Broken {
			b.Truncated(Abort(), 1)
			return
		}
		b.Abort()
	})
	s, err := p.Finish()
	if err != nil {
		// The messages and junk are fixed and were checked: an error is a
		// bug here.
		panic(err)
	}
	return s
}

// brokenBefore appends the broken messages that precede the update of
// tick k.
func brokenBefore(b *Builder, k int) {
	if k == 9 {
		// Every junk byte is a length of 100 or more: no offset inside it
		// can start a message, and the update that follows holds four
		// well-formed set_motor messages, where the decoder resumes.
		b.Garbage([]byte{0xc8, 0xff, 0x81, 0xe0, 0x9a, 0x64, 0xee})
	}
}

// brokenAfter appends the unusual messages that follow the update of tick
// k.
func brokenAfter(b *Builder, k int) {
	switch k {
	case 3:
		b.ZeroLength()
	case 5:
		b.WrongLength(CodeSetMotor, 2, 0)
	case 7:
		b.Unknown(9, 0x12, 0x34)
	case 11:
		b.WrongLength(CodeLamp, 1, 1)
	case 13:
		b.AbortArgs(0xde, 0xad)
	case 15:
		b.Translate(3, 1)
	case 17:
		b.SetMotor(9, 0, 128)
	}
}

// WikiOptions shape a generated wiki session. Zero fields take defaults.
type WikiOptions struct {
	Seed   uint64
	Ticks  int           // control updates (default 40)
	Period time.Duration // default 100 ms
	Int    IntWidth      // Int32 when zero
	// Broken adds malformed and unusual packets (see [NewWikiSession]).
	Broken bool
}

// NewWikiSession generates a host's wiki-format packets to the ROV, one per
// datagram: relay 1 (lights) on; every period a speed motor packet for one
// of motors 0-3 in turn (speed 0..1, a direction, a duration in cycles),
// every 4 updates a position motor packet for the camera tilt servo (motor
// 6), every 5 updates a sensor data packet (pressure: type 1, id 0, 4 data
// bytes; temperature: type 2, id 3, ASCII text) — the host relays what it
// receives, as a test would; relay 1 off at the end. Sequence numbers
// start at 250 and wrap; priorities are 0-3. Durations include -1 and,
// with int32, 40000 (over an int16).
//
// With Broken (Ticks at least 20): an unknown type 7 (tick 2), a speed
// motor packet cut inside its speed (tick 6), a relay packet with 2 extra
// bytes (tick 10), a 2-byte datagram (tick 14) and a relay packet whose
// enable byte is 2 (tick 18).
func NewWikiSession(o WikiOptions) *WikiSession {
	if o.Ticks <= 0 {
		o.Ticks = 40
	}
	if o.Period <= 0 {
		o.Period = 100 * time.Millisecond
	}
	r := NewRand(o.Seed)
	f := WikiFlow{W: Wiki{Int: o.Int}}
	seq := byte(250)
	next := func() byte { s := seq; seq++; return s }
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	t := us(100 + r.IntN(200))
	f.Relay(t, 1, next(), 1, true)
	for k := range o.Ticks {
		t += o.Period + us(r.IntN(4000)) - us(2000)
		motor := byte(k % 4)
		speed := float32(float64(r.IntN(1001)) / 1000)
		dur := int32(10 + r.IntN(500))
		switch k {
		case 5:
			dur = -1
		case 9:
			if f.W.width() == Int32 {
				dur = 40000
			}
		}
		f.SpeedMotor(t, byte(k%3), next(), motor, r.IntN(4) != 0, speed, dur)
		if k%4 == 1 {
			deg := float32(float64(r.IntN(9001)-4500) / 100)
			f.PositionMotor(t+us(300), 2, next(), 6, deg, 0.5)
		}
		if k%5 == 2 {
			if k%10 == 2 {
				f.SensorData(t+us(600), 0, next(), 1, 0, []byte{byte(r.IntN(256)), byte(r.IntN(256)), 0x01, 0x00})
			} else {
				f.SensorData(t+us(600), 0, next(), 2, 3, fmt.Appendf(nil, "%d.%dC", 18+r.IntN(6), r.IntN(10)))
			}
		}
		if o.Broken {
			bt := t + us(900)
			switch k {
			case 2:
				f.Unknown(bt, 7, 3, next(), []byte{0x01, 0x02, 0x03})
			case 6:
				f.Cut(bt, 1, next(), 2, true, 0.75, 100, 4)
			case 10:
				f.Extra(bt, 1, next(), 2, true, []byte{0xaa, 0xbb})
			case 14:
				f.ShortHeader(bt, WikiRelay, 3)
			case 18:
				f.RelayByte(bt, 1, next(), 1, 2)
			}
		}
	}
	t += o.Period
	f.Relay(t, 1, next(), 1, false)
	s, err := f.Finish()
	if err != nil {
		panic(err)
	}
	return s
}

// Rand is a small deterministic random source (SplitMix64), used instead of
// math/rand so that the generated bytes depend on nothing but this code.
type Rand struct{ s uint64 }

// NewRand returns a source seeded with seed.
func NewRand(seed uint64) *Rand { return &Rand{s: seed ^ 0x6e657074756e6521} }

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// IntN returns a number in [0, n) (n > 0).
func (r *Rand) IntN(n int) int { return int(r.Uint64() % uint64(n)) }
