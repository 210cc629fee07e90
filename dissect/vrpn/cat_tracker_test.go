package vrpn

import "testing"

// trackerSamples are vrpn_Tracker's messages as mainline writes them:
// encode_tracker2room_to (f64 pos[3], f64 quat[4] x,y,z,w),
// encode_unit2sensor_to (i32 sensor, i32 0, f64 pos[3], f64 quat[4]),
// encode_workspace_to (f64 min[3], f64 max[3]), the remote's three
// requests and reset_origin with no body, and set_update_rate (one f64).
func trackerSamples() []sample {
	return []sample{
		{"vrpn_Tracker To_Room", wbe(1.5, -2.25, 0.0, 0.0, 0.0, 0.6, 0.8),
			`{"pos":[1.5,-2.25,0],"quat":{"x":0,"y":0,"z":0.6,"w":0.8}}`},
		{"vrpn_Tracker Unit_To_Sensor", wbe(int32(1), int32(0), 0.0, 0.125, -0.5, 0.5, 0.5, 0.5, 0.5),
			`{"sensor":1,"pad":0,"pos":[0,0.125,-0.5],"quat":{"x":0.5,"y":0.5,"z":0.5,"w":0.5}}`},
		{"vrpn_Tracker Workspace", wbe(-1.0, -2.0, 0.0, 1.0, 2.0, 2.5),
			`{"min":[-1,-2,0],"max":[1,2,2.5]}`},
		{"vrpn_Tracker Request_Tracker_To_Room", nil, `{}`},
		{"vrpn_Tracker Request_Unit_To_Sensor", nil, `{}`},
		{"vrpn_Tracker Request_Tracker_Workspace", nil, `{}`},
		{"vrpn_Tracker set_update_rate", wbe(60.0), `{"rate":60}`},
		{"vrpn_Tracker Reset_Origin", nil, `{}`},
	}
}

// TestExchangeSameDirection: a reply answers only a request of the other
// direction, so a request and its reply sent the same way give no rtt_ms
// (the two directions are timed in TestMainlineTracker).
func TestExchangeSameDirection(t *testing.T) {
	run := fuzzFeed(catalogueStream([]sample{
		{name: nameTrackerReqToRoom},
		{name: nameTrackerToRoom, body: wbe(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)},
	}), 0, 1, true)
	r := run.recs[len(run.recs)-1]
	if _, ok := r.Fields.Get("rtt_ms"); r.Type != nameTrackerToRoom || ok {
		t.Errorf("%s: rtt_ms %v, want none", r.Type, ok)
	}
}
