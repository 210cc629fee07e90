package pipeline

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
)

// writePcap writes frames as a pcap file.
func writePcap(t *testing.T, path string, s *session) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewPcapWriter(f, capture.LinkEthernet, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range s.frames {
		if err := w.WritePacket(fr.Packet(time.Unix(1700000000, 0))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// Files are read in order as one capture; a missing file and a damaged one
// do not stop the others, and their errors come back joined, each naming
// its file.
func TestFilesInOrderWithErrors(t *testing.T) {
	dir := t.TempDir()
	s := newSession(t, 50, 300)
	a := filepath.Join(dir, "a.pcap")
	writePcap(t, a, s)
	bad := filepath.Join(dir, "bad.pcap")
	if err := os.WriteFile(bad, []byte("not a capture at all, no"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pcap")
	sink := newGateSink(true)
	src := NewFiles([]string{a, missing, bad, a}, nil)
	sum, err := Run(context.Background(), src, Config{Registry: registry(t), Sink: sink})
	if sum.Packets != int64(2*len(s.frames)) {
		t.Errorf("%d packets decoded, want %d (the good file twice)", sum.Packets, 2*len(s.frames))
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok || len(j.Unwrap()) != 2 {
		t.Fatalf("error %v: want the two file errors joined", err)
	}
	errs := j.Unwrap()
	if !strings.Contains(errs[0].Error(), "missing.pcap") || !strings.Contains(errs[1].Error(), "bad.pcap") {
		t.Errorf("errors %q, %q: want one naming each bad file, in order", errs[0], errs[1])
	}
	if !errors.Is(errs[1], capture.ErrNotCapture) {
		t.Errorf("%v: want ErrNotCapture", errs[1])
	}
	// The connection is decoded whole; its second copy (the same SYN, the
	// same sequence numbers) is a retransmission of a finished connection
	// and adds nothing.
	for stream := range 1 {
		var recs []*dissect.Record
		for _, r := range sink.records() {
			if r.Stream == stream {
				recs = append(recs, r)
			}
		}
		tl := tallyRecords(t, recs)
		for d := range 2 {
			if tl.msgs[d] != s.msgs[d] || tl.msgBytes[d] != s.bytes[d] {
				t.Errorf("stream %d direction %d: %d messages, %d bytes; want %d, %d", stream, d, tl.msgs[d], tl.msgBytes[d], s.msgs[d], s.bytes[d])
			}
		}
	}
}

// sliceSource yields fixed packets, then io.EOF.
type sliceSource struct {
	pkts []capture.Packet
	i    int
}

func (s *sliceSource) Next() (*capture.Packet, error) {
	if s.i >= len(s.pkts) {
		return nil, io.EOF
	}
	s.i++
	return &s.pkts[s.i-1], nil
}

func (s *sliceSource) Close() error { return nil }

// Packets without a timestamp (pcapng simple packet blocks) are counted,
// left out of the capture's span, and the records they complete say so.
func TestNoTimePackets(t *testing.T) {
	s := newSession(t, 20, 100)
	t0 := time.Unix(1700000000, 0).UTC()
	var pkts []capture.Packet
	for i, fr := range s.frames {
		p := *fr.Packet(t0.Add(time.Duration(i) * time.Millisecond))
		if i >= 3 && i%2 == 1 { // the leader's data segments, some of them
			p.NoTime = true
			p.Time = pkts[len(pkts)-1].Time
		}
		pkts = append(pkts, p)
	}
	// The last packet has a timestamp far in the future that must count,
	// and the span must not include the NoTime packets' (copied) times.
	sink := newGateSink(true)
	sum, err := Run(context.Background(), &sliceSource{pkts: pkts}, Config{Registry: registry(t), Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	var noTime int64
	for _, p := range pkts {
		if p.NoTime {
			noTime++
		}
	}
	if sum.NoTime != noTime || noTime == 0 {
		t.Errorf("summary counts %d packets without a timestamp, want %d", sum.NoTime, noTime)
	}
	if !sum.First.Equal(t0) {
		t.Errorf("span starts %v, want %v", sum.First, t0)
	}
	warned := 0
	for _, r := range sink.records() {
		for _, w := range r.Warnings {
			if w == noTimeWarning {
				warned++
			}
		}
	}
	if warned == 0 {
		t.Errorf("no record completed by a packet without a timestamp says so")
	}
}

// A retransmitted segment whose bytes differ from the first copy: the
// first copy is decoded, and the next record of that direction says so.
func TestConflictingRetransmissionWarned(t *testing.T) {
	s := newSession(t, 40, 100)
	var pkts []capture.Packet
	t0 := time.Unix(1700000000, 0).UTC()
	dup := -1
	for i, fr := range s.frames {
		p := *fr.Packet(t0.Add(time.Duration(i) * time.Millisecond))
		pkts = append(pkts, p)
		if dup < 0 && i > 4 && len(fr.Data) > 140 { // a leader data segment (100 bytes)
			dup = i
			q := p
			q.Data = append([]byte(nil), p.Data...)
			q.Data[len(q.Data)-1] ^= 0xff // other bytes, same range
			pkts = append(pkts, q)
		}
	}
	sink := newGateSink(true)
	sum, err := Run(context.Background(), &sliceSource{pkts: pkts}, Config{Registry: registry(t), Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	tl := tallyRecords(t, sink.records())
	if tl.msgs[1] != s.msgs[1] || tl.gap[1] != 0 {
		t.Errorf("leader: %d messages, %d gap bytes; want %d, none", tl.msgs[1], tl.gap[1], s.msgs[1])
	}
	warned := 0
	for _, r := range sink.records() {
		for _, w := range r.Warnings {
			if strings.Contains(w, "differ from the first copy") {
				warned++
			}
		}
	}
	found := false
	for _, p := range sum.Problems {
		found = found || strings.Contains(p.What, "differed from the first copy")
	}
	if warned != 1 || !found {
		t.Errorf("%d records warned, summary line %v; want 1 and a summary line", warned, found)
	}
}

// Config.Packets ends a file run after exactly that many packets (tshark's
// -c), across file boundaries; the streams open then are still finished.
func TestFilePacketLimit(t *testing.T) {
	dir := t.TempDir()
	s := newSession(t, 50, 300)
	a := filepath.Join(dir, "a.pcap")
	writePcap(t, a, s)
	n := int64(len(s.frames))
	for _, limit := range []int64{1, 17, n, n + 5, 2*n + 100} {
		sink := newGateSink(true)
		src := NewFiles([]string{a, a}, nil)
		sum, err := Run(context.Background(), src, Config{Registry: registry(t), Sink: sink, Packets: limit})
		if err != nil {
			t.Fatal(err)
		}
		if want := min(limit, 2*n); sum.Packets != want {
			t.Errorf("-c %d: %d packets decoded, want %d", limit, sum.Packets, want)
		}
	}
}
