package deltarobot

import "github.com/dissect-tools/dissect/dissect"

// fieldInfo documents the fields of Deltarobot records (a new slice on
// each call: [dissect.Protocol.Info] shares nothing).
func fieldInfo() []dissect.FieldInfo {
	xyzu := func() []string { return []string{typePosition, typeDirection, typeDesired} }
	return []dissect.FieldInfo{
		{Name: "magic", Type: "string", Types: []string{typeMagic}, Doc: `handshake magic, "DeltaRVr"`},
		{Name: "version", Type: "uint", Types: []string{typeVersion}, Doc: "protocol version"},
		{Name: "x", Type: "float", Types: xyzu(), Doc: "x coordinate (float32)"},
		{Name: "y", Type: "float", Types: xyzu(), Doc: "y coordinate (float32)"},
		{Name: "z", Type: "float", Types: xyzu(), Doc: "z coordinate (float32)"},
		{Name: "u", Type: "float", Types: xyzu(), Doc: "fourth coordinate u (float32)"},
		{Name: "points[]", Type: "array of array of float", Types: []string{typeCurve}, Doc: "curve points, each [x, y, z]: points[0] the first"},
		{Name: "points[][]", Type: "array of float", Types: []string{typeCurve}, Doc: "one point [x, y, z]: points[0][2] the first point's z"},
		{Name: "id", Type: "uint", Types: []string{typePing, typePong}, Doc: "ping id, echoed by the pong"},
		{Name: "id_hex", Type: "string", Types: []string{typePing, typePong}, Doc: "ping id as 16 hex digits"},
		{Name: "rtt_ms", Type: "float", Types: []string{typePong}, Doc: "pong capture time minus its ping's, in ms (ping seen)"},
		{Name: "reason", Type: "string", Types: []string{typeEOT, dissect.TypeSkipped}, Doc: "end_of_transmission text, or why bytes were skipped"},
		{Name: "message_id", Type: "int", Types: []string{typeUnknown}, Doc: "message id of an unknown message"},
		{Name: "data", Type: "bytes", Types: []string{typeUnknown}, Doc: "body of an unknown message"},
	}
}
