package vrpn

// auxLoggerSamples are vrpn_Auxiliary_Logger's messages as
// pack_log_message_of_type writes them: i32 lengths of the four names,
// then the names without their NULs.
func auxLoggerSamples() []sample {
	return []sample{
		{"vrpn_Auxiliary_Logger Logging_request", wbe(int32(6), int32(7), int32(0), int32(2), "in.log", "out.log", "ro"),
			`{"local_in":"in.log","local_out":"out.log","remote_in":"","remote_out":"ro"}`},
		{"vrpn_Auxiliary_Logger Logging_request", wbe(int32(0), int32(0), int32(0), int32(0)),
			`{"local_in":"","local_out":"","remote_in":"","remote_out":""}`},
		{"vrpn_Auxiliary_Logger Logging_response", wbe(int32(1), int32(0), int32(4), int32(0), "a", "r.in"),
			`{"local_in":"a","local_out":"","remote_in":"r.in","remote_out":""}`},
		{"vrpn_Auxiliary_Logger Logging_status_request", wbe(int32(0), int32(0), int32(0), int32(0)),
			`{"local_in":"","local_out":"","remote_in":"","remote_out":""}`},
	}
}
