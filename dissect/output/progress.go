package output

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress draws a progress bar on a terminal (stderr): how far through the
// current file the run is, and how fast. It redraws at most five times a
// second, so calling its tracker often is cheap.
type Progress struct {
	w     io.Writer
	last  time.Time
	start time.Time
	drawn bool
}

// NewProgress returns a progress bar writing to w.
func NewProgress(w io.Writer) *Progress {
	return &Progress{w: w, start: time.Now()}
}

// Update redraws the bar, at most five times a second: label is read so
// far of done bytes of total (0: unknown).
func (p *Progress) Update(label string, done, total int64) {
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	p.draw(escapeText(label, maxSummaryText), done, total, now)
}

func (p *Progress) draw(label string, done, total int64, now time.Time) {
	const width = 30
	rate := ""
	if sec := now.Sub(p.start).Seconds(); sec > 0 {
		rate = humanBytes(float64(done)/sec) + "/s"
	}
	if total <= 0 {
		fmt.Fprintf(p.w, "\r\x1b[K%s  %s  %s", label, humanBytes(float64(done)), rate)
	} else {
		frac := min(float64(done)/float64(total), 1)
		n := int(frac * width)
		bar := strings.Repeat("=", n) + strings.Repeat(" ", width-n)
		fmt.Fprintf(p.w, "\r\x1b[K%s [%s] %3.0f%%  %s / %s  %s", label, bar, frac*100, humanBytes(float64(done)), humanBytes(float64(total)), rate)
	}
	p.drawn = true
}

// Done clears the bar.
func (p *Progress) Done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
