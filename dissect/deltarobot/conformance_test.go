package deltarobot_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

// TestConformance runs the checks every protocol passes (dissecttest.Conformance)
// over sessions of the separate encoder: a clean one, and one with every
// malformed and unusual message it knows (which gives the unknown type).
func TestConformance(t *testing.T) {
	dissecttest.Conformance(t, dissecttest.Suite{
		New: deltarobot.New,
		Valid: []dissecttest.Input{
			deltaInput("session", deltaenc.NewSession(deltaenc.Options{Seed: 1})),
			deltaInput("broken session", deltaenc.NewSession(deltaenc.Options{Seed: 2, Broken: true})),
		},
	})
}

// deltaInput turns an encoder session into an input: one unit per write.
func deltaInput(name string, s *deltaenc.Session) dissecttest.Input {
	return dissecttest.Input{Name: name, Units: dissecttest.Spans(s.Stream, s.Sends, func(w deltaenc.Send) (int, int64, int64) { return w.Dir, w.Start, w.End })}
}
