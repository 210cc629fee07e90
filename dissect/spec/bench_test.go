package spec

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/deltarobot"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/handcontrol"
	"github.com/dissect-tools/dissect/internal/testenc/handcontrolenc"
)

type countSink struct{ n int }

func (s *countSink) Record(*dissect.Record) error { s.n++; return nil }

// BenchmarkPerMessage compares the per-message cost of the example
// protocol, loaded from its file, with built-ins of similar shape:
// Deltarobot's actuator_position (an id, a size and four float32 in 18
// bytes, protocols.md §4.3) against the same message described in a
// protocol file (testdata/vector.yaml) and HandControl's StartTelemetry (an 8-byte
// SFD, a header, a CRC-8 and a one-field protobuf payload) against ACME heartbeats (sync word, length,
// three header fields, three payload fields, an enum and a scaled value,
// and a CRC-16 in 14 bytes) and against the ACME capture's mix. Both
// through dissect.Stream in 1448-byte chunks, decoding; see
// docs/performance-24-34.md.
func BenchmarkPerMessage(b *testing.B) {
	_, whole := serialUnits(b)
	heartbeat := whole[1][:14] // the capture's first controller frame
	if !bytes.Equal(heartbeat[:2], []byte{0xa5, 0x5a}) || heartbeat[4] != 1 {
		b.Fatalf("not a heartbeat: % x", heartbeat)
	}
	position := dissecttest.Hex("03 40 00 00 80 3f 00 00 00 40 00 00 40 40 00 00 00 00")
	handshake := dissecttest.Hex("01 30 44 65 6c 74 61 52 56 72 02 20 01 00 00 00")
	hc, err := handcontrol.New(handcontrol.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// StartTelemetry {1: 100}: SFD, header, CRC-8, a one-field protobuf
	startTelemetry := handcontrolenc.MustFrame(handcontrolenc.CodeStartTelemetry, []byte{0x08, 0x64})
	cases := []struct {
		name  string
		proto dissect.Protocol
		rule  string
		head  []byte
		unit  []byte
		msgs  int // per unit
	}{
		{"builtin/deltarobot_position", deltarobot.New(), "tcp.port==4000,deltarobot", handshake, position, 1},
		{"builtin/handcontrol_start_telemetry", hc, "tcp.port==4000,handcontrol", nil, startTelemetry, 1},
		{"described/vector_position", loadVector(b), "tcp.port==4000,vector", nil, position, 1},
		{"described/acme_heartbeat", loadExample(b), "tcp.port==4000,acme-servo", nil, heartbeat, 1},
		{"described/acme_capture_mix", loadExample(b), "tcp.port==4000,acme-servo", nil, whole[1], 0},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var body []byte
			msgs := 0
			for len(body) < 64<<10 {
				body = append(body, c.unit...)
				msgs += c.msgs
			}
			reg := dissecttest.Registry(b, []string{c.rule}, c.proto)
			var sink countSink
			s := dissect.NewStream(benchInfo(), reg, &sink, dissect.StreamOptions{Decode: true})
			if c.head != nil {
				s.Data(0, time.Unix(0, 0), c.head)
			}
			s.Data(0, time.Unix(0, 0), body) // the records of one pass
			per := sink.n - len(c.head)/8
			if c.msgs > 0 && sink.n < msgs {
				b.Fatalf("%d records of %d messages", sink.n, msgs)
			}
			if c.msgs == 0 {
				msgs = per
			}
			sink.n = 0
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				for p := body; len(p) > 0; {
					n := min(len(p), 1448)
					s.Data(0, time.Unix(0, 0), p[:n])
					p = p[n:]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(msgs*b.N), "ns/msg")
		})
	}
}

// loadVector loads testdata/vector.yaml: Deltarobot's actuator_position
// as a protocol file.
func loadVector(b *testing.B) *Protocol {
	p, err := LoadFile("testdata/vector.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchInfo() dissect.StreamInfo { return benchInfoPort(4000) }

// benchInfoPort is a TCP stream from a client to port.
func benchInfoPort(port uint16) dissect.StreamInfo {
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP}}
	info.Addr = [2]netip.AddrPort{netip.MustParseAddrPort("198.51.100.7:50123"), netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), port)}
	info.Name = [2]string{info.Addr[0].String(), info.Addr[1].String()}
	return info
}
