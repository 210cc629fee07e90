package mcapout

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestProtobufEnvelope: the record message has a field for every key of
// the envelope's declaration (dissect.JSONEnvelope), named as in JSON,
// and the encoder writes each: a record with every key set reads back,
// with Go's protobuf decoder, as the declaration's values of the record.
func TestProtobufEnvelope(t *testing.T) {
	r := rec("k", "all", 5)
	r.Time = time.Date(2026, 12, 2, 3, 4, 5, 6, time.UTC)
	r.Frame, r.Offset, r.Length = 41, 1<<33, 77
	reg := kindsRegistry(t)
	decl := reg.Decl(r)
	name, data, err := recordDescriptorSet("k", decl)
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatal(err)
	}
	md := d.(protoreflect.MessageDescriptor)
	msg := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(appendPBRecord(nil, r, pbFields(decl.Fields)), msg); err != nil {
		t.Fatal(err)
	}
	for _, k := range dissect.JSONEnvelope() {
		fd := md.Fields().ByName(protoreflect.Name(k.Name))
		if fd == nil {
			t.Errorf("no field %s in %s", k.Name, name)
			continue
		}
		v, _ := k.Values(r)
		got := msg.Get(fd)
		switch k.Kind {
		case dissect.KindTime:
			ts := got.Message()
			sec := ts.Get(ts.Descriptor().Fields().ByName("seconds")).Int()
			ns := ts.Get(ts.Descriptor().Fields().ByName("nanos")).Int()
			if at := time.Unix(sec, ns).UTC(); !at.Equal(v[0].Time()) {
				t.Errorf("%s = %v, want %v", k.Name, at, v[0].Time())
			}
		case dissect.KindInt:
			if n := got.Interface(); n != uint64(v[0].Int()) && n != v[0].Int() {
				t.Errorf("%s = %v, want %d", k.Name, n, v[0].Int())
			}
		default:
			if got.String() != v[0].Str() {
				t.Errorf("%s = %q, want %q", k.Name, got.String(), v[0].Str())
			}
		}
	}
}
