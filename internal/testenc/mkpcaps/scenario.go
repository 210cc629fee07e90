package main

import (
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// handshakeTime is when the session's clock starts: after SYN, SYN-ACK, ACK.
const handshakeTime = 300 * time.Microsecond

// packet is one TCP segment of a generated capture.
type packet struct {
	at  time.Duration // since the capture's base time
	seg pktbuild.Segment
	dir int // sender: deltaenc.Client or deltaenc.Server
	// data segments: the byte range [start,end) of the sender's session
	// stream that the payload carries.
	data       bool
	start, end int64
}

const (
	actData = iota
	actAck
	actFin
)

type action struct {
	at         time.Duration
	kind       int
	dir        int
	start, end int64
}

// conversation turns a session into the segments of one TCP connection:
// handshake, every write cut into 1-4 segments at random offsets (and at
// the offsets in cuts[dir]), delayed ACKs, and a FIN from each side.
func conversation(s *deltaenc.Session, seed uint64, client, server netip.AddrPort, cuts [2][]int64) []packet {
	r := deltaenc.NewRand(seed)
	var acts []action
	var last time.Duration
	for _, w := range s.Sends {
		at := handshakeTime + w.At
		n := w.End - w.Start
		points := map[int64]bool{}
		for range r.IntN(3 + int(n/80)) {
			points[w.Start+1+int64(r.IntN(int(n)))] = true
		}
		for _, c := range cuts[w.Dir] {
			if c > w.Start && c < w.End {
				points[c] = true
			}
		}
		offs := []int64{w.Start, w.End}
		for p := range points {
			if p < w.End {
				offs = append(offs, p)
			}
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		k := 0
		for i := 0; i+1 < len(offs); i++ {
			if offs[i] == offs[i+1] {
				continue
			}
			acts = append(acts, action{at: at + time.Duration(k)*12*time.Microsecond, kind: actData, dir: w.Dir, start: offs[i], end: offs[i+1]})
			k++
		}
		if r.IntN(5) < 3 {
			acts = append(acts, action{at: at + time.Duration(k*12+30+r.IntN(60))*time.Microsecond, kind: actAck, dir: w.Dir ^ 1})
		}
		last = max(last, at)
	}
	acts = append(acts,
		action{at: last + 300*time.Microsecond, kind: actFin, dir: deltaenc.Server},
		action{at: last + 420*time.Microsecond, kind: actFin, dir: deltaenc.Client},
		action{at: last + 470*time.Microsecond, kind: actAck, dir: deltaenc.Server},
	)
	sort.SliceStable(acts, func(i, j int) bool { return acts[i].at < acts[j].at })

	c := pktbuild.NewConn(client, server, uint32(r.Uint64()), uint32(r.Uint64()))
	var out []packet
	for i, seg := range c.Handshake() {
		out = append(out, packet{at: time.Duration(i) * 70 * time.Microsecond, seg: seg, dir: int(seg.From)})
	}
	for _, a := range acts {
		side := pktbuild.Side(a.dir)
		switch a.kind {
		case actData:
			seg := c.Send(side, s.Stream[a.dir][a.start:a.end])
			out = append(out, packet{at: a.at, seg: seg, dir: a.dir, data: true, start: a.start, end: a.end})
		case actAck:
			out = append(out, packet{at: a.at, seg: c.Ack(side), dir: a.dir})
		case actFin:
			out = append(out, packet{at: a.at, seg: c.Fin(side), dir: a.dir})
		}
	}
	// Keep timestamps strictly increasing.
	for i := 1; i < len(out); i++ {
		if out[i].at <= out[i-1].at {
			out[i].at = out[i-1].at + time.Microsecond
		}
	}
	return out
}

// deliverable returns, for each byte of direction dir (offsets relative to
// base), the index of the packet after which an in-order reassembly can
// hand it over: the latest first arrival of it and of every byte before it.
// Bytes at or after a byte that never arrives get -1 (when the reassembly
// gives up on the gap is its own choice).
func deliverable(pkts []packet, dir int, base, n int64) []int {
	first := make([]int, n)
	for i := range first {
		first[i] = -1
	}
	for i, p := range pkts {
		if !p.data || p.dir != dir {
			continue
		}
		for b := max(p.start, base); b < p.end; b++ {
			if first[b-base] < 0 {
				first[b-base] = i
			}
		}
	}
	out := make([]int, n)
	hi := 0
	for b := range first {
		if first[b] < 0 || hi < 0 {
			hi = -1
		} else {
			hi = max(hi, first[b])
		}
		out[b] = hi
	}
	return out
}

// setRTT settles whether each pong expects rtt_ms in this capture: yes when
// the ping record with its id is emitted after an earlier packet than the
// pong (records are emitted once byte Ready-1 is delivered), no when there
// is no such ping record or it comes later, not asserted when the ping's
// delivery depends on how the reassembly handles a gap.
func setRTT(msgs *[2][]deltaenc.Message, del [2][]int) {
	ping := map[uint64]int{}
	for _, m := range msgs[deltaenc.Server] {
		if m.Type == deltaenc.TypePing {
			ping[m.PingID] = del[deltaenc.Server][m.Ready-1]
		}
	}
	for i := range msgs[deltaenc.Client] {
		m := &msgs[deltaenc.Client][i]
		if m.Type != deltaenc.TypePong {
			continue
		}
		q := del[deltaenc.Client][m.Ready-1]
		p, ok := ping[m.PingID]
		switch {
		case !ok:
			m.RTT = truth.No
		case p < 0 || q < 0:
			m.RTT = truth.Any
		case p < q:
			m.RTT = truth.Yes
		default:
			m.RTT = truth.No
		}
	}
}

// sample is one generated capture and its truth.
type sample struct {
	name    string
	comment string // what the capture holds, for the truth file
	pkts    []packet
	streams [2][]byte // bytes of each direction as captured (from its first captured byte)
	truth   [2][]deltaenc.Message
	dir0    int // role whose direction dissect numbers 0
}

// newSample builds a sample from a session and its packets (not cut).
func newSample(name, comment string, s *deltaenc.Session, pkts []packet) *sample {
	sm := &sample{name: name, comment: comment, pkts: pkts, streams: s.Stream}
	sm.truth[0] = append([]deltaenc.Message(nil), s.Truth[0]...)
	sm.truth[1] = append([]deltaenc.Message(nil), s.Truth[1]...)
	sm.settle([2]int64{})
	return sm
}

// settle recomputes rtt_ms expectations and dissect's direction numbering.
func (sm *sample) settle(base [2]int64) {
	var del [2][]int
	for d := range 2 {
		del[d] = deliverable(sm.pkts, d, base[d], int64(len(sm.streams[d])))
	}
	setRTT(&sm.truth, del)
	sm.dir0 = sm.pkts[0].dir // the SYN sender, or the first sender seen
}

// check verifies that the packets carry exactly the bytes the truth
// describes (no byte of a direction missing except where a gap record
// says so).
func (sm *sample) check(base [2]int64) error {
	for d := range 2 {
		n := int64(len(sm.streams[d]))
		seen := make([]bool, n)
		for _, p := range sm.pkts {
			if p.data && p.dir == d {
				for b := max(p.start, base[d]); b < p.end; b++ {
					seen[b-base[d]] = true
				}
			}
		}
		var off int64
		for _, m := range sm.truth[d] {
			if m.Offset != off {
				return fmt.Errorf("%s %s: records do not tile at %d", sm.name, deltaenc.RoleName(d), off)
			}
			for b := m.Offset; b < m.End(); b++ {
				if seen[b] == (m.Type == deltaenc.TypeGap) {
					return fmt.Errorf("%s %s: byte %d captured %v in a %s record", sm.name, deltaenc.RoleName(d), b, seen[b], m.Type)
				}
			}
			off = m.End()
		}
		if off != n {
			return fmt.Errorf("%s %s: records end at %d of %d", sm.name, deltaenc.RoleName(d), off, n)
		}
	}
	return nil
}

// withLoss drops one server data segment (capture loss: the client got it,
// its ACKs cover it), duplicates an earlier server segment a little later
// (a retransmission) and swaps two later adjacent server segments (out of
// order).
func withLoss(name, comment string, s *deltaenc.Session, pkts []packet) (*sample, error) {
	n := int64(len(s.Stream[deltaenc.Server]))
	isServerData := func(p packet) bool { return p.data && p.dir == deltaenc.Server }
	// Prefer a segment that starts and ends inside messages, so that the
	// capture shows both a message cut by the gap and a resynchronisation.
	lost := -1
	var truth []deltaenc.Message
	for pass := range 2 {
		for i, p := range pkts {
			if lost >= 0 || !isServerData(p) || p.start < n*45/100 || p.end > n*75/100 {
				continue
			}
			t, err := deltaenc.ApplyGap(s.Stream[deltaenc.Server], s.Truth[deltaenc.Server], p.start, p.end)
			if err != nil {
				continue
			}
			before, after := false, false
			for _, m := range t {
				before = before || m.Type == deltaenc.TypeSkipped && m.End() == p.start
				after = after || m.Type == deltaenc.TypeSkipped && m.Offset == p.end
			}
			if pass == 1 || before && after && p.end-p.start >= 12 {
				lost, truth = i, t
			}
		}
	}
	swap := -1
	for i := lost + 4; i+1 < len(pkts); i++ {
		if isServerData(pkts[i]) && isServerData(pkts[i+1]) && pkts[i].end == pkts[i+1].start {
			swap = i
			break
		}
	}
	re := -1
	for i, p := range pkts {
		if isServerData(p) && p.start > n*20/100 && i+3 < lost {
			re = i
			break
		}
	}
	if lost < 0 || swap < 0 || re < 0 {
		return nil, fmt.Errorf("%s: no segment to drop (%d), swap (%d) or retransmit (%d)", name, lost, swap, re)
	}
	var out []packet
	for i, p := range pkts {
		switch {
		case i == lost:
			continue
		case i == swap:
			a, b := pkts[i+1], pkts[i]
			a.at, b.at = pkts[i].at, pkts[i+1].at
			out = append(out, a, b)
			continue
		case i == swap+1:
			continue
		}
		out = append(out, p)
		if i == re+2 {
			dup := pkts[re]
			dup.at = p.at + (pkts[i+1].at-p.at)/2
			out = append(out, dup)
		}
	}
	sm := &sample{name: name, comment: comment, pkts: out, streams: s.Stream}
	sm.truth[deltaenc.Client] = append([]deltaenc.Message(nil), s.Truth[deltaenc.Client]...)
	sm.truth[deltaenc.Server] = truth
	sm.settle([2]int64{})
	return sm, sm.check([2]int64{})
}

// midstream returns a capture of s that starts with a server segment
// beginning inside a message (at a byte pair with an undefined size code,
// so the decoder must resynchronise) about a third into the server's
// stream; the client's direction starts with its first segment after that.
// No SYN is captured.
func midstream(name, comment string, s *deltaenc.Session, seed uint64, client, server netip.AddrPort) (*sample, error) {
	sv := s.Stream[deltaenc.Server]
	var cut int64 = -1
	var sTruth []deltaenc.Message
	var sBytes []byte
	for at := int64(len(sv)) / 3; at < int64(len(sv)); at++ {
		b, m, err := deltaenc.Cut(sv, s.Truth[deltaenc.Server], at)
		if err == nil && m[0].Type == deltaenc.TypeSkipped {
			cut, sTruth, sBytes = at, m, b
			break
		}
	}
	if cut < 0 {
		return nil, fmt.Errorf("%s: no mid-message cut", name)
	}
	var cuts [2][]int64
	cuts[deltaenc.Server] = []int64{cut}
	all := conversation(s, seed, client, server, cuts)
	i0 := -1
	for i, p := range all {
		if p.data && p.dir == deltaenc.Server && p.start == cut {
			i0 = i
			break
		}
	}
	if i0 < 0 {
		return nil, fmt.Errorf("%s: no segment starts at %d", name, cut)
	}
	pkts := all[i0:]
	var base [2]int64
	base[deltaenc.Server] = cut
	base[deltaenc.Client] = int64(len(s.Stream[deltaenc.Client]))
	for _, p := range pkts {
		if p.data && p.dir == deltaenc.Client {
			base[deltaenc.Client] = p.start
			break
		}
	}
	cb, cTruth, err := deltaenc.Cut(s.Stream[deltaenc.Client], s.Truth[deltaenc.Client], base[deltaenc.Client])
	if err != nil {
		return nil, fmt.Errorf("%s: client: %w", name, err)
	}
	sm := &sample{name: name, comment: comment, pkts: pkts}
	sm.streams[deltaenc.Server], sm.streams[deltaenc.Client] = sBytes, cb
	sm.truth[deltaenc.Server], sm.truth[deltaenc.Client] = sTruth, cTruth
	sm.settle(base)
	return sm, sm.check(base)
}
