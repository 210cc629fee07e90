package dissect

import (
	"encoding/json"
	"strconv"
)

// The JSON Schema (2020-12) of records, made from the declarations: the
// contract `dissect protocols --schema` prints and tools check against.

// SchemaURI is the dialect of the schemas made here.
const SchemaURI = "https://json-schema.org/draft/2020-12/schema"

// Patterns of the string forms of docs/output.md.
const (
	patternTime  = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$`
	patternBytes = `^([0-9a-f]{2})*$`
)

// AppendSchemaLine appends the `dissect protocols --schema` line of one
// record type: {"proto": proto, "type": typ, "schema": S}, S the schema
// of a whole JSON record of that type. decls are the type's declarations:
// one, or one per variant (S is then anyOf the variants). proto "*"
// leaves the record's proto free (gap, skipped); typ "*" its type.
func AppendSchemaLine(b []byte, proto, typ string, decls []*TypeDecl) []byte {
	b = append(b, `{"proto":`...)
	b = appendJSONString(b, proto)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, typ)
	b = append(b, `,"schema":`...)
	if len(decls) == 1 {
		b = AppendRecordSchema(b, proto, decls[0], true)
	} else {
		b = append(b, `{"$schema":"`+SchemaURI+`","title":`...)
		b = appendJSONString(b, proto+" "+typ)
		b = append(b, `,"anyOf":[`...)
		for i, t := range decls {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendRecordSchema(b, proto, t, false)
		}
		b = append(b, "]}"...)
	}
	return append(b, "}\n"...)
}

// AppendRecordSchema appends the JSON Schema of a whole JSON record of t
// (docs/output.md): its common keys, and "fields" with exactly the
// declared keys. top adds "$schema".
func AppendRecordSchema(b []byte, proto string, t *TypeDecl, top bool) []byte {
	return appendRecordSchema(b, proto, t, top, false)
}

// AppendFoxgloveRecordSchema appends the schema of a whole JSON record of
// t as AppendRecordSchema does, with "$schema", in the form from which
// Foxglove and Lichtblick make the datatypes of an MCAP channel (-o mcap):
// they read a property only by its "type", which must be one word
// (boolean, integer, number, string, object with properties, or array of
// one of the others but array), and they refuse the whole schema
// otherwise. So every value has its "type" beside its const or enum, and
// the fields that no such type describes are declared, in the form of
// AppendRecordSchema, in an "allOf" beside the properties, which Foxglove
// does not read: floats (-o json writes NaN and the infinities as
// strings), arrays of floats and arrays of arrays. The records it accepts
// are those AppendRecordSchema accepts.
func AppendFoxgloveRecordSchema(b []byte, proto string, t *TypeDecl) []byte {
	return appendRecordSchema(b, proto, t, true, true)
}

// appendRecordSchema appends the schema of a record of t; fox selects the
// form of AppendFoxgloveRecordSchema.
func appendRecordSchema(b []byte, proto string, t *TypeDecl, top, fox bool) []byte {
	b = append(b, '{')
	if top {
		b = append(b, `"$schema":"`+SchemaURI+`",`...)
	}
	b = append(b, `"title":`...)
	b = appendJSONString(b, proto+" "+t.Table())
	if t.Doc != "" {
		b = append(b, `,"description":`...)
		b = appendJSONString(b, t.Doc)
	}
	b = append(b, `,"type":"object","properties":{`...)
	b = appendEnvelopeProperties(b, proto, t.Type, fox)
	b = append(b, `,"fields":`...)
	var v *Variant
	if t.Variant != nil {
		v = t.Variant
	}
	b = appendObjectSchema(b, t.Fields, v, fox)
	return appendRecordEnd(b)
}

// AppendUndeclaredRecordSchema appends the schema of a record whose type
// its protocol does not declare (a protocol's bug): the envelope, and
// "fields" any object; in the form of AppendFoxgloveRecordSchema.
func AppendUndeclaredRecordSchema(b []byte) []byte {
	b = append(b, `{"$schema":"`+SchemaURI+`","title":"dissect record without a declaration",`...)
	b = append(b, `"description":"A record as -o json writes it; its protocol does not declare its type, so its fields are not typed.",`...)
	b = append(b, `"type":"object","properties":{`...)
	b = appendEnvelopeProperties(b, "*", "*", true)
	b = append(b, `,"fields":{"type":"object","properties":{}}`...)
	return appendRecordEnd(b)
}

// appendEnvelopeProperties appends the properties of the envelope's JSON
// keys; proto and typ are the values of proto and type ("*": any).
func appendEnvelopeProperties(b []byte, proto, typ string, fox bool) []byte {
	for i, k := range JSONEnvelope() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k.Name)
		b = append(b, ':')
		switch {
		case k.Name == "proto":
			b = constOrString(b, proto, fox)
		case k.Name == "type":
			b = constOrString(b, typ, fox)
		default:
			b = appendEnvelopeSchema(b, k, fox)
		}
	}
	return b
}

// appendRecordEnd appends what follows a record's fields: warnings, raw
// (-x), the required keys (the envelope's and fields), and closes it.
func appendRecordEnd(b []byte) []byte {
	b = append(b, `,"warnings":{"type":"array","items":{"type":"string"}},"raw":{"type":"string","pattern":`...)
	b = appendJSONString(b, patternBytes)
	b = append(b, `}},"required":[`...)
	for _, k := range JSONEnvelope() {
		b = appendJSONString(b, k.Name)
		b = append(b, ',')
	}
	return append(b, `"fields"],"additionalProperties":false}`...)
}

// JSONEnvelope returns the envelope's JSON keys, in their order.
func JSONEnvelope() []EnvelopeKey {
	var keys []EnvelopeKey
	for _, k := range Envelope() {
		if k.JSON {
			keys = append(keys, k)
		}
	}
	return keys
}

// appendEnvelopeSchema appends the schema of an envelope key's value: a
// time as its RFC 3339 pattern, an enumerated string (with its "type" for
// Foxglove), an integer with its minimum, a string.
func appendEnvelopeSchema(b []byte, k EnvelopeKey, fox bool) []byte {
	switch {
	case k.Kind == KindTime:
		b = append(b, `{"type":"string","pattern":`...)
		b = appendJSONString(b, patternTime)
	case len(k.Enum) > 0:
		b = append(b, '{')
		if fox {
			b = append(b, `"type":"string",`...)
		}
		b = append(b, `"enum":[`...)
		for i, e := range k.Enum {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e)
		}
		b = append(b, ']')
	case k.Kind == KindInt:
		b = append(b, `{"type":"integer"`...)
		if k.Min0 {
			b = append(b, `,"minimum":0`...)
		}
	default:
		b = append(b, `{"type":"string"`...)
	}
	return append(b, '}')
}

func constOrString(b []byte, s string, fox bool) []byte {
	if s == "*" {
		return append(b, `{"type":"string"}`...)
	}
	b = append(b, '{')
	if fox {
		b = append(b, `"type":"string",`...)
	}
	b = append(b, `"const":`...)
	b = appendJSONString(b, s)
	return append(b, '}')
}

// appendObjectSchema appends the schema of an object with the keys fs;
// v pins its variant key to one value. fox declares the keys Foxglove
// cannot type (foxgloveTyped) in an allOf, and closes the object with
// unevaluatedProperties, which sees them there.
func appendObjectSchema(b []byte, fs []FieldDecl, v *Variant, fox bool) []byte {
	b = append(b, `{"type":"object",`...)
	rest := 0
	if fox {
		for i := range fs {
			if !fs[i].foxgloveTyped() {
				rest++
			}
		}
	}
	b = appendProperties(b, fs, v, fox, true)
	if rest > 0 {
		b = append(b, `,"allOf":[{`...)
		b = appendProperties(b, fs, nil, fox, false)
		b = append(b, "}]"...)
	}
	if fox {
		return append(b, `,"unevaluatedProperties":false}`...)
	}
	return append(b, `,"additionalProperties":false}`...)
}

// appendProperties appends "properties" and "required" of the keys fs:
// all of them, or with fox those that are (typed) or are not
// foxgloveTyped.
func appendProperties(b []byte, fs []FieldDecl, v *Variant, fox, typed bool) []byte {
	in := func(d *FieldDecl) bool { return !fox || d.foxgloveTyped() == typed }
	b = append(b, `"properties":{`...)
	n := 0
	for i := range fs {
		if !in(&fs[i]) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendJSONString(b, fs[i].Name)
		b = append(b, ':')
		if v != nil && fs[i].Name == v.Key {
			b = constOrString(b, v.Value, fox)
			continue
		}
		b = fs[i].appendSchema(b, fox && typed)
	}
	b = append(b, `},"required":[`...)
	n = 0
	for i := range fs {
		if in(&fs[i]) && (fs[i].Required || v != nil && fs[i].Name == v.Key) {
			if n > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, fs[i].Name)
			n++
		}
	}
	return append(b, ']')
}

// foxgloveTyped says whether Foxglove's one-word "type" describes every
// value of d: not a float, which may be a string, nor an array of floats
// or of arrays.
func (d *FieldDecl) foxgloveTyped() bool {
	switch d.Kind {
	case KindFloat, KindFloat32:
		return false
	case KindArray:
		return d.Elem != nil && d.Elem.Kind != KindArray && d.Elem.foxgloveTyped()
	}
	return true
}

// appendSchema appends the schema of one value of d, as -o json writes
// it: floats as numbers or the strings "NaN", "Inf", "-Inf"; bytes as
// lowercase hex; times as RFC 3339 UTC. fox: in Foxglove's form (d is
// foxgloveTyped).
func (d *FieldDecl) appendSchema(b []byte, fox bool) []byte {
	if d.Kind == KindObject {
		return appendObjectSchema(b, d.Fields, nil, fox)
	}
	b = append(b, '{')
	if desc := d.description(); desc != "" {
		b = append(b, `"description":`...)
		b = appendJSONString(b, desc)
		b = append(b, ',')
	}
	switch d.Kind {
	case KindInt:
		b = append(b, `"type":"integer"`...)
	case KindUint:
		b = append(b, `"type":"integer","minimum":0`...)
	case KindFloat, KindFloat32:
		b = append(b, `"anyOf":[{"type":"number"},{"enum":["NaN","Inf","-Inf"]}]`...)
	case KindBool:
		b = append(b, `"type":"boolean"`...)
	case KindString:
		b = append(b, `"type":"string"`...)
		if len(d.Enum) > 0 {
			b = append(b, `,"enum":[`...)
			for i, e := range d.Enum {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, e)
			}
			b = append(b, ']')
		}
	case KindBytes:
		b = append(b, `"type":"string","pattern":`...)
		b = appendJSONString(b, patternBytes)
	case KindTime:
		b = append(b, `"type":"string","pattern":`...)
		b = appendJSONString(b, patternTime)
	case KindArray:
		b = append(b, `"type":"array","items":`...)
		b = d.Elem.appendSchema(b, fox)
	}
	return append(b, '}')
}

// description is the field's doc and unit, for a schema.
func (d *FieldDecl) description() string {
	switch {
	case d.Unit == "":
		return d.Doc
	case d.Doc == "":
		return "unit: " + d.Unit
	}
	return d.Doc + " (unit: " + d.Unit + ")"
}

// appendJSONString appends s as a JSON string (declarations are ours, so
// this is no hot path).
func appendJSONString(b []byte, s string) []byte {
	j, err := json.Marshal(s)
	if err != nil {
		return strconv.AppendQuote(b, s) // unreachable: strings always marshal
	}
	return append(b, j...)
}
