package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
)

// flushSink keeps the records it is given; at each Flush it hands the
// times of the records received so far to the test.
type flushSink struct {
	mu      sync.Mutex
	times   []time.Time
	flushed chan []time.Time
	err     error // returned by Flush once set
}

func newFlushSink() *flushSink { return &flushSink{flushed: make(chan []time.Time, 1024)} }

func (s *flushSink) Record(r *dissect.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.times = append(s.times, r.Time)
	return nil
}

func (s *flushSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.flushed <- append([]time.Time(nil), s.times...):
	default: // the test is not waiting for this many flushes
	}
	return s.err
}

// streamPackets are the first packets of a shipped capture: Roboid over
// UDP, where every datagram holds whole messages, so each one's record
// can be written before the next packet comes.
func streamPackets(t *testing.T, n int) []capture.Packet {
	t.Helper()
	src, err := capture.OpenFile("../pcaps/roboid_session.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var ps []capture.Packet
	for range n {
		p, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		q := *p
		q.Data = append([]byte(nil), p.Data...)
		ps = append(ps, q)
	}
	return ps
}

// packetWriter writes a capture a packet at a time; flush pushes what it
// has written so far into the pipe (through a compressor's flush).
type packetWriter struct {
	write func(p *capture.Packet) error
	flush func() error
	close func() error
}

type flusher interface {
	io.Writer
	Flush() error
}

// newPacketWriter writes format ("pcap", "pcapng") to w, compressed by
// comp ("", "gzip", "zstd", "lz4") with a flush after every packet, as a
// streaming writer (tcpdump -U, a compressor flushed per packet) does.
func newPacketWriter(t *testing.T, w io.WriteCloser, format, comp string) *packetWriter {
	t.Helper()
	out := flusher(nopFlusher{w})
	closeComp := func() error { return nil }
	switch comp {
	case "gzip":
		z := gzip.NewWriter(w)
		out, closeComp = z, z.Close
	case "zstd":
		z, err := zstd.NewWriter(w)
		if err != nil {
			t.Fatal(err)
		}
		out, closeComp = z, z.Close
	case "lz4":
		z := lz4.NewWriter(w)
		out, closeComp = z, z.Close
	}
	pw := &packetWriter{close: func() error {
		if err := closeComp(); err != nil {
			return err
		}
		return w.Close()
	}}
	var capFlush func() error
	switch format {
	case "pcap":
		cw, err := capture.NewPcapWriter(out, capture.LinkEthernet, true)
		if err != nil {
			t.Fatal(err)
		}
		pw.write, capFlush = cw.WritePacket, cw.Flush
	case "pcapng":
		cw, err := capture.NewPcapngWriter(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cw.AddInterface("eth0", capture.LinkEthernet, 262144); err != nil {
			t.Fatal(err)
		}
		pw.write, capFlush = cw.WritePacket, cw.Flush
	}
	pw.flush = func() error {
		if err := capFlush(); err != nil {
			return err
		}
		return out.Flush()
	}
	return pw
}

type nopFlusher struct{ io.Writer }

func (nopFlusher) Flush() error { return nil }

// A capture read from a pipe streams: when the pipe has no bytes ready,
// the sink is flushed with every record decoded so far. Each packet's
// record must reach a flush before the next packet is written (the writer
// waits for it; without the idle flush it would wait for ever, since the
// only other flush comes at the end of the input). Also through a
// compressed stream flushed after each packet, and pcapng.
//
// Not lz4: its reader (pierrec/lz4) returns from a Read only once the
// buffer is full or the stream ends, so records of an lz4 stream come in
// batches of the capture reader's buffer (TestPipeLZ4 checks they all
// come; docs/live.md says so).
func TestPipeFlushesWhenIdle(t *testing.T) {
	ps := streamPackets(t, 6)
	for _, tc := range []struct{ format, comp string }{
		{"pcap", ""}, {"pcapng", ""}, {"pcap", "gzip"}, {"pcapng", "gzip"}, {"pcap", "zstd"}, {"pcapng", "zstd"},
	} {
		t.Run(tc.format+"+"+tc.comp, func(t *testing.T) {
			pr, pwr := io.Pipe()
			sink := newFlushSink()
			src := NewFiles([]string{"-"}, pr)
			type result struct {
				sum *dissect.Summary
				err error
			}
			done := make(chan result, 1)
			go func() {
				sum, err := Run(context.Background(), src, Config{Registry: registry(t), Sink: sink})
				done <- result{sum, err}
			}()
			w := newPacketWriter(t, pwr, tc.format, tc.comp)
			for k := range ps {
				if err := w.write(&ps[k]); err != nil {
					t.Fatal(err)
				}
				if err := w.flush(); err != nil {
					t.Fatal(err)
				}
				waitRecordAt(t, sink, ps[k].Time, k)
			}
			if err := w.close(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.sum.Packets != int64(len(ps)) {
				t.Errorf("%d packets, want %d", r.sum.Packets, len(ps))
			}
		})
	}
}

// An lz4 stream over a pipe, flushed after each packet, is decoded whole
// with the idle hook in place.
func TestPipeLZ4(t *testing.T) {
	ps := streamPackets(t, 6)
	pr, pwr := io.Pipe()
	sink := newFlushSink()
	src := NewFiles([]string{"-"}, pr)
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), src, Config{Registry: registry(t), Sink: sink})
		done <- err
	}()
	w := newPacketWriter(t, pwr, "pcap", "lz4")
	for k := range ps {
		if err := w.write(&ps[k]); err != nil {
			t.Fatal(err)
		}
		if err := w.flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for k := range ps {
		if !slices.ContainsFunc(sink.times, ps[k].Time.Equal) {
			t.Errorf("packet %d: no record", k+1)
		}
	}
}

// waitRecordAt waits for a flush that holds a record of packet k (its
// time). The bound only keeps a failing run from hanging.
func waitRecordAt(t *testing.T, sink *flushSink, at time.Time, k int) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case times := <-sink.flushed:
			for _, tm := range times {
				if tm.Equal(at) {
					return
				}
			}
		case <-timeout:
			t.Fatalf("packet %d (%s): no flush with its record while the pipe waited for the next packet", k+1, at.Format(time.RFC3339Nano))
		}
	}
}

// A flush that fails while the pipe waits (the reader of the output is
// gone) ends the run at once, with the error as an output error, although
// the writer of the pipe sends nothing more and never closes it.
func TestPipeIdleFlushErrorEndsRun(t *testing.T) {
	ps := streamPackets(t, 2)
	pr, pwr := io.Pipe()
	defer pwr.Close()
	sink := newFlushSink()
	gone := errors.New("output gone")
	sink.err = gone
	src := NewFiles([]string{"-"}, pr)
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), src, Config{Registry: registry(t), Sink: sink})
		done <- err
	}()
	w := newPacketWriter(t, pwr, "pcap", "")
	for k := range ps {
		if err := w.write(&ps[k]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var oe *OutputError
		if !errors.As(err, &oe) || !errors.Is(err, gone) {
			t.Fatalf("Run: %v, want an output error wrapping %v", err, gone)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end after the failed flush")
	}
}

// discardFlusher takes records and flushes, counting the flushes.
type discardFlusher struct{ flushes int }

func (d *discardFlusher) Record(*dissect.Record) error { return nil }
func (d *discardFlusher) Flush() error                 { d.flushes++; return nil }

// BenchmarkPipeRead reads a capture from an OS pipe that a goroutine fills
// as fast as it can (cat big.pcap | dissect -), through the stoppable
// reader with its idle hook: the cost of the hook's timer per read, and
// the flushes (reported per run) when the writer falls behind.
func BenchmarkPipeRead(b *testing.B) {
	s := newSession(b, 20000, 1400)
	var buf bytes.Buffer
	w, err := capture.NewPcapWriter(&buf, capture.LinkEthernet, true)
	if err != nil {
		b.Fatal(err)
	}
	for i, fr := range s.frames {
		if err := w.WritePacket(fr.Packet(time.Unix(1700000000, int64(i)*1000))); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	reg := deltaRegistry(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	flushes := 0
	for b.Loop() {
		pr, pw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			pw.Write(raw)
			pw.Close()
		}()
		sink := &discardFlusher{}
		if _, err := Run(context.Background(), NewFiles([]string{"-"}, pr), Config{Registry: reg, Sink: sink}); err != nil {
			b.Fatal(err)
		}
		pr.Close()
		flushes += sink.flushes
	}
	b.ReportMetric(float64(flushes)/float64(b.N), "flushes/op")
}
