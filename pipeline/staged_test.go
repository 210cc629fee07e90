package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
	"github.com/dissect-tools/dissect/internal/testenc/interleave"
	"github.com/dissect-tools/dissect/reassembly"
)

// summaryOf runs src without a sink (as -q does) with the given workers and
// returns the summary, its time taken left out, and Run's error.
func summaryOf(t *testing.T, src capture.Source, workers int, packets int64) (any, string) {
	t.Helper()
	reg := deltaRegistry(t)
	sum, err := Run(context.Background(), src, Config{Registry: reg, CountOnly: true, Workers: workers, Packets: packets})
	sum.Elapsed = 0
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return *sum, msg
}

// A summary-only run on two goroutines (reading and reassembly on one,
// dissecting on the other) gives the summary of a run on one, field for
// field (messages per type in order of first appearance, gaps, skipped
// bytes, the warnings and notes sampled, reassembly's problems, the span,
// packets without a time), on every shipped capture, on 64 interleaved
// streams with gaps and garbage, on packets without timestamps, with -c,
// and on a capture cut off in the middle of a record (the same error).
// Every goroutine has ended after each run.
func TestStagedSummaryIsSerialSummary(t *testing.T) {
	before := runtime.NumGoroutine()
	gen, err := interleave.Deltarobot(64, 200)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]func() capture.Source{
		"interleaved64": func() capture.Source { return &sliceSource{pkts: gen} },
	}
	// Packets without a timestamp complete gap and skipped records too,
	// which then carry a warning.
	noTime := append([]capture.Packet(nil), gen...)
	for i := range noTime {
		noTime[i].NoTime = i%3 == 1
	}
	sources["no-time"] = func() capture.Source { return &sliceSource{pkts: noTime} }
	sources["conflict"] = func() capture.Source { return &sliceSource{pkts: conflicting()} }

	files, _ := filepath.Glob("../pcaps/*.pcap*")
	real, _ := filepath.Glob("../../shared/captures/*/*.pcap*")
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	if b, err := os.ReadFile("../pcaps/deltarobot_session.pcap"); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(cut, b[:len(b)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(append(files, real...), cut) {
		sources[filepath.Base(f)] = func() capture.Source {
			src, err := capture.OpenFile(f)
			if err != nil {
				t.Fatal(err)
			}
			return src
		}
	}
	if len(real) == 0 {
		t.Log("../../shared/captures not found: the real captures are not compared")
	}
	for name, src := range sources {
		for _, packets := range []int64{0, 7} {
			want, wantErr := summaryOf(t, src(), 1, packets)
			got, gotErr := summaryOf(t, src(), 2, packets)
			if !reflect.DeepEqual(got, want) || gotErr != wantErr {
				t.Errorf("%s -c %d: two goroutines give\n%+v (error %q)\none gives\n%+v (error %q)", name, packets, got, gotErr, want, wantErr)
			}
			if name == "cut.pcap" && packets == 0 && wantErr == "" {
				t.Fatal("the cut capture reads without an error")
			}
		}
	}
	checkGoroutines(t, before)
}

// A stream cut into 7-byte segments (thousands of Data events, batches
// full by count) gives the same summary on two goroutines.
func TestStagedManyEvents(t *testing.T) {
	s := newSession(t, 3000, 7)
	want, _ := summaryOf(t, &sliceSource{pkts: packetsOf(s)}, 1, 0)
	got, _ := summaryOf(t, &sliceSource{pkts: packetsOf(s)}, 2, 0)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("two goroutines give\n%+v\none gives\n%+v", got, want)
	}
}

// The stager hands over every event in order with its own bytes, also
// data larger than a batch's room and more events than a batch holds,
// while the batches are reused.
func TestStagerOrderAndData(t *testing.T) {
	g := &stager{free: make(chan *stageBatch, stageBatches+1), full: make(chan *stageBatch, stageBatches)}
	for range stageBatches {
		g.free <- &stageBatch{}
	}
	g.cur = &stageBatch{}
	sizes := []int{10, 3 * stageBytes, 5, stageBytes, 0, 1}
	for range 3 * stageEvents {
		sizes = append(sizes, 3)
	}
	payload := func(i, n int) []byte {
		b := make([]byte, n)
		for k := range b {
			b[k] = byte(i*7 + k)
		}
		return b
	}
	done := make(chan error, 1)
	go func() {
		i := 0
		for b := range g.full {
			for _, e := range b.ev {
				if e.kind != evData || e.t.Time.Unix() != int64(i) || string(b.data[e.off:e.off+e.n]) != string(payload(i, sizes[i])) {
					done <- fmt.Errorf("event %d: kind %d time %d, %d bytes", i, e.kind, e.t.Time.Unix(), e.n)
					return
				}
				i++
			}
			g.free <- b
		}
		if i != len(sizes) {
			done <- fmt.Errorf("%d events, want %d", i, len(sizes))
		}
		done <- nil
	}()
	c := &reassembly.Stream{}
	s := &reassembly.Stream{User: c}
	for i, n := range sizes {
		g.Data(s, 0, reassembly.Stamp{Time: time.Unix(int64(i), 0), Frame: int64(i + 1)}, payload(i, n))
	}
	g.full <- g.cur
	close(g.full)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func packetsOf(s *session) []capture.Packet {
	var pkts []capture.Packet
	for i, fr := range s.frames {
		pkts = append(pkts, *fr.Packet(time.Unix(1700000000, 0).Add(time.Duration(i) * time.Microsecond)))
	}
	return pkts
}

// conflicting is a Deltarobot connection whose second segment arrives
// before the first, then again with other bytes: a conflict.
func conflicting() []capture.Packet {
	c := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:4000"), 100, 5000)
	var lb deltaenc.Builder
	lb.Magic()
	lb.Version(6)
	for i := range 20 {
		lb.ActuatorPosition(float32(i), 0, 0, 0)
	}
	data, _, _ := lb.Finish()
	segs := c.Handshake()
	base := c.Next[pktbuild.Server]
	other := bytes.Repeat([]byte{0xee}, 100)
	segs = append(segs,
		c.Segment(pktbuild.Server, pktbuild.PSH, base+100, data[100:200]),
		c.Segment(pktbuild.Server, pktbuild.PSH, base+100, other),
		c.Send(pktbuild.Server, data[:100]))
	c.Skip(pktbuild.Server, 100)
	segs = append(segs, c.Send(pktbuild.Server, data[200:]), c.Fin(pktbuild.Server), c.Fin(pktbuild.Client))
	return packetsOf(&session{frames: framesOf(segs)})
}

func framesOf(segs []pktbuild.Segment) []pktbuild.Frame {
	var fs []pktbuild.Frame
	for _, sg := range segs {
		fs = append(fs, sg.Frame(pktbuild.Encap{Type: capture.LinkEthernet}))
	}
	return fs
}
