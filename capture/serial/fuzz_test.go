package serial

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"dissect/capture"
)

// FuzzTap feeds two inputs, cut into reads at fuzzer-chosen places, through
// a tap. Invariants: every byte comes out once, in order, in its direction;
// no packet is empty or larger than ReadSize; the tap ends with io.EOF.
//
// The tap's goroutines make coverage vary from run to run, so the fuzzer
// keeps minimising "new" inputs; run it with a short minimisation time:
//
//	go test -run=^$ -fuzz=FuzzTap -fuzztime=30s -fuzzminimizetime=2s ./capture/serial/
func FuzzTap(f *testing.F) {
	f.Add([]byte("\x01\x30DeltaRVr\x02\x20\x01\x00\x00\x00"), []byte("\x01\x30DeltaRVr"), []byte{3, 1, 200})
	f.Add([]byte("\xfd\xba\xdc\x01\x50\xb4\x11\xff\x04\x00\x00\xab"), []byte{}, []byte{1})
	f.Add([]byte{}, bytes.Repeat([]byte{0x55}, 5000), []byte{0, 0, 255, 7})
	f.Fuzz(func(t *testing.T, out, in, cuts []byte) {
		split := func(b []byte) [][]byte {
			var chunks [][]byte
			for i := 0; len(b) > 0; i++ {
				n := len(b)
				if len(cuts) > 0 {
					n = min(n, int(cuts[i%len(cuts)])+1)
				}
				chunks = append(chunks, b[:n])
				b = b[n:]
			}
			return chunks
		}
		tap, err := NewTap("fuzz", 0,
			Input{Name: "out", R: &chunkReader{chunks: split(bytes.Clone(out))}, Dir: capture.DirOutbound},
			Input{Name: "in", R: &chunkReader{chunks: split(bytes.Clone(in))}, Dir: capture.DirInbound})
		if err != nil {
			t.Fatal(err)
		}
		defer tap.Close()
		var gotOut, gotIn []byte
		for {
			p, err := tap.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Data) == 0 || len(p.Data) > ReadSize || p.LinkType != capture.LinkUser0 || p.InterfaceName != "fuzz" {
				t.Fatalf("bad packet: %d bytes, link type %d, name %q", len(p.Data), p.LinkType, p.InterfaceName)
			}
			switch p.Direction {
			case capture.DirOutbound:
				gotOut = append(gotOut, p.Data...)
			case capture.DirInbound:
				gotIn = append(gotIn, p.Data...)
			default:
				t.Fatalf("direction %d", p.Direction)
			}
		}
		if !bytes.Equal(gotOut, out) || !bytes.Equal(gotIn, in) {
			t.Fatalf("bytes differ: out %d/%d, in %d/%d", len(gotOut), len(out), len(gotIn), len(in))
		}
	})
}
