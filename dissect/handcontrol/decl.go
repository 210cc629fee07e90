package handcontrol

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/pbwalk"
)

// The declarations of HandControl records ([dissect.Info.Types]) come from
// the schema set the protocol value loaded: every type is declared once
// per role it can have, as a variant of the "role" field, since a request
// and a reply sharing a code carry different messages. The payload
// object declares every field of the message(s) that code and role may be
// decoded with ([pbwalk.Message.Decl]): the v2 message and its v1
// alternative, or the user's; for a type-13 reply also the GetMioPatterns
// message of the device's quirk. Their fields are merged by name.

// maxDeclFields bounds the fields one payload declares (a user schema of
// many messages nested in each other could otherwise declare without
// end).
const maxDeclFields = 4096

// types declares the records of the protocol with schema set s.
func (s *schemaSet) types() ([]dissect.TypeDecl, error) {
	var out []dissect.TypeDecl
	for code := range numCodes + 1 {
		for _, host := range []bool{true, false} {
			t, err := s.decl(byte(code), host)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// decl declares the records of code (numCodes: the unknown codes) sent
// by the host or by the device.
func (s *schemaSet) decl(code byte, host bool) (dissect.TypeDecl, error) {
	role := roleOf(code, host)
	t := dissect.TypeDecl{
		Type:    typeName(code),
		Variant: &dissect.Variant{Key: "role", Value: role},
		Doc:     declDoc(code, host),
	}
	request := host && code >= codeACK && code < numCodes // put in flight (frame.go)
	reply := !host && isResponse(code)
	codeField := dissect.FieldDecl{Name: "code", Kind: dissect.KindInt, Required: true, Doc: "frame type code (the record type is its name)"}
	if request {
		t.Exchange = dissect.Exchange{Role: dissect.Request}
		codeField.Role = dissect.RoleRequestKey
	}
	if reply {
		t.Exchange = dissect.Exchange{Role: dissect.Reply}
	}
	payload, names, err := s.payloadDecl(code, host)
	if err != nil {
		return t, err
	}
	item := pbwalk.RawItemDecl()
	t.Fields = []dissect.FieldDecl{
		codeField,
		{Name: "role", Kind: dissect.KindString, Required: true, Enum: []string{role}, Doc: `"request" (host), "response" or "telemetry" (device)`},
		{Name: "crc", Kind: dissect.KindInt, Required: true, Doc: "CRC-8 byte on the wire"},
		{Name: "crc_ok", Kind: dissect.KindBool, Required: true, Doc: "CRC matches under either convention"},
		{Name: "crc_scope", Kind: dissect.KindString, Enum: []string{scopeHeader, scopeSFD}, Doc: "what a valid CRC covers"},
		{Name: "payload", Kind: dissect.KindObject, Fields: payload, Doc: "protobuf payload decoded with the schema, in wire order; absent with payload_hex"},
		{Name: "payload_raw", Kind: dissect.KindArray, Elem: &item, Doc: "payload fields the schema's message cannot hold (all of them without a schema), one item per occurrence"},
		{Name: "schema", Kind: dissect.KindString, Enum: names, Doc: "schema the payload was decoded with"},
		{Name: "payload_hex", Kind: dissect.KindBytes, Doc: "payload that does not parse as protobuf"},
	}
	if reply {
		t.Fields = append(t.Fields,
			dissect.FieldDecl{Name: "request_code", Kind: dissect.KindInt, Role: dissect.RoleRequestKey, Doc: "on a reply matched to its request: the request's code"},
			dissect.FieldDecl{Name: "latency_ms", Kind: dissect.KindFloat, Unit: "ms", Role: dissect.RoleLatency, Doc: "on a matched reply: reply minus request capture time"},
		)
	}
	return t, nil
}

// roleOf returns the role field of a frame of code from that side.
func roleOf(code byte, host bool) string {
	switch {
	case host:
		return RoleRequest
	case code == codeTelemetry:
		return RoleTelemetry
	}
	return RoleResponse
}

// declDoc says in one line what a variant is.
func declDoc(code byte, host bool) string {
	what := "code " + strconv.Itoa(int(code))
	if int(code) >= numCodes {
		what = "a code above 17"
	}
	switch {
	case int(code) >= numCodes || code == codeEmpty:
		return what + " from the " + side(host) + " (invalid; payload decoded raw)"
	case !sentBy(code, host):
		return what + " from the " + side(host) + ", which does not send it (decoded with a warning)"
	case host:
		return what + ": the host's request"
	case code == codeTelemetry:
		return what + ": telemetry the device pushes"
	}
	return what + ": the device's reply"
}

// payloadDecl declares the payload of code from that side, and lists the
// schema names it may be written with.
func (s *schemaSet) payloadDecl(code byte, host bool) ([]dissect.FieldDecl, []string, error) {
	type msg struct {
		m   *pbwalk.Message
		doc string // prefix of its fields' docs
	}
	var msgs []msg
	var names []string
	add := func(m *pbwalk.Message, name string, alt *pbwalk.Message, doc string) {
		if m == nil || m == emptyMsg {
			// No schema, or a code without payload: bytes are decoded raw.
			names = appendNew(names, schemaRaw)
			if m == nil {
				return
			}
		}
		msgs = append(msgs, msg{m, doc})
		names = appendNew(names, name)
		if alt != nil {
			msgs = append(msgs, msg{alt, "v1: "})
			names = appendNew(names, schemaV1)
		}
	}
	m, name, alt := s.message(code, host, false)
	add(m, name, alt, "")
	if !host && code == codeGetTelemetry && !s.raw {
		m, name, alt := s.message(code, host, true)
		add(m, name, alt, "") // the device answers GetMioPatterns with type 13
	}
	var fields []dissect.FieldDecl
	for _, m := range msgs {
		d, err := m.m.Decl(pbwalk.DeclOptions{Max: maxDeclFields, Unit: unit})
		if err != nil {
			return nil, nil, fmt.Errorf("handcontrol: %s %s: %v", typeName(code), roleOf(code, host), err)
		}
		prefixDocs(d, m.doc)
		if fields, err = mergeFields(fields, d, "payload"); err != nil {
			return nil, nil, fmt.Errorf("handcontrol: %s %s: %v", typeName(code), roleOf(code, host), err)
		}
	}
	return fields, names, nil
}

// prefixDocs starts the docs of fs (and of their nested fields) with
// prefix.
func prefixDocs(fs []dissect.FieldDecl, prefix string) {
	if prefix == "" {
		return
	}
	for i := range fs {
		fs[i].Doc = prefix + fs[i].Doc
		if e := fs[i].Elem; e != nil {
			prefixDocs(e.Fields, prefix)
		}
		prefixDocs(fs[i].Fields, prefix)
	}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// unit returns the unit of a field of the built-in messages (protocols.md
// §1.5, §1.6), by message and field name: times in Unix seconds, the
// telemetry interval in ms, power in % (0-100).
func unit(message, field string) string {
	switch {
	case field == "last_time_sync" || field == "time_sync":
		return "s"
	case message == "telemetry.StartTelemetry" && field == "interval_ms":
		return "ms"
	case message == "telemetry.Telemetry" && field == "power":
		return "%"
	}
	return ""
}

// mergeFields returns the fields of a followed by those of b that a lacks;
// a field both declare must have one kind (objects and arrays merge their
// contents, enums the union of their values). path names the object in
// errors.
func mergeFields(a, b []dissect.FieldDecl, path string) ([]dissect.FieldDecl, error) {
	out := slices.Clone(a)
	for _, f := range b {
		i := slices.IndexFunc(out, func(g dissect.FieldDecl) bool { return g.Name == f.Name })
		if i < 0 {
			out = append(out, f)
			continue
		}
		m, err := mergeField(out[i], f, path+"."+f.Name)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

func mergeField(a, b dissect.FieldDecl, path string) (dissect.FieldDecl, error) {
	if a.Kind != b.Kind {
		return a, fmt.Errorf("%s is %s in one message and %s in another", path, a.Kind, b.Kind)
	}
	if a.Unit != b.Unit {
		a.Unit = ""
	}
	if a.Doc != b.Doc {
		a.Doc += "; " + b.Doc // v1 numbers fields differently
	}
	switch a.Kind {
	case dissect.KindObject:
		fs, err := mergeFields(a.Fields, b.Fields, path)
		a.Fields = fs
		return a, err
	case dissect.KindArray:
		e, err := mergeField(*a.Elem, *b.Elem, path+"[]")
		a.Elem = &e
		return a, err
	case dissect.KindString:
		if len(a.Enum) == 0 || len(b.Enum) == 0 {
			a.Enum = nil // one of them is any string
			return a, nil
		}
		for _, v := range b.Enum {
			a.Enum = appendNew(slices.Clip(a.Enum), v)
		}
	}
	return a, nil
}

// checkQuirk reports whether the GetMioPatterns message of the quirk
// merges with the GetTelemetry reply's message into one declaration.
func (s *schemaSet) checkQuirk() error {
	if s.raw {
		return nil
	}
	var fields []dissect.FieldDecl
	for _, m := range []*pbwalk.Message{s.resp[codeGetTelemetry], s.respV1[codeGetTelemetry], s.quirk, s.quirkV1} {
		if m == nil {
			continue
		}
		d, err := m.Decl(pbwalk.DeclOptions{Max: maxDeclFields})
		if err != nil {
			return nil // New reports it (types)
		}
		if fields, err = mergeFields(fields, d, "payload"); err != nil {
			return err
		}
	}
	return nil
}
