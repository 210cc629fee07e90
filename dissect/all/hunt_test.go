package all

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/testenc/deltaenc"
	"github.com/dissect-tools/dissect/internal/testenc/handcontrolenc"
)

// These tests join streams mid-way: 3 KiB of random bytes (more than the
// 2 KiB detection window) come before the first whole message, so content
// detection gives up, and the stream must still be decoded from its first
// sync point with every protocol of the run registered. The expected
// records come from the independent encoders in internal/testenc, or for
// VRPN from the wire format in the specs.

// rec is what a test expects of one record.
type rec struct {
	proto, typ  string
	off, length int64
}

func (r rec) String() string { return fmt.Sprintf("%s/%s@%d+%d", r.proto, r.typ, r.off, r.length) }

func tcpStream(port uint16) dissect.StreamInfo {
	a := [2]netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:40000"), netip.AddrPortFrom(netip.MustParseAddr("10.0.0.2"), port)}
	return dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP, Addr: a}, Name: [2]string{a[0].String(), a[1].String()}}
}

func serialStream() dissect.StreamInfo {
	return dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.Serial, Link: "/dev/ttyUSB0"}, Name: [2]string{"host", "/dev/ttyUSB0"}}
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// run feeds in[d] to direction d of a new stream of info, cut into random
// chunks, ends both directions and returns the records of each direction.
func run(t *testing.T, info dissect.StreamInfo, in [2][]byte, seed uint64) [2][]*dissect.Record {
	t.Helper()
	reg, err := Registry(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]*dissect.Record
	s := dissect.NewStream(info, reg, dissecttest.SplitSink(t, info.Name, &got), dissect.StreamOptions{Decode: true})
	rng := rand.New(rand.NewPCG(seed, 7))
	sizes := []int{1, 13, 1460, 8192}
	at := time.Unix(1700000000, 0)
	for len(in[0])+len(in[1]) > 0 {
		d := rng.IntN(2)
		if len(in[d]) == 0 {
			d ^= 1
		}
		n := min(len(in[d]), 1+rng.IntN(sizes[rng.IntN(len(sizes))]))
		dissecttest.Data(s, dissect.Dir(d), at, in[d][:n], nil, nil)
		in[d] = in[d][n:]
	}
	s.End(0, at)
	s.End(1, at)
	return got
}

// check fails t unless the records of one direction tile size bytes and,
// from offset from on, are exactly want.
func check(t *testing.T, what string, recs []*dissect.Record, size, from int64, want []rec) {
	t.Helper()
	dissecttest.CheckTiling(t, recs, [2]int64{size}, func(*dissect.Record) dissect.Dir { return 0 })
	var got []rec
	for _, r := range recs {
		if r.Offset >= from {
			got = append(got, rec{r.Proto, r.Type, r.Offset, r.Length})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		var all bytes.Buffer
		for _, r := range recs {
			fmt.Fprintf(&all, "\n  %s %s", r.Proto, dissecttest.DescribeRecord(r))
		}
		t.Fatalf("%s: records from offset %d\n got %v\nwant %v\nall:%s", what, from, got, want, all.String())
	}
}

// checkJoined fails t unless the records of one direction tile size
// bytes, are exactly want from offset g on, and before g are skipped: the
// bytes that left the hunt's window with reason [dissect.ReasonUnknown]
// (proto ""), then those the protocol's resync passed over once the hunt
// found it (proto, the reason naming it).
func checkJoined(t *testing.T, what string, recs []*dissect.Record, size, g int64, proto string, want []rec) {
	t.Helper()
	check(t, what, recs, size, g, want)
	known := false
	for _, r := range recs {
		if r.Offset >= g {
			break
		}
		reason, _ := r.Fields.Get("reason")
		switch {
		case r.Type != dissect.TypeSkipped:
			t.Fatalf("%s: %s before the first message at %d", what, dissecttest.DescribeRecord(r), g)
		case r.Proto == "" && !known && reason.Str() == dissect.ReasonUnknown:
		case r.Proto == proto && strings.HasPrefix(reason.Str(), proto+": "):
			known = true
		default:
			t.Fatalf("%s: %s %s before the first message at %d: want skipped, unknown protocol then %s's", what, r.Proto, dissecttest.DescribeRecord(r), g, proto)
		}
	}
}

func deltaSession(rng *rand.Rand) ([]byte, []deltaenc.Message, error) {
	var b deltaenc.Builder
	f := func() float32 { return float32(rng.IntN(2000)-1000) / 8 }
	for i := range 40 {
		switch i % 5 {
		case 0, 1:
			b.ActuatorPosition(f(), f(), f(), f())
		case 2:
			b.Ping(rng.Uint64())
		case 3:
			b.CurrentDirection(f(), f(), f(), f())
		case 4:
			b.Curve([][3]float32{{f(), f(), f()}, {f(), f(), f()}})
		}
	}
	b.EndOfTransmission("done")
	return b.Finish()
}

// TestHuntDeltarobot: a Deltarobot stream without its handshake, over TCP
// on a port of no protocol and over a serial link, after 3 KiB of noise.
func TestHuntDeltarobot(t *testing.T) {
	for _, info := range []dissect.StreamInfo{tcpStream(4000), serialStream()} {
		for seed := uint64(0); seed < 12; seed++ {
			rng := rand.New(rand.NewPCG(seed, 1))
			wire, msgs, err := deltaSession(rng)
			if err != nil {
				t.Fatal(err)
			}
			noise := randomBytes(rng, 3<<10)
			in := append(noise, wire...)
			// The decoder contract's own sync rule must place the first
			// sync point at the first message, not in the noise. It may
			// call that ambiguous when known ids in the noise declare a
			// message running past the end of the data: the hunt looks
			// at no place older than its window, so it does not wait
			// there for good (seed 5 has such a place 1.8 KiB before the
			// first message).
			if s, err := deltaenc.FirstSync(in, 0); s != len(noise) || (err != nil && !errors.Is(err, deltaenc.ErrAmbiguous)) {
				t.Fatalf("seed %d: noise holds a sync point (%d, %v): pick another seed", seed, s, err)
			}
			var want []rec
			for _, m := range msgs {
				want = append(want, rec{"deltarobot", m.Type, int64(len(noise)) + m.Offset, m.Length})
			}
			got := run(t, info, [2][]byte{in}, seed)
			checkJoined(t, fmt.Sprintf("%s seed %d", info.Transport, seed), got[0], int64(len(in)), int64(len(noise)), "deltarobot", want)
		}
	}
}

// TestHuntDeltarobotMidMessage: a serial capture that starts inside a
// message (its last 7 bytes) is decoded from the next message at once,
// without waiting for the detection window to fill.
func TestHuntDeltarobotMidMessage(t *testing.T) {
	rng := rand.New(rand.NewPCG(99, 1))
	wire, msgs, err := deltaSession(rng)
	if err != nil {
		t.Fatal(err)
	}
	cut := msgs[0].End() - 7
	var want []rec
	for _, m := range msgs[1:] {
		want = append(want, rec{"deltarobot", m.Type, m.Offset - cut, m.Length})
	}
	got := run(t, serialStream(), [2][]byte{wire[cut:]}, 3)
	checkJoined(t, "mid-message", got[0], int64(len(wire))-cut, 7, "deltarobot", want)
}

// TestHuntHandControl: a prosthesis link joined mid-way, serial and TCP:
// host requests after 3 KiB of noise; in a second run, device replies too,
// after the tail of a frame cut by the start of the capture.
func TestHuntHandControl(t *testing.T) {
	host := []struct {
		code    byte
		payload []byte
	}{
		{handcontrolenc.CodeSetPositions, handcontrolenc.SetPositions(handcontrolenc.Fingers{Pointer: 10, Middle: 20, Ring: 30, Little: 40, Thumb: 50}).Bytes()},
		{handcontrolenc.CodeGetSettings, nil},
		{handcontrolenc.CodeStopTelemetry, nil},
		{handcontrolenc.CodeUpdateLastTimeSync, handcontrolenc.UpdateLastTimeSync(1700000000).Bytes()},
		{handcontrolenc.CodeGetGestures, nil},
	}
	for _, info := range []dissect.StreamInfo{serialStream(), tcpStream(5555)} {
		for seed := uint64(0); seed < 12; seed++ {
			rng := rand.New(rand.NewPCG(seed, 2))
			noise := randomBytes(rng, 3<<10)
			if bytes.Contains(noise, handcontrolenc.SFD[:]) {
				t.Fatalf("seed %d: the noise holds a start-of-frame delimiter", seed)
			}
			var in [2][]byte
			var want [2][]rec
			in[0] = noise
			for i := range 20 {
				h := host[(i+int(seed))%len(host)]
				f := handcontrolenc.MustFrame(h.code, h.payload)
				want[0] = append(want[0], rec{"handcontrol", handcontrolenc.TypeName(h.code), int64(len(in[0])), int64(len(f))})
				in[0] = append(in[0], f...)
			}
			what := fmt.Sprintf("%s seed %d", info.Transport, seed)
			got := run(t, info, [2][]byte{in[0]}, seed)
			checkJoined(t, what+" host only", got[0], int64(len(in[0])), int64(len(noise)), "handcontrol", want[0])

			ack := handcontrolenc.MustFrame(handcontrolenc.CodeACK, nil)
			in[1] = append(in[1], ack[len(ack)-5:]...) // the tail of a frame
			for range 20 {
				want[1] = append(want[1], rec{"handcontrol", handcontrolenc.TypeName(handcontrolenc.CodeACK), int64(len(in[1])), int64(len(ack))})
				in[1] = append(in[1], ack...)
			}
			// With both directions, either may settle the protocol first
			// (on a serial link the device's delimiter, 5 bytes in, is
			// found by content detection): the bytes before the first
			// frame are skipped in one or more records, and every frame
			// after them is decoded.
			got = run(t, info, in, seed)
			check(t, what+" host", got[0], int64(len(in[0])), int64(len(noise)), want[0])
			check(t, what+" device", got[1], int64(len(in[1])), 5, want[1])
		}
	}
}

// vrpnMessage frames one VRPN message as vrpn-wire-format.txt describes:
// five big-endian u32 (length, seconds, microseconds, sender, type), the
// sequence number in the header's padding, the body padded to 8 bytes.
// The length counts the 24-byte header and the unpadded body.
func vrpnMessage(sec, usec uint32, sender, typ int32, seq uint32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(24+len(body)))
	b = binary.BigEndian.AppendUint32(b, sec)
	b = binary.BigEndian.AppendUint32(b, usec)
	b = binary.BigEndian.AppendUint32(b, uint32(sender))
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	b = binary.BigEndian.AppendUint32(b, seq)
	b = append(b, body...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestHuntVRPN: a VRPN TCP connection on a port other than 3883, joined
// after its cookie and descriptions, behind 3 KiB of noise. Its type ids
// were never described, so every message has type "unknown" (output
// contract, "vrpn").
func TestHuntVRPN(t *testing.T) {
	for seed := uint64(0); seed < 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		noise := randomBytes(rng, 3<<10)
		in := noise
		var want []rec
		for i := range 30 {
			body := randomBytes(rng, 8+rng.IntN(40))
			m := vrpnMessage(1700000000+uint32(i), uint32(rng.IntN(1000000)), 0, 3, uint32(i), body)
			want = append(want, rec{"vrpn", "unknown", int64(len(in)), int64(len(m))})
			in = append(in, m...)
		}
		got := run(t, tcpStream(4500), [2][]byte{in}, seed)
		checkJoined(t, fmt.Sprintf("seed %d", seed), got[0], int64(len(in)), int64(len(noise)), "vrpn", want)
	}
}

// TestInfoIsAFreshValue: changing what a protocol's Info returned changes
// neither a later Info nor the registry.
func TestInfoIsAFreshValue(t *testing.T) {
	protos, err := Protocols(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range protos {
		in := p.Info()
		name := in.Name
		for i := range in.Transports {
			in.Transports[i] = 0
		}
		for i := range in.Ports {
			in.Ports[i].Port = 1
		}
		again := p.Info()
		if again.Name != name || len(again.Transports) == 0 || again.Transports[0] == 0 {
			t.Errorf("%s: Info shares its transports with an earlier result", name)
		}
		for _, port := range again.Ports {
			if port.Port == 1 {
				t.Errorf("%s: Info shares its ports with an earlier result", name)
			}
		}
	}
}
