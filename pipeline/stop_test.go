package pipeline

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// A file run whose context ends (a signal) stops reading, even while a
// read of stdin is blocked on a pipe that sends nothing more: Run returns
// without error, having decoded at most the packets sent, as at the end of
// the input. Both paths: records to a sink, and -q on two goroutines.
func TestFileRunStopsOnContext(t *testing.T) {
	s := newSession(t, 60000, 1400) // about 1 MiB: more than any read-ahead
	var capBuf bytes.Buffer
	w, err := capture.NewPcapWriter(&capBuf, capture.LinkEthernet, true)
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
	// Send the whole packets that make the first 3/4 of the file.
	raw := capBuf.Bytes()
	cut, sent := 24, int64(0)
	for cut < len(raw)*3/4 {
		n := int(uint32(raw[cut+8]) | uint32(raw[cut+9])<<8 | uint32(raw[cut+10])<<16 | uint32(raw[cut+11])<<24)
		cut += 16 + n
		sent++
	}
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"sink", Config{Registry: registry(t), Sink: newGateSink(true)}},
		{"staged", Config{Registry: registry(t), CountOnly: true, Workers: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				// io.Pipe: Write returns once the run has read it all.
				pw.Write(raw[:cut])
				cancel()
			}()
			sum, err := Run(ctx, NewFiles([]string{"-"}, pr), c.cfg)
			if err != nil {
				t.Errorf("Run: %v, want nil (a stop is an end of input)", err)
			}
			if sum.Packets <= 0 || sum.Packets > sent {
				t.Errorf("%d packets, want 1 to the %d sent", sum.Packets, sent)
			}
			var msgs int64
			for _, c := range sum.Messages {
				msgs += c.Count
			}
			if msgs == 0 {
				t.Error("no message counted: what was read must be decoded")
			}
		})
	}
}

// A named pipe given as a file name (or a process substitution's
// /dev/fd/N) is stopped as stdin is, while its writer sends nothing more.
func TestFileRunStopsOnNamedPipe(t *testing.T) {
	s := newSession(t, 60000, 1400)
	path := filepath.Join(t.TempDir(), "a.pcap")
	writePcap(t, path, s)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wrote := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			cancel()
			wrote <- nil
			return
		}
		w.Write(raw[:len(raw)*3/4]) // returns once all but 64 KiB is read
		cancel()
		wrote <- w
	}()
	sum, err := Run(ctx, NewFiles([]string{fifo}, nil), Config{Registry: registry(t), Sink: newGateSink(true)})
	if w := <-wrote; w != nil {
		w.Close()
	}
	if err != nil || sum.Packets <= 0 || sum.Packets >= int64(len(s.frames)) {
		t.Errorf("Run: %d packets of %d, error %v; want some, not all, and no error", sum.Packets, len(s.frames), err)
	}
}

// After Stop, Files gives no packet, also from a source it could read.
func TestFilesStop(t *testing.T) {
	f := NewFiles([]string{"/nonexistent/a.pcap", "-"}, bytes.NewReader(nil))
	f.Stop()
	f.Stop() // twice is fine
	if p, err := f.Next(); p != nil || err != io.EOF {
		t.Errorf("Next after Stop: %v, %v; want nil, io.EOF", p, err)
	}
}
