package mcapout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A record's protobuf message (Options.Encoding "protobuf") is derived from
// its declaration, field by field, and from the envelope
// (dissect.Envelope), as docs/mcap.md describes:
//
//	message TABLE {                        // package dissect.PROTO
//	  // the envelope's JSON keys but those the channel states
//	  // (channelKeys), numbered by pbEnvelopeNumber:
//	  google.protobuf.Timestamp time = 1; uint64 frame = 12;
//	  uint64 offset = 7; uint64 length = 8; ...
//	  Fields fields = 10;                  // always written
//	  repeated string warnings = 11;
//	  message Fields { ... }               // the declared fields, numbered 1, 2, ... in declared order
//	}
//
// The envelope keys a record topic's channel states (channelKeys: proto,
// transport, stream, type but for a protocol's "*" declaration, and in a
// file src and dst) are not in the message: the channel's metadata
// "envelope" holds them as a JSON object (a WebSocket channel, of
// NewEmitter, has none, and its messages keep src and dst).
// An envelope key of kind time is a google.protobuf.Timestamp, string a
// string, int an int64 (uint64 when never negative), bool a bool.
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
// read): a key added to the envelope takes the next free number, here
// and in pbEnvelopeNumber.
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
func pbEnvelopeNumber(name string) protowire.Number {
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

// channelKeys are the envelope keys a record topic's channel states
// (recordChannel keys its channels by them): its channel's metadata
// "envelope" holds them, its messages do not. The type is stated but for
// a protocol's "*" declaration, whose records of several types may share
// a topic. In a file (names) a channel also states src and dst, the
// stream's ends in the direction of its records: the records of a topic
// sent the other way are on a second channel of the same topic and
// schema, as a ROS bag has a connection per topic and publisher. A
// Foxglove WebSocket channel (a Writer of NewEmitter) has no metadata:
// its messages keep src and dst, and its topic names the other keys but
// the transport.
func channelKeys(t *dissect.TypeDecl, names bool) []string {
	keys := []string{"proto", "transport", "stream", "type"}
	if t.Type == "*" {
		keys = keys[:3]
	}
	if names {
		keys = append(keys, "src", "dst")
	}
	return keys
}

// statedEnvelope returns r's envelope keys stated (channelKeys), as a
// JSON object of their -o json values: the metadata "envelope" of the
// channel of r's record topic.
func (w *Writer) statedEnvelope(r *dissect.Record, stated []string) string {
	b := []byte{'{'}
	for _, k := range dissect.Envelope() {
		if !slices.Contains(stated, k.Name) || k.Values == nil {
			continue
		}
		if v, n := k.Values(r); n > 0 {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = output.AppendString(b, k.Name)
			b = w.enc.AppendValue(append(b, ':'), &v[0])
		}
	}
	return string(append(b, '}'))
}

// An envKey is an envelope key a record's message holds: its field
// number, the key, and how it is read; tag is the number's tag with the
// wire type of the key's kind (envelope numbers are below 16).
type envKey struct {
	num protowire.Number
	tag byte
	key dissect.EnvelopeKey
}

// messageEnvelope returns the envelope keys of the messages of records
// whose channel states the keys stated: the envelope's JSON keys but those.
func messageEnvelope(stated []string) []envKey {
	var out []envKey
	for _, k := range dissect.Envelope() {
		if k.JSON && !slices.Contains(stated, k.Name) {
			num, typ := pbEnvelopeNumber(k.Name), protowire.BytesType
			if k.Kind == dissect.KindInt || k.Kind == dissect.KindBool {
				typ = protowire.VarintType
			}
			out = append(out, envKey{num, byte(num)<<3 | byte(typ), k})
		}
	}
	return out
}

// envType is the protobuf type of an envelope key's values.
func envType(k dissect.EnvelopeKey) descriptorpb.FieldDescriptorProto_Type {
	switch {
	case k.Kind == dissect.KindTime:
		return descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	case k.Kind == dissect.KindInt && k.Min0:
		return descriptorpb.FieldDescriptorProto_TYPE_UINT64
	case k.Kind == dissect.KindInt:
		return descriptorpb.FieldDescriptorProto_TYPE_INT64
	case k.Kind == dissect.KindBool:
		return descriptorpb.FieldDescriptorProto_TYPE_BOOL
	}
	return descriptorpb.FieldDescriptorProto_TYPE_STRING
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
// record message, its envelope keys env (messageEnvelope), and its full
// name (the MCAP schema's name).
func recordDescriptorSet(protoName string, t *dissect.TypeDecl, env []envKey) (name string, data []byte, err error) {
	pkg, msgName := protoRecordName(protoName, t)
	fields := &descriptorpb.DescriptorProto{Name: proto.String("Fields")}
	addDeclFields(fields, t.Fields)
	full := "." + pkg + "." + msgName
	msg := &descriptorpb.DescriptorProto{
		Name: proto.String(msgName),
		Field: []*descriptorpb.FieldDescriptorProto{
			msgField("fields", pbFieldsNum, full+".Fields", false),
			repeated(scalarField("warnings", pbWarnings, descriptorpb.FieldDescriptorProto_TYPE_STRING)),
		},
		NestedType: []*descriptorpb.DescriptorProto{fields},
	}
	for _, e := range env {
		if e.num == 0 || e.num > 15 {
			return "", nil, fmt.Errorf("mcap: envelope key %q has no protobuf field number of one byte's tag", e.key.Name)
		}
		f := scalarField(protoIdent(e.key.Name), int32(e.num), envType(e.key))
		if e.key.Kind == dissect.KindTime {
			f.TypeName = proto.String(timestampName)
		}
		f.JsonName = proto.String(e.key.Name)
		msg.Field = append(msg.Field, f)
	}
	fixTypeNames(fields, full+".Fields")
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
