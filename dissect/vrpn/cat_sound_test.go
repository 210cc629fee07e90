package vrpn

import "testing"

// A test encoder for vrpn_Sound's requests, written from mainline's
// encode functions (vrpn_Sound.C at 893c7496), not from cat_sound.go.

// soundDef is a vrpn_SoundDef's values.
type soundDef struct {
	pos                                  [3]float64
	quat                                 [4]float64 // x, y, z, w
	vel                                  [4]float64
	volume                               float32
	maxBack, minBack, maxFront, minFront float64
	coneInner, coneOuter, coneGain       float64
	doppler, eq, pitch                   float64
}

// encSoundDef writes d as encodeSoundDef and encodeSound_local do:
// position, orientation, velocity, volume (float32), max_back, min_back,
// max_front, min_front, cone inner, outer, gain, dopler, eq, pitch.
func encSoundDef(d soundDef) []byte {
	var vs []any
	for _, v := range d.pos {
		vs = append(vs, v)
	}
	for _, v := range d.quat {
		vs = append(vs, v)
	}
	for _, v := range d.vel {
		vs = append(vs, v)
	}
	vs = append(vs, d.volume, d.maxBack, d.minBack, d.maxFront, d.minFront,
		d.coneInner, d.coneOuter, d.coneGain, d.doppler, d.eq, d.pitch)
	return wbe(vs...)
}

// sndStale is n bytes standing for memory the sender never wrote.
func sndStale(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(0xA0 + i)
	}
	return b
}

func soundSamples() []sample {
	def := soundDef{
		pos: [3]float64{1, 2, 3}, quat: [4]float64{0, 0, 0.6, 0.8}, vel: [4]float64{4.5, 5.5, 6.5, 1},
		volume: 0.75, maxBack: 10, minBack: 1, maxFront: 20, minFront: 2,
		coneInner: 30, coneOuter: 60, coneGain: 0.25, doppler: 1.5, eq: 0.125, pitch: 2,
	}
	defJSON := `"pos":[1,2,3],"quat":{"x":0,"y":0,"z":0.6,"w":0.8},"velocity":[4.5,5.5,6.5,1],"volume":0.75,` +
		`"max_back_dist":10,"min_back_dist":1,"max_front_dist":20,"min_front_dist":2,` +
		`"cone_inner_angle":30,"cone_outer_angle":60,"cone_gain":0.25,"doppler_scale":1.5,"equalization_val":0.125,"pitch":2`
	// Material names: a fixed 128-byte buffer, whatever follows the NUL
	// included.
	wood := padTo([]byte("wood\x00"), maxMaterialName)
	copy(wood[60:], "old name")
	glass := append([]byte("glass\x00"), sndStale(maxMaterialName-6)...)
	quadVerts := f64s(0, 0, 0, 4, 0, 0, 4, 3, 0, 0, 3, 0)
	quadJSON := `[[0,0,0],[4,0,0],[4,3,0],[0,3,0]]`
	triVerts := f64s(0, 0, 1, 2, 0, 1, 0, 2, 1)
	triJSON := `[[0,0,1],[2,0,1],[0,2,1]]`
	return []sample{
		// encodeSound_local: id, the definition, the file name and its
		// NUL, then 4 bytes counted (sizeof(vrpn_SoundDef) is 176, 172
		// written) but never written.
		{"vrpn_Sound Load_Local", wbe(int32(7), encSoundDef(def), "sounds/bell.wav\x00", sndStale(4)),
			`{"sound_id":7,` + defJSON + `,"filename":"sounds/bell.wav"}`},
		{"vrpn_Sound Load_Remote", nil, `{}`},
		{"vrpn_Sound Unload", wbe(int32(7)), `{"sound_id":7}`},
		// encodeSoundPlay: repeat, then id.
		{"vrpn_Sound Play", wbe(int32(3), int32(7)), `{"repeat":3,"sound_id":7}`},
		{"vrpn_Sound Play", wbe(int32(0), int32(-1)), `{"repeat":0,"sound_id":-1}`},
		{"vrpn_Sound Stop", wbe(int32(8)), `{"sound_id":8}`},
		// encodeSoundDef: repeat, id, the definition.
		{"vrpn_Sound Status", wbe(int32(2), int32(9), encSoundDef(def)), `{"repeat":2,"sound_id":9,` + defJSON + `}`},
		// encodeListenerPose: position, orientation; the length is
		// sizeof(vrpn_ListenerDef), 88 bytes, 56 written.
		{"vrpn_Sound Listener_Pose", wbe(f64s(0.5, 1.5, -2), f64s(0.6, 0, 0, 0.8), sndStale(32)),
			`{"pos":[0.5,1.5,-2],"quat":{"x":0.6,"y":0,"z":0,"w":0.8}}`},
		{"vrpn_Sound Listener_Velocity", f64s(1, -1, 0.5, 2), `{"velocity":[1,-1,0.5,2]}`},
		// encodeSoundPose: id, orientation, then position.
		{"vrpn_Sound Pose", wbe(int32(4), f64s(0, 0.8, 0, 0.6), f64s(7, 8, 9)),
			`{"sound_id":4,"quat":{"x":0,"y":0.8,"z":0,"w":0.6},"pos":[7,8,9]}`},
		{"vrpn_Sound Velocity", wbe(int32(4), f64s(0.25, 0.5, 0.75, 1)), `{"sound_id":4,"velocity":[0.25,0.5,0.75,1]}`},
		// setSoundDistances(id, max_front, min_front, max_back, min_back)
		// hands them to encodeSoundDistInfo in that order.
		{"vrpn_Sound DistInfo", wbe(int32(5), f64s(20, 2, 10, 1)),
			`{"sound_id":5,"max_front_dist":20,"min_front_dist":2,"max_back_dist":10,"min_back_dist":1}`},
		{"vrpn_Sound ConeInfo", wbe(int32(5), f64s(45, 90, 0.5)),
			`{"sound_id":5,"cone_inner_angle":45,"cone_outer_angle":90,"cone_gain":0.5}`},
		{"vrpn_Sound DopFac", wbe(int32(6), 1.25), `{"sound_id":6,"doppler_factor":1.25}`},
		{"vrpn_Sound EqVal", wbe(int32(6), 0.375), `{"sound_id":6,"eq_value":0.375}`},
		{"vrpn_Sound Pitch", wbe(int32(6), 0.5), `{"sound_id":6,"pitch":0.5}`},
		{"vrpn_Sound Volume", wbe(int32(6), 0.875), `{"sound_id":6,"volume":0.875}`},
		// encodeLoadModel_local: the name and its NUL; the length counts a
		// vrpn_SoundID more.
		{"vrpn_Sound Load_Model_Local", wbe("models/room.wrl\x00", sndStale(4)), `{"filename":"models/room.wrl"}`},
		{"vrpn_Sound Load_Model_Remote", nil, `{}`},
		// encodeLoadPolyQuad: subQuad, openingFactor, tag, 4×3 vertices,
		// the 128-byte name; sizeof(vrpn_QuadDef) is 248, 240 written.
		{"vrpn_Sound Load_Poly_Quad", wbe(int32(1), 0.5, int32(12), quadVerts, wood, sndStale(8)),
			`{"sub_quad":1,"opening_factor":0.5,"tag":12,"vertices":` + quadJSON + `,"material":"wood"}`},
		// encodeLoadPolyTri: the same with 3 vertices; the length is
		// 4 + sizeof(vrpn_TriDef), 228, 216 written.
		{"vrpn_Sound Load_Poly_Tri", wbe(int32(0), 0.25, int32(13), triVerts, glass, sndStale(12)),
			`{"sub_tri":0,"opening_factor":0.25,"tag":13,"vertices":` + triJSON + `,"material":"glass"}`},
		// encodeLoadMaterial: id, the 128-byte name, four gains.
		{"vrpn_Sound Load_Material", wbe(int32(2), wood, f64s(0.5, 0.25, 0.75, 0.125)),
			`{"material_id":2,"material":"wood","transmittance_gain":0.5,"transmittance_highfreq":0.25,"reflectance_gain":0.75,"reflectance_highfreq":0.125}`},
		{"vrpn_Sound Quad_Vertices", wbe(int32(12), quadVerts), `{"tag":12,"vertices":` + quadJSON + `}`},
		{"vrpn_Sound Tri_Vertices", wbe(int32(13), triVerts), `{"tag":13,"vertices":` + triJSON + `}`},
		{"vrpn_Sound Poly_OF", wbe(int32(12), 0.625), `{"tag":12,"opening_factor":0.625}`},
		// encodeSetPolyMaterial: tag, 128 bytes copied from the name.
		{"vrpn_Sound Poly_Material", wbe(int32(13), glass), `{"tag":13,"material":"glass"}`},
	}
}

// TestSoundStale: the bytes a mainline client counts but never writes may
// be absent; bytes beyond them are warned about.
func TestSoundStale(t *testing.T) {
	r := decodeOne(t, "vrpn_Sound Load_Model_Local", wbe("room.wrl\x00"))
	if len(r.Warnings) > 0 {
		t.Errorf("no stale bytes: warnings %q", r.Warnings)
	}
	if v, _ := r.Fields.Get("filename"); v.Str() != "room.wrl" {
		t.Errorf("filename %v", v)
	}
	r = decodeOne(t, "vrpn_Sound Load_Model_Local", wbe("room.wrl\x00", sndStale(5)))
	wantWarning(t, r, "body of 14 bytes is longer than the 13 bytes")
}
