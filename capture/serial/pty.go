package serial

import "os"

// PTY is a pseudo-terminal pair in raw mode: what is written to Master is
// read from the slave side (the terminal at Path), and the other way round.
type PTY struct {
	// Master is the controlling side. Its reads and writes go through the
	// runtime poller, so closing it makes a Read or Write in progress
	// return.
	Master *os.File
	// Slave is the terminal side, kept open so that the master does not
	// see a hang-up while no other program has the terminal open.
	Slave *os.File
	// Path is the slave's device path, e.g. /dev/pts/3.
	Path string
}

// Close closes both sides.
func (p *PTY) Close() error {
	err := p.Master.Close()
	if e := p.Slave.Close(); err == nil {
		err = e
	}
	return err
}
