// Package all lists every protocol dissect knows, in detection order. It is
// the one place where protocols are put together: nothing registers itself.
package all

import (
	"dissect/dissect"
	"dissect/dissect/deltarobot"
	"dissect/dissect/neptune"
	"dissect/dissect/roboid"
	"dissect/dissect/vrpn"
)

// Options are the protocol preferences of a run.
type Options struct {
	// NeptuneInt16 reads the neptune-wiki "int" fields as int16 (as an AVR
	// lays them out) instead of int32.
	NeptuneInt16 bool
}

// Protocols returns fresh instances of every protocol, for one run, in
// detection order: the protocols that detect by content first.
func Protocols(opt Options) []dissect.Protocol {
	return []dissect.Protocol{
		vrpn.New(),
		deltarobot.New(),
		neptune.New(),
		neptune.NewWiki(neptune.WikiOptions{Int16: opt.NeptuneInt16}),
		roboid.New(),
	}
}

// Registry returns a registry of [Protocols].
func Registry(opt Options) (*dissect.Registry, error) {
	return dissect.NewRegistry(Protocols(opt)...)
}
