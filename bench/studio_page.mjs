// terrane studio's page in headless Chromium (software WebGL2: SwiftShader): first frame time and
// frames per second at lod_error_pixels 2. A floor for a desktop GPU, not its speed.
//   node --experimental-websocket bench/studio_page.mjs CHROMIUM URL [RUNS] [WIDTH] [HEIGHT] [SECONDS] [STROKES]
// With STROKES > 0, each run then drags that many raise strokes (press, three moves, release) at
// the canvas's centre and gives each request's round trip as the page sees it (sent, answered,
// its chunks in the textures: studio.stats.strokeMs), and no frame rate; SECONDS 0: no frame rate.
// URL is what `terrane studio RECIPE --port 0 -q` prints; each run starts a fresh Chromium. In
// one reused headless Chromium (Debian's 156), a Page.navigate to the studio after one to
// about:blank from a studio page starts (Page.frameStartedNavigating) and never goes on: no
// request (not even in Chromium's NetLog, beyond the predictor's preconnect), the call never
// answered, whatever the wait after about:blank (0.5 or 5 s), the transition type or the URL;
// a second Page.navigate then goes through at once, and navigating from one studio page
// straight to the next needs none (bench/RESULTS.md). Nothing waits without a limit: a DevTools
// call unanswered in 120 s, or a page not ready in 180 s, ends the bench with exit 1, naming
// what it waited for and the page's requests still in flight.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Chromium's background services and the back-forward cache off (a page left for about:blank
// would stay alive in it, with its connections).
const QUIET_FLAGS = ['--disable-features=BackForwardCache,OptGuideOnDeviceModel,OptimizationHints,OptimizationGuideModelDownloading,Translate,MediaRouter',
  '--disable-background-networking', '--disable-component-update', '--disable-default-apps', '--disable-sync',
  '--disable-extensions', '--no-first-run', '--no-default-browser-check'];
const [chromium, url, runs = '3', width = '1920', height = '1080', seconds = '5', strokes = '0'] = process.argv.slice(2);
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
function summary(results) {
  console.log(JSON.stringify({
    first_frame_ms: { median: median(results.map((r) => r.first_frame_ms)), best: Math.min(...results.map((r) => r.first_frame_ms)) },
    frame_ms: results[0].fps ? { median: median(results.map((r) => r.fps.median_ms)), best: Math.min(...results.map((r) => r.fps.best_ms)) } : null,
    stroke_ms: results[0].stroke ? { median: median(results.map((r) => r.stroke.median_ms)), best: Math.min(...results.map((r) => r.stroke.best_ms)) } : null,
  }));
}
if (Number(runs) > 1) {
  // Each run by this script with RUNS 1: its own Chromium.
  const results = [];
  for (let k = 0; k < Number(runs); k++) {
    let out = '';
    try {
      out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), chromium, url, '1', width, height, seconds, strokes],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    } catch (error) {
      console.error(`studio_page: run ${k + 1} failed (exit ${error.status})`);
      process.exit(1);
    }
    const line = out.split('\n')[0];
    console.log(line);
    results.push(JSON.parse(line));
  }
  summary(results);
  process.exit(0);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const browser = spawn(chromium, ['--headless=new', '--no-sandbox', '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader', ...QUIET_FLAGS, `--window-size=${width},${height}`, '--remote-debugging-port=0',
  `--user-data-dir=${mkdtempSync(join(tmpdir(), 'studio-bench-'))}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
// The page's requests in flight (Network domain): what a wait that ran out was waiting behind.
const inFlight = new Map();
const pendingRequests = () => [...inFlight.values()].map((r) => `${r.method} ${r.url.replace(/token=[0-9a-f]+/, 'token=...')} (${((Date.now() - r.at) / 1000).toFixed(1)} s)`);
let chromiumLog = '';
function fail(message) {
  console.error('studio_page: ' + message);
  const list = pendingRequests();
  console.error(list.length ? 'requests in flight:\n  ' + list.join('\n  ') : 'no request in flight');
  if (chromiumLog.trim()) console.error("chromium's last messages:\n" + chromiumLog.split('\n').slice(-15).join('\n'));
  browser.kill('SIGKILL');
  process.exit(1);
}
browser.on('exit', (code, signal) => fail(`chromium exited (${signal || code})`));
const wsUrl = await new Promise((resolve) => {
  let text = '';
  const timer = setTimeout(() => fail('chromium printed no DevTools address in 60 s'), 60000);
  browser.stderr.on('data', (d) => { text += d; chromiumLog = (chromiumLog + d).slice(-8000); const m = text.match(/DevTools listening on (ws:\/\/\S+)/); if (m) { clearTimeout(timer); resolve(m[1]); } });
});
let pageWs = null;
for (let k = 0; k < 100 && !pageWs; k++) {
  const targets = await (await fetch(`http://127.0.0.1:${new URL(wsUrl).port}/json/list`)).json();
  pageWs = (targets.find((t) => t.type === 'page') || {}).webSocketDebuggerUrl;
  if (!pageWs) await sleep(100);
}
if (!pageWs) fail('chromium listed no page in 10 s');
const ws = new WebSocket(pageWs);
await new Promise((r) => (ws.onopen = r));
ws.onclose = () => fail('chromium closed the DevTools connection');
let nextId = 0;
const pending = new Map();
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); return; }
  if (m.method === 'Network.requestWillBeSent') inFlight.set(m.params.requestId, { url: m.params.request.url, method: m.params.request.method, at: Date.now() });
  else if (m.method === 'Network.loadingFinished' || m.method === 'Network.loadingFailed') inFlight.delete(m.params.requestId);
  else if (m.method === 'Page.javascriptDialogOpening') ws.send(JSON.stringify({ id: ++nextId, method: 'Page.handleJavaScriptDialog', params: { accept: true } }));
};
// Every call has a limit: an unanswered one ends the bench with what it was.
const send = (method, params = {}, limit = 120) => new Promise((resolve) => {
  const id = ++nextId;
  const what = params.expression ? ' ' + params.expression.slice(0, 100) : params.url ? ' ' + params.url.replace(/token=[0-9a-f]+/, 'token=...') : '';
  const timer = setTimeout(() => fail(`DevTools ${method}${what} got no answer in ${limit} s`), limit * 1000);
  pending.set(id, (m) => { clearTimeout(timer); if (m.error) fail(`${method}${what}: ${m.error.message}`); resolve(m); });
  ws.send(JSON.stringify({ id, method, params }));
});
const evaluate = async (x, limit) => {
  const r = (await send('Runtime.evaluate', { expression: x, returnByValue: true, awaitPromise: true }, limit)).result;
  if (r.exceptionDetails) fail('exception in ' + x.slice(0, 100) + ': ' + ((r.exceptionDetails.exception || {}).description || r.exceptionDetails.text));
  return r.result.value;
};
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
await send('Page.enable');
await send('Network.enable');
const results = [];
for (let run = 0; run < Number(runs); run++) {
  await send('Page.navigate', { url: 'about:blank' });
  await sleep(500);
  inFlight.clear();
  const loadBefore = load();
  await send('Page.navigate', { url });
  let title = '';
  const deadline = Date.now() + 180000;
  while (!title.startsWith('terrane studio:') && Date.now() < deadline) {
    title = String(await evaluate('document.title')).replace(/^● /, ''); // the unsaved marker
    if (!title.startsWith('terrane studio:')) await sleep(100);
  }
  if (!title.startsWith('terrane studio:')) fail(`run ${run + 1}: the page was not ready in 180 s (title '${title}', status '${await evaluate("(document.getElementById('status') || {}).textContent")}')`);
  if (title !== 'terrane studio: ready') fail(`run ${run + 1}: the page says '${title}': ${await evaluate("(document.getElementById('status') || {}).textContent")}`);
  const first = await evaluate('JSON.stringify({ title: document.title, first_frame_ms: studio.firstFrameMs, timings: studio.timings, cells: [terrain.cellsX, terrain.cellsZ], canvas: [document.getElementById("view").width, document.getElementById("view").height], levels: studio.stats.levelCounts, first_levels: studio.firstFrameLevels })');
  let fps = null, stroke = null;
  if (Number(strokes) > 0) {
    const exactBy = Date.now() + 180000;
    while (!(await evaluate('terrain.exact'))) {
      if (Date.now() > exactBy) fail('the exact heights were not in after 180 s');
      await sleep(100);
    }
    // A question in the page (a recovery file beside the recipe offers its work) holds the pointer.
    await sleep(500);
    const asking = await evaluate('studio.asking || null');
    if (asking) fail(`the page asks '${asking}': answer it or start from a recipe without a recovery file`);
    const r = await evaluate('(() => { const r = document.getElementById("view").getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()');
    for (let k = 0; k < Number(strokes); k++) {
      const sent = await evaluate('studio.stats.strokeMs.length');
      const x = r[0] + (k % 5) * 20 - 40, y = r[1] + Math.floor(k / 5) % 5 * 20 - 40;
      await send('Input.dispatchMouseEvent', { type: 'mousePressed', x, y, button: 'left', buttons: 1, clickCount: 1 });
      for (let m = 1; m <= 3; m++) await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x + 4 * m, y, button: 'left', buttons: 1 });
      await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: x + 12, y, button: 'left', buttons: 0, clickCount: 1 });
      const by = Date.now() + 60000;
      while ((await evaluate('studio.stats.strokeMs.length')) <= sent) {
        if (Date.now() > by) fail(`stroke ${k + 1}: no stroke request answered in 60 s (status '${await evaluate("document.getElementById('status').textContent")}')`);
        await sleep(20);
      }
      await sleep(200);
    }
    const ms = await evaluate('studio.stats.strokeMs');
    const sorted = ms.slice().sort((a, b) => a - b);
    stroke = { requests: ms.length, median_ms: sorted[sorted.length >> 1], best_ms: sorted[0], worst_ms: sorted[sorted.length - 1] };
  } else if (Number(seconds) > 0) {
    await evaluate('studio.setLodErrorPixels(2)');
    fps = await evaluate(`studio.measure(${Number(seconds)})`, 120 + 10 * Number(seconds));
  }
  results.push(Object.assign(JSON.parse(first), { fps, stroke, load: loadBefore + ' -> ' + load() }));
  console.log(JSON.stringify(results[results.length - 1]));
}
summary(results);
ws.onclose = null;
browser.removeAllListeners('exit');
ws.close();
browser.kill();
process.exit(0);
