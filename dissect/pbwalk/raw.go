package pbwalk

import (
	"strconv"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"

	"google.golang.org/protobuf/encoding/protowire"
)

// A field occurrence the message cannot hold is shown raw: not under a
// key of its message (a key the message does not declare, or a value of
// another kind than its field's), but as one item of the raw list Decode
// returns beside the fields, saying where it was met ([RawItemDecl]).
// Without a message every occurrence is shown raw.

// seg is one message being decoded below the top level: the field that
// holds it (its name, or "" for a number the message lacks), its
// occurrence on the wire when the field is repeated or comes more than
// once in its message (-1 otherwise), and its Message (nil: a message of
// raw fields).
type seg struct {
	name string
	num  protowire.Number
	idx  int32
	msg  *Message
}

// leaf is one field occurrence shown raw. data aliases the input.
type leaf struct {
	parent string
	name   string
	num    protowire.Number
	typ    protowire.Type
	as     uint8 // leafUint, leafText or leafBytes
	v      uint64
	data   []byte
}

// How a leaf's value is shown.
const (
	leafUint uint8 = iota
	leafText
	leafBytes
)

// Keys of the items of the raw list.
const (
	keyParent   = "parent"
	keyField    = "field"
	keyName     = "name"
	keyWireType = "wire_type"
	keyUint     = "uint"
	keyText     = "text"
	keyBytes    = "bytes"
)

// RawItemDecl declares one item of the raw list [Decoder.Decode] returns:
// a field occurrence shown raw. parent is where its message sits: "" for
// the payload itself, else the fields that hold it from the top (names,
// or numbers the message lacks) joined by ".", each followed by "[i]"
// when the field is repeated or comes more than once in its message, i
// counting its occurrences on the wire ("gestures[1].id", "7.1",
// "2[0].6[1]"; i is the index in the decoded array unless an earlier item
// was shown raw). field is its number, name its name when the message has
// the number (a wire type that does not fit, an enum value the enum
// lacks, a nested message that does not parse), wire_type its wire type
// (as wireName writes it), and then exactly one of uint (varint, fixed32
// and fixed64 values, unsigned), text (a length-delimited value that
// reads as text) or bytes (one that is neither text nor a message; a
// group too deep to walk, or empty). A length-delimited value or group
// that parses as a message (down to [MaxRawDepth]) has no item of its
// own: its fields follow, with parent naming it.
func RawItemDecl() dissect.FieldDecl {
	return dissect.FieldDecl{Kind: dissect.KindObject, Fields: []dissect.FieldDecl{
		{Name: keyParent, Kind: dissect.KindString, Required: true, Doc: `path of the message holding the field: "" for the payload itself, "gestures[1]" ([i]: the i-th occurrence on the wire), "7.1" inside fields shown raw`},
		{Name: keyField, Kind: dissect.KindInt, Required: true, Doc: "field number"},
		{Name: keyName, Kind: dissect.KindString, Doc: "field name, when the schema's message has the number"},
		{Name: keyWireType, Kind: dissect.KindString, Required: true, Enum: []string{"varint", "fixed64", "length-delimited", "group", "fixed32"}, Doc: "wire type of the occurrence"},
		{Name: keyUint, Kind: dissect.KindUint, Doc: "varint, fixed32 or fixed64 value, unsigned"},
		{Name: keyText, Kind: dissect.KindString, Doc: "length-delimited value that reads as text"},
		{Name: keyBytes, Kind: dissect.KindBytes, Doc: "length-delimited value that is neither text nor a message, or a group too deep to walk"},
	}}
}

// push enters a nested message; pop leaves it.
func (d *Decoder) push(s seg) {
	d.path = append(d.path, s)
	d.parentOK = false
}

func (d *Decoder) pop() {
	d.path = d.path[:len(d.path)-1]
	d.parentOK = false
}

// clearPath drops what the last call kept of its input: the leaves alias
// it.
func (d *Decoder) clearPath() {
	d.top = nil
	clear(d.leaves)
	d.leaves = d.leaves[:0]
	d.path = d.path[:0]
	d.parent, d.parentOK = "", false
}

// enclosing reports whether m is the payload's message or one of the
// messages being decoded: a message nested in itself, whose fields could
// not be declared once and for all (its declaration would never end), is
// shown raw.
func (d *Decoder) enclosing(m *Message) bool {
	if m == d.top {
		return true
	}
	for i := range d.path {
		if d.path[i].msg == m {
			return true
		}
	}
	return false
}

// rawLeaf shows one occurrence of field num (name, when the message has
// it; idx as for Decoder.value) raw, at nesting depth depth: varints and fixed values as unsigned
// integers; a length-delimited value as text when printable, else as the
// raw fields of a nested message when it parses as one (down to
// MaxRawDepth), else as text when UTF-8, else as bytes; a group as the raw
// fields of its body, or as bytes when empty or too deep.
func (d *Decoder) rawLeaf(name string, num protowire.Number, typ protowire.Type, v uint64, data []byte, depth int, idx int32) {
	switch typ {
	case protowire.BytesType:
		if len(data) > 0 && !printable(data) {
			if d.rawMessage(name, num, data, depth, idx) {
				return
			}
			if !utf8.Valid(data) {
				d.addLeaf(name, num, typ, leafBytes, 0, data)
				return
			}
		}
		d.addLeaf(name, num, typ, leafText, 0, data)
	case protowire.StartGroupType:
		if len(data) == 0 || !d.rawMessage(name, num, data, depth, idx) {
			d.addLeaf(name, num, typ, leafBytes, 0, data)
		}
	default:
		d.addLeaf(name, num, typ, leafUint, v, nil)
	}
}

// rawMessage shows data as the raw fields of a nested message, when it
// parses as one within MaxRawDepth.
func (d *Decoder) rawMessage(name string, num protowire.Number, data []byte, depth int, idx int32) bool {
	if depth+1 >= MaxRawDepth {
		return false
	}
	sc, e := d.scan(nil, data, depth+1)
	if e.failed() {
		return false
	}
	d.push(seg{name: name, num: num, idx: idx})
	d.fill(nil, data, depth+1, sc)
	d.pop()
	return true
}

func (d *Decoder) addLeaf(name string, num protowire.Number, typ protowire.Type, as uint8, v uint64, data []byte) {
	if !d.build {
		return
	}
	d.leaves = append(d.leaves, leaf{parent: d.parentPath(), name: name, num: num, typ: typ, as: as, v: v, data: data})
}

// parentPath returns the path of the message being decoded: the fields
// that hold it from the top (names, or numbers where the message lacks
// them) joined by ".", each followed by "[i]" when the field is repeated
// or comes more than once (i counts its occurrences on the wire). It is
// built once per message.
func (d *Decoder) parentPath() string {
	if d.parentOK {
		return d.parent
	}
	var buf [64]byte
	b := buf[:0]
	for i, s := range d.path {
		if i > 0 {
			b = append(b, '.')
		}
		if s.name != "" {
			b = append(b, s.name...)
		} else {
			b = strconv.AppendInt(b, int64(s.num), 10)
		}
		if s.idx >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.idx), 10)
			b = append(b, ']')
		}
	}
	d.parent, d.parentOK = d.intern(b), true
	return d.parent
}

// buildRaw builds the raw list from d.leaves.
func (d *Decoder) buildRaw() []dissect.Field {
	if len(d.leaves) == 0 {
		return nil
	}
	items := d.rec.Alloc(len(d.leaves))
	n := 0
	for i := range d.leaves {
		n += 4
		if d.leaves[i].name != "" {
			n++
		}
	}
	fs := d.rec.Alloc(n)
	for i := range d.leaves {
		l := &d.leaves[i]
		k := 4
		if l.name != "" {
			k = 5
		}
		o := fs[:0:k]
		o = append(o, dissect.Field{Key: keyParent, Value: dissect.Str(l.parent)}, dissect.Field{Key: keyField, Value: dissect.Int(int64(l.num))})
		if l.name != "" {
			o = append(o, dissect.Field{Key: keyName, Value: dissect.Str(l.name)})
		}
		o = append(o, dissect.Field{Key: keyWireType, Value: dissect.Str(wireName(l.typ))})
		switch l.as {
		case leafUint:
			o = append(o, dissect.Field{Key: keyUint, Value: dissect.Uint(l.v)})
		case leafText:
			o = append(o, dissect.Field{Key: keyText, Value: dissect.Str(d.intern(l.data))})
		default:
			o = append(o, dissect.Field{Key: keyBytes, Value: dissect.Bytes(l.data)})
		}
		fs = fs[k:]
		items[i] = dissect.Elem(dissect.Object(o))
	}
	return items
}
