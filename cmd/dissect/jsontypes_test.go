package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// shippedCapture is a capture shipped with the repository and the flags it
// is decoded with (pcaps/README.md).
type shippedCapture struct {
	path string
	args []string
}

// shippedCaptures lists every capture in pcaps/ and the real VRPN ones in
// dissect/vrpn/testdata/. A generated sample is decoded with its truth's
// decode-as rule and decoder options; the real VRPN captures need no flag.
func shippedCaptures(t *testing.T) []shippedCapture {
	t.Helper()
	files := pcaps(t)
	for _, pat := range []string{"*.pcap", "*.pcapng"} {
		m, _ := filepath.Glob(filepath.Join("../../dissect/vrpn/testdata", pat))
		files = append(files, m...)
	}
	sort.Strings(files)
	var out []shippedCapture
	for _, f := range files {
		out = append(out, shippedCapture{path: f, args: truthFlags(dissecttest.ReadCapture(t, f))})
	}
	return out
}

// truthFlags returns the flags that decode c as its truth file says: -d
// with its decode-as rule, and --neptune-int16 for its decoder options;
// none for a real VRPN capture.
func truthFlags(c dissecttest.Capture) []string {
	var args []string
	if c.DecodeAs != "" {
		args = append(args, "-d", c.DecodeAs)
	}
	if c.NeptuneInt16 {
		args = append(args, "--neptune-int16")
	}
	return args
}

// captureJSON runs the CLI with -o json on c and returns its output.
func captureJSON(t *testing.T, c shippedCapture) string {
	t.Helper()
	args := append([]string{"-o", "json", "--no-summary"}, c.args...)
	out, errOut, code := cli(t, append(args, c.path)...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", c.path, code, errOut)
	}
	return out
}

// TestJSONTypesPython reads the JSON of every shipped capture with Python's
// json module (the reader the issue is about) and checks the type of every
// value: the contract keys (docs/output.md), every field path listed in
// jsonTypesScript's table (written from docs/protocols.md, neptune.md,
// roboid.md and handcontrol.md, not from dissect's output), that no field
// path is read as int in one record and float in another, that negative
// zero reads back as -0.0, and that every integer beyond 2^53 has its exact
// string form beside it.
func TestJSONTypesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the JSON type test reads the output with Python's json module")
	}
	var in strings.Builder
	for _, c := range shippedCaptures(t) {
		for _, line := range strings.SplitAfter(captureJSON(t, c), "\n") {
			if line != "" {
				in.WriteString(filepath.Base(c.path) + "\t" + line)
			}
		}
	}
	cmd := exec.Command(py, "-c", jsonTypesScript)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	t.Logf("python3: %s", out)
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
}

// jsonTypesScript reads lines "capture<TAB>json" on stdin. Types are
// Python's: int, float, str, bool; "[]" in a path is an array element. A
// float field may also hold the contract's strings "NaN", "Inf", "-Inf".
const jsonTypesScript = `
import json, math, re, sys

CONTRACT = {"time": str, "proto": str, "transport": str, "stream": int, "src": str,
            "dst": str, "offset": int, "length": int, "type": str, "fields": dict}

VRPN_HEADER = {"sender": "str", "sender_id": "int", "type_id": "int", "sent": "str", "sequence": "int"}
XYZW = ("x", "y", "z", "w")
HC_COMMON = {"code": "int", "role": "str", "crc": "int", "crc_ok": "bool", "crc_scope": "str",
             "schema": "str", "payload_hex": "str", "request_code": "int", "latency_ms": "float"}
WIKI_HEADER = {"priority": "int", "sequence": "int"}

# (proto, type) -> {path: type}; type "*" holds keys of every type of the
# protocol that has them.
T = {
  ("deltarobot", "protocol_magic"): {"magic": "str"},
  ("deltarobot", "protocol_version"): {"version": "int"},
  ("deltarobot", "actuator_position"): {k: "float" for k in "xyzu"},
  ("deltarobot", "current_direction"): {k: "float" for k in "xyzu"},
  ("deltarobot", "desired_direction"): {k: "float" for k in "xyzu"},
  ("deltarobot", "ping"): {"id": "int", "id_hex": "str"},
  ("deltarobot", "pong"): {"id": "int", "id_hex": "str", "rtt_ms": "float"},
  ("deltarobot", "end_of_transmission"): {"reason": "str"},
  ("deltarobot", "curve"): {"points[][]": "float"},
  ("deltarobot", "unknown"): {"message_id": "int", "data": "str"},
  ("vrpn", "*"): VRPN_HEADER,
  ("vrpn", "cookie"): {"version": "str", "log_mode": "int"},
  ("vrpn", "udp_callback"): {"host": "str", "port": "int"},
  ("vrpn", "sender_description"): {"name": "str"},
  ("vrpn", "type_description"): {"name": "str"},
  ("vrpn", "udp_description"): {"host": "str", "port": "int"},
  ("vrpn", "vrpn_Tracker Pos_Quat"): dict({"sensor": "int", "pos[]": "float"}, **{"quat." + k: "float" for k in XYZW}),
  ("vrpn", "vrpn_Tracker Velocity"): dict({"sensor": "int", "vel[]": "float", "vel_quat_dt": "float"}, **{"vel_quat." + k: "float" for k in XYZW}),
  ("vrpn", "vrpn_Tracker Acceleration"): dict({"sensor": "int", "acc[]": "float", "acc_quat_dt": "float"}, **{"acc_quat." + k: "float" for k in XYZW}),
  ("vrpn", "vrpn_Button Change"): {"button": "int", "state": "int"},
  ("vrpn", "vrpn_Button States"): {"states[]": "int"},
  ("vrpn", "vrpn_Analog Channel"): {"channels[]": "float"},
  ("vrpn", "vrpn_Dial update"): {"change": "float", "dial": "int"},
  ("handcontrol", "*"): HC_COMMON,
  ("handcontrol", "Telemetry"): {"payload.last_time_sync": "int", "payload.emg": "int", "payload.power": "int"},
  ("neptune", "set_motor"): {"motor": "int", "direction": "str", "magnitude": "int"},
  ("neptune", "translate"): {"axis": "str", "sign": "int"},
  ("neptune", "rotate"): {"axis": "str", "sign": "int"},
  ("neptune", "stabilize"): {"enable": "bool"},
  ("neptune", "lamp"): {"on": "bool"},
  ("neptune", "speed_motor"): dict(WIKI_HEADER, motor_id="int", direction="str", speed="float", duration="int"),
  ("neptune", "position_motor"): dict(WIKI_HEADER, motor_id="int", degree="float", speed="float"),
  ("neptune", "relay"): dict(WIKI_HEADER, relay_id="int", enable="bool"),
  ("roboid", "Pose"): {"network_id": "int", "thing_id": "int", "values[].data_type": "str",
      "values[].semantics": "str", "values[].angular_bytes": "int", "values[].linear_bytes": "int",
      "values[].raw": "str", "values[].angles_deg[]": "float", "values[].magnitude_uint": "int",
      "values[].magnitude_f16": "float", "values[].magnitude_f32": "float", "values[].truncated": "bool"},
}
# The 64-bit values that may exceed 2^53, with the key of their exact
# string form (docs/output.md, "Values").
BIG = {("deltarobot", "ping", "id"): "id_hex", ("deltarobot", "pong", "id"): "id_hex"}

errors = []
wrong = {}     # (proto, type, path, got, want) -> [count, first]
seen = {}      # (proto, type, path) -> {type name: first capture and line}
listed = set() # table entries seen
negzero = 0
bigs = 0

def tname(v):
    return {bool: "bool", int: "int", float: "float", str: "str", type(None): "null"}.get(type(v), type(v).__name__)

def expect(proto, typ, path):
    for k in ((proto, typ), (proto, "*")):
        if path in T.get(k, {}):
            return k, T[k][path]
    return None, None

def walk(where, proto, typ, path, v, parent):
    global negzero, bigs
    if isinstance(v, dict):
        for k, x in v.items():
            walk(where, proto, typ, path + ("." if path else "") + k, x, v)
        return
    if isinstance(v, list):
        for x in v:
            walk(where, proto, typ, path + "[]", x, None)
        return
    key, want = expect(proto, typ, path)
    got = tname(v)
    if want == "float" and got == "str" and v in ("NaN", "Inf", "-Inf"):
        got = "float"
    if key:
        listed.add((key, path))
        if got != want:
            w = wrong.setdefault((proto, typ, path, got, want), [0, "%s: %r" % (where, v)])
            w[0] += 1
    seen.setdefault((proto, typ, path), {}).setdefault(got, where)
    if type(v) is float and v == 0 and math.copysign(1, v) < 0:
        negzero += 1
    if type(v) is int and abs(v) > 2**53:
        bigs += 1
        alt = BIG.get((proto, typ, path))
        if alt is None or parent is None:
            errors.append("%s: %s %s %s = %d exceeds 2^53 and has no string form" % (where, proto, typ, path, v))
        elif parent.get(alt) != "0x%016x" % v:
            errors.append("%s: %s %s %s = %d, but %s is %r" % (where, proto, typ, path, v, alt, parent.get(alt)))

n = 0
lines = {}
for line in sys.stdin:
    cap, text = line.rstrip("\n").split("\t", 1)
    n += 1
    lines[cap] = lines.get(cap, 0) + 1
    where = "%s line %d" % (cap, lines[cap])
    r = json.loads(text)
    for k, ty in CONTRACT.items():
        if type(r.get(k)) is not ty:
            errors.append("%s: key %s is %s %r, the contract says %s" % (where, k, tname(r.get(k)), r.get(k), ty.__name__))
    if "warnings" in r and not (type(r["warnings"]) is list and all(type(w) is str for w in r["warnings"])):
        errors.append("%s: warnings is not a list of strings: %r" % (where, r["warnings"]))
    if isinstance(r.get("fields"), dict):
        walk(where, r["proto"], r["type"], "", r["fields"], None)
    for k, v in r["fields"].items():
        if k == "id_hex" and not re.fullmatch("0x[0-9a-f]{16}", v):
            errors.append("%s: id_hex %r is not 0x and 16 lower-case hex digits" % (where, v))

for (p, t, path, got, want), (count, first) in sorted(wrong.items()):
    errors.append("%s %s %s: %d values are %s (first at %s), docs say %s" % (p, t, path, count, got, first, want))
mixing = sorted("%s %s %s: %s" % (p, t, path, ", ".join("%s (first at %s)" % kv for kv in sorted(ts.items())))
                for (p, t, path), ts in seen.items() if len(ts) > 1)
for (key, typs) in T.items():
    for path in typs:
        if key[1] != "*" and (key, path) not in listed:
            errors.append("table entry %s %s %s never seen: the captures or the table changed" % (key[0], key[1], path))
if negzero == 0:
    errors.append("no -0.0 read back as a negative float zero (the real VRPN analog captures carry -0.0 channels)")
print("%d records, %d field paths, %d negative zeros, %d integers beyond 2^53" % (n, len(seen), negzero, bigs))
if mixing:
    errors.insert(0, "%d field paths mix types:\n  " % len(mixing) + "\n  ".join(mixing))
if errors:
    print("\n".join(errors[:60]))
    if len(errors) > 60:
        print("... and %d more" % (len(errors) - 60))
    sys.exit(1)
`

// checkIDHex checks the id_hex key of decoded fields (a Deltarobot ping or
// pong) against the truth's id: "0x" and 16 lower-case hex digits of it
// (docs/protocols.md). It returns the fields without id_hex, which the
// truth sidecars (written before id_hex existed) do not list. Fields
// without id_hex are returned unchanged; whether a ping or pong must have
// it is checked by the truth comparison's key order and by
// TestJSONTypesPython.
func checkIDHex(got []jsonKV, truth any) ([]jsonKV, error) {
	for j, kv := range got {
		if kv.k != "id_hex" {
			continue
		}
		rest := append(append([]jsonKV(nil), got[:j]...), got[j+1:]...)
		w, _ := truth.([]jsonKV)
		for _, tkv := range w {
			if tkv.k != "id" {
				continue
			}
			n, _ := tkv.v.(json.Number)
			id, err := strconv.ParseUint(string(n), 10, 64)
			if err != nil {
				return rest, fmt.Errorf("truth id %v: %v", tkv.v, err)
			}
			if want := fmt.Sprintf("0x%016x", id); kv.v != want {
				return rest, fmt.Errorf("id_hex %v, want %s (the truth's id %d)", kv.v, want, id)
			}
			return rest, nil
		}
		return rest, fmt.Errorf("id_hex %v, but the truth has no id", kv.v)
	}
	return got, nil
}

// TestIDHexThroughJQ: jq 1.6 (Debian's) holds numbers as doubles and
// prints a ping id above 2^53 with other digits; id_hex comes through
// exact. Every ping and pong of a Deltarobot sample is selected with jq and
// its id_hex compared with the truth sidecar's id.
func TestIDHexThroughJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq is not installed; .ci/run installs it")
	}
	capFile := filepath.Join(pcapDir, "deltarobot_session.pcap")
	out := captureJSON(t, shippedCapture{path: capFile, args: []string{"-d", "tcp.port==4000,deltarobot"}})
	cmd := exec.Command(jq, "-r", `select(.type == "ping" or .type == "pong") | "\(.type) \(.offset) \(.fields.id_hex) \(.fields.id)"`)
	cmd.Stdin = strings.NewReader(out)
	res, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(pcapDir, "deltarobot_session.truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Streams []struct {
			Directions []struct {
				Records []struct {
					Type   string
					Offset int64
					Fields struct {
						ID json.Number `json:"id"`
					}
				}
			}
		}
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	var want []string
	above := 0
	for _, st := range truth.Streams {
		for _, d := range st.Directions {
			for _, r := range d.Records {
				if r.Type != "ping" && r.Type != "pong" {
					continue
				}
				id, err := strconv.ParseUint(string(r.Fields.ID), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				if id > 1<<53 {
					above++
				}
				want = append(want, fmt.Sprintf("%s %d 0x%016x", r.Type, r.Offset, id))
			}
		}
	}
	sort.Strings(want)
	var got []string
	exact := 0
	for _, l := range strings.Split(strings.TrimSpace(string(res)), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Fatalf("jq printed %q", l)
		}
		got = append(got, strings.Join(f[:3], " "))
		if v, err := strconv.ParseUint(f[2], 0, 64); err == nil && strconv.FormatUint(v, 10) == f[3] {
			exact++
		}
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || above == 0 {
		t.Fatalf("jq id_hex:\n%s\nwant (truth, %d ids above 2^53):\n%s", strings.Join(got, "\n"), above, strings.Join(want, "\n"))
	}
	t.Logf("%d pings and pongs (%d ids above 2^53): id_hex exact; jq printed %d of the ids exactly", len(got), above, exact)
}
