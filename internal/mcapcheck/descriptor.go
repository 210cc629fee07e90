package mcapcheck

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Descriptor returns the message type name of a protobuf schema's data (a
// serialized FileDescriptorSet, as an MCAP protobuf schema holds it),
// read with Go's protobuf library; it fails the test when the set does
// not hold it.
func Descriptor(t testing.TB, name string, set []byte) protoreflect.MessageDescriptor {
	t.Helper()
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(set, &fds); err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		t.Fatalf("schema %s: not a message", name)
	}
	return md
}
