// terrane studio's page driven through the DevTools protocol: chunk LOD, a dragged brush stroke
// (sent while dragging, one history entry), undo, layer toggles, explain, node previews, paint and
// protect strokes, save; on a recipe with water and a palette: water surfaces and scatter proxies;
// no console errors. Run by test_studio_browser:
// Work safety on SAFE_URL (SAFE_PATH its recipe): an earlier run's recovery restored, the unsaved
// marker, Generate asking before it discards edits, two pages in sync, a change on disk noticed.
// The generator's editors on GRAPH_URL (GRAPH_PATH its recipe, with a graph): graph, forms, presets,
// export, readout.
// The water index at 2 and 4 bytes a sample (WATER2_URL: 300 bodies, WATER4_URL: 65,536): every
// body keeps its colours on the GPU and no wet sample reads dry.
// Image maps on MAPPED_URL (a mapped material set: the rock's five maps in its Material document,
// albedo magenta; the soil's albedo (magenta) and height by the older file names; the grass's
// albedo a link outside the project): the arrays are built from the images the project holds,
// drawn (normal, roughness and emissive each changing the frame), and the link is not read.
// The DevTools connections use tests/devtools_socket.mjs (Node 18 and later, no flag needed).
//   node test_studio_browser.mjs CHROMIUM URL PROFILE WATER_URL HEIGHTS_OUT LARGE_URL SAFE_URL SAFE_PATH GRAPH_URL GRAPH_PATH WATER2_URL WATER4_URL MAPPED_URL
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { DevToolsSocket } from './devtools_socket.mjs';

// Chromium's background services and the back-forward cache off (a page left for about:blank
// would stay alive in it, with its connections).
const QUIET_FLAGS = ['--disable-features=BackForwardCache,OptGuideOnDeviceModel,OptimizationHints,OptimizationGuideModelDownloading,Translate,MediaRouter',
  '--disable-background-networking', '--disable-component-update', '--disable-default-apps', '--disable-sync',
  '--disable-extensions', '--no-first-run', '--no-default-browser-check'];
const [chromium, url, profile, waterUrl, heightsOut, largeUrl, safeUrl, safePath, graphUrl, graphPath, water2Url, water4Url, mappedUrl] = process.argv.slice(2);
if (typeof fetch === 'undefined') {
  console.error('this node has no fetch (needs Node 18 or later)');
  process.exit(77);
}
const browser = spawn(chromium, ['--headless=new', '--no-sandbox', '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader', ...QUIET_FLAGS, '--window-size=1280,720', '--remote-debugging-port=0',
  `--user-data-dir=${profile}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let failed = false;
function check(ok, what) {
  console.error((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) failed = true;
}
// Nothing waits without a limit. Each DevTools call gets CALL_LIMIT seconds (an evaluation that
// awaits a page's promise included), and the whole run TOTAL_LIMIT: either ends the test with a
// failure naming what it waited for and the page's requests still in flight, never a hang.
const CALL_LIMIT = 120, TOTAL_LIMIT = 1200;
const inFlight = new Map();
const requestsInFlight = () => {
  const list = [...inFlight.values()].map((r) => `${r.method} ${r.url.replace(/token=[0-9a-f]+/, 'token=...')} (${((Date.now() - r.at) / 1000).toFixed(1)} s)`);
  return list.length ? '; requests in flight: ' + list.join(', ') : '; no request in flight';
};
const describeCall = (method, params) => method + (params.expression ? ' ' + params.expression.slice(0, 100).replace(/\s+/g, ' ') : params.url ? ' ' + params.url.replace(/token=[0-9a-f]+/, 'token=...') : '');
setTimeout(() => {
  check(false, `the browser test ran past ${TOTAL_LIMIT} s` + requestsInFlight());
  browser.kill('SIGKILL');
  process.exit(1);
}, TOTAL_LIMIT * 1000);
browser.on('exit', (code, signal) => {
  if (browser.expectedExit) return;
  check(false, `chromium exited during the test (${signal || code})` + requestsInFlight());
  process.exit(1);
});

try {
  const browserWs = await new Promise((resolve, reject) => {
    let text = '';
    browser.stderr.on('data', (d) => {
      text += d;
      const m = text.match(/DevTools listening on (ws:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    setTimeout(() => reject(new Error('chromium printed no DevTools address')), 60000);
  });
  const debugPort = new URL(browserWs).port;
  let pageWs = null;
  for (let k = 0; k < 100 && !pageWs; k++) {
    const targets = await (await fetch(`http://127.0.0.1:${debugPort}/json/list`)).json();
    pageWs = (targets.find((t) => t.type === 'page') || {}).webSocketDebuggerUrl;
    if (!pageWs) await sleep(100);
  }
  // A DevTools connection to one page: send, evaluate, waitFor (a second page gets its own).
  const connect = async (address, errorList) => {
    const sock = new DevToolsSocket(address);
    await new Promise((resolve, reject) => {
      sock.onopen = resolve;
      sock.onerror = () => reject(new Error('no DevTools connection to ' + address));
      setTimeout(() => reject(new Error('no DevTools connection to ' + address + ' in 60 s')), 60000);
    });
    let id = 0;
    const waiting = new Map();
    sock.onmessage = (event) => {
      const m = JSON.parse(event.data);
      if (m.id && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
      else if (m.method === 'Runtime.exceptionThrown') errorList.push(m.params.exceptionDetails.text);
    };
    const call = (method, params = {}) => new Promise((resolve, reject) => {
      const n = ++id;
      const timer = setTimeout(() => { waiting.delete(n); reject(new Error(`DevTools ${describeCall(method, params)} got no answer in ${CALL_LIMIT} s (second page)` + requestsInFlight())); }, CALL_LIMIT * 1000);
      waiting.set(n, (m) => { clearTimeout(timer); m.error ? reject(new Error(method + ': ' + m.error.message)) : resolve(m.result); });
      sock.send(JSON.stringify({ id: n, method, params }));
    });
    const ev = async (expression) => (await call('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })).result.value;
    const until = async (expression, what) => {
      for (let k = 0; k < 900; k++) { if (await ev(expression)) return true; await sleep(100); }
      check(false, 'waited 90 s for ' + what);
      return false;
    };
    return { sock, send: call, evaluate: ev, waitFor: until };
  };
  if (!pageWs) throw new Error('chromium listed no page in 10 s');
  const ws = new DevToolsSocket(pageWs);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error('no DevTools connection to the page'));
    setTimeout(() => reject(new Error('no DevTools connection to the page in 60 s')), 60000);
  });
  let nextId = 0;
  const pending = new Map(), errors = [], dialogs = [], requested = [];
  ws.onmessage = (event) => {
    const m = JSON.parse(event.data);
    if (m.id && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    } else if (m.method === 'Page.javascriptDialogOpening') {
      // Leaving a page with unsaved edits asks first (beforeunload): the test leaves.
      dialogs.push(m.params.type);
      ws.send(JSON.stringify({ id: ++nextId, method: 'Page.handleJavaScriptDialog', params: { accept: true } }));
    } else if (m.method === 'Runtime.consoleAPICalled' && m.params.type === 'error') {
      errors.push(m.params.args.map((a) => a.value || a.description).join(' '));
    } else if (m.method === 'Runtime.exceptionThrown') {
      errors.push(m.params.exceptionDetails.text);
    } else if (m.method === 'Network.requestWillBeSent') {
      inFlight.set(m.params.requestId, { url: m.params.request.url, method: m.params.request.method, at: Date.now() });
      requested.push(m.params.request.url);
    } else if (m.method === 'Network.loadingFinished' || m.method === 'Network.loadingFailed') {
      inFlight.delete(m.params.requestId);
    }
  };
  const send = (method, params = {}) => new Promise((resolve, reject) => {
    const id = ++nextId;
    const timer = setTimeout(() => { pending.delete(id); reject(new Error(`DevTools ${describeCall(method, params)} got no answer in ${CALL_LIMIT} s` + requestsInFlight())); }, CALL_LIMIT * 1000);
    pending.set(id, (m) => { clearTimeout(timer); m.error ? reject(new Error(method + ': ' + m.error.message)) : resolve(m.result); });
    ws.send(JSON.stringify({ id, method, params }));
  });
  const evaluate = async (expression) => {
    const r = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) console.error('exception in ' + expression.slice(0, 80) + ': ' + ((r.exceptionDetails.exception || {}).description || r.exceptionDetails.text));
    return r.result.value;
  };
  const waitFor = async (expression, what) => {
    for (let k = 0; k < 900; k++) {
      if (await evaluate(expression)) return true;
      await sleep(100);
    }
    check(false, 'waited 90 s for ' + what);
    return false;
  };
  const open = async (address) => {
    await send('Page.navigate', { url: address });
    await waitFor("document.title.endsWith('terrane studio: ready')", 'the first frame');
  };
  const get = (path, as = 'text') => `(async () => (await fetch('api/${path}', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } })).${as}())()`;
  const status = "document.getElementById('status').textContent";
  const setTool = (tool) => evaluate(`(() => { const t = document.getElementById('tool'); t.value = '${tool}'; t.dispatchEvent(new Event('change')); })()`);
  await send('Runtime.enable');
  await send('Page.enable');
  await send('Network.enable');
  await open(url);
  // The server's heights summed in order, and the page's own copy summed the same way.
  const serverSum = `(async () => {
    const r = await fetch('api/heights', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } });
    let s = 0; for (const v of new Float32Array(await r.arrayBuffer())) s += v; return s; })()`;
  const pageSum = '(() => { let s = 0; for (const v of terrain.heights) s += v; return s; })()';
  // The texture the vertex shader samples, compared sample by sample with the server's field.
  const textureEqual = `(async () => {
    const r = await fetch('api/heights', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } });
    const a = new Float32Array(await r.arrayBuffer()), b = studio.textureHeights();
    if (!b) return 'no float readback';
    if (a.length !== b.length) return 'lengths ' + a.length + ' ' + b.length;
    for (let k = 0; k < a.length; k++) if (!Object.is(a[k], b[k])) return 'sample ' + k + ': ' + a[k] + ' ' + b[k];
    return 'equal'; })()`;
  // The first frame came from 16-bit heights; by "ready" the exact float32 ones replaced them.
  check(await evaluate('terrain.exact && studio.timings.exact >= studio.timings.heights'), 'the exact heights replaced the first frame\'s quantised ones');
  const quantised = await evaluate(`(async () => {
    const r = await fetch('api/heights?encoding=u16', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } });
    const f = await fetch('api/heights', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } });
    const q = new Uint16Array(await r.arrayBuffer()), h = new Float32Array(await f.arrayBuffer());
    const o = Number(r.headers.get('X-Terrane-Height-Offset')), s = Number(r.headers.get('X-Terrane-Height-Scale'));
    let worst = 0; for (let k = 0; k < h.length; k++) worst = Math.max(worst, Math.abs(o + s * q[k] - h[k]));
    return { bytes: q.length * 2, samples: h.length, worst, scale: s, encoding: r.headers.get('X-Terrane-Encoding') }; })()`);
  check(quantised.encoding === 'u16' && quantised.bytes === quantised.samples * 2 && quantised.worst <= quantised.scale / 2 + 1e-4, 'the quantised heights: 2 bytes a sample, within half a step: ' + JSON.stringify(quantised));
  const before = await evaluate(serverSum);
  check(before === await evaluate(pageSum), 'the page holds the server heights');
  const textureBefore = await evaluate(textureEqual);
  check(textureBefore === 'equal' || textureBefore === 'no float readback', 'the heights texture is the server field: ' + textureBefore);
  check(await evaluate('studio.firstFrameMs > 0 && studio.stats.chunksDrawn > 0'), 'first frame time and chunks drawn exposed');
  // The first frame came from the coarse samples, before the whole field: every chunk at the
  // coarsest level, and the page's frames refine once the field is in.
  const firstLoad = await evaluate('({ timings: studio.timings, first: studio.firstFrameMs, levels: studio.firstFrameLevels, coarse: terrain.coarse, strides: [terrain.heightStride, terrain.biomeStride] })');
  const L = firstLoad.levels ? firstLoad.levels.length : 0;
  check(firstLoad.timings.coarse > 0 && firstLoad.timings.coarse <= firstLoad.first && firstLoad.first <= firstLoad.timings.heightsIn
    && L > 1 && firstLoad.levels.slice(0, L - 1).every((c) => c === 0) && firstLoad.levels[L - 1] > 0
    && firstLoad.coarse === false && firstLoad.strides.join() === '1,1', 'the first frame from the coarse samples, all chunks at the coarsest level, then the whole field: ' + JSON.stringify(firstLoad));

  // LOD: each chunk's level is exposed; a larger error allowance never picks finer levels.
  const levels2 = await evaluate('studio.setLodErrorPixels(2)');
  const levels16 = await evaluate('studio.setLodErrorPixels(16)');
  const levelsTiny = await evaluate('studio.setLodErrorPixels(0.001)');
  await evaluate('studio.setLodErrorPixels(2)');
  check(levels2.length === 64 && levels2.every((l) => l >= -1 && l <= 5), 'one level per chunk (8 x 8 chunks of 32 cells): ' + levels2.join(''));
  check(levels16.every((l, k) => l >= levels2[k]) && levels16.some((l, k) => l > levels2[k]), '16 px picks coarser levels than 2 px');
  check(levelsTiny.every((l) => l <= 0), 'an allowance near 0 draws every visible chunk at full resolution');

  const rect = JSON.parse(await evaluate("JSON.stringify(document.getElementById('view').getBoundingClientRect())"));
  const x = rect.left + rect.width / 2, y = rect.top + rect.height / 2;
  const mouse = (type, dx, buttons, modifiers = 0) => send('Input.dispatchMouseEvent',
    { type, x: x + dx, y, button: 'left', buttons, modifiers, clickCount: type === 'mouseMoved' ? 0 : 1 });
  // A drag: slow enough that requests go out while it lasts.
  const dragStroke = async (to, pause) => {
    await evaluate(`${status} = ''`);
    await mouse('mouseMoved', 0, 0);
    await mouse('mousePressed', 0, 1);
    for (let dx = 10; dx <= to; dx += 10) { await mouse('mouseMoved', dx, 1); await sleep(pause); }
    await mouse('mouseReleased', to, 0);
  };
  await dragStroke(60, 250);
  await waitFor(`${status}.includes('changed') && !document.getElementById('undo').disabled`, 'the stroke reply');
  const raised = await evaluate(serverSum);
  check(raised > before, 'a raise drag raised the server heights');
  check(raised === await evaluate(pageSum), 'the page applied the changed chunks');
  check(await evaluate(textureEqual) === textureBefore, 'the heights texture follows the edit: ' + await evaluate(textureEqual));
  const sent = await evaluate('studio.stats');
  check(sent.extendSent >= 1 && sent.strokesSent === sent.extendSent + 1, 'the drag sent its growing stroke (' + sent.strokesSent + ' requests, ' + sent.extendSent + ' with extend=1)');
  const edited = JSON.parse(await evaluate(get('recipe')));
  check(Array.isArray(edited.edits) && edited.edits.length === 1 && edited.edits[0].points.length >= 4, 'the drag is one stroke with all its points');

  await evaluate("document.getElementById('undo').click()");
  await waitFor("document.getElementById('undo').disabled && !document.getElementById('redo').disabled", 'the undo reply');
  check(await evaluate(serverSum) === before, 'one undo removed the dragged stroke from the server heights');
  // As for redo below: the buttons follow the reply, the page's heights follow it a moment later.
  await waitFor(`(${pageSum}) === ${before}`, 'the page to apply the undo');
  check(await evaluate(pageSum) === before, 'undo restored the page heights');
  await evaluate("document.getElementById('redo').click()");
  await waitFor("!document.getElementById('undo').disabled && document.getElementById('redo').disabled", 'the redo reply');
  // The buttons follow the reply; the changed chunks reach the page's heights after it.
  await waitFor(`(${pageSum}) === ${raised}`, 'the page to apply the redone stroke');
  const redoServer = await evaluate(serverSum), redoPage = await evaluate(pageSum);
  check(redoServer === raised && redoPage === raised, 'redo brought the stroke back (server ' + redoServer + ', page ' + redoPage + ', raised ' + raised + ')');

  // Layers: switching sculpt off regenerates without the stroke, on brings it back.
  const layerBox = (name) => `[...document.querySelectorAll('#layers li')].find((li) => li.textContent.startsWith('${name}')).querySelector('input.enable')`;
  check(await evaluate(`!${layerBox('sculpt')}.disabled`), 'layers can be switched');
  await evaluate(`${layerBox('sculpt')}.click()`);
  await waitFor(`${status} === 'sculpt disabled'`, 'the layer switched off');
  check(await evaluate(serverSum) === before && await evaluate(pageSum) === before, 'sculpt off: the session and the page lose the stroke');
  check(await evaluate(`document.querySelector('#layers li.off') && ${layerBox('sculpt')}.checked === false`), 'the sculpt layer shows as off');
  await evaluate(`${layerBox('sculpt')}.click()`);
  await waitFor(`${status} === 'sculpt enabled'`, 'the layer switched on');
  check(await evaluate(serverSum) === raised && await evaluate(pageSum) === raised, 'sculpt on: the stroke is back');
  check(await evaluate(textureEqual) === textureBefore, 'the heights texture after the layer switches');

  // Explain at the cursor: Alt-click shows the point's biome.
  await mouse('mouseMoved', 0, 0);
  await mouse('mousePressed', 0, 1, 1);
  await mouse('mouseReleased', 0, 0, 1);
  await waitFor("document.getElementById('explain').textContent.startsWith('biome: g at')", 'the explanation');
  check(await evaluate("studio.lastExplain && studio.lastExplain.biome === 'g'"), 'explain names the biome');
  check(await evaluate('studio.stats.strokesSent') === sent.strokesSent, 'an Alt-click sends no stroke');

  // Graph nodes: listed with status; a click shows the node's preview picture.
  check(await evaluate("document.querySelectorAll('#nodes li.node').length") > 0, 'the graph nodes are listed');
  await evaluate("document.querySelector('#nodes li.node').click()");
  await waitFor("(() => { const i = document.querySelector('#preview img'); return i && i.complete && i.naturalWidth > 0; })() || document.getElementById('preview').textContent.includes('no preview')", 'the node preview');
  check(await evaluate("document.querySelector('#preview img') && document.querySelector('#preview img').naturalWidth") > 0, 'the first node has a preview picture');

  // The side panel: the five default layers (the raise tool's target is sculpt) and the biome.
  check(await evaluate("[...document.querySelectorAll('#layers li')].map((li) => li.querySelector('span').textContent).join(' ')") ===
    'generation biomes sculpt protection exclusions', 'the five default layers listed');
  check(await evaluate("document.querySelector('#layers input[type=radio]:checked').value") === 'sculpt', 'raise strokes target the sculpt layer');
  check(await evaluate("document.querySelector('#biomes input:checked').value") === 'g', 'the recipe biome listed and picked');
  // A biome-paint drag sends a region stroke to the biomes layer; heights stay.
  await setTool('region');
  check(await evaluate("document.querySelector('#layers input[type=radio]:checked').value") === 'biomes', 'paint strokes target the biomes layer');
  await dragStroke(60, 0);
  await waitFor(`${status}.includes('changed') && !document.getElementById('undo').disabled`, 'the paint reply');
  const recipe = await evaluate(get('recipe'));
  check(/"regions":\[\{"biome":"g","layer":"biomes","points":\[\[/.test(recipe), 'the paint drag made a region stroke: ' + recipe.slice(0, 300));
  check(await evaluate(serverSum) === raised, 'painting kept the heights');
  // A protect drag: a snapshot of the samples under the brush at their shown heights.
  await setTool('protect');
  await dragStroke(20, 0);
  await waitFor(`${status}.includes('changed')`, 'the protect reply');
  const protectedRecipe = await evaluate(get('recipe'));
  check(/\{"grid":\[\d+,\d+\],"layer":"protection","samples":\[\[\d+,\d+,/.test(protectedRecipe), 'the protect drag made a snapshot');
  check(await evaluate(serverSum) === raised, 'protecting kept the heights');
  // A raise drag away from the protected spot, then Save: the C side generates the saved
  // recipe and compares it with these heights bit for bit.
  await setTool('raise');
  await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x - 150, y: y + 60, buttons: 0 });
  await send('Input.dispatchMouseEvent', { type: 'mousePressed', x: x - 150, y: y + 60, button: 'left', buttons: 1, clickCount: 1 });
  await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x - 120, y: y + 60, buttons: 1 });
  await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: x - 120, y: y + 60, button: 'left', buttons: 0, clickCount: 1 });
  await waitFor(`${status}.includes('changed')`, 'the second raise');
  check(await evaluate(serverSum) > raised, 'the second raise changed the heights');
  await evaluate("document.getElementById('save').click()");
  await waitFor(`${status}.startsWith('saved ')`, 'the save');
  const session = await evaluate(`(async () => Array.from(new Uint8Array(await (await fetch('api/heights', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } })).arrayBuffer())))()`);
  if (heightsOut) writeFileSync(heightsOut, Buffer.from(session));

  // The mini-map: a click a quarter in from its top-left corner moves the orbit target there.
  const map = JSON.parse(await evaluate("JSON.stringify(document.getElementById('minimap').getBoundingClientRect())"));
  const mapClick = { x: map.left + map.width / 4, y: map.top + map.height / 4, button: 'left', clickCount: 1 };
  await send('Input.dispatchMouseEvent', Object.assign({ type: 'mousePressed', buttons: 1 }, mapClick));
  await send('Input.dispatchMouseEvent', Object.assign({ type: 'mouseReleased', buttons: 0 }, mapClick));
  const target = await evaluate('studio.camera.target');
  check(Math.abs(target[0] - 128) < 4 && Math.abs(target[2] - 128) < 4, 'a mini-map click moved the target to (128, 128): ' + target.map((v) => v.toFixed(1)));
  // Keys: F flies, W held moves the eye forward, F returns to orbit.
  const key = (type, k) => send('Input.dispatchKeyEvent', { type, key: k, code: 'Key' + k.toUpperCase(), text: type === 'keyDown' ? k : undefined, windowsVirtualKeyCode: k.toUpperCase().charCodeAt(0) });
  await key('keyDown', 'f');
  await key('keyUp', 'f');
  check(await evaluate("studio.camera.mode === 'fly' && document.getElementById('camera').value === 'fly'"), 'F switches to the fly camera');
  const eye = await evaluate('studio.camera.pos.slice()');
  await key('keyDown', 'w');
  await sleep(400);
  // On a loaded machine the page may draw no frame in those 400 ms: hold W until it moves.
  // (Forward by more than 1: a move of more than 1 in all may be less along the view.)
  await waitFor(`(() => { const p = studio.camera.pos, e = ${JSON.stringify(eye)};
    const d = [p[0] - e[0], p[1] - e[1], p[2] - e[2]], c = Math.cos(camera.pitch);
    return d[0] * -c * Math.sin(camera.yaw) + d[1] * -Math.sin(camera.pitch) + d[2] * -c * Math.cos(camera.yaw) > 1; })()`, 'the fly camera to move forward');
  await key('keyUp', 'w');
  // "+ 0" turns a -0 (no movement) into 0, which DevTools returns by value.
  const moved = await evaluate(`(() => { const p = studio.camera.pos, e = ${JSON.stringify(eye)};
    const d = [p[0] - e[0], p[1] - e[1], p[2] - e[2]], c = Math.cos(camera.pitch);
    return d[0] * -c * Math.sin(camera.yaw) + d[1] * -Math.sin(camera.pitch) + d[2] * -c * Math.cos(camera.yaw) + 0; })()`);
  check(moved > 1, 'W moved the fly camera forward by ' + moved.toFixed(1));
  await key('keyDown', 'f');
  await key('keyUp', 'f');
  check(await evaluate("studio.camera.mode === 'orbit'"), 'F again returns to orbit');
  await key('keyDown', 'i');
  await key('keyUp', 'i');
  check(await evaluate("studio.show.instances === false && !document.getElementById('show-instances').checked"), 'I hides the scatter proxies');
  // Preview / Final: the session regenerates at that quality and keeps its strokes.
  const edited2 = await evaluate(serverSum);
  await evaluate("(() => { const q = document.getElementById('quality'); q.value = 'preview'; q.dispatchEvent(new Event('change')); })()");
  await waitFor(`${status} === 'generated (preview)'`, 'the preview generation');
  check(JSON.parse(await evaluate(get('nodes'))).quality === 'preview', 'the server generates at preview quality');
  await evaluate("(() => { const q = document.getElementById('quality'); q.value = 'final'; q.dispatchEvent(new Event('change')); })()");
  await waitFor(`${status} === 'generated (final)'`, 'the final generation');
  check(JSON.parse(await evaluate(get('nodes'))).quality === 'final' && await evaluate("document.getElementById('quality').value") === 'final', 'back at final quality');
  check(await evaluate(serverSum) === edited2 && await evaluate(pageSum) === edited2, 'final again: the same heights, strokes kept');
  // A recipe without a graph: the Graph tab offers the graph it implies, which generates the
  // same terrain; undo takes it away again.
  await evaluate("studio.showTab('graph')");
  await waitFor("!document.getElementById('graph-start').hidden", 'the start-a-graph offer');
  await evaluate("document.getElementById('graph-start').click()");
  await waitFor(`${status} === 'started a graph (landform, biome rules, output)'`, 'the started graph');
  const started = JSON.parse(await evaluate(get('recipe')));
  check(started.graph && started.graph.nodes.map((n) => n.type).join(' ') === 'landform biome_rules terrain_output' && await evaluate("document.querySelectorAll('#graph-world .gnode').length") === 3, 'Start a graph made landform, biome rules and output');
  check(await evaluate(serverSum) === edited2, 'the implied graph generates the same terrain');
  await evaluate("document.getElementById('undo').click()");
  await waitFor(`${status} === 'undo: regenerated'`, 'the undo of the started graph');
  check(JSON.parse(await evaluate(get('recipe'))).graph === undefined && await evaluate(serverSum) === edited2, 'undo removed the graph');
  await evaluate("studio.showTab('terrain')");
  check(errors.length === 0, 'no console errors' + (errors.length ? ': ' + errors.join('; ') : ''));
  // A recipe without water: its (empty) list of bodies is asked for, never the grid of NaNs.
  check(requested.some((u) => u.includes('/api/water/bodies')) && !requested.some((u) => u.includes('/api/water/grid') || u.includes('/api/water/index')),
    'no water grid fetched for a recipe without water');

  // A recipe with water bodies and a palette: water surfaces and scatter proxies are drawn.
  if (waterUrl) {
    await open(waterUrl);
    const waterPixels = await evaluate("studio.pixelsChangedBy('water')");
    check(waterPixels.bluish > 2000, 'water surfaces drawn: ' + JSON.stringify(waterPixels));
    check(await evaluate('studio.stats.waterChunksDrawn') > 0, 'chunks with water drawn by the water pass');
    // A reload of the water (as after an undo that changed it) keeps the old water drawn until
    // the new one is ready: sampled every millisecond while it runs, it is never absent.
    const gaps = await evaluate('(async () => { let gaps = 0, samples = 0; const t = setInterval(() => { samples++; if (!water.has) gaps++; }, 1); await loadWater(); clearInterval(t); return [gaps, samples]; })()');
    check(gaps[0] === 0 && await evaluate('water.has'), 'the water stays drawn while it reloads (' + gaps[1] + ' samples)');
    const count = await evaluate(`(async () => (await (await fetch('api/instances', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } })).json()).instances.length)()`);
    check(count > 0 && await evaluate('studio.stats.instancesDrawn') === count, 'every instance drawn as a proxy (' + count + ')');
    const proxyPixels = await evaluate("studio.pixelsChangedBy('instances')");
    check(proxyPixels.changed > 2000, 'scatter proxies change the picture: ' + JSON.stringify(proxyPixels));
    await evaluate("(() => { const c = document.getElementById('show-instances'); c.click(); })()");
    await evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    check(await evaluate('studio.stats.instancesDrawn') === 0, 'the toggle hides the proxies');
    // A stroke on the lakeside: the proxies follow the new surface a moment later.
    const loads = await evaluate('studio.stats.instanceLoads');
    await dragStroke(30, 0);
    await waitFor(`${status}.includes('changed')`, 'the lakeside stroke');
    await waitFor(`studio.stats.instanceLoads === ${loads + 1}`, 'the proxies refetched after the stroke');
    check(await evaluate(`studio.stats.instanceLoads === ${loads + 1} && studio.stats.instancesDrawn === 0`), 'one refetch of the instances after the stroke (hidden proxies stay hidden)');
    const levels = await evaluate('Array.from(studio.levels)');
    check(new Set(levels.filter((l) => l >= 0)).size > 1, 'chunk levels vary across the terrain: ' + levels.join(''));
    // A rule's mask over the terrain, from the Recipe tab.
    await evaluate("studio.showTab('recipe')");
    await waitFor("document.querySelector('#form-rules input.rule-mask')", 'the rules form');
    await evaluate("document.querySelector('#form-rules input.rule-mask').click()");
    await waitFor('studio.ruleMask', 'the rule mask');
    const mask = await evaluate('studio.ruleMask');
    check(mask.matches > 0 && mask.wins <= mask.matches && mask.samples === 257 * 257, 'the first rule\'s mask: ' + JSON.stringify(mask));
    await evaluate("studio.showTab('terrain')");
    const maskPixels = await evaluate("studio.pixelsChangedBy('mask')");
    check(maskPixels.changed > 1000, 'the rule mask tints the terrain: ' + JSON.stringify(maskPixels));
    // A rule's value in its form: one edit of the recipe's rules.
    await evaluate("studio.showTab('recipe')");
    await evaluate("(() => { const i = document.querySelector('#form-rules [data-rule=shores] [data-param=water_distance]'); i.value = '[0, 40]'; i.dispatchEvent(new Event('change')); })()");
    // The server's recipe, not the status line: a later message (a regeneration's) can replace
    // the edit's line before a poll sees it.
    await waitFor(`(async () => JSON.stringify(JSON.parse(await ${get('recipe')}).rules[1].water_distance) === '[0,40]')()`, 'the rule change');
    check(JSON.stringify(JSON.parse(await evaluate(get('recipe'))).rules[1].water_distance) === '[0,40]', 'the rules form changed the shores rule');
    await evaluate("studio.showTab('terrain')");
    check(errors.length === 0, 'no console errors with water' + (errors.length ? ': ' + errors.join('; ') : ''));
  }
  // A larger terrain (1025 x 1025, 32 x 32 chunks): drawn at full resolution (no cap), levels
  // vary across the view, and chunks behind a close camera are culled.
  if (largeUrl) {
    const asked = dialogs.length;
    await open(largeUrl);
    if (waterUrl) check(dialogs.slice(asked).includes('beforeunload'), 'leaving the lakeside page with an unsaved stroke asked first');
    check(await evaluate(textureEqual) === textureBefore, 'the 1025 x 1025 heights texture is the server field');
    const levels = await evaluate('Array.from(studio.levels)');
    const kinds = new Set(levels.filter((l) => l >= 0));
    check(levels.length === 1024 && kinds.size >= 3, 'levels vary across 32 x 32 chunks: ' + [...kinds].sort().join(','));
    check(await evaluate('studio.setLodErrorPixels(0.0001).every((l) => l <= 0)'), 'near 0 px every visible chunk is drawn at level 0');
    await evaluate('studio.setLodErrorPixels(2)');
    await evaluate('(() => { studio.camera.dist = 200; draw(); })()');
    check(await evaluate('studio.stats.chunksCulled') > 500, 'a close camera culls the chunks out of view (' + await evaluate('studio.stats.chunksCulled') + ' of 1024)');
    check(errors.length === 0, 'no console errors on the larger terrain' + (errors.length ? ': ' + errors.join('; ') : ''));
  }
  // Work safety: never lose work.
  if (safeUrl) {
    await send('Page.navigate', { url: safeUrl });
    await waitFor("document.title.endsWith('terrane studio: ready')", 'the safe page');
    // An earlier run's recovery file: the page offers it at once; restoring brings its stroke.
    await waitFor("studio.asking && studio.asking.startsWith('Unsaved work from an earlier session')", 'the recovery offer');
    const beforeRestore = await evaluate(serverSum);
    await evaluate("document.querySelector('#ask button[data-choice=restore]').click()");
    await waitFor(`${status} === 'restored the unsaved work'`, 'the restore');
    check(JSON.parse(await evaluate(get('recipe'))).edits.length === 1, 'the recovered stroke is in the session');
    check(await evaluate(serverSum) < beforeRestore && await evaluate(serverSum) === await evaluate(pageSum), 'the page shows the restored (lowered) terrain');
    check(await evaluate("!document.getElementById('dirty').hidden && studio.state.dirty"), 'restored work shows as unsaved');
    // Closing the tab with unsaved edits asks first.
    check(await evaluate("(() => { const e = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(e); return e.defaultPrevented; })()"), 'closing with unsaved edits asks first');
    // Autosave: the recovery file beside the recipe holds the session; the recipe is untouched.
    await dragStroke(40, 0);
    await waitFor(`${status}.includes('changed')`, 'the stroke on the safe recipe');
    const recovery = safePath + '.recovery';
    // About a second after the change; a loaded machine may take longer: waited for (90 s).
    let autosaved = false;
    for (let k = 0; k < 900 && !autosaved; k++) {
      await sleep(100);
      autosaved = existsSync(recovery) && (readFileSync(recovery, 'utf8').match(/"raise"/g) || []).length === 1;
    }
    check(autosaved, 'the autosave wrote the new stroke beside the recipe');
    check(!/"edits"/.test(readFileSync(safePath, 'utf8')), 'the recipe itself is not written before Save');
    // Generate with unsaved edits asks; Cancel keeps them.
    await evaluate("document.getElementById('generate').click()");
    await waitFor("studio.asking && studio.asking.includes('discards your unsaved edits')", 'the generate question');
    check(await evaluate("document.getElementById('ask').open"), 'Generate with unsaved edits asks first');
    await evaluate("document.querySelector('#ask button[data-choice=cancel]').click()");
    await waitFor(`${status}.startsWith('generate cancelled')`, 'the cancelled generate');
    check(JSON.parse(await evaluate(get('recipe'))).edits.length === 2 && await evaluate('studio.state.dirty'), 'cancelled: both strokes kept, still unsaved');
    // A second page on the same session: strokes and undo in either show in both.
    const bErrors = [];
    const target = await (await fetch(`http://127.0.0.1:${debugPort}/json/new?${encodeURIComponent(safeUrl)}`, { method: 'PUT' })).json();
    const b = await connect(target.webSocketDebuggerUrl, bErrors);
    await b.send('Runtime.enable');
    await b.waitFor("document.title.endsWith('terrane studio: ready')", 'the second page');
    await b.waitFor('studio.asking === null || studio.asking === undefined', 'no question on the second page');
    await send('Page.bringToFront');
    check(await b.evaluate(pageSum) === await evaluate(serverSum), 'the second page shows the session with both strokes');
    await dragStroke(50, 0);
    await waitFor(`${status}.includes('changed')`, 'the stroke in page A');
    const afterA = await evaluate(serverSum);
    await b.waitFor(`studio.revision === ${await evaluate('studio.revision')} && (() => { let s = 0; for (const v of terrain.heights) s += v; return s; })() === ${afterA}`, 'page B following page A');
    check(await b.evaluate(pageSum) === afterA, 'page B shows page A\'s stroke');
    check(await b.evaluate("document.querySelector('#layers li:nth-child(3) .group').textContent.endsWith('3')"), 'page B\'s layer list counts the three strokes');
    await b.evaluate("document.getElementById('undo').click()");
    await waitFor(`(() => { let s = 0; for (const v of terrain.heights) s += v; return s; })() !== ${afterA}`, 'page A following page B\'s undo');
    check(await evaluate(pageSum) === await evaluate(serverSum) && await b.evaluate(pageSum) === await evaluate(serverSum), 'one undo in page B removed the stroke in both pages and the server');
    // The layer list follows the heights (the recipe is fetched after them): waited for.
    await waitFor("document.querySelector('#layers li:nth-child(3) .group').textContent.endsWith('2')", 'page A\'s layer list following the undo');
    check(await evaluate("document.querySelector('#layers li:nth-child(3) .group').textContent.endsWith('2')"), 'page A\'s layer list follows the undo');
    check(bErrors.length === 0, 'no errors in page B' + (bErrors.length ? ': ' + bErrors.join('; ') : ''));
    await fetch(`http://127.0.0.1:${debugPort}/json/close/${target.id}`);
    b.sock.close();
    // A change on disk: noticed within seconds; Save refuses to overwrite it unasked.
    const original = readFileSync(safePath, 'utf8');
    writeFileSync(safePath, original.replace('"seed": 3', '"seed": 8'));
    await waitFor("studio.asking && studio.asking.startsWith('The recipe file changed on disk')", 'the disk change question');
    await evaluate("document.querySelector('#ask button[data-choice=keep]').click()");
    await evaluate("document.getElementById('save').click()");
    await waitFor("studio.asking && studio.asking.includes('changed on disk since the studio loaded it')", 'the save conflict question');
    await evaluate("document.querySelector('#ask button[data-choice=cancel]').click()");
    await waitFor(`${status}.startsWith('not saved')`, 'the refused save');
    check(/"seed": 8/.test(readFileSync(safePath, 'utf8')), 'Save did not write the old seed over the disk\'s');
    // A broken edit on disk: the Graph check panel says where.
    writeFileSync(safePath, original.replace('"seed": 3,', '"seed": 3,,'));
    await waitFor("document.getElementById('diagnostics').textContent.includes('line 1, column')", 'the broken file in the Graph check panel');
    check(await evaluate(`${status}.includes('line 1, column')`), 'the status line says where the file is broken');
    // Fixed on disk: the page asks again; loading it regenerates from the file: clean, its seed.
    writeFileSync(safePath, original.replace('"seed": 3', '"seed": 8'));
    await waitFor("studio.asking && studio.asking.startsWith('The recipe file changed on disk')", 'the disk change question again');
    check(await evaluate("studio.asking.includes('Loading it discards your unsaved edits')"), 'the question says the unsaved edits would be lost');
    await evaluate("document.querySelector('#ask button[data-choice=load]').click()");
    await waitFor(`${status} === 'generated'`, 'the generate from disk');
    check(JSON.parse(await evaluate(get('recipe'))).seed === 8 && !await evaluate('studio.state.dirty') && await evaluate("document.getElementById('dirty').hidden"), 'Generate loaded the file from disk: seed 8, nothing unsaved');
    check(await evaluate(serverSum) === await evaluate(pageSum), 'the page shows the regenerated terrain');
    check(errors.length === 0, 'no console errors in the work-safety flows' + (errors.length ? ': ' + errors.join('; ') : ''));
  }
  // Editing the generator (GRAPH_URL, its recipe GRAPH_PATH with a graph): add nodes, connect
  // typed pins (a mismatch refused with a message), change a parameter (out of range refused),
  // the server's check at the node, the preview, undo, save (the file changes only in the
  // graph), forms, export, presets and the readout.
  if (graphUrl) {
    await open(graphUrl);
    const original = readFileSync(graphPath, 'utf8');
    const graphRecipe = async () => JSON.parse(await evaluate(get('recipe')));
    const nodeOf = (r, id) => r.graph.nodes.find((n) => n.id === id);
    await evaluate("studio.showTab('graph')");
    await waitFor("document.querySelectorAll('#graph-world .gnode').length === 3 && document.querySelectorAll('#graph-world .edge').length === 2", 'the graph drawn: 3 nodes, 2 links');
    check(await evaluate("document.querySelectorAll('#graph-world circle.pin').length") >= 5, 'the nodes show their typed pins');
    const addNode = async (type) => {
      const edits = await evaluate('studio.stats.edits || 0');
      await evaluate(`(() => { const s = document.getElementById('add-type'); s.value = '${type}'; document.getElementById('add-node').click(); })()`);
      await waitFor(`(studio.stats.edits || 0) === ${edits + 1} && document.querySelector('#graph-world .gnode[data-node="${type}"]')`, 'the new ' + type + ' node');
    };
    const heightsBefore = await evaluate(serverSum);
    await addNode('flat_terrain');
    check(!!nodeOf(await graphRecipe(), 'flat_terrain'), 'Add node put a flat_terrain node in the session\'s graph');
    check(await evaluate('studio.state.dirty && studio.state.can_undo'), 'adding a node is an unsaved, undoable step');
    await addNode('height_blend');
    const pin = (node, side, name) => evaluate(`document.querySelector('#graph-world .gnode[data-node="${node}"] circle.pin.${side}[data-pin="${name}"]').dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }))`);
    // A heightfield into a mask input: refused in the page, with the kinds named.
    const editsBefore = await evaluate('studio.stats.edits');
    await pin('flat_terrain', 'out', 'field');
    await pin('height_blend', 'in', 'mask');
    check(await evaluate(`${status}.includes("takes a mask") && ${status}.includes("gives a heightfield")`), 'a type mismatch is refused with a message: ' + await evaluate(status));
    check(await evaluate('studio.stats.edits') === editsBefore && !nodeOf(await graphRecipe(), 'height_blend').inputs, 'the refused link reached nothing');
    const link = async (from, out, to, inp) => {
      await pin(from, 'out', out);
      await pin(to, 'in', inp);
      await waitFor(`${status} === 'connected ${from}.${out} to ${to}.${inp}'`, `the link ${from} -> ${to}`);
    };
    await link('ridges', 'field', 'height_blend', 'a');
    await link('flat_terrain', 'field', 'height_blend', 'b');
    await link('height_blend', 'field', 'biomes', 'field');
    const wired = await graphRecipe();
    check(nodeOf(wired, 'biomes').inputs.field.node === 'height_blend' && nodeOf(wired, 'height_blend').inputs.b.node === 'flat_terrain', 'the links are in the session\'s graph');
    const blended = await evaluate(serverSum);
    check(blended !== heightsBefore && blended === await evaluate(pageSum), 'the new chain changed the terrain, and the page shows it');
    // A parameter in the node's form: its range enforced, the value applied, the preview shown.
    await evaluate("(() => { const g = document.querySelector('#graph-world .gnode[data-node=\"flat_terrain\"]'); g.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, clientX: 5, clientY: 5 })); window.dispatchEvent(new PointerEvent('pointerup', { clientX: 5, clientY: 5 })); })()");
    await waitFor("document.querySelector('#node-params [data-param=height]')", 'the flat_terrain form');
    const setParam = (name, value) => evaluate(`(() => { const i = document.querySelector('#node-params [data-param=${name}]'); i.value = '${value}'; i.dispatchEvent(new Event('change')); })()`);
    await setParam('height', '40');
    await waitFor(`${status} === 'flat_terrain.height = 40'`, 'the parameter change');
    check(nodeOf(await graphRecipe(), 'flat_terrain').params.height === 40, 'the parameter is in the session\'s recipe');
    const raisedFloor = await evaluate(serverSum);
    check(raisedFloor > blended, 'a higher flat floor raised the terrain');
    await waitFor("(() => { const i = document.querySelector('#node-preview img'); return i && i.complete && i.naturalWidth > 0; })()", 'the node preview');
    check(await evaluate("document.querySelector('#node-preview img').naturalWidth") > 0, 'the selected node shows its preview picture');
    await evaluate("(() => { const g = document.querySelector('#graph-world .gnode[data-node=\"ridges\"]'); g.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, clientX: 5, clientY: 5 })); window.dispatchEvent(new PointerEvent('pointerup', { clientX: 5, clientY: 5 })); })()");
    await waitFor("document.querySelector('#node-params [data-param=roughness]')", 'the ridges form');
    const editsNow = await evaluate('studio.stats.edits');
    await setParam('roughness', '3');
    const fieldMessage = 'roughness: expected a number from 0 to 1, found 3';
    check(await evaluate(`${status} === 'not applied: ${fieldMessage}' && document.querySelector('#node-params [data-param=roughness]').parentElement.classList.contains('invalid')`), 'an out-of-range parameter is refused at the field: ' + await evaluate(status));
    check(await evaluate('studio.stats.edits') === editsNow, 'the refused value was not sent');
    // The server checks too: a bad value sent anyway comes back as a finding at the node, in
    // the same words as the field's (the graph check's).
    await evaluate(`${status} = ''`);
    await evaluate("studio.editRecipe((r) => { r.graph.nodes.find((n) => n.id === 'ridges').params.roughness = 3; }, 'forced')");
    await waitFor(`${status}.startsWith('not applied:')`, 'the server\'s refusal');
    check(await evaluate("document.querySelector('#graph-world .gnode[data-node=\"ridges\"]').classList.contains('error')") && await evaluate(`${status}.includes('roughness')`), 'the server\'s graph check marks the node: ' + await evaluate(status));
    check(await evaluate(`${status}.includes('${fieldMessage}')`), 'the field and the graph check say the same: ' + await evaluate(status));
    check(nodeOf(await graphRecipe(), 'ridges').params.roughness !== 3, 'the refused edit changed nothing on the server');
    // Undo and redo walk the graph edits.
    await evaluate("document.getElementById('undo').click()");
    await waitFor(`${status} === 'undo: regenerated'`, 'the undo of the parameter');
    check(nodeOf(await graphRecipe(), 'flat_terrain').params === undefined && await evaluate(serverSum) === blended && await evaluate(pageSum) === blended, 'undo took the parameter back (heights too)');
    await evaluate("document.getElementById('redo').click()");
    await waitFor(`${status} === 'redo: regenerated'`, 'the redo of the parameter');
    check(nodeOf(await graphRecipe(), 'flat_terrain').params.height === 40 && await evaluate(serverSum) === raisedFloor, 'redo brought it back');
    // Disconnect (a click on a link): a required input in use is refused at its node; an
    // optional one (a mask) goes, and undo brings it back.
    const clickLink = (to, pinName) => evaluate(`document.querySelector('#graph-world .edge[data-to="${to}"][data-pin="${pinName}"]').dispatchEvent(new MouseEvent('click', { bubbles: true }))`);
    await clickLink('height_blend', 'b');
    await waitFor(`${status}.startsWith('not applied:')`, 'the refused disconnect');
    check(await evaluate(`${status}.includes("required input 'b'")`) && nodeOf(await graphRecipe(), 'height_blend').inputs.b, 'disconnecting a required input in use is refused: ' + await evaluate(status));
    await addNode('elevation_mask');
    await link('ridges', 'field', 'elevation_mask', 'field');
    await link('elevation_mask', 'mask', 'height_blend', 'mask');
    check(nodeOf(await graphRecipe(), 'height_blend').inputs.mask.node === 'elevation_mask', 'a mask output connects to a mask input');
    await clickLink('height_blend', 'mask');
    await waitFor(`${status} === 'disconnected height_blend.mask'`, 'the disconnect');
    check(!nodeOf(await graphRecipe(), 'height_blend').inputs.mask, 'a click on a link disconnected it');
    await evaluate("document.getElementById('undo').click()");
    await waitFor(`${status} === 'undo: regenerated'`, 'the undo of the disconnect');
    check(nodeOf(await graphRecipe(), 'height_blend').inputs.mask.node === 'elevation_mask', 'undo reconnected it');
    // Remove a node: its links go with it.
    await evaluate("(() => { const g = document.querySelector('#graph-world .gnode[data-node=\"elevation_mask\"]'); g.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, clientX: 5, clientY: 5 })); window.dispatchEvent(new PointerEvent('pointerup', { clientX: 5, clientY: 5 })); })()");
    await waitFor("document.getElementById('remove-node')", 'the elevation_mask inspector');
    await evaluate("document.getElementById('remove-node').click()");
    await waitFor(`${status} === 'removed elevation_mask'`, 'the removal');
    const removed = await graphRecipe();
    check(!nodeOf(removed, 'elevation_mask') && !nodeOf(removed, 'height_blend').inputs.mask, 'Remove node took the node and its links out');
    // Copy and paste a node (its parameters and links come along), then Delete removes it.
    await evaluate("(() => { const g = document.querySelector('#graph-world .gnode[data-node=\"flat_terrain\"]'); g.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, clientX: 5, clientY: 5 })); window.dispatchEvent(new PointerEvent('pointerup', { clientX: 5, clientY: 5 })); })()");
    await waitFor("studio.editor.selected === 'flat_terrain'", 'flat_terrain selected');
    const ctrlKey = (k) => send('Input.dispatchKeyEvent', { type: 'keyDown', key: k, code: 'Key' + k.toUpperCase(), modifiers: 2, windowsVirtualKeyCode: k.toUpperCase().charCodeAt(0) });
    await ctrlKey('c');
    await ctrlKey('v');
    await waitFor(`${status} === 'pasted flat_terrain_copy'`, 'the paste');
    const pasted = nodeOf(await graphRecipe(), 'flat_terrain_copy');
    check(pasted && pasted.params.height === 40 && pasted.type === 'flat_terrain', 'Ctrl+C, Ctrl+V pasted a copy with its parameters');
    await send('Input.dispatchKeyEvent', { type: 'keyDown', key: 'Delete', code: 'Delete', windowsVirtualKeyCode: 46 });
    await waitFor(`${status} === 'removed flat_terrain_copy'`, 'the Delete key');
    check(!nodeOf(await graphRecipe(), 'flat_terrain_copy'), 'Delete removed the selected node');
    // Move a node: dragged on the canvas, its position is one edit, in the session's graph.
    const posBefore = nodeOf(await graphRecipe(), 'flat_terrain').position;
    const movesBefore = await evaluate('studio.stats.edits');
    await evaluate("(() => { const g = document.querySelector('#graph-world .gnode[data-node=\"flat_terrain\"]'); g.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, clientX: 5, clientY: 5 })); for (const [x, y] of [[25, 15], [45, 35], [65, 45]]) window.dispatchEvent(new PointerEvent('pointermove', { clientX: x, clientY: y })); window.dispatchEvent(new PointerEvent('pointerup', { clientX: 65, clientY: 45 })); })()");
    await waitFor(`${status} === 'moved flat_terrain'`, 'the node moved');
    const zoom = await evaluate('studio.editor.view.zoom');
    const posAfter = nodeOf(await graphRecipe(), 'flat_terrain').position;
    check(Array.isArray(posAfter) && posAfter[0] === Math.round(posBefore[0] + 60 / zoom) && posAfter[1] === Math.round(posBefore[1] + 40 / zoom)
      && await evaluate('studio.stats.edits') === movesBefore + 1, 'dragging a node moved it in the session\'s graph, one edit: ' + JSON.stringify([posBefore, posAfter]));
    // Save: the file differs from the original only inside its graph.
    await evaluate("document.getElementById('save').click()");
    await waitFor(`${status}.startsWith('saved') && !studio.state.dirty`, 'the save');
    const saved = readFileSync(graphPath, 'utf8');
    const head = original.indexOf('"graph"'), tail = original.length - original.indexOf('"default_biome"');
    check(saved.slice(0, head) === original.slice(0, head) && saved.slice(saved.length - tail) === original.slice(original.length - tail), 'the saved file is the original outside the graph, byte for byte');
    const ridgesLine = original.split('\n').find((l) => l.includes('"ridges"'));
    check(saved.includes(ridgesLine), 'an unchanged node keeps its text');
    const savedLines = saved.split('\n'), origLines = new Set(original.split('\n'));
    const changed = savedLines.filter((l) => !origLines.has(l));
    check(changed.length <= 4, 'only the edited lines changed (' + changed.length + '): ' + changed.join(' | '));
    check(JSON.stringify(JSON.parse(saved).graph.nodes.find((n) => n.id === 'flat_terrain').position) === JSON.stringify(posAfter), 'the moved position is saved');
    // A comment on the canvas: added, its text edited in its form, saved as one more line.
    await addNode('comment');
    await waitFor("document.querySelector('#node-params [data-param=text]')", 'the comment form');
    await evaluate("(() => { const i = document.querySelector('#node-params [data-param=text]'); i.value = 'the lake goes here'; i.dispatchEvent(new Event('change')); })()");
    await waitFor(`${status} === 'comment.text = "the lake goes here"'`, 'the comment text');
    check(await evaluate("document.querySelector('#graph-world .gnode.comment[data-node=\"comment\"]').textContent.includes('the lake goes here')"), 'the comment shows its text on the canvas');
    await evaluate("document.getElementById('save').click()");
    await waitFor(`${status}.startsWith('saved') && !studio.state.dirty`, 'the save of the comment');
    const withComment = readFileSync(graphPath, 'utf8');
    const addedLines = withComment.split('\n').filter((l) => !new Set(saved.split('\n')).has(l));
    check(addedLines.length <= 2 && addedLines.some((l) => l.includes('"the lake goes here"') && l.includes('"comment"')) && withComment.length > saved.length, 'the comment is saved in its own line (' + addedLines.join(' | ') + ')');
    // Forms: the seed and a landform control (its range from the node registry).
    await evaluate("studio.showTab('recipe')");
    await waitFor("document.querySelector('#form-settings [data-param=seed]')", 'the recipe forms');
    await evaluate("(() => { const i = document.querySelector('#form-settings [data-param=seed]'); i.value = '9'; i.dispatchEvent(new Event('change')); })()");
    await waitFor(`${status} === 'settings.seed = 9'`, 'the seed change');
    check((await graphRecipe()).seed === 9, 'the seed form changed the session\'s seed');
    await evaluate("(() => { const i = document.querySelector('#form-landforms [data-landform=hills] [data-param=feature_size]'); i.value = '0'; i.dispatchEvent(new Event('change')); })()");
    check(await evaluate(`${status}.includes('feature_size: expected a number > 0, found 0')`), 'a landform control out of its range is refused: ' + await evaluate(status));
    await evaluate("(() => { const i = document.querySelector('#form-landforms [data-landform=hills] [data-param=height_variation]'); i.value = '150'; i.dispatchEvent(new Event('change')); })()");
    await waitFor(`${status} === 'landforms.hills.height_variation = 150'`, 'the landform change');
    check((await graphRecipe()).landforms.hills.height_variation === 150, 'the landform form changed the recipe');
    // The resolution: a new grid, which the page reloads whole; undo goes back to the old one.
    const setSetting = (name, value) => evaluate(`(() => { const i = document.querySelector('#form-settings [data-param=${name}]'); i.value = '${value}'; i.dispatchEvent(new Event('change')); })()`);
    await setSetting('resolution', '[64, 64]');
    await waitFor(`${status} === 'settings.resolution = [64,64]' && terrain.cellsX === 64`, 'the resolution change');
    check((await graphRecipe()).resolution.join() === '64,64' && await evaluate('terrain.cellsX === 64 && terrain.cellsZ === 64 && terrain.heights.length === 65 * 65')
      && await evaluate(serverSum) === await evaluate(pageSum), 'the resolution form regridded the session and the page');
    await evaluate("document.getElementById('undo').click()");
    await waitFor(`${status} === 'undo: regenerated' && terrain.cellsX === 128`, 'the undo of the resolution');
    check((await graphRecipe()).resolution.join() === '128,128' && await evaluate(serverSum) === await evaluate(pageSum), 'undo went back to the 128 x 128 grid');
    // A biome's colour from its picker.
    await evaluate("(() => { const i = document.querySelector('#form-biomes [data-biome=g] [data-param=color]'); i.value = '#ff0000'; i.dispatchEvent(new Event('change')); })()");
    await waitFor(`${status} === 'biomes.g.color = [1,0,0,1]'`, 'the biome colour');
    check(JSON.stringify((await graphRecipe()).biomes.g.color) === '[1,0,0,1]', 'the biome form changed the colour');
    // Export with unsaved edits: the page asks to save first; then the file is written.
    await evaluate("(() => { const s = document.getElementById('export'); s.value = 'png'; s.dispatchEvent(new Event('change')); })()");
    await waitFor("document.getElementById('export-dialog').open", 'the export dialog');
    check(await evaluate("document.getElementById('export-path').value") === 'exports/graph.png', 'the export path proposed inside the project');
    await evaluate("document.getElementById('export-go').click()");
    await waitFor("studio.asking && studio.asking.includes('save first')", 'the save-first question');
    await evaluate("document.querySelector('#ask button[data-choice=save]').click()");
    await waitFor(`${status}.startsWith('exported')`, 'the export');
    const exported = graphPath.replace(/[^/]*$/, 'exports/graph.png');
    check(existsSync(exported) && readFileSync(exported).subarray(1, 4).toString() === 'PNG', 'Export wrote the heightmap PNG into the project');
    check(JSON.parse(readFileSync(graphPath, 'utf8')).seed === 9, 'the export saved the edits first');
    const bad = await evaluate("studio.exportAs('png', '../outside.png')");
    check(bad === false && await evaluate(`${status}.startsWith('export failed')`), 'an export path outside the project is refused: ' + await evaluate(status));
    // Presets: the built-ins listed; applying one is one undoable step.
    await evaluate("studio.showTab('presets')");
    await waitFor("document.querySelectorAll('#presets .preset').length >= 8", 'the presets');
    await waitFor("[...document.querySelectorAll('#presets .preset-picture')].every((i) => i.complete)", 'the preset pictures');
    check(await evaluate("[...document.querySelectorAll('#presets .preset-picture')].filter((i) => i.naturalWidth > 0).length") === 9, 'each built-in preset and the project\'s shows its picture');
    check(await evaluate("(() => { const i = document.querySelector('#presets .preset[data-preset^=\"asset://\"] .preset-picture'); return !!i && i.naturalWidth === 129; })()"), 'the project preset has a picture (this recipe with it applied)');
    await evaluate("document.querySelector('#presets .preset[data-preset=\"builtin://terrain/rolling-hills\"] button[data-choice=clear]').click()");
    await waitFor(`${status}.startsWith('applied the preset')`, 'the preset');
    check((await graphRecipe()).preset_id === 'builtin://terrain/rolling-hills' && await evaluate('studio.state.dirty'), 'the preset is the session\'s recipe, unsaved');
    check(await evaluate(serverSum) === await evaluate(pageSum), 'the page shows the preset\'s terrain');
    await evaluate("document.getElementById('undo').click()");
    await waitFor(`${status} === 'undo: regenerated'`, 'the undo of the preset');
    check((await graphRecipe()).preset_id === undefined && !await evaluate('studio.state.dirty'), 'undo took the preset back');
    // A parameter dragged: draft previews (coarse, preview quality) follow the value without an
    // edit; the release applies the last value as one edit and the final preview replaces the
    // draft; a draft coming back after the release is dropped, never shown as current.
    await evaluate("studio.showTab('graph')");
    await evaluate("(() => { const g = document.querySelector('#graph-world .gnode[data-node=\"ridges\"]'); g.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, clientX: 5, clientY: 5 })); window.dispatchEvent(new PointerEvent('pointerup', { clientX: 5, clientY: 5 })); })()");
    await waitFor("document.querySelector('#node-params [data-param=height_variation]') && document.querySelector('#node-preview img') && document.querySelector('#node-preview img').complete", 'the ridges form and its preview');
    const dragStart = await evaluate('({ edits: studio.stats.edits, revision: studio.state.revision, drawn: studio.editor.draft.drawn })');
    const handle = "[...document.querySelectorAll('#node-params .pname')].find((e) => e.textContent === 'height_variation')";
    await evaluate(`${handle}.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, clientX: 100, clientY: 5 }))`);
    for (const dx of [10, 25, 45, 70]) {
      await evaluate(`window.dispatchEvent(new PointerEvent('pointermove', { clientX: ${100 + dx}, clientY: 5 }))`);
      await sleep(150);
    }
    await waitFor(`studio.editor.draft.drawn > ${dragStart.drawn} && !studio.editor.draft.busy`, 'a draft preview while dragging');
    const during = await evaluate(`({ edits: studio.stats.edits, revision: studio.state.revision, caption: document.getElementById('node-preview-caption').textContent,
      canvas: !document.getElementById('node-draft').hidden, img: !document.querySelector('#node-preview img').hidden, value: document.querySelector('#node-params [data-param=height_variation]').value })`);
    check(during.edits === dragStart.edits && during.revision === dragStart.revision, 'dragging applied nothing (no edit, the same revision)');
    check(during.canvas && !during.img && during.caption.startsWith('draft (coarse, preview quality) of height_variation = '), 'the draft is shown and captioned as a draft: ' + during.caption);
    check(nodeOf(await graphRecipe(), 'ridges').params.height_variation === 90, 'the session keeps the applied value while dragging');
    await evaluate(`window.dispatchEvent(new PointerEvent('pointerup', { clientX: 170, clientY: 5 }))`);
    await waitFor(`${status} === 'ridges.height_variation = ${during.value}'`, 'the dragged value applied');
    check(nodeOf(await graphRecipe(), 'ridges').params.height_variation === Number(during.value) && await evaluate('studio.stats.edits') === dragStart.edits + 1, 'the release applied the last value as one edit: ' + during.value);
    await waitFor("document.getElementById('node-preview-caption') && document.getElementById('node-preview-caption').textContent === 'final preview, as applied'", 'the final preview');
    check(await evaluate("document.getElementById('node-draft').hidden && !document.querySelector('#node-preview img').hidden"), 'the final preview replaced the draft');
    const dropped = await evaluate('studio.editor.draft.dropped');
    await evaluate("(async () => { const p = studio.draftPreview('ridges', 'field', 'height_variation', 5); studio.draftEnd(); await p; })()");
    check(await evaluate('studio.editor.draft.dropped') === dropped + 1 && await evaluate("document.getElementById('node-draft').hidden && document.getElementById('node-preview-caption').textContent === 'final preview, as applied'"), 'a draft that came back after the release was dropped');
    check(Number(during.value) > 90 && Number(during.value) < 200, 'a drag of 70 pixels moved the value by about 1% a pixel: ' + during.value);
    await evaluate("document.getElementById('undo').click()");
    await waitFor(`${status} === 'undo: regenerated'`, 'the undo of the dragged value');
    check(nodeOf(await graphRecipe(), 'ridges').params.height_variation === 90, 'undo took the dragged value back');
    // The readout under the cursor.
    await evaluate("studio.showTab('terrain')");
    await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y, buttons: 0 });
    await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x + 3, y, buttons: 0 });
    await waitFor("studio.readout && !document.getElementById('readout').hidden", 'the readout');
    const ro = await evaluate('studio.readout');
    check(typeof ro.height === 'number' && ro.slope >= 0 && ro.biome === 'g' && await evaluate("document.getElementById('readout').textContent.includes('height')"), 'the readout shows height, slope and biome: ' + JSON.stringify(ro));
    check(ro.x > 0 && ro.x < 512 && ro.z > 0 && ro.z < 512 && ro.height === await evaluate(`heightAt(${ro.x}, ${ro.z})`)
      && await evaluate(`document.getElementById('readout').textContent.startsWith('x ${ro.x.toFixed(1)}  z ${ro.z.toFixed(1)}  height')`), 'the readout names the point under the cursor and its height there');
    // Contour lines change the picture; the measuring tool gives distance and rise.
    const contourPixels = await evaluate("(() => { document.getElementById('contour-step').value = '5'; return studio.pixelsChangedBy('contours'); })()");
    check(contourPixels.changed > 1000, 'contour lines drawn: ' + JSON.stringify(contourPixels));
    await setTool('measure');
    for (const dx of [-80, 80]) {
      await send('Input.dispatchMouseEvent', { type: 'mousePressed', x: x + dx, y, button: 'left', buttons: 1, clickCount: 1 });
      await send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: x + dx, y, button: 'left', buttons: 0, clickCount: 1 });
    }
    const m = await evaluate('studio.lastMeasure');
    const rise = await evaluate(`heightAt(${m && m.to[0]}, ${m && m.to[1]}) - heightAt(${m && m.from[0]}, ${m && m.from[1]})`);
    check(m && m.horizontal > 10 && m.rise === rise && await evaluate(`${status}.startsWith('measured:')`), 'two clicks of the measuring tool measured ' + JSON.stringify(m));
    check(errors.length === 0, 'no console errors while editing the graph' + (errors.length ? ': ' + errors.join('; ') : ''));
  }
  // The water index at 2 and 4 bytes a sample: 300 and 65,536 bodies, the red lake last (body
  // 299, past 255; body 65,535, past 65,534). Read back from the GPU: no wet sample reads dry or
  // names another body, each body's sample count is the server's, every body has its colours.
  for (const [address, bytes, bodies] of [[water2Url, 2, 300], [water4Url, 4, 65536]]) {
    if (!address) continue;
    await open(address);
    const w = await evaluate('studio.waterCheck()');
    check(w.bytes === bytes && w.bodies === bodies, `the water index is ${bytes} bytes a sample for ${bodies} bodies: ` + JSON.stringify(w));
    check(w.wet > bodies && w.dry === 0 && w.other === 0 && w.miscounted === 0, `${bodies} bodies: no wet sample reads dry or names another body on the GPU`);
    check(w.colours === 0 && Math.abs(w.lastShallow[0] - 0.9) < 1e-6 && Math.abs(w.lastShallow[1] - 0.1) < 1e-6 && w.lastWet >= 500, `${bodies} bodies: each keeps its colours (the last, the red lake of ${w.lastWet} samples, red)`);
    const red = await evaluate("studio.pixelsChangedBy('water')");
    check(red.changed > 0, 'the water is drawn: ' + JSON.stringify(red));
    check(errors.length === 0, `no console errors with ${bodies} bodies` + (errors.length ? ': ' + errors.join('; ') : ''));
  }
  // Image maps: the layers the project has images for are drawn with them (magenta), the maps
  // switched off give the layers' colours (no magenta); the link outside the project is not read.
  if (mappedUrl) {
    await open(mappedUrl);
    await waitFor('studio.materials && studio.materials.images && studio.materials.images.length > 0', 'the image maps');
    const mat = await evaluate('studio.materials');
    const layerOf = async (id) => evaluate(`(async () => (await (await fetch('api/materials', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } })).json()).layers.findIndex((l) => l.material === '${id}'))()`);
    const soil = await layerOf('asset://materials/soil'), grass = await layerOf('asset://materials/grass'), rock = await layerOf('asset://materials/rock');
    const want = [...['albedo', 'emissive', 'height', 'normal', 'roughness'].map((map) => ({ layer: rock, map })), { layer: soil, map: 'albedo' }, { layer: soil, map: 'height' }].sort((a, b) => a.layer - b.layer || (a.map < b.map ? -1 : 1));
    check(JSON.stringify(mat.images) === JSON.stringify(want), 'image maps loaded for the rock (its Material document: all five) and the soil (albedo and height by file name): ' + JSON.stringify(mat.images));
    check(mat.from[rock] === 'material' && mat.from[soil] === 'file names', 'the rock\'s maps come from its Material document, the soil\'s from the older file names: ' + JSON.stringify(mat.from));
    check(mat.notes.length === 1 && mat.notes[0].includes('asset://materials/soil') && mat.notes[0].includes('Material document'), 'the older file names are named with how to move them into a Material document: ' + JSON.stringify(mat.notes));
    check((await evaluate("document.getElementById('status').textContent")).includes('materials/soil.albedo.png'), 'the status line says so');
    await evaluate('studio.show.emissive = false; studio.show.normal = false');
    check(mat.maps[grass] && mat.maps[grass].albedo === false, 'the grass albedo linked outside the project is not offered: ' + JSON.stringify(mat.maps[grass]));
    const outside = await evaluate(`(async () => (await fetch('api/material_map?layer=${grass}&map=albedo', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } })).status)()`);
    check(outside === 404, 'the grass albedo linked outside the project is refused: ' + outside);
    const magenta = `(() => { const f = readFrame(); let m = 0, lime = 0; for (let k = 0; k < f.length; k += 4) { if (f[k] > 120 && f[k + 2] > 120 && f[k + 1] < 60 && Math.abs(f[k] - f[k + 2]) < 40) m++; if (f[k + 1] > 150 && f[k] < 60 && f[k + 2] < 60) lime++; } return { magenta: m, lime, total: f.length / 4 }; })()`;
    const withMaps = await evaluate(magenta);
    await evaluate('studio.show.maps = false');
    const without = await evaluate(magenta);
    await evaluate('studio.show.maps = true');
    check(withMaps.magenta > withMaps.total * 0.05 && without.magenta === 0, 'the albedo images are drawn (magenta pixels with the maps, none without): ' + JSON.stringify({ withMaps, without }));
    check(withMaps.lime === 0, 'nothing of the image outside the project is drawn');
    const changed = await evaluate("studio.pixelsChangedBy('maps')");
    check(changed.changed > changed.total * 0.05, 'the image maps change the picture: ' + JSON.stringify(changed));
    await evaluate('studio.show.emissive = true; studio.show.normal = true');
    // The soil's normal, roughness and emissive maps: each changes the frame where it is drawn
    // (the emissive map greener, the smooth roughness brighter with highlights) on the rock.
    const glow = await evaluate("studio.pixelsChangedBy('emissive')");
    check(glow.changed > glow.total * 0.05 && glow.greener > glow.changed * 0.9, 'the emissive map adds its green glow: ' + JSON.stringify(glow));
    const bumps = await evaluate("studio.pixelsChangedBy('normal')");
    check(bumps.changed > bumps.total * 0.05, 'the normal map changes the lighting: ' + JSON.stringify(bumps));
    await evaluate('studio.show.normal = false');
    const shine = await evaluate("studio.pixelsChangedBy('roughness')");
    await evaluate('studio.show.normal = true');
    check(shine.changed > shine.total * 0.005 && shine.brighter > shine.changed * 0.9, 'the smooth roughness map adds highlights: ' + JSON.stringify(shine));
    check(errors.length === 0, 'no console errors with image maps' + (errors.length ? ': ' + errors.join('; ') : ''));
  }
  ws.close();
} catch (error) {
  check(false, String(error && error.stack || error));
}
browser.expectedExit = true;
browser.kill();
process.exit(failed ? 1 : 0);
