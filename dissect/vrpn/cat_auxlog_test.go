package vrpn

import (
	"strings"
	"testing"
)

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

// TestAuxLogMalformed: lengths mainline's unpack_log_message_from_buffer
// would refuse keep the body as data, with a warning naming the offset;
// bytes after the names are decoded with a warning. A huge length
// allocates nothing (the body is shorter).
func TestAuxLogMalformed(t *testing.T) {
	for _, c := range []struct {
		body []byte
		warn string
		data bool
	}{
		{wbe(int32(0), int32(0), int32(0)), "body of 12 bytes too short for vrpn_Auxiliary_Logger Logging_request: the name lengths at offset 0 need 16 bytes", true},
		{wbe(int32(0), int32(0), int32(-3), int32(0)), "length -3 of remote_in at offset 8 is negative", true},
		{wbe(int32(0x7fffffff), int32(0), int32(0), int32(0), "abc"), "body of 19 bytes too short for vrpn_Auxiliary_Logger Logging_request: names of 2147483647, 0, 0 and 0 bytes at offset 16", true},
		{wbe(int32(1), int32(0), int32(0), int32(0), "ab"), "body of 18 bytes is longer than the 17 bytes of vrpn_Auxiliary_Logger Logging_request", false},
	} {
		run := fuzzFeed(catalogueStream([]sample{{name: nameAuxLogRequest, body: c.body}}), 0, 1, true)
		r := run.recs[len(run.recs)-1]
		_, data := r.Fields.Get("data")
		if r.Type != nameAuxLogRequest || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], c.warn) || data != c.data {
			t.Errorf("body %x: type %q warnings %q data %v; want a warning containing %q, data %v", c.body, r.Type, r.Warnings, data, c.warn, c.data)
		}
	}
}
