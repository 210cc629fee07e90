// Reads an MCAP file with Foxglove's own TypeScript reader (@mcap/core,
// through the file's summary and indexes, as Foxglove and Lichtblick do) and
// checks it with Ajv, independently of dissect's Go code:
//   - every schema is "jsonschema" and compiles under Ajv's strict mode for
//     JSON Schema 2020-12 (which validates it against the meta-schema);
//   - every schema is in the subset Foxglove/Lichtblick turn into datatypes
//     (their parseJsonSchema, which refuses a whole schema when one
//     property is outside it): an object with properties, each property
//     with a "type" of boolean, integer, number, string (contentEncoding
//     none or base64), object (the same, recursively) or array (of one of
//     the others, never of arrays), or a "oneOf" of numeric consts; other
//     keywords, allOf included, they do not read;
//   - every message is JSON that validates against its channel's schema.
// A channel of message encoding "protobuf" is read instead as Foxglove
// reads it: its schema, a FileDescriptorSet, is loaded with protobufjs
// (@mcap/support's protobufFromBinaryDescriptor), the schema's name must
// be a message type in it, and each message is decoded with that type
// and turned into the JSON -o json writes (keys: the fields' json_name;
// google.protobuf.Timestamp: RFC 3339 with nine fraction digits; bytes:
// hex; a message L_* of one field "items": that array) — see pbValue.
// Prints one JSON object: the header, schemas, channels with their message
// counts, the statistics record's count, the problems found (at most 50),
// and every message as {topic, schema, seq, log_time, data} (log_time a
// decimal string; data the parsed message, except that numbers of
// PoseInFrame positions and orientations are also given as the hex of
// their float64 bits in "bits", so a test can compare them exactly).
//
// With --records FILE.jsonl (the same run's -o json), it also compares the
// records: the messages of the channels whose schema is named dissect.*,
// as JSON.parse gives them, against the lines of FILE.jsonl, as JSON.parse
// gives them, as multisets (the file is read in log-time order), -0 and 0
// told apart; "records" says how many of each and the first that differ.
//
// Records are compared exactly: the -o json lines are parsed with
// lossless-json, an integer compared as its decimal digits and a float as
// its float64 bits (a protobuf float as the float64 of its shortest
// float32 digits, which -o json writes); a key that is null or an empty
// array is left out on both sides (protobuf cannot tell an empty repeated
// field from an absent one).
//
// Usage: node check.mjs FILE.mcap [--no-messages] [--records FILE.jsonl]
// Used by the tests of cmd/dissect (mcap_test.go) and output/mcapout.
import { open } from 'node:fs/promises';
import { McapIndexedReader } from '@mcap/core';
import Ajv2020 from 'ajv/dist/2020.js';
import { decompress } from 'fzstd';
import decompressLZ4 from '@foxglove/wasm-lz4';
import { protobufFromBinaryDescriptor } from '@mcap/support';
import descriptorModule from 'protobufjs/ext/descriptor/index.js';
import { parse as parseLossless, isLosslessNumber } from 'lossless-json';

const args = process.argv.slice(2);
const file = args[0];
const flag = args.includes('--no-messages') ? '--no-messages' : '';
const recordsFile = args.includes('--records') ? args[args.indexOf('--records') + 1] : undefined;
const fh = await open(file, 'r');
const readable = {
  size: async () => BigInt((await fh.stat()).size),
  read: async (offset, size) => {
    const buf = new Uint8Array(Number(size));
    const { bytesRead } = await fh.read(buf, 0, buf.length, Number(offset));
    if (bytesRead !== buf.length) throw new Error(`short read at ${offset}`);
    return buf;
  },
};
await decompressLZ4.isLoaded; // Foxglove's own LZ4 frame decoder
const reader = await McapIndexedReader.Initialize({
  readable,
  decompressHandlers: {
    zstd: (data, size) => decompress(data, new Uint8Array(Number(size))),
    lz4: (data, size) => decompressLZ4(data, Number(size)),
  },
});

const problems = [];
const problem = (p) => { if (problems.length < 50) problems.push(p); };

const allowed = new Set(['boolean', 'integer', 'number', 'string', 'object', 'array']);
function foxgloveSubset(s, path) {
  if (s.type !== 'object' || typeof s.properties !== 'object' || s.properties === null) {
    return `${path}: an object needs "type": "object" and properties`;
  }
  for (const [k, p] of Object.entries(s.properties)) {
    const at = `${path}.${k}`;
    if (Array.isArray(p.oneOf)) {
      if (!p.oneOf.every((a) => typeof a.const === 'number')) return `${at}: oneOf of other than numeric consts`;
      continue;
    }
    if (!allowed.has(p.type)) return `${at}: type ${JSON.stringify(p.type)}`;
    if (p.type === 'string' && p.contentEncoding !== undefined && p.contentEncoding !== 'base64') {
      return `${at}: contentEncoding ${JSON.stringify(p.contentEncoding)}`;
    }
    if (p.type === 'object') {
      const e = foxgloveSubset(p, at);
      if (e) return e;
    }
    if (p.type === 'array') {
      const it = p.items ?? {};
      if (!allowed.has(it.type) || it.type === 'array') return `${at}[]: item type ${JSON.stringify(it.type)}`;
      if (it.type === 'string' && it.contentEncoding !== undefined) return `${at}[]: contentEncoding in an array`;
      if (it.type === 'object') {
        const e = foxgloveSubset(it, `${at}[]`);
        if (e) return e;
      }
    }
  }
  return '';
}

const ajv = new Ajv2020({ strict: true, allErrors: false });
const validators = new Map();
const schemas = [];
const pbTypes = new Map(); // schema id → protobufjs Type
const jsonNames = new Map(); // ".pkg.Msg" → Map(field name → json_name)
function readNames(prefix, m) {
  const full = `${prefix}.${m.name}`;
  jsonNames.set(full, new Map((m.field ?? []).map((f) => [f.name, f.jsonName || f.name])));
  for (const n of m.nestedType ?? []) readNames(full, n);
}
for (const [id, s] of reader.schemasById) {
  const out = { id, name: s.name, encoding: s.encoding };
  if (s.encoding === 'protobuf') {
    try {
      for (const f of descriptorModule.FileDescriptorSet.decode(s.data).file) {
        for (const m of f.messageType ?? []) readNames(f.package ? `.${f.package}` : '', m);
      }
      const root = protobufFromBinaryDescriptor(s.data);
      root.resolveAll();
      pbTypes.set(id, root.lookupType(s.name));
    } catch (e) {
      problem({ schema: s.name, error: String(e.message ?? e) });
    }
    schemas.push(out);
    continue;
  }
  try {
    const js = JSON.parse(new TextDecoder().decode(s.data));
    validators.set(id, ajv.compile(js));
    const e = foxgloveSubset(js, s.name);
    if (e) problem({ schema: s.name, error: `not in Foxglove's subset: ${e}` });
  } catch (e) {
    problem({ schema: s.name, error: String(e.message ?? e) });
  }
  if (s.encoding !== 'jsonschema') problem({ schema: s.name, error: `encoding ${s.encoding}` });
  schemas.push(out);
}

const counts = new Map();
const messages = [];
const bits = (x) => {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, x);
  return dv.getBigUint64(0).toString(16).padStart(16, '0');
};
// canon writes v as JSON with sorted keys, -0 as -0 (JSON.stringify writes 0).
const canon = (v) => {
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canon(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
};
const recordsRead = [];

// Exact leaves: "i" and an integer's digits, "f" and a float's float64
// bits, "s" and a string, "b" and a bool, so that canon compares values
// exactly whatever the encoding.
const isFloatText = (t) => /[.eE]/.test(t);
function jsonExact(v) {
  if (isLosslessNumber(v)) return isFloatText(v.value) ? `f${bits(Number(v.value))}` : `i${BigInt(v.value)}`;
  if (typeof v === 'string') return `s${v}`;
  if (typeof v === 'boolean') return `b${v}`;
  if (Array.isArray(v)) return v.map(jsonExact);
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null || (Array.isArray(x) && x.length === 0)) continue;
      out[k] = jsonExact(x);
    }
    return out;
  }
  return v;
}
// shortest32 is the float64 of the shortest decimal that reads back as
// the float32 x (the digits -o json writes for a float32).
function shortest32(x) {
  for (let p = 1; p < 10; p++) {
    const d = Number(x.toPrecision(p));
    if (Math.fround(d) === x) return d;
  }
  return x;
}
const special = (x) => (Number.isNaN(x) ? 'NaN' : x === Infinity ? 'Inf' : x === -Infinity ? '-Inf' : undefined);
const isLong = (x) => x !== null && typeof x === 'object' && typeof x.low === 'number';
const intKinds = new Set(['int32', 'sint32', 'uint32', 'fixed32', 'sfixed32', 'int64', 'sint64', 'uint64', 'fixed64', 'sfixed64']);
// exact and plain turn a protobuf scalar of type t into a leaf: exact as
// jsonExact does, plain as JSON.parse would give the -o json value.
const exact = {
  scalar(t, x) {
    if (t === 'double' || t === 'float') {
      const s = special(x);
      if (s !== undefined) return `s${s}`;
      return `f${bits(t === 'float' ? shortest32(x) : x)}`;
    }
    if (intKinds.has(t)) return `i${BigInt(x.toString())}`;
    if (t === 'bool') return `b${x}`;
    if (t === 'bytes') return `s${Buffer.from(x).toString('hex')}`;
    return `s${x}`;
  },
  time: (s) => `s${s}`,
};
const plain = {
  scalar(t, x) {
    if (t === 'double' || t === 'float') return special(x) ?? (t === 'float' ? shortest32(x) : x);
    if (intKinds.has(t)) return Number(x.toString());
    if (t === 'bytes') return Buffer.from(x).toString('hex');
    return x;
  },
  time: (s) => s,
};
// rfc3339 writes a google.protobuf.Timestamp as -o json writes a time.
function rfc3339(ts) {
  const sec = BigInt((ts.seconds ?? 0).toString());
  const day = new Date(Number(sec) * 1000).toISOString().slice(0, 19);
  return `${day}.${String(ts.nanos ?? 0).padStart(9, '0')}Z`;
}
const defaults = { string: '', bool: false, bytes: new Uint8Array(0) };
// pbValue turns a decoded message of type into the value -o json writes.
function pbValue(msg, type, leaf) {
  if (type.fullName === '.google.protobuf.Timestamp') return leaf.time(rfc3339(msg));
  const list = type.name.startsWith('L_') && type.fieldsArray.length === 1 && type.fieldsArray[0].name === 'items';
  const names = jsonNames.get(type.fullName) ?? new Map();
  const out = {};
  for (const f of type.fieldsArray) {
    const own = Object.prototype.hasOwnProperty.call(msg, f.name);
    let x = msg[f.name];
    const one = (y) => (f.resolvedType && f.resolvedType.fieldsArray ? pbValue(y, f.resolvedType, leaf) : leaf.scalar(f.type, y));
    let v;
    if (f.repeated) {
      if (!own || x.length === 0) {
        if (list) return [];
        continue;
      }
      v = x.map(one);
    } else if (own) {
      v = one(x);
    } else if (f.resolvedType?.fieldsArray || f.options?.proto3_optional || f.partOf) {
      continue; // absent
    } else {
      v = leaf.scalar(f.type, defaults[f.type] ?? 0); // proto3 implicit presence: the default
    }
    if (list) return v;
    out[names.get(f.name) ?? f.name] = v;
  }
  return out;
}
let total = 0;
for await (const m of reader.readMessages()) {
  total++;
  const ch = reader.channelsById.get(m.channelId);
  counts.set(m.channelId, (counts.get(m.channelId) ?? 0) + 1);
  const schema = reader.schemasById.get(ch.schemaId);
  let data;
  if (ch.messageEncoding === 'protobuf') {
    const type = pbTypes.get(ch.schemaId);
    if (schema.encoding !== 'protobuf' || type === undefined) {
      problem({ topic: ch.topic, error: `protobuf message of a ${schema.encoding} schema not loaded` });
      continue;
    }
    let msg;
    try {
      msg = type.decode(m.data);
    } catch (e) {
      problem({ topic: ch.topic, seq: m.sequence, error: `not a ${schema.name}: ${e.message}` });
      continue;
    }
    // A record's envelope keys that its channel states are in the
    // channel's metadata "envelope" (docs/mcap.md), not in the message.
    const stated = ch.metadata.get('envelope');
    data = pbValue(msg, type, plain);
    if (stated !== undefined) Object.assign(data, JSON.parse(stated));
    if (recordsFile !== undefined && schema.name.startsWith('dissect.')) {
      const rec = pbValue(msg, type, exact);
      if (stated !== undefined) Object.assign(rec, jsonExact(parseLossless(stated)));
      recordsRead.push(canon(rec));
    }
  } else {
    try {
      data = JSON.parse(new TextDecoder().decode(m.data));
    } catch (e) {
      problem({ topic: ch.topic, seq: m.sequence, error: `not JSON: ${e.message}` });
      continue;
    }
    const v = validators.get(ch.schemaId);
    if (ch.messageEncoding !== 'json') problem({ topic: ch.topic, error: `encoding ${ch.messageEncoding}` });
    if (v && !v(data)) problem({ topic: ch.topic, seq: m.sequence, error: ajv.errorsText(v.errors) });
    if (recordsFile !== undefined && schema.name.startsWith('dissect.')) {
      recordsRead.push(canon(jsonExact(parseLossless(new TextDecoder().decode(m.data)))));
    }
  }
  if (flag === '--no-messages') continue;
  const out = { topic: ch.topic, schema: schema.name, seq: m.sequence, log_time: m.logTime.toString(), data };
  if (schema.name === 'foxglove.PoseInFrame') {
    const p = data.pose.position, q = data.pose.orientation;
    out.bits = [p.x, p.y, p.z, q.x, q.y, q.z, q.w].map(bits);
  }
  messages.push(out);
}

const channels = [...reader.channelsById.values()].map((c) => ({
  id: c.id, topic: c.topic, schema: reader.schemasById.get(c.schemaId)?.name, encoding: c.messageEncoding,
  metadata: Object.fromEntries(c.metadata), count: counts.get(c.id) ?? 0,
}));
let records;
if (recordsFile !== undefined) {
  const { readFile } = await import('node:fs/promises');
  const lines = (await readFile(recordsFile, 'utf8')).split('\n').filter((l) => l !== '');
  const written = lines.map((l) => canon(jsonExact(parseLossless(l)))).sort();
  recordsRead.sort();
  const differ = [];
  for (let i = 0; i < Math.max(written.length, recordsRead.length) && differ.length < 3; i++) {
    if (written[i] !== recordsRead[i]) differ.push({ mcap: recordsRead[i] ?? null, json: written[i] ?? null });
  }
  records = { mcap: recordsRead.length, json: written.length, differ };
}
process.stdout.write(JSON.stringify({
  header: reader.header,
  statistics_messages: reader.statistics ? reader.statistics.messageCount.toString() : null,
  chunks: reader.chunkIndexes.length,
  compression: [...new Set(reader.chunkIndexes.map((c) => c.compression))],
  messages_read: total,
  schemas, channels, problems, messages, records,
}) + '\n');
await fh.close();
