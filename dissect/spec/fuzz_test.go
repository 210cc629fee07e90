package spec

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// FuzzLoad loads a protocol file: it must fail with one line naming the
// file, or give a protocol whose parser then frames the file's own bytes
// (and the example frames) without panicking, within its budgets.
// loadErrorForm is how every error of Load starts.
var loadErrorForm = regexp.MustCompile(`^fuzz\.yaml:[1-9]\d*:[1-9]\d*: `)

func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/hostile/*.yaml")
	seeds = append(seeds, exampleFile)
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	frames, _ := os.ReadFile(filepath.Join(acmeDir, "acme_servo_serial.pcapng"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load("fuzz.yaml", data)
		if err != nil && !loadErrorForm.MatchString(err.Error()) {
			t.Fatalf("error does not start with FILE:LINE:COL: %q", err)
		}
		var p *Protocol
		if err == nil {
			p, err = New(s)
		}
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r\x1b") || !strings.HasPrefix(msg, "fuzz.yaml:") && !strings.HasPrefix(msg, "dissect: ") {
				t.Fatalf("error not one line naming the file: %q", msg)
			}
			return
		}
		_ = p.Info()
		info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.Serial}}
		ps := p.NewParser(&info)
		// a slice of each: resynchronising over every offset of bytes no
		// frame fits costs offsets × frame size (docs/protocol-file.md)
		for _, in := range [][]byte{data[:min(len(data), 512)], frames[:min(len(frames), 1024)]} {
			var rec dissect.Record
			c := &dissect.Ctx{Stream: &info, Decode: true, Rec: &rec, Time: time.Unix(0, 0)}
			for i := 0; i < len(in); {
				rec.Reset()
				n, err := ps.Parse(c, in[i:])
				if err == nil && n > 0 {
					i += n
					continue
				}
				k, _ := ps.Sync(c, in[i+1:])
				i += 1 + k
			}
		}
	})
}

// FuzzExampleStream decodes bytes with the example protocol through
// dissect.Stream, cut in two places: no panic, and every byte in exactly
// one record of its direction.
func FuzzExampleStream(f *testing.F) {
	_, whole := serialUnits(f)
	f.Add(whole[0], 3, 7)
	f.Add(whole[1], 1, 40)
	f.Add([]byte{0xa5, 0x5a, 0xff, 0, 1}, 2, 2)
	p := loadExample(f)
	f.Fuzz(func(t *testing.T, b []byte, i, j int) {
		reg := dissecttest.Registry(t, []string{"tcp.port==5600,acme-servo"}, p)
		var sink dissecttest.Collector
		st := dissect.NewStream(benchInfoPort(5600), reg, &sink, dissect.StreamOptions{Decode: true})
		i, j = min(max(i, 0), len(b)), min(max(j, 0), len(b))
		i, j = min(i, j), max(i, j)
		at := time.Unix(0, 0)
		st.Data(1, at, b[:i])
		st.Data(1, at, b[i:j])
		st.Data(1, at, b[j:])
		st.End(0, at)
		st.End(1, at)
		next := int64(0)
		for _, r := range sink.Records {
			if r.Offset != next {
				t.Fatalf("record %s at %d, want %d", r.Type, r.Offset, next)
			}
			next += r.Length
		}
		if next != int64(len(b)) {
			t.Fatalf("records cover %d of %d bytes", next, len(b))
		}
	})
}
