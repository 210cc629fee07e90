package pbwalk

import (
	"context"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// testProto is the schema of the decoder tests: every scalar kind, packed
// and unpacked repeated fields, a map, a group (proto2), an enum with
// values outside 0-255, a string wrapper, a field number above the dense
// table, nested messages, and messages nested in themselves.
const testProto = `syntax = "proto2";
package t;

enum Color { RED = 0; GREEN = 1; BLUE = 2; BIG = 1000; NEG = -5; }

message Wrap { optional string value = 1; }

message All {
  optional int32 i32 = 1;
  optional int64 i64 = 2;
  optional uint32 u32 = 3;
  optional uint64 u64 = 4;
  optional sint32 s32 = 5;
  optional sint64 s64 = 6;
  optional fixed32 f32 = 7;
  optional fixed64 f64 = 8;
  optional sfixed32 sf32 = 9;
  optional sfixed64 sf64 = 10;
  optional float fl = 11;
  optional double db = 12;
  optional bool b = 13;
  optional string s = 14;
  optional bytes by = 15;
  optional Color c = 16;
  optional All child = 17;
  repeated int32 ri32 = 18;
  repeated sint64 rs64 = 19 [packed = true];
  repeated fixed32 rf32 = 20;
  repeated double rdb = 21 [packed = true];
  repeated string rs = 22;
  repeated All kids = 23;
  optional group G = 24 { optional int32 a = 1; }
  map<string, int32> m = 25;
  optional Wrap w = 26;
  optional Inner in = 27;
  repeated Inner ins = 28;
  optional uint32 big = 300;
}

message Inner {
  optional int32 a = 1;
  optional Color c = 2;
  optional Wrap w = 3;
  repeated Color cs = 4 [packed = true];
}

message Simple {
  optional int32 a = 1;
  optional string b = 2;
  optional Simple c = 3;
  optional Wrap w = 4;
  optional Inner i = 5;
}
`

// compileTest compiles testProto and returns its messages by full name.
func compileTest(tb testing.TB) map[string]*Message {
	tb.Helper()
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"t.proto": testProto}),
	}}
	files, err := c.Compile(context.Background(), "t.proto")
	if err != nil {
		tb.Fatal(err)
	}
	b := NewBuilder(BuildOptions{StringWrappers: []protoreflect.FullName{"t.Wrap"}})
	out := map[string]*Message{}
	var walk func(ms protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			md := ms.Get(i)
			out[string(md.FullName())] = b.Message(md)
			walk(md.Messages())
		}
	}
	walk(files[0].Messages())
	return out
}

// Encoding with protowire's append functions (independent of the walker).
func tagv(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func tag32(num protowire.Number, v uint32) []byte {
	return protowire.AppendFixed32(protowire.AppendTag(nil, num, protowire.Fixed32Type), v)
}

func tag64(num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), v)
}

func tagb(num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
}

func tags(num protowire.Number, s string) []byte { return tagb(num, []byte(s)) }

func tagg(num protowire.Number, body []byte) []byte {
	b := append(protowire.AppendTag(nil, num, protowire.StartGroupType), body...)
	return protowire.AppendTag(b, num, protowire.EndGroupType)
}

var (
	h   = dissecttest.Hex
	cat = dissecttest.Cat
)

// kv is an expected field.
type kv struct {
	k string
	v dissect.Value
}

func obj(fs ...kv) dissect.Value {
	out := make([]dissect.Field, len(fs))
	for i, f := range fs {
		out[i] = dissect.Field{Key: f.k, Value: f.v}
	}
	return dissect.Object(out)
}

// arr is an expected array.
var arr = dissecttest.Array

func show(v dissect.Value) string { return dissecttest.DescribeValue(v) }

// leafv is an expected item of the raw list: a field occurrence shown
// raw, in message parent, named name ("" for none), with one value under
// key as ("uint", "text" or "bytes").
func leafv(parent string, num int, name, wire, as string, v dissect.Value) dissect.Value {
	fs := []kv{{"parent", dissect.Str(parent)}, {"field", dissect.Int(int64(num))}}
	if name != "" {
		fs = append(fs, kv{"name", dissect.Str(name)})
	}
	return obj(append(fs, kv{"wire_type", dissect.Str(wire)}, kv{as, v})...)
}
