// sender.C: the server side of the real-VRPN captures (see build.sh, pcaps/vrpn/README.md).
//
// It instantiates only mainline VRPN server classes on one connection listening on 127.0.0.1:PORT, waits for a
// client, then sends fixed, distinctive values of the kinds named on the command line. It prints one JSON
// object per line: "sent" lines carry the values handed to mainline (or read back from its own variables),
// "recv" lines what mainline's server handlers delivered, "recv_raw" lines every user message the
// connection delivered (header time, sender, type, payload bytes).
//
// usage: sender PORT KINDS [-login FILE] [-logout FILE] [-repeat N]
//   KINDS: comma-separated from text,tracker,poser,aout,imager,dial,button,force,sound,aux,session
#include "common.h"

#include "vrpn_Analog_Output.h"
#include "vrpn_Auxiliary_Logger.h"
#include "vrpn_Button.h"
#include "vrpn_Dial.h"
#include "vrpn_ForceDevice.h"
#include "vrpn_Imager.h"
#include "vrpn_Poser.h"
#include "vrpn_Text.h"
#include "vrpn_Tracker.h"

static bool has(const char *kinds, const char *k)
{
    std::string s = std::string(",") + kinds + ",";
    return s.find(std::string(",") + k + ",") != std::string::npos;
}

static void VRPN_CALLBACK poser_abs(void *, const vrpn_POSERCB i)
{
    J("recv", "vrpn_Poser_Server change").str("sender", "Poser0").tv(i.msg_time).dv("pos", i.pos, 3).dv("quat", i.quat, 4);
}
static void VRPN_CALLBACK poser_rel(void *, const vrpn_POSERCB i)
{
    J("recv", "vrpn_Poser_Server relative change (pose after it)").str("sender", "Poser0").tv(i.msg_time).dv("pos", i.pos, 3).dv("quat", i.quat, 4);
}
static void VRPN_CALLBACK aout_change(void *, const vrpn_ANALOGOUTPUTCB i)
{
    J("recv", "vrpn_Analog_Output_Callback_Server change").str("sender", "AnalogOut0").tv(i.msg_time).i("num_channel", i.num_channel).dv("channel", i.channel, i.num_channel);
}

static void service(vrpn_Connection *c, vrpn_BaseClass **devs, int n, double secs)
{
    struct timeval start = now_tv();
    for (;;) {
        for (int k = 0; k < n; k++) devs[k]->mainloop();
        c->mainloop();
        vrpn_SleepMsecs(2);
        if (vrpn_TimevalDurationSeconds(now_tv(), start) >= secs) return;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sender PORT KINDS [-login FILE] [-logout FILE] [-repeat N]\n");
        return 2;
    }
    vrpn_System_TextPrinter.set_ostream_to_use(stderr);
    int port = atoi(argv[1]);
    const char *kinds = argv[2];
    const char *login = NULL, *logout = NULL;
    int repeat = 1;
    for (int a = 3; a + 1 < argc; a += 2) {
        if (!strcmp(argv[a], "-login")) login = argv[a + 1];
        else if (!strcmp(argv[a], "-logout")) logout = argv[a + 1];
        else if (!strcmp(argv[a], "-repeat")) repeat = atoi(argv[a + 1]);
    }
    char name[64];
    snprintf(name, sizeof name, "127.0.0.1:%d", port);
    vrpn_Connection *c = vrpn_create_server_connection(name, login, logout);
    if (!c || !c->doing_okay()) {
        fprintf(stderr, "sender: cannot listen on %s\n", name);
        return 1;
    }
    RawCtx raw = {c, "server"};
    c->register_handler(vrpn_ANY_TYPE, raw_handler, &raw);

    vrpn_BaseClass *devs[16];
    int nd = 0;
    bool session = has(kinds, "session");
    vrpn_Text_Sender *text[3] = {NULL, NULL, NULL};
    if (has(kinds, "text") || session) {
        for (int k = 0; k < 3; k++) {
            char nm[16];
            snprintf(nm, sizeof nm, "Text%d", k);
            devs[nd++] = text[k] = new vrpn_Text_Sender(nm, c);
        }
    }
    vrpn_Tracker_Server *trk = NULL;
    if (has(kinds, "tracker") || session) devs[nd++] = trk = new vrpn_Tracker_Server("Tracker0", c, 2);
    vrpn_Poser_Server *poser = NULL;
    if (has(kinds, "poser") || session) {
        devs[nd++] = poser = new vrpn_Poser_Server("Poser0", c);
        poser->register_change_handler(NULL, poser_abs);
        poser->register_relative_change_handler(NULL, poser_rel);
    }
    vrpn_Analog_Output_Callback_Server *aout = NULL;
    if (has(kinds, "aout")) {
        devs[nd++] = aout = new vrpn_Analog_Output_Callback_Server("AnalogOut0", c, 6);
        aout->register_change_handler(NULL, aout_change);
    }
    vrpn_Imager_Server *img = NULL;
    if (has(kinds, "imager")) {
        devs[nd++] = img = new vrpn_Imager_Server("Imager0", c, 4, 3);
        img->add_channel("gray8", "unsigned8bit", 0, 255, 1, 0);
        img->add_channel("depth16", "millimeters", 0, 65535, 0.5, 10);
        img->add_channel("temp32", "celsius", -40, 125, 1, 0);
    }
    if (has(kinds, "dial")) devs[nd++] = new vrpn_Dial_Example_Server("Dial0", c, 2, 0.25, 4.0);
    vrpn_Button_Server *btn = NULL;
    if (has(kinds, "button")) {
        devs[nd++] = btn = new vrpn_Button_Server("Button0", c, 3);
        btn->set_alerts(1);
    }
    if (has(kinds, "aux")) {
        // The connection to log is another VRPN server (logging this process's own server from inside it
        // does not work): capture.sh starts one on PORT+100.
        char tolog[64];
        snprintf(tolog, sizeof tolog, "Tracker0@tcp://127.0.0.1:%d", port + 100);
        devs[nd++] = new vrpn_Auxiliary_Logger_Server_Generic("Logger0", tolog, c);
    }
    // force and sound: mainline has no hardware-free server for them; the requests are still delivered to
    // this connection and printed by raw_handler. For the force device's error report, a mainline
    // vrpn_ForceDevice object on this connection sends it (vrpn_ForceDevice::sendError; not mainlooped, so it
    // sends nothing else).
    vrpn_ForceDevice_Remote *ferr = NULL;
    if (has(kinds, "force")) ferr = new vrpn_ForceDevice_Remote("Force0", c);
    if (has(kinds, "sound")) c->register_sender("Sound0");

    // Wait for the client, then give its remotes a second to say hello.
    struct timeval t0 = now_tv();
    while (!c->connected()) {
        for (int k = 0; k < nd; k++) devs[k]->mainloop();
        c->mainloop();
        vrpn_SleepMsecs(2);
        if (vrpn_TimevalDurationSeconds(now_tv(), t0) > 30) {
            fprintf(stderr, "sender: no client\n");
            return 1;
        }
    }
    service(c, devs, nd, 1.0);

    for (int rep = 0; rep < repeat; rep++) {
        if (text[0]) {
            static const struct {
                int who;
                vrpn_TEXT_SEVERITY sev;
                vrpn_uint32 level;
                const char *msg;
            } tm[] = {
                {0, vrpn_TEXT_NORMAL, 0, "Text0 normal: calibration started"},
                {1, vrpn_TEXT_WARNING, 3, "Text1 warning: temperature 41.5 C \"high\""},
                {2, vrpn_TEXT_ERROR, 7, "Text2 error: motor 2 stalled"},
                {0, vrpn_TEXT_NORMAL, 1, ""},
                {1, vrpn_TEXT_WARNING, 4294967295u, "Text1 warning: level is the largest uint32"},
                {2, vrpn_TEXT_ERROR, 2, "Text2 error: a longer line of text to show that only the bytes up to the NUL "
                                        "terminator carry meaning, whatever follows in the 1032-byte body"},
            };
            int n = session ? 2 : (int)(sizeof tm / sizeof tm[0]);
            for (int k = 0; k < n; k++) {
                int which = session ? (rep + k) % 6 : k;
                struct timeval t = now_tv();
                text[tm[which].who]->send_message(tm[which].msg, tm[which].sev, tm[which].level, t);
                char nm[16];
                snprintf(nm, sizeof nm, "Text%d", tm[which].who);
                J("sent", "vrpn_Base text_message").str("sender", nm).tv(t).i("severity", tm[which].sev).i("level", tm[which].level).str("text", tm[which].msg);
                service(c, devs, nd, 0.02);
            }
        }
        if (trk) {
            vrpn_float64 p[3] = {1.5, -2.25, 3.125 + rep}, q[4] = {0, 0, 0.6, 0.8};
            struct timeval t = now_tv();
            trk->report_pose(rep % 2, t, p, q, vrpn_CONNECTION_RELIABLE);
            J("sent", "vrpn_Tracker Pos_Quat").str("sender", "Tracker0").tv(t).i("sensor", rep % 2).dv("pos", p, 3).dv("quat", q, 4);
            service(c, devs, nd, 0.02);
            if (!session) {
                vrpn_float64 v[3] = {0.5, 0.25, -0.125}, vq[4] = {0, 0.6, 0, 0.8};
                t = now_tv();
                trk->report_pose_velocity(1, t, v, vq, 0.5, vrpn_CONNECTION_RELIABLE);
                J("sent", "vrpn_Tracker Velocity").str("sender", "Tracker0").tv(t).i("sensor", 1).dv("vel", v, 3).dv("vel_quat", vq, 4).d("vel_quat_dt", 0.5);
                vrpn_float64 ac[3] = {-9.75, 0.0625, 4}, aq[4] = {0.6, 0, 0, 0.8};
                t = now_tv();
                trk->report_pose_acceleration(0, t, ac, aq, 0.25, vrpn_CONNECTION_RELIABLE);
                J("sent", "vrpn_Tracker Acceleration").str("sender", "Tracker0").tv(t).i("sensor", 0).dv("acc", ac, 3).dv("acc_quat", aq, 4).d("acc_quat_dt", 0.25);
                service(c, devs, nd, 0.02);
            }
        }
        if (img) {
            struct timeval t = now_tv();
            img->send_description();
            J("sent", "vrpn_Imager Description").str("sender", "Imager0").i("nCols", 4).i("nRows", 3).i("nDepth", 1).i("nChannels", 3);
            img->send_begin_frame(0, 3, 0, 2, 0, 0, &t);
            J("sent", "vrpn_Imager Begin_Frame").str("sender", "Imager0").tv(t).i("cMin", 0).i("cMax", 3).i("rMin", 0).i("rMax", 2).i("dMin", 0).i("dMax", 0);
            vrpn_uint8 u8[12];
            vrpn_uint16 u16[12];
            vrpn_float32 f32[12];
            double d8[12], d16[12], d32[12];
            for (int k = 0; k < 12; k++) {
                d8[k] = u8[k] = (vrpn_uint8)(10 * (k / 4) + (k % 4) + 200 * (k == 11));
                d16[k] = u16[k] = (vrpn_uint16)(1000 + 257 * k + 60000 * (k == 11));
                d32[k] = f32[k] = (vrpn_float32)(-1.5 + 0.25 * k);
            }
            service(c, devs, nd, 0.02);
            t = now_tv();
            img->send_region_using_base_pointer(0, 0, 3, 0, 2, u8, 1, 4, 3, false, 0, 0, 0, &t);
            J("sent", "vrpn_Imager Regionu8").str("sender", "Imager0").tv(t).i("chanIndex", 0).i("cMin", 0).i("cMax", 3).i("rMin", 0).i("rMax", 2).dv("values_row_major", d8, 12);
            service(c, devs, nd, 0.02);
            t = now_tv();
            img->send_region_using_base_pointer(1, 0, 3, 0, 2, u16, 1, 4, 3, false, 0, 0, 0, &t);
            J("sent", "vrpn_Imager Regionu16").str("sender", "Imager0").tv(t).i("chanIndex", 1).i("cMin", 0).i("cMax", 3).i("rMin", 0).i("rMax", 2).dv("values_row_major", d16, 12);
            service(c, devs, nd, 0.02);
            t = now_tv();
            img->send_region_using_base_pointer(2, 1, 2, 1, 2, f32, 1, 4, 3, false, 0, 0, 0, &t);
            double sub[4] = {d32[5], d32[6], d32[9], d32[10]};
            J("sent", "vrpn_Imager Regionf32").str("sender", "Imager0").tv(t).i("chanIndex", 2).i("cMin", 1).i("cMax", 2).i("rMin", 1).i("rMax", 2).dv("values_row_major", sub, 4);
            service(c, devs, nd, 0.02);
            t = now_tv();
            img->send_end_frame(0, 3, 0, 2, 0, 0, &t);
            J("sent", "vrpn_Imager End_Frame").str("sender", "Imager0").tv(t).i("cMin", 0).i("cMax", 3).i("rMin", 0).i("rMax", 2).i("dMin", 0).i("dMax", 0);
            t = now_tv();
            img->send_discarded_frames(3, &t);
            J("sent", "vrpn_Imager Discarded_Frames").str("sender", "Imager0").tv(t).i("count", 3);
            service(c, devs, nd, 0.5);
        }
        if (btn) {
            static const int seq[][2] = {{0, 1}, {0, 0}, {2, 1}, {1, 1}, {2, 0}};
            for (unsigned k = 0; k < sizeof seq / sizeof seq[0]; k++) {
                btn->set_button(seq[k][0], seq[k][1]);
                J("sent", "vrpn_Button_Server set_button").str("sender", "Button0").i("button", seq[k][0]).i("state", seq[k][1]);
                service(c, devs, nd, 0.3);
            }
        }
        if (ferr) {
            ferr->sendError(FD_FORCE_ERROR);
            J("sent", "vrpn_ForceDevice Force_Error").str("sender", "Force0").i("error_code", FD_FORCE_ERROR);
            service(c, devs, nd, 0.05);
            ferr->sendError(FD_MISC_ERROR);
            J("sent", "vrpn_ForceDevice Force_Error").str("sender", "Force0").i("error_code", FD_MISC_ERROR);
            service(c, devs, nd, 0.05);
        }
        if (session) service(c, devs, nd, 0.05);
    }
    if (trk) {
        vrpn_float64 v[3], q[4];
        trk->get_local_t2r(v, q);
        J("state", "vrpn_Tracker tracker2room (server's own values)").str("sender", "Tracker0").dv("pos", v, 3).dv("quat", q, 4);
        for (int s = 0; s < 2; s++) {
            trk->get_local_u2s(s, v, q);
            J("state", "vrpn_Tracker unit2sensor (server's own values)").str("sender", "Tracker0").i("sensor", s).dv("pos", v, 3).dv("quat", q, 4);
        }
    }
    if (aout) {
        const vrpn_float64 *o = aout->o_channels();
        J("state", "vrpn_Analog_Output_Server channels (server's own values)").str("sender", "AnalogOut0").i("num_channel", aout->getNumChannels()).dv("channel", o, aout->getNumChannels());
    }
    // Serve until the client leaves (at most 20 s more).
    t0 = now_tv();
    while (c->connected() && vrpn_TimevalDurationSeconds(now_tv(), t0) < 20) service(c, devs, nd, 0.05);
    service(c, devs, nd, 0.3);
    for (int k = nd - 1; k >= 0; k--) delete devs[k];
    delete ferr;
    c->removeReference();
    return 0;
}
