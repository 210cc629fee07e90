package mcapout

import (
	"math"
	"time"
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
	"google.golang.org/protobuf/encoding/protowire"
)

// A pbField is how a declared field is written (protoschema.go numbers
// them): its key, number and kind; an array's items (elem: its number is
// the array's, or 1 inside an L_ message for an array of arrays); an
// object's keys.
type pbField struct {
	key  string
	num  protowire.Number
	kind dissect.Kind
	elem *pbField
	sub  []pbField
}

// pbFields returns the plan of the declared fields fs, numbered as
// addDeclFields numbers them.
func pbFields(fs []dissect.FieldDecl) []pbField {
	out := make([]pbField, len(fs))
	for i := range fs {
		out[i] = pbPlan(&fs[i], protowire.Number(i+1))
		out[i].key = fs[i].Name
	}
	return out
}

func pbPlan(f *dissect.FieldDecl, num protowire.Number) pbField {
	p := pbField{num: num, kind: f.Kind}
	switch f.Kind {
	case dissect.KindObject:
		p.sub = pbFields(f.Fields)
	case dissect.KindArray:
		e := pbField{kind: dissect.KindNull, num: num}
		if f.Elem != nil {
			e = pbPlan(f.Elem, num)
			if f.Elem.Kind == dissect.KindArray {
				e = pbPlan(f.Elem, 1)
			}
		}
		p.elem = &e
	}
	return p
}

// The tags of a record message's fields and warnings.
const (
	pbFieldsTag   = pbFieldsNum<<3 | byte(protowire.BytesType)
	pbWarningsTag = pbWarnings<<3 | byte(protowire.BytesType)
)

// A pbRecord is how the records of a declaration are written: the
// envelope keys their messages hold (messageEnvelope of the keys their
// channels state) and their declared fields.
type pbRecord struct {
	env    []envKey
	names  int // where in env src is followed by dst (appendNames), or -1
	fields []pbField
	flat   []flatField // nil when a declared field is not a scalar (protofast.go)
	last   struct {    // the Src and Dst written last, and their bytes
		src, dst string
		enc      []byte
	}
}

func newPBRecord(t *dissect.TypeDecl, stated []string) *pbRecord {
	p := &pbRecord{env: messageEnvelope(stated), names: -1, fields: pbFields(t.Fields), flat: flatPlan(t.Fields)}
	for i := 0; i+1 < len(p.env); i++ {
		if p.env[i].key.Field == dissect.FieldSrc && p.env[i+1].key.Field == dissect.FieldDst {
			p.names = i
		}
	}
	return p
}

// appendPBRecord appends r as its declaration's message: its envelope
// keys, then its fields and warnings (in that order the file's chunks
// are 4% smaller under zstd than with the envelope last: docs/performance.md).
// A field the declaration does not have, or of another kind than
// declared, is not written (the declaration checks of
// dissect/declcheck.go keep protocols from making such records).
func appendPBRecord(b []byte, r *dissect.Record, p *pbRecord) []byte {
	for i := 0; i < len(p.env); i++ {
		if i == p.names {
			b = p.appendNames(b, r)
			i++
			continue
		}
		b = appendPBEnvelope(b, &p.env[i], r)
	}
	b = append(b, pbFieldsTag)
	at := len(b) + 1
	b = append(b, 0)
	ok := false
	if p.flat != nil {
		b, ok = appendFlatFields(b, r.Fields, p.flat)
	}
	if !ok {
		b = appendPBFields(b, r.Fields, p.fields)
	}
	b = endLen(b, at)
	for _, w := range r.Warnings {
		b = appendUTF8(append(b, pbWarningsTag), w)
	}
	return b
}

// appendPBEnvelope appends r's value of the envelope key e: through the
// key's Values, or, for a key that is a field of the Record, from the
// field itself (its Field), which costs a fifth of a -o mcap run's CPU less
// (TestEnvelopeFastPath holds the two to the same bytes).
func appendPBEnvelope(b []byte, e *envKey, r *dissect.Record) []byte {
	switch e.key.Field {
	case dissect.FieldTime:
		return appendTimestamp(append(b, e.tag), r.Time)
	case dissect.FieldFrame:
		return e.appendVarint(b, uint64(r.Frame))
	case dissect.FieldSrc:
		return e.appendString(b, r.Src)
	case dissect.FieldDst:
		return e.appendString(b, r.Dst)
	case dissect.FieldOffset:
		return e.appendVarint(b, uint64(r.Offset))
	case dissect.FieldLength:
		return e.appendVarint(b, uint64(r.Length))
	}
	if e.key.Values == nil {
		return b
	}
	v, n := e.key.Values(r)
	if n == 0 {
		return b
	}
	switch v[0].Kind() {
	case dissect.KindTime:
		b = appendTimestamp(protowire.AppendTag(b, e.num, protowire.BytesType), v[0].Time())
	case dissect.KindString:
		b = appendPBString(b, e.num, v[0].Str())
	case dissect.KindInt:
		b = appendPBVarint(b, e.num, uint64(v[0].Int()))
	case dissect.KindBool:
		if v[0].Bool() {
			b = appendPBVarint(b, e.num, 1)
		}
	}
	return b
}

// appendVarint appends v as e's field, nothing when it is 0; e.tag is
// e.num's with the varint wire type.
func (e *envKey) appendVarint(b []byte, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendVarint(append(b, e.tag), v)
}

// appendString appends s as e's field, nothing when it is empty; e.tag is
// e.num's with the bytes wire type.
func (e *envKey) appendString(b []byte, s string) []byte {
	if s == "" {
		return b
	}
	return appendUTF8(append(b, e.tag), s)
}

// appendNames appends r's Src and Dst as the envelope keys env[p.names]
// and env[p.names+1]. A record's are its stream's names, the same strings
// record after record: when both are the strings written last (the same
// bytes, found equal at once), their bytes are copied rather than encoded
// and checked as UTF-8 again.
func (p *pbRecord) appendNames(b []byte, r *dissect.Record) []byte {
	if same(r.Src, p.last.src) && same(r.Dst, p.last.dst) {
		return append(b, p.last.enc...) // empty names: nothing, as encoded
	}
	at := len(b)
	b = p.env[p.names].appendString(b, r.Src)
	b = p.env[p.names+1].appendString(b, r.Dst)
	p.last.src, p.last.dst = r.Src, r.Dst
	p.last.enc = append(p.last.enc[:0], b[at:]...)
	return b
}

// same is a == b, true without reading the bytes when they are the same.
func same(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// appendPBString appends a proto3 string field, nothing when s is empty.
func appendPBString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return appendUTF8(appendTag(b, num, protowire.BytesType), s)
}

// appendPBVarint appends a proto3 varint field, nothing when v is 0.
func appendPBVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendVarint(appendTag(b, num, protowire.VarintType), v)
}

// appendTag appends a tag: one byte, without a call, for numbers up to 15.
func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	if num < 16 {
		return append(b, byte(num)<<3|byte(typ))
	}
	return protowire.AppendTag(b, num, typ)
}

// appendTimestamp appends a google.protobuf.Timestamp, length-prefixed
// (at most 17 bytes: its length is one byte).
func appendTimestamp(b []byte, t time.Time) []byte {
	s, ns := uint64(t.Unix()), uint64(t.Nanosecond())
	n := 0
	if s != 0 {
		n += 1 + protowire.SizeVarint(s)
	}
	if ns != 0 {
		n += 1 + protowire.SizeVarint(ns)
	}
	b = append(b, byte(n))
	if s != 0 {
		b = appendVarint(append(b, 1<<3|byte(protowire.VarintType)), s)
	}
	if ns != 0 {
		b = appendVarint(append(b, 2<<3|byte(protowire.VarintType)), ns)
	}
	return b
}

// endLen completes a length-prefixed value whose bytes start at b[at:],
// one byte having been reserved for its length at b[at-1].
func endLen(b []byte, at int) []byte {
	n := len(b) - at
	if n < 0x80 {
		b[at-1] = byte(n)
		return b
	}
	extra := protowire.SizeVarint(uint64(n)) - 1
	b = append(b, make([]byte, extra)...)
	copy(b[at+extra:], b[at:at+n])
	protowire.AppendVarint(b[:at-1], uint64(n))
	return b
}

// appendPBFields appends the fields of fs that plan declares.
func appendPBFields(b []byte, fs []dissect.Field, plan []pbField) []byte {
	next := 0 // records carry their fields in declared order: try it first
	for i := range fs {
		f := &fs[i]
		var p *pbField
		if next < len(plan) && plan[next].key == f.Key {
			p = &plan[next]
		} else {
			for j := range plan {
				if plan[j].key == f.Key {
					p, next = &plan[j], j
					break
				}
			}
			if p == nil {
				continue
			}
		}
		next++
		b = appendPBValue(b, p.num, p, &f.Value)
	}
	return b
}

// appendPBValue appends v as field num of p's kind; nothing when v is of
// another kind (null included).
func appendPBValue(b []byte, num protowire.Number, p *pbField, v *dissect.Value) []byte {
	if v.Kind() != p.kind {
		return b
	}
	switch p.kind {
	case dissect.KindInt, dissect.KindUint, dissect.KindBool:
		return appendScalar(protowire.AppendTag(b, num, protowire.VarintType), v)
	case dissect.KindFloat:
		return appendScalar(protowire.AppendTag(b, num, protowire.Fixed64Type), v)
	case dissect.KindFloat32:
		return appendScalar(protowire.AppendTag(b, num, protowire.Fixed32Type), v)
	case dissect.KindString:
		return appendUTF8(protowire.AppendTag(b, num, protowire.BytesType), v.Str())
	case dissect.KindBytes:
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v.Raw())
	case dissect.KindTime:
		return appendTimestamp(protowire.AppendTag(b, num, protowire.BytesType), v.Time())
	case dissect.KindObject:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		at := len(b) + 1
		return endLen(appendPBFields(append(b, 0), v.Items(), p.sub), at)
	case dissect.KindArray:
		return appendPBArray(b, num, p.elem, v.Items())
	}
	return b
}

// appendScalar appends the value of a packable kind, without a tag.
func appendScalar(b []byte, v *dissect.Value) []byte {
	switch v.Kind() {
	case dissect.KindInt:
		return protowire.AppendVarint(b, protowire.EncodeZigZag(v.Int()))
	case dissect.KindUint:
		return protowire.AppendVarint(b, v.Uint())
	case dissect.KindBool:
		return protowire.AppendVarint(b, protowire.EncodeBool(v.Bool()))
	case dissect.KindFloat:
		return protowire.AppendFixed64(b, math.Float64bits(v.Float()))
	case dissect.KindFloat32:
		return protowire.AppendFixed32(b, math.Float32bits(v.Float32()))
	}
	return b
}

// appendPBArray appends the items of an array as field num: packed for
// numbers and bools, else one field per item; an array of arrays as one
// L_ message per item, whose field 1 is the inner array.
func appendPBArray(b []byte, num protowire.Number, e *pbField, items []dissect.Field) []byte {
	if len(items) == 0 {
		return b
	}
	switch e.kind {
	case dissect.KindInt, dissect.KindUint, dissect.KindBool, dissect.KindFloat, dissect.KindFloat32:
		b = protowire.AppendTag(b, num, protowire.BytesType)
		at := len(b) + 1
		b = append(b, 0)
		for i := range items {
			if items[i].Value.Kind() == e.kind {
				b = appendScalar(b, &items[i].Value)
			}
		}
		return endLen(b, at)
	case dissect.KindArray:
		for i := range items {
			if items[i].Value.Kind() != dissect.KindArray {
				continue
			}
			b = protowire.AppendTag(b, num, protowire.BytesType)
			at := len(b) + 1
			b = endLen(appendPBArray(append(b, 0), 1, e.elem, items[i].Value.Items()), at)
		}
		return b
	}
	for i := range items {
		b = appendPBValue(b, num, e, &items[i].Value)
	}
	return b
}
