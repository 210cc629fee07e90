// Package all lists every protocol dissect knows, in detection order. It is
// the one place where protocols are put together: nothing registers itself.
package all

import (
	"dissect/dissect"
	"dissect/dissect/deltarobot"
	"dissect/dissect/vrpn"
)

// Protocols returns fresh instances of every protocol, for one run.
func Protocols() []dissect.Protocol {
	return []dissect.Protocol{
		vrpn.New(),
		deltarobot.New(),
	}
}

// Registry returns a registry of [Protocols].
func Registry() (*dissect.Registry, error) {
	return dissect.NewRegistry(Protocols()...)
}
