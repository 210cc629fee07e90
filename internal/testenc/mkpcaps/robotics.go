package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/neptuneenc"
	"github.com/dissect-tools/dissect/internal/testenc/roboidenc"
	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// The Neptune and Roboid samples. Their truth comes from the spec-based
// encoders in internal/testenc/neptuneenc and internal/testenc/roboidenc;
// the decoders are never run.

// genRecord is one expected record of a truth file.
type genRecord struct {
	typ      string
	off, end int64
	js       []byte // the record as the encoder's MarshalJSON writes it
}

// genDir is one direction of a generated flow.
type genDir struct {
	role     string
	src, dst netip.AddrPort
	// srcName and dstName, when set, replace src and dst in the truth
	// (serial links: "host" and the link's name).
	srcName, dstName string
	stream           []byte
	records          []genRecord
	datagrams        int // UDP: datagrams sent in this direction
}

// genFile is a generated capture that is not a Deltarobot one.
type genFile struct {
	name, comment string
	source        string // which encoder the truth comes from
	decodeAs      string
	options       string // decoder options the truth assumes, "" for none
	keys          string
	transport     string // "tcp" or "udp"
	encap         pktbuild.Encap
	frames        []frame
	data          []byte     // the file itself, when not a pcap of frames
	dirs          []genDir   // in dissect's numbering: dirs[0] sends first
	segs          [][2]int64 // TCP: byte ranges of dirs[0]'s data segments, in order
}

// Addresses of the Neptune and Roboid samples. The ROV's address is the
// one its firmware sets (nep_network.ino, protocols.md §2.3).
var (
	rovAddr     = netip.MustParseAddr("192.168.0.177")
	consoleAddr = netip.MustParseAddr("192.168.0.10")
	siteAddr    = netip.MustParseAddr("10.30.0.1")
	roverAddr   = netip.MustParseAddr("10.30.0.20")
)

// WikiPort is the UDP port of the wiki samples (the wiki names none).
const WikiPort = 9000

func neptuneRecords(ms []neptuneenc.Message) ([]genRecord, error) {
	out := make([]genRecord, len(ms))
	for i, m := range ms {
		j, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		out[i] = genRecord{typ: m.Type, off: m.Offset, end: m.End(), js: j}
	}
	return out, nil
}

func roboidRecords(ms []roboidenc.Message) ([]genRecord, error) {
	out := make([]genRecord, len(ms))
	for i, m := range ms {
		j, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		out[i] = genRecord{typ: m.Type, off: m.Offset, end: m.End(), js: j}
	}
	return out, nil
}

// tcpOneWay turns the writes of a host → device session into the segments
// of one TCP connection: handshake; each write cut into segments at random
// offsets and at the offsets in cuts; the device ACKs about two writes in
// three; then the host closes (FIN), the device closes (FIN) and the host
// ACKs. It returns the frames and, for checking, the byte ranges of the
// data segments in order.
func tcpOneWay(s *neptuneenc.DeviceSession, seed uint64, client, server netip.AddrPort, cuts []int64, encap pktbuild.Encap) ([]frame, [][2]int64) {
	r := neptuneenc.NewRand(seed)
	c := pktbuild.NewConn(client, server, uint32(r.Uint64()), uint32(r.Uint64()))
	type seg struct {
		at  time.Duration
		s   pktbuild.Segment
		rng [2]int64
	}
	var segs []seg
	for i, h := range c.Handshake() {
		segs = append(segs, seg{at: time.Duration(i) * 80 * time.Microsecond, s: h, rng: [2]int64{-1, -1}})
	}
	var last time.Duration
	for _, w := range s.Sends {
		at := handshakeTime + w.At
		offs := []int64{w.Start, w.End}
		n := w.End - w.Start
		for range r.IntN(3 + int(n/40)) {
			offs = append(offs, w.Start+1+int64(r.IntN(int(n))))
		}
		for _, x := range cuts {
			if x > w.Start && x < w.End {
				offs = append(offs, x)
			}
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		k := 0
		for i := 0; i+1 < len(offs); i++ {
			if offs[i] == offs[i+1] || offs[i+1] > w.End {
				continue
			}
			segs = append(segs, seg{at: at + time.Duration(k)*15*time.Microsecond,
				s: c.Send(pktbuild.Client, s.Stream[offs[i]:offs[i+1]]), rng: [2]int64{offs[i], offs[i+1]}})
			k++
		}
		if r.IntN(3) < 2 {
			segs = append(segs, seg{at: at + time.Duration(k*15+40+r.IntN(100))*time.Microsecond, s: c.Ack(pktbuild.Server), rng: [2]int64{-1, -1}})
		}
		last = at + time.Duration(k*15+200)*time.Microsecond
	}
	segs = append(segs,
		seg{at: last + 2*time.Millisecond, s: c.Fin(pktbuild.Client), rng: [2]int64{-1, -1}},
		seg{at: last + 2*time.Millisecond + 150*time.Microsecond, s: c.Fin(pktbuild.Server), rng: [2]int64{-1, -1}},
		seg{at: last + 2*time.Millisecond + 220*time.Microsecond, s: c.Ack(pktbuild.Client), rng: [2]int64{-1, -1}},
	)
	// Segments were made in order; keep their times increasing.
	var frames []frame
	var ranges [][2]int64
	var prev time.Duration = -1
	for _, sg := range segs {
		at := max(sg.at, prev+time.Microsecond)
		prev = at
		f := sg.s.Frame(encap)
		frames = append(frames, frame{t: base.Add(at), data: f.Data, orig: f.Length})
		if sg.rng[0] >= 0 {
			ranges = append(ranges, sg.rng)
		}
	}
	return frames, ranges
}

// udpFrames frames datagrams: each is (time, from, to, payload); IPv4 ids
// count up per sender.
type udpDatagram struct {
	at       time.Duration
	src, dst netip.AddrPort
	payload  []byte
}

func udpFrames(ds []udpDatagram, encap pktbuild.Encap) []frame {
	ids := map[netip.Addr]uint16{}
	var frames []frame
	var prev time.Duration = -1
	for _, d := range ds {
		ip := pktbuild.UDPPacket(d.src, d.dst, d.payload)
		ids[d.src.Addr()]++
		ip.ID = 0x4000 + ids[d.src.Addr()]
		f := encap.Wrap(ip.Encode())
		at := max(d.at, prev+time.Microsecond)
		prev = at
		frames = append(frames, frame{t: base.Add(at), data: f.Data, orig: f.Length})
	}
	return frames
}

const neptuneKeys = "records: type, offset, length and fields in the output contract's shape (device framing: output-contract.md \"neptune\"; wiki mode: the record types and field names documented by dissect/neptune, as the contract has no wiki section); " +
	"\"match\": \"exact\" = the record's fields are exactly these, in this order; \"subset\" = each listed field must be present with this value, other fields are not asserted (see \"not_asserted\"); " +
	"\"warning\": \"yes\" = at least one warning, \"no\" = none, absent = not asserted; \"wire\": hex of the message's bytes; events (skipped, gap) have fields {} and are compared by type, offset and length only"

const roboidKeys = "records: type, offset, length and fields in the output contract's shape (output-contract.md \"roboid\"; the ids each message type carries follow dissect/roboid's documented layout, which matches the encoder's bodies); " +
	"\"match\": \"exact\" = the record's fields are exactly these, in this order; \"subset\" (Pose) = each listed key is present with this value, recursively (arrays element by element); more keys are not asserted, such as the decoded interpretations in each object of \"values\", or an empty \"values\" in a Pose too short for its ids; " +
	"\"warning\": \"yes\" = at least one warning, \"no\" = none, absent = not asserted; \"wire\": hex of the datagram; one record per datagram"

// roboticsSamples builds the Neptune and Roboid samples.
func roboticsSamples() ([]genFile, error) {
	eth := pktbuild.Encap{Type: capture.LinkEthernet}
	var out []genFile

	// Neptune device framing over TCP.
	ps := neptuneenc.NewPilotSession(neptuneenc.Options{Seed: 11, Broken: true})
	recs, err := neptuneRecords(ps.Truth)
	if err != nil {
		return nil, err
	}
	// Cut inside the garbage run, the wrong-length and unknown messages,
	// and every seventh message, so that messages span segments.
	var cuts []int64
	for i, m := range ps.Truth {
		if m.Length > 1 && (m.Type == neptuneenc.TypeSkipped || m.Warn == truth.Yes || i%7 == 0) {
			cuts = append(cuts, m.Offset+m.Length/2)
		}
	}
	console, rov := netip.AddrPortFrom(consoleAddr, 49731), netip.AddrPortFrom(rovAddr, neptuneenc.Port)
	frames, segs := tcpOneWay(ps, 201, console, rov, cuts, eth)
	out = append(out, genFile{
		name: "neptune_session.pcap",
		comment: "an ROV pilot's console (TCP client) sending device-framing commands to the Neptune ROV on port 1493 (the device sends nothing back, only ACKs): lamp and auto-stabilize on, " +
			"60 updates of the four thrusters' set_motor, translate/rotate, relay 5 toggles, then stops, stabilize and lamp off; broken forms: a length-0 message, set_motor with length 3, " +
			"an unknown type 9, a garbage run of length bytes of 100 or more starting with 0xc8 (each dropped by the device, so skipped byte by byte), lamp with length 3, an abort with arguments, translate on axis 3, " +
			"set_motor for motor 9, and a final abort cut after its length byte; writes are cut into segments inside messages; FIN both ways",
		source:    "records expected from the spec-based encoder (internal/testenc/neptuneenc); not produced by running the decoder",
		decodeAs:  "tcp.port==1493,neptune",
		keys:      neptuneKeys,
		transport: "tcp", encap: eth, frames: frames, segs: segs,
		dirs: []genDir{
			{role: "console", src: console, dst: rov, stream: ps.Stream, records: recs},
			{role: "rov", src: rov, dst: console},
		},
	})

	// Neptune wiki format over UDP, int32 and int16.
	for _, v := range []struct {
		name  string
		width neptuneenc.IntWidth
		seed  uint64
		port  uint16
	}{{"neptune_wiki.pcap", neptuneenc.Int32, 12, 50001}, {"neptune_wiki_int16.pcap", neptuneenc.Int16, 13, 50002}} {
		ws := neptuneenc.NewWikiSession(neptuneenc.WikiOptions{Seed: v.seed, Int: v.width, Broken: true})
		recs, err := neptuneRecords(ws.Truth)
		if err != nil {
			return nil, err
		}
		host, dev := netip.AddrPortFrom(consoleAddr, v.port), netip.AddrPortFrom(rovAddr, WikiPort)
		var ds []udpDatagram
		for _, d := range ws.Datagrams {
			ds = append(ds, udpDatagram{at: d.At, src: host, dst: dev, payload: ws.Stream[d.Start:d.End]})
		}
		width, opts := "int32 (the default)", ""
		if v.width == neptuneenc.Int16 {
			width, opts = "int16", "neptune.WikiOptions{Int16: true}"
		}
		out = append(out, genFile{
			name: v.name,
			comment: fmt.Sprintf("wiki-format Neptune packets over UDP to port %d, one packet per datagram, \"int\" = %s: relay 1 on, 40 speed motor packets (motors 0-3), "+
				"position motor packets for motor 6, sensor data (pressure bytes, temperature text), relay 1 off; sequence numbers from 250, wrapping; "+
				"broken forms: an unknown type 7, a speed motor packet cut inside its speed, a relay packet with 2 extra bytes, a 2-byte datagram, a relay packet whose enable byte is 2", WikiPort, width),
			source:    "records expected from the spec-based encoder (internal/testenc/neptuneenc); not produced by running the decoder",
			decodeAs:  fmt.Sprintf("udp.port==%d,neptune-wiki", WikiPort),
			options:   opts,
			keys:      neptuneKeys,
			transport: "udp", encap: eth, frames: udpFrames(ds, eth),
			dirs: []genDir{
				{role: "host", src: host, dst: dev, stream: ws.Stream, records: recs, datagrams: len(ws.Datagrams)},
				{role: "rov", src: dev, dst: host},
			},
		})
	}

	// Roboid Control over UDP, both ways.
	rs := roboidenc.NewSession(roboidenc.Options{Seed: 14, Broken: true})
	rover, site := netip.AddrPortFrom(roverAddr, 50123), netip.AddrPortFrom(siteAddr, roboidenc.Port)
	addr := [2]netip.AddrPort{rover, site}
	var ds []udpDatagram
	n := [2]int{}
	for _, d := range rs.Datagrams {
		ds = append(ds, udpDatagram{at: d.At, src: addr[d.Dir], dst: addr[d.Dir^1], payload: rs.Stream[d.Dir][d.Start:d.End]})
		n[d.Dir]++
	}
	var rdirs []genDir
	for d := range 2 {
		recs, err := roboidRecords(rs.Truth[d])
		if err != nil {
			return nil, err
		}
		rdirs = append(rdirs, genDir{role: roboidenc.RoleName(d), src: addr[d], dst: addr[d^1], stream: rs.Stream[d], records: recs, datagrams: n[d]})
	}
	out = append(out, genFile{
		name: "roboid_session.pcap",
		comment: "a Roboid Control client (a rover) and a Roboid Site over UDP port 7681, one message per datagram: Client, NetworkId 5, Poses of thing 1 (position 0xb1, orientation 0xd5, polar velocity 0x62), " +
			"Investigate / NewThing / ModelURL for new things both ways, Poses with the spec's typical data types (0x62 0x48 0x88 0x83 0xd4 0xe5 0xf5), its size examples as high nibbles (0x10 0x45 0x51 0xd5 0x21 0xb1) " +
			"and as literal bytes (0x01 0x04 0x05 0x0d 0x02 0x0b, zero-size values), undefined semantics (0x40 0x94 0x6f 0x29); broken forms: an unknown id 0x42, a Pose ending with the extension data type 0x00, " +
			"a Pose whose 0xf5 value is cut after 4 of its 7 bytes, a 2-byte Pose, a Pose without values",
		source:    "records expected from the spec-based encoder (internal/testenc/roboidenc); not produced by running the decoder",
		decodeAs:  fmt.Sprintf("udp.port==%d,roboid", roboidenc.Port),
		keys:      roboidKeys,
		transport: "udp", encap: eth, frames: udpFrames(ds, eth),
		dirs: rdirs,
	})
	return out, nil
}

// renderGen writes a generated file and its truth.
func renderGen(g genFile) ([]output, error) {
	for _, d := range g.dirs {
		var off int64
		for _, r := range d.records {
			if r.off != off {
				return nil, fmt.Errorf("%s %s: records do not tile at %d", g.name, d.role, off)
			}
			off = r.end
		}
		if off != int64(len(d.stream)) {
			return nil, fmt.Errorf("%s %s: records end at %d of %d", g.name, d.role, off, len(d.stream))
		}
	}
	data := g.data
	if data == nil {
		data = pcapFile(uint32(g.encap.Type), g.frames)
	}
	truth, err := genTruthJSON(g)
	if err != nil {
		return nil, err
	}
	return []output{{g.name, data}, {strings.TrimSuffix(strings.TrimSuffix(g.name, ".pcapng"), ".pcap") + ".truth.json", truth}}, nil
}

// genTruthJSON writes the expected records of a generated sample, one
// record per line.
func genTruthJSON(g genFile) ([]byte, error) {
	var b bytes.Buffer
	q := func(v any) string {
		j, err := json.Marshal(v)
		if err != nil {
			panic(err) // strings and ints only
		}
		return string(j)
	}
	fmt.Fprintf(&b, "{\n  \"file\": %s,\n  \"generator\": %s,\n", q(g.name), q(Generator))
	fmt.Fprintf(&b, "  \"source\": %s,\n", q(g.source))
	fmt.Fprintf(&b, "  \"description\": %s,\n", q(g.comment))
	fmt.Fprintf(&b, "  \"decode_as\": %s,\n", q(g.decodeAs))
	if g.options != "" {
		fmt.Fprintf(&b, "  \"decoder_options\": %s,\n", q(g.options))
	}
	fmt.Fprintf(&b, "  \"keys\": %s,\n", q(g.keys))
	fmt.Fprintf(&b, "  \"streams\": [\n    {\n      \"stream\": 0,\n      \"transport\": %s,\n      \"directions\": [\n", q(g.transport))
	for i, d := range g.dirs {
		var gaps, skipped []string
		for _, r := range d.records {
			s := fmt.Sprintf("[%d, %d]", r.off, r.end)
			switch r.typ {
			case "gap":
				gaps = append(gaps, s)
			case "skipped":
				skipped = append(skipped, s)
			}
		}
		src, dst := d.src.String(), d.dst.String()
		if d.srcName != "" {
			src, dst = d.srcName, d.dstName
		}
		fmt.Fprintf(&b, "        {\n          \"dir\": %d,\n          \"role\": %s,\n          \"src\": %s,\n          \"dst\": %s,\n          \"bytes\": %d,\n",
			i, q(d.role), q(src), q(dst), len(d.stream))
		if g.transport == "udp" {
			fmt.Fprintf(&b, "          \"datagrams\": %d,\n", d.datagrams)
		}
		fmt.Fprintf(&b, "          \"gaps\": [%s],\n          \"skipped\": [%s],\n          \"records\": [", strings.Join(gaps, ", "), strings.Join(skipped, ", "))
		for k, r := range d.records {
			sep := ","
			if k == len(d.records)-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "\n            %s%s", r.js, sep)
		}
		if len(d.records) > 0 {
			b.WriteString("\n          ")
		}
		b.WriteString("]\n        }")
		if i < len(g.dirs)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("      ]\n    }\n  ]\n}\n")
	if !json.Valid(b.Bytes()) {
		return nil, fmt.Errorf("%s: truth file is not valid JSON", g.name)
	}
	return b.Bytes(), nil
}
