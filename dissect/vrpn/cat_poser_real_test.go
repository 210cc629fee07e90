package vrpn

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// checkPoser decodes a capture of a client's vrpn_Poser_Remote requests.
// The pose requests are compared with what mainline's vrpn_Poser_Server
// handed its callbacks (for a relative request that is the change as
// received: handle_relative_change_message passes dp and dq, whatever the
// truth line's label says), the velocity requests (which the server
// reports to no callback) with the values the client handed
// request_pose_velocity and request_pose_velocity_relative. Each relative
// pose request carries the remote's running total: the position of the
// absolute request before it plus the change the client asked for
// (set_pose_relative). It returns how many requests it checked.
func checkPoser(t *testing.T, base string) int {
	t.Helper()
	recs := mlDecode(t, base)
	client := mlTruth(t, base, "client")
	server := mlTruth(t, base, "server")
	all := func(typ string, truth []mlLine) []*dissect.Record {
		t.Helper()
		got := mlOfType(recs, typ)
		if len(got) != len(truth) || len(got) == 0 {
			t.Fatalf("%s: %s: %d records, %d truth lines", base, typ, len(got), len(truth))
		}
		return got
	}
	n := 0
	pose := func(l mlLine) map[string]any { return map[string]any{"pos": l["pos"], "quat": mlQuat(l["quat"])} }
	truth := mlSelect(server, "recv", "vrpn_Poser_Server change")
	for i, r := range all("vrpn_Poser Request Pos_Quat", truth) {
		mlCheck(t, r.Type, r, truth[i], pose(truth[i]))
		n++
	}
	truth = mlSelect(server, "recv", "vrpn_Poser_Server relative change (pose after it)")
	for i, r := range all("vrpn_Poser Request Relative Pos_Quat", truth) {
		mlCheck(t, r.Type, r, truth[i], pose(truth[i]))
		n++
	}

	var abs []any
	rel := mlOfType(recs, "vrpn_Poser Request Relative Pos_Quat")
	k := 0
	for _, l := range client {
		switch l["type"] {
		case "vrpn_Poser Request_Pose":
			abs = l["pos"].([]any)
		case "vrpn_Poser Request_Pose_Relative":
			if abs == nil || k >= len(rel) {
				t.Fatalf("%s: relative request %d without an absolute one before it, or not on the wire", base, k)
			}
			pos := jsonValue(mustGet(t, rel[k], "pos")).([]any)
			for i := range 3 {
				if sum := abs[i].(float64) + l["pos_delta"].([]any)[i].(float64); pos[i] != sum {
					t.Errorf("%s: relative request %d pos[%d] = %v, want the remote's running total %v", base, k, i, pos[i], sum)
				}
			}
			abs, k = nil, k+1
		}
	}

	truth = mlSelect(client, "sent", "vrpn_Poser Request_Velocity")
	for i, r := range all("vrpn_Poser Request Velocity", truth) {
		l := truth[i]
		mlCheck(t, r.Type, r, l, map[string]any{"vel": l["vel"], "vel_quat": mlQuat(l["vel_quat"]), "vel_quat_dt": l["interval"]})
		n++
	}
	truth = mlSelect(client, "sent", "vrpn_Poser Request_Velocity_Relative")
	for i, r := range all("vrpn_Poser Request Relative Velocity", truth) {
		l := truth[i]
		mlCheck(t, r.Type, r, l, map[string]any{"vel": l["vel_delta"], "vel_quat": mlQuat(l["vel_quat"]), "vel_quat_dt": l["interval_delta"]})
		n++
	}
	return n
}

// TestMainlinePoser decodes poser.pcap (one request of each kind) and
// session.pcap (30 absolute and 30 relative pose requests, 8 of each
// velocity request, among text and tracker messages).
func TestMainlinePoser(t *testing.T) {
	if n := checkPoser(t, pcapsVRPN("poser")); n != 4 {
		t.Errorf("poser.pcap: %d requests checked, want 4", n)
	}
	if n := checkPoser(t, pcapsVRPN("session")); n != 76 {
		t.Errorf("session.pcap: %d requests checked, want 76", n)
	}
}
