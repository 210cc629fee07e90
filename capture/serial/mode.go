package serial

import (
	"fmt"
	"strconv"
	"strings"

	bugserial "go.bug.st/serial"
)

// Parity is a UART parity setting.
type Parity uint8

// Parities.
const (
	ParityNone  Parity = iota // no parity bit
	ParityOdd                 // odd parity
	ParityEven                // even parity
	ParityMark                // parity bit always 1
	ParitySpace               // parity bit always 0
)

var parityNames = [...]string{"none", "odd", "even", "mark", "space"}

// String returns the parity's flag spelling: none, odd, even, mark, space.
func (p Parity) String() string {
	if int(p) < len(parityNames) {
		return parityNames[p]
	}
	return "parity(" + strconv.Itoa(int(p)) + ")"
}

// ParseParity parses none, odd, even, mark or space (or their first letter),
// case-insensitively.
func ParseParity(s string) (Parity, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, n := range parityNames {
		if s == n || (len(s) == 1 && s[0] == n[0]) {
			return Parity(i), nil
		}
	}
	return 0, fmt.Errorf("serial: parity %q: want none, odd, even, mark or space", s)
}

// StopBits is a UART stop-bit setting.
type StopBits uint8

// Stop-bit settings.
const (
	StopBits1   StopBits = iota // 1 stop bit
	StopBits1_5                 // 1.5 stop bits
	StopBits2                   // 2 stop bits
)

var stopNames = [...]string{"1", "1.5", "2"}

// String returns the setting as the flag spells it: 1, 1.5 or 2.
func (s StopBits) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return "stopbits(" + strconv.Itoa(int(s)) + ")"
}

// ParseStopBits parses 1, 1.5 or 2.
func ParseStopBits(s string) (StopBits, error) {
	s = strings.TrimSpace(s)
	for i, n := range stopNames {
		if s == n {
			return StopBits(i), nil
		}
	}
	return 0, fmt.Errorf("serial: stop bits %q: want 1, 1.5 or 2", s)
}

// Mode is how a port is configured: speed and character format.
type Mode struct {
	Baud     int // bits per second
	DataBits int // 5 to 8
	Parity   Parity
	StopBits StopBits
}

// DefaultMode returns 115200 baud, 8 data bits, no parity, 1 stop bit
// (8N1).
func DefaultMode() Mode {
	return Mode{Baud: 115200, DataBits: 8, Parity: ParityNone, StopBits: StopBits1}
}

// String returns the mode in the usual short form, e.g. "115200 8N1".
func (m Mode) String() string {
	p := byte('?')
	if int(m.Parity) < len(parityNames) {
		p = parityNames[m.Parity][0] - 'a' + 'A'
	}
	return fmt.Sprintf("%d %d%c%s", m.Baud, m.DataBits, p, m.StopBits)
}

// Validate reports a setting no UART supports: a baud rate that is not
// positive, data bits outside 5-8, an unknown parity or stop-bit value.
// Whether a particular driver supports the rate is known only on opening.
func (m Mode) Validate() error {
	switch {
	case m.Baud <= 0:
		return fmt.Errorf("serial: baud rate %d: must be positive", m.Baud)
	case m.DataBits < 5 || m.DataBits > 8:
		return fmt.Errorf("serial: %d data bits: want 5, 6, 7 or 8", m.DataBits)
	case int(m.Parity) >= len(parityNames):
		return fmt.Errorf("serial: invalid parity %d", m.Parity)
	case int(m.StopBits) >= len(stopNames):
		return fmt.Errorf("serial: invalid stop bits %d", m.StopBits)
	}
	return nil
}

// bug converts m to the driver's mode. Parity and StopBits share the
// driver's numbering.
func (m Mode) bug() *bugserial.Mode {
	return &bugserial.Mode{
		BaudRate: m.Baud,
		DataBits: m.DataBits,
		Parity:   bugserial.Parity(m.Parity),
		StopBits: bugserial.StopBits(m.StopBits),
	}
}

// Port is an open serial port. Close unblocks a Read in progress, which then
// returns an error.
type Port interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Close() error
}

// Open opens the serial device at path in raw mode with mode m, without
// flow control. Errors are *[PortError] values naming path.
func Open(path string, m Mode) (Port, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	p, err := bugserial.Open(path, m.bug())
	if err != nil {
		return nil, portError(path, opOpen, err)
	}
	return &port{p: p, path: path}, nil
}

// port adapts the driver's port: reads and writes that fail after the
// driver reports the port closed are told apart from other failures by the
// caller (see [Tap]); writes are completed even when the driver writes part.
type port struct {
	p    bugserial.Port
	path string
}

func (p *port) Read(b []byte) (int, error) { return p.p.Read(b) }

func (p *port) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := p.p.Write(b[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, fmt.Errorf("serial: write to %s wrote nothing", p.path)
		}
	}
	return n, nil
}

func (p *port) Close() error { return p.p.Close() }
