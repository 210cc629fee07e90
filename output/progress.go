package output

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
)

// Progress draws a progress bar on a terminal (stderr): the file being
// read, how far through it the run is, how fast it reads and when it will
// be done:
//
//	big.pcap  [██████▌       ]  45%  45.0 MB/100.1 MB  12.3 MB/s  ETA 0:04
//
// The line always fits in the terminal (one column is left free, so the
// cursor never wraps): a long file name is shortened in the middle, then
// the bar, the sizes, the rate and the ETA are left out, in that order.
// The first line is drawn only after a second, unless
// [ProgressOptions.Immediate] (a short run, or one that a closed pipe
// ends at once, as in "dissect big.pcap | head", draws none), then at
// most five times a second. Done clears the line; after
// it the bar draws nothing. All methods may be called from any goroutine.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	opts  ProgressOptions
	now   func() time.Time
	start time.Time
	last  time.Time // last draw
	line  string    // what is on screen; "" after a clear
	drawn bool      // a line may be on screen
	done  bool

	// rate: bytes a second, smoothed exponentially over about
	// rateWindow; sampled at least rateSample apart.
	rate     float64
	hasRate  bool
	sampleT  time.Time
	sampleN  int64
	sampleOf string // label of the sample: a new file starts a new one
}

// ProgressOptions configure a [Progress].
type ProgressOptions struct {
	// Width is the terminal's width in columns; lines are at most
	// Width-1 columns. 0: unlimited.
	Width int
	// Columns, when not nil, is asked for the width before every draw,
	// so a resized terminal is followed; it overrides Width.
	Columns func() int
	// ASCII draws only ASCII (a terminal whose locale is not UTF-8).
	ASCII bool
	// Immediate draws from the first update on. Without it the first
	// line waits a second: when the records go to a pipe, its reader
	// (head, grep) may print to the same terminal, and a line it prints
	// while the bar is shown is glued to the bar for good.
	Immediate bool
}

const (
	progressDelay    = time.Second            // no line before this
	progressInterval = 200 * time.Millisecond // between draws
	rateSample       = 100 * time.Millisecond // between rate samples
	rateWindow       = 3 * time.Second        // smoothing time constant
	progressLabelMin = 16                     // columns a file name keeps before parts go
)

// NewProgress returns a progress bar writing to w.
func NewProgress(w io.Writer, o ProgressOptions) *Progress {
	return newProgress(w, o, time.Now)
}

// newProgress is NewProgress with a clock (tests).
func newProgress(w io.Writer, o ProgressOptions, now func() time.Time) *Progress {
	t := now()
	return &Progress{w: w, opts: o, now: now, start: t, sampleT: t}
}

// Update reports that done bytes of total (0: unknown) of the input named
// label have been read; the line is redrawn when it is due. label is
// escaped for the terminal here.
func (p *Progress) Update(label string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	now := p.now()
	p.sample(label, done, now)
	if (!p.opts.Immediate && now.Sub(p.start) < progressDelay) || (p.drawn && now.Sub(p.last) < progressInterval) {
		return
	}
	p.last = now
	width := p.opts.Width
	if p.opts.Columns != nil {
		width = p.opts.Columns()
	}
	line := p.render(label, done, total, width)
	if p.drawn && line == p.line {
		return
	}
	p.line = line
	p.drawn = true
	fmt.Fprintf(p.w, "\r%s\x1b[K", line)
}

// sample updates the smoothed rate with the bytes read since the last
// sample. A new label (the next file) or a smaller done starts over
// from there, keeping the rate.
func (p *Progress) sample(label string, done int64, now time.Time) {
	if label != p.sampleOf || done < p.sampleN {
		if p.sampleOf == "" && done >= p.sampleN {
			// The first file: it was opened at start, from 0.
			p.sampleOf = label
		} else {
			p.sampleOf, p.sampleT, p.sampleN = label, now, done
			return
		}
	}
	dt := now.Sub(p.sampleT)
	if dt < rateSample {
		return
	}
	inst := float64(done-p.sampleN) / dt.Seconds()
	if !p.hasRate {
		p.rate, p.hasRate = inst, true
	} else {
		a := 1 - math.Exp(-dt.Seconds()/rateWindow.Seconds())
		p.rate += a * (inst - p.rate)
	}
	p.sampleT, p.sampleN = now, done
}

// Done clears the line. Later calls of Update draw nothing.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn && !p.done {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	p.done, p.drawn, p.line = true, false, ""
}

// progressPart is one part of the line after the label.
type progressPart struct {
	text string
	rank int // higher: kept longer
	bar  bool
}

// progressSep returns the separator before part i of parts, after the
// name when there is one: one space around the bar, two elsewhere.
func progressSep(parts []progressPart, i int, name bool) string {
	switch {
	case i == 0 && !name:
		return ""
	case parts[i].bar || (i > 0 && parts[i-1].bar):
		return " "
	}
	return "  "
}

// render returns the line for width columns (0: unlimited): at most
// width-1 columns.
func (p *Progress) render(label string, done, total int64, width int) string {
	avail := width - 1
	if width <= 0 {
		avail = math.MaxInt32
	}
	if avail <= 0 {
		return ""
	}
	label = Escape(label)
	ell := "…"
	if p.opts.ASCII {
		label, ell = ASCII(label), "..."
	}
	var parts []progressPart
	rate, eta := "", ""
	if p.hasRate && p.rate > 0 {
		rate = humanBytes(p.rate) + "/s"
	}
	if total > 0 {
		done = min(max(done, 0), total)
		parts = append(parts,
			progressPart{bar: true, rank: 1},
			progressPart{text: fmt.Sprintf("%3d%%", done*100/total), rank: 5},
			progressPart{text: humanBytes(float64(done)) + "/" + humanBytes(float64(total)), rank: 2})
		if rate != "" {
			parts = append(parts, progressPart{text: rate, rank: 3})
			if s := float64(total-done) / p.rate; s < 1000*3600 {
				eta = "ETA " + formatETA(time.Duration(s*float64(time.Second)))
				parts = append(parts, progressPart{text: eta, rank: 4})
			}
		}
	} else {
		parts = append(parts, progressPart{text: humanBytes(float64(max(done, 0))), rank: 5})
		if rate != "" {
			parts = append(parts, progressPart{text: rate, rank: 3})
		}
	}
	lw := stringWidth(label)
	// Drop the least important parts until the rest and a file name of
	// progressLabelMin columns (or the whole name, when shorter) fit.
	for drop := 0; drop <= len(parts); drop++ {
		kept := keepParts(parts, drop)
		if len(kept) == 0 {
			break
		}
		w, barAt := 0, -1
		for i, pt := range kept {
			w += len(progressSep(kept, i, lw > 0))
			if pt.bar {
				barAt = i
				w += 12 // "[" + 10 + "]"
			} else {
				w += stringWidth(pt.text)
			}
		}
		room := avail - w
		if room < min(lw, progressLabelMin) {
			continue
		}
		name := fitMiddle(label, room, ell)
		if barAt >= 0 {
			inner := 10 + min(room-stringWidth(name), 30)
			kept[barAt].text = p.bar(done, total, inner)
		}
		return joinLine(name, kept)
	}
	// Narrower still: the most important part and what is left of the
	// name, else that part cut to the width.
	top := keepParts(parts, len(parts)-1)[0]
	top.text = strings.TrimLeft(top.text, " ")
	if tw := stringWidth(top.text); tw <= avail {
		if room := avail - tw - 2; lw > 0 && room >= 2 {
			// room: the separator is two spaces.
			return joinLine(fitMiddle(label, room, ell), []progressPart{top})
		}
		return top.text
	}
	n, _ := headLen([]byte(top.text), avail)
	return top.text[:n]
}

// keepParts returns parts without the drop lowest ranked ones, in order.
func keepParts(parts []progressPart, drop int) []progressPart {
	kept := make([]progressPart, 0, len(parts))
	for _, pt := range parts {
		lower := 0
		for _, q := range parts {
			if q.rank < pt.rank {
				lower++
			}
		}
		if lower >= drop {
			kept = append(kept, pt)
		}
	}
	return kept
}

func joinLine(name string, parts []progressPart) string {
	var b strings.Builder
	b.WriteString(name)
	for i, pt := range parts {
		b.WriteString(progressSep(parts, i, name != ""))
		b.WriteString(pt.text)
	}
	return b.String()
}

// bar returns the bar, inner columns between brackets.
func (p *Progress) bar(done, total int64, inner int) string {
	eighths := int(done * int64(inner) * 8 / total)
	full, part := eighths/8, eighths%8
	var b strings.Builder
	b.WriteByte('[')
	if p.opts.ASCII {
		b.WriteString(strings.Repeat("=", full))
		if full < inner {
			b.WriteByte('>')
			full++
		}
	} else {
		b.WriteString(strings.Repeat("█", full))
		if part > 0 {
			b.WriteRune([]rune("▏▎▍▌▋▊▉")[part-1])
			full++
		}
	}
	b.WriteString(strings.Repeat(" ", inner-full))
	b.WriteByte(']')
	return b.String()
}

// fitMiddle returns s cut to n columns: the start and the end kept, the
// middle replaced by ell (a file name's directory may go, its end stays).
func fitMiddle(s string, n int, ell string) string {
	if stringWidth(s) <= n {
		return s
	}
	ew := stringWidth(ell)
	if n <= ew {
		k, _ := headLen([]byte(s), n)
		return s[:k]
	}
	keep := n - ew
	h, _ := headLen([]byte(s), keep/3)
	t, _ := tailLen([]byte(s[h:]), keep-keep/3)
	return s[:h] + ell + s[len(s)-t:]
}

// formatETA formats a time left as m:ss, or h:mm:ss from an hour on.
func formatETA(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
