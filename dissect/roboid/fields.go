package roboid

import "github.com/dissect-tools/dissect/dissect"

// fieldInfo documents the fields of Roboid records (a new slice on each
// call: [dissect.Protocol.Info] shares nothing).
func fieldInfo() []dissect.FieldInfo {
	pose := func() []string { return []string{TypePose} }
	return []dissect.FieldInfo{
		{Name: "network_id", Type: "uint", Types: []string{TypeNetworkID, TypePose, TypeNewThing, TypeInvestigate, TypeModelURL}, Doc: "network id"},
		{Name: "thing_id", Type: "uint", Types: []string{TypePose, TypeNewThing, TypeInvestigate, TypeModelURL}, Doc: "thing id"},
		{Name: "data", Type: "bytes", Types: []string{TypeClient, TypeNetworkID, TypeNewThing, TypeInvestigate, TypeModelURL, TypeUnknown}, Doc: "message bytes after the ids"},
		{Name: "message_id", Type: "int", Types: []string{TypeUnknown}, Doc: "message id of an unknown message"},
		{Name: "values[]", Type: "array of object", Types: pose(), Doc: "the pose's values, in order: values[0] the first"},
		{Name: "values[].data_type", Type: "string", Types: pose(), Doc: `data type byte as hex, e.g. "0xb1"`},
		{Name: "values[].semantics", Type: "string", Types: pose(), Doc: "what the value is: position, orientation, ..."},
		{Name: "values[].angular_bytes", Type: "uint", Types: pose(), Doc: "bytes of angles"},
		{Name: "values[].linear_bytes", Type: "uint", Types: pose(), Doc: "bytes of magnitude"},
		{Name: "values[].raw", Type: "bytes", Types: pose(), Doc: "the value's bytes"},
		{Name: "values[].truncated", Type: "bool", Types: pose(), Doc: "true when the datagram ends inside the value"},
		{Name: "values[].angles_deg[]", Type: "array of float", Types: pose(), Doc: "angles in degrees"},
		{Name: "values[].magnitude_uint", Type: "uint", Types: pose(), Doc: "magnitude bytes as an unsigned integer"},
		{Name: "values[].magnitude_f16", Type: "float", Types: pose(), Doc: "magnitude as a float16 (2 bytes)"},
		{Name: "values[].magnitude_f32", Type: "float", Types: pose(), Doc: "magnitude as a float32 (4 bytes)"},
		{Name: "rest", Type: "bytes", Types: pose(), Doc: "bytes after the extension data type 0x00"},
		{Name: "reason", Type: "string", Types: []string{dissect.TypeSkipped}, Doc: "why the bytes were skipped (not in the sample captures)"},
	}
}
