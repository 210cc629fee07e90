package vrpn

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// The types of mainline's vrpn_Sound.C: requests a vrpn_Sound_Client sends
// to a sound server (which answers, if at all, with text messages). Each
// body is what the client's encode function writes; a vrpn_SoundID is an
// int32. Several clients send more bytes than they write (their lengths
// count a struct's padding or a larger buffer): those stale bytes are read
// and not kept (msgDef.stale).

// maxMaterialName is mainline's MAX_MATERIAL_NAME_LENGTH, the fixed size of
// a material name.
const maxMaterialName = 128

// soundID is the sound a request is about.
func soundID() layout.Field {
	return i32f("sound_id", "the sound the request is about (the client's vrpn_SoundID)")
}

// soundDefItems are a vrpn_SoundDef as encodeSound_local and encodeSoundDef
// write it: not in the struct's order (volume, a float32, comes after the
// velocity, and the back distances before the front ones).
func soundDefItems() []layout.Field {
	return []layout.Field{
		vec3f("pos", "m", "the sound's position"),
		quatf("quat", "the sound's orientation"),
		fixedf("velocity", "f8", 4, "", "the sound's velocity, mainline's four numbers"),
		f32f("volume", "", "the sound's gain (mainline calls it volume)"),
		f64f("max_back_dist", "m", "greatest distance behind the sound at which it is heard"),
		f64f("min_back_dist", "m", "distance behind the sound within which it is at full volume"),
		f64f("max_front_dist", "m", "greatest distance in front of the sound at which it is heard"),
		f64f("min_front_dist", "m", "distance in front of the sound within which it is at full volume"),
		f64f("cone_inner_angle", "", "inner angle of the sound's cone"),
		f64f("cone_outer_angle", "", "outer angle of the sound's cone"),
		f64f("cone_gain", "", "gain outside the sound's cone"),
		f64f("doppler_scale", "", "the sound's Doppler scale"),
		f64f("equalization_val", "", "the sound's equalisation value"),
		f64f("pitch", "", "the sound's pitch"),
	}
}

// idAnd is a request of sound_id then one float64.
func idAnd(name, doc, field, unit, fieldDoc string) msgDef {
	return msgDef{name: name, doc: doc, body: []layout.Field{soundID(), f64f(field, unit, fieldDoc)}}
}

// soundDefs lists the catalogued types of mainline's vrpn_Sound.C.
func soundDefs() []msgDef {
	loadLocal := append([]layout.Field{soundID()}, soundDefItems()...)
	loadLocal = append(loadLocal, cstrf("filename", "the sound file, on the server's side"))
	status := append([]layout.Field{i32f("repeat", "times to play the sound; 0: continuously"), soundID()}, soundDefItems()...)
	return []msgDef{
		{name: "vrpn_Sound Load_Local", doc: "client request: load a sound file held by the server, with the sound's definition (vrpn_Sound_Client loadSound)", body: loadLocal,
			// encodeSound_local's length counts sizeof(vrpn_SoundDef), 176
			// with padding, but it writes 172 bytes of it.
			stale: 4},
		{name: "vrpn_Sound Load_Remote", doc: "client request to load a sound sent by the client; mainline never sends it (encodeSound_remote writes nothing): no body"},
		{name: "vrpn_Sound Unload", doc: "client request: unload a sound (vrpn_Sound_Client unloadSound)", body: []layout.Field{soundID()}},
		// The server decodes Play with decodeSoundDef, reading a whole
		// vrpn_SoundDef after these; the client writes only these two.
		{name: "vrpn_Sound Play", doc: "client request: play a sound (vrpn_Sound_Client playSound)", body: []layout.Field{
			i32f("repeat", "times to play the sound; 0: continuously"), soundID(),
		}},
		{name: "vrpn_Sound Stop", doc: "client request: stop a playing sound (vrpn_Sound_Client stopSound)", body: []layout.Field{soundID()}},
		// No mainline client sends Status; the layout is encodeSoundDef's,
		// which the server's handler decodes.
		{name: "vrpn_Sound Status", doc: "request to change a sound's whole definition (encodeSoundDef; no mainline client sends it)", body: status},
		{name: "vrpn_Sound Listener_Pose", doc: "client request: set the listener's position and orientation (vrpn_Sound_Client setListenerPose)",
			body: []layout.Field{
				vec3f("pos", "m", "the listener's position"),
				quatf("quat", "the listener's orientation"),
			},
			// The length is sizeof(vrpn_ListenerDef), 88 bytes, of which
			// the client writes the pose's 56.
			stale: 32,
			pose:  &dissect.Pose{Position: "pos", Orientation: "quat", Name: "listener"}},
		{name: "vrpn_Sound Listener_Velocity", doc: "client request: set the listener's velocity (vrpn_Sound_Client setListenerVelocity)", body: []layout.Field{
			fixedf("velocity", "f8", 4, "", "the listener's velocity, mainline's four numbers"),
		}},
		// encodeSoundPose writes the orientation before the position.
		{name: "vrpn_Sound Pose", doc: "client request: set a sound's position and orientation (vrpn_Sound_Client setSoundPose)",
			body: []layout.Field{soundID(), quatf("quat", "the sound's orientation"), vec3f("pos", "m", "the sound's position")},
			pose: &dissect.Pose{Position: "pos", Orientation: "quat", Name: "sound"}},
		{name: "vrpn_Sound Velocity", doc: "client request: set a sound's velocity (vrpn_Sound_Client setSoundVelocity)", body: []layout.Field{
			soundID(), fixedf("velocity", "f8", 4, "", "the sound's velocity, mainline's four numbers"),
		}},
		// setSoundDistances passes max_front, min_front, max_back,
		// min_back to encodeSoundDistInfo, whose parameters (and the
		// server's reading) are min_back, max_back, min_front, max_front:
		// the fields name what the client meant.
		{name: "vrpn_Sound DistInfo", doc: "client request: set a sound's distances (vrpn_Sound_Client setSoundDistances)", body: []layout.Field{
			soundID(),
			f64f("max_front_dist", "m", "greatest distance in front at which the sound is heard (the server reads it as min_back)"),
			f64f("min_front_dist", "m", "distance in front within which the sound is at full volume (the server reads it as max_back)"),
			f64f("max_back_dist", "m", "greatest distance behind at which the sound is heard (the server reads it as min_front)"),
			f64f("min_back_dist", "m", "distance behind within which the sound is at full volume (the server reads it as max_front)"),
		}},
		{name: "vrpn_Sound ConeInfo", doc: "client request: set a sound's cone (vrpn_Sound_Client setSoundConeInfo)", body: []layout.Field{
			soundID(),
			f64f("cone_inner_angle", "", "inner angle of the sound's cone"),
			f64f("cone_outer_angle", "", "outer angle of the sound's cone"),
			f64f("cone_gain", "", "gain outside the sound's cone"),
		}},
		idAnd("vrpn_Sound DopFac", "client request: set a sound's Doppler factor (vrpn_Sound_Client setSoundDopScale)", "doppler_factor", "", "the sound's Doppler factor"),
		idAnd("vrpn_Sound EqVal", "client request: set a sound's equalisation value (vrpn_Sound_Client setSoundEqValue)", "eq_value", "", "the sound's equalisation value"),
		idAnd("vrpn_Sound Pitch", "client request: set a sound's pitch (vrpn_Sound_Client setSoundPitch)", "pitch", "", "the sound's pitch"),
		idAnd("vrpn_Sound Volume", "client request: set a sound's volume (vrpn_Sound_Client setSoundVolume)", "volume", "", "the sound's volume (gain)"),
		{name: "vrpn_Sound Load_Model_Local", doc: "client request: load a model of the acoustic scene from a file held by the server (vrpn_Sound_Client LoadModel_local)", body: []layout.Field{
			cstrf("filename", "the model file, on the server's side"),
		},
			// The length counts a vrpn_SoundID the client never writes.
			stale: 4},
		{name: "vrpn_Sound Load_Model_Remote", doc: "client request to load a model sent by the client; mainline never sends it (LoadModel_remote sends nothing): no body"},
		{name: "vrpn_Sound Load_Poly_Quad", doc: "client request: add a quadrilateral to the acoustic scene (vrpn_Sound_Client LoadPolyQuad)",
			body: append(polyHead("sub_quad", "whether the quad is part of another polygon (mainline's subQuad, a bool)"),
				fixedf("vertices", "f8", 3*4, "m", "the quad's four corners"),
				textf("material", maxMaterialName, "name of the quad's material")),
			triples: "vertices",
			// sizeof(vrpn_QuadDef) is 248 with padding; 240 are written.
			stale: 8},
		{name: "vrpn_Sound Load_Poly_Tri", doc: "client request: add a triangle to the acoustic scene (vrpn_Sound_Client LoadPolyTri)",
			body: append(polyHead("sub_tri", "whether the triangle is part of another polygon (mainline's subTri, a bool)"),
				fixedf("vertices", "f8", 3*3, "m", "the triangle's three corners"),
				textf("material", maxMaterialName, "name of the triangle's material")),
			triples: "vertices",
			// The length is 4 + sizeof(vrpn_TriDef) (224 with padding);
			// 216 bytes are written.
			stale: 12},
		{name: "vrpn_Sound Load_Material", doc: "client request: define a material (vrpn_Sound_Client LoadMaterial)", body: []layout.Field{
			i32f("material_id", "the client's number for the material"),
			textf("material", maxMaterialName, "the material's name"),
			f64f("transmittance_gain", "", "the material's transmittance gain"),
			f64f("transmittance_highfreq", "", "the material's high-frequency transmittance"),
			f64f("reflectance_gain", "", "the material's reflectance gain"),
			f64f("reflectance_highfreq", "", "the material's high-frequency reflectance"),
		}},
		{name: "vrpn_Sound Quad_Vertices", doc: "client request: move a quad's corners (vrpn_Sound_Client setQuadVertices)", body: []layout.Field{
			polyTag(), fixedf("vertices", "f8", 3*4, "m", "the quad's four corners"),
		}, triples: "vertices"},
		{name: "vrpn_Sound Tri_Vertices", doc: "client request: move a triangle's corners (vrpn_Sound_Client setTriVertices)", body: []layout.Field{
			polyTag(), fixedf("vertices", "f8", 3*3, "m", "the triangle's three corners"),
		}, triples: "vertices"},
		{name: "vrpn_Sound Poly_OF", doc: "client request: set a polygon's opening factor (vrpn_Sound_Client setPolyOF)", body: []layout.Field{
			polyTag(), f64f("opening_factor", "", "the polygon's opening factor"),
		}},
		// The client sends 128 bytes copied from the name, whatever
		// follows its NUL included.
		{name: "vrpn_Sound Poly_Material", doc: "client request: set a polygon's material (vrpn_Sound_Client setPolyMaterialName)", body: []layout.Field{
			polyTag(), textf("material", maxMaterialName, "name of the polygon's material"),
		}},
	}
}

// polyTag is the polygon a request is about.
func polyTag() layout.Field { return i32f("tag", "the polygon the request is about (its tag)") }

// polyHead is the start of a vrpn_QuadDef or vrpn_TriDef: sub flag,
// opening factor, tag.
func polyHead(sub, subDoc string) []layout.Field {
	return []layout.Field{
		i32f(sub, subDoc),
		f64f("opening_factor", "", "the polygon's opening factor"),
		polyTag(),
	}
}
