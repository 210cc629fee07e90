package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
)

// Config is the shape of one generated capture.
type Config struct {
	SizeMB    float64 // target file size in MB (1e6 bytes)
	Conns     int     // concurrent TCP connections to port 4000
	MSS       int     // payload bytes of a full segment
	PingEvery int     // ticks (3 vector messages each) between pings
	Seed      uint64  // the same seed writes the same file
}

// Limits of Config, checked by [Config.check].
const (
	maxSizeMB = 100_000 // 100 GB
	maxConns  = 245     // client addresses 198.51.100.10 ... .254
	minMSS    = 64
	maxMSS    = 9000
)

func (c Config) check() error {
	switch {
	case !(c.SizeMB > 0) || c.SizeMB > maxSizeMB:
		return fmt.Errorf("size %v MB: want more than 0 and at most %d", c.SizeMB, maxSizeMB)
	case c.Conns < 1 || c.Conns > maxConns:
		return fmt.Errorf("%d connections: want 1 to %d", c.Conns, maxConns)
	case c.MSS < minMSS || c.MSS > maxMSS:
		return fmt.Errorf("MSS %d: want %d to %d", c.MSS, minMSS, maxMSS)
	case c.PingEvery < 1:
		return fmt.Errorf("ping every %d ticks: want at least 1", c.PingEvery)
	}
	return nil
}

// Stats are the exact counts of a generated capture (the .stats.json
// sidecar). MessagesByID is keyed by the message id as "0x4003".
type Stats struct {
	File          string           `json:"file"`
	Bytes         int64            `json:"bytes"`
	Packets       int64            `json:"packets"`
	Connections   int              `json:"connections"`
	MSS           int              `json:"mss"`
	MessagesTotal int64            `json:"messages_total"`
	MessagesByID  map[string]int64 `json:"messages_by_id"`
	Seed          uint64           `json:"seed"`
	Generator     string           `json:"generator"`
}

// The message ids written, in the order of the sidecar's listing.
var ids = []uint16{
	deltaenc.IDMagic, deltaenc.IDVersion, deltaenc.IDCurve,
	deltaenc.IDActuatorPosition, deltaenc.IDCurrentDirection, deltaenc.IDDesiredDirection,
	deltaenc.IDPing, deltaenc.IDPong, deltaenc.IDEndOfTransmission,
}

func idKey(id uint16) string { return fmt.Sprintf("%#04x", id) }

const (
	serverPort  = 4000
	tableTicks  = 4096 // distinct ticks of the exercise, cycled through
	tickBytes   = 54   // three 18-byte vector messages
	curvePoints = 250  // 3000 bytes: the curve always spans segments
	pcapHeader  = 24
	pcapRecord  = 16
)

var (
	serverAddr = netip.MustParseAddr("192.0.2.1") // RFC 5737 documentation ranges
	clientBase = netip.MustParseAddr("198.51.100.10")
	startTime  = time.Unix(1_700_000_000, 0).UTC()
)

// ticks returns the exercise's ticks: actuator position, current and
// desired direction, each tick one turn of a circle further.
func ticks() [][]byte {
	out := make([][]byte, tableTicks)
	for i := range out {
		a := 2 * math.Pi * float64(i) / tableTicks
		x, y, z := 0.2*math.Cos(a), 0.2*math.Sin(a), 0.05*math.Sin(3*a)
		dx, dy, dz := -math.Sin(a), math.Cos(a), 0.15*math.Cos(3*a)
		t := deltaenc.ActuatorPosition(float32(x), float32(y), float32(z), 0)
		t = append(t, deltaenc.CurrentDirection(float32(dx*0.9), float32(dy*1.1), float32(dz), 0)...)
		t = append(t, deltaenc.DesiredDirection(float32(dx), float32(dy), float32(dz), 0)...)
		out[i] = t
	}
	return out
}

// curve is the exercise's curve: one turn of the circle the ticks follow.
func curve() [][3]float32 {
	p := make([][3]float32, curvePoints)
	for i := range p {
		a := 2 * math.Pi * float64(i) / curvePoints
		p[i] = [3]float32{float32(0.2 * math.Cos(a)), float32(0.2 * math.Sin(a)), float32(0.05 * math.Sin(3*a))}
	}
	return p
}

func hello() []byte { return append(deltaenc.Magic(), deltaenc.Version(1)...) }

// gen writes the packets of all connections.
type gen struct {
	cfg    Config
	rng    *rand.Rand
	w      *capture.PcapWriter
	enc    pktbuild.Encap
	table  [][]byte
	counts map[uint16]int64
	bytes  int64
	pkts   int64
	ipID   uint16
	err    error
}

// conn is one connection: the Qt leader (server) streams, the Unity
// follower (client) acknowledges and answers pings.
type conn struct {
	c      *pktbuild.Conn
	tick   int
	sbuf   []byte // the server's bytes not yet sent, from soff on
	soff   int
	base   int64    // where sbuf[0] is in the server's stream
	pings  []ping   // pings in sbuf not wholly sent yet
	pongs  []uint64 // the pongs the client owes: of pings it has received
	unackd int      // server segments since the client's last ACK
}

// A ping is the id of a ping and where its last byte ends in the server's
// stream: the client answers it once it has that byte.
type ping struct {
	id  uint64
	end int64
}

func (g *gen) write(s pktbuild.Segment, t time.Time) {
	if g.err != nil {
		return
	}
	g.ipID++
	ip := s.IP()
	ip.ID, ip.DontFragment = g.ipID, true
	f := g.enc.Wrap(ip.Encode())
	g.err = g.w.WritePacket(f.Packet(t))
	g.bytes += pcapRecord + int64(len(f.Data))
	g.pkts++
}

func (g *gen) open(i int, t time.Time) *conn {
	client := netip.AddrPortFrom(clientBase, uint16(50000+i))
	for range i {
		client = netip.AddrPortFrom(client.Addr().Next(), client.Port())
	}
	cseq, sseq := g.rng.Uint32(), g.rng.Uint32()
	c := &conn{c: pktbuild.NewConn(client, netip.AddrPortFrom(serverAddr, serverPort), cseq, sseq)}
	c.tick = g.rng.IntN(len(g.table))
	for k, s := range c.c.Handshake() {
		g.write(s, t.Add(time.Duration(k)*100*time.Microsecond))
	}
	g.write(c.c.Send(pktbuild.Client, hello()), t.Add(300*time.Microsecond))
	g.counts[deltaenc.IDMagic] += 2
	g.counts[deltaenc.IDVersion] += 2
	c.sbuf = append(c.sbuf, hello()...)
	c.sbuf = append(c.sbuf, deltaenc.Curve(curve())...)
	g.counts[deltaenc.IDCurve]++
	return c
}

// fill appends whole ticks, and a ping every PingEvery ticks, until the
// server has at least need bytes to send.
func (g *gen) fill(c *conn, need int) {
	pe := g.cfg.PingEvery
	for len(c.sbuf)-c.soff < need {
		start := c.tick % len(g.table)
		k := min(pe-c.tick%pe, len(g.table)-start)
		for _, t := range g.table[start : start+k] {
			c.sbuf = append(c.sbuf, t...)
		}
		c.tick += k
		g.counts[deltaenc.IDActuatorPosition] += int64(k)
		g.counts[deltaenc.IDCurrentDirection] += int64(k)
		g.counts[deltaenc.IDDesiredDirection] += int64(k)
		if c.tick%pe == 0 {
			id := g.rng.Uint64()
			c.sbuf = append(c.sbuf, deltaenc.Ping(id)...)
			g.counts[deltaenc.IDPing]++
			c.pings = append(c.pings, ping{id, c.base + int64(len(c.sbuf))})
		}
	}
}

// take removes the server's next n bytes (a copy: the segment outlives
// the buffer's next compaction); the pings they complete are owed a pong.
func (c *conn) take(n int) []byte {
	p := append([]byte(nil), c.sbuf[c.soff:c.soff+n]...)
	c.soff += n
	sent := c.base + int64(c.soff)
	for len(c.pings) > 0 && c.pings[0].end <= sent {
		c.pongs = append(c.pongs, c.pings[0].id)
		c.pings = c.pings[1:]
	}
	if c.soff > 1<<16 && c.soff > len(c.sbuf)/2 {
		c.sbuf = append(c.sbuf[:0], c.sbuf[c.soff:]...)
		c.base += int64(c.soff)
		c.soff = 0
	}
	return p
}

// step sends one server segment: a full MSS 70% of the time, else 1..MSS
// bytes, so messages straddle segments anywhere. The client acknowledges
// every second segment, and at once when it owes pongs.
func (g *gen) step(c *conn, t time.Time) {
	mss := g.cfg.MSS
	size := mss
	if g.rng.Float64() >= 0.7 {
		size = 1 + g.rng.IntN(mss)
	}
	g.fill(c, size)
	g.write(c.c.Send(pktbuild.Server, c.take(size)), t)
	c.unackd++
	if c.unackd >= 2 || len(c.pongs) > 0 {
		g.clientAck(c, t.Add(50*time.Microsecond))
	}
}

func (g *gen) clientAck(c *conn, t time.Time) {
	var body []byte
	for _, id := range c.pongs {
		body = append(body, deltaenc.Pong(id)...)
	}
	g.counts[deltaenc.IDPong] += int64(len(c.pongs))
	c.pongs = c.pongs[:0]
	if body != nil {
		g.write(c.c.Send(pktbuild.Client, body), t)
	} else {
		g.write(c.c.Ack(pktbuild.Client), t)
	}
	c.unackd = 0
}

// close ends the server's stream at a message boundary (the buffer holds
// whole messages after what was sent) with an end of transmission, lets
// the client answer with its own, and closes both ways.
func (g *gen) close(c *conn, t time.Time) time.Time {
	const step = 100 * time.Microsecond
	c.sbuf = append(c.sbuf, deltaenc.EndOfTransmission("exercise finished")...)
	g.counts[deltaenc.IDEndOfTransmission]++
	for c.soff < len(c.sbuf) {
		g.write(c.c.Send(pktbuild.Server, c.take(min(g.cfg.MSS, len(c.sbuf)-c.soff))), t)
		t = t.Add(step)
	}
	g.clientAck(c, t)
	g.write(c.c.Send(pktbuild.Client, deltaenc.EndOfTransmission("bye")), t.Add(step))
	g.counts[deltaenc.IDEndOfTransmission]++
	g.write(c.c.Fin(pktbuild.Client), t.Add(2*step))
	g.write(c.c.Fin(pktbuild.Server), t.Add(3*step))
	g.write(c.c.Ack(pktbuild.Client), t.Add(4*step))
	return t.Add(5 * step)
}

// Generate writes the capture of cfg to out as a little-endian pcap
// (Ethernet, microsecond times) and returns its exact counts.
func Generate(out io.Writer, cfg Config) (Stats, error) {
	if err := cfg.check(); err != nil {
		return Stats{}, err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	pw, err := capture.NewPcapWriter(bw, capture.LinkEthernet, false)
	if err != nil {
		return Stats{}, err
	}
	g := &gen{
		cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x64656c7461)), w: pw,
		enc: pktbuild.Encap{Type: capture.LinkEthernet}, table: ticks(),
		counts: map[uint16]int64{}, bytes: pcapHeader,
	}
	t := startTime
	conns := make([]*conn, cfg.Conns)
	for i := range conns {
		conns[i] = g.open(i, t)
		t = t.Add(time.Millisecond)
	}
	// One tick is 1 ms of the exercise: a full segment carries about
	// MSS/54 ms of one connection's data.
	dt := time.Duration(float64(cfg.MSS) / tickBytes * float64(time.Millisecond) / float64(cfg.Conns))
	target := int64(cfg.SizeMB * 1e6)
	reserve := int64(cfg.Conns * 8 * (cfg.MSS + 70)) // what the closes write
	for g.err == nil && g.bytes < target-reserve {
		g.step(conns[g.rng.IntN(len(conns))], t)
		t = t.Add(dt)
	}
	for _, c := range conns {
		t = g.close(c, t)
	}
	if g.err == nil {
		g.err = pw.Flush()
	}
	if g.err == nil {
		g.err = bw.Flush()
	}
	if g.err != nil {
		return Stats{}, g.err
	}
	st := Stats{
		Bytes: g.bytes, Packets: g.pkts, Connections: cfg.Conns, MSS: cfg.MSS,
		MessagesByID: map[string]int64{}, Seed: cfg.Seed, Generator: "internal/benchgen",
	}
	for _, id := range ids {
		st.MessagesByID[idKey(id)] = g.counts[id]
		st.MessagesTotal += g.counts[id]
	}
	return st, nil
}
