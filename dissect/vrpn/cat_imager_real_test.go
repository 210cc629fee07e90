package vrpn

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// mainlineLine is one line of a mainline program's truth (testdata/mainline/
// README.md): its fields as JSON values.
type mainlineLine map[string]any

func (l mainlineLine) str(k string) string { s, _ := l[k].(string); return s }
func (l mainlineLine) num(k string) float64 {
	f, _ := l[k].(float64)
	return f
}

// readMainline reads the JSON lines of a truth file (other lines are the
// library's own notices).
func readMainline(t *testing.T, file string) []mainlineLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "mainline", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []mainlineLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var l mainlineLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, l)
	}
	return out
}

// decodeMainline decodes a capture of testdata/mainline, checks every
// record against its declaration, and returns the records whose type
// starts with prefix, by type, each decoded without warning.
func decodeMainline(t *testing.T, file, prefix string) map[string][]*dissect.Record {
	t.Helper()
	reg, _ := registry(t)
	recs := dissecttest.Decode(t, reg, filepath.Join("testdata", "mainline", file))
	dissecttest.CheckDeclared(t, reg, recs)
	out := map[string][]*dissect.Record{}
	for _, r := range recs {
		if !strings.HasPrefix(r.Type, prefix) {
			continue
		}
		if len(r.Warnings) > 0 {
			t.Errorf("%s at %d: warnings %q", r.Type, r.Offset, r.Warnings)
		}
		if _, ok := r.Fields.Get("data"); ok {
			t.Errorf("%s at %d: body left as data", r.Type, r.Offset)
		}
		out[r.Type] = append(out[r.Type], r)
	}
	return out
}

// fieldNum is a numeric field of r as a float64 (NaN-free test values).
func fieldNum(t *testing.T, r *dissect.Record, key string) float64 {
	t.Helper()
	v, ok := r.Fields.Get(key)
	if !ok {
		t.Errorf("%s: no %s", r.Type, key)
		return 0
	}
	return jsonValue(v).(float64)
}

// checkNums compares fields of r with a truth line: field name → truth key.
func checkNums(t *testing.T, r *dissect.Record, l mainlineLine, keys map[string]string) {
	t.Helper()
	for f, k := range keys {
		if _, ok := l[k]; !ok {
			t.Errorf("truth line %v has no %s", l, k)
			continue
		}
		if g, w := fieldNum(t, r, f), l.num(k); g != w {
			t.Errorf("%s at %d: %s = %v, mainline %s = %v", r.Type, r.Offset, f, g, k, w)
		}
	}
}

// checkSent compares r's sent time with a truth line's sec and usec.
func checkSent(t *testing.T, r *dissect.Record, l mainlineLine) {
	t.Helper()
	v, _ := r.Fields.Get("sent")
	want := time.Unix(int64(l.num("sec")), int64(l.num("usec"))*1000).UTC()
	if !v.Time().Equal(want) {
		t.Errorf("%s at %d: sent %v, mainline %v", r.Type, r.Offset, v.Time(), want)
	}
}

// TestImagerMainline decodes mainline's own imager traffic and compares
// every value with what the server handed to mainline (server "sent") and
// what mainline's vrpn_Imager_Remote read from the description (client
// "recv": description and channels; region depths and value types).
func TestImagerMainline(t *testing.T) {
	got := decodeMainline(t, "imager.pcap", "vrpn_Imager")
	server := readMainline(t, "imager.server.jsonl")
	client := readMainline(t, "imager.client.jsonl")
	used := map[string]int{}
	next := func(typ string) *dissect.Record {
		i := used[typ]
		used[typ]++
		if i >= len(got[typ]) {
			t.Fatalf("%d %s decoded, mainline sent more", len(got[typ]), typ)
		}
		return got[typ][i]
	}

	// Descriptions (one per connection, ping and explicit send): the
	// client's remote read each, then its channels.
	var desc *dissect.Record
	for _, l := range client {
		switch {
		case l.str("dir") == "recv" && l.str("type") == nameImagerDescription:
			desc = next(nameImagerDescription)
			checkSent(t, desc, l)
			checkNums(t, desc, l, map[string]string{"depth": "nDepth", "rows": "nRows", "cols": "nCols", "num_channels": "nChannels"})
		case l.str("dir") == "recv" && l.str("type") == "vrpn_Imager Description channel":
			chans, _ := desc.Fields.Get("channels")
			i := int(l.num("index"))
			if i >= len(chans.Items()) {
				t.Fatalf("channel %d of %d", i, len(chans.Items()))
			}
			ch := jsonValue(chans.Items()[i].Value).(map[string]any)
			want := map[string]any{"name": l["name"], "units": l["units"], "min_val": l["minVal"], "max_val": l["maxVal"],
				"offset": l["offset"], "scale": l["scale"], "compression": "none"}
			for k, w := range want {
				if ch[k] != w {
					t.Errorf("description at %d channel %d: %s = %v, mainline %v", desc.Offset, i, k, ch[k], w)
				}
			}
		case l.str("dir") == "sent" && l.str("type") == "vrpn_Imager Throttle":
			checkNums(t, next("vrpn_Imager Throttle_Frames"), l, map[string]string{"frames": "N"})
		}
	}

	// Frames and regions, as the server sent them. The server's region
	// lines lack the depths and value type: the client's recv lines give
	// them (its float32 pixels are not used: receiver.C's copy of them
	// into its buffer reads other than what the payload holds; the
	// server's values are the payload's).
	var recvRegions []mainlineLine
	for _, l := range client {
		if l.str("dir") == "recv" && strings.HasPrefix(l.str("type"), "vrpn_Imager Region") {
			recvRegions = append(recvRegions, l)
		}
	}
	frame := map[string]string{"col_min": "cMin", "col_max": "cMax", "row_min": "rMin", "row_max": "rMax", "depth_min": "dMin", "depth_max": "dMax"}
	valTypes := map[float64]string{1: "uint8", 4: "uint16", 6: "float32"}
	regions := 0
	for _, l := range server {
		typ := l.str("type")
		if l.str("dir") != "sent" || typ == nameImagerDescription {
			continue
		}
		r := next(typ)
		checkSent(t, r, l)
		switch {
		case typ == "vrpn_Imager Begin_Frame" || typ == "vrpn_Imager End_Frame":
			checkNums(t, r, l, frame)
		case typ == "vrpn_Imager Discarded_Frames":
			checkNums(t, r, l, map[string]string{"count": "count"})
		case strings.HasPrefix(typ, "vrpn_Imager Region"):
			checkNums(t, r, l, map[string]string{"channel": "chanIndex", "col_min": "cMin", "col_max": "cMax", "row_min": "rMin", "row_max": "rMax"})
			if regions >= len(recvRegions) || recvRegions[regions].str("type") != typ {
				t.Fatalf("region %d: no client line of type %s", regions, typ)
			}
			rl := recvRegions[regions]
			regions++
			checkNums(t, r, rl, map[string]string{"depth_min": "dMin", "depth_max": "dMax"})
			if v, _ := r.Fields.Get("value_type"); v.Str() != valTypes[rl.num("valType")] {
				t.Errorf("%s: value_type %q, mainline valType %v", typ, v.Str(), rl["valType"])
			}
			v, _ := r.Fields.Get("values")
			want := l["values_row_major"].([]any)
			gotVals := jsonValue(v).([]any)
			if len(gotVals) != len(want) {
				t.Fatalf("%s: %d values, mainline sent %d", typ, len(gotVals), len(want))
			}
			for i := range want {
				if gotVals[i] != want[i] {
					t.Errorf("%s: value %d = %v, mainline sent %v", typ, i, gotVals[i], want[i])
				}
			}
		default:
			t.Errorf("server sent %s: not checked", typ)
		}
	}
	// Every decoded imager message was compared.
	for typ, rs := range got {
		if used[typ] != len(rs) {
			t.Errorf("%s: %d decoded, %d compared with mainline", typ, len(rs), used[typ])
		}
	}
	if regions != 3 || len(got) != 8 {
		t.Errorf("%d regions, %d types: the capture holds 3 regions of 8 imager types", regions, len(got))
	}
}
