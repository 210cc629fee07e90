//go:build linux

package serial

import (
	"fmt"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// OpenPTY creates a pseudo-terminal pair and puts it in raw mode: 8-bit
// characters, no echo, no line editing, no signal characters, no
// translation of CR or NL, no software flow control.
func OpenPTY() (*PTY, error) {
	m, s, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("serial: creating a pseudo-terminal: %w", err)
	}
	// pty.Open asks for the master's descriptor, which switches it to
	// blocking mode, where closing it would not end a Read in progress.
	// Re-open the descriptor in non-blocking mode so it is polled.
	pm, err := pollable(m)
	m.Close()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("serial: pseudo-terminal: %w", err)
	}
	if err := makeRaw(s); err != nil {
		pm.Close()
		s.Close()
		return nil, fmt.Errorf("serial: pseudo-terminal %s: raw mode: %w", s.Name(), err)
	}
	return &PTY{Master: pm, Slave: s, Path: s.Name()}, nil
}

// pollable returns a non-blocking duplicate of f's descriptor as a File
// that the runtime polls.
func pollable(f *os.File) (*os.File, error) {
	var fd int
	var derr error
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := rc.Control(func(ufd uintptr) {
		fd, derr = unix.FcntlInt(ufd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// makeRaw sets the terminal f to raw mode, as cfmakeraw(3) does.
func makeRaw(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var terr error
	err = rc.Control(func(fd uintptr) {
		var tio *unix.Termios
		tio, terr = unix.IoctlGetTermios(int(fd), unix.TCGETS)
		if terr != nil {
			return
		}
		tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF
		tio.Oflag &^= unix.OPOST
		tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		tio.Cflag &^= unix.CSIZE | unix.PARENB
		tio.Cflag |= unix.CS8
		tio.Cc[unix.VMIN] = 1
		tio.Cc[unix.VTIME] = 0
		terr = unix.IoctlSetTermios(int(fd), unix.TCSETS, tio)
	})
	if err != nil {
		return err
	}
	return terr
}
