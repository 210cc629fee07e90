package pbwalk

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxDenseFieldNumber bounds the field numbers looked up by a table rather
// than by binary search.
const maxDenseFieldNumber = 64

// Message is a message type prepared for the decoder: its fields by
// number, with names, kinds, enums and nested messages resolved once. It is
// immutable once built and may be shared between goroutines.
type Message struct {
	name   string
	fields []fieldInfo // sorted by number
	dense  []int8      // field index + 1 by number, for numbers < len(dense)
	wrap   bool        // a string wrapper: rendered as its string (see BuildOptions)
	simple bool        // no repeated field and at most 64 fields: see Decoder.fast
}

type fieldInfo struct {
	num    protowire.Number
	name   string
	kind   protoreflect.Kind
	list   bool // repeated (map fields are repeated entry messages)
	packed bool // a repeated scalar number: may come packed (wire type 2)
	msg    *Message
	enum   *enumInfo
}

type enumInfo struct {
	name  string
	dense []string         // names of values 0..len-1, "" for holes
	other map[int32]string // values outside dense
}

func (e *enumInfo) lookup(v int32) (string, bool) {
	if v >= 0 && int(v) < len(e.dense) {
		s := e.dense[v]
		return s, s != ""
	}
	s, ok := e.other[v]
	return s, ok
}

// EmptyMessage returns a message type with no fields, named name (in
// warnings). Every field of a payload decoded with it is shown raw.
func EmptyMessage(name string) *Message { return &Message{name: name} }

// Name returns the full name of the message (as in warnings).
func (m *Message) Name() string { return m.name }

// FieldDesc describes one field of a Message.
type FieldDesc struct {
	Number   protowire.Number
	Name     string
	Kind     protoreflect.Kind
	Repeated bool // repeated or map
}

// Fields returns the fields of m in number order (a new slice).
func (m *Message) Fields() []FieldDesc {
	out := make([]FieldDesc, len(m.fields))
	for i, f := range m.fields {
		out[i] = FieldDesc{Number: f.num, Name: f.name, Kind: f.kind, Repeated: f.list}
	}
	return out
}

// index returns the index in m.fields of the field with number num, or -1.
func (m *Message) index(num protowire.Number) int {
	if m == nil {
		return -1
	}
	if num < protowire.Number(len(m.dense)) {
		return int(m.dense[num]) - 1
	}
	i, ok := slices.BinarySearchFunc(m.fields, num, func(f fieldInfo, n protowire.Number) int { return int(f.num - n) })
	if ok {
		return i
	}
	return -1
}

// field returns the field with number num, or nil.
func (m *Message) field(num protowire.Number) *fieldInfo {
	if i := m.index(num); i >= 0 {
		return &m.fields[i]
	}
	return nil
}

// BuildOptions configure a Builder.
type BuildOptions struct {
	// StringWrappers are messages shown as a string, e.g. a UUID message
	// wrapping its text form: the value of their field 1 when it is all
	// they hold on the wire, length-delimited (the last occurrence wins;
	// "" when they hold nothing; a value that is not UTF-8 is an issue).
	// One that holds anything else is shown raw, with an issue.
	StringWrappers []protoreflect.FullName
}

// Builder turns descriptors into Messages, once per message and enum, so
// that messages which refer to each other share their Message. It is not
// safe for concurrent use; the Messages it returns are.
type Builder struct {
	opt   BuildOptions
	msgs  map[protoreflect.FullName]*Message
	enums map[protoreflect.FullName]*enumInfo
}

// NewBuilder returns a Builder.
func NewBuilder(opt BuildOptions) *Builder {
	return &Builder{opt: opt, msgs: map[protoreflect.FullName]*Message{}, enums: map[protoreflect.FullName]*enumInfo{}}
}

// Message returns the Message of md, building it (and the messages and
// enums it refers to) on first use.
func (b *Builder) Message(md protoreflect.MessageDescriptor) *Message {
	if m, ok := b.msgs[md.FullName()]; ok {
		return m
	}
	m := &Message{name: string(md.FullName()), wrap: slices.Contains(b.opt.StringWrappers, md.FullName())}
	b.msgs[md.FullName()] = m // before the fields: messages may nest themselves
	fds := md.Fields()
	m.fields = make([]fieldInfo, 0, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		f := fieldInfo{num: fd.Number(), name: string(fd.Name()), kind: fd.Kind(), list: fd.IsList() || fd.IsMap()}
		switch fd.Kind() {
		case protoreflect.MessageKind, protoreflect.GroupKind:
			f.msg = b.Message(fd.Message())
		case protoreflect.EnumKind:
			f.enum = b.enum(fd.Enum())
		}
		f.packed = f.list && !fd.IsMap() && scalarNumber(fd.Kind())
		m.fields = append(m.fields, f)
	}
	slices.SortFunc(m.fields, func(a, b fieldInfo) int { return int(a.num - b.num) })
	m.simple = len(m.fields) <= 64
	for _, f := range m.fields {
		if f.list {
			m.simple = false
		}
	}
	top := 0
	for _, f := range m.fields {
		if f.num < maxDenseFieldNumber {
			top = int(f.num) + 1
		}
	}
	if top > 0 && len(m.fields) < 127 {
		m.dense = make([]int8, top)
		for i, f := range m.fields {
			if f.num < protowire.Number(top) {
				m.dense[f.num] = int8(i + 1)
			}
		}
	}
	return m
}

func (b *Builder) enum(ed protoreflect.EnumDescriptor) *enumInfo {
	if e, ok := b.enums[ed.FullName()]; ok {
		return e
	}
	e := &enumInfo{name: string(ed.FullName())}
	vs := ed.Values()
	for i := range vs.Len() {
		v := vs.Get(i)
		n := v.Number()
		if n >= 0 && n < 256 {
			for len(e.dense) <= int(n) {
				e.dense = append(e.dense, "")
			}
			if e.dense[n] == "" {
				e.dense[n] = string(v.Name())
			}
			continue
		}
		if e.other == nil {
			e.other = map[int32]string{}
		}
		if _, dup := e.other[int32(n)]; !dup {
			e.other[int32(n)] = string(v.Name())
		}
	}
	b.enums[ed.FullName()] = e
	return e
}

// scalarNumber reports whether a repeated field of kind k may be packed.
func scalarNumber(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind, protoreflect.GroupKind:
		return false
	}
	return true
}

// wireOK reports whether wire type typ fits field f.
func wireOK(f *fieldInfo, typ protowire.Type) bool {
	switch f.kind {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return typ == protowire.BytesType
	case protoreflect.GroupKind:
		return typ == protowire.StartGroupType
	}
	if f.packed && typ == protowire.BytesType {
		return true
	}
	return typ == wireOf(f.kind)
}

// wireOf returns the unpacked wire type of a scalar kind.
func wireOf(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}
