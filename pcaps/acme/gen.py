#!/usr/bin/env python3
"""Write the ACME SC-4 servo controller sample captures and their truth.

The encoder of docs/your-protocol.md, written apart from dissect from the
protocol's description (the comment at the top of
docs/examples/acme-servo.yaml): Python's struct for the fields and
binascii.crc_hqx for the CRC-16/IBM-3740 (CCITT-FALSE, init 0xffff).

    python3 pcaps/acme/gen.py pcaps/acme

writes, deterministically:
  acme_servo_serial.pcapng  the UART as `dissect serial -w` saves it: pcapng,
                            LINKTYPE_USER0 (147), one EPB per read with the
                            direction in epb_flags (2 host->device, 1 back)
  acme_servo_tcp.pcap       the same session through a serial-to-TCP bridge
                            (10.0.0.2:50000 -> 10.0.0.9:5600), Ethernet,
                            with one segment of the controller never captured
  acme_servo.expect.json    per capture and direction, every record dissect
                            must write: offset, length, type and fields
                            (gaps and skipped runs included), from this
                            encoder's own bookkeeping
Only the standard library is used.
"""
import binascii
import json
import os
import struct
import sys

T0 = 1767225600  # 2026-01-01T00:00:00Z


def frame(seq, msg, payload):
    head = bytes([len(payload), seq, msg])
    crc = binascii.crc_hqx(head + payload, 0xFFFF)
    return b"\xa5\x5a" + head + payload + struct.pack("<H", crc)


STATES = {0: "idle", 1: "running", 2: "fault"}
LEVELS = {0: "debug", 1: "info", 2: "warning", 3: "error"}


def heartbeat(seq, uptime_ms, state, battery_mv):
    f = {"uptime_ms": uptime_ms, "state": STATES.get(state, str(state)), "battery": battery_mv * 0.001}
    return frame(seq, 0x01, struct.pack("<IBH", uptime_ms, state, battery_mv)), "heartbeat", f


def set_position(seq, joint, target_centideg, speed_steps):
    f = {"joint": joint, "target": target_centideg * 0.01, "speed": speed_steps * 1.40625}
    return frame(seq, 0x10, struct.pack("<BhB", joint, target_centideg, speed_steps)), "set_position", f


def status(seq, estop, overtemp, joints):
    flags = (estop << 7) | (overtemp << 6)  # b1 estop, b1 overtemp, b6 reserved: most significant bit first
    body = bytes([flags, len(joints)])
    out = []
    for pos, cur, temp in joints:
        body += struct.pack("<hhb", pos, cur, temp)
        out.append({"position": pos * 0.01, "current": cur, "temperature": temp})
    f = {"estop": estop, "overtemp": overtemp, "count": len(joints), "joints": out}
    return frame(seq, 0x11, body), "status", f


def log(seq, level, text):
    return frame(seq, 0x20, bytes([level]) + text.encode()), "log", {"level": LEVELS[level], "text": text}


def ping(seq, token):
    return frame(seq, 0x30, struct.pack("<H", token)), "ping", {"token": token}


def pong(seq, token):
    return frame(seq, 0x31, struct.pack("<H", token)), "pong", {"token": token}


def record(msg, seq, f, warnings=None):
    b, typ, fields = msg
    full = {"len": b[2], "seq": seq, "msg": b[4]}
    full.update(fields)
    r = {"type": typ, "length": len(b), "fields": full}
    if warnings:
        r["warnings"] = warnings
    return b, r


def session():
    """The conversation: (time offset in ms, direction, bytes, truth or None).

    Direction 0 is the host, 1 the controller. A truth of None is bytes
    dissect must skip (garbage, a frame with a wrong CRC)."""
    ev = []

    def msg(ms, d, m, warnings=None):
        b, r = record(m, m[0][3], m[2], warnings)
        ev.append((ms, d, b, r))

    def junk(ms, d, b, why):
        ev.append((ms, d, b, {"type": "skipped", "length": len(b), "why": why}))

    msg(0, 1, heartbeat(0, 120000, 0, 12150))
    msg(10, 0, ping(0, 0x1234))
    msg(13, 1, pong(1, 0x1234))
    msg(20, 0, set_position(1, 0, 4500, 64))
    msg(24, 1, status(2, 0, 0, [(0, 12, 31), (1502, 340, 35), (-2250, -80, 33), (9000, 5, 30)]))
    msg(30, 1, log(3, 1, "joint 0 moving"))
    msg(35, 0, set_position(2, 2, -1234, 32))
    junk(40, 1, bytes([0x00, 0xFF, 0xA5, 0x13, 0x37, 0xA5]), "line noise: no sync word")
    msg(44, 1, status(4, 0, 1, [(4500, 800, 71), (-1234, 420, 52)]))
    bad = bytearray(heartbeat(5, 120500, 1, 12100)[0])
    bad[-1] ^= 0xFF
    junk(50, 1, bytes(bad), "a heartbeat whose CRC is wrong")
    msg(60, 0, ping(3, 0x1235))
    msg(62, 1, heartbeat(6, 121000, 1, 12080))
    msg(64, 1, pong(7, 0x1235))
    msg(70, 1, heartbeat(8, 121500, 7, 11900), ["state: 7 is not a value its enum names"])
    msg(80, 1, log(9, 2, "battery low: 11.9 V"))
    msg(90, 1, log(10, 3, "joint 2 stalled"))
    msg(100, 1, heartbeat(11, 122000, 2, 11850))
    return ev


CUTS = [3, 1, 5, 2, 8, 4, 13, 6]


def reads(ev):
    """Cut each unit into reads at places that cycle through CUTS: inside
    the sync word, between the header bytes, before the CRC. Returns the
    reads and the time of each unit's last read (when dissect has it
    whole)."""
    out, ends, k = [], [], 0
    for ms, d, b, _ in ev:
        i = 0
        while i < len(b):
            n = CUTS[k % len(CUTS)]
            k += 1
            out.append((ms, d, b[i:i + n]))
            i += n
            last = ms
            ms += 0.25
        ends.append(last)
    return out, ends


def add_rtt(ev, ends, dirs_records):
    """A pong's rtt_ms: from the end of the oldest unanswered ping of the
    host with its token to the end of the pong."""
    waiting = []
    rtt = {}
    for i, (_, d, b, r) in enumerate(ev):
        if r["type"] == "ping":
            waiting.append((r["fields"]["token"], ends[i]))
        elif r["type"] == "pong":
            for j, (tok, t) in enumerate(waiting):
                if tok == r["fields"]["token"]:
                    rtt[id(r)] = ends[i] - t
                    del waiting[j]
                    break
    return rtt


def truth(ev, ends, lost=None):
    """Per direction, the records in order with their offsets. lost maps a
    direction to (offset, length) of bytes never captured: a gap, then
    the rest of the frame it cut is skipped up to the next sync word.
    ends are the times the units are whole (for a pong's rtt_ms)."""
    dirs = {0: [], 1: []}
    off = {0: 0, 1: 0}
    rtt = add_rtt(ev, ends, dirs)
    for _, d, b, r in ev:
        key = id(r)
        r = dict(r)
        if key in rtt:
            r["fields"] = dict(r["fields"], rtt_ms=rtt[key])
        r["offset"] = off[d]
        off[d] += len(b)
        r.pop("why", None)
        if lost and d in lost:
            lo, n = lost[d]
            if r["offset"] <= lo < r["offset"] + r["length"]:
                end = r["offset"] + r["length"]
                if lo > r["offset"]:
                    dirs[d].append({"type": "skipped", "offset": r["offset"], "length": lo - r["offset"]})
                dirs[d].append({"type": "gap", "offset": lo, "length": n})
                if end > lo + n:
                    dirs[d].append({"type": "skipped", "offset": lo + n, "length": end - lo - n})
                continue
        dirs[d].append(r)
    # neighbouring skipped runs are one record
    for d in dirs:
        merged = []
        for r in dirs[d]:
            if merged and r["type"] == "skipped" and merged[-1]["type"] == "skipped":
                merged[-1]["length"] += r["length"]
                continue
            merged.append(r)
        dirs[d] = merged
    return {"host": dirs[0], "controller": dirs[1], "bytes": [off[0], off[1]]}


# --- pcapng (serial) ---------------------------------------------------------

def opt(code, value):
    pad = (4 - len(value) % 4) % 4
    return struct.pack("<HH", code, len(value)) + value + b"\0" * pad


def block(typ, body):
    n = 12 + len(body)
    return struct.pack("<II", typ, n) + body + struct.pack("<I", n)


def pcapng(reads):
    shb = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) + opt(0, b""))
    idb = block(1, struct.pack("<HHI", 147, 0, 4096) + opt(2, b"/dev/ttyUSB0") + opt(9, bytes([9])) + opt(0, b""))
    out = [shb, idb]
    for ms, d, data in reads:
        ns = T0 * 10**9 + int(ms * 10**6)
        pad = (4 - len(data) % 4) % 4
        flags = 2 if d == 0 else 1
        body = struct.pack("<IIIII", 0, ns >> 32, ns & 0xFFFFFFFF, len(data), len(data)) + data + b"\0" * pad
        out.append(block(6, body + opt(2, struct.pack("<I", flags)) + opt(0, b"")))
    return b"".join(out)


# --- pcap (TCP) --------------------------------------------------------------

HOST = (bytes([10, 0, 0, 2]), 50000, bytes.fromhex("020000000002"))
CTRL = (bytes([10, 0, 0, 9]), 5600, bytes.fromhex("020000000009"))


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def tcp_packet(src, dst, seq, ack, flags, data, ident):
    tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq, ack, 5 << 4, flags, 65535, 0, 0) + data
    pseudo = src[0] + dst[0] + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), ident, 0x4000, 64, 6, 0, src[0], dst[0])
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return dst[2] + src[2] + b"\x08\x00" + ip + tcp


def pcap(ev, drop_index):
    """One segment per unit (the controller's status reports split in two);
    the controller's segment number drop_index is not written. Returns the
    file and the (offset, length) of the bytes lost."""
    pkts = []
    seq = {0: 1000, 1: 5000}
    start = {0: 1000, 1: 5000}
    ends = {0: HOST, 1: CTRL}
    ident = [1]

    def put(ms, d, flags, data=b""):
        o = 1 - d
        ack = seq[o] + 1 if flags & 0x02 == 0 else 0
        if flags & 0x10:
            ack = seq[o]
        pkts.append((ms, tcp_packet(ends[d], ends[o], seq[d], ack, flags, data, ident[0])))
        ident[0] += 1

    # handshake
    put(-5, 0, 0x02)
    seq[0] += 1
    pkts.append((-4.9, tcp_packet(CTRL, HOST, 5000, 1001, 0x12, b"", 0)))
    seq[1] += 1
    put(-4.8, 0, 0x10)
    lost = None
    n = 0
    done = []
    for ms, d, b, r in ev:
        parts = [b]
        if d == 1 and r["type"] == "status":
            parts = [b[:9], b[9:]]
        for p in parts:
            if d == 1:
                n += 1
            if d == 1 and n == drop_index:
                lost = (seq[1] - start[1] - 1, len(p))
            else:
                put(ms, d, 0x18, p)
            seq[d] += len(p)
            last = ms
            ms += 0.1
        done.append(last)
    put(200, 0, 0x11)
    seq[0] += 1
    put(200.1, 1, 0x11)
    seq[1] += 1
    put(200.2, 0, 0x10)
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for ms, p in pkts:
        us = T0 * 10**6 + int(round((ms + 10) * 1000))
        out.append(struct.pack("<IIII", us // 10**6, us % 10**6, len(p), len(p)) + p)
    return b"".join(out), lost, done


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    ev = session()
    rd, serial_ends = reads(ev)
    serial = pcapng(rd)
    # the 3rd controller segment: the first part of the first status report
    tcp, lost, tcp_ends = pcap(ev, 3)
    expect = {
        "generator": "python3 pcaps/acme/gen.py pcaps/acme",
        "source": "records expected from this encoder's own bookkeeping; not produced by running dissect",
        "protocol": "docs/examples/acme-servo.yaml",
        "captures": {
            "acme_servo_serial.pcapng": truth(ev, serial_ends),
            "acme_servo_tcp.pcap": truth(ev, tcp_ends, {1: lost}),
        },
    }
    with open(os.path.join(outdir, "acme_servo_serial.pcapng"), "wb") as f:
        f.write(serial)
    with open(os.path.join(outdir, "acme_servo_tcp.pcap"), "wb") as f:
        f.write(tcp)
    with open(os.path.join(outdir, "acme_servo.expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
