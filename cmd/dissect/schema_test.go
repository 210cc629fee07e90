package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/schemacheck"
	"github.com/dissect-tools/dissect/reassembly"
)

// schemaRun is one run of the CLI whose records are checked: its flags
// that change the declarations (they are given to 'protocols --schema'
// too) and its other arguments.
type schemaRun struct {
	protoFlags []string
	args       []string
}

// sampleRuns returns a run per shipped capture with its sidecar's
// decode-as rule and decoder options, per HandControl capture again with
// --handcontrol-raw, per capture of the example protocol file with it,
// and per real capture of ../shared when present.
func sampleRuns(t *testing.T) []schemaRun {
	var runs []schemaRun
	for _, f := range pcaps(t) {
		c := dissecttest.ReadCapture(t, f)
		var flags, args []string
		if c.DecodeAs != "" {
			args = append(args, "-d", c.DecodeAs)
		}
		if c.NeptuneInt16 {
			flags = append(flags, "--neptune-int16")
		}
		runs = append(runs, schemaRun{flags, append(args, f)})
		if strings.Contains(f, "handcontrol") {
			runs = append(runs, schemaRun{[]string{"--handcontrol-raw"}, append(args, f)})
		}
	}
	// the example protocol file of docs/your-protocol.md, on its captures
	for _, f := range []string{"acme_servo_serial.pcapng", "acme_servo_tcp.pcap"} {
		runs = append(runs, schemaRun{[]string{"--protocol", exampleProtocol}, []string{filepath.Join(pcapDir, "acme", f)}})
	}
	real, _ := filepath.Glob("../../../shared/captures/*/*.pcap*")
	if len(real) == 0 {
		t.Log("../../../shared/captures not found: the real captures are not checked")
	}
	for _, f := range real {
		runs = append(runs, schemaRun{nil, []string{f}})
	}
	return runs
}

// TestSchemaValidatesEveryRecord checks, with Ajv, every record of every
// shipped and real capture, of the same captures with bytes of their
// payloads changed at random, and of one run with -x, against the lines of
// 'dissect protocols --schema' given the run's protocol flags.
func TestSchemaValidatesEveryRecord(t *testing.T) {
	runs := sampleRuns(t)
	dir := t.TempDir()
	var hostile []schemaRun
	for i, r := range runs {
		file := r.args[len(r.args)-1]
		m := filepath.Join(dir, "mutated-"+filepath.Base(file)+".pcapng")
		mutateCapture(t, file, m, uint64(i))
		hostile = append(hostile, schemaRun{r.protoFlags, append(append([]string{}, r.args[:len(r.args)-1]...), m)})
	}
	runs = append(runs, hostile...)
	runs = append(runs, schemaRun{nil, []string{"-x", filepath.Join(pcapDir, "vrpn_udp_tcp.pcapng")}})

	byFlags := map[string][]string{} // protocol flags -> record files
	lines := 0
	for i, r := range runs {
		args := append(append([]string{"-o", "json", "--no-summary"}, r.protoFlags...), r.args...)
		out, errOut, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("dissect %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		lines += strings.Count(out, "\n")
		f := filepath.Join(dir, "records-"+string(rune('a'+i%26))+"-"+filepath.Base(r.args[len(r.args)-1])+".jsonl")
		if err := os.WriteFile(f, []byte(out), 0o666); err != nil {
			t.Fatal(err)
		}
		k := strings.Join(r.protoFlags, " ")
		byFlags[k] = append(byFlags[k], f)
	}
	keys := make([]string, 0, len(byFlags))
	for k := range byFlags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	checked := 0
	for _, k := range keys {
		schema := filepath.Join(dir, "schema"+strings.NewReplacer(" ", "", "/", "_").Replace(k)+".jsonl")
		args := append([]string{"protocols", "--schema"}, strings.Fields(k)...)
		out, errOut, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("dissect %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		if err := os.WriteFile(schema, []byte(out), 0o666); err != nil {
			t.Fatal(err)
		}
		res := schemacheck.Check(t, schema, byFlags[k]...)
		for _, p := range res.Problems {
			t.Errorf("flags %q: %s:%d: %s %s: %s %s", k, filepath.Base(p.File), p.Line, p.Proto, p.Type, p.Error, p.Record)
		}
		if res.ProblemCount > len(res.Problems) {
			t.Errorf("flags %q: %d problems in all", k, res.ProblemCount)
		}
		if res.Schemas != strings.Count(out, "\n") || res.Schemas < 10 {
			t.Errorf("flags %q: %d schemas compiled of %d lines", k, res.Schemas, strings.Count(out, "\n"))
		}
		checked += res.Records
	}
	if checked != lines || lines == 0 {
		t.Errorf("Ajv checked %d records of %d", checked, lines)
	}
	t.Logf("%d records of %d runs valid against their schema lines", checked, len(runs))
}

// TestSchemaCatchesDepartures shows the check can fail: a record with a
// key its declaration lacks, a field of another kind, and a type no line
// declares are each reported.
func TestSchemaCatchesDepartures(t *testing.T) {
	dir := t.TempDir()
	out, _, code := cli(t, "-o", "json", "--no-summary", filepath.Join(pcapDir, "vrpn_tcp_only.pcap"))
	if code != 0 {
		t.Fatal(code)
	}
	schema, _, _ := cli(t, "protocols", "--schema")
	sf := filepath.Join(dir, "schema.jsonl")
	if err := os.WriteFile(sf, []byte(schema), 0o666); err != nil {
		t.Fatal(err)
	}
	var pos string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"type":"vrpn_Tracker Pos_Quat"`) {
			pos = l
			break
		}
	}
	if pos == "" {
		t.Fatal("no Pos_Quat record")
	}
	bad := []string{
		strings.Replace(pos, `"fields":{`, `"fields":{"bogus":1,`, 1),
		strings.Replace(pos, `"sensor":`, `"sensor":"x","was":`, 1),
		strings.Replace(pos, `"type":"vrpn_Tracker Pos_Quat"`, `"type":"no such type","proto":"nosuch"`, 1),
	}
	rf := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(rf, []byte(strings.Join(bad, "\n")+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	res := schemacheck.Check(t, sf, rf)
	if res.ProblemCount != len(bad) {
		t.Errorf("%d problems, want %d: %+v", res.ProblemCount, len(bad), res.Problems)
	}
}

// mutateCapture copies the capture src to dst (pcapng), changing about one
// payload byte in 48 at random (seeded): the headers up to TCP/UDP stay,
// so the streams stay, and every parser meets damaged messages.
func mutateCapture(t *testing.T, src, dst string, seed uint64) {
	t.Helper()
	in, err := capture.OpenFile(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewPcapngWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ifaces := map[int]int{}
	for {
		p, err := in.Next()
		if err != nil {
			break
		}
		id, ok := ifaces[p.Interface]
		if !ok {
			if id, err = w.AddInterface(p.InterfaceName, p.LinkType, 262144); err != nil {
				t.Fatal(err)
			}
			ifaces[p.Interface] = id
		}
		q := *p
		q.Interface = id
		q.Data = append([]byte(nil), p.Data...)
		for i := reassembly.HeaderLen(p.LinkType, q.Data); i < len(q.Data); i++ {
			if rng.IntN(48) == 0 {
				q.Data[i] = byte(rng.Uint32())
			}
		}
		if err := w.WritePacket(&q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}
