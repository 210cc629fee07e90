// Package framing finds the frames of a byte stream from a description:
// a sync word (start-of-frame delimiter), a fixed size or a length field,
// and a check (a CRC with full parameters, or a sum) over a scope of the
// frame; and it resynchronises after damage by searching for a candidate
// and confirming it, with a valid check or with whole frames in a row.
//
// A [Framer] answers for one frame at a time and keeps no state, so one
// serves every stream of a protocol.
package framing

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dissect-tools/dissect/dissect/layout"
)

// Framing describes how frames are delimited and checked.
type Framing struct {
	// Sync is the bytes every frame starts with (an SFD); nil: none.
	Sync []byte
	// Size is the size of every frame; 0: a length field, or the layout,
	// says it.
	Size int
	// Length is the field that gives the frame's length.
	Length *Length
	// Check is the frame's check; nil: none.
	Check *Check
	// Max is the largest frame (0: DefaultMax). A length field that says
	// more is damage.
	Max int
	// Confirm is how many whole frames in a row confirm a resync
	// candidate when there is no check (0: 2). With a check, one frame
	// whose check is right confirms it.
	Confirm int
}

// Length is a length field.
type Length struct {
	Offset int          // of its first byte in the frame
	Width  int          // bytes, 1 to 8
	Order  layout.Order // byte order
	Adjust int64        // the frame's length is the value plus Adjust
}

// Check is a frame's check: its algorithm, the bytes it covers and where
// its value sits.
type Check struct {
	Kind CheckKind
	CRC  CRC // Kind CRCCheck
	// From and To bound the bytes covered: frame[From : len(frame)+To],
	// To <= 0 (From 2, To -2: after a 2-byte sync word, up to a 2-byte
	// check at the end).
	From, To int
	// At is the offset of the check's value in the frame: from the start
	// when >= 0, from the end when < 0 (-2: the last two bytes).
	At    int
	Order layout.Order // byte order of the value
}

// DefaultMax bounds frames whose description gives no Max.
const DefaultMax = 64 << 10

// Error is a description that cannot frame anything: Key names the
// description's setting ("length.width", "check.crc.width").
type Error struct {
	Key string
	Msg string
}

func (e *Error) Error() string { return e.Key + ": " + e.Msg }

// Framer frames with one compiled description.
type Framer struct {
	f      Framing
	crc    *crcTable
	width  int // bytes of the check's value
	minLen int // the least a frame may be
	// lenByte: a frame is a length byte at offset 0 and what it counts,
	// with no sync word and no check (Frame's fast path)
	lenByte bool
	adjust  int // the length's Adjust, for it
}

// ErrShort is returned by [Framer.Frame] when the bytes end before the
// frame does.
var ErrShort = errors.New("framing: frame not complete")

// Bad is bytes that cannot start a frame.
type Bad struct {
	Offset int
	Msg    string
}

func (e *Bad) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// New checks a description and compiles it.
func New(f Framing) (*Framer, error) {
	fr := &Framer{f: f}
	if len(f.Sync) > 64 {
		return nil, &Error{"sync", fmt.Sprintf("%d bytes: at most 64", len(f.Sync))}
	}
	if f.Max == 0 {
		fr.f.Max = DefaultMax
	}
	if f.Max < 0 || f.Max > 16<<20 {
		return nil, &Error{"max", fmt.Sprintf("%d: want 1 to %d", f.Max, 16<<20)}
	}
	if f.Confirm == 0 {
		fr.f.Confirm = 2
	}
	if f.Confirm < 0 || f.Confirm > 16 {
		return nil, &Error{"confirm", fmt.Sprintf("%d: want 1 to 16", f.Confirm)}
	}
	if f.Size < 0 || f.Size > fr.f.Max {
		return nil, &Error{"size", fmt.Sprintf("%d: want 1 to max (%d)", f.Size, fr.f.Max)}
	}
	if f.Size > 0 && f.Length != nil {
		return nil, &Error{"length", "a frame has a fixed size or a length field, not both"}
	}
	fr.minLen = len(f.Sync)
	if l := f.Length; l != nil {
		if l.Width < 1 || l.Width > 8 {
			return nil, &Error{"length.type", fmt.Sprintf("a length of %d bytes: want 1 to 8", l.Width)}
		}
		if l.Offset < 0 || l.Offset > 1024 {
			return nil, &Error{"length.at", fmt.Sprintf("%d: want 0 to 1024", l.Offset)}
		}
		if l.Adjust < -1<<20 || l.Adjust > 1<<20 {
			return nil, &Error{"length.adjust", fmt.Sprintf("%d: want -1048576 to 1048576", l.Adjust)}
		}
		fr.minLen = max(fr.minLen, l.Offset+l.Width)
	}
	if c := f.Check; c != nil {
		switch c.Kind {
		case CRCCheck:
			if err := c.CRC.validate(); err != nil {
				return nil, &Error{"check.crc", err.Error()}
			}
			fr.crc = newCRCTable(c.CRC)
			fr.width = (c.CRC.Width + 7) / 8
		case Sum8, Sum8Neg, Xor8:
			fr.width = 1
		case Fletcher8, Fletcher16:
			fr.width = 2
		default:
			return nil, &Error{"check", "no algorithm"}
		}
		if f.Size == 0 && f.Length == nil {
			return nil, &Error{"check", "a check needs the frame's size: give size or length"}
		}
		if c.From < 0 || c.From > 1024 || c.To > 0 || c.To < -1024 {
			return nil, &Error{"check.from", "the scope is frame[from : end+to], with 0 <= from <= 1024 and -1024 <= to <= 0"}
		}
		if c.At < -1024 || c.At > 1024 {
			return nil, &Error{"check.at", fmt.Sprintf("%d: want -1024 to 1024", c.At)}
		}
		need := c.From - c.To
		if c.At >= 0 {
			need = max(need, c.At+fr.width)
		} else {
			if -c.At < fr.width {
				return nil, &Error{"check.at", fmt.Sprintf("%d: the %d bytes of the check do not fit before the end", c.At, fr.width)}
			}
			need = max(need, -c.At)
		}
		fr.minLen = max(fr.minLen, need)
	}
	fr.lenByte = len(f.Sync) == 0 && f.Check == nil && f.Length != nil && f.Length.Offset == 0 && f.Length.Width == 1
	if fr.lenByte {
		fr.adjust = int(f.Length.Adjust)
	}
	if f.Size > 0 && f.Size < fr.minLen {
		return nil, &Error{"size", fmt.Sprintf("%d bytes cannot hold the sync word, length and check (%d)", f.Size, fr.minLen)}
	}
	if fr.minLen > fr.f.Max {
		return nil, &Error{"max", fmt.Sprintf("%d is less than the %d bytes a frame needs", fr.f.Max, fr.minLen)}
	}
	return fr, nil
}

// Framing returns the description, with its defaults filled in.
func (fr *Framer) Framing() Framing { return fr.f }

// Sized reports whether the framing says each frame's size (fixed or by
// a length field); when not, the message's layout says it.
func (fr *Framer) Sized() bool { return fr.f.Size > 0 || fr.f.Length != nil }

// HasCheck reports whether frames carry a check.
func (fr *Framer) HasCheck() bool { return fr.f.Check != nil }

// MinLen is the least bytes a frame takes.
func (fr *Framer) MinLen() int { return max(fr.minLen, 1) }

// Whole returns the size of the frame at b[0] when the framing is a
// length byte and what it counts (no sync word, no check) and b holds
// that whole, valid frame; else 0, and Frame says what there is. It is
// small enough to be inlined into a parser's loop.
func (fr *Framer) Whole(b []byte) int {
	if fr.lenByte && len(b) > 0 {
		if n := int(b[0]) + fr.adjust; n >= fr.minLen && n <= fr.f.Max && n <= len(b) {
			return n
		}
	}
	return 0
}

// Frame frames the bytes at b[0]. It returns (n, nil) for a whole frame
// of n bytes whose check is right, or (0, nil) when the framing does not
// say the size (not Sized: the sync word, if any, is right); (need,
// ErrShort) when b ends before the frame (need 0: not known yet); or
// (0, *Bad) when b cannot start a frame.
func (fr *Framer) Frame(b []byte) (int, error) {
	if n := fr.Whole(b); n > 0 { // a length byte's frame, whole: the common case
		return n, nil
	}
	n, err := fr.Size(b)
	if err != nil || n == 0 {
		return 0, err
	}
	if len(b) < n {
		return n, ErrShort
	}
	if fr.f.Check != nil {
		if err := fr.Verify(b[:n]); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func (fr *Framer) badLength(v uint64, total int64) *Bad {
	return &Bad{fr.f.Length.Offset, fmt.Sprintf("length %d gives a frame of %d bytes: want %d to %d", v, total, fr.minLen, fr.f.Max)}
}

// Verify checks a whole frame's check (nil when it has none).
func (fr *Framer) Verify(frame []byte) error {
	c := fr.f.Check
	if c == nil {
		return nil
	}
	if len(frame) < fr.minLen {
		return &Bad{0, fmt.Sprintf("a frame of %d bytes is shorter than its check needs (%d)", len(frame), fr.minLen)}
	}
	at := fr.at(len(frame))
	have := readUint(frame[at:at+fr.width], c.Order)
	if want := fr.sum(frame[c.From : len(frame)+c.To]); have != want {
		return &Bad{at, fmt.Sprintf("check mismatch: the frame says 0x%0*x, its bytes give 0x%0*x", 2*fr.width, have, 2*fr.width, want)}
	}
	return nil
}

func (fr *Framer) at(n int) int {
	if at := fr.f.Check.At; at < 0 {
		return n + at
	}
	return fr.f.Check.At
}

func (fr *Framer) sum(b []byte) uint64 {
	if fr.crc != nil {
		return fr.crc.sum(b)
	}
	return sumOf(fr.f.Check.Kind, b)
}

// Seal writes the length field and the check into a frame whose other
// bytes are in place (for encoders). The frame must be at least MinLen
// long.
func (fr *Framer) Seal(frame []byte) error {
	if len(frame) < fr.minLen || len(frame) > fr.f.Max {
		return fmt.Errorf("framing: a frame of %d bytes: want %d to %d", len(frame), fr.minLen, fr.f.Max)
	}
	if l := fr.f.Length; l != nil {
		v := int64(len(frame)) - l.Adjust
		if v < 0 || l.Width < 8 && v >= 1<<(8*l.Width) {
			return fmt.Errorf("framing: a frame of %d bytes does not fit its length field", len(frame))
		}
		putUint(frame[l.Offset:l.Offset+l.Width], uint64(v), l.Order)
	}
	if c := fr.f.Check; c != nil {
		at := fr.at(len(frame))
		putUint(frame[at:at+fr.width], fr.sum(frame[c.From:len(frame)+c.To]), c.Order)
	}
	return nil
}

// Describe says in one line how frames are found, for Info.Detection.
func (fr *Framer) Describe() string {
	f := &fr.f
	var parts []string
	if len(f.Sync) > 0 {
		parts = append(parts, fmt.Sprintf("frames start with % x", f.Sync))
	}
	switch {
	case f.Size > 0:
		parts = append(parts, fmt.Sprintf("%d bytes each", f.Size))
	case f.Length != nil:
		parts = append(parts, fmt.Sprintf("a %d-byte length at offset %d", f.Length.Width, f.Length.Offset))
	}
	if c := f.Check; c != nil {
		parts = append(parts, "whose check is right")
	} else {
		parts = append(parts, fmt.Sprintf("%d whole frames in a row", f.Confirm))
	}
	return strings.Join(parts, ", ")
}

func readUint(b []byte, o layout.Order) uint64 {
	var v uint64
	if o == layout.BigEndian {
		for _, x := range b {
			v = v<<8 | uint64(x)
		}
		return v
	}
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func putUint(b []byte, v uint64, o layout.Order) {
	for i := range b {
		if o == layout.BigEndian {
			b[len(b)-1-i] = byte(v >> (8 * i))
		} else {
			b[i] = byte(v >> (8 * i))
		}
	}
}
