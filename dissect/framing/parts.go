package framing

import (
	"bytes"
	"fmt"
)

// The parts of Frame, for protocols whose quirks need them apart: one
// that decodes a frame whose check is wrong (Size, then Sums), or
// accepts a frame under either of two scopes of its check (two Framers).

// Size reads the frame at b[0] up to its size: the sync word, then the
// fixed size or the length field. It returns (n, nil) when the frame
// takes n bytes (n may exceed len(b); 0: the framing does not say the
// size); (0, ErrShort) when b ends before the size is known; or
// (0, *Bad) when b cannot start a frame. The check is not looked at.
func (fr *Framer) Size(b []byte) (int, error) {
	f := &fr.f
	if len(f.Sync) > 0 {
		k := min(len(b), len(f.Sync))
		if !bytes.Equal(b[:k], f.Sync[:k]) {
			return 0, &Bad{0, fmt.Sprintf("no sync word % x", f.Sync)}
		}
		if k < len(f.Sync) {
			return 0, ErrShort
		}
	}
	l := f.Length
	if l == nil {
		return f.Size, nil
	}
	end := l.Offset + l.Width
	if len(b) < end {
		return 0, ErrShort
	}
	var v uint64
	if l.Width == 1 { // the usual length byte, without the loop
		v = uint64(b[l.Offset])
	} else {
		v = readUint(b[l.Offset:end], l.Order)
	}
	total := int64(v) + l.Adjust
	if v > 1<<40 || total < int64(fr.minLen) || total > int64(f.Max) {
		return 0, fr.badLength(v, total)
	}
	return int(total), nil
}

// Sums returns a whole frame's check: the value the frame carries and
// the value its bytes give (both 0 when the framing has no check or the
// frame is shorter than the check needs). The frame is right when they
// are equal.
func (fr *Framer) Sums(frame []byte) (have, want uint64) {
	c := fr.f.Check
	if c == nil || len(frame) < fr.minLen {
		return 0, 0
	}
	at := fr.at(len(frame))
	return readUint(frame[at:at+fr.width], c.Order), fr.sum(frame[c.From : len(frame)+c.To])
}

// Hunt returns the offset of the first sync word in b (with true); when
// b holds none, the offset of the tail of b that may be the start of one
// (with false: judge it again with more bytes), len(b) when none may.
// Without a sync word every offset may start a frame: (0, true).
func (fr *Framer) Hunt(b []byte) (int, bool) {
	sync := fr.f.Sync
	if j := bytes.Index(b, sync); j >= 0 {
		return j, true
	}
	return len(b) - partial(b[max(0, len(b)-len(sync)+1):], sync), false
}
