package dissecttest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/pipeline"
)

// This file holds what the tests over shipped captures share: finding the
// captures with what their truth sidecars say, and running a capture
// through the whole pipeline.

// Capture is one shipped capture and what its truth sidecar says of it
// (NAME.truth.json beside NAME.pcap or NAME.pcapng, written by
// internal/testenc/mkpcaps; pcaps/README.md): how to decode it, and the
// types of the records the encoder wrote. The real VRPN captures have no
// sidecar (their truth, vrpn_truth.json and testdata/truth.json, has
// another layout): for them Sidecar is false and the rest is zero.
type Capture struct {
	Path    string
	Sidecar bool
	// DecodeAs is the sidecar's decode_as rule ("" for none).
	DecodeAs string
	// NeptuneInt16 is set when the sidecar's decoder_options ask for
	// neptune-wiki's 16-bit ints (neptune.WikiOptions{Int16: true}), the
	// only option a sidecar names.
	NeptuneInt16 bool
	// Types are the distinct types of the sidecar's records, sorted.
	Types []string
}

// Name returns the capture's file name, for failure messages.
func (c Capture) Name() string { return filepath.Base(c.Path) }

// Rules returns the capture's decode-as rules for [Registry]: its
// sidecar's, or none.
func (c Capture) Rules() []string {
	if c.DecodeAs == "" {
		return nil
	}
	return []string{c.DecodeAs}
}

// sidecar is what Captures reads of a truth file.
type sidecar struct {
	DecodeAs       string `json:"decode_as"`
	DecoderOptions string `json:"decoder_options"`
	Streams        []struct {
		Directions []struct {
			Records []struct {
				Type string `json:"type"`
			} `json:"records"`
		} `json:"directions"`
	} `json:"streams"`
}

// Captures returns the captures matching each pattern (filepath.Glob, in
// name order), with their sidecars read. It fails t when a pattern
// matches nothing, when a capture whose path does not name VRPN has no
// sidecar, and when a sidecar does not parse or names decoder options
// this package does not know.
func Captures(t testing.TB, patterns ...string) []Capture {
	t.Helper()
	var out []Capture
	for _, pat := range patterns {
		names, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Fatalf("no capture matches %s", pat)
		}
		for _, name := range names {
			out = append(out, ReadCapture(t, name))
		}
	}
	return out
}

// ReadCapture returns the capture at name with its sidecar read, failing
// t as [Captures] does.
func ReadCapture(t testing.TB, name string) Capture {
	t.Helper()
	c := Capture{Path: name}
	file := strings.TrimSuffix(strings.TrimSuffix(name, ".pcapng"), ".pcap") + ".truth.json"
	b, err := os.ReadFile(file)
	if err != nil {
		if !strings.Contains(name, "vrpn") {
			t.Fatalf("%s: no truth file saying how to decode it: %v", name, err)
		}
		return c
	}
	var s sidecar
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	c.Sidecar, c.DecodeAs = true, s.DecodeAs
	switch s.DecoderOptions {
	case "":
	case "neptune.WikiOptions{Int16: true}":
		c.NeptuneInt16 = true
	default:
		t.Fatalf("%s: decoder_options %q: unknown to dissecttest", file, s.DecoderOptions)
	}
	for _, st := range s.Streams {
		for _, d := range st.Directions {
			for _, r := range d.Records {
				if !slices.Contains(c.Types, r.Type) {
					c.Types = append(c.Types, r.Type)
				}
			}
		}
	}
	slices.Sort(c.Types)
	return c
}

// Decode runs the capture files through the whole pipeline (capture,
// reassembly, dissect.Stream) with reg and returns a clone of every
// record, failing t when the run fails.
func Decode(t testing.TB, reg *dissect.Registry, files ...string) []*dissect.Record {
	t.Helper()
	var c Collector
	src := pipeline.NewFiles(files, nil)
	defer src.Close()
	if _, err := pipeline.Run(context.Background(), src, pipeline.Config{Registry: reg, Sink: &c}); err != nil {
		t.Fatalf("%s: %v", strings.Join(files, ", "), err)
	}
	return c.Records
}

// CheckCaptures runs each capture matching pattern, of which there must
// be want (as pcaps/README.md lists them), through the pipeline with a
// registry of the protocols protos returns for it and its sidecar's
// decode-as rule. Every record must match its declaration
// ([CheckDeclared]), and the types decoded must be exactly those the
// sidecar lists. It returns the records per declaration table over all
// the captures.
func CheckCaptures(t testing.TB, pattern string, want int, protos func(Capture) []dissect.Protocol) Seen {
	t.Helper()
	caps := Captures(t, pattern)
	if len(caps) != want {
		t.Fatalf("found %d captures matching %s, want the %d pcaps/README.md lists", len(caps), pattern, want)
	}
	seen := Seen{}
	for _, c := range caps {
		reg := Registry(t, []string{c.DecodeAs}, protos(c)...)
		recs := Decode(t, reg, c.Path)
		seen.Add(CheckDeclared(t, reg, recs))
		if got := Types(recs); !slices.Equal(got, c.Types) {
			t.Errorf("%s: record types %v, the truth file's %v", c.Name(), got, c.Types)
		}
	}
	return seen
}

// Types returns the distinct types of recs, sorted, to compare with a
// sidecar's (Capture.Types).
func Types(recs []*dissect.Record) []string {
	var out []string
	for _, r := range recs {
		if !slices.Contains(out, r.Type) {
			out = append(out, r.Type)
		}
	}
	slices.Sort(out)
	return out
}

// Seen counts records per declaration table ("PROTO TABLE"), summed over
// the counts [CheckDeclared] returns.
type Seen map[string]int

// Add adds the counts of one CheckDeclared call.
func (s Seen) Add(counts map[string]int) {
	for k, n := range counts {
		s[k] += n
	}
}

// Never returns, in declaration order, the tables reg declares for the
// proto key proto and the event tables (gap, skipped) that s holds no
// record of under that key: the declared types the inputs never produced.
func (s Seen) Never(reg *dissect.Registry, proto string) []string {
	var out []string
	for _, key := range []string{proto, "*"} {
		for _, d := range reg.Types(key) {
			if s[proto+" "+d.Table()] == 0 {
				out = append(out, d.Table())
			}
		}
	}
	return out
}
