package serial

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/dissect-tools/dissect/capture"
)

// NewProxy forwards bytes both ways between host and device and taps them:
// every read from host is written to device, then queued as a host→device
// packet; every read from device is written to host, then queued as a
// device→host packet. Nothing is added to, dropped from or delayed in the
// forwarded bytes beyond the read itself, and forwarding never waits for
// the consumer: reads the queue has no room for are forwarded all the
// same, and dropped from the tap only (see [Tap.Next]). link names the
// serial link; hostName and deviceName name the two sides in errors.
// Closing the tap closes both sides (those that are io.Closers). The queue
// holds [DefaultQueueBytes].
func NewProxy(link string, iface int, host io.ReadWriter, hostName string, device io.ReadWriter, deviceName string) (*Tap, error) {
	return NewTapQueue(link, iface, 0, proxyInputs(host, hostName, device, deviceName)...)
}

// proxyInputs returns the two inputs of a proxy between host and device.
func proxyInputs(host io.ReadWriter, hostName string, device io.ReadWriter, deviceName string) []Input {
	return []Input{
		{Name: hostName, R: host, Dir: capture.DirOutbound, Forward: device, ForwardName: deviceName},
		{Name: deviceName, R: device, Dir: capture.DirInbound, Forward: host, ForwardName: hostName},
	}
}

// ProxyConfig configures [OpenProxy].
type ProxyConfig struct {
	// Device is the real serial device, e.g. /dev/ttyUSB0. It names the
	// link.
	Device string
	// Link is where the symlink to the pseudo-terminal is made; the host
	// application opens this path instead of Device.
	Link string
	// Mode is the real device's speed and format.
	Mode Mode
	// Interface is the interface index the packets carry.
	Interface int
	// QueueBytes bounds the memory held by reads waiting for a slow
	// consumer, as [TapConfig.QueueBytes]. Forwarding never waits for the
	// consumer; past the bound, reads are forwarded but dropped from the
	// tap, and counted.
	QueueBytes int
}

// Proxy is a [Tap] that forwards between a real device and a
// pseudo-terminal the host application opens through a symlink.
type Proxy struct {
	*Tap
	pty  *PTY
	link string
	once sync.Once
}

// OpenProxy opens the device, creates a raw pseudo-terminal and a symlink
// to its slave at cfg.Link, and starts forwarding. An existing symlink at
// cfg.Link is replaced only when it is stale (its target is gone).
func OpenProxy(cfg ProxyConfig) (*Proxy, error) {
	if cfg.Device == "" || cfg.Link == "" {
		return nil, errors.New("serial: proxy needs a device and a link path")
	}
	if cfg.QueueBytes < 0 {
		return nil, fmt.Errorf("serial: queue of %d bytes: must not be negative", cfg.QueueBytes)
	}
	dev, err := Open(cfg.Device, cfg.Mode)
	if err != nil {
		return nil, err
	}
	pt, err := OpenPTY()
	if err != nil {
		dev.Close()
		return nil, err
	}
	if err := makeLink(pt.Path, cfg.Link); err != nil {
		dev.Close()
		pt.Close()
		return nil, err
	}
	tap, err := NewTapQueue(cfg.Device, cfg.Interface, cfg.QueueBytes, proxyInputs(pt.Master, cfg.Link, dev, cfg.Device)...)
	if err != nil {
		removeLink(pt.Path, cfg.Link)
		dev.Close()
		pt.Close()
		return nil, err
	}
	return &Proxy{Tap: tap, pty: pt, link: cfg.Link}, nil
}

// PTYPath returns the pseudo-terminal's device path (the symlink's target).
func (p *Proxy) PTYPath() string { return p.pty.Path }

// LinkPath returns the symlink's path.
func (p *Proxy) LinkPath() string { return p.link }

// Close removes the symlink (when it still points to this proxy's
// terminal), stops forwarding and closes the device and the
// pseudo-terminal. It is safe to call more than once and concurrently with
// Next.
func (p *Proxy) Close() error {
	var err error
	p.once.Do(func() {
		err = removeLink(p.pty.Path, p.link)
		p.Tap.Close()
		p.pty.Slave.Close()
	})
	return err
}

// makeLink makes link a symlink to target.
func makeLink(target, link string) error {
	if fi, err := os.Lstat(link); err == nil {
		if fi.Mode()&os.ModeSymlink == 0 {
			return &PortError{Port: link, Op: "link", Err: errors.New("exists and is not a symbolic link; choose another path")}
		}
		if _, err := os.Stat(link); err == nil {
			return &PortError{Port: link, Op: "link", Err: errors.New("already links to an existing device (another proxy running?); remove it or choose another path")}
		}
		if err := os.Remove(link); err != nil {
			return &PortError{Port: link, Op: "link", Err: err}
		}
	}
	if err := os.Symlink(target, link); err != nil {
		return &PortError{Port: link, Op: "link", Err: cause(err)}
	}
	return nil
}

// removeLink removes link if it is a symlink to target.
func removeLink(target, link string) error {
	if got, err := os.Readlink(link); err != nil || got != target {
		return nil
	}
	if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
		return &PortError{Port: link, Op: "remove link", Err: cause(err)}
	}
	return nil
}

// cause returns the error inside a *os.PathError or *os.LinkError.
func cause(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}
