//go:build !linux

package live

import (
	"fmt"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// Supported reports whether live capture is implemented on this system.
const Supported = false

// Source captures packets from a network interface. On this system it
// cannot be opened: Open returns ErrUnsupported.
type Source struct{}

// Open returns an error wrapping ErrUnsupported: live capture is
// implemented on Linux only. An unknown interface name still gives
// ErrNoSuchInterface.
func Open(name string, cfg Config) (*Source, error) {
	if _, err := Lookup(name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("live: %s: %w", name, ErrUnsupported)
}

// Interface describes the interface being captured.
func (s *Source) Interface() Interface { return Interface{} }

// LinkType is the link type of every packet of s.
func (s *Source) LinkType() capture.LinkType { return 0 }

// Snaplen is the most bytes kept of each packet.
func (s *Source) Snaplen() uint32 { return 0 }

// Method is the zero Method: nothing is read.
func (s *Source) Method() Method { return MethodAuto }

// SetTimeout does nothing.
func (s *Source) SetTimeout(time.Duration) {}

// Stop does nothing.
func (s *Source) Stop() {}

// Next always fails: see Open.
func (s *Source) Next() (*capture.Packet, error) { return nil, ErrUnsupported }

// Stats returns zero counters.
func (s *Source) Stats() (Stats, error) { return Stats{}, nil }

// Close does nothing.
func (s *Source) Close() error { return nil }

func linkTypeOf(string) capture.LinkType { return 0 }
