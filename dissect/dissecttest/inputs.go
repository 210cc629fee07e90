package dissecttest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
)

// This file holds what Conformance feeds a stream: the deliveries of an
// input (how its bytes are cut into calls) and the random and mutated
// inputs it makes from the seed.

// step is one call of a plan.
type step struct {
	Unit
	// last marks the last call of an input unit: the clock moves on after
	// it, so the pieces of one unit share its time whatever the cutting.
	last bool
}

// plan is the calls of one run.
type plan struct{ steps []step }

// size returns the bytes given in each direction, gaps included.
func (p plan) size() [2]int64 {
	var n [2]int64
	for _, s := range p.steps {
		n[s.Dir] += int64(len(s.Data)) + s.Gap
	}
	return n
}

// longest returns the bytes of the direction given the most.
func (p plan) longest() int {
	n := p.size()
	return int(max(n[0], n[1]))
}

// Delivery names.
const (
	whole       = "whole (each direction in one call)"
	inUnits     = "in its units"
	inChunks    = "in random chunks"
	withGap     = "with a gap"
	asDatagrams = "as datagrams"
)

type delivery struct {
	name string
	plan func(units []Unit, rng *rand.Rand) plan
}

// deliveries returns the ways an input is given over tr: datagrams as they
// are on UDP; on a byte stream, each direction whole, the input's units,
// random chunks, and the units with a random run of bytes never captured.
// The input's units come before the chunks, which are compared with them.
func deliveries(tr dissect.Transport) []delivery {
	if tr == dissect.UDP {
		return []delivery{{asDatagrams, planUnits}}
	}
	return []delivery{{whole, planWhole}, {inUnits, planUnits}, {inChunks, planChunks}, {withGap, planGap}}
}

func planUnits(units []Unit, _ *rand.Rand) plan {
	p := plan{steps: make([]step, len(units))}
	for i, u := range units {
		p.steps[i] = step{u, true}
	}
	return p
}

// planWhole gives direction 0, then direction 1, each in as few calls as
// its gaps allow.
func planWhole(units []Unit, _ *rand.Rand) plan {
	var p plan
	for d := dissect.Dir(0); d < 2; d++ {
		var buf []byte
		flush := func() {
			if len(buf) > 0 {
				p.steps = append(p.steps, step{Unit{Dir: d, Data: buf}, true})
				buf = nil
			}
		}
		for _, u := range units {
			if u.Dir != d {
				continue
			}
			if u.Gap > 0 {
				flush()
				p.steps = append(p.steps, step{u, true})
				continue
			}
			buf = append(buf, u.Data...)
		}
		flush()
	}
	return p
}

// chunkSizes bound the chunks of planChunks: each chunk is at most
// 1+IntN(m) bytes for m drawn from them.
var chunkSizes = [...]int{1, 2, 3, 5, 8, 13, 64, 1448}

func planChunks(units []Unit, rng *rand.Rand) plan {
	var p plan
	for _, u := range units {
		if u.Gap > 0 || len(u.Data) == 0 {
			p.steps = append(p.steps, step{u, true})
			continue
		}
		for b := u.Data; len(b) > 0; {
			n := min(len(b), 1+rng.IntN(chunkSizes[rng.IntN(len(chunkSizes))]))
			p.steps = append(p.steps, step{Unit{Dir: u.Dir, Data: b[:n]}, n == len(b)})
			b = b[n:]
		}
	}
	return p
}

// planGap gives the units, but a random run of one unit's bytes is a gap.
func planGap(units []Unit, rng *rand.Rand) plan {
	p := planUnits(units, nil)
	var cand []int
	for i, u := range units {
		if len(u.Data) > 0 {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		return p
	}
	i := cand[rng.IntN(len(cand))]
	u := units[i]
	a := rng.IntN(len(u.Data))
	b := a + 1 + rng.IntN(len(u.Data)-a)
	var repl []step
	if a > 0 {
		repl = append(repl, step{Unit{Dir: u.Dir, Data: u.Data[:a]}, false})
	}
	repl = append(repl, step{Unit{Dir: u.Dir, Gap: int64(b - a)}, b == len(u.Data)})
	if b < len(u.Data) {
		repl = append(repl, step{Unit{Dir: u.Dir, Data: u.Data[b:]}, true})
	}
	p.steps = append(p.steps[:i], append(repl, p.steps[i+1:]...)...)
	return p
}

// randomInput makes an input of 1 to 8 units of random bytes, in random
// directions: mostly short, some up to 600 bytes, some drawn from bytes
// that often mean something (0, 1, 0x7f, 0x80, 0xff).
func randomInput(rng *rand.Rand, tr dissect.Transport, i int) Input {
	in := Input{Name: fmt.Sprintf("random #%d", i), Transport: tr}
	for range 1 + rng.IntN(8) {
		n := rng.IntN(65)
		if rng.IntN(8) == 0 {
			n = rng.IntN(601)
		}
		b := make([]byte, n)
		special := rng.IntN(3) == 0
		for k := range b {
			if special {
				b[k] = specialBytes[rng.IntN(len(specialBytes))]
			} else {
				b[k] = byte(rng.Uint32())
			}
		}
		in.Units = append(in.Units, Unit{Dir: dissect.Dir(rng.IntN(2)), Data: b})
	}
	return in
}

var specialBytes = [...]byte{0, 0, 1, 0x7f, 0x80, 0xff, 0xff}

// mutateWindow is the most units of a valid input a mutated one keeps:
// a mutation's effect shows within a few messages, and a whole session
// would mostly repeat what its valid run checked.
const mutateWindow = 24

// mutate makes an input from one of valid (chosen at random): a window of
// its units (from the first, half the time, so that handshakes stay), with
// one to three mutations, each named in the input's name.
func mutate(rng *rand.Rand, valid []Input, i int) Input {
	base := valid[rng.IntN(len(valid))]
	from, to := 0, len(base.Units)
	if to > mutateWindow {
		if rng.IntN(2) == 0 {
			from = rng.IntN(to - mutateWindow + 1)
		}
		to = from + mutateWindow
	}
	units := make([]Unit, 0, to-from)
	for _, u := range base.Units[from:to] {
		units = append(units, Unit{Dir: u.Dir, Data: append([]byte(nil), u.Data...), Gap: u.Gap})
	}
	var did []string
	if from > 0 || to < len(base.Units) {
		did = append(did, fmt.Sprintf("units %d-%d", from, to-1))
	}
	for range 1 + rng.IntN(3) {
		var what string
		units, what = mutateOnce(rng, units, valid)
		did = append(did, what)
	}
	return Input{Name: fmt.Sprintf("%s mutated #%d (%s)", base.Name, i, strings.Join(did, "; ")), Transport: base.Transport, Units: units}
}

// mutateOnce applies one random mutation and says what it did.
func mutateOnce(rng *rand.Rand, units []Unit, valid []Input) ([]Unit, string) {
	var data []int
	for k, u := range units {
		if len(u.Data) > 0 {
			data = append(data, k)
		}
	}
	if len(data) == 0 {
		b := []byte{byte(rng.Uint32())}
		return append(units, Unit{Data: b}), fmt.Sprintf("unit %x added", b)
	}
	k := data[rng.IntN(len(data))]
	b := units[k].Data
	at := rng.IntN(len(b))
	switch rng.IntN(11) {
	case 0:
		bit := rng.IntN(8)
		b[at] ^= 1 << bit
		return units, fmt.Sprintf("unit %d byte %d bit %d flipped", k, at, bit)
	case 1:
		v := specialBytes[rng.IntN(len(specialBytes))]
		if rng.IntN(2) == 0 {
			v = byte(rng.Uint32())
		}
		b[at] = v
		return units, fmt.Sprintf("unit %d byte %d set to %02x", k, at, v)
	case 2:
		// A large length where a length field may be: 2 or 4 bytes,
		// either byte order.
		n := 2 + 2*rng.IntN(2)
		v := [...]byte{0xff, 0xff, 0x7f, 0xff}[rng.IntN(4)]
		for j := at; j < min(at+n, len(b)); j++ {
			b[j] = v
		}
		return units, fmt.Sprintf("unit %d bytes %d+%d set to %02x", k, at, n, v)
	case 3:
		ins := make([]byte, 1+rng.IntN(16))
		for j := range ins {
			ins[j] = byte(rng.Uint32())
		}
		units[k].Data = append(b[:at], append(ins, b[at:]...)...)
		return units, fmt.Sprintf("unit %d: %x inserted at %d", k, ins, at)
	case 4:
		end := at + 1 + rng.IntN(min(len(b)-at, 32))
		units[k].Data = append(b[:at], b[end:]...)
		return units, fmt.Sprintf("unit %d bytes %d-%d deleted", k, at, end)
	case 5:
		end := at + 1 + rng.IntN(min(len(b)-at, 64))
		dup := append([]byte(nil), b[at:end]...)
		units[k].Data = append(b[:end], append(dup, b[end:]...)...)
		return units, fmt.Sprintf("unit %d bytes %d-%d repeated", k, at, end)
	case 6:
		units[k].Data = b[:at]
		return units, fmt.Sprintf("unit %d cut to %d bytes", k, at)
	case 7:
		return append(units[:k], units[k+1:]...), fmt.Sprintf("unit %d dropped", k)
	case 8:
		dup := Unit{Dir: units[k].Dir, Data: append([]byte(nil), b...)}
		return append(units[:k+1], append([]Unit{dup}, units[k+1:]...)...), fmt.Sprintf("unit %d repeated", k)
	case 9:
		j := rng.IntN(len(units))
		units[k], units[j] = units[j], units[k]
		return units, fmt.Sprintf("units %d and %d swapped", k, j)
	default:
		// The tail of another valid unit in place of this one's.
		src := valid[rng.IntN(len(valid))]
		var from []byte
		if len(src.Units) > 0 {
			from = src.Units[rng.IntN(len(src.Units))].Data
		}
		cut := 0
		if len(from) > 0 {
			cut = rng.IntN(len(from))
		}
		units[k].Data = append(b[:at], from[cut:]...)
		return units, fmt.Sprintf("unit %d from byte %d replaced by bytes %d- of a unit of %q", k, at, cut, src.Name)
	}
}
