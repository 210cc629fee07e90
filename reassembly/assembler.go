package reassembly

import (
	"hash/maphash"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// Stats counts what an [Assembler] has seen. Byte counts are of
// transport payload unless said otherwise. It is plain data: a copy
// shares nothing with the Assembler.
type Stats struct {
	Packets int64 // packets given to Packet
	Bytes   int64 // captured bytes of those packets, all headers included

	// Other counts the valid packets that are neither TCP, UDP nor
	// serial data, by kind ("ARP", "ICMP", "IP protocol 89", "EtherType
	// 0x88cc", "link type 105"...), in order of first appearance; past
	// 32 kinds the rest share one entry named "other".
	Other     []NamedCount
	Malformed int64 // packets with invalid headers, headers cut short by the snap length, or an IP length past the end of a whole frame
	// TSOSegments counts the IPv4 packets of total length 0 on a frame
	// longer than the header: segments captured on the sending host
	// before the NIC cut them (TCP segmentation offload, BIG TCP), read
	// to the captured length.
	TSOSegments int64
	Fragments   int64 // IP fragments seen

	// IP fragment reassembly: datagrams reassembled and decoded whole;
	// fragment sets that never completed (timed out, evicted, lost
	// fragments, or left at Flush); sets discarded because fragments
	// overlapped (RFC 5722); and the IP payload bytes of the sets of both
	// kinds not delivered as stream data. FragmentConflicts counts the
	// datagrams whose overlapping fragments had different bytes: discarded
	// ones, and ones completed with the first copy of a duplicate.
	FragmentsReassembled int64
	FragmentsIncomplete  int64
	FragmentOverlaps     int64
	FragmentConflicts    int64
	FragmentBytesLost    int64
	// FragmentUDPGapBytes are the UDP payload bytes of incomplete
	// datagrams given to their flow as one Gap each.
	FragmentUDPGapBytes int64

	TruncatedUDP int64 // UDP datagrams cut short by the snap length, not delivered

	TCPRetransmitted int64 // bytes dropped because they were already delivered, reported as a gap, or already held
	TCPOutOfOrder    int64 // segments held because they arrived before a hole was filled
	TCPGapBytes      int64 // bytes reported by Gap events (lost, cut by the snap length, dropped, or a lost tail)
	TCPTailGapBytes  int64 // of TCPGapBytes: bytes after a direction's last captured byte, known sent from a later segment's or ACK's sequence number
	TCPBeforeStart   int64 // bytes dropped because they came from before the point a mid-stream capture started
	TCPAfterClose    int64 // bytes dropped because they came past a FIN, in or after a reset, or on a finished connection
	TCPConflicts     int64 // retransmitted segments whose bytes differ from the first copy, held or delivered (Handler.Conflict)
	TCPConflictBytes int64 // the differing ranges of those segments, first to last differing byte (or 32-byte block)
	TCPResetsIgnored int64 // RST segments ignored: sequence number outside the window (RFC 5961); their text is in TCPAfterClose

	// Packets marked [capture.Packet].Dropped: their payload was dropped
	// by dissect itself (decoding fell behind). The bytes are declared
	// payload lengths; TCP's are reported in Gap events unless they were
	// retransmissions, UDP's as one Gap event per datagram (none for an
	// empty one), serial's as a Gap event per read.
	DroppedPackets     int64
	DroppedTCPBytes    int64
	DroppedUDPBytes    int64
	DroppedSerialBytes int64

	Streams StreamCounts // streams opened
	Evicted int64        // streams ended because [Config].MaxStreams were open
	Expired int64        // streams ended idle: [Config].IdleTimeout or [Assembler.Expire]
}

// StreamCounts counts streams by transport.
type StreamCounts struct {
	TCP, UDP, Serial int64
}

// flowKey identifies a TCP connection or UDP flow independently of
// direction: a is the lower endpoint.
type flowKey struct {
	a, b   [16]byte
	pa, pb uint16
	proto  uint8
	v4     bool
}

// conn is the state of one stream.
type conn struct {
	s       Stream
	key     flowKey
	serial  bool
	aIsDir0 bool // the key's endpoint a sends direction 0
	last    time.Time
	prev    *conn // activity list (Assembler.lruHead): more recent
	next    *conn // less recent
	done    bool  // ended: every direction closed (TCP: finished or reset)
	tomb    bool  // a finished TCP connection counted in Assembler.nFinished
	gone    bool  // forgotten: no longer in the maps
	closed  [2]bool
	h       [2]half // TCP
}

// Assembler turns packets into stream events for a [Handler]. It is not
// safe for concurrent use. Events are delivered synchronously from Packet,
// Flush and Expire, in capture order; events released by a packet carry
// that packet's time.
//
// Link layers, by [capture.LinkType]: Ethernet II (802.1Q/802.1ad tags,
// stacked), Linux SLL and SLL2, raw IP (101, 228, 229), BSD null (0: the
// family in either byte order; AF_INET 2, AF_INET6 24, 28 or 30), OpenBSD
// loop (108: network order), PPP (9; 204 with a direction byte; 50 in
// HDLC-like framing, or Cisco HDLC) and Linux NFLOG (239: the
// NFULA_PAYLOAD TLV). Inside: MPLS label stacks (EtherType 0x8847,
// 0x8848), PPPoE sessions (0x8864), then IPv4 (options skipped, link
// padding trimmed to the total length) or IPv6 (hop-by-hop, routing,
// destination options, fragment and AH headers skipped), then TCP or UDP.
// Tunnels are followed to the inner packet, at most 4 deep: GRE version 0
// (IP protocol 47; checksum, key and sequence fields skipped; carrying
// IPv4, IPv6, MPLS or Ethernet, 0x6558), VXLAN (UDP destination port 4789
// with the I flag set: an Ethernet frame) and IP in IP (4, 41). An
// encapsulated packet belongs to the flow of its innermost TCP/UDP
// header, as in tshark's tcp.stream; [HeaderLen] covers all its headers.
//
// Anything else gives no event and is counted by kind in [Stats].Other
// ("ARP", "ICMP", "IP protocol 89", "EtherType 0x88cc", "GRE version 1",
// "link type 105"...); invalid or cut-short headers in [Stats].Malformed.
// IP fragments (IPv4, and IPv6 fragment headers after any other
// extension headers) are counted in [Stats].Fragments and reassembled
// (frag.go): a complete datagram is decoded as if it had arrived whole,
// at the time of its last fragment. Sets are keyed by addresses, protocol
// and identification; at most 4096 sets and 16 MiB (copies and overhead)
// are held, the oldest set going first, and a set expires 60 s of capture
// time after its first fragment. Overlaps follow Linux: a fragment inside
// one held is a duplicate and ignored, any other overlap discards the
// datagram. A set that never completes (expired, evicted, discarded, a
// fragment dropped or cut, or left at Flush) is reported like a dropped
// packet when its first fragment was seen: TCP delivers the captured runs
// with a Gap for each missing range, UDP gives one Gap of the datagram's
// length; otherwise its bytes are only counted ([Stats].FragmentBytesLost).
// An IPv6 atomic fragment (offset 0, M clear) is a whole packet.
//
// Dropped packets ([capture.Packet].Dropped: dissect kept only their
// headers, as cut by [HeaderLen]) stand for their declared payload, all
// lost: a TCP segment's becomes a Gap at its place in the stream (as a
// segment cut by the snap length), a UDP datagram gives a Gap event of its
// UDP payload length on its flow, a serial read a Gap of its Length. They
// are counted in [Stats].DroppedPackets and the per-transport byte counts.
//
// Streams are numbered from 0 in order of first appearance, TCP, UDP and
// serial alike; Open is called on the first packet of a stream, before any
// other event, even when that packet carries no data.
//
// TCP: each connection gives two ordered byte streams. Direction 0 is the
// SYN sender (the receiver of a SYN-ACK seen first), or without handshake
// the sender of the first packet. A direction's offset 0 is the byte after
// its SYN; without a SYN it is the byte after the ISN a SYN-ACK
// acknowledged, else the first byte seen (bytes from before it are
// dropped: [Stats].TCPBeforeStart). Sequence numbers compare modulo 2^32.
// Retransmitted bytes are dropped and overlaps trimmed, the first copy
// winning; a retransmission that differs from the first copy gives a
// Conflict event: held bytes are compared byte by byte, delivered ones
// with a bounded history of the last 16 KiB of each direction (history.go:
// the 32-byte blocks a retransmission covers whole by hash, the last
// incomplete block byte by byte, and the ends of the last 4 segments
// delivered whole, when retransmitted over the same range, byte by byte).
// Out-of-order segments are copied and held until the hole
// before them fills; when a direction holds more than [Config].MaxBuffered
// bytes, or all directions more than [Config].MaxHeldBytes, the first hole
// of that direction, or the oldest of any, is declared lost: a Gap event,
// then the held data. A segment cut by the snap length gives its
// captured bytes, then a Gap for the rest. A direction closes when all its
// data up to its FIN is delivered; once both sides sent a FIN, holes left
// before a FIN become gaps and both close. A RST whose sequence number
// is in its direction's window (RFC 5961: from the next byte to deliver to
// 64 KiB past the highest sequence number known sent; any, in a direction
// with nothing seen) delivers what is held (holes as gaps) and closes both
// directions; another is ignored ([Stats].TCPResetsIgnored). A direction that ends
// without its FIN (reset, Flush, Expire) ends with a Gap up to the highest
// sequence number known to have been sent in it: the end of any segment
// seen (its declared length, cut or dropped alike), or an acknowledgment
// number of the peer (at most 2^30 ahead) — a connection whose tail was
// dropped ends with a gap up to the last sequence number seen in any of
// its packets ([Stats].TCPTailGapBytes). A finished connection is
// remembered (bounded by [Config].MaxFinished) so that trailing packets
// open nothing; a new SYN on its 4-tuple, or a SYN with another ISN on a
// connection still open, starts a new stream.
//
// UDP: a flow is the unordered pair of endpoints; direction 0 is the first
// sender. Each datagram, empty ones included, is one Datagram event. A
// datagram cut by the snap length is not delivered (a cut datagram would
// be mis-framed by the protocol above) and is counted in
// [Stats].TruncatedUDP; it still opens its flow if it is the first. A
// dropped datagram is a Gap event (see above).
//
// Serial: packets of link type [capture.LinkUser0] are reads of a serial
// link, keyed by [capture.Packet].InterfaceName (or "if<N>" from the
// interface index). Outbound and unknown directions are direction 0 (host
// to device), inbound is direction 1. Each non-empty read is one Data
// event; the bytes of a read's Length that Data lacks (a dropped read, or
// one cut by the snap length) follow as a Gap event.
//
// VRPN logs: packets of link type [capture.LinkVRPNLog] (the entries of a
// VRPN log file) make a byte stream as serial reads do, of transport
// Serial, with Carries "vrpn". Such a stream is neither ended idle nor
// evicted for MaxStreams (a log may pause longer than IdleTimeout, and its
// first entries name the ids of all the others): it ends at Flush.
//
// UDP flows, serial links and TCP connections whose end was not seen stay
// open until [Assembler.Flush] or [Assembler.Expire], until they have been
// idle for [Config].IdleTimeout of capture time, or until more than
// [Config].MaxStreams streams are open and they are the least recently
// active; an ended stream's next packet opens a new stream. A Handler must
// not call back into the Assembler from an event.
type Assembler struct {
	h     Handler
	cfg   Config
	seed  maphash.Seed // seeds hkey
	hkey  hashKey      // hashes delivered blocks (half.hist)
	stats Stats

	flows  map[flowKey]*conn
	serial map[string]*conn
	order  []*conn // every remembered stream, by ID
	nGone  int     // gone entries in order

	finished  []*conn // tombstones, oldest first (may hold gone entries)
	nFinished int     // tombstones still in flows

	lruHead, lruTail *conn // open streams by last activity, most recent first
	nLive            int   // streams in that list
	heldBytes        int   // half.heldLen of every TCP direction, summed
	holders          []holder
	holdersLive      int // len(holders) after its last compaction

	other     []NamedCount // Stats.Other
	otherKeys []otherKey   // the key of each entry of other

	nextID int

	observe func(s *Stream, d Dir, seg Segment) // ObserveSegments

	frags fragTable // IP fragments being reassembled (frag.go)
}

// New returns an assembler that delivers events to h.
func New(h Handler, cfg Config) *Assembler {
	a := &Assembler{
		h:      h,
		cfg:    cfg.withDefaults(),
		flows:  make(map[flowKey]*conn),
		serial: make(map[string]*conn),
		frags:  newFragTable(),
		seed:   maphash.MakeSeed(),
	}
	for i := range a.hkey {
		a.hkey[i] = maphash.Bytes(a.seed, []byte{'k', byte(i)})
	}
	return a
}

// Stats returns the counters so far.
func (a *Assembler) Stats() Stats {
	s := a.stats
	s.Other = slices.Clone(a.other)
	return s
}

// Packet processes one captured packet; see [Assembler] for what each
// link type and transport produces. p.Data is not retained.
func (a *Assembler) Packet(p *capture.Packet) {
	if p == nil {
		return
	}
	a.stats.Packets++
	a.stats.Bytes += int64(len(p.Data))
	now := Stamp{p.Time, a.stats.Packets} // packets are numbered as given
	a.expireIdle(now)
	if p.Dropped {
		a.stats.DroppedPackets++
	}
	if p.LinkType == capture.LinkUser0 || p.LinkType == capture.LinkVRPNLog {
		a.serialData(p, now)
		return
	}
	if p.Dropped && len(p.Data) == 0 {
		a.countOther(otherKey{kind: otherDropped})
		return
	}
	var pk packet
	out := decode(p.LinkType, p.Data, &pk)
	if pk.tso {
		a.stats.TSOSegments++
	}
	if pk.short && (out == outStream || out == outFragment) && !p.Dropped && p.Length <= len(p.Data) {
		// The frame is whole (not cut by the snap length, nor dropped)
		// yet an IP header declares more bytes than it holds: the length
		// lies. Linux drops such packets (ip_rcv_core, ipv6_rcv), and so
		// do we, as malformed, rather than invent a gap.
		out = outMalformed
	}
	switch out {
	case outOther:
		a.countOther(pk.other)
		return
	case outMalformed:
		a.stats.Malformed++
		return
	case outFragment:
		a.fragment(&pk, now)
		return
	}
	a.fragTick(now)
	if pk.frag {
		a.stats.Fragments++
	}
	if p.Dropped {
		// Whatever payload is left is not used: the packet stands for
		// its declared length, all of it lost.
		pk.payload = nil
	}
	if pk.proto == ipProtoTCP {
		if p.Dropped {
			a.stats.DroppedTCPBytes += int64(pk.plen)
		}
		a.tcp(&pk, now)
	} else {
		a.udp(&pk, p.Dropped, now)
	}
}

// key returns the flow key of pk and whether its source is endpoint a.
func (pk *packet) key() (flowKey, bool) {
	k := flowKey{proto: pk.proto, v4: pk.v4}
	srcFirst := true
	if c := compare16(&pk.src, &pk.dst); c > 0 || (c == 0 && pk.sport > pk.dport) {
		srcFirst = false
	}
	if srcFirst {
		k.a, k.b, k.pa, k.pb = pk.src, pk.dst, pk.sport, pk.dport
	} else {
		k.a, k.b, k.pa, k.pb = pk.dst, pk.src, pk.dport, pk.sport
	}
	return k, srcFirst
}

func compare16(x, y *[16]byte) int {
	for i := range x {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func (pk *packet) addrPorts() (src, dst netip.AddrPort) {
	var s, d netip.Addr
	if pk.v4 {
		s = netip.AddrFrom4([4]byte(pk.src[:4]))
		d = netip.AddrFrom4([4]byte(pk.dst[:4]))
	} else {
		s = netip.AddrFrom16(pk.src)
		d = netip.AddrFrom16(pk.dst)
	}
	return netip.AddrPortFrom(s, pk.sport), netip.AddrPortFrom(d, pk.dport)
}

// dir returns the direction of a packet whose source is (or is not) the
// key's endpoint a.
func (c *conn) dir(srcIsA bool) Dir {
	if srcIsA == c.aIsDir0 {
		return 0
	}
	return 1
}

// open allocates the next stream ID and calls Open.
func (a *Assembler) open(c *conn, t Stamp) {
	c.s.ID = a.nextID
	a.nextID++
	a.makeRoom(t)
	c.last = t.Time
	a.link(c)
	a.order = append(a.order, c)
	n := &a.stats.Streams.Serial
	switch c.s.Transport {
	case TCP:
		n = &a.stats.Streams.TCP
	case UDP:
		n = &a.stats.Streams.UDP
	}
	c.s.Index = int(*n)
	*n++
	a.h.Open(&c.s, t)
}

// newFlow creates a TCP connection or UDP flow whose direction 0 is sent
// by src (srcIsDir0) or by dst.
func (a *Assembler) newFlow(pk *packet, k flowKey, srcIsA, srcIsDir0 bool, tr Transport, t Stamp) *conn {
	c := &conn{key: k}
	c.s.Transport = tr
	c.aIsDir0 = srcIsA == srcIsDir0
	src, dst := pk.addrPorts()
	if srcIsDir0 {
		c.s.Addr = [2]netip.AddrPort{src, dst}
	} else {
		c.s.Addr = [2]netip.AddrPort{dst, src}
	}
	a.flows[k] = c
	a.open(c, t)
	return c
}

func (a *Assembler) udp(pk *packet, dropped bool, t Stamp) {
	k, srcIsA := pk.key()
	c := a.flows[k]
	if c == nil {
		c = a.newFlow(pk, k, srcIsA, true, UDP, t)
	}
	a.touch(c, t.Time)
	if pk.frag {
		// Counted as a fragment: the rest of the datagram is elsewhere.
		return
	}
	if dropped {
		// The datagram shows up as a gap of its flow, of the length its
		// UDP header declares.
		a.stats.DroppedUDPBytes += int64(pk.plen)
		if pk.plen > 0 {
			a.h.Gap(&c.s, c.dir(srcIsA), t, int64(pk.plen))
		}
		return
	}
	if pk.trunc {
		// A datagram cut by the snap length is not delivered: protocols
		// frame UDP by datagram, and a cut one would be mis-framed.
		a.stats.TruncatedUDP++
		return
	}
	a.h.Datagram(&c.s, c.dir(srcIsA), t, pk.payload)
}

func (a *Assembler) serialData(p *capture.Packet, now Stamp) {
	name := p.InterfaceName
	if name == "" {
		name = "if" + strconv.Itoa(p.Interface)
	}
	carries := ""
	if p.LinkType == capture.LinkVRPNLog {
		carries = "vrpn"
	}
	c := a.serial[name]
	if c != nil && c.s.Carries != carries {
		// A serial link and a log of the same name: each its own stream.
		a.end(c, now)
		a.forget(c)
		c = nil
	}
	if c == nil {
		c = &conn{serial: true}
		c.s.Transport = Serial
		c.s.Link = name
		c.s.Carries = carries
		a.serial[name] = c
		a.open(c, now)
		if carries != "" {
			a.unlink(c) // out of the activity list: never idle nor evicted
		}
	}
	a.touch(c, now.Time)
	var d Dir
	if p.Direction == capture.DirInbound {
		d = 1
	}
	if len(p.Data) > 0 {
		a.h.Data(&c.s, d, now, p.Data)
	}
	if n := int64(p.Length) - int64(len(p.Data)); n > 0 {
		// A dropped read (or one cut by the snap length).
		if p.Dropped {
			a.stats.DroppedSerialBytes += n
		}
		a.h.Gap(&c.s, d, now, n)
	}
}

// end delivers everything c holds (holes becoming gaps) and closes every
// direction not yet closed, at time t.
func (a *Assembler) end(c *conn, t Stamp) {
	if c.done || c.gone {
		return
	}
	for d := range Dir(2) {
		if c.s.Transport == TCP {
			a.complete(c, d, t)
			continue
		}
		if !c.closed[d] {
			c.closed[d] = true
			a.h.Close(&c.s, d, t)
		}
	}
	c.done = true
}

// forget removes c from the maps.
func (a *Assembler) forget(c *conn) {
	if c.gone {
		return
	}
	c.gone = true
	a.nGone++
	a.unlink(c)
	if c.serial {
		delete(a.serial, c.s.Link)
	} else if a.flows[c.key] == c {
		delete(a.flows, c.key)
	}
	if c.tomb {
		a.nFinished--
	}
	a.release(&c.h[0])
	a.release(&c.h[1])
}

// maybeCompact compacts the bookkeeping slices once enough of their
// entries are forgotten; it must not run while they are being iterated.
func (a *Assembler) maybeCompact() {
	if (a.nGone > 64 && a.nGone > len(a.order)/2) || len(a.finished) > 2*a.cfg.MaxFinished+64 {
		a.compact()
	}
}

// compact drops forgotten streams from the bookkeeping slices.
func (a *Assembler) compact() {
	n := 0
	for _, c := range a.order {
		if !c.gone {
			a.order[n] = c
			n++
		}
	}
	clear(a.order[n:])
	a.order = a.order[:n]
	a.nGone = 0
	n = 0
	for _, c := range a.finished {
		if !c.gone {
			a.finished[n] = c
			n++
		}
	}
	clear(a.finished[n:])
	a.finished = a.finished[:n]
}

// tombstone records that TCP connection c has finished; the oldest
// tombstones beyond the limit are forgotten.
func (a *Assembler) tombstone(c *conn) {
	c.done = true
	c.tomb = true
	a.unlink(c)
	a.release(&c.h[0])
	a.release(&c.h[1])
	a.finished = append(a.finished, c)
	a.nFinished++
	for a.nFinished > a.cfg.MaxFinished && len(a.finished) > 0 {
		old := a.finished[0]
		a.finished[0] = nil
		a.finished = a.finished[1:]
		if !old.gone {
			a.forget(old)
		}
	}
}

// last is the stamp of what the assembler does at time t with no packet
// of its own (the end of the input, an idle expiry): the last packet's
// number.
func (a *Assembler) last(t time.Time) Stamp { return Stamp{t, a.stats.Packets} }

// Flush ends the input: every stream still open delivers what it holds
// (each hole becoming a Gap event before the held data, and a hole before
// a FIN becoming a Gap too), then every direction not yet closed is
// closed, including directions that carried nothing. Streams are ended in
// ID order, with time end and the last packet's number. Afterwards the
// assembler holds no state; a later packet starts new streams, numbered
// after the last.
func (a *Assembler) Flush(end time.Time) {
	t := a.last(end)
	a.fragFlush(t)
	for _, c := range a.order {
		if !c.gone {
			a.end(c, t)
		}
	}
	a.order, a.finished = nil, nil
	a.nGone, a.nFinished = 0, 0
	a.lruHead, a.lruTail, a.nLive = nil, nil, 0
	a.holders, a.holdersLive, a.heldBytes = nil, 0, 0
	a.flows = make(map[flowKey]*conn)
	a.serial = make(map[string]*conn)
}

// Expire ends, as Flush does, every stream whose last packet is more than
// idle before now, and forgets it; finished TCP connections idle that long
// are forgotten too. Streams are ended in ID order with time now and the
// last packet's number. Use it on live captures to keep memory bounded.
func (a *Assembler) Expire(now time.Time, idle time.Duration) {
	a.fragExpire(a.last(now))
	for _, c := range a.order {
		if c.gone || now.Sub(c.last) <= idle {
			continue
		}
		a.end(c, a.last(now))
		a.forget(c)
		a.stats.Expired++
	}
	a.compact()
}
