// catA_driver.C: drives mainline VRPN (github.com/vrpn/vrpn 893c7496) to put on the wire the Tracker
// set_update_rate and Reset_Origin requests and the auxiliary logger's three messages, for
// tracker_rate_auxlog.pcap (see README.md here). Every byte on the wire is written by mainline code:
// vrpn_Tracker_Remote::set_update_rate / reset_origin, vrpn_Auxiliary_Logger_Remote's
// send_logging_request / send_logging_status_request, and vrpn_Auxiliary_Logger_Server's
// send_report_logging (called by the small subclass below, which answers with the names it was asked
// for; mainline's own vrpn_Auxiliary_Logger_Server_Generic needs a second connection to log and
// dereferences a NULL connection on a status request made before any logging request).
//
// Build against a mainline build (internal/vrpnreal/build.sh, B=/work/vrpnbuild):
//   g++ -O1 -std=c++11 -DVRPN_USING_CMAKE="\"$B/build/vrpn_Configure.h\"" -I$B/build -I$B/src -I$B/src/quat \
//       -o catA_driver catA_driver.C $B/build/libvrpnserver.a $B/build/quat/libquat.a -lpthread -lm
// Run (as root, for tcpdump):
//   tcpdump -i lo -U -w tracker_rate_auxlog.pcap 'tcp port 3921' &
//   ./catA_driver server 3921 > tracker_rate_auxlog.server.jsonl &
//   ./catA_driver client 3921 > tracker_rate_auxlog.client.jsonl
// Output: one JSON object per line; "sent": the values handed to a mainline call, "recv": what a
// mainline callback delivered, "recv_raw": every user message a connection dispatched (header time,
// names, payload in hex). Doubles are printed with %.17g.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <string>

#include "vrpn_Auxiliary_Logger.h"
#include "vrpn_Connection.h"
#include "vrpn_Shared.h"
#include "vrpn_Tracker.h"

// jstr adds "k":"v"; a NULL v (mainline's report callback passes NULL for an empty name) as null.
static void jstr(std::string &s, const char *k, const char *v)
{
    s += ",\"";
    s += k;
    if (!v) {
        s += "\":null";
        return;
    }
    s += "\":\"";
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        char b[8];
        if (*p == '"' || *p == '\\') {
            s += '\\';
            s += (char)*p;
        } else if (*p < 0x20 || *p >= 0x7f) {
            snprintf(b, sizeof b, "\\u%04x", *p);
            s += b;
        } else {
            s += (char)*p;
        }
    }
    s += "\"";
}

static std::string line(const char *dir, const char *type, const char *sender)
{
    std::string s = "{\"dir\":\"";
    s += dir;
    s += "\"";
    jstr(s, "type", type);
    jstr(s, "sender", sender);
    return s;
}

static void tv(std::string &s, const struct timeval &t)
{
    char b[64];
    snprintf(b, sizeof b, ",\"sec\":%lld,\"usec\":%lld", (long long)t.tv_sec, (long long)t.tv_usec);
    s += b;
}

static void end(std::string &s)
{
    s += "}\n";
    fputs(s.c_str(), stdout);
    fflush(stdout);
}

struct Raw {
    vrpn_Connection *c;
    const char *side;
};

static int VRPN_CALLBACK raw_handler(void *ud, vrpn_HANDLERPARAM p)
{
    Raw *r = (Raw *)ud;
    const char *sn = r->c->sender_name(p.sender);
    const char *tn = r->c->message_type_name(p.type);
    std::string s = line("recv_raw", tn ? tn : "?", sn ? sn : "?");
    jstr(s, "side", r->side);
    tv(s, p.msg_time);
    char b[32];
    snprintf(b, sizeof b, ",\"payload_len\":%d,\"payload\":\"", (int)p.payload_len);
    s += b;
    for (int i = 0; i < p.payload_len && i < 4096; i++) {
        snprintf(b, sizeof b, "%02x", (unsigned char)p.buffer[i]);
        s += b;
    }
    s += "\"";
    end(s);
    return 0;
}

// Logger answers every request with mainline's send_report_logging: a logging request with the names
// asked for, a status request with the names of the last logging request ("" before any).
class Logger : public vrpn_Auxiliary_Logger_Server {
public:
    Logger(const char *name, vrpn_Connection *c) : vrpn_Auxiliary_Logger_Server(name, c) {}
    std::string names[4];

protected:
    void report(void)
    {
        std::string s = line("sent", "vrpn_Auxiliary_Logger Logging_response", "Logger0");
        jstr(s, "local_in", names[0].c_str());
        jstr(s, "local_out", names[1].c_str());
        jstr(s, "remote_in", names[2].c_str());
        jstr(s, "remote_out", names[3].c_str());
        end(s);
        send_report_logging(names[0].c_str(), names[1].c_str(), names[2].c_str(), names[3].c_str());
    }
    virtual void handle_request_logging(const char *li, const char *lo, const char *ri, const char *ro)
    {
        const char *in[4] = {li, lo, ri, ro};
        std::string s = line("recv", "vrpn_Auxiliary_Logger_Server handle_request_logging", "Logger0");
        static const char *keys[4] = {"local_in", "local_out", "remote_in", "remote_out"};
        for (int i = 0; i < 4; i++) {
            names[i] = in[i] ? in[i] : ""; // mainline passes NULL for an empty name
            jstr(s, keys[i], names[i].c_str());
        }
        end(s);
        report();
    }
    virtual void handle_request_logging_status(void)
    {
        std::string s = line("recv", "vrpn_Auxiliary_Logger_Server handle_request_logging_status", "Logger0");
        end(s);
        report();
    }
};

static void VRPN_CALLBACK on_report(void *, const vrpn_AUXLOGGERCB i)
{
    std::string s = line("recv", "vrpn_Auxiliary_Logger_Remote report", "Logger0");
    tv(s, i.msg_time);
    jstr(s, "local_in", i.local_in_logfile_name);
    jstr(s, "local_out", i.local_out_logfile_name);
    jstr(s, "remote_in", i.remote_in_logfile_name);
    jstr(s, "remote_out", i.remote_out_logfile_name);
    end(s);
}

static void loop(vrpn_Connection *c, vrpn_BaseClass **devs, int n, double secs)
{
    struct timeval t0, t;
    vrpn_gettimeofday(&t0, NULL);
    for (;;) {
        for (int i = 0; i < n; i++) devs[i]->mainloop();
        c->mainloop();
        vrpn_gettimeofday(&t, NULL);
        if (vrpn_TimevalDurationSeconds(t, t0) >= secs) return;
        vrpn_SleepMsecs(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: catA_driver server|client PORT\n");
        return 2;
    }
    vrpn_System_TextPrinter.set_ostream_to_use(stderr);
    int port = atoi(argv[2]);
    char nm[96];
    if (!strcmp(argv[1], "server")) {
        snprintf(nm, sizeof nm, "127.0.0.1:%d", port);
        vrpn_Connection *c = vrpn_create_server_connection(nm);
        Raw raw = {c, "server"};
        c->register_handler(vrpn_ANY_TYPE, raw_handler, &raw);
        vrpn_BaseClass *devs[2] = {new vrpn_Tracker_Server("Tracker0", c, 1), new Logger("Logger0", c)};
        loop(c, devs, 2, 4.0);
        return 0;
    }
    snprintf(nm, sizeof nm, "Tracker0@tcp://127.0.0.1:%d", port);
    vrpn_Connection *c = vrpn_get_connection_by_name(nm);
    Raw raw = {c, "client"};
    c->register_handler(vrpn_ANY_TYPE, raw_handler, &raw);
    vrpn_Tracker_Remote *trk = new vrpn_Tracker_Remote(nm, c);
    snprintf(nm, sizeof nm, "Logger0@tcp://127.0.0.1:%d", port);
    vrpn_Auxiliary_Logger_Remote *log = new vrpn_Auxiliary_Logger_Remote(nm, c);
    log->register_report_handler(NULL, on_report);
    vrpn_BaseClass *devs[2] = {trk, log};
    loop(c, devs, 2, 0.5);

    std::string s = line("sent", "vrpn_Tracker set_update_rate", "Tracker0");
    s += ",\"rate\":60.5";
    end(s);
    trk->set_update_rate(60.5);
    loop(c, devs, 2, 0.1);
    s = line("sent", "vrpn_Tracker Reset_Origin", "Tracker0");
    end(s);
    trk->reset_origin();
    loop(c, devs, 2, 0.1);

    s = line("sent", "vrpn_Auxiliary_Logger Logging_status_request", "Logger0");
    end(s);
    log->send_logging_status_request();
    loop(c, devs, 2, 0.2);
    s = line("sent", "vrpn_Auxiliary_Logger Logging_request", "Logger0");
    jstr(s, "local_in", "in_log.vrpn");
    jstr(s, "local_out", "");
    jstr(s, "remote_in", "");
    jstr(s, "remote_out", "remote out.vrpn");
    end(s);
    log->send_logging_request("in_log.vrpn", "", "", "remote out.vrpn");
    loop(c, devs, 2, 0.2);
    s = line("sent", "vrpn_Auxiliary_Logger Logging_status_request", "Logger0");
    end(s);
    log->send_logging_status_request();
    loop(c, devs, 2, 0.5);
    fflush(stdout);
    _exit(0); // mainline's teardown of a connection still referenced crashes; the traffic is complete
}
