package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// TestFollowTSharkIndex checks that follow,tcp,raw,1 follows the second
// TCP stream opened, whatever the streams of other transports between,
// and writes each record's bytes as a line of hex, B's after a tab, a gap
// (no bytes) without a line.
func TestFollowTSharkIndex(t *testing.T) {
	f := NewFollowTShark(dissect.TCP, "raw", 1)
	t0 := time.Unix(100, 0)
	rec := func(stream int, src, dst, typ string, raw []byte, length int64) *dissect.Record {
		return &dissect.Record{Time: t0, Proto: "toy", Transport: dissect.TCP, Stream: stream, Src: src, Dst: dst, Type: typ, Raw: raw, Length: length}
	}
	f.StreamOpened(dissect.StreamID{ID: 0, Index: 0, Transport: dissect.UDP})
	f.StreamOpened(dissect.StreamID{ID: 1, Index: 0, Transport: dissect.TCP}) // tcp.stream 0
	f.Record(rec(1, "a:1", "b:2", "x", []byte{0xee}, 1))
	f.StreamOpened(dissect.StreamID{ID: 2, Index: 1, Transport: dissect.UDP})
	f.StreamOpened(dissect.StreamID{ID: 3, Index: 1, Transport: dissect.TCP}) // tcp.stream 1
	f.StreamOpened(dissect.StreamID{ID: 4, Index: 2, Transport: dissect.TCP})
	f.Record(rec(3, "c:3", "d:4", "x", []byte{0x01, 0x02}, 2))
	f.Record(rec(3, "d:4", "c:3", "y", []byte{0xff}, 1))
	f.Record(rec(3, "c:3", "d:4", dissect.TypeGap, nil, 5))
	f.Record(rec(4, "c:3", "d:5", "x", []byte{0xdd}, 1))
	var b strings.Builder
	if err := f.WriteTable(&b, TableOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	rule := strings.Repeat("=", 67)
	want := rule + "\nFollow: tcp,raw\nFilter: tcp.stream eq 1 (stream 3)\nNode 0: c:3\nNode 1: d:4\n0102\n\tff\n" + rule + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if !f.NeedsRaw() {
		t.Error("raw needs the bytes")
	}
}

// TestFollowTSharkMissing checks the two ways a tshark index finds
// nothing: fewer streams of the transport, and a stream without records.
func TestFollowTSharkMissing(t *testing.T) {
	f := NewFollowTShark(dissect.UDP, "ascii", 2)
	f.StreamOpened(dissect.StreamID{ID: 0, Index: 0, Transport: dissect.UDP})
	f.StreamOpened(dissect.StreamID{ID: 1, Index: 0, Transport: dissect.TCP})
	var b strings.Builder
	f.WriteTable(&b, TableOptions{})
	if !strings.Contains(b.String(), "\nno udp stream 2 (1 udp streams in all)\n") {
		t.Errorf("past the last:\n%s", b.String())
	}
	g := NewFollowTShark(dissect.TCP, "hex", 0)
	g.StreamOpened(dissect.StreamID{ID: 7, Index: 0, Transport: dissect.TCP})
	b.Reset()
	g.WriteTable(&b, TableOptions{})
	if !strings.Contains(b.String(), "Filter: tcp.stream eq 0 (stream 7)\nno record\n") {
		t.Errorf("no record:\n%s", b.String())
	}
}
