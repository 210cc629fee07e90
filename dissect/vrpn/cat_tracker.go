package vrpn

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// Names of vrpn_Tracker's message types beyond Pos_Quat, Velocity and
// Acceleration (decode.go), as vrpn_Tracker::register_types registers them.
const (
	nameTrackerToRoom       = "vrpn_Tracker To_Room"
	nameTrackerUnitToSensor = "vrpn_Tracker Unit_To_Sensor"
	nameTrackerWorkspace    = "vrpn_Tracker Workspace"
	nameTrackerReqToRoom    = "vrpn_Tracker Request_Tracker_To_Room"
	nameTrackerReqUnit      = "vrpn_Tracker Request_Unit_To_Sensor"
	nameTrackerReqWorkspace = "vrpn_Tracker Request_Tracker_Workspace"
	nameTrackerUpdateRate   = "vrpn_Tracker set_update_rate"
	nameTrackerResetOrigin  = "vrpn_Tracker Reset_Origin"
)

// trackerDefs lists the catalogued types of mainline's vrpn_Tracker.C.
//
// A client's vrpn_Tracker_Remote asks, with an empty body, for the
// tracker-to-room transform, the unit-to-sensor transforms or the
// workspace; the server's vrpn_Tracker answers with one To_Room, one
// Unit_To_Sensor per sensor (sensors 0 to num_sensors-1, each its own
// message) or one Workspace. The two transforms are poses (drawn in the
// sender's frame, under the names to_room and unit_to_sensor). The
// Unit_To_Sensor sensor has no sensor role: the transform SENDER →
// SENDER/sensorN belongs to Pos_Quat, which the unit-to-sensor offset
// would contradict.
func trackerDefs() []msgDef {
	reply := func(req string) dissect.Exchange { return dissect.Exchange{Role: dissect.Reply, Answers: req} }
	request := dissect.Exchange{Role: dissect.Request}
	return []msgDef{{
		name: nameTrackerToRoom,
		doc:  "the server's tracker-to-room transform: where the tracker's origin is in the room (answers Request_Tracker_To_Room)",
		body: []layout.Field{
			vec3f("pos", "m", "position of the tracker's origin in the room [x, y, z]"),
			quatf("quat", "orientation of the tracker in the room"),
		},
		exchange: reply(nameTrackerReqToRoom),
		pose:     &dissect.Pose{Position: "pos", Orientation: "quat", Name: "to_room"},
	}, {
		name: nameTrackerUnitToSensor,
		doc:  "the server's unit-to-sensor transform of one sensor: where the reported point is relative to the sensor (one message per sensor, answering Request_Unit_To_Sensor)",
		body: []layout.Field{
			i32f("sensor", "tracker sensor number"),
			i32f("pad", "filler mainline writes as 0 so that the doubles after it fall on 8 bytes; the value sent"),
			vec3f("pos", "m", "position of the reported point in the sensor's frame [x, y, z]"),
			quatf("quat", "orientation of the reported point in the sensor's frame"),
		},
		exchange: reply(nameTrackerReqUnit),
		pose:     &dissect.Pose{Position: "pos", Orientation: "quat", Name: "unit_to_sensor"},
	}, {
		name: nameTrackerWorkspace,
		doc:  "the server's tracker workspace: the box the sensors can be tracked in (answers Request_Tracker_Workspace)",
		body: []layout.Field{
			vec3f("min", "m", "corner of the workspace with the smallest coordinates [x, y, z]"),
			vec3f("max", "m", "corner of the workspace with the largest coordinates [x, y, z]"),
		},
		exchange: reply(nameTrackerReqWorkspace),
	}, {
		name:     nameTrackerReqToRoom,
		doc:      "a client asks for the tracker-to-room transform (empty body; answered by To_Room)",
		exchange: request,
	}, {
		name:     nameTrackerReqUnit,
		doc:      "a client asks for every sensor's unit-to-sensor transform (empty body; answered by one Unit_To_Sensor per sensor)",
		exchange: request,
	}, {
		name:     nameTrackerReqWorkspace,
		doc:      "a client asks for the tracker's workspace (empty body; answered by Workspace)",
		exchange: request,
	}, {
		name: nameTrackerUpdateRate,
		doc:  "a client asks the tracker to report at a rate (vrpn_Tracker_Remote set_update_rate; no answer)",
		body: []layout.Field{f64f("rate", "Hz", "reports per second asked for")},
	}, {
		name: nameTrackerResetOrigin,
		doc:  "a client asks the tracker to take its current pose as the origin (empty body; no answer)",
	}}
}
