package vrpn

import (
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestMainlinePoser decodes poser.pcap: a client's vrpn_Poser_Remote sent
// one request of each kind. The pose requests are compared with what
// mainline's vrpn_Poser_Server handed its callbacks (for the relative
// request that is the change as received: handle_relative_change_message
// passes dp and dq, whatever the truth line's label says), the velocity
// requests (which the server reports to no callback) with the values the
// client handed request_pose_velocity and request_pose_velocity_relative.
func TestMainlinePoser(t *testing.T) {
	const sc = "poser"
	recs := mlDecode(t, sc)
	client := mlTruth(t, sc, "client")
	server := mlTruth(t, sc, "server")
	one := func(typ string, truth []mlLine) (*dissect.Record, mlLine) {
		t.Helper()
		got := mlOfType(recs, typ)
		if len(got) != 1 || len(truth) != 1 {
			t.Fatalf("%s: %d records, %d truth lines, want 1 and 1", typ, len(got), len(truth))
		}
		return got[0], truth[0]
	}

	r, l := one("vrpn_Poser Request Pos_Quat", mlSelect(server, "recv", "vrpn_Poser_Server change"))
	mlCheck(t, r.Type, r, l, map[string]any{"pos": l["pos"], "quat": mlQuat(l["quat"])})
	abs := mlSelect(client, "sent", "vrpn_Poser Request_Pose")

	r, l = one("vrpn_Poser Request Relative Pos_Quat", mlSelect(server, "recv", "vrpn_Poser_Server relative change (pose after it)"))
	mlCheck(t, r.Type, r, l, map[string]any{"pos": l["pos"], "quat": mlQuat(l["quat"])})
	// The remote sent its running total: the absolute position it sent
	// before plus the change the client asked for (set_pose_relative).
	rel := mlSelect(client, "sent", "vrpn_Poser Request_Pose_Relative")
	if len(abs) != 1 || len(rel) != 1 {
		t.Fatalf("%d absolute and %d relative pose requests sent, want 1 and 1", len(abs), len(rel))
	}
	pos := jsonValue(mustGet(t, r, "pos")).([]any)
	for i := range 3 {
		sum := abs[0]["pos"].([]any)[i].(float64) + rel[0]["pos_delta"].([]any)[i].(float64)
		if pos[i] != sum {
			t.Errorf("relative request pos[%d] = %v, want the remote's running total %v", i, pos[i], sum)
		}
	}

	r, l = one("vrpn_Poser Request Velocity", mlSelect(client, "sent", "vrpn_Poser Request_Velocity"))
	mlCheck(t, r.Type, r, l, map[string]any{"vel": l["vel"], "vel_quat": mlQuat(l["vel_quat"]), "vel_quat_dt": l["interval"]})
	r, l = one("vrpn_Poser Request Relative Velocity", mlSelect(client, "sent", "vrpn_Poser Request_Velocity_Relative"))
	mlCheck(t, r.Type, r, l, map[string]any{"vel": l["vel_delta"], "vel_quat": mlQuat(l["vel_quat"]), "vel_quat_dt": l["interval_delta"]})
}
