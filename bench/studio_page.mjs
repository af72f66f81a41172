// terrane studio's page in headless Chromium (software WebGL2: SwiftShader): first frame time and
// frames per second at lod_error_pixels 2. A floor for a desktop GPU, not its speed.
//   node --experimental-websocket bench/studio_page.mjs CHROMIUM URL [RUNS] [WIDTH] [HEIGHT] [SECONDS]
// URL is what `terrane studio RECIPE --port 0 -q` prints; each run loads the page afresh.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [chromium, url, runs = '3', width = '1920', height = '1080', seconds = '5'] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const browser = spawn(chromium, ['--headless=new', '--no-sandbox', '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader', `--window-size=${width},${height}`, '--remote-debugging-port=0',
  `--user-data-dir=${mkdtempSync(join(tmpdir(), 'studio-bench-'))}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
const wsUrl = await new Promise((resolve) => {
  let text = '';
  browser.stderr.on('data', (d) => { text += d; const m = text.match(/DevTools listening on (ws:\/\/\S+)/); if (m) resolve(m[1]); });
});
let pageWs = null;
for (let k = 0; k < 100 && !pageWs; k++) {
  const targets = await (await fetch(`http://127.0.0.1:${new URL(wsUrl).port}/json/list`)).json();
  pageWs = (targets.find((t) => t.type === 'page') || {}).webSocketDebuggerUrl;
  if (!pageWs) await sleep(100);
}
const ws = new WebSocket(pageWs);
await new Promise((r) => (ws.onopen = r));
let nextId = 0;
const pending = new Map();
ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); } };
const send = (method, params = {}) => new Promise((r) => { const id = ++nextId; pending.set(id, r); ws.send(JSON.stringify({ id, method, params })); });
const evaluate = async (x) => (await send('Runtime.evaluate', { expression: x, returnByValue: true, awaitPromise: true })).result.result.value;
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
await send('Page.enable');
const results = [];
for (let run = 0; run < Number(runs); run++) {
  await send('Page.navigate', { url: 'about:blank' });
  await sleep(500);
  const loadBefore = load();
  await send('Page.navigate', { url });
  for (let k = 0; k < 1800; k++) {
    if (String(await evaluate('document.title')).startsWith('terrane studio:')) break;
    await sleep(100);
  }
  const first = await evaluate('JSON.stringify({ title: document.title, first_frame_ms: studio.firstFrameMs, timings: studio.timings, cells: [terrain.cellsX, terrain.cellsZ], canvas: [document.getElementById("view").width, document.getElementById("view").height], levels: studio.stats.levelCounts, first_levels: studio.firstFrameLevels })');
  await evaluate('studio.setLodErrorPixels(2)');
  const fps = await evaluate(`studio.measure(${Number(seconds)})`);
  results.push(Object.assign(JSON.parse(first), { fps, load: loadBefore + ' -> ' + load() }));
  console.log(JSON.stringify(results[results.length - 1]));
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
console.log(JSON.stringify({
  first_frame_ms: { median: median(results.map((r) => r.first_frame_ms)), best: Math.min(...results.map((r) => r.first_frame_ms)) },
  frame_ms: { median: median(results.map((r) => r.fps.median_ms)), best: Math.min(...results.map((r) => r.fps.best_ms)) },
}));
ws.close();
browser.kill();
process.exit(0);
