package vrpn

// analogOutputSamples are vrpn_Analog_Output's messages as mainline writes
// them: encode_change_to (i32 channel, i32 0, f64 value),
// encode_change_channels_to (i32 num, i32 0, num f64) and
// encode_num_channels_to (one i32).
func analogOutputSamples() []sample {
	return []sample{
		{"vrpn_Analog_Output Change_request", wbe(int32(2), int32(0), 0.375),
			`{"channel":2,"pad":0,"value":0.375}`},
		{"vrpn_Analog_Output Change_Channels_request", wbe(int32(3), int32(0), -1.25, 0.0, 12345.5),
			`{"num_channels":3,"pad":0,"channels":[-1.25,0,12345.5]}`},
		{"vrpn_Analog_Output Change_Channels_request", wbe(int32(0), int32(0)),
			`{"num_channels":0,"pad":0,"channels":[]}`},
		{"vrpn_Analog_Output Num_Channels_report", wbe(int32(6)), `{"num_channels":6}`},
	}
}
