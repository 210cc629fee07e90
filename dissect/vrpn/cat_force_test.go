package vrpn

import (
	"strings"
	"testing"
)

// forceSamples are messages of vrpn_ForceDevice.C's types, each written
// as its encode_* function writes it (read in mainline, commit 893c7496):
// the C type of each argument decides its size (vrpn_float32: 4 bytes,
// vrpn_float64: 8, vrpn_int32/uint32: 4, vrpn_bool: a vrpn_int16, 2).
// Values are exact in float32 so the wants can be written by hand.
func forceSamples() []sample {
	f := func(vs ...float32) []any { // float32 values for wbe
		out := make([]any, len(vs))
		for i, v := range vs {
			out[i] = v
		}
		return out
	}
	cat := func(parts ...[]any) []any {
		var out []any
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	return []sample{
		// encode_force: vrpn_float64 force[3].
		{nameForce, wbe(1.5, -2.25, 0.125), `{"force":[1.5,-2.25,0.125]}`},
		// encode_forcefield: float32 origin[3], force[3], jacobian[3][3]
		// row by row, radius.
		{nameForceField, wbe(cat(f(0.5, 0.25, -0.5), f(1, 2, 3),
			f(-10, 0, 0, 0, -20, 0, 0, 0, -30), f(100))...),
			`{"origin":[0.5,0.25,-0.5],"force":[1,2,3],"jacobian":[-10,0,0,0,-20,0,0,0,-30],"radius":100}`},
		// encode_plane: float32 plane[4], kspring, kdamp, fdyn, fstat;
		// int32 plane_index, n_rec_cycles.
		{nameForcePlane, wbe(cat(f(0, 1, 0, -0.5), f(0.75, 0.0625, 0.375, 0.625), []any{int32(2), int32(10)})...),
			`{"plane":[0,1,0,-0.5],"kspring":0.75,"kdamp":0.0625,"fdynamic":0.375,"fstatic":0.625,"plane_index":2,"n_rec_cycles":10}`},
		// encode_surface_effects: six float32: adhesion normal, lateral,
		// texture amplitude, wavelength, buzz amplitude, frequency.
		{nameForcePlane2, wbe(f(0.5, 0.25, 0.001953125, 0.0078125, 0.0009765625, 60)...),
			`{"k_adhesion_normal":0.5,"k_adhesion_lateral":0.25,"texture_amplitude":0.001953125,"texture_wavelength":0.0078125,"buzz_amplitude":0.0009765625,"buzz_frequency":60}`},
		// encode_addObject: int32 objNum, ParentNum.
		{nameForceAddObj, wbe(int32(7), int32(-1)), `{"object_id":7,"parent_id":-1}`},
		// encode_addObjectExScene: int32 objNum.
		{nameForceAddObjEx, wbe(int32(8)), `{"object_id":8}`},
		// encode_moveToParent: int32 objNum, parentNum.
		{nameForceMoveTo, wbe(int32(8), int32(7)), `{"object_id":8,"parent_id":7}`},
		// encode_objectPosition: int32 objNum, float32 Pos[3].
		{nameForceObjPos, wbe(cat([]any{int32(3)}, f(0.125, -0.25, 0.5))...), `{"object_id":3,"pos":[0.125,-0.25,0.5]}`},
		// encode_objectOrientation: int32 objNum, float32 axis[3], angle.
		{nameForceObjOri, wbe(cat([]any{int32(3)}, f(0, 0, 1, 1.5))...), `{"object_id":3,"axis":[0,0,1],"angle":1.5}`},
		// encode_objectScale: int32 objNum, float32 Scale[3].
		{nameForceObjScale, wbe(cat([]any{int32(3)}, f(2, 2.5, 3))...), `{"object_id":3,"scale":[2,2.5,3]}`},
		// encode_removeObject: int32 objNum.
		{nameForceRmObj, wbe(int32(-5)), `{"object_id":-5}`},
		// encode_vertex: int32 objNum, vertNum, float32 x, y, z.
		{nameForceVertex, wbe(cat([]any{int32(1), int32(42)}, f(0.5, 0.75, -1))...), `{"object_id":1,"vertex_num":42,"pos":[0.5,0.75,-1]}`},
		// encode_normal: int32 objNum, normNum, float32 x, y, z.
		{nameForceNormal, wbe(cat([]any{int32(1), int32(9)}, f(0, -1, 0))...), `{"object_id":1,"normal_num":9,"normal":[0,-1,0]}`},
		// encode_triangle: int32 objNum, triNum, vert0..2, norm0..2.
		{nameForceTriangle, wbe(int32(1), int32(5), int32(10), int32(11), int32(12), int32(-1), int32(3), int32(4)),
			`{"object_id":1,"triangle_num":5,"vertices":[10,11,12],"normals":[-1,3,4]}`},
		// encode_removeTriangle: int32 objNum, triNum.
		{nameForceRmTri, wbe(int32(1), int32(5)), `{"object_id":1,"triangle_num":5}`},
		// encode_updateTrimeshChanges: int32 objNum, float32 kspring,
		// kdamp, fstat, fdyn (static before dynamic, unlike Plane).
		{nameForceUpdTri, wbe(cat([]any{int32(1)}, f(0.75, 0.0625, 0.625, 0.375))...),
			`{"object_id":1,"kspring":0.75,"kdamp":0.0625,"fstatic":0.625,"fdynamic":0.375}`},
		// encode_trimeshTransform: int32 objNum, float32 homMatrix[16].
		{nameForceXfTri, wbe(cat([]any{int32(1)}, f(1, 0, 0, 0.5, 0, 1, 0, -0.25, 0, 0, 1, 2, 0, 0, 0, 1))...),
			`{"object_id":1,"matrix":[1,0,0,0.5,0,1,0,-0.25,0,0,1,2,0,0,0,1]}`},
		// encode_setTrimeshType: int32 objNum, type; useHcollide sends
		// (-1, HCOLLIDE), HCOLLIDE being 1 in TrimeshType {GHOST, HCOLLIDE}.
		{nameForceTriType, wbe(int32(-1), int32(1)), `{"object_id":-1,"trimesh_type":"hcollide"}`},
		{nameForceTriType, wbe(int32(-1), int32(0)), `{"object_id":-1,"trimesh_type":"ghost"}`},
		// encode_clearTrimesh: int32 objNum.
		{nameForceClearTri, wbe(int32(4)), `{"object_id":4}`},
		// encode_setHapticOrigin: float32 Pos[3], axis[3], angle.
		{nameForceHOrigin, wbe(f(0.5, 0, -0.5, 1, 0, 0, 0.25)...), `{"pos":[0.5,0,-0.5],"axis":[1,0,0],"angle":0.25}`},
		// encode_setHapticScale: float32 scale.
		{nameForceHScale, wbe(float32(1.25)), `{"scale":1.25}`},
		// encode_setSceneOrigin: float32 Pos[3], axis[3], angle.
		{nameForceSOrigin, wbe(f(-1, 2, 0.5, 0, 1, 0, 3)...), `{"pos":[-1,2,0.5],"axis":[0,1,0],"angle":3}`},
		// getNewObjectID: no encoder; an empty body.
		{nameForceNewID, nil, `{}`},
		// encode_setObjectIsTouchable: int32 objNum, vrpn_bool (int16).
		{nameForceTouch, wbe(int32(6), int16(1)), `{"object_id":6,"touchable":1}`},
		// encode_scp: vrpn_float64 pos[3], quat[4] (x, y, z, w).
		{nameForceSCP, wbe(0.01, -0.02, 0.03, 0.0, 0.0, 0.0, 1.0),
			`{"pos":[0.01,-0.02,0.03],"quat":{"x":0,"y":0,"z":0,"w":1}}`},
		// encode_error: int32 error_code; FD_FORCE_ERROR is 2, FD_OK 4.
		{nameForceError, wbe(int32(2)), `{"error_code":"force_error"}`},
		{nameForceError, wbe(int32(4)), `{"error_code":"ok"}`},
		// encode_enableConstraint: int32 enable.
		{nameForceConEn, wbe(int32(1)), `{"enable":1}`},
		// encode_setConstraintMode: int32 0..3 for NO/POINT/LINE/PLANE.
		{nameForceConMode, wbe(int32(2)), `{"mode":"line"}`},
		// encodePoint (all five point messages): float32 x, y, z.
		{nameForceConPt, wbe(f(0.5, 0.25, 0.125)...), `{"point":[0.5,0.25,0.125]}`},
		{nameForceConLnPt, wbe(f(1, 2, 3)...), `{"point":[1,2,3]}`},
		{nameForceConLnDir, wbe(f(0, 0, -1)...), `{"direction":[0,0,-1]}`},
		{nameForceConPlPt, wbe(f(-0.5, 0, 0.5)...), `{"point":[-0.5,0,0.5]}`},
		{nameForceConPlN, wbe(f(0, 1, 0)...), `{"normal":[0,1,0]}`},
		// encode_setConstraintKSpring: float32 k.
		{nameForceConK, wbe(float32(250)), `{"kspring":250}`},
		// encode_custom_effect: uint32 effectId, nbParams, float32
		// params[nbParams]; stopEffect sends id -1 and no parameters.
		{nameForceCustom, wbe(uint32(3), uint32(2), float32(0.5), float32(-4)),
			`{"effect_id":3,"num_params":2,"params":[0.5,-4]}`},
		{nameForceCustom, wbe(uint32(0xFFFFFFFF), uint32(0)), `{"effect_id":-1,"num_params":0,"params":[]}`},
	}
}

// TestForceBadValues: an error code or constraint mode mainline does not
// name is kept as its number with a warning; a custom effect whose count
// exceeds its body, or a body longer than its layout, is warned about.
func TestForceBadValues(t *testing.T) {
	cases := []struct {
		s     sample
		field string // a field to check ("" for none)
		want  any    // its value as jsonValue gives it; nil: only present
		warn  string // a part of the warning
	}{
		{sample{nameForceError, wbe(int32(9)), ""}, "error_code", "9", "error_code: 9 is not a value its enum names"},
		{sample{nameForceConMode, wbe(int32(4)), ""}, "mode", "4", "mode: 4 is not a value its enum names"},
		{sample{nameForceCustom, wbe(uint32(1), uint32(100), float32(1)), ""}, "data", nil, "body of 12 bytes too short"},
		// A count past the values a message may hold is refused before
		// the bytes are looked at.
		{sample{nameForceCustom, wbe(uint32(1), uint32(1000000), float32(1)), ""}, "data", nil, "1000000 items exceed the limit"},
		{sample{nameForceCustom, wbe(uint32(1), uint32(0xFFFFFFFF)), ""}, "data", nil, "4294967295 items exceed the limit"},
		{sample{nameForceRmObj, wbe(int32(1), int32(2)), ""}, "object_id", 1.0, "longer than the 4 bytes"},
		{sample{nameForceNewID, wbe(int32(1)), ""}, "", nil, "longer than the 0 bytes"},
	}
	for _, tc := range cases {
		run := fuzzFeed(catalogueStream([]sample{tc.s}), 0, 1, true)
		r := run.recs[len(run.recs)-1]
		if r.Type != tc.s.name {
			t.Fatalf("%s: type %q", tc.s.name, r.Type)
		}
		if !strings.Contains(strings.Join(r.Warnings, "; "), tc.warn) {
			t.Errorf("%s % x: warnings %q, want one with %q", tc.s.name, tc.s.body, r.Warnings, tc.warn)
		}
		if tc.field == "" {
			continue
		}
		v, ok := r.Fields.Get(tc.field)
		if !ok {
			t.Errorf("%s % x: no field %s in %v", tc.s.name, tc.s.body, tc.field, bodyJSON(r))
			continue
		}
		if got := jsonValue(v); tc.want != nil && got != tc.want {
			t.Errorf("%s % x: %s = %v, want %v", tc.s.name, tc.s.body, tc.field, got, tc.want)
		}
	}
}
