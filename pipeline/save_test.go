package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// TestNewSaveOpenFile writes serial reads through a Save on a file the
// caller opened, and reads them back: one interface named as given, link
// type 147, the directions, the bytes; Close closes the caller's file.
func TestNewSaveOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "link.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSave(f, "/dev/a+/dev/b", capture.LinkUser0, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != path {
		t.Fatalf("Path %q, want %q", s.Path(), path)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	sent := []capture.Packet{
		{Time: t0, LinkType: capture.LinkUser0, Interface: 3, Direction: capture.DirOutbound, Data: []byte("host"), Length: 4},
		{Time: t0.Add(time.Millisecond), LinkType: capture.LinkUser0, Direction: capture.DirInbound, Data: []byte("device"), Length: 6},
	}
	for i := range sent {
		if err := s.WritePacket(&sent[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(SaveStats{Captured: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0}); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("after Close, writing the caller's file gives %v, want os.ErrClosed", err)
	}
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for i, want := range sent {
		p, err := src.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if p.InterfaceName != "/dev/a+/dev/b" || p.Interface != 0 || p.LinkType != capture.LinkUser0 ||
			p.Direction != want.Direction || string(p.Data) != string(want.Data) || !p.Time.Equal(want.Time) {
			t.Fatalf("packet %d: %+v, want %+v on interface 0 named /dev/a+/dev/b", i, p, want)
		}
	}
	if p, err := src.Next(); err == nil {
		t.Fatalf("a third packet: %+v", p)
	}
}

// TestNewSaveReaderGone gives NewSave a pipe whose reader is gone: the
// header cannot be written, the error says why (EPIPE, as Wireshark
// closing an extcap's fifo gives), names the file, and the file is closed.
func TestNewSaveReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	_, err = NewSave(w, "link", capture.LinkUser0, 4096)
	if !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("NewSave on a pipe without a reader: %v, want EPIPE", err)
	}
	if !strings.HasPrefix(err.Error(), w.Name()+": ") {
		t.Fatalf("error %q does not start with the file's name %q", err, w.Name())
	}
	if err := w.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("the pipe was left open (Close: %v)", err)
	}
}
