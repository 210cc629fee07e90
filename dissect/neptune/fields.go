package neptune

import "github.com/dissect-tools/dissect/dissect"

// fieldInfo documents the fields of device-framing Neptune records (a new
// slice on each call: [dissect.Protocol.Info] shares nothing).
func fieldInfo() []dissect.FieldInfo {
	move := func() []string { return []string{typeTranslate, typeRotate} }
	return []dissect.FieldInfo{
		{Name: "motor", Type: "uint", Types: []string{typeSetMotor}, Doc: "motor id: 0-4 thrusters, 5-6 relays"},
		{Name: "direction", Type: "string", Types: []string{typeSetMotor}, Doc: `"forward" or "reverse"`},
		{Name: "magnitude", Type: "uint", Types: []string{typeSetMotor}, Doc: "motor power, 0-255"},
		{Name: "axis", Type: "string", Types: move(), Doc: `"x", "y" or "z" (the number when out of range)`},
		{Name: "sign", Type: "uint", Types: move(), Doc: "direction byte of the move"},
		{Name: "enable", Type: "bool", Types: []string{typeStabilize}, Doc: "auto-stabilize on"},
		{Name: "on", Type: "bool", Types: []string{typeLamp}, Doc: "lamp on"},
		{Name: "data", Type: "bytes", Doc: "whole payload: unknown type, wrong length, abort with arguments"},
		{Name: "reason", Type: "string", Types: []string{dissect.TypeSkipped}, Doc: "why the bytes were skipped"},
	}
}

// wikiFieldInfo documents the fields of wiki-format Neptune records
// (neptune-wiki; a new slice on each call).
func wikiFieldInfo() []dissect.FieldInfo {
	motor := func() []string { return []string{typeSpeedMotor, typePositionMotor} }
	return []dissect.FieldInfo{
		{Name: "priority", Type: "uint", Doc: "packet priority byte"},
		{Name: "sequence", Type: "uint", Doc: "packet sequence number, 0-255"},
		{Name: "motor_id", Type: "uint", Types: motor(), Doc: "motor id"},
		{Name: "direction", Type: "string", Types: []string{typeSpeedMotor}, Doc: `"forward" or "reverse"`},
		{Name: "speed", Type: "float", Types: motor(), Doc: "motor speed (float32)"},
		{Name: "duration", Type: "int", Types: []string{typeSpeedMotor}, Doc: "run time (int32, or int16 with --neptune-int16); -1: forever"},
		{Name: "degree", Type: "float", Types: []string{typePositionMotor}, Doc: "target position in degrees (float32)"},
		{Name: "relay_id", Type: "uint", Types: []string{typeRelay}, Doc: "relay id"},
		{Name: "enable", Type: "bool", Types: []string{typeRelay}, Doc: "relay on"},
		{Name: "sensor_type", Type: "int", Types: []string{typeSensorData}, Doc: "sensor type (int32, or int16)"},
		{Name: "sensor_id", Type: "int", Types: []string{typeSensorData}, Doc: "sensor id (int32, or int16)"},
		{Name: "data", Type: "bytes", Types: []string{typeSensorData, typeUnknown}, Doc: "sensor reading, or the body of an unknown type"},
		{Name: "trailing", Type: "bytes", Doc: "bytes after the body, or the part of a field cut short"},
		{Name: "reason", Type: "string", Types: []string{dissect.TypeSkipped}, Doc: "why the bytes were skipped"},
	}
}
