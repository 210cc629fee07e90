package mcapout

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/mcapcheck"
	"github.com/dissect-tools/dissect/output"
	"github.com/foxglove/mcap/go/mcap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// kindsRegistry declares "k", a type with a field of every kind, arrays
// of them and of objects, for the protobuf tests.
func kindsRegistry(t testing.TB) *dissect.Registry {
	t.Helper()
	elem := func(k dissect.Kind) *dissect.FieldDecl { return &dissect.FieldDecl{Kind: k} }
	types := []dissect.TypeDecl{{Type: "all", Fields: []dissect.FieldDecl{
		{Name: "i", Kind: dissect.KindInt}, {Name: "u", Kind: dissect.KindUint},
		{Name: "f", Kind: dissect.KindFloat}, {Name: "f32", Kind: dissect.KindFloat32},
		{Name: "b", Kind: dissect.KindBool}, {Name: "s", Kind: dissect.KindString},
		{Name: "raw", Kind: dissect.KindBytes}, {Name: "at", Kind: dissect.KindTime},
		{Name: "ints", Kind: dissect.KindArray, Elem: elem(dissect.KindInt)},
		{Name: "f32s", Kind: dissect.KindArray, Elem: elem(dissect.KindFloat32)},
		{Name: "names", Kind: dissect.KindArray, Elem: elem(dissect.KindString)},
		{Name: "times", Kind: dissect.KindArray, Elem: elem(dissect.KindTime)},
		{Name: "key-with dash", Kind: dissect.KindUint},
		{Name: "objs", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindObject, Fields: []dissect.FieldDecl{
			{Name: "id", Kind: dissect.KindUint}, {Name: "grid", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindArray, Elem: elem(dissect.KindInt)}},
		}}},
	}}}
	reg, err := dissect.NewRegistry(describer{dissect.Info{Name: "k", Proto: "k", Types: types}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// protoRecords are records of every kind at their edges: 64-bit extremes,
// float32 and float64 bits (-0, NaN, infinities, subnormals), text that is
// not UTF-8, times before 1970, empty and nested arrays.
func protoRecords() []*dissect.Record {
	items := func(vs ...dissect.Value) dissect.Value {
		var it []dissect.Field
		for _, v := range vs {
			it = append(it, dissect.Elem(v))
		}
		return dissect.Array(it)
	}
	obj := func(fs ...dissect.Field) dissect.Value { return dissect.Object(fs) }
	all := rec("k", "all", 2,
		f("i", dissect.Int(math.MinInt64)), f("u", dissect.Uint(math.MaxUint64)),
		f("f", dissect.Float(math.Copysign(0, -1))), f("f32", dissect.Float32(0.1)),
		f("b", dissect.Bool(false)), f("s", dissect.Str("caf\xe9 \u00e9")),
		f("raw", dissect.Bytes([]byte{0, 0xff})), f("at", dissect.Time(time.Date(1969, 7, 20, 20, 17, 40, 5, time.UTC))),
		f("ints", items(dissect.Int(-1), dissect.Int(math.MaxInt64), dissect.Int(0))),
		f("f32s", items(dissect.Float32(float32(math.Inf(-1))), dissect.Float32(math.SmallestNonzeroFloat32), dissect.Float32(16777217))),
		f("names", items(dissect.Str(""), dissect.Str("b"))),
		f("times", items(dissect.Time(t0))),
		f("key-with dash", dissect.Uint(1<<63)),
		f("objs", items(obj(f("id", dissect.Uint(1)), f("grid", items(items(dissect.Int(1), dissect.Int(-2)), items(), items(dissect.Int(3))))), obj())),
	)
	all.Warnings = []string{"a warning", "bad \xff byte"}
	sparse := rec("k", "all", 2, f("f", dissect.Float(5e-324)), f("u", dissect.Uint(0)), f("i", dissect.Int(0)), f("s", dissect.Str("")))
	sparse.Offset, sparse.Length = 1<<40, 0
	nan := rec("k", "all", 0, f("f", dissect.Float(math.NaN())), f("f32", dissect.Float32(float32(math.Inf(1)))), f("ints", items()))
	// A type's records sent both ways on a stream, and on a stream
	// without addresses (a serial tap's): a channel each (channelKeys).
	back := rec("p", "plain", 0, f("n", dissect.Uint(8)))
	back.Src, back.Dst = back.Dst, back.Src
	unnamed := rec("p", "plain", 4, f("v", dissect.Float(-2)))
	unnamed.Src, unnamed.Dst = "", ""
	// Times MCAP's log time cannot hold (it is 0 for both), which the
	// message holds all the same.
	early := rec("p", "plain", 0, f("n", dissect.Uint(9)))
	early.Time = time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC)
	unset := rec("p", "plain", 0, f("n", dissect.Uint(10)))
	unset.Time = time.Time{}
	return []*dissect.Record{all, sparse, nan,
		rec("p", "plain", 0, f("n", dissect.Uint(7)), f("v", dissect.Float(1.5))), back, unnamed, early, unset,
		rec("p", "arm", 0, f("x", dissect.Float32(0.1)), f("y", dissect.Float32(-0.02)), f("z", dissect.Float32(3.4e38)), f("u", dissect.Float32(1e-45))),
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(1, 2, 3)), f("quat", quat(0, 0, 0, 1))),
		rec("p", "path", 0, f("points", dissect.Array([]dissect.Field{dissect.Elem(floats(1, 2, 3)), dissect.Elem(floats(4, 5, 6))}))),
		rec("p", "get", 0, f("role", dissect.Str("request")), f("code", dissect.Uint(3))),
		rec("p", "get", 0, f("role", dissect.Str("response")), f("code", dissect.Uint(3)),
			f("payload", obj(f("gain", dissect.Float(math.Inf(1))), f("names", items(dissect.Str("a")))))),
		rec("p", "mystery thing", 0, f("data", dissect.Bytes([]byte{0xab}))),
		rec("q", "undeclared", 0, f("anything", dissect.Float(math.NaN()))),
		rec("p", dissect.TypeGap, 0),
		rec("", dissect.TypeSkipped, 3, f("reason", dissect.Str("x"))),
	}
}

// both declares the types of "p" and "k".
func both(t testing.TB) func(*dissect.Record) *dissect.TypeDecl {
	p, k := registry(t), kindsRegistry(t)
	return func(r *dissect.Record) *dissect.TypeDecl {
		if r.Proto == "k" {
			return k.Decl(r)
		}
		return p.Decl(r)
	}
}

// Every record decoded by protobufjs from its channel's FileDescriptorSet
// (the independent reader, check.mjs) equals its -o json line exactly:
// integers by their digits, floats by their bits.
func TestProtobufRecordsEqualJSON(t *testing.T) {
	if err := mcapcheck.Available(); err != nil {
		t.Skip(err.Error())
	}
	recs := protoRecords()
	_, _, file := write(t, Options{Decl: both(t)}, recs...)
	var jsonl []byte
	lines := output.NewJSONLines(false)
	for _, r := range recs {
		jsonl = lines.AppendRecord(jsonl, r)
	}
	res := mcapcheck.CheckRecords(t, file, string(jsonl))
	if len(res.Problems) > 0 {
		t.Errorf("problems: %v", res.Problems)
	}
	if res.Records.MCAP != len(recs) || res.Records.JSON != len(recs) || len(res.Records.Differ) > 0 {
		t.Errorf("records: %d read, %d written, differ:", res.Records.MCAP, res.Records.JSON)
		for _, d := range res.Records.Differ {
			t.Errorf("  mcap %v\n  json %v", *d.MCAP, *d.JSON)
		}
	}
	encodings := map[string]int{}
	for _, c := range res.Channels {
		encodings[c.Schema+" "+c.Encoding]++
	}
	for _, want := range []string{"dissect.k.all protobuf", "dissect.p.get_response protobuf", "dissect.p.wire_named protobuf", "dissect.gap protobuf", "dissect.undeclared json"} {
		if encodings[want] == 0 {
			t.Errorf("no channel %q: %v", want, encodings)
		}
	}
}

// Go's own protobuf library reads every schema as a FileDescriptorSet
// and every message with it (dynamicpb), the values exact.
func TestProtobufGoReads(t *testing.T) {
	_, _, file := write(t, Options{Decl: both(t)}, protoRecords()...)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := mcap.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	it, err := rd.Messages(mcap.UsingIndex(false))
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	for {
		s, c, m, err := it.NextInto(nil)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.MessageEncoding != "protobuf" {
			continue
		}
		if s.Encoding != "protobuf" {
			t.Fatalf("%s: schema encoding %q", c.Topic, s.Encoding)
		}
		md := mcapcheck.Descriptor(t, s.Name, s.Data)
		msg := dynamicpb.NewMessage(md)
		// Text that was not UTF-8 is written with U+FFFD: Go's decoder,
		// which checks, takes it.
		if err := proto.Unmarshal(m.Data, msg); err != nil {
			t.Fatalf("%s message %d: %v", c.Topic, m.Sequence, err)
		}
		seen++
		if c.Topic != "/k/2/all" || m.Sequence != 0 {
			continue
		}
		fields := msg.Get(md.Fields().ByName("fields")).Message()
		get := func(name string) protoreflect.Value {
			fd := fields.Descriptor().Fields().ByName(protoreflect.Name(name))
			if fd == nil || !fields.Has(fd) {
				t.Fatalf("field %s missing", name)
			}
			return fields.Get(fd)
		}
		if v := get("u").Uint(); v != math.MaxUint64 {
			t.Errorf("u = %d", v)
		}
		if v := get("i").Int(); v != math.MinInt64 {
			t.Errorf("i = %d", v)
		}
		if v := get("f").Float(); math.Float64bits(v) != 1<<63 {
			t.Errorf("f = %v, want -0", v)
		}
		if v := get("f32").Float(); float32(v) != 0.1 {
			t.Errorf("f32 = %v", v)
		}
		if v := get("s").String(); v != "caf\uFFFD \u00e9" {
			t.Errorf("s = %q", v)
		}
		if v := get("key_with_dash"); v.Uint() != 1<<63 {
			t.Errorf("key_with_dash = %v", v)
		}
		if fd := fields.Descriptor().Fields().ByName("key_with_dash"); fd.JSONName() != "key-with dash" {
			t.Errorf("json_name %q", fd.JSONName())
		}
		if b := get("b"); b.Bool() {
			t.Error("b = true")
		}
		if fd := fields.Descriptor().Fields().ByName("names"); fields.Has(fd) != true {
			t.Error("names missing")
		}
	}
	if seen < 10 {
		t.Errorf("%d protobuf messages read", seen)
	}
}

// A record costs no allocation once its type's plan is made.
func TestProtobufNoAllocs(t *testing.T) {
	recs := protoRecords()
	plan := newPBRecord(kindsRegistry(t).Decl(recs[0]), nil)
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf = appendPBRecord(buf[:0], recs[0], plan) }); n != 0 {
		t.Errorf("%v allocations per record", n)
	}
}

// --mcap-encoding's values: others are refused before a byte is written.
func TestEncodingRefused(t *testing.T) {
	var buf bytes.Buffer
	if _, err := New(&buf, Options{Encoding: "cbor"}); err == nil || !strings.Contains(err.Error(), `"cbor"`) || buf.Len() != 0 {
		t.Errorf("err %v, %d bytes", err, buf.Len())
	}
}

// The pictures and events as protobuf (Foxglove's published schemas,
// decoded by protobufjs) say what they say as JSON: the same topics, and
// each message the same once the JSON's empty arrays and zero lifetime
// (protobuf's absent fields) are left out and its times written as
// RFC 3339, as check.mjs writes a google.protobuf.Timestamp.
func TestProtobufPictures(t *testing.T) {
	if err := mcapcheck.Available(); err != nil {
		t.Skip(err.Error())
	}
	recs := []*dissect.Record{
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(1.5, -2, 3e-9)), f("quat", quat(0.5, -0.5, 0.5, 0.5))),
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(1)), f("pos", floats(0, 0, 0)), f("quat", quat(0, 0, 0, 1))),
		rec("p", "arm", 0, f("x", dissect.Float32(0.5)), f("y", dissect.Float32(-0.25)), f("z", dissect.Float32(8)), f("u", dissect.Float32(1))),
		rec("p", "path", 0, f("points", dissect.Array([]dissect.Field{dissect.Elem(floats(1, 2, 3)), dissect.Elem(floats(4, 5, 6.25))}))),
		rec("p", "trail", 0, f("points", dissect.Array([]dissect.Field{dissect.Elem(dissect.Object([]dissect.Field{f("x", dissect.Float(1)), f("y", dissect.Float(-2)), f("z", dissect.Float(0.125))}))}))),
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(math.NaN(), 0, 0)), f("quat", quat(0, 0, 0, 1))),
		rec("p", dissect.TypeGap, 0),
	}
	pictures := func(enc string) map[string][]string {
		_, _, file := write(t, Options{Decl: registry(t).Decl, Encoding: enc}, recs...)
		res := mcapcheck.Check(t, file)
		if len(res.Problems) > 0 {
			t.Fatalf("%s: problems %v", enc, res.Problems)
		}
		out := map[string][]string{}
		for _, m := range res.Messages {
			if strings.HasPrefix(m.Schema, "foxglove.") {
				var v any
				if err := json.Unmarshal(m.Data, &v); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(protobufForm(v))
				out[m.Topic+" "+m.Schema] = append(out[m.Topic+" "+m.Schema], string(b))
			}
		}
		return out
	}
	js, pb := pictures(EncodingJSON), pictures(EncodingProtobuf)
	if len(js) < 6 {
		t.Fatalf("%d derived topics: the comparison would be vacuous", len(js))
	}
	if !reflect.DeepEqual(js, pb) {
		for k := range js {
			if !reflect.DeepEqual(js[k], pb[k]) {
				t.Errorf("%s:\njson     %v\nprotobuf %v", k, js[k], pb[k])
			}
		}
		for k := range pb {
			if js[k] == nil {
				t.Errorf("%s only in protobuf", k)
			}
		}
	}
}

// protobufForm leaves out of a JSON-encoded Foxglove message what
// protobuf does not write (empty arrays, a zero lifetime) and writes its
// times {sec, nsec} as RFC 3339.
func protobufForm(v any) any {
	switch v := v.(type) {
	case []any:
		for i := range v {
			v[i] = protobufForm(v[i])
		}
	case map[string]any:
		for k, x := range v {
			a, isArr := x.([]any)
			m, isObj := x.(map[string]any)
			switch {
			case isArr && len(a) == 0, k == "lifetime" && m["sec"] == 0.0 && m["nsec"] == 0.0:
				delete(v, k)
			case k == "timestamp" && isObj:
				v[k] = time.Unix(int64(m["sec"].(float64)), int64(m["nsec"].(float64))).UTC().Format("2006-01-02T15:04:05.000000000Z")
			default:
				v[k] = protobufForm(x)
			}
		}
	}
	return v
}

// The envelope keys read straight from a Record's fields are written as
// their Values write them, for every JSON key of the envelope (a key
// without a fast path is written through its Values either way).
func TestEnvelopeFastPath(t *testing.T) {
	r := rec("p", "plain", 3)
	r.Src, r.Dst, r.Offset, r.Length, r.Frame = "10.0.0.1:4000", "[2001:db8::1]:50000", 1<<40+5, 300, 77
	r.Time = time.Date(1969, 7, 20, 20, 17, 40, 123456789, time.UTC)
	fast := 0
	// A record's Src and Dst are written again from the bytes of the last
	// pair (appendNames): each is written again, then another, then one
	// that is not UTF-8, twice.
	p := newPBRecord(&dissect.TypeDecl{}, nil) // the envelope alone
	if p.names < 0 {
		t.Fatal("src and dst not found next to each other in the envelope")
	}
	for _, src := range []string{r.Src, r.Src, "[2001:db8::2]:1", "caf\xe9:1", "caf\xe9:1"} {
		r.Src = src
		var names []byte
		for _, e := range messageEnvelope(nil) {
			if e.key.Field != dissect.FieldValues {
				fast++
			}
			slow := e
			slow.key.Field = dissect.FieldValues
			got, want := appendPBEnvelope(nil, &e, r), appendPBEnvelope(nil, &slow, r)
			if !bytes.Equal(got, want) {
				t.Errorf("%s: % x, through its Values % x", e.key.Name, got, want)
			}
			if e.key.Name == "src" || e.key.Name == "dst" {
				names = append(names, want...)
			}
		}
		if got := p.appendNames(nil, r); !bytes.Equal(got, names) {
			t.Errorf("src %q, dst %q: % x, through their Values % x", r.Src, r.Dst, got, names)
		}
	}
	if fast == 0 {
		t.Error("no envelope key has a fast path: the check is vacuous")
	}
}

// BenchmarkPBRecord encodes a record of four float32 fields (a vector)
// with its envelope: through the flat plan and through the general
// encoder alone.
func BenchmarkPBRecord(b *testing.B) {
	r := rec("p", "arm", 0, f("x", dissect.Float32(0.1)), f("y", dissect.Float32(-0.02)), f("z", dissect.Float32(-0.35)), f("u", dissect.Float32(0)))
	r.Src, r.Dst, r.Offset, r.Length, r.Frame = "192.0.2.1:4000", "198.51.100.10:50000", 123456, 18, 98765
	d := registry(b).Decl(r)
	for _, name := range []string{"flat", "general"} {
		b.Run(name, func(b *testing.B) {
			p := newPBRecord(d, channelKeys(d, false))
			if name == "general" {
				p.flat = nil
			}
			buf := make([]byte, 0, 256)
			for b.Loop() {
				buf = appendPBRecord(buf[:0], r, p)
			}
		})
	}
}
