package dissect

// This file holds content detection: the units a stream holds while no
// protocol is chosen, the Detect round over them, and the choice.

type unitKind uint8

const (
	unitData unitKind = iota
	unitDatagram
	unitGap
	unitEnd
)

// heldUnit is one call to a Stream entry point, kept while detection
// cannot decide and replayed once it has.
type heldUnit struct {
	kind unitKind
	dir  Dir
	t    Stamp
	data []byte // a copy
	n    int64  // gap length
}

// hold keeps a unit while detection cannot decide, then tries to decide.
func (s *Stream) hold(u heldUnit) {
	s.held = append(s.held, u)
	switch u.kind {
	case unitData:
		s.heldBytes[u.dir] += len(u.data)
	case unitDatagram:
		s.heldBytes[u.dir] += len(u.data)
		s.heldUnits[u.dir]++
	}
	s.detect(u.kind == unitGap || u.kind == unitEnd)
}

// detect runs content detection over the held prefix of each direction:
// the first Yes decides. It decides by default port (or for no protocol)
// when no protocol can still say Yes, when a gap or end made the prefix
// final (force), or when a direction holds MaxDetect bytes or
// MaxDetectDatagrams datagrams.
func (s *Stream) detect(force bool) {
	var prefix [2][]byte
	var cut [2]bool // a gap or end was seen: the prefix is final
	for _, u := range s.held {
		switch u.kind {
		case unitData:
			if !cut[u.dir] {
				prefix[u.dir] = append(prefix[u.dir], u.data...)
			}
		case unitDatagram:
			if prefix[u.dir] == nil {
				prefix[u.dir] = u.data
			}
			cut[u.dir] = true
		default:
			cut[u.dir] = true
		}
	}
	undecided := false
	for _, e := range s.reg.candidates(s.Info.Transport) {
		for d := Dir(0); d < 2; d++ {
			if len(prefix[d]) == 0 {
				continue
			}
			switch e.p.Detect(&s.Info, d, prefix[d]) {
			case Yes:
				s.decide(e)
				return
			case Maybe:
				if !cut[d] {
					undecided = true
				}
			}
		}
	}
	full := false
	for d := 0; d < 2; d++ {
		if s.heldBytes[d] >= s.lim.MaxDetect || s.heldUnits[d] >= s.lim.MaxDetectDatagrams {
			full = true
		}
	}
	if undecided && !force && !full {
		return
	}
	s.decide(s.reg.byPort(&s.Info))
}

// decide chooses e (nil: none yet; a byte stream then hunts for a sync
// point, see hunt.go) and replays the held units.
func (s *Stream) decide(e *entry) {
	s.choose(e)
	if e == nil && s.Info.Transport != UDP {
		s.startHunt()
	}
	held := s.held
	s.held = nil
	for _, u := range held {
		if s.err != nil {
			return
		}
		switch u.kind {
		case unitData:
			s.feed(u.dir, u.t, u.data)
		case unitDatagram:
			s.datagram(u.dir, u.t, u.data)
		case unitGap:
			s.gap(u.dir, u.t, u.n)
		case unitEnd:
			s.end(u.dir, u.t)
		}
	}
}

// choose ends detection with protocol e (nil: none).
func (s *Stream) choose(e *entry) {
	s.detecting = false
	if e != nil {
		s.proto = e.p
		s.pname = e.info.Proto
		s.parser = e.p.NewParser(&s.Info)
		for i := range s.dirs {
			if d := &s.dirs[i]; d.joined && d.end == 0 {
				d.needSync = true
			}
		}
	}
}
