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

// TestAuxLogResponseOrder: a Logging_response answers the oldest waiting
// logger request of either kind; it is timed only when that is a
// Logging_request (the status request is not a declared request).
func TestAuxLogResponseOrder(t *testing.T) {
	empty := wbe(int32(0), int32(0), int32(0), int32(0))
	for _, c := range []struct {
		name  string
		first int32 // type id of the first request: 0 status, 1 logging
		timed [2]bool
	}{
		{"status first", 0, [2]bool{false, true}},
		{"logging first", 1, [2]bool{true, false}},
	} {
		h := newTCP(t)
		h.decode = true
		cookie := []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")
		h.feed(t, 0, cookie, false)
		h.feed(t, 1, cookie, false)
		var cl []byte
		cl = append(cl, encDescription(-1, 0, "Logger0", 0)...)
		cl = append(cl, encDescription(-2, 0, nameAuxLogStatus, 1)...)
		cl = append(cl, encDescription(-2, 1, nameAuxLogRequest, 2)...)
		cl = append(cl, encMsg(1795306101, 0, 0, c.first, 3, empty)...)
		cl = append(cl, encMsg(1795306101, 1, 0, 1-c.first, 4, empty)...)
		h.feed(t, 0, cl, false)
		var sv []byte
		sv = append(sv, encDescription(-1, 0, "Logger0", 0)...)
		sv = append(sv, encDescription(-2, 0, nameAuxLogReport, 1)...)
		sv = append(sv, encMsg(1795306101, 2, 0, 0, 2, empty)...)
		sv = append(sv, encMsg(1795306101, 3, 0, 0, 3, empty)...)
		recs := h.feed(t, 1, sv, false)
		recs = recs[len(recs)-2:]
		for i, r := range recs {
			if _, ok := r.Fields.Get("rtt_ms"); r.Type != nameAuxLogReport || ok != c.timed[i] {
				t.Errorf("%s: response %d: type %q rtt_ms %v, want %v", c.name, i, r.Type, ok, c.timed[i])
			}
		}
	}
}
