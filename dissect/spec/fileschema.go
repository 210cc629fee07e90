package spec

import (
	"encoding/json"
	"fmt"

	"github.com/dissect-tools/dissect/dissect/framing"
)

// FileSchema returns the JSON Schema (2020-12) of a protocol file, for
// editors that complete YAML from a schema. It is made from the key lists
// the loader accepts, so the two cannot disagree; the published copy is
// docs/protocol-file.schema.json (TestFileSchema compares them).
func FileSchema() []byte {
	num := map[string]any{"type": "integer"}
	str := map[string]any{"type": "string"}
	boolean := map[string]any{"type": "boolean"}
	order := map[string]any{"enum": []string{"le", "be"}}
	ref := map[string]any{"oneOf": []any{num, str}}
	bytesOf := map[string]any{"oneOf": []any{str, map[string]any{"type": "array", "items": map[string]any{"oneOf": []any{num, str}}}}}
	obj := func(keys []string, props map[string]any, doc string) map[string]any {
		p := map[string]any{}
		for _, k := range keys {
			v, ok := props[k]
			if !ok {
				panic(fmt.Sprintf("spec.FileSchema: key %q has no schema", k))
			}
			p[k] = v
		}
		return map[string]any{"type": "object", "description": doc, "properties": p, "additionalProperties": false}
	}
	with := func(s map[string]any, doc string) map[string]any {
		out := map[string]any{"description": doc}
		for k, v := range s {
			out[k] = v
		}
		return out
	}
	sw := obj(switchKeys, map[string]any{
		"switch-on": with(str, "the earlier integer field whose value chooses the type"),
		"cases":     map[string]any{"type": "object", "description": "VALUE: TYPE; _: the type of the other values", "additionalProperties": str},
	}, "a type chosen by an earlier field")
	field := obj(fieldKeys, map[string]any{
		"id":           with(str, "the field's key in records; without id the bytes are read, not recorded"),
		"type":         map[string]any{"description": "u1…u8, s1…s8 (le, be), b1…b64, f2, f4, f8, bool, str, strz, a type of the file; none: bytes", "oneOf": []any{str, sw}},
		"size":         with(ref, "bytes of bytes, text or a type: a number or an earlier integer field"),
		"size-eos":     with(boolean, "to the end of the bytes"),
		"contents":     with(bytesOf, "the bytes the field must hold"),
		"encoding":     map[string]any{"enum": []string{"UTF-8", "utf-8", "ASCII", "ascii"}},
		"terminator":   with(num, "the byte that ends the text or bytes"),
		"pad-right":    with(num, "the byte stripped from the end"),
		"repeat":       map[string]any{"enum": []string{"expr", "eos", "until"}, "description": "an array: a count, to the end, until a value"},
		"repeat-expr":  with(ref, "how many items: a number or an earlier integer field"),
		"repeat-until": map[string]any{"description": "the item value that ends the array (0, or _ == 0)", "oneOf": []any{num, str}},
		"enum":         with(str, "an enum of the file: the integer is recorded as its name"),
		"valid":        map[string]any{"description": "the values allowed: one, or min, max, eq, any-of", "oneOf": []any{num, obj(validKeys, map[string]any{"min": num, "max": num, "eq": num, "any-of": map[string]any{"type": "array", "items": num}}, "a range")}},
		"doc":          with(str, "one line"),
		"unit":         with(str, "m, deg, ms, V, ..."),
		"role":         map[string]any{"enum": roleNames(), "description": "what the field means to consumers"},
		"scale":        map[string]any{"type": "number", "description": "the integer times scale, plus offset, is recorded as a float"},
		"offset":       map[string]any{"type": "number", "description": "added after scale"},
		"fixed-point":  with(num, "fraction bits: scale 2^-N"),
	}, "one field")
	seq := map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/field"}}
	crc := map[string]any{"oneOf": []any{
		map[string]any{"enum": framing.CRCPresetNames()},
		obj(crcKeys, map[string]any{"width": num, "poly": num, "init": num, "refin": boolean, "refout": boolean, "xorout": num}, "a CRC's parameters (Williams' model)"),
	}}
	top := obj(topKeys, map[string]any{
		"meta": obj(metaKeys, map[string]any{
			"id":         map[string]any{"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,39}$", "description": "the -d name and proto key"},
			"title":      with(str, "one line"),
			"endian":     with(order, "byte order of fields that do not say theirs"),
			"bit-endian": with(order, "order of bit fields in their bytes"),
			"transports": map[string]any{"type": "array", "items": map[string]any{"enum": []string{"tcp", "udp", "serial"}}},
			"ports":      map[string]any{"type": "array", "items": map[string]any{"type": "string", "pattern": "^(tcp|udp)/[0-9]+$"}},
			"license":    str, "xref": map[string]any{}, "ks-version": map[string]any{},
		}, "the protocol's name and where it runs"),
		"doc": with(str, "what the protocol is"),
		"frame": obj(frameKeys, map[string]any{
			"sync":    with(bytesOf, "the bytes every frame starts with"),
			"size":    with(num, "every frame's size"),
			"length":  obj(lengthKeys, map[string]any{"at": num, "type": map[string]any{"type": "string", "pattern": "^u[1-8](le|be)?$"}, "adjust": num}, "the length field: the frame is its value plus adjust"),
			"max":     with(num, "the largest frame"),
			"confirm": with(num, "whole frames in a row that confirm a resync without a 16-bit check"),
			"check": obj(checkKeys, map[string]any{
				"crc": crc, "sum": map[string]any{"enum": framing.SumNames()},
				"from": num, "to": num, "at": num, "endian": order,
			}, "the frame's check and the bytes it covers: frame[from : end+to]"),
			"body": obj(bodyKeys, map[string]any{"from": num, "to": num}, "the bytes the fields are read from"),
		}, "how frames are found and checked"),
		"seq": with(seq, "the fields every frame starts with"),
		"messages": obj(messagesKeys, map[string]any{
			"switch-on": with(str, "the frame field that names the message type"),
			"cases":     map[string]any{"type": "object", "additionalProperties": str},
			"default":   with(str, "the type of the other values"),
		}, "the message types"),
		"types": map[string]any{"type": "object", "additionalProperties": obj(typeKeys, map[string]any{
			"doc": str, "seq": seq, "exchange": map[string]any{"enum": []string{"request", "reply"}},
			"answers": with(str, "the request type a reply answers (it gets rtt_ms)"), "heartbeat": boolean,
		}, "a type")},
		"enums": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "object",
			"additionalProperties": map[string]any{"oneOf": []any{str, map[string]any{"type": "object", "properties": map[string]any{"id": str, "doc": str}}}}}},
	}, "a dissect protocol file (docs/protocol-file.md)")
	top["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	top["$id"] = "https://github.com/dissect-tools/dissect/docs/protocol-file.schema.json"
	top["title"] = "dissect protocol file"
	top["required"] = []string{"meta", "seq"}
	top["$defs"] = map[string]any{"field": field}
	b, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}
