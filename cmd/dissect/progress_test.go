package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"
)

// screen is a small terminal emulator: enough of a VT100 for what dissect
// and head write (printable text, \r, \n, CSI sequences, of which ESC[K
// erases to the end of the row). A character written past the last
// column wraps to the next row, as on xterm; wrapped records that.
type screen struct {
	width   int
	rows    [][]rune
	r, c    int
	wrapped bool
}

func (s *screen) row() []rune {
	for len(s.rows) <= s.r {
		s.rows = append(s.rows, nil)
	}
	return s.rows[s.r]
}

func (s *screen) write(b []byte) {
	for len(b) > 0 {
		switch b[0] {
		case '\r':
			s.c = 0
			b = b[1:]
			continue
		case '\n':
			s.r++
			b = b[1:]
			continue
		case 0x1b:
			// CSI: ESC [ parameters final byte.
			i := 2
			for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
				i++
			}
			if len(b) < 2 || b[1] != '[' || i >= len(b) {
				b = b[1:]
				continue
			}
			if b[i] == 'K' {
				if row := s.row(); s.c < len(row) {
					s.rows[s.r] = row[:s.c]
				}
			}
			b = b[i+1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if s.c >= s.width {
			s.wrapped = true
			s.r++
			s.c = 0
		}
		row := s.row()
		for len(row) <= s.c {
			row = append(row, ' ')
		}
		row[s.c] = r
		s.rows[s.r] = row
		s.c++
	}
}

func (s *screen) String() string {
	var b strings.Builder
	for i, row := range s.rows {
		b.WriteString(strconv.Itoa(i) + "|" + string(row) + "|\n")
	}
	return b.String()
}

// runOnPty runs the command line in-process with stderr on a pty of
// 60 columns and returns everything written to the pty. head, when not
// nil, gets the read end of a pipe that is stdout, and the pty to print
// on, as "dissect ... | head" on that terminal.
func runOnPty(t *testing.T, args []string, head func(stdout io.ReadCloser, tty io.Writer)) string {
	t.Helper()
	t.Setenv("COLUMNS", "")
	t.Setenv("LC_ALL", "C.UTF-8")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 60}); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	read := make(chan struct{})
	go func() {
		io.Copy(&raw, ptmx) // ends with EIO once tty is closed
		close(read)
	}()
	var stdout io.Writer = io.Discard
	var wg sync.WaitGroup
	if head != nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout = pw
		wg.Add(1)
		go func() {
			defer wg.Done()
			head(pr, tty)
		}()
		defer pw.Close()
	}
	code := run(args, strings.NewReader(""), stdout, tty)
	if f, ok := stdout.(*os.File); ok {
		f.Close()
	}
	wg.Wait()
	tty.Close()
	<-read
	if code != 0 {
		t.Fatalf("exit %d; terminal:\n%q", code, raw.String())
	}
	return raw.String()
}

// longCaptures returns 20 names of one sample capture, each a symbolic
// link with a name of 150 characters and more: one run long enough to
// write more than the table's buffer before it ends.
func longCaptures(t *testing.T) []string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join(pcapDir, "vrpn_multi_device.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var names []string
	for i := range 20 {
		name := filepath.Join(dir, strings.Repeat("x", 150)+strconv.Itoa(i)+".pcap")
		if err := os.Symlink(src, name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

const barMark = ".pcap" // in every bar line: NAME.pcap (i/20)

// checkScreen: nothing the bar drew wrapped, and the terminal's final
// screen holds no bar line.
func checkScreen(t *testing.T, raw string) *screen {
	t.Helper()
	s := &screen{width: 60}
	s.write([]byte(raw))
	if s.wrapped {
		t.Errorf("a line wrapped on 60 columns:\n%s", s)
	}
	for _, row := range s.rows {
		if strings.Contains(string(row), barMark) {
			t.Errorf("the bar is left on the screen:\n%s\nraw: %q", s, raw)
			break
		}
	}
	return s
}

// TestProgressOnATerminal: on a terminal of 60 columns, with a file name
// of 150 characters, the bar fits its row (the name is shortened with
// "…"), and it is gone from the screen when the run ends.
func TestProgressOnATerminal(t *testing.T) {
	files := longCaptures(t)
	raw := runOnPty(t, append([]string{"-q", "--no-summary", "--progress", "always"}, files...), nil)
	if !strings.Contains(raw, barMark) || !strings.Contains(raw, "%") {
		t.Fatalf("no bar drawn: %q", raw)
	}
	checkScreen(t, raw)
	if !strings.Contains(raw, "…") || !strings.Contains(raw, "0.pcap (1/20)") {
		t.Errorf("the name is not shortened in the middle: %q", raw)
	}
	if !strings.HasSuffix(raw, "\r\x1b[K") {
		t.Errorf("the last write is not the clear: %q", raw[max(0, len(raw)-100):])
	}
}

// TestProgressPipedToHead: dissect --progress always FILES | head -1 (cut to 50 columns) on
// that terminal. head prints the first line of the table and quits; the
// run ends on EPIPE. The terminal must end with head's line on its own
// row, and no bar: not glued to head's line, not left below it.
func TestProgressPipedToHead(t *testing.T) {
	files := longCaptures(t)
	var line string
	raw := runOnPty(t, append([]string{"--no-summary", "--progress", "always"}, files...), func(stdout io.ReadCloser, tty io.Writer) {
		l, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			t.Error(err)
		}
		line = l
		// head -1 | cut -c1-50: the table's header is wider than the
		// terminal, and a wrap of head's line is not the bar's.
		tty.Write([]byte(strings.TrimSpace(l[:min(len(l), 50)]) + "\n"))
		stdout.Close()
	})
	if !strings.HasPrefix(line, "TIME") {
		t.Fatalf("head read %q, want the table's header", line)
	}
	s := checkScreen(t, raw)
	found := false
	for _, row := range s.rows {
		if strings.HasPrefix(string(row), "TIME") {
			found = true
		}
	}
	if !found {
		t.Errorf("head's line does not start a row:\n%s", s)
	}
}
