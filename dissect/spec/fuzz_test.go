package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// FuzzLoad loads a protocol file: it must fail with one line naming the
// file, or give a protocol whose parser then frames the file's own bytes
// (and the example frames) without panicking, within its budgets.
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
