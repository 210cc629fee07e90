package roboidenc

import (
	"time"
)

// SpecTypical returns one value for each data type of the spec's tables
// "Currently implemented data types" and "Typical data types", written with
// the spec's bytes (0x62, 0x48, 0x88, 0x83, 0xD4, 0xE5, 0xF5), whatever
// their labels say (protocols.md §3.3: four of the labels disagree with the
// bits; the bits are encoded).
func SpecTypical() []ValueTruth {
	return []ValueTruth{
		V(SemLinearVelocity, []float64{90}, F16(1.5)),            // 0x62 polar velocity, 2-byte distance
		V(SemDirection, []float64{45}, NoMag()),                  // 0x48 2D direction
		V(SemDirection, []float64{30, -10}, NoMag()),             // 0x88 3D direction
		V(SemLinearAcceleration, []float64{120, 60}, NoMag()),    // 0x83 "spherical position" (bits: linear acceleration)
		V(4, []float64{10, 20, 30}, U8(200)),                     // 0xD4 "quaternion" (semantics 4 undefined)
		V(SemOrientation, []float64{0, 90, 180}, F16(0.25)),      // 0xE5 "angle-axis" (bits: orientation)
		V(SemOrientation, []float64{-45, 135, 270}, F32(3.1416)), // 0xF5 "angle-axis, float" (bits: orientation)
	}
}

// SpecSyntax returns one value for each row of the spec's size table
// ("A few examples"), whose data types are high-nibble syntax values (0x1,
// 0x4, 0x5, 0xD, 0x2 written "0002", 0xB), each completed with the
// semantics its description suggests: 0x10 a 1-byte intensity (no
// semantics fits: 0, undefined), 0x45 an angle, 0x51 a polar position,
// 0xD5 a quaternion, 0x21 a 16-bit distance, 0xB1 a spherical position with
// a 32-bit distance.
func SpecSyntax() []ValueTruth {
	return []ValueTruth{
		V(0, nil, U8(180)),
		V(SemOrientation, []float64{270}, NoMag()),
		V(SemPosition, []float64{120}, U8(42)),
		V(SemOrientation, []float64{5, -5, 90}, U8(255)),
		V(SemPosition, nil, U16(1234)),
		V(SemPosition, []float64{-30, 60}, F32(12.5)),
	}
}

// SpecLiteral returns the size table's data types read literally as whole
// bytes (0x01, 0x04, 0x05, 0x0D, 0x02, 0x0B): no angle and no magnitude,
// so zero value bytes each; semantics 4, 13 and 11 are undefined.
func SpecLiteral() []ValueTruth {
	return []ValueTruth{Lit(0x01), Lit(0x04), Lit(0x05), Lit(0x0D), Lit(0x02), Lit(0x0B)}
}

// Undefined returns values with undefined semantics 0, 4, 15 and 9.
func Undefined() []ValueTruth {
	return []ValueTruth{
		V(0, []float64{180}, NoMag()),           // 0x40
		V(4, []float64{1.40625, 2.8125}, U8(7)), // 0x94
		V(15, []float64{359}, F16(-2)),          // 0x6f
		V(9, nil, U16(0xBEEF)),                  // 0x29
	}
}

// Options shape a generated session. Zero fields take defaults.
type Options struct {
	Seed   uint64
	Ticks  int           // pose updates of the client (default 40)
	Period time.Duration // default 50 ms
	// Broken adds malformed and unusual messages (see [NewSession]).
	Broken bool
}

// NewSession generates a flow between a client (a rover) and a Roboid
// Site, following the README's Network Sync Protocol: the client sends
// Client, the site answers NetworkId 5; the client's first Pose of thing 1
// (position 0xB1 spherical with a float32 distance, orientation 0xD5) makes
// the site send Investigate, answered by NewThing (type 2) and ModelURL;
// the site's Pose of its own thing (network 0, thing 1) makes the client
// investigate it in turn (NewThing type 7, no ModelURL: the site sends
// none). Then every period the client sends a Pose of thing 1 (position,
// orientation, polar velocity 0x62), every third a Pose of thing 2 (a
// heading, 0x48), and the site every fourth a Pose of its thing. At fixed
// updates the client sends things 3-6 with the spec's typical data types
// (tick 2), the size table's examples as high nibbles (tick 4) and as
// literal bytes (tick 6), and undefined semantics (tick 8); each new thing
// is investigated by the site.
//
// With Broken (Ticks at least 20): an unknown message id 0x42 (tick 10,
// client), a site Pose whose values end with the extension data type 0x00
// and 3 more bytes (tick 12), a client Pose whose float magnitude value
// 0xF5 is cut after 4 of its 7 bytes (tick 14), a 2-byte Pose [0x10, 5]
// (tick 16) and a Pose with ids but no values (tick 18).
func NewSession(o Options) *Session {
	if o.Ticks <= 0 {
		o.Ticks = 40
	}
	if o.Period <= 0 {
		o.Period = 50 * time.Millisecond
	}
	r := newRand(o.Seed)
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	var f Flow
	const net = 5
	t := us(100 + r.IntN(200))
	f.Client(Client, t)
	t += us(800 + r.IntN(400))
	f.NetworkID(Site, t, net)

	pose1 := func(k int) []ValueTruth {
		// A rover driving a circle around the origin: integers only,
		// converted by correctly rounded operations.
		dist := float32(float64(2000+r.IntN(50)) / 1000)
		heading := float64((k * 9) % 360)
		return []ValueTruth{
			V(SemPosition, []float64{heading, float64(r.IntN(5)) - 2}, F32(dist)),
			V(SemOrientation, []float64{heading + 90, 0, float64(r.IntN(7) - 3)}, U8(byte(200+r.IntN(56)))),
			V(SemLinearVelocity, []float64{heading + 90}, F16(float32(float64(400+r.IntN(200))/1000))),
		}
	}
	t += us(2000 + r.IntN(1000))
	f.Pose(Client, t, net, 1, pose1(0)...)
	t += us(700 + r.IntN(300))
	f.Investigate(Site, t, net, 1)
	t += us(600 + r.IntN(300))
	f.NewThing(Client, t, net, 1, 0x02)
	f.ModelURL(Client, t+us(40), net, 1, "https://models.example.org/rover.obj")
	t += us(1500)
	f.Pose(Site, t, 0, 1, V(SemPosition, []float64{0}, U8(0)), V(SemDirection, []float64{180}, NoMag()))
	t += us(600 + r.IntN(300))
	f.Investigate(Client, t, 0, 1)
	t += us(600 + r.IntN(300))
	f.NewThing(Site, t, 0, 1, 0x07)

	extra := map[int][]ValueTruth{2: SpecTypical(), 4: SpecSyntax(), 6: SpecLiteral(), 8: Undefined()}
	for k := 1; k <= o.Ticks; k++ {
		t += o.Period + us(r.IntN(2000)) - us(1000)
		f.Pose(Client, t, net, 1, pose1(k)...)
		if k%3 == 0 {
			f.Pose(Client, t+us(150), net, 2, V(SemDirection, []float64{float64(r.IntN(360))}, NoMag()))
		}
		if vals, ok := extra[k]; ok {
			thing := byte(2 + k/2)
			f.Pose(Client, t+us(300), net, thing, vals...)
			f.Investigate(Site, t+us(900+r.IntN(300)), net, thing)
			f.NewThing(Client, t+us(1600+r.IntN(300)), net, thing, byte(0x10+k))
		}
		if k%4 == 0 {
			f.Pose(Site, t+us(2500), 0, 1, V(SemPosition, []float64{float64(k % 360)}, U8(byte(k))), V(SemDirection, []float64{180 + float64(k)}, NoMag()))
		}
		if o.Broken {
			bt := t + us(3000)
			switch k {
			case 10:
				f.Unknown(Client, bt, 0x42, []byte{net, 1, 0xde, 0xad})
			case 12:
				f.PoseExtension(Site, bt, 0, 1, []ValueTruth{V(SemDirection, []float64{90}, NoMag())}, []byte{0x07, 0x01, 0x02})
			case 14:
				f.PoseTruncated(Client, bt, net, 1, []ValueTruth{V(SemPosition, []float64{10}, U8(3))},
					V(SemOrientation, []float64{1, 2, 3}, F32(0.5)), 4)
			case 16:
				f.PoseShort(Client, bt, net)
			case 18:
				f.Pose(Client, bt, net, 7)
			}
		}
	}
	s, err := f.Finish()
	if err != nil {
		panic(err) // fixed scenario: an error is a bug here
	}
	return s
}

// rng is a small deterministic random source (SplitMix64), so that the
// generated bytes depend on nothing but this code.
type rng struct{ s uint64 }

func newRand(seed uint64) *rng { return &rng{s: seed ^ 0x726f626f69642121} }

func (r *rng) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (r *rng) IntN(n int) int { return int(r.Uint64() % uint64(n)) }
