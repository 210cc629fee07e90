// common.h: JSON-line printing shared by sender.C and receiver.C (see build.sh).
// Every value printed comes from a mainline VRPN variable or callback argument; doubles use %.17g.
#ifndef VRPNREAL_COMMON_H
#define VRPNREAL_COMMON_H

#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <string>

#include "vrpn_Connection.h"
#include "vrpn_Shared.h"

// J builds one JSON object and prints it on its own line (stdout, flushed).
struct J {
    std::string s;
    J(const char *dir, const char *type)
    {
        s = "{";
        str("dir", dir);
        str("type", type);
    }
    void key(const char *k)
    {
        if (s.size() > 1) s += ",";
        s += "\"";
        s += k;
        s += "\":";
    }
    J &str(const char *k, const char *v)
    {
        key(k);
        if (!v) {
            s += "null";
            return *this;
        }
        s += "\"";
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
        return *this;
    }
    J &i(const char *k, long long v)
    {
        char b[32];
        snprintf(b, sizeof b, "%lld", v);
        key(k);
        s += b;
        return *this;
    }
    J &d(const char *k, double v)
    {
        char b[40];
        snprintf(b, sizeof b, "%.17g", v);
        key(k);
        s += b;
        return *this;
    }
    J &dv(const char *k, const double *v, int n)
    {
        key(k);
        s += "[";
        for (int j = 0; j < n; j++) {
            char b[40];
            snprintf(b, sizeof b, "%s%.17g", j ? "," : "", v[j]);
            s += b;
        }
        s += "]";
        return *this;
    }
    J &fv(const char *k, const float *v, int n)
    {
        key(k);
        s += "[";
        for (int j = 0; j < n; j++) {
            char b[40];
            snprintf(b, sizeof b, "%s%.17g", j ? "," : "", (double)v[j]);
            s += b;
        }
        s += "]";
        return *this;
    }
    J &tv(const struct timeval &t)
    {
        i("sec", (long long)t.tv_sec);
        i("usec", (long long)t.tv_usec);
        return *this;
    }
    J &hex(const char *k, const char *buf, int n)
    {
        key(k);
        s += "\"";
        for (int j = 0; j < n; j++) {
            char b[4];
            snprintf(b, sizeof b, "%02x", (unsigned char)buf[j]);
            s += b;
        }
        s += "\"";
        return *this;
    }
    ~J()
    {
        s += "}\n";
        fputs(s.c_str(), stdout);
        fflush(stdout);
    }
};

// now returns the wall-clock time as VRPN reads it.
static inline struct timeval now_tv(void)
{
    struct timeval t;
    vrpn_gettimeofday(&t, NULL);
    return t;
}

// raw_handler prints every user message the connection delivered (header time, sender and type names as the
// connection knows them, payload length and bytes). Register it with vrpn_ANY_TYPE.
struct RawCtx {
    vrpn_Connection *c;
    const char *side;
};
static int VRPN_CALLBACK raw_handler(void *ud, vrpn_HANDLERPARAM p)
{
    RawCtx *r = (RawCtx *)ud;
    const char *sn = r->c->sender_name(p.sender);
    const char *tn = r->c->message_type_name(p.type);
    J j("recv_raw", tn ? tn : "?");
    j.str("side", r->side).str("sender", sn ? sn : "?").tv(p.msg_time).i("payload_len", p.payload_len);
    if (p.payload_len <= 2048) j.hex("payload", p.buffer, p.payload_len);
    return 0;
}

#endif
