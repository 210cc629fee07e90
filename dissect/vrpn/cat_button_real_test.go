package vrpn

import (
	"encoding/hex"
	"testing"
)

// buttonModeName names vrpn_Button.h's vrpn_BUTTON_MOMENTARY (10),
// _TOGGLE_OFF (20) and _TOGGLE_ON (21).
func buttonModeName(m float64) string {
	return map[float64]string{10: "momentary", 20: "toggle_off", 21: "toggle_on"}[m]
}

// TestMainlineButtonAdmin decodes the button part of dial_button.pcap: the
// client's three Admin messages (set_toggle(1, on), set_momentary(1),
// set_all_toggle(off)) compared with the values it handed mainline, and
// the server's vrpn_Button_Filter Alerts, compared with the two int32 of
// the payloads the client's connection dispatched and with their header
// time, which mainline leaves at zero.
func TestMainlineButtonAdmin(t *testing.T) {
	sc := pcapsVRPN("dial_button")
	recs := mlDecode(t, sc)
	client := mlTruth(t, sc, "client")

	var sent []mlLine
	for _, l := range client {
		if s, _ := l["type"].(string); l["dir"] == "sent" && len(s) > 17 && s[:17] == "vrpn_Button Admin" {
			sent = append(sent, l)
		}
	}
	admin, heard := mlOfType(recs, "vrpn_Button Admin"), mlSelect(client, "recv_raw", "vrpn_Button Admin")
	if len(admin) != 3 || len(sent) != 3 || len(heard) != 3 {
		t.Fatalf("Admin: %d records, %d sent, %d dispatched; want 3 each", len(admin), len(sent), len(heard))
	}
	for i, r := range admin {
		mlCheck(t, r.Type, r, heard[i], map[string]any{"button": sent[i]["button"], "mode": buttonModeName(sent[i]["mode"].(float64))})
	}

	alert, raw := mlOfType(recs, "vrpn_Button Alert"), mlSelect(client, "recv_raw", "vrpn_Button Alert")
	if len(alert) != len(raw) || len(alert) < 3 {
		t.Fatalf("Alert: %d records, %d dispatched by the client's connection", len(alert), len(raw))
	}
	for i, r := range alert {
		b, err := hex.DecodeString(raw[i]["payload"].(string))
		if err != nil || len(b) != 8 {
			t.Fatalf("Alert %d: payload %q", i, raw[i]["payload"])
		}
		button, mode := float64(int32(be.Uint32(b))), float64(int32(be.Uint32(b[4:])))
		mlCheck(t, r.Type, r, raw[i], map[string]any{"button": button, "mode": buttonModeName(mode)})
		if raw[i]["sec"] != 0.0 || raw[i]["usec"] != 0.0 {
			t.Errorf("Alert %d: mainline's header time %v.%v, the zero this test expects", i, raw[i]["sec"], raw[i]["usec"])
		}
	}
}
