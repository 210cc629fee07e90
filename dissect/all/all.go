// Package all lists every protocol dissect knows, in detection order. It is
// the one place where protocols are put together: nothing registers itself.
package all

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/handcontrol"
	"github.com/dissect-tools/dissect/dissect/neptune"
	"github.com/dissect-tools/dissect/dissect/roboid"
	"github.com/dissect-tools/dissect/dissect/vrpn"
)

// Options are the protocol preferences of a run.
type Options struct {
	// NeptuneInt16 reads the neptune-wiki "int" fields as int16 (as an AVR
	// lays them out) instead of int32.
	NeptuneInt16 bool
	// HandControl selects the prosthesis link's payload schema: the built-in
	// v2/v1 schemas, the user's .proto files, or raw wire fields.
	HandControl handcontrol.Options
	// VRPNNameBytes bounds the VRPN names all the run's connections hold
	// (vrpn.Options.MaxNameBytes; 0: vrpn.DefaultMaxNameBytes).
	VRPNNameBytes int64
}

// Protocols returns fresh instances of every protocol, for one run, in
// detection order: the protocols that detect by content first. It fails
// only when a user schema cannot be loaded.
func Protocols(opt Options) ([]dissect.Protocol, error) {
	hc, err := handcontrol.New(opt.HandControl)
	if err != nil {
		return nil, err
	}
	return []dissect.Protocol{
		vrpn.NewWith(vrpn.Options{MaxNameBytes: opt.VRPNNameBytes}),
		deltarobot.New(),
		hc,
		neptune.New(),
		neptune.NewWiki(neptune.WikiOptions{Int16: opt.NeptuneInt16}),
		roboid.New(),
	}, nil
}

// Registry returns a registry of [Protocols].
func Registry(opt Options) (*dissect.Registry, error) {
	protos, err := Protocols(opt)
	if err != nil {
		return nil, err
	}
	return dissect.NewRegistry(protos...)
}
