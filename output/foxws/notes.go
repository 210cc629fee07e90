package foxws

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Why a client missed messages (bits of missed.why).
const (
	whyQueue  = 1 << iota // a live client fell more than its queue behind
	whyLate               // it subscribed to a live channel after they went by
	whyBudget             // a file's log had dropped them
)

// missed are the messages of one channel a client never got.
type missed struct {
	topic string
	n     uint64
	why   int
}

// misses are a client's, by channel, and how many it was told of.
type misses struct {
	byCh        map[uint16]*missed
	total, told uint64
	toldAt      time.Time
}

func (m *misses) add(topic string, ch uint16, why int, n uint64) {
	x := m.byCh[ch]
	if x == nil {
		x = &missed{topic: topic}
		m.byCh[ch] = x
	}
	x.n += n
	x.why |= why
	m.total += n
}

// describe is "TOPIC N, TOPIC N...: REASONS" of the misses, the most
// missed topics first (at most 3 named).
func (m *misses) describe(s *Server) string {
	xs := make([]*missed, 0, len(m.byCh))
	why := 0
	for _, x := range m.byCh {
		xs = append(xs, x)
		why |= x.why
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].n > xs[j].n || xs[i].n == xs[j].n && xs[i].topic < xs[j].topic })
	var b strings.Builder
	for i, x := range xs {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more topics", len(xs)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", x.topic, x.n)
	}
	var reasons []string
	if why&whyQueue != 0 {
		reasons = append(reasons, fmt.Sprintf("it fell more than its queue of %d messages behind; the capture was not slowed", s.o.Queue))
	}
	if why&whyLate != 0 {
		reasons = append(reasons, "they went by before it subscribed (a live capture is not kept)")
	}
	if why&whyBudget != 0 {
		reasons = append(reasons, fmt.Sprintf("the file's log had dropped them (over its budget of %d MiB)", s.o.Budget>>20))
	}
	return b.String() + ": " + strings.Join(reasons, "; ")
}

// report returns the status message telling the client of the misses
// since it was last told, when there are any and now is the time (at
// most one a second, or at once when idle). s.mu is held.
func (m *misses) report(s *Server, now time.Time, idle bool) []byte {
	if m.total == m.told || !idle && now.Sub(m.toldAt) < time.Second {
		return nil
	}
	msg := fmt.Sprintf("dissect: this client missed %d messages (%d in all): %s", m.total-m.told, m.total, m.describe(s))
	m.told, m.toldAt = m.total, now
	b, _ := json.Marshal(map[string]any{"op": "status", "level": levelWarning, "message": msg})
	return b
}

// summary is the client's line of the run's summary, and its counts.
// s.mu is held.
func (c *client) summary() (string, uint64, uint64) {
	line := fmt.Sprintf("-o foxglove: client %s: %d messages sent", c.addr, c.sent)
	if c.miss.total > 0 {
		line += fmt.Sprintf(", %d missed (%s)", c.miss.total, c.miss.describe(c.s))
	}
	if c.why != "" {
		line += "; " + c.why
	}
	return line, c.sent, c.miss.total
}

// maxNoted is the number of clients the summary has a line of.
const maxNoted = 20

// goneClients are the clients that have left, as the summary tells of
// them: their lines (at most maxNoted) and their counts.
type goneClients struct {
	lines        []string
	n            int
	sent, missed uint64
}

func (g *goneClients) add(line string, sent, missed uint64) {
	if len(g.lines) < maxNoted {
		g.lines = append(g.lines, line)
	}
	g.n++
	g.sent += sent
	g.missed += missed
}

// Notes are the lines of the run's summary about the clients: what each
// was sent and missed, and why the server closed it.
func (s *Server) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	notes := append([]string(nil), s.gone.lines...)
	n, sent, missed := s.gone.n, s.gone.sent, s.gone.missed
	for _, c := range s.clients {
		line, cs, cm := c.summary()
		if len(notes) < maxNoted {
			notes = append(notes, line)
		}
		n++
		sent += cs
		missed += cm
	}
	switch {
	case n == 0:
		notes = append(notes, "-o foxglove: no client connected")
	case n > maxNoted:
		notes = append(notes, fmt.Sprintf("-o foxglove: %d clients in all, %d messages sent, %d missed", n, sent, missed))
	}
	return notes
}
