// Drives a real Foxglove Studio 1.48 (page/: @foxglove/studio-base's
// built bundle on React 17) in headless Chromium through puppeteer-core,
// connected to a Foxglove WebSocket server by the deep link
// ?ds=foxglove-websocket&ds.url=URL, or with --file opening an MCAP file
// as its "Open local file" does, and reports what its panels received
// and show.
//
//   node drive.mjs --url ws://127.0.0.1:8765 [--delay 6] [--expect TOPIC=N ...]
//                  [--out DIR] [--timeout 90] [--chromium /usr/bin/chromium] [--hold]
//   node drive.mjs --file run.mcap [same options]
//
// With --file, the page's server serves the file too, and once the app
// has mounted the page opens it (__probe.openFile) and seeks to its start
// (__probe.seekStart); once the panels have subscribed, it plays
// (__probe.play).
// The page is served from a loopback HTTP server of this script. Studio
// opens with the layout "empty" of layout.json (no panels: it subscribes
// to nothing); once it has connected, and --delay seconds later, it is
// switched to the layout "panels" (a 3D panel following "world", a Plot
// of an actuator position, Raw Messages), whose panels subscribe then
// ("panels subscribed" on stderr once they have subscribed to every
// --expect topic that exists or that they take before it exists).
// The script then waits (at most --timeout seconds) until, for each
// --expect TOPIC=N, a panel subscribed to TOPIC has N of its messages
// since the last seek, every Plot draws N points of its topic, and every
// 3D panel renders in its followed frame (with --expect /tf=N); or, with
// --hold, until its standard input ends. Meanwhile it says on stderr, as
// they change, the first Plot's points and last value ("plot N Y"). It
// waits 2 s more (to see duplicates) and prints a JSON report on stdout
// (the page's __probe.report(), plus timings, the console's warnings and
// errors, whether it timed out, each panel's text). Screenshots of the
// page and of each panel, and the report (report.json), go to --out.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import puppeteer from 'puppeteer-core';

const dir = path.dirname(fileURLToPath(import.meta.url));
const { values: opt } = parseArgs({
  options: {
    url: { type: 'string' },
    file: { type: 'string' },
    delay: { type: 'string', default: '0' },
    expect: { type: 'string', multiple: true, default: [] },
    out: { type: 'string' },
    timeout: { type: 'string', default: '90' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    layout: { type: 'string', default: path.join(dir, 'layout.json') },
    hold: { type: 'boolean', default: false },
  },
});
if (!opt.url === !opt.file) {
  console.error('usage: node drive.mjs --url ws://HOST:PORT | --file FILE.mcap [--delay S] [--expect TOPIC=N ...] [--out DIR]');
  process.exit(2);
}
const expect = new Map(opt.expect.map((e) => {
  const i = e.lastIndexOf('=');
  return [e.slice(0, i), Number(e.slice(i + 1))];
}));
// With --hold the report waits for the end of standard input instead of
// the --expect counts: the caller says when it has seen enough.
let stdinEnded = false;
if (opt.hold) {
  process.stdin.resume();
  process.stdin.on('end', () => { stdinEnded = true; });
}
const log = (...a) => console.error(`drive.mjs ${new Date().toISOString()}:`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The page, the bundle and its chunks, React; nothing else.
const types = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png', '.svg': 'image/svg+xml', '.css': 'text/css' };
const server = http.createServer((req, res) => {
  const p = new URL(req.url, 'http://127.0.0.1').pathname;
  let file = null;
  if (p === '/layout.json') {
    file = opt.layout;
  } else if (p === '/file.mcap' && opt.file) {
    file = opt.file;
  } else if (p.startsWith('/page/') || p.startsWith('/node_modules/')) {
    const f = path.resolve(dir, '.' + decodeURIComponent(p));
    if (f.startsWith(dir + path.sep)) file = f;
  }
  if (req.method !== 'GET' || !file || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const httpPort = server.address().port;

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'foxstudio-chromium-'));
const browser = await puppeteer.launch({
  executablePath: opt.chromium,
  headless: true,
  userDataDir,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader'],
});
const consoleLines = [];
const result = { timedOut: false, waited: null };
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1600, height: 1000 });
  page.on('console', (m) => {
    if ((m.type() === 'warn' || m.type() === 'error') && consoleLines.length < 300) consoleLines.push(`${m.type()}: ${m.text().slice(0, 400)}`);
  });
  page.on('pageerror', (e) => consoleLines.push(`pageerror: ${String(e).slice(0, 400)}`));
  page.on('response', (res) => {
    if (res.status() >= 400) consoleLines.push(`http ${res.status()}: ${res.url()}`);
  });
  const q = new URLSearchParams(opt.url ? { ds: 'foxglove-websocket', 'ds.url': opt.url, layoutId: 'empty' } : { layoutId: 'empty' });
  await page.goto(`http://127.0.0.1:${httpPort}/page/index.html?${q}`, { timeout: Number(opt.timeout) * 1000 });
  const report = () => page.evaluate(() => window.__probe?.report() ?? { error: window.__probe?.error ?? 'no probe' });
  const deadline = Date.now() + Number(opt.timeout) * 1000;
  const source = opt.url ?? opt.file;
  if (opt.file) {
    // The app's providers mount after the page loads: open the file once
    // the player selection is there.
    for (;;) {
      const opened = await page.evaluate(() => window.__probe.openFile('/file.mcap').then(() => '', (e) => String(e)));
      if (opened === '') break;
      if (Date.now() > deadline) throw new Error(`Studio did not open ${opt.file}: ${opened}`);
      await sleep(100);
    }
  }

  // Connected: the player is present.
  let r;
  for (;;) {
    r = await report();
    if (r.error) throw new Error(`the page: ${r.error}`);
    if (r.connected === 'PRESENT' && (opt.url || r.currentTime !== null)) break;
    if (Date.now() > deadline) throw new Error(`Studio did not connect to ${source} in ${opt.timeout} s: ${JSON.stringify(r.problems)}`);
    await sleep(100);
  }
  if (opt.file) {
    // From the file's start: Studio opens a file paused 99 ms after it.
    // Seek there before the panels subscribe (Studio then loads their
    // topics' blocks, which the Plot draws, from the start on), wait
    // until the player is there (its clock at the start time), and play
    // once they have subscribed.
    const seeks = (await report()).seeks;
    await page.evaluate(() => window.__probe.seekStart());
    for (;;) {
      r = await report();
      if (r.seeks > seeks && r.currentTime !== null && r.currentTime === r.startTime) break;
      if (Date.now() > deadline) throw new Error(`Studio did not seek to the file's start in ${opt.timeout} s`);
      await sleep(100);
    }
  }
  const connectedAt = Date.now();
  log(`connected to ${source}; the panels come in ${opt.delay} s`);
  await sleep(Number(opt.delay) * 1000);
  await page.evaluate(() => window.__probe.show('panels'));
  const shownAt = Date.now();
  // The panels' code loads as they appear: wait until they have
  // subscribed to each expected topic (which, for a topic not yet
  // advertised, Studio subscribes to as it comes).
  for (;;) {
    r = await report();
    if ([...expect.keys()].every((topic) => r.subscribers.some((s) => s.topics.includes(topic)))) break;
    if (Date.now() > deadline) {
      log(`the panels did not subscribe to every topic of ${[...expect.keys()]} in ${opt.timeout} s`);
      break;
    }
    await sleep(100);
  }
  log('panels subscribed');
  if (opt.file) {
    await page.evaluate(() => window.__probe.play());
    log('playing');
  }

  const topicOfPath = (p) => p.split('.')[0];
  const done = (r) => {
    for (const [topic, n] of expect) {
      if (!r.subscribers.some((s) => s.topics.includes(topic) && (s.sinceSeek[topic] ?? 0) >= n)) return false;
    }
    for (const p of r.plots) {
      const n = expect.get(topicOfPath(p.paths[0] ?? ''));
      if (n !== undefined && !p.datasets.some((d) => d.points.length >= n)) return false;
    }
    if (!expect.has('/tf')) return true;
    return r.threeDees.length > 0 && r.threeDees.every((t) => t.renderFrameId !== null && t.renderFrameId === t.followFrameId);
  };
  let said = '';
  for (;;) {
    r = await report();
    // Progress, when it changed: the first Plot's points and last value.
    const pts = r.plots[0]?.datasets[0]?.points ?? [];
    const now = `plot ${pts.length} ${pts.length > 0 ? pts[pts.length - 1].y : 'none'}`;
    if (now !== said) log((said = now));
    if (opt.hold ? stdinEnded : done(r)) break;
    if (Date.now() > deadline) {
      result.timedOut = true;
      log('timed out waiting for the panels');
      break;
    }
    await sleep(200);
  }
  if (!result.timedOut) await sleep(2000);
  result.waited = { connectToShowMs: shownAt - connectedAt, showToDoneMs: Date.now() - shownAt };

  // Each panel's text as shown, and with --out a screenshot of the page
  // and of each panel.
  if (opt.out) {
    fs.mkdirSync(opt.out, { recursive: true });
    await page.screenshot({ path: path.join(opt.out, 'studio.png'), captureBeyondViewport: false });
  }
  result.panels = [];
  for (const tile of await page.$$('.mosaic-window')) {
    // Studio marks each panel with its id (as in the layout).
    const { panel, text } = await tile.evaluate((el) => ({
      panel: el.querySelector('[data-testid^="panel-mouseenter-container "]')?.dataset.testid.split(' ')[1] ?? null,
      text: el.innerText,
    }));
    let file = null;
    if (opt.out) {
      file = path.join(opt.out, `${(panel ?? 'panel').replace(/[^A-Za-z0-9]+/g, '-')}.png`);
      // A clip of the page as it is (an element screenshot resizes the
      // page, and the Plot's chart redraws blank in the meantime).
      await page.screenshot({ path: file, clip: await tile.boundingBox(), captureBeyondViewport: false });
    }
    result.panels.push({ panel, text: text.slice(0, 4000), screenshot: file });
  }
  Object.assign(result, await report());
} catch (e) {
  result.error = String(e?.stack ?? e);
} finally {
  result.console = consoleLines;
  await browser.close().catch(() => {});
  server.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
const json = JSON.stringify(result, null, 1) + '\n';
if (opt.out) fs.writeFileSync(path.join(opt.out, 'report.json'), json);
process.stdout.write(json);
process.exit(result.error ? 1 : 0);
