package foxws

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// What a connection may hold before its upgrade: headers of at most
// maxHeaderBytes sent within headerTimeout, and at most maxPending such
// connections at once: when another comes, the oldest is closed if it has
// waited pendingAge (a client sends its headers in a moment; one that
// trickles them is the one closed), else the new one. After the
// upgrade, a client's requests are at most maxRequest bytes each.
const (
	maxHeaderBytes = 8 << 10
	headerTimeout  = 5 * time.Second
	maxPending     = 256
	pendingAge     = 500 * time.Millisecond
	maxRequest     = 256 << 10
)

// knownOrigins are the web apps accepted as an Origin besides loopback
// pages: Foxglove's, Lichtblick's (https://lichtblick-suite.github.io/lichtblick/),
// and a desktop app's (Electron pages loaded from files say file://).
var knownOrigins = []string{"https://app.foxglove.dev", "https://lichtblick-suite.github.io", "file://"}

// originOK says whether a handshake's Origin header is accepted: none
// (a program, a desktop app), a page served from loopback, a known web
// app's, or one of Options.AllowOrigins.
func (s *Server) originOK(origin string) bool {
	if origin == "" {
		return true
	}
	for _, o := range knownOrigins {
		if strings.EqualFold(origin, o) {
			return true
		}
	}
	if u, err := url.Parse(origin); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Path == "" && loopbackHost(u.Hostname()) {
		return true
	}
	for _, p := range s.o.AllowOrigins {
		if ok, _ := path.Match(p, origin); ok || p == "*" {
			return true
		}
	}
	return false
}

// checkPattern says whether p is a pattern of --allow-origin.
func checkPattern(p string) error {
	if _, err := path.Match(p, ""); err != nil || p == "" {
		return fmt.Errorf("--allow-origin %q: not a pattern (e.g. https://*.example.com, or * for every origin)", p)
	}
	return nil
}

// loopbackHost says whether a host name or address is this machine's
// loopback.
func loopbackHost(h string) bool {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// hostOf is the host of a Host header (without its port).
func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// brief quotes at most 32 bytes of wire text, escaped, for an answer.
func brief(s string) string {
	if len(s) > 32 {
		return strconv.Quote(s[:32]) + "..."
	}
	return strconv.Quote(s)
}

// serveHTTP accepts a WebSocket of a Foxglove subprotocol from an
// accepted origin and host, and serves it until it ends.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.loop && !loopbackHost(hostOf(r.Host)) {
		// A page of another site whose name was made to resolve to
		// 127.0.0.1 (DNS rebinding) says its own name here.
		http.Error(w, "dissect: Host "+brief(r.Host)+" refused: this server listens on loopback and answers only localhost or a loopback address", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); !s.originOK(o) {
		http.Error(w, "dissect: Origin "+brief(o)+" refused: accepted are none, loopback pages, https://app.foxglove.dev, https://lichtblick-suite.github.io and those of --allow-origin", http.StatusForbidden)
		return
	}
	if !s.reserve() {
		http.Error(w, fmt.Sprintf("dissect: %d clients are connected, the most it serves", maxClients), http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: Subprotocols, InsecureSkipVerify: true})
	if err != nil {
		s.release()
		return // Accept answered the request
	}
	if conn.Subprotocol() == "" {
		conn.Close(websocket.StatusPolicyViolation, "dissect speaks "+strings.Join(Subprotocols, " or ")+" only")
		s.release()
		return
	}
	// readRequest stops at maxRequest; the library's limit, which would
	// end the connection without its handshake, is only beyond it.
	conn.SetReadLimit(2 * maxRequest)
	c := newClient(s, conn, r.RemoteAddr)
	if !s.join(c) {
		conn.Close(websocket.StatusGoingAway, "the capture has ended")
		s.release()
		return
	}
	go c.send()
	c.receive()
	s.leave(c)
}

// reserve takes a client's place (and the server's WaitGroup for its
// handler), making room when the server is full by closing the client
// that has subscribed to nothing for longest (at least Options.Idle);
// false when there is none, or the server is closing.
func (s *Server) reserve() bool {
	deadline := time.Now().Add(2 * time.Second)
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return false
		}
		if s.slots < maxClients {
			s.slots++
			s.wg.Add(1)
			s.mu.Unlock()
			return true
		}
		idle := s.idlest(time.Now())
		s.mu.Unlock()
		wait := time.Until(deadline)
		if idle == nil || wait <= 0 {
			return false
		}
		idle.abort()
		t := time.NewTimer(wait)
		select {
		case <-idle.left:
		case <-t.C:
		}
		t.Stop()
	}
}

// idlest is the client to close for a new one when the server is full:
// the one that has subscribed to nothing for longest, at least
// Options.Idle, or else one that has taken nothing of a message for as
// long; nil when none has. s.mu is held.
func (s *Server) idlest(now time.Time) *client {
	var idle, stalled *client
	for _, c := range s.clients {
		if c.gone {
			continue
		}
		if !c.subscribed && now.Sub(c.joined) >= s.o.Idle && (idle == nil || c.joined.Before(idle.joined)) {
			idle = c
		}
		if at := c.writing.Load(); at != 0 && now.Sub(time.Unix(0, at)) >= s.o.Idle && stalled == nil {
			stalled = c
		}
	}
	switch {
	case idle != nil:
		idle.why = fmt.Sprintf("closed: the server was full and it had subscribed to nothing in %v", s.o.Idle)
		return idle
	case stalled != nil:
		stalled.why = fmt.Sprintf("closed: the server was full and it had taken nothing of what was sent for %v", s.o.Idle)
	}
	return stalled
}

// release gives back a place reserve took, of a client that did not join.
func (s *Server) release() {
	s.mu.Lock()
	s.slots--
	s.mu.Unlock()
}

// sendBuffer is the kernel's send buffer of a client's connection: small,
// so that what a slow client has not taken waits in the log, where it
// is bounded and counted, rather than in the kernel (where the automatic
// sizing would hold megabytes, seconds behind the capture).
const sendBuffer = 256 << 10

type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(sendBuffer)
	}
	return c, err
}

// pendingConns are the connections whose request's headers are not
// read yet (or that wait for another request), oldest first: at most
// maxPending (http.Server's ConnState). A connection whose headers are
// read (active) is in a handler, soon upgraded or answered.
type pendingConns struct {
	mu    sync.Mutex
	conns []pendingConn
}

type pendingConn struct {
	c  net.Conn
	at time.Time
}

func (p *pendingConns) track(c net.Conn, st http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.conns {
		if x.c == c {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			break
		}
	}
	if st != http.StateNew && st != http.StateIdle {
		return
	}
	now := time.Now()
	if len(p.conns) >= maxPending {
		if now.Sub(p.conns[0].at) < pendingAge {
			c.Close() // a flood: the newest goes
			return
		}
		p.conns[0].c.Close()
		p.conns = append(p.conns[:0], p.conns[1:]...)
	}
	p.conns = append(p.conns, pendingConn{c, now})
}

// Pending is the number of connections not upgraded yet.
func (p *pendingConns) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// watchdog closes each client that has taken nothing of a message for
// Options.Stall, once a second until the server closes.
func (s *Server) watchdog() {
	defer s.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-tick.C:
			s.mu.Lock()
			var stalled []*client
			for _, c := range s.clients {
				if at := c.writing.Load(); at != 0 && now.Sub(time.Unix(0, at)) > s.o.Stall {
					c.why = fmt.Sprintf("closed: it took nothing of what was sent for %v", s.o.Stall)
					stalled = append(stalled, c)
				}
			}
			s.mu.Unlock()
			for _, c := range stalled {
				c.abort()
			}
		}
	}
}
