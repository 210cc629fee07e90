package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
	"github.com/dissect-tools/dissect/internal/testenc/handcontrolenc"
	"github.com/dissect-tools/dissect/internal/testenc/neptuneenc"
)

// The HandControl samples. Their truth comes from the spec-based encoder
// in internal/testenc/handcontrolenc; the decoder is never run.

// SerialLink is the serial sample's link name: the pcapng interface name,
// which dissect reports as the device side's address.
const SerialLink = "/dev/ttyUSB0"

// BridgePort is the TCP port of the serial-to-TCP bridge sample.
const BridgePort = 5000

// byteTime is one byte on a 115200 8N1 line (10 bits: 86.8 µs), rounded.
const byteTime = 87 * time.Microsecond

// Addresses of the bridge sample.
var (
	hcHostAddr   = netip.MustParseAddr("10.40.0.15")
	hcBridgeAddr = netip.MustParseAddr("10.40.0.2")
)

const handcontrolKeys = "records: type, offset, length and fields in the output contract's shape (output-contract.md \"handcontrol\"): code, role, crc, crc_ok, crc_scope (on frames whose CRC matches), payload (v2 field names in wire order, enums as their full names, uuid.UUID as its string, fields absent on the wire absent) or payload_hex, " +
	"schema (\"v2\": the key dissect/handcontrol documents after payload), and on a reply matched to its request request_code and latency_ms (reply capture time minus request capture time; every request and reply ends the read or segment that completes it at a whole millisecond, so latencies are whole milliseconds); " +
	"\"match\": \"exact\" = the record's fields are exactly these; \"warning\": \"yes\" = at least one warning, \"no\" = none; \"why\": what the expected warning is about; \"wire\": hex of the frame; events (skipped, gap) have fields {} and are compared by type, offset and length only"

// hcPiece is one serial read or TCP data segment: the bytes [start, end)
// of direction dir, captured at at.
type hcPiece struct {
	dir        int
	at         time.Duration
	start, end int64
}

// hcPieces cuts every write of s into pieces: at random offsets (about one
// per 16 bytes) and at the offsets in cuts[dir] that fall inside it. The
// last piece of a write is captured at the write's At (so that the
// truth's latencies hold), each earlier one the transmission time of the
// bytes after it before that. It fails when a write's first piece would
// not come after the previous write of its direction, or when two pieces
// would share a time.
func hcPieces(s *handcontrolenc.Session, seed uint64, cuts [2][]int64) ([]hcPiece, error) {
	r := neptuneenc.NewRand(seed)
	var out []hcPiece
	var prev [2]time.Duration
	for _, w := range s.Writes {
		n := w.End - w.Start
		pts := map[int64]bool{w.Start: true, w.End: true}
		for range r.IntN(2 + int(n/16)) {
			pts[w.Start+1+int64(r.IntN(int(n)))] = true
		}
		for _, c := range cuts[w.Dir] {
			if c > w.Start && c < w.End {
				pts[c] = true
			}
		}
		offs := make([]int64, 0, len(pts))
		for p := range pts {
			if p <= w.End {
				offs = append(offs, p)
			}
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		for i := 0; i+1 < len(offs); i++ {
			at := w.At - time.Duration(w.End-offs[i+1])*byteTime
			if at <= prev[w.Dir] {
				return nil, fmt.Errorf("%s write ending at %v: a piece at %v is not after the previous write", handcontrolenc.RoleName(w.Dir), w.At, at)
			}
			out = append(out, hcPiece{dir: w.Dir, at: at, start: offs[i], end: offs[i+1]})
		}
		prev[w.Dir] = w.At
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	for i := 1; i < len(out); i++ {
		if out[i].at == out[i-1].at {
			return nil, fmt.Errorf("two pieces at %v", out[i].at)
		}
	}
	return out, nil
}

// hcCuts returns offsets to cut each direction at, so that frames are split
// in every part: inside the SFD, between the size bytes, right after the
// header, right before the CRC, and the skipped runs in their middle.
func hcCuts(s *handcontrolenc.Session) [2][]int64 {
	var cuts [2][]int64
	for d := range 2 {
		for i, m := range s.Truth[d] {
			switch {
			case m.IsEvent():
				cuts[d] = append(cuts[d], m.Offset+m.Length/2)
			case i%4 == 0:
				cuts[d] = append(cuts[d], m.Offset+3, m.End()-1)
			case i%4 == 1:
				cuts[d] = append(cuts[d], m.Offset+10)
			case i%4 == 2:
				cuts[d] = append(cuts[d], m.End()-1)
			default:
				cuts[d] = append(cuts[d], m.Offset+handcontrolenc.HeaderLen)
			}
		}
	}
	return cuts
}

func hcRecords(ms []handcontrolenc.Message) ([]genRecord, error) {
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

// serialPcapng returns the pcapng file dissect's serial tap writes
// (dissect serial -w; capture.PcapngWriter): a section header without
// options, one interface (LINKTYPE_USER0 = 147, snaplen 4096 = the tap's
// largest read, if_name, if_tsresol 9) and one Enhanced Packet Block per
// read whose epb_flags carry the direction (1 inbound = device→host, 2
// outbound = host→device).
func serialPcapng(ifName string, reads []hcPiece, streams [2][]byte) []byte {
	le := binary.LittleEndian
	var out []byte
	shb := le.AppendUint32(nil, 0x1A2B3C4D)
	shb = le.AppendUint16(shb, 1)
	shb = le.AppendUint16(shb, 0)
	shb = le.AppendUint64(shb, ^uint64(0))
	out = append(out, ngBlock(ngSHB, shb)...)

	idb := le.AppendUint16(nil, uint16(capture.LinkUser0))
	idb = le.AppendUint16(idb, 0)
	idb = le.AppendUint32(idb, 4096)
	idb = ngOption(idb, ngIfName, []byte(ifName))
	idb = ngOption(idb, ngIfTsresol, []byte{9})
	idb = ngOption(idb, ngOptEnd, nil)
	out = append(out, ngBlock(ngIDB, idb)...)

	for _, p := range reads {
		data := streams[p.dir][p.start:p.end]
		ns := uint64(base.Add(p.at).UnixNano())
		epb := le.AppendUint32(nil, 0)
		epb = le.AppendUint32(epb, uint32(ns>>32))
		epb = le.AppendUint32(epb, uint32(ns))
		epb = le.AppendUint32(epb, uint32(len(data)))
		epb = le.AppendUint32(epb, uint32(len(data)))
		epb = append(epb, data...)
		for len(epb)%4 != 0 {
			epb = append(epb, 0)
		}
		flags := uint32(capture.DirOutbound)
		if p.dir == handcontrolenc.Device {
			flags = uint32(capture.DirInbound)
		}
		epb = ngOption(epb, ngEpbFlags, le.AppendUint32(nil, flags))
		epb = ngOption(epb, ngOptEnd, nil)
		out = append(out, ngBlock(ngEPB, epb)...)
	}
	return out
}

// ngEpbFlags is the EPB option carrying the direction in bits 0-1.
const ngEpbFlags = 2

// hcTCP frames the pieces of s as one TCP connection from host (the
// client, which opens it) to the bridge: handshake 1 ms before the first
// piece, the pieces as data segments, an ACK from the other side 300 µs
// after each write's last piece, then FINs 40 ms after the last write.
func hcTCP(s *handcontrolenc.Session, pieces []hcPiece, host, bridge netip.AddrPort, seed uint64, encap pktbuild.Encap) ([]frame, error) {
	r := neptuneenc.NewRand(seed)
	c := pktbuild.NewConn(host, bridge, uint32(r.Uint64()), uint32(r.Uint64()))
	type seg struct {
		at  time.Duration
		seg func() pktbuild.Segment
	}
	var segs []seg
	t0 := pieces[0].at - time.Millisecond
	for i, h := range c.Handshake() {
		segs = append(segs, seg{at: t0 + time.Duration(i)*90*time.Microsecond, seg: func() pktbuild.Segment { return h }})
	}
	writeEnd := map[[2]int64]bool{}
	for _, w := range s.Writes {
		writeEnd[[2]int64{int64(w.Dir), w.End}] = true
	}
	var last time.Duration
	for _, p := range pieces {
		data := s.Stream[p.dir][p.start:p.end]
		side := pktbuild.Side(p.dir)
		segs = append(segs, seg{at: p.at, seg: func() pktbuild.Segment { return c.Send(side, data) }})
		if writeEnd[[2]int64{int64(p.dir), p.end}] {
			segs = append(segs, seg{at: p.at + 300*time.Microsecond, seg: func() pktbuild.Segment { return c.Ack(side.Other()) }})
		}
		last = max(last, p.at)
	}
	fin := last + 40*time.Millisecond
	segs = append(segs,
		seg{at: fin, seg: func() pktbuild.Segment { return c.Fin(pktbuild.Client) }},
		seg{at: fin + 200*time.Microsecond, seg: func() pktbuild.Segment { return c.Fin(pktbuild.Server) }},
		seg{at: fin + 260*time.Microsecond, seg: func() pktbuild.Segment { return c.Ack(pktbuild.Client) }},
	)
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].at < segs[j].at })
	var frames []frame
	for i, sg := range segs {
		if i > 0 && sg.at <= segs[i-1].at {
			return nil, fmt.Errorf("two segments at %v", sg.at)
		}
		f := sg.seg().Frame(encap) // sequence numbers advance in time order
		frames = append(frames, frame{t: base.Add(sg.at), data: f.Data, orig: f.Length})
	}
	return frames, nil
}

// hcGen is a HandControl sample: the generic sample plus what the tests
// check it against.
type hcGen struct {
	genFile
	session *handcontrolenc.Session
	pieces  []hcPiece
}

// handcontrolSamples builds the HandControl samples.
func handcontrolSamples() ([]hcGen, error) {
	var out []hcGen
	const source = "records expected from the spec-based encoder (internal/testenc/handcontrolenc); not produced by running the decoder"

	// A serial link as dissect's serial tap saves it.
	s, err := handcontrolenc.SerialSession()
	if err != nil {
		return nil, err
	}
	reads, err := hcPieces(s, 301, hcCuts(s))
	if err != nil {
		return nil, fmt.Errorf("handcontrol_serial: %w", err)
	}
	var dirs []genDir
	names := [2]string{"host", SerialLink}
	for d := range 2 {
		recs, err := hcRecords(s.Truth[d])
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, genDir{role: handcontrolenc.RoleName(d), srcName: names[d], dstName: names[d^1], stream: s.Stream[d], records: recs})
	}
	out = append(out, hcGen{session: s, pieces: reads, genFile: genFile{
		name: "handcontrol_serial.pcapng",
		comment: "a HandControl host (PC configurator) and prosthesis on a UART (115200 8N1), as dissect serial -w saves it: pcapng, one interface (if_name /dev/ttyUSB0, LINKTYPE_USER0, ns timestamps), one packet per read with the direction in epb_flags; " +
			"reads cut frames anywhere (inside the SFD, the size, before the CRC). Host: GetSettings, SetPositions{10,20,30,40,50}, StartTelemetry{100}, PerformGestureId{unknown UUID}, GetMioPatterns, the protocols.md §1.9 SetSettings frame with payload ab cd and a wrong CRC, StopTelemetry. " +
			"Device: GetSettings{emg, display, driver}, ACK, ACK, telemetry about every 100 ms (6 frames, enums, a UUID), ERR{gesture not found}, the §1.9 garbage fb ba dc fa ad bd 23 aa d1 32 before a telemetry frame, type 13 carrying GetMioPatterns (the device's quirk), " +
			"a telemetry frame and ERR{Error parsing message} back to back in one write, ACK",
		source:    source,
		decodeAs:  "serial,handcontrol",
		keys:      handcontrolKeys,
		transport: "serial",
		data:      serialPcapng(SerialLink, reads, s.Stream),
		dirs:      dirs,
	}})

	// The same link over TCP, through a serial-to-TCP bridge.
	s, err = handcontrolenc.BridgeSession()
	if err != nil {
		return nil, err
	}
	segs, err := hcPieces(s, 302, hcCuts(s))
	if err != nil {
		return nil, fmt.Errorf("handcontrol_tcp_bridge: %w", err)
	}
	host, bridge := netip.AddrPortFrom(hcHostAddr, 50321), netip.AddrPortFrom(hcBridgeAddr, BridgePort)
	eth := pktbuild.Encap{Type: capture.LinkEthernet}
	frames, err := hcTCP(s, segs, host, bridge, 303, eth)
	if err != nil {
		return nil, fmt.Errorf("handcontrol_tcp_bridge: %w", err)
	}
	dirs = nil
	addrs := [2]netip.AddrPort{host, bridge}
	for d := range 2 {
		recs, err := hcRecords(s.Truth[d])
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, genDir{role: handcontrolenc.RoleName(d), src: addrs[d], dst: addrs[d^1], stream: s.Stream[d], records: recs})
	}
	out = append(out, hcGen{session: s, pieces: segs, genFile: genFile{
		name: "handcontrol_tcp_bridge.pcap",
		comment: fmt.Sprintf("the HandControl link carried over TCP by a serial-to-TCP bridge on port %d: the host opens the connection (direction 0); segments cut frames anywhere. "+
			"Host: GetGestures, PerformGestureId{UUID}, StartTelemetry{50}, StopTelemetry, GetTelemetry. Device: GetGestures{2 gestures with actions}, ACK, ACK, telemetry every 50 ms (4 frames; the last one and the ACK to StopTelemetry back to back in one write), GetTelemetry{telemetry}; FIN both ways", BridgePort),
		source:    source,
		decodeAs:  fmt.Sprintf("tcp.port==%d,handcontrol", BridgePort),
		keys:      handcontrolKeys,
		transport: "tcp", encap: eth, frames: frames,
		dirs: dirs,
	}})
	return out, nil
}
