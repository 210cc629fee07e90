package vrpn

import (
	"testing"
	"time"
)

// TestMainlineAuxLogger decodes auxlogger.pcap: the client's
// vrpn_Auxiliary_Logger_Remote asked for the logging status (four empty
// names). The logging requests the client made afterwards are in its
// truth file but not on the wire of this capture (the client's later
// connections to the server failed: mainline's
// vrpn_Auxiliary_Logger_Server_Generic reads through its logging
// connection, still NULL, to answer a status request made before any
// logging request, which most likely ended the server), so only the status
// request is checked here; TestMainlineAuxLoggerExchange has the others.
func TestMainlineAuxLogger(t *testing.T) {
	const sc = "auxlogger"
	recs := mlDecode(t, sc)
	client := mlTruth(t, sc, "client")
	server := mlTruth(t, sc, "server")
	const typ = "vrpn_Auxiliary_Logger Logging_status_request"
	got := mlOfType(recs, typ)
	sent := mlSelect(client, "sent", "vrpn_Auxiliary_Logger_Base Logging_Status_Request")
	heard := mlSelect(server, "recv_raw", typ)
	if len(got) != 1 || len(sent) != 1 || len(heard) != 1 {
		t.Fatalf("%d records, %d sent, %d dispatched by the server; want 1 each", len(got), len(sent), len(heard))
	}
	mlCheck(t, typ, got[0], heard[0], map[string]any{"local_in": "", "local_out": "", "remote_in": "", "remote_out": ""})
	if n := len(mlOfType(recs, "vrpn_Auxiliary_Logger Logging_request")) + len(mlOfType(recs, "vrpn_Auxiliary_Logger Logging_response")); n != 0 {
		t.Errorf("%d logging requests or responses, want none in this capture", n)
	}
}

// TestMainlineAuxLoggerExchange decodes tracker_rate_auxlog.pcap
// (catA_driver.C): the client's status request, logging request and
// second status request, each answered by mainline's send_report_logging,
// compared with the names the client handed mainline and those mainline's
// vrpn_Auxiliary_Logger_Remote delivered to its callback (NULL for an
// empty name, printed null: an empty string here).
func TestMainlineAuxLoggerExchange(t *testing.T) {
	const sc = "tracker_rate_auxlog"
	recs := mlDecode(t, sc)
	client := mlTruth(t, sc, "client")
	server := mlTruth(t, sc, "server")
	names := func(l mlLine) map[string]any {
		m := map[string]any{}
		for _, k := range []string{"local_in", "local_out", "remote_in", "remote_out"} {
			m[k] = l[k]
			if l[k] == nil {
				m[k] = ""
			}
		}
		return m
	}
	empty := map[string]any{"local_in": "", "local_out": "", "remote_in": "", "remote_out": ""}
	for _, c := range []struct {
		typ, truth string
		n          int
		want       func(mlLine) map[string]any
	}{
		{nameAuxLogStatus, nameAuxLogStatus, 2, func(mlLine) map[string]any { return empty }},
		{nameAuxLogRequest, nameAuxLogRequest, 1, names},
		{nameAuxLogReport, "vrpn_Auxiliary_Logger_Remote report", 3, names},
	} {
		// Header times from the side that received the message (a side
		// also dispatches what it sends, and the server sent a last
		// response after the client had gone).
		dir, receiver := "sent", server
		if c.typ == nameAuxLogReport {
			dir, receiver = "recv", client
		}
		got, truth, heard := mlOfType(recs, c.typ), mlSelect(client, dir, c.truth), mlSelect(receiver, "recv_raw", c.typ)
		if len(got) != c.n || len(truth) != c.n || len(heard) != c.n {
			t.Fatalf("%s: %d records, %d truth lines, %d dispatched by the receiver; want %d each", c.typ, len(got), len(truth), len(heard), c.n)
		}
		for i, r := range got {
			mlCheck(t, c.typ, r, heard[i], c.want(truth[i]))
		}
	}
	// Only the response to the logging request is timed: status, logging,
	// status came in that order, each answered before the next.
	req := mlOfType(recs, nameAuxLogRequest)[0]
	for i, r := range mlOfType(recs, nameAuxLogReport) {
		rtt, ok := r.Fields.Get("rtt_ms")
		if ok != (i == 1) {
			t.Errorf("response %d: rtt_ms present %v", i, ok)
		}
		if want := float64(r.Time.Sub(req.Time)) / float64(time.Millisecond); ok && (rtt.Float() != want || want <= 0) {
			t.Errorf("response %d: rtt_ms %v, want %v", i, rtt.Float(), want)
		}
	}
}
