// Package foxwscheck runs a Foxglove WebSocket client for tests of
// -o foxglove: client.mjs in this directory, built on Foxglove's own
// @foxglove/ws-protocol client with Ajv checking every message against
// its channel's schema, independently of dissect's Go code.
// `npm ci --prefix internal/foxwscheck` installs the pinned packages
// (.ci/run does); without node or them, [Start] skips the test and says
// what to run.
package foxwscheck

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/internal/childtest"
	"github.com/dissect-tools/dissect/internal/nodetest"
)

// Report is what a client saw, once the server closed its connection.
type Report struct {
	ServerInfo map[string]any `json:"serverInfo"`
	Channels   []struct {
		ID         int    `json:"id"`
		Topic      string `json:"topic"`
		SchemaName string `json:"schemaName"`
	} `json:"channels"`
	Messages []Message `json:"messages"`
	Statuses []struct {
		Level   int    `json:"level"`
		Message string `json:"message"`
	} `json:"statuses"`
	// Problems: schemas Ajv does not compile, messages that are not JSON
	// or not valid against their channel's schema, client errors.
	Problems  []map[string]any `json:"problems"`
	CloseCode *int             `json:"closeCode"`
	// Protocol is the subprotocol the server chose; Clocks the Time
	// messages received; Seeks how many went back (Messages are those
	// after the last).
	Protocol string `json:"protocol"`
	Clocks   int    `json:"clocks"`
	Seeks    int    `json:"seeks"`
}

// Message is one message as received, in order.
type Message struct {
	Topic  string          `json:"topic"`
	Schema string          `json:"schema"`
	NS     string          `json:"ns"`    // log time, decimal nanoseconds
	Clock  *string         `json:"clock"` // the server's clock then (the viewer's receive time); nil before any
	Data   json.RawMessage `json:"data"`  // as JSON.stringify wrote it back
}

// Client is a running client.mjs.
type Client struct {
	p     *childtest.Process
	ready chan struct{}

	mu                      sync.Mutex
	positions, data, missed int
}

// Available reports why the client cannot run here (nil when it can).
func Available() error {
	_, _, err := setup()
	return err
}

func setup() (node, dir string, err error) {
	return nodetest.Find("internal/foxwscheck", "the Foxglove WebSocket client of the tests is Foxglove's @foxglove/ws-protocol on Node", "@foxglove/ws-protocol", "ws", "ajv")
}

// Start connects a client to url (ws://HOST:PORT); slow makes it stop
// reading after its first 50 messages until Resume. It skips the test
// when Node or the packages are missing.
func Start(t testing.TB, url string, slow bool) *Client {
	t.Helper()
	if slow {
		return StartWith(t, url, "--slow")
	}
	return StartWith(t, url)
}

// StartWith connects a client to url with the options of client.mjs:
// "--slow", "--subscribe-after", "MS", "--protocols", "A,B".
func StartWith(t testing.TB, url string, opts ...string) *Client {
	t.Helper()
	node, dir, err := setup()
	if err != nil {
		t.Skip(err.Error())
	}
	args := append([]string{filepath.Join(dir, "client.mjs"), url}, opts...)
	c := &Client{ready: make(chan struct{})}
	c.p = childtest.Start(t, childtest.Options{
		// The first line of stdout says the client has the server's
		// info; the report follows.
		Stdout: func(out *bufio.Reader) {
			if b, err := out.Peek(len(readyLine)); err == nil && string(b) == readyLine {
				out.Discard(len(readyLine))
				close(c.ready)
			}
		},
		Line: func(line string) {
			n, ok := strings.CutPrefix(line, countPrefix)
			if f := strings.Fields(n); ok && len(f) == 3 {
				c.mu.Lock()
				c.positions, _ = strconv.Atoi(f[0])
				c.data, _ = strconv.Atoi(f[1])
				c.missed, _ = strconv.Atoi(f[2])
				c.mu.Unlock()
			}
		},
	}, node, args...)
	return c
}

// What client.mjs says first on stdout, and before its counts on stderr.
const (
	readyLine   = "ready\n"
	countPrefix = "count "
)

// WaitReady waits until the client has the server's info.
func (c *Client) WaitReady(t testing.TB) {
	t.Helper()
	select {
	case <-c.ready:
	case <-c.p.Ended():
		t.Fatalf("client.mjs ended before the server's info: %v: %s%s", c.p.Err(), c.Stderr(), c.p.Stdout())
	case <-time.After(30 * time.Second):
		t.Fatalf("client.mjs: no server info in 30 s: %s", c.Stderr())
	}
}

// Counts are what the client said last (it says them every 200 ms when
// they changed): messages of an /actuator_position topic, messages in
// all, and messages missed as the server's status messages said.
func (c *Client) Counts() (positions, data, missed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.positions, c.data, c.missed
}

// Stderr is what the client wrote on stderr, but its counts.
func (c *Client) Stderr() string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(c.p.Stderr(), "\n") {
		if !strings.HasPrefix(line, countPrefix) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// Resume makes a slow client read again.
func (c *Client) Resume() { c.p.Stdin.Close() }

// Wait waits for the client to end (the server closed the connection)
// and returns its report.
func (c *Client) Wait(t testing.TB) *Report {
	t.Helper()
	select {
	case <-c.p.Ended():
		if err := c.p.Err(); err != nil {
			t.Fatalf("client.mjs: %v: %s", err, c.Stderr())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("client.mjs did not end in 60 s after the server closed: %s", c.Stderr())
	}
	var r Report
	if err := json.Unmarshal(c.p.Stdout(), &r); err != nil {
		t.Fatalf("client.mjs report: %v: %.500s", err, c.p.Stdout())
	}
	return &r
}
