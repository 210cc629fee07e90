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
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout bytes.Buffer
	ready  chan struct{}
	done   chan error

	mu                      sync.Mutex
	stderr                  bytes.Buffer
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
	c := &Client{cmd: exec.Command(node, args...), ready: make(chan struct{}), done: make(chan error, 1)}
	c.stdin, err = c.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		br := bufio.NewReader(out)
		line, err := br.ReadString('\n')
		if err == nil && line == "ready\n" {
			close(c.ready)
		} else {
			c.stdout.WriteString(line)
		}
		io.Copy(&c.stdout, br)
	}()
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			c.mu.Lock()
			if n, ok := strings.CutPrefix(sc.Text(), "count "); ok {
				f := strings.Fields(n)
				if len(f) == 3 {
					c.positions, _ = strconv.Atoi(f[0])
					c.data, _ = strconv.Atoi(f[1])
					c.missed, _ = strconv.Atoi(f[2])
				}
			} else {
				c.stderr.WriteString(sc.Text() + "\n")
			}
			c.mu.Unlock()
		}
	}()
	go func() {
		readers.Wait()
		c.done <- c.cmd.Wait()
	}()
	t.Cleanup(func() { c.cmd.Process.Kill() })
	return c
}

// WaitReady waits until the client has the server's info.
func (c *Client) WaitReady(t testing.TB) {
	t.Helper()
	select {
	case <-c.ready:
	case err := <-c.done:
		c.done <- err
		t.Fatalf("client.mjs ended before the server's info: %v: %s%s", err, c.Stderr(), c.stdout.String())
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
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// Resume makes a slow client read again.
func (c *Client) Resume() { c.stdin.Close() }

// Wait waits for the client to end (the server closed the connection)
// and returns its report.
func (c *Client) Wait(t testing.TB) *Report {
	t.Helper()
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("client.mjs: %v: %s", err, c.Stderr())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("client.mjs did not end in 60 s after the server closed: %s", c.Stderr())
	}
	var r Report
	if err := json.Unmarshal(c.stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs report: %v: %.500s", err, c.stdout.String())
	}
	return &r
}
