package serial

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"

	bugserial "go.bug.st/serial"
)

// Kinds of port failure, for errors.Is on a *[PortError].
var (
	ErrNotFound     = errors.New("no such device")
	ErrBusy         = errors.New("busy")
	ErrPermission   = errors.New("permission denied")
	ErrNotSerial    = errors.New("not a serial port")
	ErrDisconnected = errors.New("disconnected")
)

// Operations named in a [PortError].
const (
	opOpen  = "open"
	opRead  = "read"
	opWrite = "write"
)

// PortError is a failure to open, read or write a serial port or a proxy's
// pseudo-terminal. Like [capture.FileError] it names what failed first, so
// that the command line prints "dissect: /dev/ttyUSB0: no such device".
type PortError struct {
	Port string // device path (or the proxy's link path)
	Op   string // open, read or write
	Kind error  // ErrNotFound, ErrBusy, ...; nil when none applies
	Err  error  // the underlying error
}

// Error returns "PORT: KIND (detail)", or "PORT: OP: ERR" when the failure
// has no kind.
func (e *PortError) Error() string {
	var b strings.Builder
	b.WriteString(e.Port)
	b.WriteString(": ")
	switch e.Kind {
	case nil:
		b.WriteString(e.Op)
		b.WriteString(": ")
		b.WriteString(lower(e.Err))
		return b.String()
	case ErrNotFound:
		b.WriteString("no such device")
	case ErrBusy:
		b.WriteString("busy (another program has it open)")
	case ErrPermission:
		b.WriteString("permission denied (add yourself to the dialout group, then log in again)")
	case ErrNotSerial:
		b.WriteString("not a serial port")
	case ErrDisconnected:
		b.WriteString("disconnected (device unplugged or closed)")
	default:
		b.WriteString(e.Kind.Error())
	}
	if e.Err != nil && e.Kind != ErrNotFound {
		b.WriteString(" [")
		b.WriteString(e.Op)
		b.WriteString(": ")
		b.WriteString(lower(e.Err))
		b.WriteString("]")
	}
	return b.String()
}

// Unwrap returns the kind and the underlying error.
func (e *PortError) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// lower returns err's text with its first letter in lower case (the driver
// capitalises its messages).
func lower(err error) string {
	if err == nil {
		return "failed"
	}
	s := err.Error()
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		s = string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// portError classifies err, a failure of op on the port at path.
func portError(path, op string, err error) *PortError {
	pe := &PortError{Port: path, Op: op, Err: err}
	var be *bugserial.PortError
	if errors.As(err, &be) {
		switch be.Code() {
		case bugserial.PortBusy:
			pe.Kind = ErrBusy
		case bugserial.PortNotFound:
			pe.Kind = ErrNotFound
		case bugserial.PermissionDenied:
			pe.Kind = ErrPermission
		case bugserial.InvalidSerialPort:
			pe.Kind = ErrNotSerial
			// The driver reports a failed termios call on a file that is
			// not a terminal this way; an unplugged device fails the same
			// call with EIO.
			if errors.Is(err, syscall.EIO) {
				pe.Kind = ErrDisconnected
			}
		case bugserial.PortClosed:
			pe.Kind = ErrDisconnected
		}
		// The driver's messages are capitalised and say nothing more for
		// these codes than the kind does.
		if pe.Kind != nil && pe.Kind != ErrNotSerial {
			pe.Err = nil
		}
		return pe
	}
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENODEV), errors.Is(err, syscall.ENXIO):
		if op == opOpen {
			pe.Kind = ErrNotFound
		} else {
			pe.Kind = ErrDisconnected
		}
	case errors.Is(err, syscall.EBUSY):
		pe.Kind = ErrBusy
	case errors.Is(err, fs.ErrPermission):
		pe.Kind = ErrPermission
	case errors.Is(err, syscall.ENOTTY):
		pe.Kind = ErrNotSerial
	case errors.Is(err, syscall.EIO):
		pe.Kind = ErrDisconnected
	}
	return pe
}
