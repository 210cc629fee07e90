package pbwalk

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"

	"google.golang.org/protobuf/encoding/protowire"
)

// decodeCase is one payload, the message it is decoded with (a name in
// compileTest's map, "" for raw), the fields expected and the warnings
// (substrings, in order).
type decodeCase struct {
	name string
	msg  string
	in   []byte
	want dissect.Value
	warn []string
}

var (
	i64 = dissect.Int
	u64 = dissect.Uint
	str = dissect.Str
)

func packedVarints(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

const uuid = "97f72d84-b856-4934-8d80-2b3ff5ad41d5"

// schemaCases decode with t.All (two passes) and t.Simple (one pass). The
// expected values follow the protobuf encoding guide: int32 and int64
// sign-extend, sint zigzag, sfixed two's complement, float and double
// IEEE 754.
func schemaCases() []decodeCase {
	neg := func(x int64) uint64 { return uint64(x) }
	return []decodeCase{
		{"int32 -1 (10-byte varint)", "t.All", tagv(1, math.MaxUint64), obj(kv{"i32", i64(-1)}), nil},
		{"int32 out of range", "t.All", tagv(1, 1<<32), obj(kv{"i32", i64(1 << 32)}), []string{"p: t.All.i32: 4294967296 is out of the int32 range"}},
		{"int64 negative", "t.All", tagv(2, neg(-5)), obj(kv{"i64", i64(-5)}), nil},
		{"uint32 max", "t.All", tagv(3, math.MaxUint32), obj(kv{"u32", u64(math.MaxUint32)}), nil},
		{"uint32 out of range", "t.All", tagv(3, 1<<32), obj(kv{"u32", u64(1 << 32)}), []string{"t.All.u32: 4294967296 is out of the uint32 range"}},
		{"uint64 max", "t.All", tagv(4, math.MaxUint64), obj(kv{"u64", u64(math.MaxUint64)}), nil},
		{"sint32 out of range", "t.All", tagv(5, 1<<32), obj(kv{"s32", i64(0)}), []string{"t.All.s32: 4294967296 is out of the sint32 range"}},
		{"fixed32", "t.All", tag32(7, math.MaxUint32), obj(kv{"f32", u64(math.MaxUint32)}), nil},
		{"fixed64", "t.All", tag64(8, math.MaxUint64), obj(kv{"f64", u64(math.MaxUint64)}), nil},
		{"sfixed32 -1", "t.All", tag32(9, math.MaxUint32), obj(kv{"sf32", i64(-1)}), nil},
		{"sfixed64 min", "t.All", tag64(10, 1<<63), obj(kv{"sf64", i64(math.MinInt64)}), nil},
		{"float 1.5", "t.All", tag32(11, 0x3fc00000), obj(kv{"fl", dissect.Float32(1.5)}), nil},
		{"double -2", "t.All", tag64(12, 0xc000000000000000), obj(kv{"db", dissect.Float(-2)}), nil},
		{"bool", "t.All", tagv(13, 1), obj(kv{"b", dissect.Bool(true)}), nil},
		{"bool 2", "t.All", tagv(13, 2), obj(kv{"b", dissect.Bool(true)}), []string{"t.All.b: bool value 2"}},
		{"enum", "t.All", tagv(16, 1), obj(kv{"c", str("GREEN")}), nil},
		{"enum 1000", "t.All", tagv(16, 1000), obj(kv{"c", str("BIG")}), nil},
		{"enum -5", "t.All", tagv(16, neg(-5)), obj(kv{"c", str("NEG")}), nil},
		{"enum unknown value", "t.All", tagv(16, 7), obj(kv{"c", i64(7)}), []string{"t.All.c: 7 is not a value of t.Color"}},
		{"enum over int32", "t.All", tagv(16, 1<<40), obj(kv{"c", i64(1 << 40)}), []string{"t.All.c: enum value 1099511627776 out of the int32 range"}},
		{"string", "t.All", tags(14, "héllo"), obj(kv{"s", str("héllo")}), nil},
		{"string not UTF-8", "t.All", tagb(14, []byte{0xff}), obj(kv{"s", str("\xff")}), []string{"t.All.s: string is not valid UTF-8"}},
		{"bytes", "t.All", tagb(15, []byte{0, 1, 0xff}), obj(kv{"by", dissect.Bytes([]byte{0, 1, 0xff})}), nil},
		{"nested", "t.All", tagb(17, tagv(1, 5)), obj(kv{"child", obj(kv{"i32", i64(5)})}), nil},
		{"nested not a message", "t.All", tagb(17, []byte{0x80}), obj(kv{"child", dissect.Bytes([]byte{0x80})}),
			[]string{"t.All.child: not a t.All message (truncated tag at offset 0); shown as bytes"}},
		{"repeated messages", "t.All", cat(tagb(23, tagv(1, 1)), tagv(2, 7), tagb(23, tagv(1, 2))),
			obj(kv{"kids", arr(obj(kv{"i32", i64(1)}), obj(kv{"i32", i64(2)}))}, kv{"i64", i64(7)}), nil},
		{"packed (guide)", "t.All", tagb(18, h("03 8e 02 9e a7 05")), obj(kv{"ri32", arr(i64(3), i64(270), i64(86942))}), nil},
		{"packed and unpacked mixed", "t.All", cat(tagv(18, 1), tagb(18, packedVarints(2, 3)), tagv(18, 4)),
			obj(kv{"ri32", arr(i64(1), i64(2), i64(3), i64(4))}), nil},
		{"packed sint64 (zigzag)", "t.All", tagb(19, packedVarints(1, 2, math.MaxUint64)), obj(kv{"rs64", arr(i64(-1), i64(1), i64(math.MinInt64))}), nil},
		{"packed fixed32", "t.All", tagb(20, h("01 00 00 00 ff ff ff ff")), obj(kv{"rf32", arr(u64(1), u64(math.MaxUint32))}), nil},
		{"packed fixed32 broken", "t.All", tagb(20, h("ff ff ff ff ff")), obj(kv{"20", dissect.Bytes(h("ff ff ff ff ff"))}),
			[]string{`t.All.rf32 (field 20): wire type length-delimited does not fit fixed32; shown raw as "20"`}},
		{"packed run empty", "t.All", tagb(19, nil), obj(kv{"rs64", arr()}), nil},
		{"packed double", "t.All", tagb(21, h("00 00 00 00 00 00 f8 3f 00 00 00 00 00 00 00 c0")), obj(kv{"rdb", arr(dissect.Float(1.5), dissect.Float(-2))}), nil},
		{"repeated strings", "t.All", cat(tags(22, "a"), tags(22, "b")), obj(kv{"rs", arr(str("a"), str("b"))}), nil},
		{"group", "t.All", tagg(24, tagv(1, 5)), obj(kv{"g", obj(kv{"a", i64(5)})}), nil},
		{"map", "t.All", cat(tagb(25, cat(tags(1, "x"), tagv(2, 1))), tagb(25, cat(tags(1, "y"), tagv(2, 2)))),
			obj(kv{"m", arr(obj(kv{"key", str("x")}, kv{"value", i64(1)}), obj(kv{"key", str("y")}, kv{"value", i64(2)}))}), nil},
		{"string wrapper", "t.All", tagb(26, tags(1, uuid)), obj(kv{"w", str(uuid)}), nil},
		{"string wrapper, last wins", "t.All", tagb(26, cat(tags(1, "a"), tags(1, "b"))), obj(kv{"w", str("b")}), nil},
		{"string wrapper with another field", "t.All", tagb(26, cat(tags(1, "a"), tagv(2, 1))), obj(kv{"w", obj(kv{"value", str("a")}, kv{"2", u64(1)})}),
			[]string{"t.Wrap has no field 2 (varint); shown raw"}},
		{"string wrapper empty", "t.All", tagb(26, nil), obj(kv{"w", obj()}), nil},
		{"field 300", "t.All", tagv(300, 9), obj(kv{"big", u64(9)}), nil},
		{"unknown field", "t.All", tagv(99, 1), obj(kv{"99", u64(1)}), []string{"t.All has no field 99 (varint); shown raw"}},
		{"unknown field 1000", "t.All", tag32(1000, 3), obj(kv{"1000", u64(3)}), []string{"t.All has no field 1000 (fixed32); shown raw"}},
		{"wrong wire type", "t.All", tag32(1, 5), obj(kv{"1", u64(5)}), []string{`t.All.i32 (field 1): wire type fixed32 does not fit int32; shown raw as "1"`}},
		{"singular twice", "t.All", cat(tagv(1, 1), tagv(1, 2)), obj(kv{"i32", i64(2)}), []string{"t.All.i32 appears 2 times; the last is shown"}},
		{"wire order", "t.All", cat(tagv(16, 2), tagv(1, 2), tags(14, "z")), obj(kv{"c", str("BLUE")}, kv{"i32", i64(2)}, kv{"s", str("z")}), nil},
		{"empty", "t.All", nil, obj(), nil},
		// t.Simple has no repeated field: the one-pass path, and its
		// fallback to two passes.
		{"simple", "t.Simple", cat(tagv(1, 7), tags(2, "x"), tagb(3, tagv(1, 8)), tagb(4, tags(1, "u"))),
			obj(kv{"a", i64(7)}, kv{"b", str("x")}, kv{"c", obj(kv{"a", i64(8)})}, kv{"w", str("u")}), nil},
		{"simple, field twice", "t.Simple", cat(tagv(1, 1), tags(2, "x"), tagv(1, 2)), obj(kv{"a", i64(2)}, kv{"b", str("x")}),
			[]string{"t.Simple.a appears 2 times; the last is shown"}},
		{"simple, unknown field", "t.Simple", cat(tagv(1, 1), tagv(9, 1)), obj(kv{"a", i64(1)}, kv{"9", u64(1)}), []string{"t.Simple has no field 9 (varint); shown raw"}},
		{"simple, nested issue", "t.Simple", tagb(3, tagv(1, 1<<33)), obj(kv{"c", obj(kv{"a", i64(1 << 33)})}), []string{"t.Simple.a: 8589934592 is out of the int32 range"}},
	}
}

// TestZigZag decodes the zigzag table of the encoding guide.
func TestZigZag(t *testing.T) {
	msgs := compileTest(t)
	for _, c := range []struct {
		num  protowire.Number
		wire uint64
		want int64
	}{
		{5, 0, 0}, {5, 1, -1}, {5, 2, 1}, {5, 3, -2}, {5, 4294967294, 2147483647}, {5, 4294967295, -2147483648},
		{6, 0, 0}, {6, 1, -1}, {6, 2, 1}, {6, 18446744073709551614, 9223372036854775807}, {6, 18446744073709551615, -9223372036854775808},
	} {
		var d Decoder
		var rec dissect.Record
		got, issues, err := d.Decode(&rec, msgs["t.All"], tagv(c.num, c.wire), true)
		key := map[protowire.Number]string{5: "s32", 6: "s64"}[c.num]
		if err != nil || issues != 0 || !dissect.Object(got).Equal(obj(kv{key, i64(c.want)})) {
			t.Errorf("field %d varint %d: %s %d %v, want %d", c.num, c.wire, show(dissect.Object(got)), issues, err, c.want)
		}
	}
}

// rawCases decode without a schema (protoc --decode_raw rules).
func rawCases() []decodeCase {
	deep := tagv(1, 1)
	for range MaxRawDepth {
		deep = tagb(1, deep)
	}
	deepWant := str("\x08\x01")
	for range MaxRawDepth - 1 {
		deepWant = obj(kv{"1", deepWant})
	}
	return []decodeCase{
		{"varint 150 (guide)", "", h("08 96 01"), obj(kv{"1", u64(150)}), nil},
		{"string (guide)", "", h("12 07 74 65 73 74 69 6e 67"), obj(kv{"2", str("testing")}), nil},
		{"embedded message (guide)", "", h("1a 03 08 96 01"), obj(kv{"3", obj(kv{"1", u64(150)})}), nil},
		{"packed (guide): not UTF-8, not a message", "", h("32 06 03 8e 02 9e a7 05"), obj(kv{"6", dissect.Bytes(h("03 8e 02 9e a7 05"))}), nil},
		{"empty bytes", "", h("12 00"), obj(kv{"2", str("")}), nil},
		{"printable text that parses", "", tags(1, "(A"), obj(kv{"1", str("(A")}), nil},
		{"control characters, not a message", "", tagb(1, []byte{1}), obj(kv{"1", str("\x01")}), nil},
		{"fixed", "", cat(tag32(2, 7), tag64(3, 8)), obj(kv{"2", u64(7)}, kv{"3", u64(8)}), nil},
		{"repeated number", "", cat(tagv(1, 1), tagv(2, 5), tagv(1, 2)), obj(kv{"1", arr(u64(1), u64(2))}, kv{"2", u64(5)}), nil},
		{"group", "", tagg(3, tagv(1, 2)), obj(kv{"3", obj(kv{"1", u64(2)})}), nil},
		{"field 1000", "", tagv(1000, 1), obj(kv{"1000", u64(1)}), nil},
		{"nested beyond MaxRawDepth", "", deep, obj(kv{"1", deepWant}), nil},
	}
}

func runDecodeCases(t *testing.T, cases []decodeCase) {
	msgs := compileTest(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m *Message
			if c.msg != "" {
				m = msgs[c.msg]
			}
			d := Decoder{WarnPrefix: "p: "}
			var rec dissect.Record
			got, issues, err := d.Decode(&rec, m, c.in, true)
			if err != nil {
				t.Fatal(err)
			}
			if !dissect.Object(got).Equal(c.want) {
				t.Fatalf("got  %s\nwant %s", show(dissect.Object(got)), show(c.want))
			}
			dissecttest.CheckWarnings(t, rec.Warnings, c.warn)
			for _, w := range rec.Warnings {
				if w[:3] != "p: " {
					t.Fatalf("warning %q without the prefix", w)
				}
			}
			if issues != len(c.warn) {
				t.Fatalf("%d issues, %d warnings", issues, len(c.warn))
			}
			// Building nothing gives the same issues and warnings.
			var rec2 dissect.Record
			got2, issues2, err2 := d.Decode(&rec2, m, c.in, false)
			if got2 != nil || issues2 != issues || err2 != nil || !slices.Equal(rec2.Warnings, rec.Warnings) {
				t.Fatalf("build=false: %v %d %v %q", got2, issues2, err2, rec2.Warnings)
			}
			if d.Check(m, c.in) != (issues == 0) {
				t.Fatalf("Check = %v with %d issues", !(issues == 0), issues)
			}
		})
	}
}

func TestDecodeSchema(t *testing.T) { runDecodeCases(t, schemaCases()) }
func TestDecodeRaw(t *testing.T)    { runDecodeCases(t, rawCases()) }

// TestMessageDepth: a message nested deeper than MaxDepth is shown as
// bytes, with an issue; at MaxDepth it is decoded.
func TestMessageDepth(t *testing.T) {
	for _, levels := range []int{MaxDepth, MaxDepth + 1} {
		in := tagv(1, 1)
		want := obj(kv{"a", i64(1)})
		for k := range levels {
			if k == 0 && levels > MaxDepth {
				want = dissect.Bytes(in) // the innermost value, at depth 33
			}
			in = tagb(3, in)
			want = obj(kv{"c", want})
		}
		var warn []string
		if levels > MaxDepth {
			warn = []string{"t.Simple.c: messages nested deeper than 32; shown as bytes"}
		}
		runDecodeCases(t, []decodeCase{{name: "levels", msg: "t.Simple", in: in, want: want, warn: warn}})
	}
}

// TestFieldNumberLimit: 256 distinct field numbers decode; the 257th is
// ErrLimit at its tag.
func TestFieldNumberLimit(t *testing.T) {
	var in []byte
	off := 0
	for n := range MaxFieldNumbers + 1 {
		off = len(in)
		in = append(in, tagv(protowire.Number(n+1), 0)...)
	}
	var d Decoder
	if _, _, err := d.Decode(nil, nil, in[:off], false); err != nil {
		t.Fatalf("256 numbers: %v", err)
	}
	_, _, err := d.Decode(nil, nil, in, false)
	checkErr(t, err, ErrLimit, off, "over 256 distinct field numbers")
}

// TestWarningLimit: at most MaxWarnings warnings, then a count.
func TestWarningLimit(t *testing.T) {
	msgs := compileTest(t)
	var in []byte
	for n := range 11 {
		in = append(in, tagv(protowire.Number(40+n), 1)...)
	}
	d := Decoder{WarnPrefix: "p: "}
	var rec dissect.Record
	_, issues, err := d.Decode(&rec, msgs["t.All"], in, true)
	if err != nil || issues != 11 || len(rec.Warnings) != MaxWarnings+1 || rec.Warnings[MaxWarnings] != "p: 3 more warnings not shown" {
		t.Fatalf("%d issues, %v, warnings %q", issues, err, rec.Warnings)
	}
}

// TestFailedDecode: an error leaves no fields and keeps the warnings
// written before the failure was found (none at the top level: the wire is
// checked before any value is decoded).
func TestFailedDecode(t *testing.T) {
	msgs := compileTest(t)
	var d Decoder
	var rec dissect.Record
	fields, issues, err := d.Decode(&rec, msgs["t.All"], cat(tagv(99, 1), h("0a 05")), true)
	if fields != nil || err == nil || len(rec.Warnings) != 0 || issues != 0 {
		t.Fatalf("%v %d %v %q", fields, issues, err, rec.Warnings)
	}
	if d.Check(msgs["t.All"], h("0a 05")) {
		t.Fatal("Check of broken bytes")
	}
}

// TestMessageFields lists a built message's fields.
func TestMessageFields(t *testing.T) {
	msgs := compileTest(t)
	fs := msgs["t.Simple"].Fields()
	if len(fs) != 4 || fs[0].Name != "a" || fs[3].Number != 4 || fs[2].Repeated || !msgs["t.All"].Fields()[17].Repeated {
		t.Fatalf("%+v", fs)
	}
	if msgs["t.All"].Name() != "t.All" || EmptyMessage("x").Name() != "x" || len(EmptyMessage("x").Fields()) != 0 {
		t.Fatal("names")
	}
}

// TestPathological bounds the time of hostile 64 KiB payloads.
func TestPathological(t *testing.T) {
	var distinct []byte
	for i := 0; len(distinct) < 65000; i++ {
		distinct = protowire.AppendTag(distinct, protowire.Number(1+i%300), protowire.VarintType)
		distinct = append(distinct, 1)
	}
	nested := []byte("x")
	for len(nested) < 60000 {
		nested = tagb(1, cat(nested, nested[:min(len(nested), 100)]))
	}
	groups := cat(bytes.Repeat([]byte{0x0b}, 31), bytes.Repeat([]byte{0x0c}, 31))
	groups = bytes.Repeat(groups, 1000)
	msgs := compileTest(t)
	for _, p := range [][]byte{distinct, nested, groups, bytes.Repeat(h("08 01"), 32000), bytes.Repeat(h("12 00"), 32000)} {
		for _, m := range []*Message{nil, EmptyMessage("e"), msgs["t.All"], msgs["t.Simple"]} {
			var rec dissect.Record
			var d Decoder
			start := time.Now()
			_, _, err := d.Decode(&rec, m, p, true)
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("%d bytes took %v (%v)", len(p), el, err)
			}
			if err != nil && !errors.Is(err, ErrLimit) {
				t.Errorf("%d bytes: %v", len(p), err)
			}
		}
	}
}
