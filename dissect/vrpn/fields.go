package vrpn

import "github.com/dissect-tools/dissect/dissect"

// fieldInfo documents the fields of VRPN records (a new slice on each
// call: [dissect.Protocol.Info] shares nothing).
func fieldInfo() []dissect.FieldInfo {
	posQuat := func() []string { return []string{namePosQuat} }
	vel := func() []string { return []string{nameVelocity} }
	acc := func() []string { return []string{nameAcceleration} }
	return []dissect.FieldInfo{
		{Name: "version", Type: "string", Types: []string{TypeCookie}, Doc: `cookie version after "vrpn: ver. ", e.g. "07.38"`},
		{Name: "log_mode", Type: "int", Types: []string{TypeCookie}, Doc: "cookie's remote logging mode, 0-3"},
		{Name: "host", Type: "string", Types: []string{TypeUDPCallback, TypeUDPDescription}, Doc: "host to connect back to, or of the UDP channel"},
		{Name: "port", Type: "int", Types: []string{TypeUDPCallback, TypeUDPDescription}, Doc: "port to connect back to, or of the UDP channel"},
		{Name: "sender", Type: "string", Doc: "sender's name (its id as text when undescribed)"},
		{Name: "sender_id", Type: "int", Doc: "sender id of the message header"},
		{Name: "type_id", Type: "int", Doc: "type id of the message header (negative: system)"},
		{Name: "sent", Type: "time", Doc: "sender's timestamp of the message"},
		{Name: "sequence", Type: "uint", Doc: "sequence number of the message header"},
		{Name: "name", Type: "string", Types: []string{TypeSenderDescription, TypeTypeDescription}, Doc: "name given to the sender or type id"},
		{Name: "mode", Type: "int", Types: []string{TypeLogDescription}, Doc: "logging mode asked for (not in the sample captures)"},
		{Name: "incoming", Type: "string", Types: []string{TypeLogDescription}, Doc: "log file name for incoming messages (not in the sample captures)"},
		{Name: "outgoing", Type: "string", Types: []string{TypeLogDescription}, Doc: "log file name for outgoing messages (not in the sample captures)"},
		{Name: "sensor", Type: "int", Types: []string{namePosQuat, nameVelocity, nameAcceleration}, Doc: "tracker sensor number"},
		{Name: "pos[]", Type: "array of float", Types: posQuat(), Doc: "position [x, y, z]: pos[0] x, pos[1] y, pos[2] z"},
		{Name: "quat", Type: "object", Types: posQuat(), Doc: "orientation quaternion"},
		{Name: "quat.x", Type: "float", Types: posQuat(), Doc: "orientation quaternion x"},
		{Name: "quat.y", Type: "float", Types: posQuat(), Doc: "orientation quaternion y"},
		{Name: "quat.z", Type: "float", Types: posQuat(), Doc: "orientation quaternion z"},
		{Name: "quat.w", Type: "float", Types: posQuat(), Doc: "orientation quaternion w"},
		{Name: "vel[]", Type: "array of float", Types: vel(), Doc: "velocity [x, y, z]: vel[0] x, vel[1] y, vel[2] z"},
		{Name: "vel_quat", Type: "object", Types: vel(), Doc: "angular velocity quaternion"},
		{Name: "vel_quat.x", Type: "float", Types: vel(), Doc: "angular velocity quaternion x"},
		{Name: "vel_quat.y", Type: "float", Types: vel(), Doc: "angular velocity quaternion y"},
		{Name: "vel_quat.z", Type: "float", Types: vel(), Doc: "angular velocity quaternion z"},
		{Name: "vel_quat.w", Type: "float", Types: vel(), Doc: "angular velocity quaternion w"},
		{Name: "vel_quat_dt", Type: "float", Types: vel(), Doc: "seconds over which vel_quat applies"},
		{Name: "acc[]", Type: "array of float", Types: acc(), Doc: "acceleration [x, y, z]: acc[0] x, acc[1] y, acc[2] z"},
		{Name: "acc_quat", Type: "object", Types: acc(), Doc: "angular acceleration quaternion"},
		{Name: "acc_quat.x", Type: "float", Types: acc(), Doc: "angular acceleration quaternion x"},
		{Name: "acc_quat.y", Type: "float", Types: acc(), Doc: "angular acceleration quaternion y"},
		{Name: "acc_quat.z", Type: "float", Types: acc(), Doc: "angular acceleration quaternion z"},
		{Name: "acc_quat.w", Type: "float", Types: acc(), Doc: "angular acceleration quaternion w"},
		{Name: "acc_quat_dt", Type: "float", Types: acc(), Doc: "seconds over which acc_quat applies"},
		{Name: "button", Type: "int", Types: []string{nameButtonChange}, Doc: "button number"},
		{Name: "state", Type: "int", Types: []string{nameButtonChange}, Doc: "button state: 1 pressed, 0 released"},
		{Name: "states[]", Type: "array of int", Types: []string{nameButtonStates}, Doc: "state of every button: states[0] button 0's"},
		{Name: "channels[]", Type: "array of float", Types: []string{nameAnalog}, Doc: "analog channel values: channels[0] channel 0's"},
		{Name: "dial", Type: "int", Types: []string{nameDial}, Doc: "dial number"},
		{Name: "change", Type: "float", Types: []string{nameDial}, Doc: "dial change, in revolutions"},
		{Name: "data", Type: "bytes", Doc: "body not decoded: unknown type, or too short for its type (not in the sample captures)"},
		{Name: "reason", Type: "string", Types: []string{dissect.TypeSkipped}, Doc: "why the bytes were skipped (not in the sample captures)"},
	}
}
