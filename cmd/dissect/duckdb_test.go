package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/internal/duckdb"
)

// duckFloats are the float fields of docs/protocols.md (and the protocol
// pages it links) as DuckDB expressions on the record's fields, with the
// type DuckDB must infer for them: key is the field (or, for Roboid, the
// key inside each element of values) that must be present in the file for
// the expression to bind.
var duckFloats = []struct{ proto, typ, key, expr, want string }{
	{"deltarobot", "actuator_position", "x", "fields.x", "DOUBLE"},
	{"deltarobot", "actuator_position", "y", "fields.y", "DOUBLE"},
	{"deltarobot", "actuator_position", "z", "fields.z", "DOUBLE"},
	{"deltarobot", "actuator_position", "u", "fields.u", "DOUBLE"},
	{"deltarobot", "current_direction", "z", "fields.z", "DOUBLE"},
	{"deltarobot", "current_direction", "u", "fields.u", "DOUBLE"},
	{"deltarobot", "desired_direction", "x", "fields.x", "DOUBLE"},
	{"deltarobot", "desired_direction", "u", "fields.u", "DOUBLE"},
	{"deltarobot", "curve", "points", "fields.points", "DOUBLE[][]"},
	{"deltarobot", "pong", "rtt_ms", "fields.rtt_ms", "DOUBLE"},
	{"deltarobot", "ping", "id_hex", "fields.id_hex", "VARCHAR"},
	{"deltarobot", "pong", "id_hex", "fields.id_hex", "VARCHAR"},
	{"vrpn", "vrpn_Tracker Pos_Quat", "pos", "fields.pos", "DOUBLE[]"},
	{"vrpn", "vrpn_Tracker Pos_Quat", "quat", "fields.quat", "STRUCT(x DOUBLE, y DOUBLE, z DOUBLE, w DOUBLE)"},
	{"vrpn", "vrpn_Tracker Velocity", "vel", "fields.vel", "DOUBLE[]"},
	{"vrpn", "vrpn_Tracker Velocity", "vel_quat", "fields.vel_quat", "STRUCT(x DOUBLE, y DOUBLE, z DOUBLE, w DOUBLE)"},
	{"vrpn", "vrpn_Tracker Velocity", "vel_quat_dt", "fields.vel_quat_dt", "DOUBLE"},
	{"vrpn", "vrpn_Tracker Acceleration", "acc", "fields.acc", "DOUBLE[]"},
	{"vrpn", "vrpn_Tracker Acceleration", "acc_quat", "fields.acc_quat", "STRUCT(x DOUBLE, y DOUBLE, z DOUBLE, w DOUBLE)"},
	{"vrpn", "vrpn_Tracker Acceleration", "acc_quat_dt", "fields.acc_quat_dt", "DOUBLE"},
	{"vrpn", "vrpn_Analog Channel", "channels", "fields.channels", "DOUBLE[]"},
	{"vrpn", "vrpn_Dial update", "change", "fields.change", "DOUBLE"},
	{"handcontrol", "ACK", "latency_ms", "fields.latency_ms", "DOUBLE"},
	{"handcontrol", "ERR", "latency_ms", "fields.latency_ms", "DOUBLE"},
	{"handcontrol", "GetSettings", "latency_ms", "fields.latency_ms", "DOUBLE"},
	{"handcontrol", "GetGestures", "latency_ms", "fields.latency_ms", "DOUBLE"},
	{"handcontrol", "GetTelemetry", "latency_ms", "fields.latency_ms", "DOUBLE"},
	{"neptune", "speed_motor", "speed", "fields.speed", "DOUBLE"},
	{"neptune", "position_motor", "degree", "fields.degree", "DOUBLE"},
	{"neptune", "position_motor", "speed", "fields.speed", "DOUBLE"},
	{"roboid", "Pose", "values[].angles_deg", "fields.values[1].angles_deg", "DOUBLE[]"},
	{"roboid", "Pose", "values[].magnitude_f16", "fields.values[1].magnitude_f16", "DOUBLE"},
	{"roboid", "Pose", "values[].magnitude_f32", "fields.values[1].magnitude_f32", "DOUBLE"},
}

// negZeroCaptures carry a -0.0 analog channel (pcaps/README.md: the
// multi-device capture's first analog report; the same file under its
// original name in dissect/vrpn/testdata).
var negZeroCaptures = map[string]bool{"vrpn_multi_device.pcap": true, "c2_multi_device_analog.pcap": true}

// TestJSONInDuckDB loads the JSON of every shipped capture into a real
// DuckDB with read_json_auto, twice: the whole output (fields is then one
// STRUCT over all record types; rows are selected by type), and the records
// of each type in a file of their own (as `jq 'select(.type == ...)'` would
// write it, where nothing else in the file can make a column DOUBLE). Every
// float field of the docs must come out DOUBLE (DOUBLE[], a STRUCT of
// DOUBLE), never BIGINT or HUGEINT; id_hex must be VARCHAR and read back
// (as UBIGINT) to the id; and the real VRPN analog capture's -0.0 channel
// must keep its sign.
func TestJSONInDuckDB(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err)
	}
	for _, c := range shippedCaptures(t) {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			t.Parallel()
			out := captureJSON(t, c)
			dir := t.TempDir()
			whole := filepath.Join(dir, "all.jsonl")
			if err := os.WriteFile(whole, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			// The records of each type, and the keys their fields carry.
			byType := map[string]*strings.Builder{}
			keys := map[string]bool{} // type + "\x00" + key
			proto := ""
			for _, line := range strings.SplitAfter(out, "\n") {
				if line == "" {
					continue
				}
				var r struct {
					Proto, Type string
					Fields      map[string]json.RawMessage
				}
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				if r.Type == "gap" || r.Type == "skipped" {
					continue
				}
				proto = r.Proto
				if byType[r.Type] == nil {
					byType[r.Type] = new(strings.Builder)
				}
				byType[r.Type].WriteString(line)
				for k, v := range r.Fields {
					keys[r.Type+"\x00"+k] = true
					if k == "values" {
						var vs []map[string]json.RawMessage
						json.Unmarshal(v, &vs)
						for _, e := range vs {
							for ek := range e {
								keys[r.Type+"\x00values[]."+ek] = true
							}
						}
					}
				}
			}
			var sel []string
			var what []string
			add := func(label, src, where, expr string) {
				what = append(what, label)
				sel = append(sel, fmt.Sprintf("SELECT %s AS what, (SELECT typeof(%s) FROM read_json_auto(%s)%s LIMIT 1) AS type",
					duckdb.Quote(label), expr, duckdb.Quote(src), where))
			}
			checked := 0
			for _, f := range duckFloats {
				if f.proto != proto || !keys[f.typ+"\x00"+f.key] {
					continue
				}
				checked++
				add("whole "+f.typ+" "+f.expr, whole, " WHERE type = "+duckdb.Quote(f.typ), f.expr)
				own := filepath.Join(dir, fmt.Sprintf("type%d.jsonl", checked))
				if err := os.WriteFile(own, []byte(byType[f.typ].String()), 0o644); err != nil {
					t.Fatal(err)
				}
				add("own "+f.typ+" "+f.expr, own, "", f.expr)
			}
			if checked == 0 {
				t.Logf("no float field in %s (types %v)", proto, sortedKeys(byType))
				return
			}
			cols, rows := duckdb.Query(t, strings.Join(sel, "\nUNION ALL\n"))
			if len(cols) != 2 || len(rows) != len(what) {
				t.Fatalf("columns %v, %d rows for %d checks", cols, len(rows), len(what))
			}
			want := map[string]string{}
			for _, f := range duckFloats {
				want["whole "+f.typ+" "+f.expr] = f.want
				want["own "+f.typ+" "+f.expr] = f.want
			}
			for _, r := range rows {
				label, _ := r[0].(string)
				got, _ := r[1].(string)
				if got != want[label] {
					t.Errorf("%s: DuckDB reads %s, want %s", label, got, want[label])
				} else {
					t.Logf("%s: %s", label, got)
				}
			}
			if proto == "deltarobot" {
				checkDuckIDHex(t, whole)
			}
			if negZeroCaptures[filepath.Base(c.path)] {
				checkDuckNegZero(t, whole, byType["vrpn_Analog Channel"].String())
			}
		})
	}
}

// checkDuckIDHex: DuckDB reads every ping's and pong's id_hex back to its id
// (id_hex cast to UBIGINT; id read as HUGEINT, exact).
func checkDuckIDHex(t *testing.T, file string) {
	t.Helper()
	_, rows := duckdb.Query(t, `SELECT count(*), count(*) FILTER (WHERE fields.id_hex::UBIGINT = fields.id AND fields.id_hex SIMILAR TO '0x[0-9a-f]{16}'),
		count(*) FILTER (WHERE fields.id > 9007199254740992) FROM read_json_auto(`+duckdb.Quote(file)+`) WHERE type IN ('ping', 'pong')`)
	if len(rows) != 1 || rows[0][0] != rows[0][1] || rows[0][0] == "0" {
		t.Errorf("ping/pong id_hex read back to id: %v (records, matching, ids above 2^53)", rows)
	} else {
		t.Logf("ping/pong: %v records, %v with id_hex = id, %v ids above 2^53", rows[0][0], rows[0][1], rows[0][2])
	}
}

// checkDuckNegZero: the analog capture's -0.0 channel is a negative zero in
// DuckDB, read from the whole output and from the analog records alone.
func checkDuckNegZero(t *testing.T, whole, analog string) {
	t.Helper()
	own := filepath.Join(filepath.Dir(whole), "analog.jsonl")
	if err := os.WriteFile(own, []byte(analog), 0o644); err != nil {
		t.Fatal(err)
	}
	q := func(file, where string) string {
		return `(SELECT count(*) FROM read_json_auto(` + duckdb.Quote(file) + `), unnest(fields.channels) AS u(c) WHERE c = 0 AND signbit(c)` + where + `)`
	}
	_, rows := duckdb.Query(t, "SELECT "+q(whole, " AND type = 'vrpn_Analog Channel'")+", "+q(own, ""))
	if len(rows) != 1 || rows[0][0] == "0" || rows[0][1] == "0" {
		t.Errorf("negative zero channels in DuckDB (whole file, analog records alone): %v, want at least one each", rows)
	} else {
		t.Logf("negative zero channels (whole file, analog records alone): %v", rows[0])
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
