package neptune_test

// Every record of both modes matches its declaration (Info.Types of
// neptune and neptune-wiki, which share the proto key "neptune"): the
// records of the shipped captures, of messages of every type built by the
// separate encoder (internal/testenc/neptuneenc), and of random bytes.
// Each test also names the declared types its inputs never produce.

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/neptune"
	"github.com/dissect-tools/dissect/internal/testenc/neptuneenc"
)

const (
	declDeviceRule = "tcp.port==1493,neptune"
	declWikiRule   = "udp.port==9000,neptune-wiki"
)

var (
	declHost = netip.MustParseAddrPort("192.168.0.10:49731")
	declROV  = netip.MustParseAddrPort("192.168.0.177:1493")
	declWiki = netip.MustParseAddrPort("192.168.0.177:9000")
	declT0   = time.Date(2016, 4, 15, 12, 0, 0, 0, time.UTC)
)

// declRegistry returns a registry of both modes (the wiki's int width as
// given) with both decode-as rules.
func declRegistry(t testing.TB, int16 bool) *dissect.Registry {
	t.Helper()
	return dissecttest.Registry(t, []string{declDeviceRule, declWikiRule},
		neptune.New(), neptune.NewWiki(neptune.WikiOptions{Int16: int16}))
}

// TestDeclaredTypesOnce checks how the two modes share the proto key:
// unknown, the one type both modes emit, is declared alike by both (the
// registry takes a type declared identically by two protocols of one key
// once), and the registry of all protocols accepts them.
func TestDeclaredTypesOnce(t *testing.T) {
	tables := func(p dissect.Protocol) []string {
		var out []string
		for _, d := range p.Info().Types {
			out = append(out, d.Table())
		}
		return out
	}
	if got, want := tables(neptune.New()), []string{"abort", "set_motor", "translate", "rotate", "stabilize", "lamp", "unknown"}; !slices.Equal(got, want) {
		t.Errorf("neptune declares %v, want %v", got, want)
	}
	if got, want := tables(neptune.NewWiki(neptune.WikiOptions{})), []string{"speed_motor", "position_motor", "relay", "sensor_data", "unknown"}; !slices.Equal(got, want) {
		t.Errorf("neptune-wiki declares %v, want %v", got, want)
	}
	declRegistry(t, false) // fails t if the registry refuses them
}

// TestDeclaredCaptures runs every shipped Neptune capture through the
// pipeline: every record matches its declaration, and the types decoded
// are exactly those its truth file (written by the encoder) lists.
func TestDeclaredCaptures(t *testing.T) {
	seen := dissecttest.CheckCaptures(t, "../../pcaps/neptune_*.pcap*", 3, func(c dissecttest.Capture) []dissect.Protocol {
		return []dissect.Protocol{neptune.New(), neptune.NewWiki(neptune.WikiOptions{Int16: c.NeptuneInt16})}
	})
	// No shipped Neptune capture lost bytes: the ROV's TCP stream is
	// captured whole and the wiki's datagrams need no reassembly.
	if never, want := seen.Never(declRegistry(t, false), "neptune"), []string{"gap"}; !slices.Equal(never, want) {
		t.Errorf("declared types no capture produced: %v, want %v", never, want)
	}
}

// declDevice is a pilot's stream holding every message the encoder can
// build: each type, the forms the device ignores but the decoder still
// types (a length that does not fit, a length of 0, an unknown type, an
// abort with arguments, an axis or motor out of range) and the ones it
// skips (a length of 100 or more, a message cut by the end of the stream).
func declDevice(t testing.TB) *neptuneenc.DeviceSession {
	t.Helper()
	var p neptuneenc.Pilot
	p.Write(0, func(b *neptuneenc.Builder) {
		b.Lamp(1)
		b.Stabilize(1)
		b.SetMotor(0, 0, 200)
		b.SetMotor(5, 1, 0)
		b.SetMotor(9, 0, 128)
		b.Translate(0, 1)
		b.Translate(3, 0)
		b.Rotate(2, 0)
		b.Abort()
		b.AbortArgs(1, 2, 3)
	})
	p.Write(time.Millisecond, func(b *neptuneenc.Builder) {
		b.WrongLength(1)       // set_motor with no argument
		b.WrongLength(1, 2, 0) // set_motor without its magnitude
		b.WrongLength(2, 1)    // translate without its sign
		b.WrongLength(3)       // rotate with no argument
		b.WrongLength(4)       // stabilize with no argument
		b.WrongLength(5, 1, 0) // lamp with an extra byte
		b.ZeroLength()
		b.Unknown(9, 0x12, 0x34)
		b.Garbage([]byte{0xc8, 0xff, 0x81})
		b.Lamp(0)
		b.Stabilize(0)
		b.SetMotor(1, 1, 255)
		b.Truncated(neptuneenc.SetMotor(2, 0, 1), 2)
	})
	s, err := p.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// declWikiSession is a wiki flow holding every packet the encoder can
// build, with the given int width: each type, an unknown type with a body
// and one datagram of a lone unknown type byte, a body cut short, extra
// bytes, a bool byte of 2, and datagrams shorter than the header.
func declWikiSession(t testing.TB, w neptuneenc.IntWidth) *neptuneenc.WikiSession {
	t.Helper()
	f := neptuneenc.WikiFlow{W: neptuneenc.Wiki{Int: w}}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	f.Relay(ms(0), 1, 250, 1, true)
	f.SpeedMotor(ms(1), 0, 251, 0, true, 0.75, -1)
	f.PositionMotor(ms(2), 2, 252, 6, -42.5, 0.5)
	f.SensorData(ms(3), 0, 253, 1, 0, []byte{1, 2, 3, 4})
	f.SensorData(ms(4), 0, 254, 2, 3, nil)
	f.Unknown(ms(5), 7, 3, 255, []byte{0xde, 0xad})
	f.Unknown(ms(6), 0, 3, 0, nil)
	f.Cut(ms(7), 1, 1, 2, false, 0.25, 10, 3)
	f.Cut(ms(8), 1, 2, 2, false, 0.25, 10, 0)
	f.Extra(ms(9), 1, 3, 1, false, []byte{9, 9})
	f.RelayByte(ms(10), 1, 4, 1, 2)
	f.ShortHeader(ms(11), 1)
	f.ShortHeader(ms(12), 4, 7)
	f.ShortHeader(ms(13), 9)
	s, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// declFeedDevice feeds the host's bytes as direction 0 of a TCP stream to
// the ROV, in chunks drawn from rng (nil: whole), with a gap of gap bytes
// before byte gapAt when gap > 0.
func declFeedDevice(t testing.TB, reg *dissect.Registry, b []byte, rng *rand.Rand, gapAt, gap int) []*dissect.Record {
	t.Helper()
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP, Addr: [2]netip.AddrPort{declHost, declROV}},
		Name: [2]string{declHost.String(), declROV.String()}}
	var sink dissecttest.Collector
	st := dissect.NewStream(info, reg, &sink, dissect.StreamOptions{Decode: true})
	if gap > 0 && gapAt < len(b) {
		dissecttest.Data(st, 0, declT0, b[:gapAt], rng, []int{1, 3, 64})
		st.Gap(0, declT0, int64(gap))
		b = b[gapAt:]
	}
	dissecttest.Data(st, 0, declT0, b, rng, []int{1, 3, 64})
	st.End(0, declT0)
	st.End(1, declT0)
	if st.Err() != nil {
		t.Fatal(st.Err())
	}
	return sink.Records
}

// declFeedWiki sends each datagram to the ROV's wiki port.
func declFeedWiki(t testing.TB, reg *dissect.Registry, dgs [][]byte) []*dissect.Record {
	t.Helper()
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 2, Transport: dissect.UDP, Addr: [2]netip.AddrPort{declHost, declWiki}},
		Name: [2]string{declHost.String(), declWiki.String()}}
	var evs []dissecttest.Event
	for _, d := range dgs {
		evs = append(evs, dissecttest.Event{At: declT0, Data: d})
	}
	evs = append(evs, dissecttest.Event{Dir: 0, At: declT0}, dissecttest.Event{Dir: 1, At: declT0})
	recs, _ := dissecttest.Feed(t, reg, info, dissect.StreamOptions{Decode: true}, evs, nil, nil)
	return recs
}

func declDatagrams(s *neptuneenc.WikiSession) [][]byte {
	var out [][]byte
	for _, d := range s.Datagrams {
		out = append(out, s.Stream[d.Start:d.End])
	}
	return out
}

// keySet returns the keys of r's fields, joined by commas.
func keySet(r *dissect.Record) string {
	var ks []string
	for _, f := range r.Fields {
		ks = append(ks, f.Key)
	}
	return strings.Join(ks, ",")
}

// TestDeclaredEncoder checks the records of the encoder's device stream
// (whole, byte by byte, and with a gap) and wiki flows (both int widths).
func TestDeclaredEncoder(t *testing.T) {
	dev := declDevice(t)
	all := dissecttest.Seen{}
	var unknowns []string
	for _, int16 := range []bool{false, true} {
		reg := declRegistry(t, int16)
		w := neptuneenc.Int32
		if int16 {
			w = neptuneenc.Int16
		}
		recs := declFeedDevice(t, reg, dev.Stream, nil, 0, 0)
		recs = append(recs, declFeedDevice(t, reg, dev.Stream, rand.New(rand.NewPCG(3, 4)), 7, 5)...)
		recs = append(recs, declFeedWiki(t, reg, declDatagrams(declWikiSession(t, w)))...)
		all.Add(dissecttest.CheckDeclared(t, reg, recs))
		for _, r := range recs {
			if r.Type == "unknown" && !slices.Contains(unknowns, keySet(r)) {
				unknowns = append(unknowns, keySet(r))
			}
		}
	}
	// unknown, declared once for both modes, has all the shapes that
	// make none of its fields required: the device's (a length 0 or an
	// unknown type), the wiki's, and a wiki datagram of one byte.
	slices.Sort(unknowns)
	if want := []string{"", "data", "priority,sequence,data"}; !slices.Equal(unknowns, want) {
		t.Errorf("unknown records have the keys %q, want %q", unknowns, want)
	}
	if never := all.Never(declRegistry(t, false), "neptune"); len(never) != 0 {
		t.Errorf("declared types the encoder's messages never produced: %v, want none", never)
	}
}

// TestDeclaredHostile feeds random bytes to both modes, in random chunks
// and datagrams: whatever the bytes, every record is a declared one.
func TestDeclaredHostile(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 93))
	all := dissecttest.Seen{}
	var reg *dissect.Registry
	for i := range 300 {
		reg = declRegistry(t, i%2 == 1)
		b := declRandom(rng, rng.IntN(300))
		recs := declFeedDevice(t, reg, b, rng, rng.IntN(len(b)+1), rng.IntN(2)*5)
		var dgs [][]byte
		for p := b; len(p) > 0; {
			n := min(len(p), 1+rng.IntN(24))
			dgs, p = append(dgs, p[:n]), p[n:]
		}
		recs = append(recs, declFeedWiki(t, reg, dgs)...)
		all.Add(dissecttest.CheckDeclared(t, reg, recs))
		if t.Failed() {
			t.Fatalf("input %d: %x", i, b)
		}
	}
	// With fixed seeds, the random bytes reach every type.
	if never := all.Never(reg, "neptune"); len(never) != 0 {
		t.Errorf("declared types the random inputs never produced: %v, want none", never)
	}
}

// declRandom returns n random bytes, half of them small (lengths and type
// bytes 0-9) so that messages frame and decode often.
func declRandom(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		if rng.IntN(2) == 0 {
			b[i] = byte(rng.IntN(10))
		} else {
			b[i] = byte(rng.Uint32())
		}
	}
	return b
}

// FuzzDeclared: arbitrary bytes, as a device stream and cut into wiki
// datagrams by seed, never give a record that departs from its
// declaration.
func FuzzDeclared(f *testing.F) {
	f.Add(declDevice(f).Stream, uint64(1))
	f.Add(declWikiSession(f, neptuneenc.Int32).Stream, uint64(2))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 0))
		reg := declRegistry(t, seed&1 != 0)
		recs := declFeedDevice(t, reg, b, rng, int(seed%97), int(seed%2)*5)
		var dgs [][]byte
		for p := b; len(p) > 0; {
			n := min(len(p), 1+rng.IntN(24))
			dgs, p = append(dgs, p[:n]), p[n:]
		}
		recs = append(recs, declFeedWiki(t, reg, dgs)...)
		dissecttest.CheckDeclared(t, reg, recs)
	})
}
