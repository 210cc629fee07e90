package vrpn

import (
	"math"
	"testing"
)

// TestMainlineAnalogOutput decodes analog_output.pcap: the server's report
// of its 6 channels when the client connected, then the client's request
// for one channel and for the first 5, compared with the values the client
// handed mainline and the channel count mainline's remote kept from the
// report.
func TestMainlineAnalogOutput(t *testing.T) {
	sc := pcapsVRPN("analog_output")
	recs := mlDecode(t, sc)
	client := mlTruth(t, sc, "client")
	server := mlTruth(t, sc, "server")
	check := func(typ, truthType string, want func(l mlLine) map[string]any) {
		t.Helper()
		got, sent, heard := mlOfType(recs, typ), mlSelect(client, "sent", truthType), mlSelect(server, "recv_raw", typ)
		if len(got) != 1 || len(sent) != 1 || len(heard) != 1 {
			t.Fatalf("%s: %d records, %d sent, %d dispatched by the server; want 1 each", typ, len(got), len(sent), len(heard))
		}
		mlCheck(t, typ, got[0], heard[0], want(sent[0]))
	}
	// pad: the 0 mainline's encoders write.
	check("vrpn_Analog_Output Change_request", "vrpn_Analog_Output Change", func(l mlLine) map[string]any {
		return map[string]any{"channel": l["chan"], "pad": 0.0, "value": l["value"]}
	})
	check("vrpn_Analog_Output Change_Channels_request", "vrpn_Analog_Output Change_Channels", func(l mlLine) map[string]any {
		return map[string]any{"num_channels": l["num"], "pad": 0.0, "channels": l["values"]}
	})
	got, state := mlOfType(recs, "vrpn_Analog_Output Num_Channels_report"), mlSelect(client, "state", "vrpn_Analog_Output_Remote num channels (from the server's report)")
	heard := mlSelect(client, "recv_raw", "vrpn_Analog_Output Num_Channels_report")
	if len(got) != 1 || len(state) != 1 || len(heard) != 1 {
		t.Fatalf("Num_Channels_report: %d records, %d states, %d dispatched; want 1 each", len(got), len(state), len(heard))
	}
	mlCheck(t, got[0].Type, got[0], heard[0], map[string]any{"num_channels": state[0]["num_channel"]})
	// -0 is kept: the fifth value asked for is negative zero.
	ch := mustGet(t, mlOfType(recs, "vrpn_Analog_Output Change_Channels_request")[0], "channels").Items()
	if len(ch) != 5 || !math.Signbit(ch[4].Value.Float()) {
		t.Errorf("channels %v: want 5, the last -0", ch)
	}
}
