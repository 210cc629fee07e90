package dissecttest

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Suite is what [Conformance] needs to know of one protocol: how to make
// it, valid conversations from the package's test encoder, and the
// declared types those conversations do not produce.
type Suite struct {
	// New returns a new value of the protocol. It is called for every run,
	// since a protocol value lives for one run.
	New func() dissect.Protocol
	// Valid are conversations of the protocol made by the package's
	// separate test encoder (internal/testenc/...). They are run as they
	// are and mutated; together they must produce every declared type not
	// in NotProduced.
	Valid []Input
	// NotProduced maps the declared types (TypeDecl.Table: the type, or
	// "TYPE.VALUE" for a variant) that no valid input produces to the
	// reason why.
	NotProduced map[string]string
	// Seed seeds the random and mutated inputs, the chunk sizes and the
	// gaps (0: 1). The environment variable DISSECTTEST_SEED, when set,
	// replaces it, to try other inputs: failures print the seed in use.
	Seed uint64
	// Random and Mutated are how many random and mutated inputs are made
	// per transport (0: 64 and 256; a quarter of that with -short).
	Random, Mutated int
	// ChunkedResync, when set, says why the protocol's resynchronisation
	// after malformed bytes depends on where a byte stream is cut (a Sync
	// that accepts a message ending the bytes it holds, say). The records of
	// hostile inputs are then not compared across cuttings; those of the
	// valid inputs still are.
	ChunkedResync string
	// DetectBound is the prefix of a byte stream's first bytes that
	// Detect's verdict may depend on (0: the stream's default MaxDetect,
	// the bytes dissect.Stream holds while it detects).
	DetectBound int
}

// Input is one conversation: the units of one stream, in order.
type Input struct {
	Name string
	// Transport, when set, is the only transport the input is run over;
	// 0 runs it over every transport of the protocol (a datagram's
	// messages then follow each other in a byte stream).
	Transport dissect.Transport
	Units     []Unit
}

// Unit is one call into a dissect.Stream: the bytes of one write (TCP,
// serial) or one datagram (UDP) of direction Dir, or with Data nil and
// Gap > 0 a gap of that many bytes.
type Unit struct {
	Dir  dissect.Dir
	Data []byte
	Gap  int64
}

// Spans returns one unit per piece of a test encoder's session, in order:
// the bytes stream[dir][start:end] of each write or datagram, where span
// says where the piece lies.
func Spans[P any](stream [2][]byte, pieces []P, span func(P) (dir int, start, end int64)) []Unit {
	units := make([]Unit, 0, len(pieces))
	for _, p := range pieces {
		d, start, end := span(p)
		units = append(units, Unit{Dir: dissect.Dir(d), Data: stream[d][start:end]})
	}
	return units
}

// Conformance runs the checks every protocol package passes, over the
// suite's valid inputs and over random and mutated bytes made from the
// seed, on every transport the protocol runs over:
//
//   - the parser contract ([Checked]): no panic, Parse's and Sync's
//     results within their bounds, Detect's verdicts;
//   - Parse and Sync keep nothing of their input: the records of a run
//     whose input buffers are overwritten after each call equal those of
//     a run where the parser is given private copies;
//   - every record is valid against its declaration ([CheckDeclared]),
//     and the valid inputs produce every declared type of the protocol
//     but those listed in NotProduced;
//   - every byte is accounted: the records of each direction tile the
//     bytes given ([CheckTiling]) whether they come whole (a direction in
//     one call), in the input's units, cut into random chunks, with a gap,
//     or as datagrams;
//   - the records depend neither on how a byte stream is cut (under the
//     stream's resynchronisation limit; see ChunkedResync) nor, in type,
//     place and warnings, on Ctx.Decode (a summary run counts the
//     messages with warnings);
//   - Detect looks at a bounded prefix: on a byte stream its verdict on
//     DetectBound bytes stands whatever follows them.
func Conformance(t testing.TB, s Suite) {
	t.Helper()
	c := newChecker(t, s)
	for _, tr := range c.info.Transports {
		valid := c.validFor(tr)
		for _, in := range valid {
			c.runCase(tr, "valid", in, true)
		}
		rng := rand.New(rand.NewPCG(c.seed, uint64(tr)))
		extra := make([]Input, 0, c.random+c.mutated)
		for i := range c.random {
			extra = append(extra, randomInput(rng, tr, i))
		}
		if len(valid) > 0 {
			for i := range c.mutated {
				extra = append(extra, mutate(rng, valid, i))
			}
		}
		for _, in := range extra {
			if c.stopped() {
				return
			}
			c.runCase(tr, "hostile", in, false)
		}
		c.checkDetect(tr, append(valid, extra...), rng)
	}
	c.checkCoverage()
	c.t.Logf("%s: %d streams run over %v, %d records checked against their declarations (seed %d)", c.info.Name, c.runs, c.info.Transports, c.records, c.seed)
}

// checker holds one Conformance call's state.
type checker struct {
	t       testing.TB
	s       Suite
	info    dissect.Info
	seed    uint64
	random  int
	mutated int
	bound   int
	fails   int
	runs    int // streams run
	records int // records checked against their declarations
	// seen counts the records of the valid inputs per declaration table.
	seen map[string]int
	// proto is the protocol the registry forces on every test stream: each
	// run puts a new value of the protocol in it, and how it is checked.
	// Registries are made once, since a protocol's Info may be costly.
	proto *checkedProto
	reg   *dissect.Registry
}

// maxFailures stops a Conformance call: past it, more reports would only
// repeat the first ones.
const maxFailures = 20

func newChecker(t testing.TB, s Suite) *checker {
	t.Helper()
	if s.New == nil {
		t.Fatal("dissecttest.Suite: New is nil")
	}
	p := s.New()
	c := &checker{t: t, s: s, info: p.Info(), seed: s.Seed, random: s.Random, mutated: s.Mutated, bound: s.DetectBound, seen: map[string]int{}}
	c.proto = newChecked(p, c.info, nil, false)
	reg, err := dissect.NewRegistry(c.proto)
	if err != nil {
		t.Fatalf("the protocol's declarations are not well formed: %v", err)
	}
	for _, tr := range c.info.Transports {
		reg.AddRule(dissect.Rule{Transport: tr, Port: c.streamInfo(tr).Addr[1].Port(), Proto: c.proto})
	}
	c.reg = reg
	if env := os.Getenv("DISSECTTEST_SEED"); env != "" {
		v, err := strconv.ParseUint(env, 0, 64)
		if err != nil {
			t.Fatalf("DISSECTTEST_SEED=%q: %v", env, err)
		}
		c.seed = v
	}
	if c.seed == 0 {
		c.seed = 1
	}
	div := 1
	if testing.Short() {
		div = 4
	}
	if c.random == 0 {
		c.random = 64 / div
	}
	if c.mutated == 0 {
		c.mutated = 256 / div
	}
	if c.bound == 0 {
		c.bound = dissect.DefaultLimits().MaxDetect
	}
	if len(s.Valid) == 0 {
		t.Errorf("%s: the suite has no valid inputs", c.info.Name)
	}
	for _, in := range s.Valid {
		if in.Transport != 0 && !slices.Contains(c.info.Transports, in.Transport) {
			t.Errorf("%s: valid input %q is for %s, which the protocol does not run over", c.info.Name, in.Name, in.Transport)
		}
	}
	return c
}

// errorf reports one failure, with the seed that reproduces it.
func (c *checker) errorf(format string, args ...any) {
	c.t.Helper()
	c.fails++
	if c.fails <= maxFailures {
		c.t.Errorf("%s (seed %d): %s", c.info.Name, c.seed, fmt.Sprintf(format, args...))
	}
	if c.fails == maxFailures {
		c.t.Errorf("%s: stopping after %d failures", c.info.Name, maxFailures)
	}
}

func (c *checker) stopped() bool { return c.fails >= maxFailures }

// validFor returns the valid inputs that run over tr.
func (c *checker) validFor(tr dissect.Transport) []Input {
	var out []Input
	for _, in := range c.s.Valid {
		if in.Transport == 0 || in.Transport == tr {
			out = append(out, in)
		}
	}
	return out
}

// runCase runs one input over transport tr in every delivery, and checks
// each run and how runs compare. Records of the valid inputs, delivered in
// their units, count for the coverage of declared types.
func (c *checker) runCase(tr dissect.Transport, class string, in Input, valid bool) {
	rng := rand.New(rand.NewPCG(c.seed, hashName(in.Name)))
	var units *result // the records of the input's own units, for the chunked run
	for _, d := range deliveries(tr) {
		if c.stopped() {
			return
		}
		p := d.plan(in.Units, rng)
		where := fmt.Sprintf("%s %s input %q, delivered %s", tr, class, in.Name, d.name)
		a := c.run(where+" (parser given copies)", tr, p, mode{copies: true})
		b := c.run(where+" (input overwritten after each call)", tr, p, mode{overwrite: true})
		if a == nil || b == nil {
			continue
		}
		t := &prefixTB{TB: c.t, c: c, prefix: where + ": "}
		c.try(where, func() {
			CheckTiling(t, a.recs, p.size(), a.dirOf)
		})
		if diff := diffRuns(a, b); diff != "" {
			c.errorf("%s: the records change when the caller's buffers are overwritten after each call (Parse or Sync keeps its input): %s", where, diff)
		}
		seen := CheckDeclared(t, c.reg, a.recs)
		c.records += len(a.recs)
		switch d.name {
		case inUnits, asDatagrams:
			units = a
			if valid {
				for k, n := range seen {
					c.seen[k] += n
				}
			}
			if nd := c.run(where+" (Decode false)", tr, p, mode{copies: true, noDecode: true}); nd != nil {
				if diff := DiffLines(a.recs, nd.recs); diff != "" {
					c.errorf("%s: with Decode false the records differ in type, place or warnings: %s", where, diff)
				}
			}
		case inChunks:
			if units != nil && (valid || c.s.ChunkedResync == "") && p.longest() <= dissect.DefaultLimits().MaxSync/2 {
				if diff := diffRuns(units, a); diff != "" {
					c.errorf("%s: the records differ from those of the same bytes given in the input's units: %s", where, diff)
				}
			}
		}
	}
}

// result is one pass of a plan through a dissect.Stream.
type result struct {
	recs  []*dissect.Record
	notes []string
	names [2]string
}

// dirOf tells a record's direction by its source.
func (r *result) dirOf(rec *dissect.Record) dissect.Dir {
	if rec.Src == r.names[1] {
		return 1
	}
	return 0
}

// mode says how a run gives the parser its input.
type mode struct {
	copies    bool // the parser gets private copies of its input
	overwrite bool // each unit is in a buffer of its own, overwritten once the call returns
	noDecode  bool // Ctx.Decode is false
}

// run feeds p to a new stream decoding with a new value of the protocol,
// checked by the contract, in mode m. It returns nil when the run failed (reported
// with where).
func (c *checker) run(where string, tr dissect.Transport, p plan, m mode) *result {
	var r *result
	c.try(where, func() {
		fail := func(format string, args ...any) {
			c.errorf("%s: %s", where, fmt.Sprintf(format, args...))
			panic(abortRun{})
		}
		c.proto.Protocol = c.s.New()
		c.proto.k.fail, c.proto.k.copyInput = fail, m.copies
		info := c.streamInfo(tr)
		var sink Collector
		st := dissect.NewStream(info, c.reg, &sink, dissect.StreamOptions{Decode: !m.noDecode})
		at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
		for _, u := range p.steps {
			data := u.Data
			if m.overwrite {
				data = append([]byte(nil), data...)
			}
			switch {
			case u.Gap > 0:
				st.Gap(u.Dir, at, u.Gap)
			case tr == dissect.UDP:
				st.Datagram(u.Dir, at, data)
			default:
				st.Data(u.Dir, at, data)
			}
			if m.overwrite {
				for i := range data {
					data[i] = ^data[i]
				}
			}
			if u.last {
				at = at.Add(time.Millisecond)
			}
		}
		st.End(0, at)
		st.End(1, at)
		if st.Err() != nil {
			fail("the stream stopped: %v", st.Err())
		}
		c.runs++
		r = &result{recs: sink.Records, notes: st.Notes(), names: info.Name}
	})
	return r
}

// try calls f, turning a panic into a failure reported with where; a stop
// already reported (abortRun, abortCheck) ends f quietly.
func (c *checker) try(where string, f func()) {
	defer func() {
		switch x := recover().(type) {
		case nil, abortRun, abortCheck:
		default:
			c.errorf("%s: panic: %v\n%s", where, x, debug.Stack())
		}
	}()
	f()
}

// streamInfo is the stream every run uses on tr: dir 0 from a client port
// to the protocol's default port (or 4000), or a serial link.
func (c *checker) streamInfo(tr dissect.Transport) dissect.StreamInfo {
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: tr}}
	if tr == dissect.Serial {
		info.Link = "/dev/ttyTEST0"
		info.Name = [2]string{"host", info.Link}
		return info
	}
	port := uint16(4000)
	for _, p := range c.info.Ports {
		if p.Transport == tr {
			port = p.Port
			break
		}
	}
	info.Addr = [2]netip.AddrPort{netip.MustParseAddrPort("198.51.100.7:50123"), netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), port)}
	info.Name = [2]string{info.Addr[0].String(), info.Addr[1].String()}
	return info
}

// checkCoverage fails for every declared type of the protocol that the
// valid inputs never produced and NotProduced does not excuse, and for
// every excuse that is stale.
func (c *checker) checkCoverage() {
	c.t.Helper()
	if c.stopped() {
		return
	}
	declared := map[string]bool{}
	for i := range c.info.Types {
		name := c.info.Types[i].Table()
		declared[name] = true
		n := c.seen[c.info.Proto+" "+name]
		why, excused := c.s.NotProduced[name]
		switch {
		case n == 0 && !excused:
			c.errorf("declared type %q is never produced by the valid inputs: add an input that produces it, or list it in Suite.NotProduced with the reason", name)
		case n > 0 && excused:
			c.errorf("declared type %q is listed in Suite.NotProduced (%q) but the valid inputs produce it %d times", name, why, n)
		case excused && strings.TrimSpace(why) == "":
			c.errorf("declared type %q is listed in Suite.NotProduced without a reason", name)
		}
	}
	if len(c.info.Types) == 0 {
		c.errorf("the protocol declares no record type (Info.Types)")
	}
	for name := range c.s.NotProduced {
		if !declared[name] {
			c.errorf("Suite.NotProduced lists %q, which the protocol does not declare", name)
		}
	}
}

// prefixTB reports the failures of the dissecttest checks through the
// checker, prefixed with the run they are about.
type prefixTB struct {
	testing.TB
	c      *checker
	prefix string
}

func (p *prefixTB) Helper() {}

func (p *prefixTB) Errorf(format string, args ...any) {
	p.c.errorf("%s%s", p.prefix, fmt.Sprintf(format, args...))
}

// Fatalf reports like Errorf; the check that called it returns on its
// own after its first departure.
func (p *prefixTB) Fatalf(format string, args ...any) {
	p.c.errorf("%s%s", p.prefix, fmt.Sprintf(format, args...))
	panic(abortCheck{})
}

type abortCheck struct{}

// hashName turns an input's name into a stream of the seed, so that each
// input gets its own chunkings whatever the order of the suite.
func hashName(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}
