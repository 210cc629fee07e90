// Package dissecttest holds test support shared by the dissector packages'
// tests: the conformance harness every protocol runs ([Conformance]) and
// the parser contract it checks ([Checked]); a parser session for direct
// Parse calls; a sink that keeps records and a feeder that cuts data into
// random chunks; byte-accounting, field and declaration checks;
// registries with decode-as rules; the shipped captures with what their
// truth sidecars say, and runs of a capture through the pipeline; and
// text renderings of records and values for failure messages.
//
// It is imported only from _test.go files.
package dissecttest

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// Hex decodes hex digits written with optional spaces, panicking on bad
// input (test vectors are constants).
func Hex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// Cat returns the concatenation of parts in a new slice.
func Cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// CheckWarnings fails t unless got holds exactly one warning per entry of
// want, in order, each containing its want substring.
func CheckWarnings(t testing.TB, got []string, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("warnings: got %q, want %d matching %q", got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %d: %q does not contain %q", i, got[i], want[i])
		}
	}
}

// CheckFields fails t unless got holds exactly the fields want, in order,
// each value equal ([dissect.Value.Equal]) to its want; the message shows
// both.
func CheckFields(t testing.TB, got dissect.Fields, want ...dissect.Field) {
	t.Helper()
	if g, w := dissect.Object(got), dissect.Object(want); !g.Equal(w) {
		t.Errorf("fields:\n got  %s\n want %s", DescribeValue(g), DescribeValue(w))
	}
}

// Session is one parser with its context, for tests that call Parse and
// Sync directly.
type Session struct {
	P    dissect.Parser
	Info dissect.StreamInfo
	Rec  dissect.Record
	Ctx  dissect.Ctx
}

// NewSession returns a session holding a new parser of p for the stream
// info, whose Ctx decodes fields when decode is set.
func NewSession(p dissect.Protocol, info dissect.StreamInfo, decode bool) *Session {
	s := &Session{Info: info}
	s.P = p.NewParser(&s.Info)
	s.Ctx = dissect.Ctx{Stream: &s.Info, Decode: decode, Rec: &s.Rec}
	return s
}

// Parse empties the record and parses b as direction dir.
func (s *Session) Parse(dir dissect.Dir, b []byte) (int, error) {
	s.Rec.Reset()
	s.Ctx.Dir = dir
	return s.P.Parse(&s.Ctx, b)
}

// Event is one call into a dissect.Stream, for [Feed]: Data of direction
// Dir at time At (a datagram on UDP, where a non-nil empty Data is an
// empty datagram); with Data nil, a gap of Gap bytes, or when Gap is 0 the
// end of the direction.
type Event struct {
	Dir  dissect.Dir
	At   time.Time
	Data []byte
	Gap  int64
}

// Feed gives evs to a new stream (info, reg, opt) and returns the records
// it sent and its notes. On a byte stream the data of each event is cut
// as [Data] cuts it (rng nil: in one call). It fails t when the stream
// stops on an error.
func Feed(t testing.TB, reg *dissect.Registry, info dissect.StreamInfo, opt dissect.StreamOptions, evs []Event, rng *rand.Rand, sizes []int) ([]*dissect.Record, []string) {
	t.Helper()
	var sink Collector
	st := dissect.NewStream(info, reg, &sink, opt)
	for _, e := range evs {
		switch {
		case e.Data != nil && info.Transport == dissect.UDP:
			st.Datagram(e.Dir, e.At, e.Data)
		case e.Data != nil:
			Data(st, e.Dir, e.At, e.Data, rng, sizes)
		case e.Gap > 0:
			st.Gap(e.Dir, e.At, e.Gap)
		default:
			st.End(e.Dir, e.At)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return sink.Records, st.Notes()
}

// Collector is a dissect.Sink keeping a deep copy of every record.
type Collector struct {
	Records []*dissect.Record
}

// Record stores a clone of r.
func (c *Collector) Record(r *dissect.Record) error {
	c.Records = append(c.Records, r.Clone())
	return nil
}

// From returns the collected records sent by src, in order.
func (c *Collector) From(src string) []*dissect.Record {
	var out []*dissect.Record
	for _, r := range c.Records {
		if r.Src == src {
			out = append(out, r)
		}
	}
	return out
}

// Registry returns a registry of protos with the given decode-as rules
// (e.g. "tcp.port==4000,deltarobot") added in order, failing t on any error.
func Registry(t testing.TB, rules []string, protos ...dissect.Protocol) *dissect.Registry {
	t.Helper()
	reg, err := dissect.NewRegistry(protos...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rules {
		rule, err := reg.ParseDecodeAs(s)
		if err != nil {
			t.Fatal(err)
		}
		reg.AddRule(rule)
	}
	return reg
}

// Data feeds b to st as byte-stream data of dir at time at. With rng nil b
// goes in one call; otherwise it is cut into chunks, each at most
// 1+rng.IntN(m) bytes for m drawn at random from sizes.
func Data(st *dissect.Stream, dir dissect.Dir, at time.Time, b []byte, rng *rand.Rand, sizes []int) {
	for len(b) > 0 {
		n := len(b)
		if rng != nil {
			n = min(n, 1+rng.IntN(sizes[rng.IntN(len(sizes))]))
		}
		st.Data(dir, at, b[:n])
		b = b[n:]
	}
}

// CheckTiling fails t unless the records of each direction (as told by
// dirOf) follow each other without hole or overlap, each at least one byte
// long, and together cover [0, size[d]) of direction d.
func CheckTiling(t testing.TB, recs []*dissect.Record, size [2]int64, dirOf func(*dissect.Record) dissect.Dir) {
	t.Helper()
	var end [2]int64
	for i, r := range recs {
		d := dirOf(r)
		if r.Offset != end[d] || r.Length <= 0 {
			t.Fatalf("record %d (%s dir %d): offset %d length %d, want offset %d", i, r.Type, d, r.Offset, r.Length, end[d])
		}
		end[d] += r.Length
	}
	if end != size {
		t.Fatalf("records cover %v bytes, want %v", end, size)
	}
}

// Array returns the array value of vs, in order: expected values in
// tests.
func Array(vs ...dissect.Value) dissect.Value {
	items := make([]dissect.Field, len(vs))
	for i, v := range vs {
		items[i] = dissect.Elem(v)
	}
	return dissect.Array(items)
}

// CountFields returns how many fields v holds, nested ones included: the
// bound fuzz targets put on what a record of n bytes may hold.
func CountFields(v dissect.Value) int {
	n := 0
	for _, f := range v.Items() {
		n += 1 + CountFields(f.Value)
	}
	return n
}

// DescribeRecord renders a record's type, offset, length, fields and
// warnings on one line, for failure messages.
func DescribeRecord(r *dissect.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%d+%d {", r.Type, r.Offset, r.Length)
	for i, f := range r.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", f.Key, DescribeValue(f.Value))
	}
	b.WriteString("}")
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, " warnings %q", r.Warnings)
	}
	return b.String()
}

// DescribeValue renders a value as JSON-like text for failure messages.
// Unsigned integers carry a "u" suffix and byte strings a "0x" prefix, so
// that values Equal tells apart by kind also read differently.
func DescribeValue(v dissect.Value) string {
	switch v.Kind() {
	case dissect.KindObject, dissect.KindArray:
		var b strings.Builder
		open, close := "{", "}"
		if v.Kind() == dissect.KindArray {
			open, close = "[", "]"
		}
		b.WriteString(open)
		for i, f := range v.Items() {
			if i > 0 {
				b.WriteString(", ")
			}
			if v.Kind() == dissect.KindObject || f.Key != "" {
				b.WriteString(f.Key + ": ")
			}
			b.WriteString(DescribeValue(f.Value))
		}
		b.WriteString(close)
		return b.String()
	case dissect.KindString:
		return fmt.Sprintf("%q", v.Str())
	case dissect.KindBytes:
		return "0x" + hex.EncodeToString(v.Raw())
	case dissect.KindInt:
		return fmt.Sprint(v.Int())
	case dissect.KindUint:
		return fmt.Sprintf("%du", v.Uint())
	case dissect.KindBool:
		return fmt.Sprint(v.Bool())
	case dissect.KindFloat:
		return fmt.Sprint(v.Float())
	case dissect.KindFloat32:
		return fmt.Sprintf("%vf32", v.Float())
	case dissect.KindTime:
		return v.Time().Format(time.RFC3339Nano)
	case dissect.KindNull:
		return "null"
	}
	return fmt.Sprintf("kind %d", v.Kind())
}

// SplitSink returns a sink keeping clones of the records sent by names[d]
// in got[d], and failing t on a record from any other source.
func SplitSink(t testing.TB, names [2]string, got *[2][]*dissect.Record) dissect.Sink {
	return dissect.SinkFunc(func(r *dissect.Record) error {
		switch r.Src {
		case names[0]:
			got[0] = append(got[0], r.Clone())
		case names[1]:
			got[1] = append(got[1], r.Clone())
		default:
			t.Errorf("record from unknown source %q", r.Src)
		}
		return nil
	})
}
