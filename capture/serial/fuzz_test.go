package serial

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/dissect-tools/dissect/capture"
)

// FuzzTap feeds two inputs, cut into reads at fuzzer-chosen places, through
// a tap. Invariants: every byte comes out once, in order, in its direction,
// or (with a small queue) is counted in a Dropped packet at its place; no
// read is empty or larger than ReadSize; the stats agree; the tap ends
// with io.EOF.
//
// The tap's goroutines make coverage vary from run to run, so the fuzzer
// keeps minimising "new" inputs; run it with a short minimisation time:
//
//	go test -run=^$ -fuzz=FuzzTap -fuzztime=30s -fuzzminimizetime=2s ./capture/serial/
func FuzzTap(f *testing.F) {
	f.Add([]byte("\x01\x30DeltaRVr\x02\x20\x01\x00\x00\x00"), []byte("\x01\x30DeltaRVr"), []byte{3, 1, 200})
	f.Add([]byte("\xfd\xba\xdc\x01\x50\xb4\x11\xff\x04\x00\x00\xab"), []byte{}, []byte{1})
	f.Add([]byte{}, bytes.Repeat([]byte{0x55}, 5000), []byte{0, 0, 255, 7})
	f.Add(pattern(1<<16, 1), pattern(1<<16, 2), []byte{255, 15, 200})
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
		// With the default queue nothing is dropped; with the smallest,
		// reads may be (the readers are faster than this consumer), but
		// the packets still account for every byte, at its place.
		for _, queue := range []int{0, MinQueueBytes} {
			tap, err := NewTapQueue("fuzz", 0, queue,
				Input{Name: "out", R: &chunkReader{chunks: split(bytes.Clone(out))}, Dir: capture.DirOutbound},
				Input{Name: "in", R: &chunkReader{chunks: split(bytes.Clone(in))}, Dir: capture.DirInbound})
			if err != nil {
				t.Fatal(err)
			}
			tOut, tIn := &tally{want: out}, &tally{want: in}
			for {
				p, err := tap.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Data) > ReadSize || p.LinkType != capture.LinkUser0 || p.InterfaceName != "fuzz" || (p.Dropped && queue == 0) {
					t.Fatalf("bad packet: %d bytes, dropped %v, link type %d, name %q", len(p.Data), p.Dropped, p.LinkType, p.InterfaceName)
				}
				switch p.Direction {
				case capture.DirOutbound:
					tOut.add(t, p)
				case capture.DirInbound:
					tIn.add(t, p)
				default:
					t.Fatalf("direction %d", p.Direction)
				}
			}
			tap.Close()
			if !tOut.done() || !tIn.done() {
				t.Fatalf("queue %d: bytes accounted for: out %d/%d, in %d/%d", queue, tOut.pos, len(out), tIn.pos, len(in))
			}
			st := tap.Stats()
			tOut.checkStats(t, "out", st.Outbound)
			tIn.checkStats(t, "in", st.Inbound)
		}
	})
}
