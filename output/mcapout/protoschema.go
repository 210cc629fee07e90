package mcapout

import (
	"fmt"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A record's protobuf message (Options.Encoding "protobuf") is derived from
// its declaration, field by field, as docs/mcap.md describes:
//
//	message TABLE {                        // package dissect.PROTO
//	  google.protobuf.Timestamp time = 1;
//	  string proto = 2; string transport = 3; uint64 stream = 4;
//	  string src = 5; string dst = 6; int64 offset = 7; int64 length = 8;
//	  string type = 9;
//	  Fields fields = 10;                  // always written
//	  repeated string warnings = 11;
//	  message Fields { ... }               // the declared fields, numbered 1, 2, ... in declared order
//	}
//
// A declared field of kind int is `optional sint64`, uint `optional
// uint64`, float `optional double`, float32 `optional float`, bool,
// string and bytes `optional` of theirs, time google.protobuf.Timestamp,
// object a nested message T_KEY of its declared keys, array `repeated` of
// its items (an array of arrays: repeated L_KEY, a message whose field 1,
// items, holds one inner array). Every field's json_name is its key.

// Message encodings of the record topics (Options.Encoding).
const (
	EncodingProtobuf = "protobuf"
	EncodingJSON     = "json"
)

// checkEncoding refuses an Options.Encoding other than those known.
func checkEncoding(e string) error {
	switch e {
	case "", EncodingProtobuf, EncodingJSON:
		return nil
	}
	return fmt.Errorf("mcap: unknown message encoding %q (protobuf, json)", e)
}

// The field numbers of the record messages: the envelope's keys (the
// keys -o json writes before "fields"), then fields and warnings. A
// number is never reused nor changed (files already written must still
// read): a key added to the envelope takes the next free number here, in
// pbEnvelopeNumber too.
const (
	pbTime      = 1
	pbProto     = 2
	pbTransport = 3
	pbStream    = 4
	pbSrc       = 5
	pbDst       = 6
	pbOffset    = 7
	pbLength    = 8
	pbType      = 9
	pbFieldsNum = 10
	pbWarnings  = 11
	pbFrame     = 12
)

// pbEnvelopeNumber is the field number of envelope key name (0: none,
// which recordDescriptorSet refuses).
func pbEnvelopeNumber(name string) int32 {
	switch name {
	case "time":
		return pbTime
	case "frame":
		return pbFrame
	case "proto":
		return pbProto
	case "transport":
		return pbTransport
	case "stream":
		return pbStream
	case "src":
		return pbSrc
	case "dst":
		return pbDst
	case "offset":
		return pbOffset
	case "length":
		return pbLength
	case "type":
		return pbType
	}
	return 0
}

// envelopeFields are the record message's fields of the envelope, in its
// order, typed by the declaration: a time as a Timestamp, a count (never
// negative) as uint64, another integer as int64, a string as string.
func envelopeFields() ([]*descriptorpb.FieldDescriptorProto, error) {
	var out []*descriptorpb.FieldDescriptorProto
	for _, k := range dissect.JSONEnvelope() {
		num := pbEnvelopeNumber(k.Name)
		if num == 0 {
			return nil, fmt.Errorf("mcap: envelope key %q has no protobuf field number", k.Name)
		}
		switch {
		case k.Kind == dissect.KindTime:
			out = append(out, msgField(k.Name, num, timestampName, false))
		case k.Kind == dissect.KindInt && k.Min0:
			out = append(out, scalarField(k.Name, num, descriptorpb.FieldDescriptorProto_TYPE_UINT64))
		case k.Kind == dissect.KindInt:
			out = append(out, scalarField(k.Name, num, descriptorpb.FieldDescriptorProto_TYPE_INT64))
		default:
			out = append(out, scalarField(k.Name, num, descriptorpb.FieldDescriptorProto_TYPE_STRING))
		}
	}
	return out, nil
}

const timestampName = ".google.protobuf.Timestamp"

// protoIdent makes s a protobuf identifier: bytes other than [A-Za-z0-9_]
// become '_', and one starting with a digit (or empty) gets a leading '_'.
func protoIdent(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

// protoRecordName returns the package and message name of the records of
// t (proto "*" for the events every protocol shares).
func protoRecordName(proto string, t *dissect.TypeDecl) (pkg, msg string) {
	pkg = "dissect"
	if proto != "*" {
		pkg += "." + protoIdent(proto)
	}
	if t.Type == "*" {
		return pkg, "wire_named"
	}
	return pkg, protoIdent(t.Table())
}

// recordDescriptorSet returns the serialized FileDescriptorSet of t's
// record message and its full name (the MCAP schema's name).
func recordDescriptorSet(protoName string, t *dissect.TypeDecl) (name string, data []byte, err error) {
	pkg, msgName := protoRecordName(protoName, t)
	fields := &descriptorpb.DescriptorProto{Name: proto.String("Fields")}
	addDeclFields(fields, t.Fields)
	env, err := envelopeFields()
	if err != nil {
		return "", nil, err
	}
	fieldsMsg := msgField("fields", pbFieldsNum, "."+pkg+"."+msgName+".Fields", false)
	msg := &descriptorpb.DescriptorProto{
		Name:       proto.String(msgName),
		Field:      append(env, fieldsMsg, repeated(scalarField("warnings", pbWarnings, descriptorpb.FieldDescriptorProto_TYPE_STRING))),
		NestedType: []*descriptorpb.DescriptorProto{fields},
	}
	fixTypeNames(fields, "."+pkg+"."+msgName+".Fields")
	file := &descriptorpb.FileDescriptorProto{
		Name:        proto.String(strings.ReplaceAll(pkg, ".", "/") + "/" + msgName + ".proto"),
		Package:     proto.String(pkg),
		Syntax:      proto.String("proto3"),
		Dependency:  []string{"google/protobuf/timestamp.proto"},
		MessageType: []*descriptorpb.DescriptorProto{msg},
	}
	return descriptorSet(pkg+"."+msgName, file, protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto))
}

// descriptorSet checks the files with protodesc (a file it refuses is a
// bug here) and serializes them, dependencies last.
func descriptorSet(name string, files ...*descriptorpb.FileDescriptorProto) (string, []byte, error) {
	set := &descriptorpb.FileDescriptorSet{File: files}
	if _, err := protodesc.NewFiles(set); err != nil {
		return "", nil, err
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	return name, data, err
}

// fixTypeNames makes the nested type names of m (relative, "T_x") full,
// under m's full name.
func fixTypeNames(m *descriptorpb.DescriptorProto, full string) {
	for _, f := range m.Field {
		if n := f.GetTypeName(); n != "" && !strings.HasPrefix(n, ".") {
			f.TypeName = proto.String(full + "." + n)
		}
	}
	for _, n := range m.NestedType {
		fixTypeNames(n, full+"."+n.GetName())
	}
}

// addDeclFields adds the declared fields fs to m, numbered from 1.
func addDeclFields(m *descriptorpb.DescriptorProto, fs []dissect.FieldDecl) {
	for i := range fs {
		f := &fs[i]
		name := protoIdent(f.Name)
		fd := declField(m, name, "T_"+name, "L_"+name, f)
		fd.Number = proto.Int32(int32(i + 1))
		fd.JsonName = proto.String(f.Name)
		if f.Kind == dissect.KindArray {
			fd.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		} else if fd.GetType() != descriptorpb.FieldDescriptorProto_TYPE_MESSAGE {
			// proto3 optional: a synthetic oneof per field, after the
			// message's other oneofs (it has none).
			fd.Proto3Optional = proto.Bool(true)
			fd.OneofIndex = proto.Int32(int32(len(m.OneofDecl)))
			m.OneofDecl = append(m.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("_" + name)})
		}
		m.Field = append(m.Field, fd)
	}
}

// declField returns the field of f's kind (for an array, of its items),
// adding to m the nested messages it needs: tname for an object's keys,
// lname for an array of arrays' items.
func declField(m *descriptorpb.DescriptorProto, name, tname, lname string, f *dissect.FieldDecl) *descriptorpb.FieldDescriptorProto {
	switch f.Kind {
	case dissect.KindTime:
		return msgField(name, 0, timestampName, false)
	case dissect.KindObject:
		sub := &descriptorpb.DescriptorProto{Name: proto.String(tname)}
		addDeclFields(sub, f.Fields)
		m.NestedType = append(m.NestedType, sub)
		return msgField(name, 0, tname, false)
	case dissect.KindArray:
		elem := f.Elem
		if elem == nil {
			elem = &dissect.FieldDecl{Kind: dissect.KindNull}
		}
		if elem.Kind != dissect.KindArray {
			return declField(m, name, tname, lname, elem)
		}
		// An array of arrays: each item a message whose field 1 is one
		// inner array.
		list := &descriptorpb.DescriptorProto{Name: proto.String(lname)}
		items := scalarField("items", 0, descriptorpb.FieldDescriptorProto_TYPE_BYTES)
		if elem.Elem != nil {
			items = declField(list, "items", "T_items", "L_items", elem.Elem)
		}
		items.Number = proto.Int32(1)
		items.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		list.Field = append(list.Field, items)
		m.NestedType = append(m.NestedType, list)
		return msgField(name, 0, lname, false)
	}
	return scalarField(name, 0, scalarType(f.Kind))
}

// scalarType is the protobuf type of a scalar kind; a kind with no value
// (null) is bytes, never written.
func scalarType(k dissect.Kind) descriptorpb.FieldDescriptorProto_Type {
	switch k {
	case dissect.KindInt:
		return descriptorpb.FieldDescriptorProto_TYPE_SINT64
	case dissect.KindUint:
		return descriptorpb.FieldDescriptorProto_TYPE_UINT64
	case dissect.KindFloat:
		return descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
	case dissect.KindFloat32:
		return descriptorpb.FieldDescriptorProto_TYPE_FLOAT
	case dissect.KindBool:
		return descriptorpb.FieldDescriptorProto_TYPE_BOOL
	case dissect.KindString:
		return descriptorpb.FieldDescriptorProto_TYPE_STRING
	}
	return descriptorpb.FieldDescriptorProto_TYPE_BYTES
}

func scalarField(name string, num int32, t descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
	return &descriptorpb.FieldDescriptorProto{
		Name: proto.String(name), Number: proto.Int32(num), Type: t.Enum(),
		Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
	}
}

func msgField(name string, num int32, typeName string, rep bool) *descriptorpb.FieldDescriptorProto {
	f := scalarField(name, num, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE)
	f.TypeName = proto.String(typeName)
	if rep {
		repeated(f)
	}
	return f
}

func repeated(f *descriptorpb.FieldDescriptorProto) *descriptorpb.FieldDescriptorProto {
	f.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	return f
}
