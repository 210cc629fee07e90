package dissect

// runPlain is run's loop for the common case, small so that its variables
// stay in registers: no held bytes with times of their own (every message
// takes t), no resync, no skipped run to flush. It parses and emits whole
// messages from rest and returns how many bytes they took, k. With parsed,
// it stopped at a result of Parse that is not a whole message, n and err,
// for run to act on at rest[k:]; without, something else ended it: the
// bytes, the sink's error, or a state that needs run's care.
func (s *Stream) runPlain(d *dirState, dir Dir, t Stamp, rest []byte) (k, n int, err error, parsed bool) {
	c := &s.ctx
	for {
		if k == len(rest) || s.err != nil || d.needSync || d.skipLen > 0 || d.th < len(d.times) {
			return k, 0, nil, false
		}
		b := rest[k:]
		c.Offset = d.next
		s.rec.Reset()
		n, err = s.parser.Parse(c, b)
		if err != nil || n <= 0 || n > len(b) {
			return k, n, err, true
		}
		if !s.countOnly || !s.countMessage(dir) { // emitMessage, its steps here: counting passes little
			s.sendMessage(dir, t, d.next, b[:n])
		}
		d.next += int64(n)
		k += n
	}
}
