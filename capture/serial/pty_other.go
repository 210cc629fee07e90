//go:build !linux

package serial

import "errors"

// OpenPTY creates a pseudo-terminal pair in raw mode; it is implemented on
// Linux only.
func OpenPTY() (*PTY, error) {
	return nil, errors.New("serial: pseudo-terminals (proxy mode) are supported on Linux only")
}
