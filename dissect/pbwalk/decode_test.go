package pbwalk

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"

	"google.golang.org/protobuf/encoding/protowire"
)

// decodeCase is one payload, the message it is decoded with (a name in
// compileTest's map, "" for raw), the fields expected, the items of the
// raw list expected, and the warnings (substrings, in order), of which
// the last plain ones are not issues.
type decodeCase struct {
	name  string
	msg   string
	in    []byte
	want  dissect.Value
	raw   []dissect.Value
	warn  []string
	plain int
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

// Wire type names of the raw list.
const (
	wVarint = "varint"
	wF32    = "fixed32"
	wF64    = "fixed64"
	wLen    = "length-delimited"
	wGroup  = "group"
)

// schemaCases decode with t.All (two passes) and t.Simple (one pass). The
// expected values follow the protobuf encoding guide: int32 and int64
// sign-extend, sint zigzag, sfixed two's complement, float and double
// IEEE 754. What a message cannot hold is in the raw list, each
// occurrence with the path of its message.
func schemaCases() []decodeCase {
	neg := func(x int64) uint64 { return uint64(x) }
	type r = []dissect.Value
	type w = []string
	return []decodeCase{
		{name: "int32 -1 (10-byte varint)", msg: "t.All", in: tagv(1, math.MaxUint64), want: obj(kv{"i32", i64(-1)})},
		{name: "int32 out of range", msg: "t.All", in: tagv(1, 1<<32), want: obj(kv{"i32", i64(1 << 32)}), warn: w{"p: t.All.i32: 4294967296 is out of the int32 range"}},
		{name: "int64 negative", msg: "t.All", in: tagv(2, neg(-5)), want: obj(kv{"i64", i64(-5)})},
		{name: "uint32 max", msg: "t.All", in: tagv(3, math.MaxUint32), want: obj(kv{"u32", u64(math.MaxUint32)})},
		{name: "uint32 out of range", msg: "t.All", in: tagv(3, 1<<32), want: obj(kv{"u32", u64(1 << 32)}), warn: w{"t.All.u32: 4294967296 is out of the uint32 range"}},
		{name: "uint64 max", msg: "t.All", in: tagv(4, math.MaxUint64), want: obj(kv{"u64", u64(math.MaxUint64)})},
		{name: "sint32 out of range", msg: "t.All", in: tagv(5, 1<<32), want: obj(kv{"s32", i64(0)}), warn: w{"t.All.s32: 4294967296 is out of the sint32 range"}},
		{name: "fixed32", msg: "t.All", in: tag32(7, math.MaxUint32), want: obj(kv{"f32", u64(math.MaxUint32)})},
		{name: "fixed64", msg: "t.All", in: tag64(8, math.MaxUint64), want: obj(kv{"f64", u64(math.MaxUint64)})},
		{name: "sfixed32 -1", msg: "t.All", in: tag32(9, math.MaxUint32), want: obj(kv{"sf32", i64(-1)})},
		{name: "sfixed64 min", msg: "t.All", in: tag64(10, 1<<63), want: obj(kv{"sf64", i64(math.MinInt64)})},
		{name: "float 1.5", msg: "t.All", in: tag32(11, 0x3fc00000), want: obj(kv{"fl", dissect.Float32(1.5)})},
		{name: "double -2", msg: "t.All", in: tag64(12, 0xc000000000000000), want: obj(kv{"db", dissect.Float(-2)})},
		{name: "bool", msg: "t.All", in: tagv(13, 1), want: obj(kv{"b", dissect.Bool(true)})},
		{name: "bool 2", msg: "t.All", in: tagv(13, 2), want: obj(kv{"b", dissect.Bool(true)}), warn: w{"t.All.b: bool value 2"}},
		{name: "enum", msg: "t.All", in: tagv(16, 1), want: obj(kv{"c", str("GREEN")})},
		{name: "enum 1000", msg: "t.All", in: tagv(16, 1000), want: obj(kv{"c", str("BIG")})},
		{name: "enum -5", msg: "t.All", in: tagv(16, neg(-5)), want: obj(kv{"c", str("NEG")})},
		{name: "enum unknown value", msg: "t.All", in: tagv(16, 7), want: obj(), raw: r{leafv("", 16, "c", wVarint, "uint", u64(7))},
			warn: w{"t.All.c: 7 is not a value of t.Color; shown raw"}},
		{name: "enum over int32", msg: "t.All", in: tagv(16, 1<<40), want: obj(), raw: r{leafv("", 16, "c", wVarint, "uint", u64(1<<40))},
			warn: w{"t.All.c: enum value 1099511627776 out of the int32 range; shown raw"}},
		{name: "string", msg: "t.All", in: tags(14, "héllo"), want: obj(kv{"s", str("héllo")})},
		{name: "string not UTF-8", msg: "t.All", in: tagb(14, []byte{0xff}), want: obj(kv{"s", str("\xff")}), warn: w{"t.All.s: string is not valid UTF-8"}},
		{name: "bytes", msg: "t.All", in: tagb(15, []byte{0, 1, 0xff}), want: obj(kv{"by", dissect.Bytes([]byte{0, 1, 0xff})})},
		{name: "nested", msg: "t.All", in: tagb(27, tagv(1, 5)), want: obj(kv{"in", obj(kv{"a", i64(5)})})},
		{name: "nested not a message", msg: "t.All", in: tagb(27, []byte{0x80}), want: obj(), raw: r{leafv("", 27, "in", wLen, "bytes", dissect.Bytes([]byte{0x80}))},
			warn: w{"t.All.in: not a t.Inner message (truncated tag at offset 0); shown raw"}},
		{name: "nested text, not a message", msg: "t.All", in: tags(27, "hi!"), want: obj(), raw: r{leafv("", 27, "in", wLen, "text", str("hi!"))},
			warn: w{"t.All.in: not a t.Inner message ("}},
		{name: "nested in itself", msg: "t.All", in: cat(tagb(17, cat(tagv(1, 5), tagv(16, 2))), tagv(1, 3)), want: obj(kv{"i32", i64(3)}),
			raw:  r{leafv("child", 1, "", wVarint, "uint", u64(5)), leafv("child", 16, "", wVarint, "uint", u64(2))},
			warn: w{"t.All.child: a t.All inside a t.All is not decoded with the schema; shown raw"}, plain: 1},
		{name: "repeated, nested in itself", msg: "t.All", in: cat(tagb(23, tagv(1, 5)), tagb(23, tagv(2, 6))),
			raw:  r{leafv("kids[0]", 1, "", wVarint, "uint", u64(5)), leafv("kids[1]", 2, "", wVarint, "uint", u64(6))},
			warn: w{"t.All.kids: a t.All inside a t.All is not decoded with the schema; shown raw", "t.All.kids: a t.All inside"}, plain: 2},
		{name: "repeated messages", msg: "t.All", in: cat(tagb(28, tagv(1, 1)), tagv(2, 7), tagb(28, tagv(1, 2))),
			want: obj(kv{"ins", arr(obj(kv{"a", i64(1)}), obj(kv{"a", i64(2)}))}, kv{"i64", i64(7)})},
		{name: "repeated messages, an item with an unknown field", msg: "t.All", in: cat(tagb(28, tagv(1, 1)), tagb(28, cat(tagv(1, 2), tagv(9, 3)))),
			want: obj(kv{"ins", arr(obj(kv{"a", i64(1)}), obj(kv{"a", i64(2)}))}), raw: r{leafv("ins[1]", 9, "", wVarint, "uint", u64(3))},
			warn: w{"t.Inner has no field 9 (varint); shown raw"}},
		{name: "repeated messages, an item that does not parse", msg: "t.All", in: cat(tagb(28, []byte{0x80}), tagb(28, cat(tagv(1, 2), tagv(9, 3)))),
			// ins[1]: the second occurrence on the wire, the first item of the array.
			want: obj(kv{"ins", arr(obj(kv{"a", i64(2)}))}), raw: r{leafv("", 28, "ins", wLen, "bytes", dissect.Bytes([]byte{0x80})), leafv("ins[1]", 9, "", wVarint, "uint", u64(3))},
			warn: w{"t.All.ins: not a t.Inner message (truncated tag at offset 0); shown raw", "t.Inner has no field 9 (varint); shown raw"}},
		{name: "repeated messages, none parses", msg: "t.All", in: cat(tagv(1, 1), tagb(28, []byte{0x80})), want: obj(kv{"i32", i64(1)}),
			raw: r{leafv("", 28, "ins", wLen, "bytes", dissect.Bytes([]byte{0x80}))}, warn: w{"t.All.ins: not a t.Inner message"}},
		{name: "packed enum with a value the enum lacks", msg: "t.All", in: tagb(28, cat(tagv(1, 4), tagb(4, packedVarints(1, 7, 2)))),
			want: obj(kv{"ins", arr(obj(kv{"a", i64(4)}, kv{"cs", arr(str("GREEN"), str("BLUE"))}))}), raw: r{leafv("ins[0]", 4, "cs", wVarint, "uint", u64(7))},
			warn: w{"t.Inner.cs: 7 is not a value of t.Color; shown raw"}},
		{name: "packed enum, no value named", msg: "t.All", in: tagb(27, tagb(4, packedVarints(7))), want: obj(kv{"in", obj()}),
			raw: r{leafv("in", 4, "cs", wVarint, "uint", u64(7))}, warn: w{"t.Inner.cs: 7 is not a value of t.Color; shown raw"}},
		{name: "packed (guide)", msg: "t.All", in: tagb(18, h("03 8e 02 9e a7 05")), want: obj(kv{"ri32", arr(i64(3), i64(270), i64(86942))})},
		{name: "packed and unpacked mixed", msg: "t.All", in: cat(tagv(18, 1), tagb(18, packedVarints(2, 3)), tagv(18, 4)),
			want: obj(kv{"ri32", arr(i64(1), i64(2), i64(3), i64(4))})},
		{name: "packed sint64 (zigzag)", msg: "t.All", in: tagb(19, packedVarints(1, 2, math.MaxUint64)), want: obj(kv{"rs64", arr(i64(-1), i64(1), i64(math.MinInt64))})},
		{name: "packed fixed32", msg: "t.All", in: tagb(20, h("01 00 00 00 ff ff ff ff")), want: obj(kv{"rf32", arr(u64(1), u64(math.MaxUint32))})},
		{name: "packed fixed32 broken", msg: "t.All", in: tagb(20, h("ff ff ff ff ff")), want: obj(), raw: r{leafv("", 20, "rf32", wLen, "bytes", dissect.Bytes(h("ff ff ff ff ff")))},
			warn: w{`t.All.rf32 (field 20): wire type length-delimited does not fit fixed32; shown raw`}},
		{name: "packed run empty", msg: "t.All", in: tagb(19, nil), want: obj(kv{"rs64", arr()})},
		{name: "packed double", msg: "t.All", in: tagb(21, h("00 00 00 00 00 00 f8 3f 00 00 00 00 00 00 00 c0")), want: obj(kv{"rdb", arr(dissect.Float(1.5), dissect.Float(-2))})},
		{name: "repeated strings", msg: "t.All", in: cat(tags(22, "a"), tags(22, "b")), want: obj(kv{"rs", arr(str("a"), str("b"))})},
		{name: "group", msg: "t.All", in: tagg(24, tagv(1, 5)), want: obj(kv{"g", obj(kv{"a", i64(5)})})},
		{name: "map", msg: "t.All", in: cat(tagb(25, cat(tags(1, "x"), tagv(2, 1))), tagb(25, cat(tags(1, "y"), tagv(2, 2)))),
			want: obj(kv{"m", arr(obj(kv{"key", str("x")}, kv{"value", i64(1)}), obj(kv{"key", str("y")}, kv{"value", i64(2)}))})},
		{name: "string wrapper", msg: "t.All", in: tagb(26, tags(1, uuid)), want: obj(kv{"w", str(uuid)})},
		{name: "string wrapper, last wins", msg: "t.All", in: tagb(26, cat(tags(1, "a"), tags(1, "b"))), want: obj(kv{"w", str("b")})},
		{name: "string wrapper with another field", msg: "t.All", in: tagb(26, cat(tags(1, "a"), tagv(2, 1))), want: obj(),
			raw:  r{leafv("w", 1, "", wLen, "text", str("a")), leafv("w", 2, "", wVarint, "uint", u64(1))},
			warn: w{"t.All.w: a t.Wrap holding more than its string (field 1); shown raw"}},
		{name: "string wrapper empty", msg: "t.All", in: tagb(26, nil), want: obj(kv{"w", str("")})},
		{name: "string wrapper not UTF-8", msg: "t.All", in: tagb(26, tagb(1, []byte{0xff})), want: obj(kv{"w", str("\xff")}), warn: w{"t.All.w: string is not valid UTF-8"}},
		{name: "field 300", msg: "t.All", in: tagv(300, 9), want: obj(kv{"big", u64(9)})},
		{name: "unknown field", msg: "t.All", in: tagv(99, 1), want: obj(), raw: r{leafv("", 99, "", wVarint, "uint", u64(1))}, warn: w{"t.All has no field 99 (varint); shown raw"}},
		{name: "unknown field 1000", msg: "t.All", in: tag32(1000, 3), want: obj(), raw: r{leafv("", 1000, "", wF32, "uint", u64(3))}, warn: w{"t.All has no field 1000 (fixed32); shown raw"}},
		{name: "unknown field twice", msg: "t.All", in: cat(tag64(99, 1), tagv(1, 2), tags(99, "x")), want: obj(kv{"i32", i64(2)}),
			raw: r{leafv("", 99, "", wF64, "uint", u64(1)), leafv("", 99, "", wLen, "text", str("x"))}, warn: w{"t.All has no field 99 (fixed64); shown raw"}},
		{name: "wrong wire type", msg: "t.All", in: tag32(1, 5), want: obj(), raw: r{leafv("", 1, "i32", wF32, "uint", u64(5))},
			warn: w{`t.All.i32 (field 1): wire type fixed32 does not fit int32; shown raw`}},
		{name: "singular twice", msg: "t.All", in: cat(tagv(1, 1), tagv(1, 2)), want: obj(kv{"i32", i64(2)}), warn: w{"t.All.i32 appears 2 times; the last is shown"}},
		{name: "singular twice, the last shown raw", msg: "t.All", in: cat(tagv(16, 1), tagv(16, 9)), want: obj(kv{"c", str("GREEN")}),
			raw: r{leafv("", 16, "c", wVarint, "uint", u64(9))}, warn: w{"t.All.c appears 2 times; the last is shown", "t.All.c: 9 is not a value of t.Color; shown raw"}},
		{name: "wire order", msg: "t.All", in: cat(tagv(16, 2), tagv(1, 2), tags(14, "z")), want: obj(kv{"c", str("BLUE")}, kv{"i32", i64(2)}, kv{"s", str("z")})},
		{name: "empty", msg: "t.All", want: obj()},
		// t.Simple has no repeated field: the one-pass path, and its
		// fallback to two passes.
		{name: "simple", msg: "t.Simple", in: cat(tagv(1, 7), tags(2, "x"), tagb(5, tagv(1, 8)), tagb(4, tags(1, "u"))),
			want: obj(kv{"a", i64(7)}, kv{"b", str("x")}, kv{"i", obj(kv{"a", i64(8)})}, kv{"w", str("u")})},
		{name: "simple, field twice", msg: "t.Simple", in: cat(tagv(1, 1), tags(2, "x"), tagv(1, 2)), want: obj(kv{"a", i64(2)}, kv{"b", str("x")}),
			warn: w{"t.Simple.a appears 2 times; the last is shown"}},
		{name: "simple, unknown field", msg: "t.Simple", in: cat(tagv(1, 1), tagv(9, 1)), want: obj(kv{"a", i64(1)}),
			raw: r{leafv("", 9, "", wVarint, "uint", u64(1))}, warn: w{"t.Simple has no field 9 (varint); shown raw"}},
		{name: "simple, nested issue", msg: "t.Simple", in: tagb(5, tagv(1, 1<<33)), want: obj(kv{"i", obj(kv{"a", i64(1 << 33)})}), warn: w{"t.Inner.a: 8589934592 is out of the int32 range"}},
		{name: "simple, nested unknown field", msg: "t.Simple", in: cat(tagv(1, 1), tagb(5, cat(tagv(2, 1), tag32(7, 4)))), want: obj(kv{"a", i64(1)}, kv{"i", obj(kv{"c", str("GREEN")})}),
			raw: r{leafv("i", 7, "", wF32, "uint", u64(4))}, warn: w{"t.Inner has no field 7 (fixed32); shown raw"}},
		{name: "simple, enum shown raw", msg: "t.Simple", in: cat(tagv(1, 1), tagb(5, tagv(2, 99)), tags(2, "x")), want: obj(kv{"a", i64(1)}, kv{"i", obj()}, kv{"b", str("x")}),
			raw: r{leafv("i", 2, "c", wVarint, "uint", u64(99))}, warn: w{"t.Inner.c: 99 is not a value of t.Color; shown raw"}},
		{name: "simple, nested in itself", msg: "t.Simple", in: cat(tagv(1, 7), tagb(3, cat(tagv(1, 8), tagb(3, tagv(1, 9))))), want: obj(kv{"a", i64(7)}),
			raw:  r{leafv("c", 1, "", wVarint, "uint", u64(8)), leafv("c.3", 1, "", wVarint, "uint", u64(9))},
			warn: w{"t.Simple.c: a t.Simple inside a t.Simple is not decoded with the schema; shown raw"}, plain: 1},
		{name: "simple, a value shown raw then an unknown field", msg: "t.Simple", in: cat(tagb(5, tagv(2, 99)), tagv(9, 1)), want: obj(kv{"i", obj()}),
			raw:  r{leafv("i", 2, "c", wVarint, "uint", u64(99)), leafv("", 9, "", wVarint, "uint", u64(1))},
			warn: w{"t.Inner.c: 99 is not a value of t.Color; shown raw", "t.Simple has no field 9 (varint); shown raw"}},
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
		got, raw, issues, err := d.Decode(&rec, msgs["t.All"], tagv(c.num, c.wire), true)
		key := map[protowire.Number]string{5: "s32", 6: "s64"}[c.num]
		if err != nil || issues != 0 || raw != nil || !dissect.Object(got).Equal(obj(kv{key, i64(c.want)})) {
			t.Errorf("field %d varint %d: %s %d %v, want %d", c.num, c.wire, show(dissect.Object(got)), issues, err, c.want)
		}
	}
}

// rawCases decode without a schema (protoc --decode_raw rules): every
// occurrence is an item of the raw list, in wire order.
func rawCases() []decodeCase {
	deep := tagv(1, 1)
	for range MaxRawDepth {
		deep = tagb(1, deep)
	}
	deepParent := strings.Repeat("1.", MaxRawDepth-2) + "1"
	type r = []dissect.Value
	return []decodeCase{
		{name: "varint 150 (guide)", in: h("08 96 01"), raw: r{leafv("", 1, "", wVarint, "uint", u64(150))}},
		{name: "string (guide)", in: h("12 07 74 65 73 74 69 6e 67"), raw: r{leafv("", 2, "", wLen, "text", str("testing"))}},
		{name: "embedded message (guide)", in: h("1a 03 08 96 01"), raw: r{leafv("3", 1, "", wVarint, "uint", u64(150))}},
		{name: "packed (guide): not UTF-8, not a message", in: h("32 06 03 8e 02 9e a7 05"), raw: r{leafv("", 6, "", wLen, "bytes", dissect.Bytes(h("03 8e 02 9e a7 05")))}},
		{name: "empty bytes", in: h("12 00"), raw: r{leafv("", 2, "", wLen, "text", str(""))}},
		{name: "printable text that parses", in: tags(1, "(A"), raw: r{leafv("", 1, "", wLen, "text", str("(A"))}},
		{name: "control characters, not a message", in: tagb(1, []byte{1}), raw: r{leafv("", 1, "", wLen, "text", str("\x01"))}},
		{name: "fixed", in: cat(tag32(2, 7), tag64(3, 8)), raw: r{leafv("", 2, "", wF32, "uint", u64(7)), leafv("", 3, "", wF64, "uint", u64(8))}},
		{name: "repeated number", in: cat(tagv(1, 1), tagv(2, 5), tagv(1, 2)),
			raw: r{leafv("", 1, "", wVarint, "uint", u64(1)), leafv("", 2, "", wVarint, "uint", u64(5)), leafv("", 1, "", wVarint, "uint", u64(2))}},
		{name: "group", in: tagg(3, tagv(1, 2)), raw: r{leafv("3", 1, "", wVarint, "uint", u64(2))}},
		{name: "empty group", in: cat(tagg(3, nil), tagv(4, 1)), raw: r{leafv("", 3, "", wGroup, "bytes", dissect.Bytes(nil)), leafv("", 4, "", wVarint, "uint", u64(1))}},
		{name: "nested messages", in: cat(tagb(2, cat(tagv(1, 1), tagb(3, tagv(4, 5)), tagv(6, 7))), tagv(8, 9)),
			raw: r{leafv("2", 1, "", wVarint, "uint", u64(1)), leafv("2.3", 4, "", wVarint, "uint", u64(5)), leafv("2", 6, "", wVarint, "uint", u64(7)), leafv("", 8, "", wVarint, "uint", u64(9))}},
		{name: "nested messages of one number", in: cat(tagb(1, tagv(2, 3)), tagv(5, 1), tagb(1, cat(tagv(2, 4), tagb(6, tagv(7, 8)), tagb(6, nil)))),
			raw: r{leafv("1[0]", 2, "", wVarint, "uint", u64(3)), leafv("", 5, "", wVarint, "uint", u64(1)), leafv("1[1]", 2, "", wVarint, "uint", u64(4)),
				leafv("1[1].6[0]", 7, "", wVarint, "uint", u64(8)), leafv("1[1]", 6, "", wLen, "text", str(""))}},
		{name: "field 1000", in: tagv(1000, 1), raw: r{leafv("", 1000, "", wVarint, "uint", u64(1))}},
		{name: "nested beyond MaxRawDepth", in: deep, raw: r{leafv(deepParent, 1, "", wLen, "text", str("\x08\x01"))}},
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
			want := c.want
			if want.Kind() == dissect.KindNull {
				want = obj()
			}
			d := Decoder{WarnPrefix: "p: "}
			var rec dissect.Record
			got, raw, issues, err := d.Decode(&rec, m, c.in, true)
			if err != nil {
				t.Fatal(err)
			}
			if !dissect.Object(got).Equal(want) {
				t.Fatalf("got  %s\nwant %s", show(dissect.Object(got)), show(want))
			}
			if !dissect.Array(raw).Equal(arr(c.raw...)) {
				t.Fatalf("raw  %s\nwant %s", show(dissect.Array(raw)), show(arr(c.raw...)))
			}
			if c.raw == nil && raw != nil {
				t.Fatal("an empty raw list, not nil")
			}
			dissecttest.CheckWarnings(t, rec.Warnings, c.warn)
			for _, w := range rec.Warnings {
				if w[:3] != "p: " {
					t.Fatalf("warning %q without the prefix", w)
				}
			}
			if issues != len(c.warn)-c.plain {
				t.Fatalf("%d issues, %d warnings of which %d plain", issues, len(c.warn), c.plain)
			}
			if m != nil {
				checkConforms(t, m, got, raw)
			}
			// Building nothing gives the same issues and warnings.
			var rec2 dissect.Record
			got2, raw2, issues2, err2 := d.Decode(&rec2, m, c.in, false)
			if got2 != nil || raw2 != nil || issues2 != issues || err2 != nil || !slices.Equal(rec2.Warnings, rec.Warnings) {
				t.Fatalf("build=false: %v %v %d %v %q", got2, raw2, issues2, err2, rec2.Warnings)
			}
			if d.Check(m, c.in) != (issues == 0) {
				t.Fatalf("Check = %v with %d issues", !(issues == 0), issues)
			}
		})
	}
}

func TestDecodeSchema(t *testing.T) { runDecodeCases(t, schemaCases()) }
func TestDecodeRaw(t *testing.T)    { runDecodeCases(t, rawCases()) }

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
	if _, _, _, err := d.Decode(nil, nil, in[:off], false); err != nil {
		t.Fatalf("256 numbers: %v", err)
	}
	_, _, _, err := d.Decode(nil, nil, in, false)
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
	_, _, issues, err := d.Decode(&rec, msgs["t.All"], in, true)
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
	fields, raw, issues, err := d.Decode(&rec, msgs["t.All"], cat(tagv(99, 1), h("0a 05")), true)
	if fields != nil || raw != nil || err == nil || len(rec.Warnings) != 0 || issues != 0 {
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
	if len(fs) != 5 || fs[0].Name != "a" || fs[3].Number != 4 || fs[2].Repeated || !msgs["t.All"].Fields()[17].Repeated {
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
			_, _, _, err := d.Decode(&rec, m, p, true)
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("%d bytes took %v (%v)", len(p), el, err)
			}
			if err != nil && !errors.Is(err, ErrLimit) {
				t.Errorf("%d bytes: %v", len(p), err)
			}
		}
	}
}
