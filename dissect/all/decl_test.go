package all_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/pipeline"
)

// capture is one shipped capture and how to decode it.
type captureRun struct {
	files    []string
	decodeAs string
	opt      all.Options
}

// shippedCaptures returns every shipped capture with the decode-as rule of
// its truth file (pcaps/*.truth.json "decode_as", "decoder_options"); the
// VRPN captures need none.
func shippedCaptures(t *testing.T) []captureRun {
	t.Helper()
	var runs []captureRun
	for _, pat := range []string{"../../pcaps/*.pcap*", "../vrpn/testdata/*.pcap*"} {
		names, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			run := captureRun{files: []string{name}}
			base := strings.TrimSuffix(strings.TrimSuffix(name, ".pcapng"), ".pcap")
			if b, err := os.ReadFile(base + ".truth.json"); err == nil {
				var truth struct {
					DecodeAs       string `json:"decode_as"`
					DecoderOptions string `json:"decoder_options"`
				}
				if err := json.Unmarshal(b, &truth); err != nil {
					t.Fatalf("%s.truth.json: %v", base, err)
				}
				run.decodeAs = truth.DecodeAs
				switch truth.DecoderOptions {
				case "":
				case "neptune.WikiOptions{Int16: true}":
					run.opt.NeptuneInt16 = true
				default:
					t.Fatalf("%s.truth.json: decoder_options %q: unknown to this test", base, truth.DecoderOptions)
				}
			} else if !strings.Contains(name, "vrpn") {
				t.Fatalf("%s: no truth file saying how to decode it: %v", name, err)
			}
			runs = append(runs, run)
		}
	}
	if len(runs) < 15 {
		t.Fatalf("found only %d captures", len(runs))
	}
	return runs
}

// TestEveryRecordDeclared runs every shipped capture through the pipeline
// with every protocol and checks each record against its declaration, gap
// and skipped included. It also checks that the declarations give -Y and
// -e a name for every top-level key the captures carry.
func TestEveryRecordDeclared(t *testing.T) {
	tables := map[string]int{}
	for _, run := range shippedCaptures(t) {
		reg, err := all.Registry(run.opt)
		if err != nil {
			t.Fatal(err)
		}
		if run.decodeAs != "" {
			rule, err := reg.ParseDecodeAs(run.decodeAs)
			if err != nil {
				t.Fatalf("%s: %v", run.files[0], err)
			}
			reg.AddRule(rule)
		}
		where := filepath.Base(run.files[0])
		var c dissecttest.Collector
		if _, err := pipeline.Run(context.Background(), pipeline.NewFiles(run.files, nil), pipeline.Config{Registry: reg, Sink: &c}); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		decoded := 0
		for _, r := range c.Records {
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
		for k, n := range dissecttest.CheckDeclared(t, reg, c.Records) {
			tables[k] += n
		}
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
