package roboid_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/roboid"
	"github.com/dissect-tools/dissect/internal/testenc/roboidenc"
)

// TestConformance runs the checks every protocol passes (dissecttest.Conformance)
// over flows of the separate encoder: a clean one, and one with every
// malformed and unusual message it knows (which gives the unknown type).
func TestConformance(t *testing.T) {
	dissecttest.Conformance(t, dissecttest.Suite{
		New: roboid.New,
		Valid: []dissecttest.Input{
			roboidInput("flow", roboidenc.NewSession(roboidenc.Options{Seed: 1})),
			roboidInput("broken flow", roboidenc.NewSession(roboidenc.Options{Seed: 2, Broken: true})),
		},
	})
}

// roboidInput turns an encoder session into an input: its datagrams.
func roboidInput(name string, s *roboidenc.Session) dissecttest.Input {
	return dissecttest.Input{Name: name, Units: dissecttest.Spans(s.Stream, s.Datagrams, func(d roboidenc.Datagram) (int, int64, int64) { return d.Dir, d.Start, d.End })}
}
