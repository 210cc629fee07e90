// A Foxglove WebSocket client for dissect's tests of -o foxglove, written
// against Foxglove's own client library (@foxglove/ws-protocol's
// FoxgloveClient over ws), independently of dissect's Go code:
//   - it subscribes to every channel as it is advertised;
//   - every channel's schema must be "jsonschema" and compile under Ajv's
//     JSON Schema 2020-12 strict mode; every message must be JSON valid
//     against its channel's schema;
//   - it keeps every message (topic, schema name, receive time, the JSON
//     as JavaScript parsed it) and every status message;
//   - with --slow it stops reading its socket after its first 50 messages
//     until its standard input ends: a client too slow for the traffic;
//   - with --subscribe-after MS it subscribes to nothing until MS
//     milliseconds after the server's info, then to every channel (a
//     panel added later);
//   - with --protocols A,B it offers those subprotocols (default: the
//     library's own, foxglove.websocket.v1);
//   - it keeps the server's clock (Time messages) as a viewer does: each
//     message's clock is its receive time there, and a clock that goes
//     back is a seek: the messages kept so far are dropped (as Foxglove
//     and Lichtblick clear their panels) and counted in seeks.
// It prints "ready" once it has the server's info; on stderr, whenever
// they changed in the last 200 ms, "count P D M": P messages of a topic
// ending in /actuator_position, D messages in all, M missed as the
// server's status messages said; and when the server closes the
// connection a JSON report on stdout.
//
//   node client.mjs ws://127.0.0.1:8765 [--slow]
import wsProtocol from '@foxglove/ws-protocol'; // CommonJS: its default export

import WebSocket from 'ws';
import Ajv2020 from 'ajv/dist/2020.js';

const { FoxgloveClient } = wsProtocol;

const url = process.argv[2];
const slow = process.argv.includes('--slow');
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const after = arg('--subscribe-after');
const protocols = (arg('--protocols') ?? FoxgloveClient.SUPPORTED_SUBPROTOCOL).split(',');
const ws = new WebSocket(url, protocols);
const client = new FoxgloveClient({ ws });
const ajv = new Ajv2020({ strict: true, allErrors: false });

const channels = new Map(); // id → {topic, schemaName, validate}
const subs = new Map(); // subscription id → channel id
const report = { serverInfo: null, protocol: null, channels: [], messages: [], statuses: [], problems: [], closeCode: null, seeks: 0, clocks: 0 };
let clock = null; // the server's time, nanoseconds (BigInt)
let subscribing = after === undefined; // subscribe to channels as they come
let positions = 0;
let missed = 0;
let said = '';
let paused = false;

const problem = (p) => report.problems.push(p);

client.on('serverInfo', (info) => {
  report.serverInfo = info;
  report.protocol = ws.protocol;
  process.stdout.write('ready\n');
  if (!subscribing) {
    setTimeout(() => {
      subscribing = true;
      for (const id of channels.keys()) subs.set(client.subscribe(id), id);
    }, Number(after));
  }
});
client.on('time', ({ timestamp }) => {
  report.clocks++;
  if (clock !== null && timestamp < clock) {
    report.seeks++;
    report.messages = [];
    positions = 0;
  }
  clock = timestamp;
});
client.on('status', (s) => {
  report.statuses.push({ level: s.level, message: s.message });
  const m = /missed (\d+) messages/.exec(s.message);
  if (m) missed += Number(m[1]);
});
client.on('error', (e) => problem({ error: String(e?.message ?? e) }));
client.on('advertise', (chs) => {
  for (const ch of chs) {
    let validate = null;
    if (ch.schemaEncoding !== 'jsonschema') problem({ topic: ch.topic, error: `schema encoding ${ch.schemaEncoding}` });
    if (ch.encoding !== 'json') problem({ topic: ch.topic, error: `encoding ${ch.encoding}` });
    try {
      validate = ajv.compile(JSON.parse(ch.schema));
    } catch (e) {
      problem({ topic: ch.topic, schema: ch.schemaName, error: String(e.message ?? e) });
    }
    channels.set(ch.id, { topic: ch.topic, schemaName: ch.schemaName, validate });
    report.channels.push({ id: ch.id, topic: ch.topic, schemaName: ch.schemaName });
    if (subscribing) subs.set(client.subscribe(ch.id), ch.id);
  }
});

const decoder = new TextDecoder();
client.on('message', ({ subscriptionId, timestamp, data }) => {
  const ch = channels.get(subs.get(subscriptionId));
  if (!ch) {
    problem({ error: `message on subscription ${subscriptionId}, never made` });
    return;
  }
  let msg;
  try {
    msg = JSON.parse(decoder.decode(data));
  } catch (e) {
    problem({ topic: ch.topic, error: `not JSON: ${e.message}` });
    return;
  }
  if (ch.validate && !ch.validate(msg)) problem({ topic: ch.topic, error: ajv.errorsText(ch.validate.errors) });
  report.messages.push({ topic: ch.topic, schema: ch.schemaName, ns: timestamp.toString(), clock: clock === null ? null : clock.toString(), data: msg });
  if (ch.topic.endsWith('/actuator_position')) positions++;
  if (slow && !paused && report.messages.length === 50) {
    paused = true;
    ws._socket.pause(); // read nothing more until stdin ends
    process.stdin.on('end', () => ws._socket.resume());
    process.stdin.resume();
  }
});

setInterval(() => {
  const now = `count ${positions} ${report.messages.length} ${missed}`;
  if (now !== said) {
    said = now;
    process.stderr.write(now + '\n');
  }
}, 200).unref();

client.on('close', (ev) => {
  report.closeCode = ev.code ?? null;
  process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(0));
});
