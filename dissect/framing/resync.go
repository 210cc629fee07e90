package framing

import (
	"bytes"
	"errors"
)

// FrameFunc frames and decodes the message at b[0], as a parser's Parse
// does: (n, nil) for a whole message of n bytes; (need, ErrShort) when b
// ends first; (0, err) when b cannot start one.
type FrameFunc func(b []byte) (int, error)

// Verdict is the judgement of a resync candidate.
type Verdict uint8

// Verdicts of [Framer.Judge].
const (
	Reject Verdict = iota // no message starts there
	Wait                  // more bytes are needed to judge
	Accept                // messages start there
)

// Resync looks for the first offset of b at which messages plausibly
// start again, with the contract of dissect.Parser.Sync: (i, true) when
// found; (k, false) when nothing starts before k and b[k:] must wait for
// more bytes. A candidate is a place where the sync word is (every
// offset when there is none); it is accepted when one message framed
// there has a right check of 16 bits or more, else when Confirm messages
// in a row frame; rejected at the first that does not, and the search goes
// on from the next byte. last says no byte will follow b: a candidate
// that would wait is judged now (accepted when the messages it has
// reach the end of b whole, else passed over).
func (fr *Framer) Resync(b []byte, last bool, frame FrameFunc) (int, bool) {
	sync := fr.f.Sync
	i := 0
	for i < len(b) {
		if len(sync) > 0 {
			j := bytes.Index(b[i:], sync)
			if j < 0 {
				// keep a tail of b that may be the start of the sync word
				return len(b) - partial(b[max(i, len(b)-len(sync)+1):], sync), false
			}
			i += j
		}
		switch fr.Judge(b[i:], last, frame) {
		case Accept:
			return i, true
		case Wait:
			if !last {
				return i, false
			}
		}
		i++
	}
	return len(b), false
}

// partial returns the length of the longest tail of b that is a proper
// prefix of sync.
func partial(b, sync []byte) int {
	for k := min(len(b), len(sync)-1); k > 0; k-- {
		if b[len(b)-k] == sync[0] && bytes.Equal(b[len(b)-k:], sync[:k]) {
			return k
		}
	}
	return 0
}

// Judge judges the candidate at b[0], as Resync does.
func (fr *Framer) Judge(b []byte, last bool, frame FrameFunc) Verdict {
	want := fr.f.Confirm
	if fr.HasCheck() && fr.width >= 2 {
		want = 1 // one chance in 65536 or less of a right check by accident
	}
	off := 0
	for n := 0; n < want; n++ {
		m, err := frame(b[off:])
		switch {
		case err == nil && m > 0 && m <= len(b)-off:
			off += m
		case errors.Is(err, ErrShort):
			if last && n > 0 && off == len(b) {
				return Accept
			}
			return Wait
		default:
			return Reject
		}
	}
	return Accept
}
