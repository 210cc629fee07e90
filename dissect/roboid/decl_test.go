package roboid_test

// Every record the decoder emits matches its declaration (Info.Types):
// the records of the shipped capture, of messages of every type built by
// the separate encoder (internal/testenc/roboidenc), and of random
// datagrams. Each test also names the declared types its inputs never
// produce.

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/roboid"
	"github.com/dissect-tools/dissect/internal/testenc/roboidenc"
)

const declRule = "udp.port==7681,roboid"

var (
	declRover = netip.MustParseAddrPort("10.30.0.20:50123")
	declSite  = netip.MustParseAddrPort("10.30.0.1:7681")
	declT0    = time.Date(2024, 4, 18, 10, 0, 0, 0, time.UTC)
)

// A Roboid stream is UDP only (a decode-as rule over TCP is refused), and
// every datagram is one message, so nothing is ever skipped.
const declNeverSkipped = "skipped"

// TestDeclaredCapture runs the shipped Roboid capture through the
// pipeline: every record matches its declaration, and the types decoded
// are exactly those its truth file (written by the encoder) lists.
func TestDeclaredCapture(t *testing.T) {
	seen := dissecttest.CheckCaptures(t, "../../pcaps/roboid_*.pcap*", 1, func(dissecttest.Capture) []dissect.Protocol {
		return []dissect.Protocol{roboid.New()}
	})
	// The capture is one UDP flow captured whole: no gap.
	reg := dissecttest.Registry(t, []string{declRule}, roboid.New())
	if never, want := seen.Never(reg, "roboid"), []string{"gap", declNeverSkipped}; !slices.Equal(never, want) {
		t.Errorf("declared types the capture never produced: %v, want %v", never, want)
	}
}

// declFlow builds datagrams of every message the encoder can build: each
// type, Poses with the spec's data types (typical, size examples as high
// nibbles and as bytes), undefined semantics, no values, an extension
// data type, a value cut short and too short for its ids, an unknown id;
// then, from the encoder's message functions, the other types cut before
// their ids and a Pose past the 1024 values decoded.
func declFlow(t testing.TB) [][]byte {
	t.Helper()
	var f roboidenc.Flow
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	f.Client(0, ms(0))
	f.NetworkID(1, ms(1), 5)
	f.Pose(0, ms(2), 5, 1, roboidenc.SpecTypical()...)
	f.Investigate(1, ms(3), 5, 1)
	f.NewThing(0, ms(4), 5, 1, 7)
	f.ModelURL(0, ms(5), 5, 1, "https://example.org/rover.obj")
	f.Pose(0, ms(6), 5, 1, roboidenc.SpecSyntax()...)
	f.Pose(0, ms(7), 5, 1, roboidenc.SpecLiteral()...)
	f.Pose(0, ms(8), 5, 1, roboidenc.Undefined()...)
	f.Pose(0, ms(9), 5, 1)
	f.PoseExtension(0, ms(10), 5, 1, roboidenc.SpecTypical()[:1], []byte{1, 2})
	f.PoseTruncated(0, ms(11), 5, 1, nil, roboidenc.SpecTypical()[6], 4)
	f.PoseTruncated(0, ms(12), 5, 1, nil, roboidenc.SpecTypical()[0], 0)
	f.PoseShort(0, ms(13))
	f.PoseShort(0, ms(14), 5)
	f.Unknown(0, ms(15), 0x42, []byte{1, 2, 3})
	f.Unknown(1, ms(16), 0xff, nil)
	s, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, d := range s.Datagrams {
		out = append(out, s.Stream[d.Dir][d.Start:d.End])
	}
	many := make([]roboidenc.Value, roboid.MaxValues+1)
	for i := range many {
		many[i] = roboidenc.RawValue(0x01, nil)
	}
	return append(out,
		roboidenc.Msg(roboidenc.IDNetworkID),
		roboidenc.Msg(roboidenc.IDNewThing),
		roboidenc.Msg(roboidenc.IDInvestigate, 5),
		roboidenc.Msg(roboidenc.IDModelURL, 5),
		roboidenc.PoseMsg(5, 1, many...),
	)
}

// declFeed sends each datagram from the rover to the site (a gap of gap
// bytes after the first when gap > 0: a datagram a live capture dropped)
// and returns the records.
func declFeed(t testing.TB, reg *dissect.Registry, dgs [][]byte, gap int64) []*dissect.Record {
	t.Helper()
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.UDP, Addr: [2]netip.AddrPort{declRover, declSite}},
		Name: [2]string{declRover.String(), declSite.String()}}
	var evs []dissecttest.Event
	for i, d := range dgs {
		evs = append(evs, dissecttest.Event{At: declT0, Data: d})
		if i == 0 && gap > 0 {
			evs = append(evs, dissecttest.Event{At: declT0, Gap: gap})
		}
	}
	evs = append(evs, dissecttest.Event{Dir: 0, At: declT0}, dissecttest.Event{Dir: 1, At: declT0})
	recs, _ := dissecttest.Feed(t, reg, info, dissect.StreamOptions{Decode: true}, evs, nil, nil)
	return recs
}

// TestDeclaredEncoder checks the records of the encoder's messages.
func TestDeclaredEncoder(t *testing.T) {
	reg := dissecttest.Registry(t, []string{declRule}, roboid.New())
	recs := declFeed(t, reg, declFlow(t), 12)
	seen := dissecttest.Seen(dissecttest.CheckDeclared(t, reg, recs))

	// The keys a value of a Pose may have, seen together: all of them
	// occur, and only the five that describe the value occur in every one.
	count := map[string]int{}
	values := 0
	for _, r := range recs {
		v, ok := r.Fields.Get("values")
		if r.Type != roboid.TypePose || !ok {
			continue
		}
		for _, it := range v.Items() {
			values++
			for _, f := range it.Value.Items() {
				count[f.Key]++
			}
		}
	}
	i := slices.IndexFunc(reg.Types("roboid"), func(d *dissect.TypeDecl) bool { return d.Type == roboid.TypePose })
	for _, d := range reg.Types("roboid")[i].Field("values").Elem.Fields {
		switch n := count[d.Name]; {
		case n == 0:
			t.Errorf("values[].%s: in no value", d.Name)
		case d.Required != (n == values):
			t.Errorf("values[].%s: in %d of %d values, declared required %v", d.Name, n, values, d.Required)
		}
	}
	if never, want := seen.Never(reg, "roboid"), []string{declNeverSkipped}; !slices.Equal(never, want) {
		t.Errorf("declared types the encoder's messages never produced: %v, want %v", never, want)
	}
}

// TestDeclaredHostile feeds random datagrams: whatever their bytes,
// every record is a declared one.
func TestDeclaredHostile(t *testing.T) {
	reg := dissecttest.Registry(t, []string{declRule}, roboid.New())
	ids := []byte{roboidenc.IDPose, roboidenc.IDClient, roboidenc.IDNetworkID, roboidenc.IDNewThing, roboidenc.IDInvestigate, roboidenc.IDModelURL}
	rng := rand.New(rand.NewPCG(7, 681))
	all := dissecttest.Seen{}
	for i := range 300 {
		var dgs [][]byte
		for range 1 + rng.IntN(8) {
			d := make([]byte, 1+rng.IntN(40))
			for j := range d {
				d[j] = byte(rng.Uint32())
			}
			if rng.IntN(4) != 0 {
				d[0] = ids[rng.IntN(len(ids))]
			}
			dgs = append(dgs, d)
		}
		all.Add(dissecttest.CheckDeclared(t, reg, declFeed(t, reg, dgs, int64(rng.IntN(2)*3))))
		if t.Failed() {
			t.Fatalf("input %d: %x", i, dgs)
		}
	}
	if never, want := all.Never(reg, "roboid"), []string{declNeverSkipped}; !slices.Equal(never, want) {
		t.Errorf("declared types the random datagrams never produced: %v, want %v", never, want)
	}
}

// FuzzDeclared: arbitrary bytes, cut into datagrams by seed, never give a
// record that departs from its declaration.
func FuzzDeclared(f *testing.F) {
	f.Add(slices.Concat(declFlow(f)...), uint64(1))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		reg := dissecttest.Registry(t, []string{declRule}, roboid.New())
		rng := rand.New(rand.NewPCG(seed, 0))
		var dgs [][]byte
		for p := b; len(p) > 0; {
			n := min(len(p), 1+rng.IntN(48))
			dgs, p = append(dgs, p[:n]), p[n:]
		}
		dissecttest.CheckDeclared(t, reg, declFeed(t, reg, dgs, int64(seed%2)))
	})
}
