package dissect_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/pipeline"
	"github.com/dissect-tools/dissect/reassembly"
)

// rawRec is a record as a raw test keeps it: the keys that place it and a
// copy of its Raw.
type rawRec struct {
	typ          string
	off, length  int64
	raw          []byte
	hadRaw       bool
	reasonPrefix string
}

// dirKey names a direction of a stream as records do.
type dirKey struct {
	stream int
	src    string
}

// rawSink keeps every record's Raw per direction and checks, as each
// record comes, that Raw has Length bytes (none for a gap).
type rawSink struct {
	t    *testing.T
	name string
	recs map[dirKey][]rawRec
}

func (s *rawSink) Record(r *dissect.Record) error {
	rr := rawRec{typ: r.Type, off: r.Offset, length: r.Length, raw: bytes.Clone(r.Raw), hadRaw: r.Raw != nil}
	if v, ok := r.Fields.Get("reason"); ok {
		rr.reasonPrefix = v.Str()
	}
	switch {
	case r.Type == dissect.TypeGap && len(r.Raw) != 0:
		s.t.Errorf("%s: stream %d %s: gap at %d carries %d raw bytes", s.name, r.Stream, r.Src, r.Offset, len(r.Raw))
	case r.Type != dissect.TypeGap && int64(len(r.Raw)) != r.Length:
		s.t.Errorf("%s: stream %d %s: %s at %d: Length %d but %d raw bytes", s.name, r.Stream, r.Src, r.Type, r.Offset, r.Length, len(r.Raw))
	}
	k := dirKey{r.Stream, r.Src}
	s.recs[k] = append(s.recs[k], rr)
	return nil
}

// check compares, per direction, the records with want: the records tile
// the direction from offset 0, and the Raw of its non-gap records, in
// offset order, is exactly want's bytes, and each gap where want has one.
func (s *rawSink) check(want map[dirKey]*wireDir) {
	s.t.Helper()
	for k, recs := range s.recs {
		w := want[k]
		if w == nil {
			s.t.Errorf("%s: stream %d %s: records for a direction not seen", s.name, k.stream, k.src)
			continue
		}
		slices.SortStableFunc(recs, func(a, b rawRec) int { return int(a.off - b.off) })
		var got []byte
		var gaps [][2]int64
		next := int64(0)
		for _, r := range recs {
			if r.off != next {
				s.t.Errorf("%s: stream %d %s: %s at %d, want offset %d (records must tile)", s.name, k.stream, k.src, r.typ, r.off, next)
			}
			next = r.off + r.length
			if r.typ == dissect.TypeGap {
				gaps = append(gaps, [2]int64{r.off, r.length})
				continue
			}
			got = append(got, r.raw...)
		}
		if !bytes.Equal(got, w.data) {
			s.t.Errorf("%s: stream %d %s: raw bytes of the records differ from the direction's bytes (%d vs %d bytes)", s.name, k.stream, k.src, len(got), len(w.data))
		}
		if !slices.Equal(gaps, w.gaps) {
			s.t.Errorf("%s: stream %d %s: gaps %v, want %v", s.name, k.stream, k.src, gaps, w.gaps)
		}
	}
	for k, w := range want {
		if len(w.data) > 0 && len(s.recs[k]) == 0 {
			s.t.Errorf("%s: stream %d %s: %d bytes but no record", s.name, k.stream, k.src, len(w.data))
		}
	}
}

// wireDir is what a direction carried: its bytes, gaps left out, and its
// gaps as (offset, length).
type wireDir struct {
	data []byte
	gaps [][2]int64
	off  int64
}

func (w *wireDir) add(b []byte) {
	w.data = append(w.data, b...)
	w.off += int64(len(b))
}

func (w *wireDir) gap(n int64) {
	w.gaps = append(w.gaps, [2]int64{w.off, n})
	w.off += n
}

// wire is a reassembly.Handler that keeps every direction's bytes: the
// reference the records' Raw is compared with, got from the reassembly
// package directly, without dissect.
type wire map[dirKey]*wireDir

func (w wire) dir(s *reassembly.Stream, dir reassembly.Dir) *wireDir {
	var src string
	switch {
	case s.Transport == reassembly.Serial && dir == 0:
		src = "host"
	case s.Transport == reassembly.Serial:
		src = s.Link
	case s.Addr[dir].IsValid():
		src = s.Addr[dir].String()
	}
	k := dirKey{s.ID, src}
	if w[k] == nil {
		w[k] = &wireDir{}
	}
	return w[k]
}

func (w wire) Open(*reassembly.Stream, reassembly.Stamp) {}
func (w wire) Data(s *reassembly.Stream, d reassembly.Dir, _ reassembly.Stamp, b []byte) {
	w.dir(s, d).add(b)
}
func (w wire) Datagram(s *reassembly.Stream, d reassembly.Dir, _ reassembly.Stamp, b []byte) {
	w.dir(s, d).add(b)
}
func (w wire) Gap(s *reassembly.Stream, d reassembly.Dir, _ reassembly.Stamp, n int64) {
	w.dir(s, d).gap(n)
}
func (w wire) Conflict(*reassembly.Stream, reassembly.Dir, time.Time, int64, int64) {}
func (w wire) Close(*reassembly.Stream, reassembly.Dir, reassembly.Stamp)           {}

// reassemble reads the capture files and returns every direction's bytes.
func reassemble(t *testing.T, files []string) wire {
	t.Helper()
	w := wire{}
	asm := reassembly.New(w, reassembly.Config{})
	var last time.Time
	for _, f := range files {
		src, err := capture.OpenFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			p, err := src.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			last = p.Time
			asm.Packet(p)
		}
		if c, ok := src.(io.Closer); ok {
			c.Close()
		}
	}
	asm.Flush(last)
	return w
}

// TestRawShippedCaptures runs every shipped capture (pcaps/,
// dissect/vrpn/testdata/), with the decode-as rule and options of its
// truth file, through the pipeline with Raw on: every record but a gap
// carries Length bytes, and the Raw of each direction's records, in
// offset order, is exactly the bytes that the reassembly package, run on
// its own, gives for that direction.
func TestRawShippedCaptures(t *testing.T) {
	caps := dissecttest.Captures(t, "../pcaps/*.pcap*", "vrpn/testdata/*.pcap*")
	if len(caps) < 15 {
		t.Fatalf("found only %d captures", len(caps))
	}
	for _, c := range caps {
		t.Run(c.Name(), func(t *testing.T) {
			protos, err := all.Protocols(all.Options{NeptuneInt16: c.NeptuneInt16})
			if err != nil {
				t.Fatal(err)
			}
			reg := dissecttest.Registry(t, c.Rules(), protos...)
			sink := &rawSink{t: t, name: c.Name(), recs: map[dirKey][]rawRec{}}
			if _, err := pipeline.Run(context.Background(), pipeline.NewFiles([]string{c.Path}, nil), pipeline.Config{Registry: reg, Sink: sink, Raw: true}); err != nil {
				t.Fatal(err)
			}
			sink.check(reassemble(t, []string{c.Path}))
		})
	}
}

// TestRawOffSetsNothing: without Raw no record carries bytes.
func TestRawOffSetsNothing(t *testing.T) {
	reg, err := all.Registry(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sink := dissect.SinkFunc(func(r *dissect.Record) error {
		n++
		if r.Raw != nil {
			t.Errorf("%s at %d: Raw set without Raw", r.Type, r.Offset)
		}
		return nil
	})
	if _, err := pipeline.Run(context.Background(), pipeline.NewFiles([]string{"vrpn/testdata/b_udp_tcp.pcap"}, nil), pipeline.Config{Registry: reg, Sink: sink}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no record")
	}
}

// rawHuntToy is the toy protocol with content detection, so a TCP stream of
// unknown protocol hunts for its sync points.
type rawHuntToy struct{ toy }

func (h *rawHuntToy) Info() dissect.Info {
	in := h.toy.Info()
	in.Name, in.Proto, in.Detection = "rawhunttoy", "rawhunttoy", "a direction starting with \\x03TOY"
	return in
}

// toyDirection builds a random direction of toy traffic: whole messages,
// garbage, oversize messages (0xFE, a 4-byte length, the body) and gaps.
// It returns the units to feed: data (gap 0) or a gap of n bytes.
func toyDirection(rng *rand.Rand, udp bool) (units []struct {
	data []byte
	gap  int64
}) {
	add := func(b []byte) {
		units = append(units, struct {
			data []byte
			gap  int64
		}{data: b})
	}
	if rng.Intn(2) == 0 {
		add([]byte("\x03TOY"))
	}
	for range 10 + rng.Intn(60) {
		var b []byte
		switch k := rng.Intn(20); {
		case k < 12:
			l := 1 + rng.Intn(toyMax)
			b = append([]byte{byte(l)}, make([]byte, l)...)
			rng.Read(b[1:])
		case k < 16:
			b = make([]byte, 1+rng.Intn(90))
			rng.Read(b)
		case k < 18 && !udp:
			n := 100 + rng.Intn(400)
			b = append([]byte{0xFE, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, make([]byte, n)...)
			rng.Read(b[5:])
		case k < 19:
			units = append(units, struct {
				data []byte
				gap  int64
			}{gap: int64(1 + rng.Intn(50))})
			continue
		default:
			b = []byte{3, 'a', 'b', 'c'}
		}
		add(b)
	}
	return units
}

// TestRawRandomStreams feeds random toy traffic (whole messages, garbage,
// oversize messages, gaps; cut into random segments, or as datagrams)
// through streams with Raw on, with a decode-as rule, by detection and by
// the hunt, under small limits: every record but a gap carries Length
// bytes, and each direction's Raw, in offset order, is exactly its bytes.
// With limits too large to cut anything, the records are those of the same
// run without Raw.
func TestRawRandomStreams(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for trial := range 400 {
		udp := trial%4 == 3
		rule := trial%3 == 0
		small := trial%2 == 0
		info := tcpInfo(7000)
		if udp {
			info.Transport = dissect.UDP
		}
		var lim dissect.Limits
		if small {
			lim = dissect.Limits{MaxMessage: 64 + rng.Intn(64), MaxSync: 32, MaxDetect: 48}
		}
		reg, err := dissect.NewRegistry(&rawHuntToy{})
		if err != nil {
			t.Fatal(err)
		}
		if rule {
			r, err := reg.ParseDecodeAs("tcp.port==7000,rawhunttoy")
			if udp {
				r, err = reg.ParseDecodeAs("udp.port==7000,rawhunttoy")
			}
			if err != nil {
				t.Fatal(err)
			}
			reg.AddRule(r)
		}
		var dirs [2][]struct {
			data []byte
			gap  int64
		}
		for d := range dirs {
			dirs[d] = toyDirection(rng, udp)
		}
		// the feeding order: random interleaving, random segments
		type step struct {
			dir  dissect.Dir
			data []byte
			gap  int64
		}
		var steps []step
		pos := [2]int{}
		for pos[0] < len(dirs[0]) || pos[1] < len(dirs[1]) {
			d := rng.Intn(2)
			if pos[d] == len(dirs[d]) {
				d ^= 1
			}
			u := dirs[d][pos[d]]
			pos[d]++
			if u.gap > 0 || udp {
				steps = append(steps, step{dir: dissect.Dir(d), data: u.data, gap: u.gap})
				continue
			}
			for b := u.data; len(b) > 0; {
				n := min(len(b), 1+rng.Intn(40))
				steps = append(steps, step{dir: dissect.Dir(d), data: b[:n]})
				b = b[n:]
			}
		}
		runStream := func(raw bool, sink dissect.Sink) {
			st := dissect.NewStream(info, reg, sink, dissect.StreamOptions{Limits: lim, Decode: true, Raw: raw})
			t0 := time.Unix(1, 0)
			for _, s := range steps {
				switch {
				case s.gap > 0:
					st.Gap(s.dir, t0, s.gap)
				case udp:
					st.Datagram(s.dir, t0, s.data)
				default:
					st.Data(s.dir, t0, s.data)
				}
			}
			st.End(0, t0)
			st.End(1, t0)
		}
		sink := &rawSink{t: t, name: "trial " + string(rune('0'+trial%10)), recs: map[dirKey][]rawRec{}}
		runStream(true, sink)
		want := map[dirKey]*wireDir{}
		for d, us := range dirs {
			w := &wireDir{}
			for _, u := range us {
				if u.gap > 0 {
					w.gap(u.gap)
				} else {
					w.add(u.data)
				}
			}
			want[dirKey{0, info.Name[d]}] = w
		}
		sink.check(want)
		if t.Failed() {
			t.Fatalf("trial %d (udp %v, rule %v, small limits %v) failed", trial, udp, rule, small)
		}
		if small {
			// Records are cut to bound memory: at most MaxMessage bytes
			// plus the unit that crossed it.
			for k, recs := range sink.recs {
				for _, r := range recs {
					if r.typ == dissect.TypeSkipped && r.length >= int64(lim.MaxMessage)+500 {
						t.Errorf("trial %d: %s: skipped record of %d bytes at %d, limit %d", trial, k.src, r.length, r.off, lim.MaxMessage)
					}
				}
			}
			continue
		}
		plain := &rawSink{t: t, recs: map[dirKey][]rawRec{}}
		runStream(false, dissect.SinkFunc(func(r *dissect.Record) error {
			if r.Raw != nil {
				t.Errorf("trial %d: Raw set without Raw", trial)
			}
			k := dirKey{r.Stream, r.Src}
			plain.recs[k] = append(plain.recs[k], rawRec{typ: r.Type, off: r.Offset, length: r.Length})
			return nil
		}))
		for k, recs := range sink.recs {
			p := plain.recs[k]
			if len(p) != len(recs) {
				t.Fatalf("trial %d: %s: %d records with Raw, %d without", trial, k.src, len(recs), len(p))
			}
			for i := range p {
				if p[i].typ != recs[i].typ || p[i].off != recs[i].off || p[i].length != recs[i].length {
					t.Fatalf("trial %d: %s: record %d: %+v with Raw, %+v without", trial, k.src, i, recs[i], p[i])
				}
			}
		}
	}
}

// TestRawCutsLongRuns: with Raw, an unknown stream's bytes and an
// oversize message are cut into skipped records of about MaxMessage
// bytes, which together carry every byte.
func TestRawCutsLongRuns(t *testing.T) {
	reg, err := dissect.NewRegistry(&toy{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1, 0)
	lim := dissect.Limits{MaxMessage: 1000}
	var recs []rawRec
	sink := dissect.SinkFunc(func(r *dissect.Record) error {
		recs = append(recs, rawRec{typ: r.Type, off: r.Offset, length: r.Length, raw: bytes.Clone(r.Raw)})
		return nil
	})
	// unknown protocol: 10 000 bytes of zeros in 100-byte segments
	info := dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP, Addr: [2]netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2")}}, Name: [2]string{"a", "b"}}
	st := dissect.NewStream(info, reg, sink, dissect.StreamOptions{Limits: lim, Raw: true})
	for range 100 {
		st.Data(0, t0, make([]byte, 100))
	}
	st.End(0, t0)
	st.End(1, t0)
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10 of 1000 bytes", len(recs))
	}
	for i, r := range recs {
		if r.typ != dissect.TypeSkipped || r.off != int64(i)*1000 || r.length != 1000 || len(r.raw) != 1000 {
			t.Errorf("record %d: %s at %d, %d bytes (%d raw), want skipped at %d, 1000", i, r.typ, r.off, r.length, len(r.raw), i*1000)
		}
	}

	// an oversize message of 2505 bytes, then a message
	recs = nil
	r, err := reg.ParseDecodeAs("tcp.port==7000,toy")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(r)
	st = dissect.NewStream(tcpInfo(7000), reg, sink, dissect.StreamOptions{Limits: lim, Raw: true})
	msg := append([]byte{0xFE, 0, 0, 9, 196}, bytes.Repeat([]byte{7}, 2500)...)
	msg = append(msg, 3, 'a', 'b', 'c')
	for b := msg; len(b) > 0; {
		n := min(len(b), 300)
		st.Data(0, t0, b[:n])
		b = b[n:]
	}
	st.End(0, t0)
	st.End(1, t0)
	var got []byte
	for i, r := range recs {
		if int64(len(r.raw)) != r.length {
			t.Errorf("record %d: %d raw bytes, Length %d", i, len(r.raw), r.length)
		}
		got = append(got, r.raw...)
	}
	if !bytes.Equal(got, msg) {
		t.Errorf("raw bytes differ from the input")
	}
	if len(recs) != 4 || recs[3].typ != "msg" || recs[0].length != 1200 {
		for _, r := range recs {
			t.Logf("%s at %d, %d bytes", r.typ, r.off, r.length)
		}
		t.Errorf("want 3 skipped records (1200, 1200, 105 bytes) and the message")
	}
}
