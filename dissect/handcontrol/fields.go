package handcontrol

import "github.com/dissect-tools/dissect/dissect"

// fieldInfo documents the fields of HandControl records (a new slice on
// each call: [dissect.Protocol.Info] shares nothing). The payload's keys
// depend on the schema (v2, v1, the user's .proto files, raw): they are
// declared as the wildcard "payload.*".
func fieldInfo() []dissect.FieldInfo {
	return []dissect.FieldInfo{
		{Name: "code", Type: "int", Doc: "frame type code (the record type is its name)"},
		{Name: "role", Type: "string", Doc: `"request" (host), "response" or "telemetry" (device)`},
		{Name: "crc", Type: "int", Doc: "CRC-8 byte on the wire"},
		{Name: "crc_ok", Type: "bool", Doc: "CRC matches under either convention"},
		{Name: "crc_scope", Type: "string", Doc: `what a valid CRC covers: "header+payload" or "sfd+header+payload"`},
		{Name: "payload", Type: "object", Doc: "protobuf payload decoded with the schema, in wire order"},
		{Name: "payload.*", Type: "any", Doc: "payload fields, named by the schema (payload.emg_status, ...)"},
		{Name: "schema", Type: "string", Doc: `schema of the payload: "v2", "v1", "raw" or the user's`},
		{Name: "payload_hex", Type: "bytes", Doc: "payload that does not parse as protobuf, or of a bad-CRC frame"},
		{Name: "request_code", Type: "int", Doc: "on a reply matched to its request: the request's code"},
		{Name: "latency_ms", Type: "float", Doc: "on a matched reply: reply minus request capture time, in ms"},
		{Name: "reason", Type: "string", Types: []string{dissect.TypeSkipped}, Doc: "why the bytes were skipped"},
	}
}
