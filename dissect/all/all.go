// Package all lists every protocol dissect knows, in detection order. It is
// the one place where protocols are put together: nothing registers itself.
package all

import (
	"slices"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/handcontrol"
	"github.com/dissect-tools/dissect/dissect/neptune"
	"github.com/dissect-tools/dissect/dissect/roboid"
	"github.com/dissect-tools/dissect/dissect/spec"
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
	// ProtocolFiles are protocol description files (--protocol), and
	// ProtocolDirs directories of them (*.yaml, *.yml: the user's
	// protocols directory); see package dissect/spec. Their protocols
	// come first in detection order.
	ProtocolFiles []string
	ProtocolDirs  []string
}

// Protocols returns fresh instances of every protocol, for one run, in
// detection order: the protocols described in the user's files, then
// the built-ins that detect by content. It fails when a user schema or
// protocol file cannot be loaded, or a file's protocol takes the name or
// a default port of another.
func Protocols(opt Options) ([]dissect.Protocol, error) {
	hc, err := handcontrol.New(opt.HandControl)
	if err != nil {
		return nil, err
	}
	builtin := []dissect.Protocol{
		vrpn.NewWith(vrpn.Options{MaxNameBytes: opt.VRPNNameBytes}),
		deltarobot.New(),
		hc,
		neptune.New(),
		neptune.NewWiki(neptune.WikiOptions{Int16: opt.NeptuneInt16}),
		roboid.New(),
	}
	var described []dissect.Protocol
	add := func(p *spec.Protocol) error {
		if err := p.Beside(slices.Concat(described, builtin)); err != nil {
			return err
		}
		described = append(described, p)
		return nil
	}
	for _, d := range opt.ProtocolDirs {
		ps, err := spec.LoadDir(d)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if err := add(p); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range opt.ProtocolFiles {
		p, err := spec.LoadFile(f)
		if err != nil {
			return nil, err
		}
		if err := add(p); err != nil {
			return nil, err
		}
	}
	return append(described, builtin...), nil
}

// Registry returns a registry of [Protocols].
func Registry(opt Options) (*dissect.Registry, error) {
	protos, err := Protocols(opt)
	if err != nil {
		return nil, err
	}
	return dissect.NewRegistry(protos...)
}
