// receiver.C: the client side of the real-VRPN captures (see build.sh, pcaps/vrpn/README.md).
//
// It opens DEV@tcp://127.0.0.1:PORT (TCP only: no UDP) with mainline vrpn_get_connection_by_name, optionally
// logging the connection (-login/-logout: mainline's own vrpn_Log files), instantiates only mainline *_Remote
// classes, sends fixed, distinctive requests and prints one JSON object per line: "sent" lines carry the values
// handed to mainline, "recv" lines what mainline's *_Remote callbacks delivered, "recv_raw" lines every user
// message the connection delivered.
//
// usage: receiver PORT KINDS SECONDS [-login FILE] [-logout FILE] [-rlogin FILE] [-rlogout FILE] [-repeat N]
#include "common.h"

#include "vrpn_Analog_Output.h"
#include "vrpn_Auxiliary_Logger.h"
#include "vrpn_Button.h"
#include "vrpn_Dial.h"
#include "vrpn_ForceDevice.h"
#include "vrpn_Imager.h"
#include "vrpn_Poser.h"
#include "vrpn_Sound.h"
#include "vrpn_Text.h"
#include "vrpn_Tracker.h"

static bool has(const char *kinds, const char *k)
{
    std::string s = std::string(",") + kinds + ",";
    return s.find(std::string(",") + k + ",") != std::string::npos;
}

static void VRPN_CALLBACK on_text(void *ud, const vrpn_TEXTCB i)
{
    J("recv", "vrpn_Base text_message").str("sender", (const char *)ud).tv(i.msg_time).i("severity", i.type).i("level", i.level).str("text", i.message);
}
static void VRPN_CALLBACK on_pos(void *, const vrpn_TRACKERCB i)
{
    J("recv", "vrpn_Tracker Pos_Quat").str("sender", "Tracker0").tv(i.msg_time).i("sensor", i.sensor).dv("pos", i.pos, 3).dv("quat", i.quat, 4);
}
static void VRPN_CALLBACK on_vel(void *, const vrpn_TRACKERVELCB i)
{
    J("recv", "vrpn_Tracker Velocity").str("sender", "Tracker0").tv(i.msg_time).i("sensor", i.sensor).dv("vel", i.vel, 3).dv("vel_quat", i.vel_quat, 4).d("vel_quat_dt", i.vel_quat_dt);
}
static void VRPN_CALLBACK on_acc(void *, const vrpn_TRACKERACCCB i)
{
    J("recv", "vrpn_Tracker Acceleration").str("sender", "Tracker0").tv(i.msg_time).i("sensor", i.sensor).dv("acc", i.acc, 3).dv("acc_quat", i.acc_quat, 4).d("acc_quat_dt", i.acc_quat_dt);
}
static void VRPN_CALLBACK on_t2r(void *, const vrpn_TRACKERTRACKER2ROOMCB i)
{
    J("recv", "vrpn_Tracker To_Room").str("sender", "Tracker0").tv(i.msg_time).dv("pos", i.tracker2room, 3).dv("quat", i.tracker2room_quat, 4);
}
static void VRPN_CALLBACK on_u2s(void *, const vrpn_TRACKERUNIT2SENSORCB i)
{
    J("recv", "vrpn_Tracker Unit_To_Sensor").str("sender", "Tracker0").tv(i.msg_time).i("sensor", i.sensor).dv("pos", i.unit2sensor, 3).dv("quat", i.unit2sensor_quat, 4);
}
static void VRPN_CALLBACK on_ws(void *, const vrpn_TRACKERWORKSPACECB i)
{
    J("recv", "vrpn_Tracker Workspace").str("sender", "Tracker0").tv(i.msg_time).dv("workspace_min", i.workspace_min, 3).dv("workspace_max", i.workspace_max, 3);
}
static void VRPN_CALLBACK on_desc(void *ud, const struct timeval t)
{
    vrpn_Imager_Remote *r = (vrpn_Imager_Remote *)ud;
    J("recv", "vrpn_Imager Description").str("sender", "Imager0").tv(t).i("nCols", r->nCols()).i("nRows", r->nRows()).i("nDepth", r->nDepth()).i("nChannels", r->nChannels());
    for (int k = 0; k < r->nChannels(); k++) {
        const vrpn_Imager_Channel *ch = r->channel(k);
        J("recv", "vrpn_Imager Description channel").str("sender", "Imager0").i("index", k).str("name", ch->name).str("units", ch->units).d("minVal", ch->minVal).d("maxVal", ch->maxVal).d("offset", ch->offset).d("scale", ch->scale);
    }
}
static void VRPN_CALLBACK on_region(void *, const vrpn_IMAGERREGIONCB i)
{
    const vrpn_Imager_Region *g = i.region;
    unsigned n = g->getNumVals();
    double v[64];
    const char *tn = "?";
    unsigned nc = g->d_cMax - g->d_cMin + 1;
    if (n > 64) n = 64;
    switch (g->get_val_type()) {
    case vrpn_IMAGER_VALTYPE_UINT8: {
        vrpn_uint8 b[64];
        tn = "vrpn_Imager Regionu8";
        g->decode_unscaled_region_using_base_pointer(b - (g->d_cMin + nc * g->d_rMin), 1, nc);
        for (unsigned k = 0; k < n; k++) v[k] = b[k];
        break;
    }
    case vrpn_IMAGER_VALTYPE_UINT16:
    case vrpn_IMAGER_VALTYPE_UINT12IN16: {
        vrpn_uint16 b[64];
        tn = "vrpn_Imager Regionu16";
        g->decode_unscaled_region_using_base_pointer(b - (g->d_cMin + nc * g->d_rMin), 1, nc);
        for (unsigned k = 0; k < n; k++) v[k] = b[k];
        break;
    }
    case vrpn_IMAGER_VALTYPE_FLOAT32: {
        vrpn_float32 b[64];
        tn = "vrpn_Imager Regionf32";
        g->decode_unscaled_region_using_base_pointer(b - (g->d_cMin + nc * g->d_rMin), 1, nc);
        for (unsigned k = 0; k < n; k++) v[k] = b[k];
        break;
    }
    }
    J("recv", tn).str("sender", "Imager0").tv(i.msg_time).i("chanIndex", g->d_chanIndex).i("cMin", g->d_cMin).i("cMax", g->d_cMax).i("rMin", g->d_rMin).i("rMax", g->d_rMax).i("dMin", g->d_dMin).i("dMax", g->d_dMax).i("valType", g->get_val_type()).dv("values_row_major", v, n);
}
static void VRPN_CALLBACK on_begin(void *, const vrpn_IMAGERBEGINFRAMECB i)
{
    J("recv", "vrpn_Imager Begin_Frame").str("sender", "Imager0").tv(i.msg_time).i("cMin", i.cMin).i("cMax", i.cMax).i("rMin", i.rMin).i("rMax", i.rMax).i("dMin", i.dMin).i("dMax", i.dMax);
}
static void VRPN_CALLBACK on_end(void *, const vrpn_IMAGERENDFRAMECB i)
{
    J("recv", "vrpn_Imager End_Frame").str("sender", "Imager0").tv(i.msg_time).i("cMin", i.cMin).i("cMax", i.cMax).i("rMin", i.rMin).i("rMax", i.rMax).i("dMin", i.dMin).i("dMax", i.dMax);
}
static void VRPN_CALLBACK on_disc(void *, const vrpn_IMAGERDISCARDEDFRAMESCB i)
{
    J("recv", "vrpn_Imager Discarded_Frames").str("sender", "Imager0").tv(i.msg_time).i("count", i.count);
}
static void VRPN_CALLBACK on_dial(void *, const vrpn_DIALCB i)
{
    J("recv", "vrpn_Dial Update").str("sender", "Dial0").tv(i.msg_time).i("dial", i.dial).d("change", i.change);
}
static void VRPN_CALLBACK on_button(void *, const vrpn_BUTTONCB i)
{
    J("recv", "vrpn_Button Change").str("sender", "Button0").tv(i.msg_time).i("button", i.button).i("state", i.state);
}
static void VRPN_CALLBACK on_states(void *, const vrpn_BUTTONSTATESCB i)
{
    J("recv", "vrpn_Button States").str("sender", "Button0").tv(i.msg_time).i("num_buttons", i.num_buttons);
    J j("recv", "vrpn_Button States values");
    j.str("sender", "Button0");
    double v[vrpn_BUTTON_MAX_BUTTONS];
    for (int k = 0; k < i.num_buttons; k++) v[k] = i.states[k];
    j.dv("states", v, i.num_buttons);
}
static void VRPN_CALLBACK on_ferr(void *, const vrpn_FORCEERRORCB i)
{
    J("recv", "vrpn_ForceDevice Force_Error").str("sender", "Force0").tv(i.msg_time).i("error_code", i.error_code);
}
static void VRPN_CALLBACK on_aux(void *, const vrpn_AUXLOGGERCB i)
{
    J("recv", "vrpn_Auxiliary_Logger_Base Logging_Response").str("sender", "Logger0").tv(i.msg_time).str("local_in", i.local_in_logfile_name).str("local_out", i.local_out_logfile_name).str("remote_in", i.remote_in_logfile_name).str("remote_out", i.remote_out_logfile_name);
}

struct Ctx {
    vrpn_Connection *c;
    vrpn_BaseClass *devs[16];
    int nd;
    void run(double secs)
    {
        struct timeval s = now_tv();
        do {
            for (int k = 0; k < nd; k++) devs[k]->mainloop();
            c->mainloop();
            vrpn_SleepMsecs(2);
        } while (vrpn_TimevalDurationSeconds(now_tv(), s) < secs);
    }
};

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: receiver PORT KINDS SECONDS [-login FILE] [-logout FILE] [-rlogin FILE] [-rlogout FILE] [-repeat N]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    const char *kinds = argv[2];
    double secs = atof(argv[3]);
    const char *login = NULL, *logout = NULL, *rlogin = NULL, *rlogout = NULL;
    int repeat = 1;
    for (int a = 4; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "-login")) login = argv[a + 1];
        else if (!strcmp(argv[a], "-logout")) logout = argv[a + 1];
        else if (!strcmp(argv[a], "-rlogin")) rlogin = argv[a + 1];
        else if (!strcmp(argv[a], "-rlogout")) rlogout = argv[a + 1];
        else if (!strcmp(argv[a], "-repeat")) repeat = atoi(argv[a + 1]);
    }
    bool session = has(kinds, "session");
    // mainline prints warnings and errors it receives; keep them off stdout, which is the JSON truth.
    vrpn_System_TextPrinter.set_ostream_to_use(stderr);
    char loc[64];
    snprintf(loc, sizeof loc, "tcp://127.0.0.1:%d", port);
    char nm[96];
    snprintf(nm, sizeof nm, "Text0@%s", loc);
    Ctx x;
    x.nd = 0;
    // -rlogin/-rlogout ask the server to log this connection (the cookie's log-mode digit and a log
    // description message carry the request).
    x.c = vrpn_get_connection_by_name(nm, login, logout, rlogin, rlogout);
    if (!x.c) {
        fprintf(stderr, "receiver: cannot open %s\n", nm);
        return 1;
    }
    RawCtx raw = {x.c, "client"};
    x.c->register_handler(vrpn_ANY_TYPE, raw_handler, &raw);
#define DEV(var, cls, name)                                                                                            \
    snprintf(nm, sizeof nm, "%s@%s", name, loc);                                                                        \
    cls *var = new cls(nm, x.c);                                                                                        \
    x.devs[x.nd++] = var;

    if (has(kinds, "text") || session) {
        static const char *names[3] = {"Text0", "Text1", "Text2"};
        for (int k = 0; k < 3; k++) {
            DEV(t, vrpn_Text_Receiver, names[k]);
            t->register_message_handler((void *)names[k], on_text);
        }
    }
    vrpn_Tracker_Remote *trk = NULL;
    if (has(kinds, "tracker") || session) {
        DEV(t, vrpn_Tracker_Remote, "Tracker0");
        trk = t;
        t->register_change_handler(NULL, on_pos);
        t->register_change_handler(NULL, on_vel);
        t->register_change_handler(NULL, on_acc);
        t->register_change_handler(NULL, on_t2r);
        t->register_change_handler(NULL, on_u2s);
        t->register_change_handler(NULL, on_ws);
    }
    vrpn_Poser_Remote *poser = NULL;
    if (has(kinds, "poser") || session) {
        DEV(p, vrpn_Poser_Remote, "Poser0");
        poser = p;
    }
    vrpn_Analog_Output_Remote *aout = NULL;
    if (has(kinds, "aout")) {
        DEV(a, vrpn_Analog_Output_Remote, "AnalogOut0");
        aout = a;
    }
    vrpn_Imager_Remote *img = NULL;
    if (has(kinds, "imager")) {
        DEV(m, vrpn_Imager_Remote, "Imager0");
        img = m;
        m->register_description_handler(m, on_desc);
        m->register_region_handler(NULL, on_region);
        m->register_begin_frame_handler(NULL, on_begin);
        m->register_end_frame_handler(NULL, on_end);
        m->register_discarded_frames_handler(NULL, on_disc);
    }
    if (has(kinds, "dial")) {
        DEV(d, vrpn_Dial_Remote, "Dial0");
        d->register_change_handler(NULL, on_dial);
    }
    vrpn_Button_Remote *btn = NULL;
    if (has(kinds, "button")) {
        DEV(b, vrpn_Button_Remote, "Button0");
        btn = b;
        b->register_change_handler(NULL, on_button);
        b->register_states_handler(NULL, on_states);
    }
    vrpn_ForceDevice_Remote *force = NULL;
    if (has(kinds, "force")) {
        DEV(f, vrpn_ForceDevice_Remote, "Force0");
        force = f;
        f->register_error_handler(NULL, on_ferr);
    }
    vrpn_Sound_Client *sound = NULL;
    if (has(kinds, "sound")) {
        snprintf(nm, sizeof nm, "Sound0@%s", loc);
        sound = new vrpn_Sound_Client(nm, x.c);
        x.devs[x.nd++] = static_cast<vrpn_Sound *>(sound);
    }
    vrpn_Auxiliary_Logger_Remote *aux = NULL;
    if (has(kinds, "aux")) {
        DEV(l, vrpn_Auxiliary_Logger_Remote, "Logger0");
        aux = l;
        l->register_report_handler(NULL, on_aux);
    }

    struct timeval t0 = now_tv();
    while (!x.c->connected()) {
        x.run(0.01);
        if (vrpn_TimevalDurationSeconds(now_tv(), t0) > 10) {
            fprintf(stderr, "receiver: no server\n");
            return 1;
        }
    }
    x.run(0.5);
    for (int rep = 0; rep < repeat; rep++) {
        if (trk && rep == 0) {
            trk->request_t2r_xform();
            J("sent", "vrpn_Tracker Request_Tracker_To_Room").str("sender", "Tracker0");
            x.run(0.05);
            trk->request_u2s_xform();
            J("sent", "vrpn_Tracker Request_Unit_To_Sensor").str("sender", "Tracker0");
            x.run(0.05);
            trk->request_workspace();
            J("sent", "vrpn_Tracker Request_Tracker_Workspace").str("sender", "Tracker0");
            x.run(0.05);
        }
        if (poser) {
            double k = session ? rep * 0.015625 : 0;
            vrpn_float64 p[3] = {0.5 - k, -0.25, 0.875}, q[4] = {0, 0, 0.6, 0.8};
            struct timeval t = now_tv();
            poser->request_pose(t, p, q);
            J("sent", "vrpn_Poser Request_Pose").str("sender", "Poser0").tv(t).dv("pos", p, 3).dv("quat", q, 4);
            x.run(0.02);
            vrpn_float64 dp[3] = {0.125, 0.0625, -0.5}, dq[4] = {0.6, 0, 0, 0.8};
            t = now_tv();
            poser->request_pose_relative(t, dp, dq);
            J("sent", "vrpn_Poser Request_Pose_Relative").str("sender", "Poser0").tv(t).dv("pos_delta", dp, 3).dv("quat", dq, 4);
            x.run(0.02);
            if (!session || rep % 4 == 0) {
                vrpn_float64 v[3] = {0.25, -0.5, 0.75}, vq[4] = {0, 0.6, 0, 0.8};
                t = now_tv();
                poser->request_pose_velocity(t, v, vq, 0.125);
                J("sent", "vrpn_Poser Request_Velocity").str("sender", "Poser0").tv(t).dv("vel", v, 3).dv("vel_quat", vq, 4).d("interval", 0.125);
                x.run(0.02);
                vrpn_float64 dv[3] = {-0.0625, 0.03125, 0}, dvq[4] = {0, 0, 0, 1};
                t = now_tv();
                poser->request_pose_velocity_relative(t, dv, dvq, 0.375);
                J("sent", "vrpn_Poser Request_Velocity_Relative").str("sender", "Poser0").tv(t).dv("vel_delta", dv, 3).dv("vel_quat", dvq, 4).d("interval_delta", 0.375);
                x.run(0.02);
            }
        }
        if (aout) {
            aout->request_change_channel_value(2, 0.375);
            J("sent", "vrpn_Analog_Output Change").str("sender", "AnalogOut0").i("chan", 2).d("value", 0.375);
            x.run(0.05);
            vrpn_float64 v[5] = {-1.25, 0, 3.5e-7, 12345.678, -0.0};
            aout->request_change_channels(5, v);
            J("sent", "vrpn_Analog_Output Change_Channels").str("sender", "AnalogOut0").i("num", 5).dv("values", v, 5);
            x.run(0.05);
            J("state", "vrpn_Analog_Output_Remote num channels (from the server's report)").str("sender", "AnalogOut0").i("num_channel", aout->getNumChannels());
        }
        if (img) {
            img->throttle_sender(5);
            J("sent", "vrpn_Imager Throttle").str("sender", "Imager0").i("N", 5);
            x.run(0.05);
        }
        if (btn) {
            btn->set_toggle(1, vrpn_BUTTON_TOGGLE_ON);
            J("sent", "vrpn_Button Admin (set_toggle)").str("sender", "Button0").i("button", 1).i("mode", vrpn_BUTTON_TOGGLE_ON);
            x.run(0.1);
            btn->set_momentary(1);
            J("sent", "vrpn_Button Admin (set_momentary)").str("sender", "Button0").i("button", 1).i("mode", vrpn_BUTTON_MOMENTARY);
            x.run(0.1);
            btn->set_all_toggle(vrpn_BUTTON_TOGGLE_OFF);
            J("sent", "vrpn_Button Admin (set_all_toggle)").str("sender", "Button0").i("button", -99).i("mode", vrpn_BUTTON_TOGGLE_OFF);
            x.run(0.1);
        }
        if (force) {
            force->set_plane(0.0f, 1.0f, 0.0f, -0.5f);
            force->setSurfaceKspring(0.75f);
            force->setSurfaceFdynamic(0.25f);
            force->sendSurface();
            J("sent", "vrpn_ForceDevice Plane (set_plane + sendSurface)").str("sender", "Force0").d("a", 0).d("b", 1).d("c", 0).d("d", -0.5).d("kspring", 0.75).d("fdynamic", 0.25);
            x.run(0.05);
            force->setVertex(0, 0.125f, 0.25f, 0.5f);
            force->setVertex(1, 1.0f, 0.0f, -0.75f);
            force->setVertex(2, 0.0f, 2.0f, 0.0f);
            force->setTriangle(0, 0, 1, 2);
            force->updateTrimeshChanges();
            static const float vx[3][3] = {{0.125f, 0.25f, 0.5f}, {1.0f, 0.0f, -0.75f}, {0.0f, 2.0f, 0.0f}};
            for (int k = 0; k < 3; k++) J("sent", "vrpn_ForceDevice setVertex").str("sender", "Force0").i("vertNum", k).fv("xyz", vx[k], 3);
            J("sent", "vrpn_ForceDevice setTriangle").str("sender", "Force0").i("triNum", 0).i("v0", 0).i("v1", 1).i("v2", 2).i("n0", -1).i("n1", -1).i("n2", -1);
            J("sent", "vrpn_ForceDevice updateTrimeshChanges").str("sender", "Force0");
            x.run(0.05);
            vrpn_float32 o[3] = {0.5f, -0.5f, 0.25f}, f[3] = {1.5f, 0, -2}, jac[3][3] = {{1, 0, 0}, {0, 2, 0}, {0, 0, 3}};
            force->sendForceField(o, f, jac, 0.125f);
            J("sent", "vrpn_ForceDevice Force_Field").str("sender", "Force0").fv("origin", o, 3).fv("force", f, 3).fv("jacobian_row_major", &jac[0][0], 9).d("radius", 0.125);
            x.run(0.05);
            force->stopForceField();
            J("sent", "vrpn_ForceDevice stopForceField (Force_Field, all zero)").str("sender", "Force0");
            force->stopSurface();
            J("sent", "vrpn_ForceDevice stopSurface").str("sender", "Force0");
            x.run(0.05);
        }
        if (sound) {
            vrpn_SoundDef def;
            memset(&def, 0, sizeof def);
            def.pose.orientation[3] = 1;
            def.volume = 0.5;
            vrpn_SoundID id = sound->loadSound("door_bell.wav", 7, def);
            J("sent", "vrpn_Sound Load_Local").str("sender", "Sound0").str("file", "door_bell.wav").i("id", 7).i("returned_id", id).d("volume", 0.5);
            x.run(0.05);
            sound->playSound(7, 2);
            J("sent", "vrpn_Sound Play").str("sender", "Sound0").i("id", 7).i("repeat", 2);
            x.run(0.05);
            sound->setSoundVolume(7, 0.75);
            J("sent", "vrpn_Sound Set_Volume").str("sender", "Sound0").i("id", 7).d("volume", 0.75);
            x.run(0.05);
            vrpn_float64 p[3] = {1, 2, 3.5}, q[4] = {0, 0, 0.6, 0.8};
            sound->setListenerPose(p, q);
            J("sent", "vrpn_Sound Set_Listener_Pose").str("sender", "Sound0").dv("pos", p, 3).dv("quat", q, 4);
            x.run(0.05);
            sound->stopSound(7);
            J("sent", "vrpn_Sound Stop").str("sender", "Sound0").i("id", 7);
            x.run(0.05);
        }
        if (aux) {
            // A status request before the first logging request crashes mainline's Generic logger server
            // (it reads the log names of a logging connection it does not have yet), so it comes second.
            aux->send_logging_request("/tmp/vrpnreal_aux_in.vrpn", "/tmp/vrpnreal_aux_out.vrpn", "", "");
            J("sent", "vrpn_Auxiliary_Logger_Base Logging_Request").str("sender", "Logger0").str("local_in", "/tmp/vrpnreal_aux_in.vrpn").str("local_out", "/tmp/vrpnreal_aux_out.vrpn").str("remote_in", "").str("remote_out", "");
            x.run(1.0);
            aux->send_logging_status_request();
            J("sent", "vrpn_Auxiliary_Logger_Base Logging_Status_Request").str("sender", "Logger0");
            x.run(0.3);
            aux->send_logging_request("", "", "", "");
            J("sent", "vrpn_Auxiliary_Logger_Base Logging_Request").str("sender", "Logger0").str("local_in", "").str("local_out", "").str("remote_in", "").str("remote_out", "");
            x.run(0.5);
        }
        if (session) x.run(0.05);
    }
    x.run(secs);
    for (int k = x.nd - 1; k >= 0; k--) delete x.devs[k];
    x.c->removeReference();
    return 0;
}
