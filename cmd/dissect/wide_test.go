package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWideWholeInfo: with --wide no INFO is cut. On the shipped
// HandControl captures (their Telemetry has more fields than a summary
// shows, an ERR a message longer than one), each row's INFO holds no
// "…", and every string and number of the record's JSON fields that the
// INFO begins to show is shown whole; the long ERR message and the last
// Telemetry field are there.
func TestWideWholeInfo(t *testing.T) {
	for _, name := range []string{"handcontrol_serial.pcapng", "handcontrol_tcp_bridge.pcap"} {
		in := filepath.Join(pcapDir, name)
		table, stderr, code := cli(t, "--wide", "--no-summary", in)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		js, _, code := cli(t, "-o", "json", "--no-summary", in)
		if code != 0 {
			t.Fatalf("%s -o json: exit %d", name, code)
		}
		recs := parseJSONL(t, js)
		lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")[1:] // the header first
		if len(lines) != len(recs) {
			t.Fatalf("%s: %d rows, %d JSON records", name, len(lines), len(recs))
		}
		sawErr, sawTelemetry := false, false
		for i, r := range recs {
			line := lines[i]
			arrow := strings.Index(line, "→")
			at := strings.Index(line[arrow:], "  "+r.Type+" ")
			if arrow < 0 || at < 0 {
				t.Fatalf("%s row %d: no type %q in %q", name, i, r.Type, line)
			}
			info := strings.TrimLeft(line[arrow+at+len(r.Type)+2:], " ")
			if strings.Contains(info, "…") || strings.Contains(info, "...") {
				t.Errorf("%s row %d (%s): INFO cut: %q", name, i, r.Type, info)
			}
			var fields any
			if err := json.Unmarshal(r.Fields, &fields); err != nil {
				t.Fatal(err)
			}
			leaves := map[string]string{}
			collectLeaves("", fields, leaves)
			for path, v := range leaves {
				if len(v) >= 12 && strings.Contains(info, v[:12]) && !strings.Contains(info, v) {
					t.Errorf("%s row %d: %s = %q shown cut in %q", name, i, path, v, info)
				}
			}
			// A summary that had left fields out gives way to all of
			// them: every leaf of the JSON fields is there as KEY=VALUE.
			if !strings.HasPrefix(info, "→ ") && !strings.HasPrefix(info, "← ") && r.Type != "skipped" && r.Type != "gap" {
				for path, v := range leaves {
					key := path[strings.LastIndexAny(path, ".]")+1:]
					if !strings.Contains(info, key+"=") || !strings.Contains(info, v) {
						t.Errorf("%s row %d: %s = %s not in %q", name, i, path, v, info)
					}
				}
			}
			if m, ok := leaves["payload.message"]; ok && r.Type == "ERR" {
				sawErr = sawErr || len(m) > 40 // longer than summaries used to show
				if !strings.Contains(info, m) {
					t.Errorf("%s row %d: ERR message %q not whole in %q", name, i, m, info)
				}
			}
			if v, ok := leaves["payload.thumb_finger_position"]; ok && r.Type == "Telemetry" {
				sawTelemetry = true
				if !strings.Contains(info, "thumb_finger_position="+v) {
					t.Errorf("%s row %d: Telemetry's last field thumb_finger_position=%s not in %q", name, i, v, info)
				}
			}
		}
		if !sawTelemetry || (name == "handcontrol_serial.pcapng" && !sawErr) {
			t.Errorf("%s: Telemetry seen %v, a long ERR seen %v: the capture no longer has what this test is about", name, sawTelemetry, sawErr)
		}
	}
}

// collectLeaves flattens decoded JSON into path → text of each string
// and number.
func collectLeaves(path string, v any, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			collectLeaves(p, x, out)
		}
	case []any:
		for i, x := range v {
			collectLeaves(path+"["+strconv.Itoa(i)+"]", x, out)
		}
	case string:
		out[path] = v
	case float64:
		out[path] = strconv.FormatFloat(v, 'f', -1, 64)
	}
}
