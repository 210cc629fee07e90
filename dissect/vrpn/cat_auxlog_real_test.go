package vrpn

import (
	"testing"
	"time"
)

// auxLogTruth names the truth lines of one auxiliary logger scenario and
// what it holds.
type auxLogTruth struct {
	scenario                  string // base path
	sentStatus, sentReq, recv string // truth types: the client's status and logging requests, its report callback
	nStatus, nReq, nResp      int
	timed                     []bool // per response on the wire: answers a logging request
}

// checkAuxLog decodes an auxiliary logger capture and compares each
// request with the names the client handed mainline (a status request:
// four empty names) and each response with what mainline's
// vrpn_Auxiliary_Logger_Remote delivered to the client's callback (NULL
// for an empty name, printed null: an empty string here). Header times
// come from the side that received the message: a side also dispatches
// what it sends, and a server may answer after its client has gone. Only
// responses to a logging request carry rtt_ms, the capture time since the
// oldest logging or status request still waiting.
func checkAuxLog(t *testing.T, c auxLogTruth) {
	t.Helper()
	recs := mlDecode(t, c.scenario)
	client := mlTruth(t, c.scenario, "client")
	server := mlTruth(t, c.scenario, "server")
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
	empty := func(mlLine) map[string]any {
		return map[string]any{"local_in": "", "local_out": "", "remote_in": "", "remote_out": ""}
	}
	for _, k := range []struct {
		typ, dir, truth string
		receiver        []mlLine
		n               int
		want            func(mlLine) map[string]any
	}{
		{nameAuxLogStatus, "sent", c.sentStatus, server, c.nStatus, empty},
		{nameAuxLogRequest, "sent", c.sentReq, server, c.nReq, names},
		{nameAuxLogReport, "recv", c.recv, client, c.nResp, names},
	} {
		got, truth, heard := mlOfType(recs, k.typ), mlSelect(client, k.dir, k.truth), mlSelect(k.receiver, "recv_raw", k.typ)
		if len(got) != k.n || len(truth) != k.n || len(heard) != k.n {
			t.Fatalf("%s: %s: %d records, %d truth lines, %d dispatched by the receiver; want %d each", c.scenario, k.typ, len(got), len(truth), len(heard), k.n)
		}
		for i, r := range got {
			mlCheck(t, k.typ, r, heard[i], k.want(truth[i]))
		}
	}
	var waiting []time.Time // requests not yet answered, logging ones only
	resp := 0
	for _, r := range recs {
		switch r.Type {
		case nameAuxLogRequest:
			waiting = append(waiting, r.Time)
		case nameAuxLogStatus:
			waiting = append(waiting, time.Time{})
		case nameAuxLogReport:
			rtt, ok := r.Fields.Get("rtt_ms")
			if resp >= len(c.timed) || len(waiting) == 0 || ok != c.timed[resp] || ok != !waiting[0].IsZero() {
				t.Fatalf("%s: response %d: rtt_ms present %v, want %v", c.scenario, resp, ok, c.timed)
			}
			if want := float64(r.Time.Sub(waiting[0])) / float64(time.Millisecond); ok && (rtt.Float() != want || want <= 0) {
				t.Errorf("%s: response %d: rtt_ms %v, want %v", c.scenario, resp, rtt.Float(), want)
			}
			waiting = waiting[1:]
			resp++
		}
	}
}

// TestMainlineAuxLogger decodes auxlogger.pcap: a client's
// vrpn_Auxiliary_Logger_Remote asks mainline's
// vrpn_Auxiliary_Logger_Server_Generic to log (two names), then for the
// status, then to stop (four empty names); the server answers each.
func TestMainlineAuxLogger(t *testing.T) {
	checkAuxLog(t, auxLogTruth{
		scenario:   pcapsVRPN("auxlogger"),
		sentStatus: "vrpn_Auxiliary_Logger_Base Logging_Status_Request", sentReq: "vrpn_Auxiliary_Logger_Base Logging_Request",
		recv:    "vrpn_Auxiliary_Logger_Base Logging_Response",
		nStatus: 1, nReq: 2, nResp: 3, timed: []bool{true, false, true},
	})
}

// TestMainlineAuxLoggerExchange decodes tracker_rate_auxlog.pcap
// (catA_driver.C): status request, logging request, status request, each
// answered by mainline's send_report_logging.
func TestMainlineAuxLoggerExchange(t *testing.T) {
	checkAuxLog(t, auxLogTruth{
		scenario:   localMainline("tracker_rate_auxlog"),
		sentStatus: nameAuxLogStatus, sentReq: nameAuxLogRequest, recv: "vrpn_Auxiliary_Logger_Remote report",
		nStatus: 2, nReq: 1, nResp: 3, timed: []bool{false, true, false},
	})
}
