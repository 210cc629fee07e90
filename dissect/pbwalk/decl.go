package pbwalk

import (
	"fmt"
	"slices"

	"github.com/dissect-tools/dissect/dissect"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// DeclOptions configure [Message.Decl].
type DeclOptions struct {
	// Max bounds the fields declared, nested ones included (0: 4096).
	Max int
	// Unit, when set, gives the unit of field field of message message
	// (full name), or "".
	Unit func(message, field string) string
}

// defaultMaxDecl is DeclOptions.Max when 0.
const defaultMaxDecl = 4096

// Decl declares the fields [Decoder.Decode] gives for a payload decoded
// with m: every field of m, in number order, none required (a field
// absent on the wire is absent), each of the kind Decode writes:
//
//	int32, sint32, sfixed32, int64, sint64, sfixed64   int
//	uint32, fixed32, uint64, fixed64                   uint
//	float                                              float32
//	double                                             float64
//	bool                                               bool
//	string; an enum (Enum: its value names)            string
//	bytes                                              bytes
//	a message or group                                 object (its own fields)
//	a string wrapper (BuildOptions)                    string
//	repeated, map                                      array of the above (a
//	                                                   map entry: object of
//	                                                   key and value)
//
// A message field whose message is m or encloses the field (a message
// nested in itself) is not declared: Decode shows it raw, since its
// declaration would never end. Decl fails when more than opt.Max fields
// would be declared.
func (m *Message) Decl(opt DeclOptions) ([]dissect.FieldDecl, error) {
	if opt.Max <= 0 {
		opt.Max = defaultMaxDecl
	}
	b := declBuilder{opt: opt, left: opt.Max}
	fs := b.fields(m, []*Message{m})
	if b.left < 0 {
		return nil, fmt.Errorf("pbwalk: %s declares more than %d fields, nested messages included", m.name, opt.Max)
	}
	return fs, nil
}

type declBuilder struct {
	opt  DeclOptions
	left int // fields that may still be declared
}

// fields declares the fields of m; encl lists m and the messages that
// enclose it.
func (b *declBuilder) fields(m *Message, encl []*Message) []dissect.FieldDecl {
	var out []dissect.FieldDecl
	for i := range m.fields {
		f := &m.fields[i]
		if b.left < 0 {
			return nil
		}
		if f.msg != nil && !f.msg.wrap && slices.Contains(encl, f.msg) {
			continue
		}
		b.left--
		d := b.value(f, encl)
		d.Name = f.name
		d.Doc = fmt.Sprintf("field %d (%s)", f.num, kindName(f))
		if b.opt.Unit != nil {
			d.Unit = b.opt.Unit(m.name, f.name)
		}
		if f.list {
			d = dissect.FieldDecl{Name: d.Name, Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: d.Kind, Fields: d.Fields, Enum: d.Enum}, Unit: d.Unit, Doc: d.Doc}
		}
		out = append(out, d)
	}
	return out
}

// value declares one value of field f (an item, when f is repeated).
func (b *declBuilder) value(f *fieldInfo, encl []*Message) dissect.FieldDecl {
	switch f.kind {
	case protoreflect.BoolKind:
		return dissect.FieldDecl{Kind: dissect.KindBool}
	case protoreflect.EnumKind:
		return dissect.FieldDecl{Kind: dissect.KindString, Enum: f.enum.names()}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return dissect.FieldDecl{Kind: dissect.KindInt}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return dissect.FieldDecl{Kind: dissect.KindUint}
	case protoreflect.FloatKind:
		return dissect.FieldDecl{Kind: dissect.KindFloat32}
	case protoreflect.DoubleKind:
		return dissect.FieldDecl{Kind: dissect.KindFloat}
	case protoreflect.StringKind:
		return dissect.FieldDecl{Kind: dissect.KindString}
	case protoreflect.BytesKind:
		return dissect.FieldDecl{Kind: dissect.KindBytes}
	}
	// A message or a group.
	if f.msg.wrap {
		return dissect.FieldDecl{Kind: dissect.KindString}
	}
	return dissect.FieldDecl{Kind: dissect.KindObject, Fields: b.fields(f.msg, append(encl[:len(encl):len(encl)], f.msg))}
}

// kindName names a field's type as .proto files do: "int32", or the full
// name of its message or enum.
func kindName(f *fieldInfo) string {
	switch {
	case f.msg != nil:
		return f.msg.name
	case f.enum != nil:
		return f.enum.name
	}
	return f.kind.String()
}

// names returns the value names Decode may write for e, by number: the
// first name of each number.
func (e *enumInfo) names() []string {
	nums := make([]int32, 0, len(e.other))
	for n := range e.other {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	var out []string
	for _, n := range nums {
		if n < 0 {
			out = append(out, e.other[n])
		}
	}
	for _, s := range e.dense {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, n := range nums {
		if n >= 0 {
			out = append(out, e.other[n])
		}
	}
	return out
}
