package vrpn

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// poserDefs lists the catalogued types of mainline's vrpn_Poser.C: the
// four requests a client's vrpn_Poser_Remote sends to move a device
// (vrpn_Poser_Server answers none of them).
//
// Mainline's remote writes a relative pose request from its running total:
// set_pose_relative adds the change to the pose it holds (its last
// absolute request, or the origin and the identity quaternion, composed
// with every relative change since) and encode_to writes that total, which
// the server then applies as a change. A relative velocity request
// carries the change as given (request_pose_velocity_relative calls
// set_pose_velocity). The bytes are decoded as sent.
func poserDefs() []msgDef {
	velocity := func(what string) []layout.Field {
		return []layout.Field{
			vec3f("vel", "m/s", what+"linear velocity [x, y, z]"),
			quatf("vel_quat", what+"rotation over vel_quat_dt, as a quaternion"),
			f64f("vel_quat_dt", "s", what+"seconds over which vel_quat applies"),
		}
	}
	return []msgDef{{
		name: "vrpn_Poser Request Pos_Quat",
		doc:  "a client asks the poser to move to a pose (vrpn_Poser_Remote request_pose; the server clamps the position to its workspace)",
		body: []layout.Field{
			vec3f("pos", "m", "position asked for [x, y, z]"),
			quatf("quat", "orientation asked for"),
		},
		pose: &dissect.Pose{Position: "pos", Orientation: "quat", Name: "request"},
	}, {
		name: "vrpn_Poser Request Relative Pos_Quat",
		doc:  "a client asks the poser to move by a change of pose: the server adds pos and multiplies its orientation by quat (mainline's remote sends its running total of changes; see the family doc)",
		body: []layout.Field{
			vec3f("pos", "m", "change of position the server adds [x, y, z]"),
			quatf("quat", "rotation the server composes with its orientation"),
		},
	}, {
		name: "vrpn_Poser Request Velocity",
		doc:  "a client asks the poser to move at a velocity (vrpn_Poser_Remote request_pose_velocity; the server clamps it to its limits)",
		body: velocity(""),
	}, {
		name: "vrpn_Poser Request Relative Velocity",
		doc:  "a client asks the poser to change its velocity by vel, vel_quat and vel_quat_dt (vrpn_Poser_Remote request_pose_velocity_relative)",
		body: velocity("change of "),
	}}
}
