package vrpn

import "testing"

// TestMainlineAuxLogger decodes auxlogger.pcap: the client's
// vrpn_Auxiliary_Logger_Remote asked for the logging status (four empty
// names). The logging requests the client made afterwards are in its
// truth file but not on the wire of this capture (the client's later
// connections to the server failed), so only the status request is
// checked.
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
