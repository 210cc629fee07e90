package vrpn

import (
	"net/netip"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
)

// Port is VRPN's default port, TCP and UDP (vrpn_DEFAULT_LISTEN_PORT_NO).
const Port = 3883

// maxRoutes bounds the UDP destinations remembered from UDP_DESCRIPTION
// messages in one run; past it the oldest is forgotten.
const maxRoutes = 4096

// protocol is the VRPN dissector of one run. Besides describing the
// protocol it holds the cross-stream state: which connection direction
// names the ids of the UDP datagrams sent to each announced address.
//
// A protocol and its parsers are used from one goroutine, as [dissect.Stream]
// drives them.
type protocol struct {
	routes map[netip.AddrPort]*table
	order  []netip.AddrPort // insertion order, for eviction
	gen    uint64           // bumped on every change of routes
	names  nameBudget       // bounds the names held by all the run's tables
	ex     *exchange.Plan   // requests and replies (roundtrip.go)
	ping   int32            // ex's number of ping_message
	pong   []int32          // ex's answers of pong_message
}

// New returns the VRPN protocol. Make a fresh value per run: it remembers,
// across the streams of the run, the UDP ports that VRPN TCP connections
// announce, so that the UDP messages sent there are named with the ids that
// connection described.
func New() dissect.Protocol { return NewWith(Options{}) }

// Options are VRPN's preferences for a run.
type Options struct {
	// MaxNameBytes bounds the sender and type names the run's connections
	// hold together (each name counted as its length plus 64 bytes); past
	// it a new name is refused, counted in the connection's notes, and its
	// messages are "unknown". 0: DefaultMaxNameBytes.
	MaxNameBytes int64
}

// DefaultMaxNameBytes is the default of [Options].MaxNameBytes (16 MiB).
const DefaultMaxNameBytes = maxRunNameBytes

// NewWith is [New] with options.
func NewWith(opt Options) dissect.Protocol {
	if opt.MaxNameBytes <= 0 {
		opt.MaxNameBytes = maxRunNameBytes
	}
	ex := exchangePlan()
	ping, _ := ex.Request(namePing)
	return &protocol{routes: make(map[netip.AddrPort]*table), names: nameBudget{max: opt.MaxNameBytes}, ex: ex, ping: ping, pong: ex.Answers(namePong)}
}

// Info describes VRPN (a new value on each call).
func (p *protocol) Info() dissect.Info {
	return dissect.Info{
		Name:       "vrpn",
		Proto:      "vrpn",
		Title:      "VRPN (Virtual-Reality Peripheral Network), mainline C++ wire format",
		Transports: []dissect.Transport{dissect.TCP, dissect.UDP},
		Ports: []dissect.Port{
			{Transport: dissect.TCP, Port: Port},
			{Transport: dissect.UDP, Port: Port},
		},
		Detection: `TCP: a direction starting with the cookie "vrpn: ver. "; UDP: the connect-back request "<ip> <port>\0", ` +
			"a datagram to an address announced by UDP_DESCRIPTION on a VRPN TCP connection, " +
			"or a datagram made only of plausible framed messages; " +
			"mid-stream on TCP (no cookie seen), three plausible framed messages in a row with sequence numbers counting up",
		Types: types(),
	}
}

// Detect recognises VRPN by content; see the Detection line of [New]'s Info.
func (p *protocol) Detect(s *dissect.StreamInfo, dir dissect.Dir, b []byte) dissect.Verdict {
	switch s.Transport {
	case dissect.UDP:
		if _, _, ok := parseLob(b); ok {
			return dissect.Yes
		}
		if p.route(s.Addr[dir.Other()]) != nil {
			return dissect.Yes
		}
		if plausibleDatagram(b) {
			return dissect.Yes
		}
		return dissect.No
	default:
		n := min(len(b), len(magic))
		if string(b[:n]) != magic[:n] {
			return dissect.No
		}
		if n < len(magic) {
			return dissect.Maybe
		}
		return dissect.Yes
	}
}

// NewParser returns the parser of one stream.
func (p *protocol) NewParser(s *dissect.StreamInfo) dissect.Parser {
	ps := &parser{proto: p, info: s, udp: s.Transport == dissect.UDP, ex: p.ex.Matcher()}
	for d := range ps.dirs {
		ps.dirs[d].names = &table{budget: &p.names}
		ps.dirs[d].phase = -1
	}
	return ps
}

// addRoute remembers that datagrams sent to dst carry ids named by t.
func (p *protocol) addRoute(dst netip.AddrPort, t *table) {
	dst = netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
	if old, ok := p.routes[dst]; ok {
		if old != t {
			p.routes[dst] = t
			t.routes++
			unroute(old)
			p.gen++
		}
		return
	}
	if len(p.order) >= maxRoutes {
		unroute(p.routes[p.order[0]])
		delete(p.routes, p.order[0])
		p.order = append(p.order[:0], p.order[1:]...)
	}
	t.routes++
	p.routes[dst] = t
	p.order = append(p.order, dst)
	p.gen++
}

// unroute counts one route fewer reading t, releasing its names when its
// connection has ended and none is left.
func unroute(t *table) {
	if t == nil {
		return
	}
	t.routes--
	if t.routes == 0 && t.ended {
		t.release()
	}
}

// route returns the table naming the ids of datagrams sent to dst, or nil.
func (p *protocol) route(dst netip.AddrPort) *table {
	if len(p.routes) == 0 {
		return nil
	}
	return p.routes[netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())]
}
