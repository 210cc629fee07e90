package vrpn

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// The force device family: mainline's vrpn_ForceDevice.C. A server (a
// Phantom, vrpn_ForceDeviceServer) reports the force it applies, its
// surface contact point and its errors; a client (vrpn_ForceDevice_Remote)
// sends surfaces, force fields, effects, constraints and a scene of
// triangle-mesh objects. Bodies are as the encode_* functions write them;
// most values are vrpn_float32, only Force and SCP carry float64. Where a
// decoder reads a body otherwise than its encoder writes it, the layout
// follows the encoder (the bytes on the wire) and says so.

// Names of the force device types, as mainline registers them.
const (
	forcePrefix = "vrpn_ForceDevice "

	nameForce         = forcePrefix + "Force"
	nameForceSCP      = forcePrefix + "SCP"
	nameForceError    = forcePrefix + "Force_Error"
	nameForcePlane    = forcePrefix + "Plane"
	nameForcePlane2   = forcePrefix + "Plane2"
	nameForceField    = forcePrefix + "Force_Field"
	nameForceCustom   = forcePrefix + "Custom Effect"
	nameForceAddObj   = forcePrefix + "addObject"
	nameForceAddObjEx = forcePrefix + "addObjectExScene"
	nameForceMoveTo   = forcePrefix + "moveToParent"
	nameForceObjPos   = forcePrefix + "setObjectPosition"
	nameForceObjOri   = forcePrefix + "setObjectOrientation"
	nameForceObjScale = forcePrefix + "setObjectScale"
	nameForceRmObj    = forcePrefix + "removeObject"
	nameForceVertex   = forcePrefix + "setVertex"
	nameForceNormal   = forcePrefix + "setNormal"
	nameForceTriangle = forcePrefix + "setTriangle"
	nameForceRmTri    = forcePrefix + "removeTriangle"
	nameForceUpdTri   = forcePrefix + "updateTrimeshChanges"
	nameForceXfTri    = forcePrefix + "transformTrimesh"
	nameForceTriType  = forcePrefix + "setTrimeshType"
	nameForceClearTri = forcePrefix + "clearTrimesh"
	nameForceHOrigin  = forcePrefix + "setHapticOrigin"
	nameForceHScale   = forcePrefix + "setHapticScale"
	nameForceSOrigin  = forcePrefix + "setSceneOrigin"
	nameForceNewID    = forcePrefix + "getNewObjectID"
	nameForceTouch    = forcePrefix + "setObjectIsTouchable"
	nameForceConEn    = forcePrefix + "constraint_enable"
	nameForceConMode  = forcePrefix + "constraint_mode"
	nameForceConPt    = forcePrefix + "constraint_point"
	nameForceConLnPt  = forcePrefix + "constraint_linept"
	nameForceConLnDir = forcePrefix + "constraint_linedir"
	nameForceConPlPt  = forcePrefix + "constraint_plpt"
	nameForceConPlN   = forcePrefix + "constraint_plnorm"
	nameForceConK     = forcePrefix + "constraint_KSpring"
)

// Items the family shares.
func objectID() layout.Field {
	return i32f("object_id", "the scene object, by the client's number for it")
}
func vec3f32(name, unit, doc string) layout.Field { return fixedf(name, "f4", 3, unit, doc) }
func kspringf() layout.Field {
	return f32f("kspring", "", "surface spring constant (stiffness)")
}
func kdampf() layout.Field { return f32f("kdamp", "", "surface damping constant") }
func fstatf() layout.Field { return f32f("fstatic", "", "static friction coefficient") }
func fdynf() layout.Field  { return f32f("fdynamic", "", "dynamic friction coefficient") }
func anglef() layout.Field { return f32f("angle", "", "rotation angle about axis") }
func originItems(what string) []layout.Field {
	return []layout.Field{
		vec3f32("pos", "m", "origin of the "+what+", [x, y, z]"),
		vec3f32("axis", "", "axis of the "+what+"'s rotation, [x, y, z]"),
		anglef(),
	}
}

// forceDefs lists the catalogued types of mainline's vrpn_ForceDevice.C,
// in the order it registers them.
func forceDefs() []msgDef {
	return []msgDef{
		{name: nameForce, doc: "server report: the force the device is displaying (vrpn_ForceDevice encode_force)",
			body: []layout.Field{vec3f("force", "", "force, [x, y, z]")}},
		{name: nameForceField, doc: "client request: display a force field: the force at origin, varying by the jacobian away from it, cut beyond radius (encode_forcefield)",
			body: []layout.Field{
				vec3f32("origin", "m", "origin of the field, [x, y, z]"),
				vec3f32("force", "", "force felt at the origin, [x, y, z]"),
				fixedf("jacobian", "f4", 9, "", "3x3 jacobian of the force by the offset from the origin, row by row"),
				f32f("radius", "m", "distance from the origin beyond which the field cuts out"),
			}},
		{name: nameForcePlane, doc: "client request: the plane surface to display and its surface parameters (encode_plane; an all-zero plane stops it)",
			body: []layout.Field{
				fixedf("plane", "f4", 4, "", "plane equation a, b, c, d of ax + by + cz + d = 0 (d in m)"),
				kspringf(), kdampf(), fdynf(), fstatf(),
				i32f("plane_index", "which of the device's planes"),
				i32f("n_rec_cycles", "number of servo cycles over which to recover from a change"),
			}},
		{name: nameForcePlane2, doc: "client request: the plane surface's effects: adhesion, texture and buzz (encode_surface_effects)",
			body: []layout.Field{
				f32f("k_adhesion_normal", "", "adhesion constant along the surface normal"),
				f32f("k_adhesion_lateral", "", "adhesion constant along the surface"),
				f32f("texture_amplitude", "m", "amplitude of the surface texture"),
				f32f("texture_wavelength", "m", "wavelength of the surface texture"),
				f32f("buzz_amplitude", "m", "amplitude of the surface buzz"),
				f32f("buzz_frequency", "Hz", "frequency of the surface buzz"),
			}},
		{name: nameForceAddObj, doc: "client request: add a trimesh object to the scene under a parent (encode_addObject)",
			body: []layout.Field{objectID(), i32f("parent_id", "the object's parent (a number naming no object, such as -1: the scene itself)")}},
		{name: nameForceAddObjEx, doc: "client request: add a trimesh object outside the scene (encode_addObjectExScene)",
			body: []layout.Field{objectID()}},
		{name: nameForceMoveTo, doc: "client request: move an object under another parent (encode_moveToParent)",
			body: []layout.Field{objectID(), i32f("parent_id", "the new parent (a number naming no object, such as -1: the scene itself)")}},
		{name: nameForceObjPos, doc: "client request: the position of an object (encode_objectPosition)",
			body: []layout.Field{objectID(), vec3f32("pos", "m", "position of the object, [x, y, z]")}},
		{name: nameForceObjOri, doc: "client request: the orientation of an object as an axis and an angle (encode_objectOrientation)",
			body: []layout.Field{objectID(), vec3f32("axis", "", "rotation axis, [x, y, z]"), anglef()}},
		{name: nameForceObjScale, doc: "client request: the scale of an object (encode_objectScale)",
			body: []layout.Field{objectID(), vec3f32("scale", "", "scale factors, [x, y, z] (servers use x only)")}},
		{name: nameForceRmObj, doc: "client request: remove an object from the scene (encode_removeObject)",
			body: []layout.Field{objectID()}},
		{name: nameForceVertex, doc: "client request: set a vertex of an object's trimesh (encode_vertex)",
			body: []layout.Field{objectID(), i32f("vertex_num", "the vertex's number"), vec3f32("pos", "m", "position of the vertex, [x, y, z]")}},
		{name: nameForceNormal, doc: "client request: set a normal of an object's trimesh (encode_normal)",
			body: []layout.Field{objectID(), i32f("normal_num", "the normal's number"), vec3f32("normal", "", "the normal, [x, y, z]")}},
		{name: nameForceTriangle, doc: "client request: set a triangle of an object's trimesh from vertex and normal numbers (encode_triangle)",
			body: []layout.Field{
				objectID(), i32f("triangle_num", "the triangle's number"),
				fixedf("vertices", "s4", 3, "", "numbers of the triangle's three vertices"),
				fixedf("normals", "s4", 3, "", "numbers of the normals at the three vertices (-1: none)"),
			}},
		{name: nameForceRmTri, doc: "client request: remove a triangle of an object's trimesh (encode_removeTriangle)",
			body: []layout.Field{objectID(), i32f("triangle_num", "the triangle's number")}},
		// encode_updateTrimeshChanges writes kspring, kdamp, fstatic,
		// fdynamic, and the remote passes its static friction third; but
		// vrpn_ForceDeviceServer's handler reads the third as dynamic
		// friction and the fourth as static. The fields follow the
		// encoder (what the client meant).
		{name: nameForceUpdTri, doc: "client request: apply the trimesh changes made so far, with the surface parameters (encode_updateTrimeshChanges)",
			body: []layout.Field{objectID(), kspringf(), kdampf(), fstatf(), fdynf()}},
		{name: nameForceXfTri, doc: "client request: the homogeneous transform of an object's trimesh (encode_trimeshTransform)",
			body: []layout.Field{objectID(), fixedf("matrix", "f4", 16, "", "4x4 homogeneous transform, row by row (translation in m)")}},
		{name: nameForceTriType, doc: "client request: the kind of trimesh the server uses from now on (encode_setTrimeshType; the remote's useGhost/useHcollide send object_id -1)",
			body: []layout.Field{objectID(), enumf("trimesh_type", "mainline's TrimeshType", "trimesh_type")}},
		{name: nameForceClearTri, doc: "client request: clear an object's trimesh (encode_clearTrimesh)",
			body: []layout.Field{objectID()}},
		{name: nameForceHOrigin, doc: "client request: the origin of the haptic device in the scene (encode_setHapticOrigin)",
			body: originItems("haptic device")},
		{name: nameForceHScale, doc: "client request: the scale factor of the haptic device (encode_setHapticScale)",
			body: []layout.Field{f32f("scale", "", "scale factor")}},
		{name: nameForceSOrigin, doc: "client request: the origin of the scene (encode_setSceneOrigin)",
			body: originItems("scene")},
		// Registered, but mainline has no encoder for it and sends it
		// nowhere (the remote numbers objects itself): declared with no
		// fields, any body bytes are warned as extra.
		{name: nameForceNewID, doc: "registered by mainline for asking a new object id but never sent by it: no body"},
		// vrpn_bool is a vrpn_int16 (vrpn_Types.h): two bytes.
		{name: nameForceTouch, doc: "client request: make an object touchable or not (encode_setObjectIsTouchable)",
			body: []layout.Field{objectID(), {ID: "touchable", Type: "s2", Doc: "non-zero: the object can be touched (vrpn_bool, 2 bytes)"}}},
		{name: nameForceSCP, doc: "server report: the surface contact point, where the probe touches the surface (encode_scp)",
			body: []layout.Field{
				vec3f("pos", "m", "position of the contact point, [x, y, z]"),
				quatf("quat", "orientation at the contact point (identity on a Phantom)"),
			},
			pose: &dissect.Pose{Position: "pos", Orientation: "quat", Name: "scp"}},
		{name: nameForceError, doc: "server report: an error of the force device (encode_error)",
			body: []layout.Field{enumf("error_code", "mainline's FD_ codes", "force_error")}},
		// The constraint messages: mainline's remote builds constraints as
		// force fields (FD_SPRINGS_AS_FIELDS) and sends these only from
		// other clients; servers still handle them.
		{name: nameForceConEn, doc: "client request: enable or disable the constraint (encode_enableConstraint)",
			body: []layout.Field{i32f("enable", "non-zero enables the constraint, zero disables it")}},
		{name: nameForceConMode, doc: "client request: the constraint's geometry (encode_setConstraintMode)",
			body: []layout.Field{enumf("mode", "mainline's ConstraintGeometry", "constraint_mode")}},
		{name: nameForceConPt, doc: "client request: the point of a point constraint (encode_setConstraintPoint)",
			body: []layout.Field{vec3f32("point", "m", "the point, [x, y, z]")}},
		{name: nameForceConLnPt, doc: "client request: a point of a line constraint's line (encode_setConstraintLinePoint)",
			body: []layout.Field{vec3f32("point", "m", "a point of the line, [x, y, z]")}},
		{name: nameForceConLnDir, doc: "client request: the direction of a line constraint's line (encode_setConstraintLineDirection)",
			body: []layout.Field{vec3f32("direction", "", "the line's direction, [x, y, z]")}},
		{name: nameForceConPlPt, doc: "client request: a point of a plane constraint's plane (encode_setConstraintPlanePoint)",
			body: []layout.Field{vec3f32("point", "m", "a point of the plane, [x, y, z]")}},
		{name: nameForceConPlN, doc: "client request: the normal of a plane constraint's plane (encode_setConstraintPlaneNormal)",
			body: []layout.Field{vec3f32("normal", "", "the plane's normal, [x, y, z]")}},
		{name: nameForceConK, doc: "client request: the constraint's spring constant (encode_setConstraintKSpring)",
			body: []layout.Field{f32f("kspring", "", "spring constant of the constraint")}},
		// The effect id is a vrpn_uint32 in encode_custom_effect's
		// signature but the class keeps it as a vrpn_int32 and stopEffect
		// sends -1: read as int32, so a stop shows as -1.
		{name: nameForceCustom, doc: "client request: start a custom effect with its parameters, or stop it (effect_id -1) (encode_custom_effect)",
			body: []layout.Field{
				i32f("effect_id", "the effect (-1: stop the effect)"),
				u32f("num_params", "number of parameters"),
				arrayf("params", "f4", "num_params", "", "the effect's parameters"),
			}},
	}
}
