package vrpn

import (
	"reflect"
	"testing"
)

// TestSoundMainline decodes mainline's own vrpn_Sound_Client traffic and
// compares every value with what the client handed to mainline (client
// "sent"). Load_Local's definition is a vrpn_SoundDef left as its
// constructor makes it (vrpn_Sound.h: every number 0, the orientation
// 0,0,0,1) but for the volume the client set.
func TestSoundMainline(t *testing.T) {
	got := decodeMainline(t, "sound.pcap", "vrpn_Sound")
	// The truth names some calls, not the wire types.
	wire := map[string]string{"vrpn_Sound Set_Volume": "vrpn_Sound Volume", "vrpn_Sound Set_Listener_Pose": "vrpn_Sound Listener_Pose"}
	used := map[string]int{}
	for _, l := range readMainline(t, "sound.client.jsonl") {
		if l.str("dir") != "sent" {
			continue
		}
		typ := l.str("type")
		if w, ok := wire[typ]; ok {
			typ = w
		}
		i := used[typ]
		used[typ]++
		if i >= len(got[typ]) {
			t.Fatalf("%d %s decoded, mainline sent more", len(got[typ]), typ)
		}
		r := got[typ][i]
		var want map[string]any
		switch typ {
		case "vrpn_Sound Load_Local":
			want = map[string]any{"sound_id": l["id"], "filename": l["file"], "volume": l["volume"],
				"pos": []any{0.0, 0.0, 0.0}, "quat": map[string]any{"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0},
				"velocity": []any{0.0, 0.0, 0.0, 0.0}, "max_back_dist": 0.0, "min_back_dist": 0.0, "max_front_dist": 0.0,
				"min_front_dist": 0.0, "cone_inner_angle": 0.0, "cone_outer_angle": 0.0, "cone_gain": 0.0,
				"doppler_scale": 0.0, "equalization_val": 0.0, "pitch": 0.0}
		case "vrpn_Sound Play":
			want = map[string]any{"sound_id": l["id"], "repeat": l["repeat"]}
		case "vrpn_Sound Volume":
			want = map[string]any{"sound_id": l["id"], "volume": l["volume"]}
		case "vrpn_Sound Listener_Pose":
			q := l["quat"].([]any)
			want = map[string]any{"pos": l["pos"], "quat": map[string]any{"x": q[0], "y": q[1], "z": q[2], "w": q[3]}}
		case "vrpn_Sound Stop":
			want = map[string]any{"sound_id": l["id"]}
		default:
			t.Errorf("client sent %s: not checked", typ)
			continue
		}
		if g := bodyJSON(r); !reflect.DeepEqual(g, want) {
			t.Errorf("%s at %d:\n got %v\nwant %v", typ, r.Offset, g, want)
		}
	}
	for typ, rs := range got {
		if used[typ] != len(rs) {
			t.Errorf("%s: %d decoded, %d compared with mainline", typ, len(rs), used[typ])
		}
	}
	if len(got) != 5 {
		t.Errorf("%d sound types decoded, the capture holds 5", len(got))
	}
}
