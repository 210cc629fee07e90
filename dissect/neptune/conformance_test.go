package neptune_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/neptune"
	"github.com/dissect-tools/dissect/internal/testenc/neptuneenc"
)

// TestConformance runs the checks every protocol passes (dissecttest.Conformance)
// over sessions of the separate encoder, for both modes: the device framing
// (pilot sessions, clean and with every malformed message the encoder
// knows) and the wiki format with either int width.
func TestConformance(t *testing.T) {
	t.Run("neptune", func(t *testing.T) {
		dissecttest.Conformance(t, dissecttest.Suite{
			New: neptune.New,
			Valid: []dissecttest.Input{
				pilotInput("pilot session", neptuneenc.NewPilotSession(neptuneenc.Options{Seed: 1})),
				pilotInput("broken pilot session", neptuneenc.NewPilotSession(neptuneenc.Options{Seed: 2, Broken: true})),
			},
		})
	})
	for _, w := range []struct {
		name  string
		width neptuneenc.IntWidth
	}{{"neptune-wiki int32", neptuneenc.Int32}, {"neptune-wiki int16", neptuneenc.Int16}} {
		t.Run(w.name, func(t *testing.T) {
			opt := neptune.WikiOptions{Int16: w.width == neptuneenc.Int16}
			dissecttest.Conformance(t, dissecttest.Suite{
				New: func() dissect.Protocol { return neptune.NewWiki(opt) },
				Valid: []dissecttest.Input{
					wikiInput("wiki session", neptuneenc.NewWikiSession(neptuneenc.WikiOptions{Seed: 3, Int: w.width})),
					wikiInput("broken wiki session", neptuneenc.NewWikiSession(neptuneenc.WikiOptions{Seed: 4, Int: w.width, Broken: true})),
				},
			})
		})
	}
}

// pilotInput turns a pilot session into an input: one unit per write of
// the host (the device never answers).
func pilotInput(name string, s *neptuneenc.DeviceSession) dissecttest.Input {
	return dissecttest.Input{Name: name, Units: dissecttest.Spans([2][]byte{s.Stream}, s.Sends, func(w neptuneenc.Send) (int, int64, int64) { return 0, w.Start, w.End })}
}

// wikiInput turns a wiki session into an input: one datagram per packet.
func wikiInput(name string, s *neptuneenc.WikiSession) dissecttest.Input {
	return dissecttest.Input{Name: name, Transport: dissect.UDP,
		Units: dissecttest.Spans([2][]byte{s.Stream}, s.Datagrams, func(d neptuneenc.Datagram) (int, int64, int64) { return 0, d.Start, d.End })}
}
