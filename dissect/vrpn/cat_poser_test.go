package vrpn

// poserSamples are vrpn_Poser_Remote's requests as mainline writes them:
// encode_to (f64 pos[3], f64 quat[4] x,y,z,w) for the two pose requests,
// encode_vel_to (f64 vel[3], f64 vel_quat[4], f64 dt) for the two
// velocity requests. The relative pose sample is what the remote sends
// for request_pose_relative((0.125, 0.0625, -0.5), identity) after
// request_pose((0.5, -0.25, 0.875), identity): its running total.
func poserSamples() []sample {
	return []sample{
		{"vrpn_Poser Request Pos_Quat", wbe(0.5, -0.25, 0.875, 0.0, 0.0, 0.0, 1.0),
			`{"pos":[0.5,-0.25,0.875],"quat":{"x":0,"y":0,"z":0,"w":1}}`},
		{"vrpn_Poser Request Relative Pos_Quat", wbe(0.625, -0.1875, 0.375, 0.0, 0.0, 0.0, 1.0),
			`{"pos":[0.625,-0.1875,0.375],"quat":{"x":0,"y":0,"z":0,"w":1}}`},
		{"vrpn_Poser Request Velocity", wbe(0.25, -0.5, 0.75, 0.0, 0.6, 0.0, 0.8, 0.125),
			`{"vel":[0.25,-0.5,0.75],"vel_quat":{"x":0,"y":0.6,"z":0,"w":0.8},"vel_quat_dt":0.125}`},
		{"vrpn_Poser Request Relative Velocity", wbe(-0.0625, 0.03125, 0.0, 0.0, 0.0, 0.0, 1.0, 0.375),
			`{"vel":[-0.0625,0.03125,0],"vel_quat":{"x":0,"y":0,"z":0,"w":1},"vel_quat_dt":0.375}`},
	}
}
