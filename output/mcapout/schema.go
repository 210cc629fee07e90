package mcapout

import (
	"fmt"
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
)

// A declared is what the writer uses of one record type's declaration,
// found once: its schema, once written, and the keys of the fields that
// name the sender and its sensor.
type declared struct {
	decl           *dissect.TypeDecl
	sender, sensor string    // keys of the RoleSender and RoleSensor fields; "" for none
	schema         uint16    // the channel schema's id; 0 until written
	pb             *pbRecord // how its records are written as protobuf; nil for JSON
}

// declared returns what the writer knows of r's declaration, or nil when
// r has none (Options.Decl is nil or returns nil).
func (w *Writer) declared(r *dissect.Record) *declared {
	if w.o.Decl == nil {
		return nil
	}
	slot := &w.lastDecl[(uintptr(unsafe.Pointer(unsafe.StringData(r.Type)))>>3^uintptr(len(r.Type)))%uintptr(len(w.lastDecl))]
	if slot.d != nil && slot.typ == r.Type && slot.proto == r.Proto {
		return slot.d
	}
	t := w.o.Decl(r)
	if t == nil {
		return nil
	}
	d, ok := w.decls[t]
	if !ok {
		d = w.newDeclared(t)
	}
	// A declaration without variants is that of every record of its
	// protocol and type (Options.Decl): found again without asking.
	if t.Variant == nil {
		slot.proto, slot.typ, slot.d = r.Proto, r.Type, d
	}
	return d
}

// newDeclared makes and keeps what the writer uses of t.
func (w *Writer) newDeclared(t *dissect.TypeDecl) *declared {
	d := &declared{decl: t}
	if f := t.FieldWith(dissect.RoleSender); f != nil && f.Kind == dissect.KindString {
		d.sender = f.Name
	}
	if f := t.FieldWith(dissect.RoleSensor); f != nil && (f.Kind == dissect.KindInt || f.Kind == dissect.KindUint) {
		d.sensor = f.Name
	}
	w.decls[t] = d
	return d
}

// event reports whether t declares an event every stream may carry (gap,
// skipped), whose schema leaves the record's proto free.
func event(t *dissect.TypeDecl) bool {
	return t.Type == dissect.TypeGap || t.Type == dissect.TypeSkipped
}

// schemaName names the channel schema of a declaration:
// dissect.PROTO.TABLE, or dissect.TABLE for the events of every protocol.
func schemaName(proto string, t *dissect.TypeDecl) string {
	if event(t) {
		return "dissect." + t.Table()
	}
	return "dissect." + proto + "." + t.Table()
}

// recordSchema returns the id of the schema of the channels of r's
// records, writing it first: d's declaration in the form Foxglove reads
// (dissect.AppendFoxgloveRecordSchema), or, for a record without a
// declaration (d nil), dissect.AppendUndeclaredRecordSchema.
func (w *Writer) recordSchema(r *dissect.Record, d *declared) (uint16, error) {
	if d == nil {
		return w.schema("dissect.undeclared", string(dissect.AppendUndeclaredRecordSchema(nil)))
	}
	if d.schema != 0 {
		return d.schema, nil
	}
	proto := r.Proto
	if event(d.decl) {
		proto = "*"
	}
	if w.o.Encoding == EncodingProtobuf {
		pb := newPBRecord(d.decl, channelKeys(d.decl, w.names))
		name, data, err := recordDescriptorSet(proto, d.decl, pb.env)
		if err != nil {
			return 0, fmt.Errorf("mcap: the protobuf message of %s %s: %v", proto, d.decl.Table(), err)
		}
		d.pb = pb
		d.schema, err = w.newSchema(name, EncodingProtobuf, data)
		return d.schema, err
	}
	id, err := w.newSchema(schemaName(proto, d.decl), "jsonschema", dissect.AppendFoxgloveRecordSchema(nil, proto, d.decl))
	d.schema = id
	return id, err
}

// schema returns the id of a schema known by its name, writing it first.
func (w *Writer) schema(name, data string) (uint16, error) {
	if id, ok := w.schemas[name]; ok {
		return id, nil
	}
	id, err := w.newSchema(name, "jsonschema", []byte(data))
	if err == nil {
		w.schemas[name] = id
	}
	return id, err
}

// undeclaredTopic says on /dissect/events, when the topic of records
// without a declaration is made, that their fields are not typed.
func (w *Writer) undeclaredTopic(r *dissect.Record, topic string) error {
	return w.event(r.Time, levelWarning, fmt.Sprintf("%s: %s %s records have no declaration (a protocol's bug): their fields are not typed", topic, r.Proto, r.Type))
}
