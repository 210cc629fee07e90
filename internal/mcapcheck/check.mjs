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
// Usage: node check.mjs FILE.mcap [--no-messages] [--records FILE.jsonl]
// Used by the tests of cmd/dissect (mcap_test.go) and output/mcapout.
import { open } from 'node:fs/promises';
import { McapIndexedReader } from '@mcap/core';
import Ajv2020 from 'ajv/dist/2020.js';
import { decompress } from 'fzstd';
import decompressLZ4 from '@foxglove/wasm-lz4';

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
for (const [id, s] of reader.schemasById) {
  const out = { id, name: s.name, encoding: s.encoding };
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
let total = 0;
for await (const m of reader.readMessages()) {
  total++;
  const ch = reader.channelsById.get(m.channelId);
  counts.set(m.channelId, (counts.get(m.channelId) ?? 0) + 1);
  const schema = reader.schemasById.get(ch.schemaId);
  let data;
  try {
    data = JSON.parse(new TextDecoder().decode(m.data));
  } catch (e) {
    problem({ topic: ch.topic, seq: m.sequence, error: `not JSON: ${e.message}` });
    continue;
  }
  const v = validators.get(ch.schemaId);
  if (ch.messageEncoding !== 'json') problem({ topic: ch.topic, error: `encoding ${ch.messageEncoding}` });
  if (v && !v(data)) problem({ topic: ch.topic, seq: m.sequence, error: ajv.errorsText(v.errors) });
  if (recordsFile !== undefined && schema.name.startsWith('dissect.')) recordsRead.push(canon(data));
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
  const written = lines.map((l) => canon(JSON.parse(l))).sort();
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
