package mcapout

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/mcapcheck"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestProtobufEnvelope: the record message has a field for every key of
// the envelope's declaration (dissect.JSONEnvelope), named as in JSON,
// numbered as files already written number it, and the encoder writes
// each: a record with every key set reads back,
// with Go's protobuf decoder, as the declaration's values of the record.
func TestProtobufEnvelope(t *testing.T) {
	r := rec("k", "all", 5)
	r.Time = time.Date(2026, 12, 2, 3, 4, 5, 6, time.UTC)
	r.Frame, r.Offset, r.Length = 41, 1<<33, 77
	reg := kindsRegistry(t)
	decl := reg.Decl(r)
	pr := newPBRecord(decl, nil) // no key stated by a channel: all in the message
	name, data, err := recordDescriptorSet("k", decl, pr.env)
	if err != nil {
		t.Fatal(err)
	}
	md := mcapcheck.Descriptor(t, name, data)
	msg := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(appendPBRecord(nil, r, pr), msg); err != nil {
		t.Fatal(err)
	}
	for _, k := range dissect.JSONEnvelope() {
		fd := md.Fields().ByName(protoreflect.Name(k.Name))
		if fd == nil {
			t.Errorf("no field %s in %s", k.Name, name)
			continue
		}
		if fd.Number() != pbEnvelopeNumber(k.Name) {
			t.Errorf("%s is field %d, want %d (a number never changes)", k.Name, fd.Number(), pbEnvelopeNumber(k.Name))
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
