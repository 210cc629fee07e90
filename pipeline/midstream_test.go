package pipeline

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// This file checks captures started mid-stream (issue 31). A real capture
// is read with gopacket and written again, packet by packet, with
// internal/pktbuild (an independent writer): whole for the reference run,
// and cut for every start offset k of a byte-stream direction D: the
// packets before the one that brought byte k are left out and that one
// carries only its bytes from k on, as in a capture begun inside it. Each
// cut run must:
//   - stamp every record (but a gap) with the capture time of the packet
//     that brought its last byte (computed here from the packets);
//   - invent nothing: every message is a message of the reference run, at
//     the same place with the same length and type;
//   - lose nothing, in both directions of the connection cut, from the
//     second message boundary at or past the direction's first byte on.
// The sweep samples offsets (every midstreamEvery-th, and each packet and
// message boundary with its neighbours); DISSECT_LONG=1 tries every one.

// mUnit is one packet of a capture, decoded.
type mUnit struct {
	t        time.Time
	kind     dissect.Transport
	src, dst netip.AddrPort
	iface    string // serial
	sdir     capture.Direction
	seq, ack uint32
	flags    pktbuild.Flags
	payload  []byte
	key      string // the direction, as "src>dst" in records
	off      int64  // stream offset of payload[0] in its direction
}

// packet writes u again, its payload from byte from on.
func (u *mUnit) packet(from int) capture.Packet {
	data := u.payload[from:]
	switch u.kind {
	case dissect.Serial:
		return *pktbuild.Serial(u.iface, u.sdir, data, u.t)
	case dissect.UDP:
		ip := pktbuild.UDPPacket(u.src, u.dst, data)
		return *pktbuild.Encap{Type: capture.LinkEthernet}.Wrap(ip.Encode()).Packet(u.t)
	}
	tcp := pktbuild.TCP{Seq: u.seq + uint32(from), Ack: u.ack, Flags: u.flags, Window: 65535, Payload: data}
	ip := pktbuild.TCPPacket(u.src, u.dst, tcp)
	return *pktbuild.Encap{Type: capture.LinkEthernet}.Wrap(ip.Encode()).Packet(u.t)
}

// mCapture is a capture's packets and, per direction, when each byte
// became contiguous: arrival[key] lists (end offset, time) in offset order.
type mCapture struct {
	name    string
	units   []mUnit
	arrival map[string][]byteArrival
	// weakSync: the protocol resynchronises only where three well-formed
	// messages follow each other (Neptune, docs/neptune.md), which the
	// session's messages of odd lengths break up: a cut may lose the
	// messages up to the first one it decodes, but none after it. Its
	// framing is a length byte, so the tail of the message the cut is in
	// may itself be well-formed (rotate 03 03 01 00 cut after its length
	// is an abort, 01 00): a message within that tail is not counted as
	// invented.
	weakSync bool
}

type byteArrival struct {
	end int64
	t   time.Time
}

// loadMidstream reads a capture; ports maps ports to rewrite (the
// connection moved to other ports, e.g. two ephemeral ones).
func loadMidstream(t testing.TB, path string, ports map[uint16]uint16) *mCapture {
	t.Helper()
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	mc := &mCapture{name: filepath.Base(path), arrival: map[string][]byteArrival{}}
	base := map[string]uint32{}  // TCP: sequence number of offset 0
	total := map[string]int64{}  // UDP, serial: bytes so far
	contig := map[string]int64{} // bytes contiguous so far
	port := func(p uint16) uint16 {
		if q, ok := ports[p]; ok {
			return q
		}
		return p
	}
	for {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		u := mUnit{t: p.Time}
		if p.LinkType == capture.LinkUser0 {
			u.kind, u.iface, u.sdir = dissect.Serial, p.InterfaceName, p.Direction
			u.payload = slices.Clone(p.Data)
			u.key = "host>" + p.InterfaceName
			if p.Direction == capture.DirInbound {
				u.key = p.InterfaceName + ">host"
			}
		} else {
			pk := gopacket.NewPacket(p.Data, layers.LinkTypeEthernet, gopacket.Default)
			var sa, da netip.Addr
			if ip, ok := pk.NetworkLayer().(*layers.IPv4); ok {
				sa, _ = netip.AddrFromSlice(ip.SrcIP.To4())
				da, _ = netip.AddrFromSlice(ip.DstIP.To4())
			} else if ip, ok := pk.NetworkLayer().(*layers.IPv6); ok {
				sa, _ = netip.AddrFromSlice(ip.SrcIP)
				da, _ = netip.AddrFromSlice(ip.DstIP)
			} else {
				continue
			}
			switch l := pk.TransportLayer().(type) {
			case *layers.TCP:
				u.kind = dissect.TCP
				u.src, u.dst = netip.AddrPortFrom(sa, port(uint16(l.SrcPort))), netip.AddrPortFrom(da, port(uint16(l.DstPort)))
				u.seq, u.ack, u.payload = l.Seq, l.Ack, slices.Clone(l.Payload)
				for _, f := range []struct {
					on bool
					f  pktbuild.Flags
				}{{l.FIN, pktbuild.FIN}, {l.SYN, pktbuild.SYN}, {l.RST, pktbuild.RST}, {l.PSH, pktbuild.PSH}, {l.ACK, pktbuild.ACK}} {
					if f.on {
						u.flags |= f.f
					}
				}
			case *layers.UDP:
				u.kind = dissect.UDP
				u.src, u.dst = netip.AddrPortFrom(sa, port(uint16(l.SrcPort))), netip.AddrPortFrom(da, port(uint16(l.DstPort)))
				u.payload = slices.Clone(l.Payload)
			default:
				continue
			}
			u.key = u.src.String() + ">" + u.dst.String()
		}
		switch u.kind {
		case dissect.TCP:
			b, ok := base[u.key]
			if !ok {
				b = u.seq
				if u.flags&pktbuild.SYN != 0 {
					b++
				}
				base[u.key] = b
			}
			u.off = int64(int32(u.seq - b))
		default:
			u.off = total[u.key]
			total[u.key] += int64(len(u.payload))
		}
		if n := int64(len(u.payload)); n > 0 {
			c := contig[u.key]
			switch {
			case u.off > c:
				t.Fatalf("%s: bytes at %d of %s before %d: the sweep needs a capture in order", path, u.off, u.key, c)
			case u.off+n > c:
				contig[u.key] = u.off + n
				mc.arrival[u.key] = append(mc.arrival[u.key], byteArrival{u.off + n, u.t})
			}
		}
		mc.units = append(mc.units, u)
	}
	return mc
}

// arrivedAt is the capture time of the packet that made byte off of key
// contiguous.
func (mc *mCapture) arrivedAt(key string, off int64) (time.Time, bool) {
	a := mc.arrival[key]
	i := sort.Search(len(a), func(i int) bool { return a[i].end > off })
	if i == len(a) {
		return time.Time{}, false
	}
	return a[i].t, true
}

// mRecord is what the sweep keeps of a record.
type mRecord struct {
	key     string
	off, n  int64
	typ     string
	proto   string
	reason  string
	t       time.Time
	emitted time.Time // the capture time of the last packet read when it came
}

// timedSource yields packets and tells the time of the last one.
type timedSource struct {
	pkts []capture.Packet
	i    int
	now  time.Time
}

func (s *timedSource) Next() (*capture.Packet, error) {
	if s.i >= len(s.pkts) {
		return nil, io.EOF
	}
	s.i++
	s.now = s.pkts[s.i-1].Time
	return &s.pkts[s.i-1], nil
}

func (s *timedSource) Close() error { return nil }

// runMidstream decodes pkts with a fresh registry and returns the records.
// Each record's frame must be the number of a packet of the record's time
// (the sweep checks the time is the right packet's): frame and time come
// from one stamp.
func runMidstream(t testing.TB, pkts []capture.Packet) []mRecord {
	t.Helper()
	reg, err := all.Registry(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := &timedSource{pkts: pkts}
	var out []mRecord
	sink := dissect.SinkFunc(func(r *dissect.Record) error {
		if r.Frame < 1 || r.Frame > int64(len(pkts)) || !pkts[r.Frame-1].Time.Equal(r.Time) {
			return fmt.Errorf("%s record at %d of %s>%s: frame %d is not a packet of its time %v", r.Type, r.Offset, r.Src, r.Dst, r.Frame, r.Time)
		}
		m := mRecord{key: r.Src + ">" + r.Dst, off: r.Offset, n: r.Length, typ: r.Type, proto: r.Proto, t: r.Time, emitted: src.now}
		if v, ok := r.Fields.Get("reason"); ok && r.Type == dissect.TypeSkipped {
			m.reason = v.Str()
		}
		out = append(out, m)
		return nil
	})
	if _, err := Run(context.Background(), src, Config{Registry: reg, Sink: sink}); err != nil {
		t.Fatal(err)
	}
	return out
}

func isMessage(typ string) bool { return typ != dissect.TypeGap && typ != dissect.TypeSkipped }

// midstreamEvery is the default sweep's step between offsets.
const midstreamEvery = 53

// midstreamTail is how far past the second boundary a cut capture goes
// (whole packets; then it ends): past a resync's confirmation.
const midstreamTail = 8 << 10

// sweepMidstream cuts mc at the offsets of every byte-stream direction and
// checks each cut; it returns how many cuts it ran.
func sweepMidstream(t *testing.T, mc *mCapture) int {
	var full []capture.Packet
	for i := range mc.units {
		full = append(full, mc.units[i].packet(0))
	}
	ref := runMidstream(t, full)
	msgs := map[string]map[int64]mRecord{} // per direction, by offset
	starts := map[string][]int64{}
	for _, r := range ref {
		if !isMessage(r.typ) {
			continue
		}
		if msgs[r.key] == nil {
			msgs[r.key] = map[int64]mRecord{}
		}
		msgs[r.key][r.off] = r
		starts[r.key] = append(starts[r.key], r.off)
	}
	for _, s := range starts {
		slices.Sort(s)
	}
	long := os.Getenv("DISSECT_LONG") != ""
	runs, fails := 0, 0
	for key, arr := range mc.arrival {
		u0 := slices.IndexFunc(mc.units, func(u mUnit) bool { return u.key == key })
		if mc.units[u0].kind == dissect.UDP || len(arr) == 0 {
			continue
		}
		size := arr[len(arr)-1].end
		try := map[int64]bool{}
		every := max(midstreamEvery, size/150)
		for k := int64(1); k < size; k++ {
			if long || k%every == 0 {
				try[k] = true
			}
		}
		// Message and packet boundaries and their neighbours: every 11th.
		for i, b := range starts[key] {
			if i%11 == 0 {
				try[b-1], try[b], try[b+1] = true, true, true
			}
		}
		for i, a := range arr {
			if i%11 == 3 {
				try[a.end-1], try[a.end], try[a.end+1] = true, true, true
			}
		}
		var ks []int64
		for k := range try {
			if k > 0 && k < size {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		for _, k := range ks {
			runs++
			if err := checkCut(t, mc, key, k, msgs, starts); err != nil {
				t.Errorf("%s: %s cut at %d: %v", mc.name, key, k, err)
				if fails++; fails == 5 {
					t.Fatal("more cuts fail")
				}
			}
		}
	}
	return runs
}

// checkCut builds the capture of direction key cut at offset k, decodes it
// and checks it against the reference records msgs.
func checkCut(t *testing.T, mc *mCapture, key string, k int64, msgs map[string]map[int64]mRecord, starts map[string][]int64) error {
	p := slices.IndexFunc(mc.units, func(u mUnit) bool {
		return u.key == key && u.off <= k && k < u.off+int64(len(u.payload))
	})
	// The cut capture ends with the packet that takes the direction past
	// the second boundary by midstreamTail bytes.
	b2 := second(starts[key], k)
	var pkts []capture.Packet
	first := map[string]int64{} // the first byte of each direction in the cut
	last := map[string]int64{}  // the end of each direction's bytes in the cut
	for i := p; i < len(mc.units); i++ {
		u := &mc.units[i]
		from := 0
		if i == p {
			from = int(k - u.off)
		}
		pkts = append(pkts, u.packet(from))
		if len(u.payload) > from {
			if _, ok := first[u.key]; !ok {
				first[u.key] = u.off + int64(from)
			}
			last[u.key] = max(last[u.key], u.off+int64(len(u.payload)))
		}
		if u.key == key && last[key] >= b2+midstreamTail {
			break
		}
	}
	got := runMidstream(t, pkts)
	decoded := map[string]map[int64]int64{}
	for _, r := range got {
		base, ok := first[r.key]
		if !ok {
			return fmt.Errorf("record of a direction the cut has no bytes of: %+v", r)
		}
		at := base + r.off
		if r.typ != dissect.TypeGap {
			want, ok := mc.arrivedAt(r.key, at+r.n-1)
			if !ok || !want.Equal(r.t) {
				return fmt.Errorf("%s %s at %d+%d: time %v, want %v (the packet that brought its last byte)", r.key, r.typ, at, r.n, r.t.UTC(), want.UTC())
			}
		}
		if !isMessage(r.typ) {
			continue
		}
		w, ok := msgs[r.key][at]
		if mc.weakSync && !ok {
			if i, _ := slices.BinarySearch(starts[r.key], base); i < len(starts[r.key]) && at+r.n <= starts[r.key][i] {
				continue // in the tail of the message cut
			}
		}
		// A message whose type was named by a description before the
		// cut is "unknown" after it.
		if !ok || w.n != r.n || (w.typ != r.typ && r.typ != "unknown") {
			return fmt.Errorf("%s: invented %s at %d+%d (reference: %+v)", r.key, r.typ, at, r.n, w)
		}
		if decoded[r.key] == nil {
			decoded[r.key] = map[int64]int64{}
		}
		decoded[r.key][at] = r.n
	}
	// Both directions of the connection cut.
	u := &mc.units[p]
	other := u.dst.String() + ">" + u.src.String()
	if u.kind == dissect.Serial {
		other = reverseKey(key)
	}
	for _, dk := range []string{key, other} {
		f, ok := first[dk]
		if !ok {
			continue
		}
		from := second(starts[dk], f)
		if mc.weakSync {
			from = 1 << 62
			for at := range decoded[dk] {
				from = min(from, at)
			}
		}
		for _, s := range starts[dk] {
			w := msgs[dk][s]
			if s >= from && s+w.n <= last[dk] && decoded[dk][s] != w.n {
				return fmt.Errorf("%s: %s at %d+%d lost (second boundary %d): %s", dk, w.typ, s, w.n, from, describeM(got, dk, first[dk]))
			}
		}
	}
	return nil
}

// second returns the second message start at or past k (or a large
// offset when there is none).
func second(starts []int64, k int64) int64 {
	i, _ := slices.BinarySearch(starts, k)
	if i+1 < len(starts) {
		return starts[i+1]
	}
	return 1 << 62
}

func reverseKey(key string) string {
	for i := range key {
		if key[i] == '>' {
			return key[i+1:] + ">" + key[:i]
		}
	}
	return key
}

func describeM(rs []mRecord, key string, base int64) string {
	s := ""
	n := 0
	for _, r := range rs {
		if r.key != key {
			continue
		}
		if n++; n > 12 {
			return s + " ..."
		}
		s += fmt.Sprintf(" %s@%d+%d", r.typ, base+r.off, r.n)
		if r.reason != "" {
			s += fmt.Sprintf("(%s)", r.reason)
		}
	}
	return s
}

// midstreamCaptures are the captures swept: every real VRPN capture of
// pcaps/vrpn (ports 52xx/3902, content detection, no -d), one of them
// moved to two ephemeral ports, VRPN's UDP+TCP mode (its TCP connection
// runs between ephemeral ports), a Deltarobot, a HandControl serial and a
// Neptune capture.
func midstreamCaptures(t *testing.T) []*mCapture {
	root := filepath.Join("..", "pcaps")
	vrpn, _ := filepath.Glob(filepath.Join(root, "vrpn", "*.pcap"))
	if len(vrpn) == 0 {
		t.Fatal("no capture in pcaps/vrpn")
	}
	var out []*mCapture
	for _, f := range vrpn {
		out = append(out, loadMidstream(t, f, nil))
	}
	moved := loadMidstream(t, filepath.Join(root, "vrpn", "session.pcap"), map[uint16]uint16{5208: 41047, 36325: 56707})
	moved.name += " (ports 41047, 56707)"
	out = append(out, moved)
	for _, f := range []string{"vrpn_udp_tcp.pcapng", "vrpn_tcp_only.pcap", "deltarobot_session.pcap", "handcontrol_serial.pcapng", "neptune_session.pcap"} {
		out = append(out, loadMidstream(t, filepath.Join(root, f), nil))
	}
	out[len(out)-1].weakSync = true
	return out
}

// TestMidstreamEveryOffset: see the top of the file.
func TestMidstreamEveryOffset(t *testing.T) {
	for _, mc := range midstreamCaptures(t) {
		t.Run(mc.name, func(t *testing.T) {
			n := sweepMidstream(t, mc)
			t.Logf("%d cuts", n)
		})
	}
}

// TestMidstreamOutputOrder: within one run, records come out in
// non-decreasing time, except a record whose bytes its stream held past
// the packet that brought its last byte (docs/output.md, "JSON Lines"):
// each record is stamped no later than the packet read when it came out,
// times never decrease within one direction of a stream, and a record
// earlier than one written before it is always such a held record. The
// runs: whole captures with several streams, and cuts of each capture of
// the sweep (every 20th of its first direction's bytes).
func TestMidstreamOutputOrder(t *testing.T) {
	caps := midstreamCaptures(t)
	for _, f := range []string{"vrpn_multi_device.pcap", "deltarobot_midstream.pcap", "deltarobot_garbage.pcap", "handcontrol_tcp_bridge.pcap", "roboid_session.pcap"} {
		caps = append(caps, loadMidstream(t, filepath.Join("..", "pcaps", f), nil))
	}
	held, runs := 0, 0
	for _, mc := range caps {
		var full []capture.Packet
		for i := range mc.units {
			full = append(full, mc.units[i].packet(0))
		}
		check := func(what string, recs []mRecord) {
			runs++
			var latest time.Time
			last := map[string]time.Time{}
			for i, r := range recs {
				if r.t.After(r.emitted) {
					t.Fatalf("%s: record %d (%s %s at %d) at %v, after the last packet read (%v)", what, i, r.key, r.typ, r.off, r.t, r.emitted)
				}
				if r.t.Before(last[r.key]) {
					t.Fatalf("%s: record %d (%s %s at %d) at %v, before the direction's previous record (%v)", what, i, r.key, r.typ, r.off, r.t, last[r.key])
				}
				last[r.key] = r.t
				if r.t.Before(latest) {
					if !r.t.Before(r.emitted) {
						t.Fatalf("%s: record %d (%s %s at %d) at %v, before a record written earlier (%v), and not held", what, i, r.key, r.typ, r.off, r.t, latest)
					}
					held++
				}
				if r.t.After(latest) {
					latest = r.t
				}
			}
		}
		check(mc.name, runMidstream(t, full))
		u := &mc.units[slices.IndexFunc(mc.units, func(u mUnit) bool { return len(u.payload) > 0 })]
		arr := mc.arrival[u.key]
		size := arr[len(arr)-1].end
		for k := size / 20; k < size && u.kind != dissect.UDP; k += max(1, size/20) {
			p := slices.IndexFunc(mc.units, func(v mUnit) bool {
				return v.key == u.key && v.off <= k && k < v.off+int64(len(v.payload))
			})
			var pkts []capture.Packet
			for i := p; i < len(mc.units); i++ {
				from := 0
				if i == p {
					from = int(k - mc.units[i].off)
				}
				pkts = append(pkts, mc.units[i].packet(from))
			}
			check(fmt.Sprintf("%s cut at %d", mc.name, k), runMidstream(t, pkts))
		}
	}
	t.Logf("%d runs, %d records written after a later one (held)", runs, held)
}
