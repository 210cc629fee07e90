-- deltarobot.lua: a Wireshark/tshark dissector for Deltarobot VR (protocol v6),
-- the comparison of docs/performance.md. Written from the protocol text and
-- docs/protocols.md ("deltarobot") for dissect; `go run ./internal/benchgen -lua
-- -o deltarobot.lua` writes it out.
--
--   tshark -X lua_script:deltarobot.lua -o deltarobot.port:4000 -r d50.pcap \
--          -T fields -e deltarobot.message_id
--
-- A message is a u16 little-endian id, then its content. The id's top four bits
-- are the size id (0x0..0x4: 1, 2, 4, 8 or 16 bytes; 0xF: a u32 little-endian
-- byte count comes first), the low twelve the type. Size ids 0x5..0xE give no
-- length: nothing after one can be framed. Messages run across TCP segments, so
-- a message cut at the end of the data asks TCP for the bytes it lacks
-- (desegment_offset / desegment_len) and is dissected once they are there.

local proto = Proto("deltarobot", "Deltarobot VR")
local floor = math.floor -- Lua 5.2 (Wireshark 4.0): no // nor >>

local names = {
    [0x3001] = "protocol_magic", [0x2002] = "protocol_version",
    [0x4003] = "actuator_position", [0x4007] = "current_direction",
    [0x4008] = "desired_direction", [0x3004] = "ping", [0x3005] = "pong",
    [0xF006] = "end_of_transmission", [0xF009] = "curve",
}
local content_size = { [0x0] = 1, [0x1] = 2, [0x2] = 4, [0x3] = 8, [0x4] = 16 }

local pf = {
    message_id = ProtoField.uint16("deltarobot.message_id", "Message id", base.HEX, names),
    size_id    = ProtoField.uint16("deltarobot.size_id", "Size id", base.HEX, nil, 0xF000),
    type_id    = ProtoField.uint16("deltarobot.type_id", "Type id", base.HEX, nil, 0x0FFF),
    length     = ProtoField.uint32("deltarobot.length", "Content length", base.DEC),
    magic      = ProtoField.string("deltarobot.magic", "Magic"),
    version    = ProtoField.uint32("deltarobot.version", "Version", base.DEC),
    ping_id    = ProtoField.uint64("deltarobot.ping.id", "Ping id", base.HEX),
    pong_id    = ProtoField.uint64("deltarobot.pong.id", "Answered ping id", base.HEX),
    x          = ProtoField.float("deltarobot.x", "x"),
    y          = ProtoField.float("deltarobot.y", "y"),
    z          = ProtoField.float("deltarobot.z", "z"),
    u          = ProtoField.float("deltarobot.u", "u (unused)"),
    points     = ProtoField.uint32("deltarobot.curve.points", "Points", base.DEC),
    point      = ProtoField.bytes("deltarobot.curve.point", "Point"),
    reason     = ProtoField.string("deltarobot.reason", "Reason"),
    data       = ProtoField.bytes("deltarobot.data", "Data"),
}
proto.fields = pf

local ex_unframed = ProtoExpert.new("deltarobot.unframed", "Size id without a defined length: the rest cannot be framed",
    expert.group.MALFORMED, expert.severity.ERROR)
local ex_unknown = ProtoExpert.new("deltarobot.unknown", "Unknown message id",
    expert.group.UNDECODED, expert.severity.WARN)
local ex_points = ProtoExpert.new("deltarobot.curve.trailing", "Curve length is not a multiple of 12",
    expert.group.MALFORMED, expert.severity.WARN)
proto.experts = { ex_unframed, ex_unknown, ex_points }

proto.prefs.port = Pref.uint("TCP port", 4000, "TCP port of the Deltarobot leader (the Qt application)")

-- vector adds n float32 (x, y, z[, u]) at off.
local function vector(tree, tvb, off, n)
    tree:add_le(pf.x, tvb(off, 4))
    tree:add_le(pf.y, tvb(off + 4, 4))
    tree:add_le(pf.z, tvb(off + 8, 4))
    if n == 4 then tree:add_le(pf.u, tvb(off + 12, 4)) end
end

-- content adds the fields of a message's content (len bytes at off).
local function content(tree, tvb, id, off, len)
    if id == 0x4003 or id == 0x4007 or id == 0x4008 then
        vector(tree, tvb, off, 4)
    elseif id == 0x3004 then
        tree:add_le(pf.ping_id, tvb(off, 8))
    elseif id == 0x3005 then
        tree:add_le(pf.pong_id, tvb(off, 8))
    elseif id == 0x3001 then
        tree:add(pf.magic, tvb(off, 8))
    elseif id == 0x2002 then
        tree:add_le(pf.version, tvb(off, 4))
    elseif id == 0xF006 then
        if len > 0 then tree:add(pf.reason, tvb(off, len)) end
    elseif id == 0xF009 then
        local n = floor(len / 12)
        tree:add(pf.points, n)
        for i = 0, n - 1 do
            vector(tree:add(pf.point, tvb(off + 12 * i, 12)), tvb, off + 12 * i, 3)
        end
        if len % 12 ~= 0 then tree:add_proto_expert_info(ex_points) end
    else
        if len > 0 then tree:add(pf.data, tvb(off, len)) end
        tree:add_proto_expert_info(ex_unknown)
    end
end

function proto.dissector(tvb, pinfo, tree)
    local n = tvb:len()
    local off, count = 0, 0
    while off < n do
        local left = n - off
        if left < 2 then
            pinfo.desegment_offset, pinfo.desegment_len = off, DESEGMENT_ONE_MORE_SEGMENT
            break
        end
        local id = tvb(off, 2):le_uint()
        local size = floor(id / 4096)
        local head, len = 2, content_size[size]
        if size == 0xF then
            if left < 6 then
                pinfo.desegment_offset, pinfo.desegment_len = off, 6 - left
                break
            end
            head, len = 6, tvb(off + 2, 4):le_uint()
        elseif len == nil then
            local t = tree:add(proto, tvb(off, left))
            t:add_le(pf.message_id, tvb(off, 2))
            t:add_proto_expert_info(ex_unframed)
            off = n
            break
        end
        if left < head + len then
            pinfo.desegment_offset, pinfo.desegment_len = off, head + len - left
            break
        end
        local t = tree:add(proto, tvb(off, head + len))
        t:add_le(pf.message_id, tvb(off, 2))
        t:add_le(pf.size_id, tvb(off, 2))
        t:add_le(pf.type_id, tvb(off, 2))
        if head == 6 then t:add_le(pf.length, tvb(off + 2, 4)) end
        content(t, tvb, id, off + head, len)
        off = off + head + len
        count = count + 1
    end
    if count > 0 then
        pinfo.cols.protocol = "Deltarobot"
        pinfo.cols.info = count .. (count == 1 and " message" or " messages")
    end
    return n
end

local port = proto.prefs.port
DissectorTable.get("tcp.port"):add(port, proto)

function proto.prefs_changed()
    if proto.prefs.port ~= port then
        DissectorTable.get("tcp.port"):remove(port, proto)
        port = proto.prefs.port
        DissectorTable.get("tcp.port"):add(port, proto)
    end
end
