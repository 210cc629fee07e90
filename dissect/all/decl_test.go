package all_test

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// shippedCaptures returns every shipped capture with its truth file's
// decode-as rule and options (pcaps/*.truth.json "decode_as",
// "decoder_options"); the VRPN captures need none.
func shippedCaptures(t *testing.T) []dissecttest.Capture {
	t.Helper()
	caps := dissecttest.Captures(t, "../../pcaps/*.pcap*", "../vrpn/testdata/*.pcap*")
	if len(caps) < 15 {
		t.Fatalf("found only %d captures", len(caps))
	}
	return caps
}

// TestEveryRecordDeclared runs every shipped capture through the pipeline
// with every protocol and checks each record against its declaration, gap
// and skipped included. It also checks that the declarations give -Y and
// -e a name for every top-level key the captures carry.
func TestEveryRecordDeclared(t *testing.T) {
	tables := dissecttest.Seen{}
	for _, c := range shippedCaptures(t) {
		protos, err := all.Protocols(all.Options{NeptuneInt16: c.NeptuneInt16})
		if err != nil {
			t.Fatal(err)
		}
		reg := dissecttest.Registry(t, c.Rules(), protos...)
		where := c.Name()
		recs := dissecttest.Decode(t, reg, c.Path)
		decoded := 0
		for _, r := range recs {
			if r.Proto == "" || r.Type == dissect.TypeGap || r.Type == dissect.TypeSkipped {
				continue
			}
			decoded++
			for _, f := range r.Fields {
				if !reg.KnownField(r.Proto, f.Key) {
					t.Errorf("%s: %s %s: %s.%s has no filter name", where, r.Proto, r.Type, r.Proto, f.Key)
				}
			}
		}
		if decoded == 0 {
			t.Errorf("%s: no decoded record", where)
		}
		tables.Add(dissecttest.CheckDeclared(t, reg, recs))
	}
	t.Logf("records per declaration: %v", tables)
}

// TestInfoSharesNothing checks that each Info call returns declarations
// of its own: changing one changes nothing else.
func TestInfoSharesNothing(t *testing.T) {
	protos, err := all.Protocols(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range protos {
		in, again := p.Info(), p.Info()
		if len(in.Types) == 0 {
			t.Errorf("%s declares no types", in.Name)
			continue
		}
		if err := dissect.Validate(in.Proto, in.Types); err != nil {
			t.Errorf("%s: %v", in.Name, err)
		}
		in.Types[0].Type = "changed"
		if len(in.Types[0].Fields) > 0 {
			in.Types[0].Fields[0].Name = "changed"
		}
		if again.Types[0].Type == "changed" || len(again.Types[0].Fields) > 0 && again.Types[0].Fields[0].Name == "changed" {
			t.Errorf("%s: two Info calls share their declarations", in.Name)
		}
	}
}
