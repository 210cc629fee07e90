package dissect_test

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// TestCarriesChoosesProtocol: a stream whose link says what it carries (a
// VRPN log: Carries) is decoded as that protocol at once, even on a
// transport the protocol does not list and with no detection; a decode-as
// rule for the transport does not override it; an unknown name falls back
// to the rules.
func TestCarriesChoosesProtocol(t *testing.T) {
	reg, err := dissect.NewRegistry(&toy{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := dissect.NewRegistry(&toy{}, &toyNamed{})
	if err != nil {
		t.Fatal(err)
	}
	rule, err := other.ParseDecodeAs("serial,toy2")
	if err != nil {
		t.Fatal(err)
	}
	other.AddRule(rule)
	for _, tc := range []struct {
		reg     *dissect.Registry
		carries string
		want    string // the chosen protocol, "" for none yet
	}{
		{reg, "toy", "toy"},
		{reg, "", ""},
		{reg, "nosuch", ""},
		{other, "toy", "toy"},
		{other, "", "toy2"},
	} {
		info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.Serial, Link: "s.vrpnlog", Carries: tc.carries}, Name: [2]string{"", "s.vrpnlog"}}
		col := &collector{}
		s := dissect.NewStream(info, tc.reg, col, dissect.StreamOptions{Decode: true})
		got := ""
		if p := s.Protocol(); p != nil {
			got = p.Info().Name
		}
		if got != tc.want {
			t.Errorf("carries %q: protocol %q, want %q", tc.carries, got, tc.want)
		}
		if tc.want == "toy" {
			s.Data(1, time.Unix(1, 0), []byte{2, 'h', 'i'})
			s.End(1, time.Unix(2, 0))
			if len(col.recs) != 1 || col.recs[0].Proto != "toy" || col.recs[0].Src != "s.vrpnlog" {
				t.Errorf("carries %q: records %s", tc.carries, dump(col.recs))
			}
		}
	}
}

// toyNamed is toy under another name, for a serial decode-as rule.
type toyNamed struct{ toy }

func (t *toyNamed) Info() dissect.Info {
	in := t.toy.Info()
	in.Name, in.Proto = "toy2", "toy2"
	in.Transports = append(in.Transports, dissect.Serial)
	return in
}
