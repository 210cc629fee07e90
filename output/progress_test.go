package output

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock           { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }
func testProgress(o ProgressOptions) (*Progress, *bytes.Buffer, *fakeClock) {
	var b bytes.Buffer
	c := newFakeClock()
	return newProgress(&b, o, c.now), &b, c
}

// drawnLines splits what the bar wrote into the lines it drew: each draw
// is "\r" LINE "\x1b[K"; a clear is "\r\x1b[K" and gives "".
func drawnLines(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for out != "" {
		if !strings.HasPrefix(out, "\r") {
			t.Fatalf("a write does not start with \\r: %q", out)
		}
		end := strings.Index(out, "\x1b[K")
		if end < 0 {
			t.Fatalf("a write does not end with ESC[K: %q", out)
		}
		lines = append(lines, out[1:end])
		out = out[end+3:]
	}
	return lines
}

// lastLine returns the line drawn by the last write since mark.
func lastLine(t *testing.T, b *bytes.Buffer, mark int) string {
	t.Helper()
	lines := drawnLines(t, b.String()[mark:])
	if len(lines) == 0 {
		t.Fatalf("nothing drawn")
	}
	return lines[len(lines)-1]
}

// progressLabel returns a file name of n bytes mixing plain text, wide
// characters, combining marks and characters the terminal must not see.
func progressLabel(n int) string {
	const pieces = "dir/sub-€-日本語-e\u0301-\x1b[31m-\u202e-"
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces)
	}
	s := b.String()
	for len(s) > n {
		s = s[:len(s)-1]
	}
	return s
}

// TestProgressNeverWiderThanTheTerminal: for every width from 20 to 200
// and file names of 0 to 300 bytes (wide characters, escapes included),
// known and unknown totals, UTF-8 and ASCII, every drawn line is at most
// width-1 columns, holds no control character, and keeps the percentage
// (or, unknown total, the bytes read).
func TestProgressNeverWiderThanTheTerminal(t *testing.T) {
	for width := 20; width <= 200; width++ {
		var ps [4]*Progress
		var bs [4]*bytes.Buffer
		var cs [4]*fakeClock
		for k := range ps {
			ps[k], bs[k], cs[k] = testProgress(ProgressOptions{Width: width, ASCII: k&1 != 0})
		}
		for n := 0; n <= 300; n++ {
			// Each (width, length) with one of the four kinds, in turn.
			k := (width + n) % 4
			p, b, c := ps[k], bs[k], cs[k]
			total := int64(0)
			if k&2 != 0 {
				total = 100e6
			}
			c.add(time.Second)
			mark := b.Len()
			p.Update(progressLabel(n), int64(n)*100e3, total)
			line := lastLine(t, b, mark)
			if w := stringWidth(line); w > width-1 {
				t.Fatalf("width %d, label %d bytes: line of %d columns: %q", width, n, w, line)
			}
			if strings.ContainsFunc(line, hidden) {
				t.Fatalf("control character in %q", line)
			}
			want := "%"
			if total == 0 {
				want = humanBytes(float64(n) * 100e3)
			}
			if !strings.Contains(line, want) {
				t.Fatalf("width %d: %q lacks %q", width, line, want)
			}
			if k&1 != 0 && !asciiOnly([]byte(line)) {
				t.Fatalf("ASCII: %q", line)
			}
		}
	}
}

// TestProgressNarrowTerminal: below 20 columns the line still fits, down
// to nothing at all on a terminal one column wide.
func TestProgressNarrowTerminal(t *testing.T) {
	for width := 1; width < 20; width++ {
		p, b, c := testProgress(ProgressOptions{Width: width})
		c.add(time.Second)
		p.Update(progressLabel(100), 5e6, 100e6)
		line := lastLine(t, b, 0)
		if w := stringWidth(line); w > width-1 {
			t.Errorf("width %d: %q is %d columns", width, line, w)
		}
	}
}

// TestProgressWhatItShows: on a wide terminal the line holds the whole
// name, the bar, percent, sizes, rate and ETA; on 60 columns a long name
// is shortened in the middle (its start and its end stay) and the bar and
// the sizes go before the rate and the ETA.
func TestProgressWhatItShows(t *testing.T) {
	p, b, c := testProgress(ProgressOptions{Width: 200})
	c.add(2 * time.Second)
	p.Update("capture.pcap", 20e6, 100e6) // 10 MB/s since the start
	want := "capture.pcap [████████                                ]  20%  20.0 MB/100.0 MB  10.0 MB/s  ETA 0:08"
	if got := lastLine(t, b, 0); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	long := "/data/" + strings.Repeat("a", 150) + "-end.pcap"
	p, b, c = testProgress(ProgressOptions{Width: 60})
	c.add(2 * time.Second)
	p.Update(long, 20e6, 100e6)
	got := lastLine(t, b, 0)
	if !strings.HasPrefix(got, "/data/") || !strings.Contains(got, "…") || !strings.Contains(got, "-end.pcap  ") ||
		!strings.HasSuffix(got, "  20%  10.0 MB/s  ETA 0:08") || strings.Contains(got, "[") {
		t.Errorf("60 columns: %q", got)
	}
	if w := stringWidth(got); w != 59 {
		t.Errorf("60 columns: the name should take the room left, the line is %d columns: %q", w, got)
	}
}

// TestProgressUnknownTotal: reading stdin, the line shows the bytes read
// and the rate only.
func TestProgressUnknownTotal(t *testing.T) {
	p, b, c := testProgress(ProgressOptions{Width: 80})
	c.add(4 * time.Second)
	p.Update("-", 2e6, 0)
	if got, want := lastLine(t, b, 0), "-  2.0 MB  500.0 kB/s"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFormatETA(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0:00"},
		{-time.Second, "0:00"},
		{42 * time.Second, "0:42"},
		{41*time.Second + time.Millisecond, "0:42"},
		{62 * time.Second, "1:02"},
		{59*time.Minute + 59*time.Second, "59:59"},
		{time.Hour, "1:00:00"},
		{time.Hour + 2*time.Minute + 3*time.Second, "1:02:03"},
		{27*time.Hour + 5*time.Second, "27:00:05"},
	} {
		if got := formatETA(tc.d); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.d, got, tc.want)
		}
	}
}

// eta returns the ETA shown by line, or "".
func eta(line string) string {
	_, after, ok := strings.Cut(line, "ETA ")
	if !ok {
		return ""
	}
	return after
}

// TestProgressETA: with the clock injected, the ETA is the bytes left
// over the rate: 1 MB/s with 99 MB left is 1:39; 3999 MB left is 1:06:39.
// A stall of 200ms barely moves it (the rate is smoothed over seconds);
// a new file (next label) does not count its first bytes from the start
// of the previous one.
func TestProgressETA(t *testing.T) {
	p, b, c := testProgress(ProgressOptions{Width: 200})
	c.add(time.Second)
	p.Update("a.pcap", 1e6, 100e6)
	if got := eta(lastLine(t, b, 0)); got != "1:39" {
		t.Errorf("after 1s at 1 MB/s: ETA %q, want 1:39", got)
	}
	for i := 2; i <= 10; i++ {
		c.add(time.Second)
		p.Update("a.pcap", int64(i)*1e6, 100e6)
	}
	if got := eta(lastLine(t, b, 0)); got != "1:30" {
		t.Errorf("after 10s at 1 MB/s: ETA %q, want 1:30", got)
	}
	c.add(200 * time.Millisecond) // nothing read
	mark := b.Len()
	p.Update("a.pcap", 10e6, 100e6)
	got := lastLine(t, b, mark)
	if e := eta(got); e != "1:37" {
		t.Errorf("after a 200ms stall: ETA %q, want 1:37 (rate %.0f B/s; line %q)", e, p.rate, got)
	}

	p, b, c = testProgress(ProgressOptions{Width: 200})
	c.add(time.Second)
	p.Update("big.pcap", 1e6, 4000e6)
	if got := eta(lastLine(t, b, 0)); got != "1:06:39" {
		t.Errorf("ETA %q, want 1:06:39", got)
	}
	// The next file's bytes count from its first update, not against
	// the previous file's: 50 MB/s stays 50 MB/s.
	p, b, c = testProgress(ProgressOptions{Width: 200})
	c.add(time.Second)
	p.Update("a.pcap", 50e6, 50e6)
	c.add(time.Second)
	p.Update("b.pcap", 1e6, 100e6)
	c.add(time.Second)
	mark = b.Len()
	p.Update("b.pcap", 51e6, 100e6)
	if line := lastLine(t, b, mark); !strings.HasPrefix(line, "b.pcap") || !strings.Contains(line, "  50.0 MB/s  ETA 0:01") {
		t.Errorf("after a new file: %q, want 50.0 MB/s and ETA 0:01", line)
	}
}

// TestProgressASCII: without UTF-8 the line is pure ASCII: the name's
// characters escaped or replaced, "..." for the cut, "=" for the bar.
func TestProgressASCII(t *testing.T) {
	for _, width := range []int{20, 40, 60, 80, 200} {
		p, b, c := testProgress(ProgressOptions{Width: width, ASCII: true})
		c.add(2 * time.Second)
		p.Update(strings.Repeat("日本語→é", 20)+".pcap", 50e6, 100e6)
		line := lastLine(t, b, 0)
		for _, r := range b.String() {
			if r > 0x7e || (r < 0x20 && r != '\r' && r != 0x1b) {
				t.Fatalf("width %d: %q is not ASCII", width, line)
			}
		}
		if !strings.Contains(line, "...") {
			t.Errorf("width %d: no ... in %q", width, line)
		}
		if width == 200 && !strings.Contains(line, "[=====>    ]") {
			t.Errorf("width %d: no ASCII bar in %q", width, line)
		}
	}
}

// TestProgressEscapesTheName: a name carrying a terminal sequence is
// shown escaped: the only ESC written is the bar's own erase.
func TestProgressEscapesTheName(t *testing.T) {
	p, b, c := testProgress(ProgressOptions{Width: 200})
	c.add(time.Second)
	p.Update("evil\x1b]0;title\x07\u202e.pcap", 1, 2)
	line := lastLine(t, b, 0)
	if !strings.HasPrefix(line, `evil\x1b]0;title\x07\u{202e}.pcap [`) {
		t.Errorf("name not escaped: %q", line)
	}
}

// TestProgressDelayAndRate: without Immediate nothing is drawn in the
// first second; then at most one line every 200ms, and an unchanged line
// is not written again; with Immediate the first update draws.
func TestProgressDelayAndRate(t *testing.T) {
	p, b, c := testProgress(ProgressOptions{Width: 80})
	for range 9 {
		c.add(100 * time.Millisecond)
		p.Update("a.pcap", 1, 100)
	}
	if b.Len() != 0 {
		t.Fatalf("drawn before a second: %q", b.String())
	}
	c.add(100 * time.Millisecond)
	p.Update("a.pcap", 1, 100)
	if n := len(drawnLines(t, b.String())); n != 1 {
		t.Fatalf("%d lines after a second, want 1", n)
	}
	c.add(100 * time.Millisecond)
	p.Update("a.pcap", 50, 100)
	if n := len(drawnLines(t, b.String())); n != 1 {
		t.Fatalf("redrawn after 100ms")
	}
	c.add(100 * time.Millisecond)
	p.Update("a.pcap", 50, 100)
	if n := len(drawnLines(t, b.String())); n != 2 {
		t.Fatalf("not redrawn after 200ms")
	}

	p, b, _ = testProgress(ProgressOptions{Width: 80, Immediate: true})
	p.Update("a.pcap", 1, 100)
	if n := len(drawnLines(t, b.String())); n != 1 {
		t.Fatalf("Immediate: %d lines at once, want 1", n)
	}
}

// TestProgressDoneClears: Done erases a drawn line with "\r\x1b[K" and
// writes nothing when nothing was drawn; an Update after Done, however
// late, draws nothing, and a second Done writes nothing.
func TestProgressDoneClears(t *testing.T) {
	p, b, c := testProgress(ProgressOptions{Width: 80})
	c.add(time.Second)
	p.Update("a.pcap", 1, 100)
	mark := b.Len()
	if mark == 0 {
		t.Fatal("nothing drawn")
	}
	p.Done()
	if got := b.String()[mark:]; got != "\r\x1b[K" {
		t.Errorf("Done wrote %q, want \\r\\x1b[K", got)
	}
	for range 3 {
		c.add(time.Second)
		p.Update("a.pcap", 99, 100)
	}
	p.Done()
	if got := b.String()[mark:]; got != "\r\x1b[K" {
		t.Errorf("after Done: %q", got)
	}

	p, b, _ = testProgress(ProgressOptions{Width: 80})
	p.Update("a.pcap", 1, 100) // in the first second: not drawn
	p.Done()
	if b.Len() != 0 {
		t.Errorf("Done without a line wrote %q", b.String())
	}
}

// syncBuffer is a buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProgressConcurrentDone: Update from several goroutines while
// another calls Done (run with -race): once Done has returned nothing
// more is written, and the last write is the clear.
func TestProgressConcurrentDone(t *testing.T) {
	var out syncBuffer
	p := NewProgress(&out, ProgressOptions{Width: 80, Immediate: true})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p.Update(fmt.Sprintf("file%d.pcap", g), i, 1<<40)
			}
		}()
	}
	for !strings.Contains(out.String(), "file") {
		time.Sleep(time.Millisecond)
	}
	p.Done()
	after := out.String()
	time.Sleep(20 * time.Millisecond) // the updaters keep going
	close(stop)
	wg.Wait()
	if got := out.String(); got != after {
		t.Errorf("written after Done: %q", got[len(after):])
	}
	if !strings.HasSuffix(after, "\x1b[K\r\x1b[K") {
		t.Errorf("the last write is not the clear: %q", after[max(0, len(after)-80):])
	}
}
