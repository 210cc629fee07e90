// force_encoders.C: writes, with mainline VRPN's own vrpn_ForceDevice encode_* functions, the bodies of the
// samples of dissect/vrpn/cat_force_test.go (same values, same order; getNewObjectID has no encoder and is left
// out), one JSON line each: {"type": registered type name, "hex": the body}. Its output is
// force_encoders.jsonl, which TestForceSamplesMainline compares with the samples.
//
// Build (against a build made by internal/vrpnreal/build.sh, B=/work/vrpnbuild, S=$B/src):
//   g++ -std=c++11 -DVRPN_USING_CMAKE="\"$B/build/vrpn_Configure.h\"" -I$B/build -I$S -I$S/quat
//       -o force_encoders force_encoders.C $B/build/libvrpn.a $B/build/quat/libquat.a -lpthread -lm
//   ./force_encoders > force_encoders.jsonl
#include <stdio.h>
#include "vrpn_ForceDevice.h"

// OUT calls the encoder before reading the length it sets (the order of a call's arguments is unspecified).
#define OUT(type, call)                                                                                       \
    do {                                                                                                      \
        char *b_ = call;                                                                                      \
        out(type, b_, n);                                                                                     \
    } while (0)

// The encoders are protected static members: a derived class may call them.
struct Enc : public vrpn_ForceDevice {
    static void out(const char *type, char *buf, vrpn_int32 len)
    {
        printf("{\"type\":\"vrpn_ForceDevice %s\",\"hex\":\"", type);
        for (vrpn_int32 i = 0; i < len; i++) printf("%02x", (unsigned char)buf[i]);
        printf("\"}\n");
        delete[] buf;
    }
    static void run()
    {
        vrpn_int32 n;
        vrpn_float64 force[3] = {1.5, -2.25, 0.125};
        OUT("Force", encode_force(n, force));
        vrpn_float32 origin[3] = {0.5f, 0.25f, -0.5f}, ff[3] = {1, 2, 3};
        vrpn_float32 jac[3][3] = {{-10, 0, 0}, {0, -20, 0}, {0, 0, -30}};
        OUT("Force_Field", encode_forcefield(n, origin, ff, jac, 100));
        vrpn_float32 plane[4] = {0, 1, 0, -0.5f};
        OUT("Plane", encode_plane(n, plane, 0.75f, 0.0625f, 0.375f, 0.625f, 2, 10));
        OUT("Plane2", encode_surface_effects(n, 0.5f, 0.25f, 0.001953125f, 0.0078125f, 0.0009765625f, 60));
        OUT("addObject", encode_addObject(n, 7, -1));
        OUT("addObjectExScene", encode_addObjectExScene(n, 8));
        OUT("moveToParent", encode_moveToParent(n, 8, 7));
        vrpn_float32 pos[3] = {0.125f, -0.25f, 0.5f};
        OUT("setObjectPosition", encode_objectPosition(n, 3, pos));
        vrpn_float32 axis[3] = {0, 0, 1};
        OUT("setObjectOrientation", encode_objectOrientation(n, 3, axis, 1.5f));
        vrpn_float32 scale[3] = {2, 2.5f, 3};
        OUT("setObjectScale", encode_objectScale(n, 3, scale));
        OUT("removeObject", encode_removeObject(n, -5));
        OUT("setVertex", encode_vertex(n, 1, 42, 0.5f, 0.75f, -1));
        OUT("setNormal", encode_normal(n, 1, 9, 0, -1, 0));
        OUT("setTriangle", encode_triangle(n, 1, 5, 10, 11, 12, -1, 3, 4));
        OUT("removeTriangle", encode_removeTriangle(n, 1, 5));
        OUT("updateTrimeshChanges", encode_updateTrimeshChanges(n, 1, 0.75f, 0.0625f, 0.625f, 0.375f));
        vrpn_float32 m[16] = {1, 0, 0, 0.5f, 0, 1, 0, -0.25f, 0, 0, 1, 2, 0, 0, 0, 1};
        OUT("transformTrimesh", encode_trimeshTransform(n, 1, m));
        OUT("setTrimeshType", encode_setTrimeshType(n, -1, 1)); // HCOLLIDE
        OUT("setTrimeshType", encode_setTrimeshType(n, -1, 0)); // GHOST
        OUT("clearTrimesh", encode_clearTrimesh(n, 4));
        vrpn_float32 hpos[3] = {0.5f, 0, -0.5f}, haxis[3] = {1, 0, 0};
        OUT("setHapticOrigin", encode_setHapticOrigin(n, hpos, haxis, 0.25f));
        OUT("setHapticScale", encode_setHapticScale(n, 1.25f));
        vrpn_float32 spos[3] = {-1, 2, 0.5f}, saxis[3] = {0, 1, 0};
        OUT("setSceneOrigin", encode_setSceneOrigin(n, spos, saxis, 3));
        OUT("setObjectIsTouchable", encode_setObjectIsTouchable(n, 6, 1));
        vrpn_float64 scp[3] = {0.01, -0.02, 0.03}, q[4] = {0, 0, 0, 1};
        OUT("SCP", encode_scp(n, scp, q));
        OUT("Force_Error", encode_error(n, FD_FORCE_ERROR));
        OUT("Force_Error", encode_error(n, FD_OK));
        OUT("constraint_enable", encode_enableConstraint(n, 1));
        OUT("constraint_mode", encode_setConstraintMode(n, LINE_CONSTRAINT));
        OUT("constraint_point", encode_setConstraintPoint(n, 0.5f, 0.25f, 0.125f));
        OUT("constraint_linept", encode_setConstraintLinePoint(n, 1, 2, 3));
        OUT("constraint_linedir", encode_setConstraintLineDirection(n, 0, 0, -1));
        OUT("constraint_plpt", encode_setConstraintPlanePoint(n, -0.5f, 0, 0.5f));
        OUT("constraint_plnorm", encode_setConstraintPlaneNormal(n, 0, 1, 0));
        OUT("constraint_KSpring", encode_setConstraintKSpring(n, 250));
        vrpn_float32 params[2] = {0.5f, -4};
        OUT("Custom Effect", encode_custom_effect(n, 3, params, 2));
        vrpn_int32 stop = -1; // stopEffect: customEffectId -1 passed as the vrpn_uint32 effectId, no parameters
        OUT("Custom Effect", encode_custom_effect(n, (vrpn_uint32)stop, NULL, 0));
    }
};

int main()
{
    Enc::run();
    return 0;
}
