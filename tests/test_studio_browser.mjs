// terrane studio's page driven through the DevTools protocol: a brush drag and an undo change
// the server's heights and the page's copy alike, biome-paint and protect drags make their
// strokes, with no console errors. Run by
// test_studio_browser: node --experimental-websocket test_studio_browser.mjs CHROMIUM URL PROFILE
import { spawn } from 'node:child_process';

const [chromium, url, profile] = process.argv.slice(2);
if (typeof WebSocket === 'undefined') {
  console.error('this node has no WebSocket (needs 20.10+ with --experimental-websocket)');
  process.exit(77);
}
const browser = spawn(chromium, ['--headless=new', '--no-sandbox', '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader', '--window-size=1280,720', '--remote-debugging-port=0',
  `--user-data-dir=${profile}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let failed = false;
function check(ok, what) {
  console.error((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) failed = true;
}

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
  const ws = new WebSocket(pageWs);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  let nextId = 0;
  const pending = new Map(), errors = [];
  ws.onmessage = (event) => {
    const m = JSON.parse(event.data);
    if (m.id && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    } else if (m.method === 'Runtime.consoleAPICalled' && m.params.type === 'error') {
      errors.push(m.params.args.map((a) => a.value || a.description).join(' '));
    } else if (m.method === 'Runtime.exceptionThrown') {
      errors.push(m.params.exceptionDetails.text);
    }
  };
  const send = (method, params = {}) => new Promise((resolve, reject) => {
    const id = ++nextId;
    pending.set(id, (m) => (m.error ? reject(new Error(method + ': ' + m.error.message)) : resolve(m.result)));
    ws.send(JSON.stringify({ id, method, params }));
  });
  const evaluate = async (expression) =>
    (await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })).result.value;
  const waitFor = async (expression, what) => {
    for (let k = 0; k < 600; k++) {
      if (await evaluate(expression)) return true;
      await sleep(100);
    }
    check(false, 'waited 60 s for ' + what);
    return false;
  };
  await send('Runtime.enable');
  await send('Page.enable');
  await send('Page.navigate', { url });
  await waitFor("document.title === 'terrane studio: ready'", 'the first frame');
  // The server's heights summed in order, and the page's own copy summed the same way.
  const serverSum = `(async () => {
    const r = await fetch('api/heights', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } });
    let s = 0; for (const v of new Float32Array(await r.arrayBuffer())) s += v; return s; })()`;
  const pageSum = '(() => { let s = 0; for (const v of terrain.heights) s += v; return s; })()';
  const before = await evaluate(serverSum);
  check(before === await evaluate(pageSum), 'the page holds the server heights');

  const rect = JSON.parse(await evaluate("JSON.stringify(document.getElementById('view').getBoundingClientRect())"));
  const x = rect.left + rect.width / 2, y = rect.top + rect.height / 2;
  const mouse = (type, dx, buttons) => send('Input.dispatchMouseEvent',
    { type, x: x + dx, y, button: 'left', buttons, clickCount: type === 'mouseMoved' ? 0 : 1 });
  await mouse('mouseMoved', 0, 0);
  await mouse('mousePressed', 0, 1);
  for (let dx = 10; dx <= 60; dx += 10) await mouse('mouseMoved', dx, 1);
  await mouse('mouseReleased', 60, 0);
  await waitFor("document.getElementById('status').textContent.includes('changed') && !document.getElementById('undo').disabled", 'the stroke reply');
  const raised = await evaluate(serverSum);
  check(raised > before, 'a raise drag raised the server heights');
  check(raised === await evaluate(pageSum), 'the page applied the changed chunks');

  await evaluate("document.getElementById('undo').click()");
  await waitFor("document.getElementById('undo').disabled && !document.getElementById('redo').disabled", 'the undo reply');
  check(await evaluate(serverSum) === before, 'undo restored the server heights');
  check(await evaluate(pageSum) === before, 'undo restored the page heights');

  // The side panel: the five default layers (the raise tool's target is sculpt) and the biome.
  check(await evaluate("[...document.querySelectorAll('#layers li')].map((li) => li.textContent).join(' ')") ===
    'generationgeneration biomesbiomes sculptsculpt protectionprotection exclusionsexclusions', 'the five default layers listed');
  check(await evaluate("document.querySelector('#layers input[type=radio]:checked').value") === 'sculpt', 'raise strokes target the sculpt layer');
  check(await evaluate("document.querySelector('#biomes input:checked').value") === 'g', 'the recipe biome listed and picked');
  // A biome-paint drag sends a region stroke to the biomes layer; heights stay.
  await evaluate("(() => { const t = document.getElementById('tool'); t.value = 'region'; t.dispatchEvent(new Event('change')); })()");
  check(await evaluate("document.querySelector('#layers input[type=radio]:checked').value") === 'biomes', 'paint strokes target the biomes layer');
  await evaluate("document.getElementById('status').textContent = ''");
  await mouse('mouseMoved', 0, 0);
  await mouse('mousePressed', 0, 1);
  for (let dx = 10; dx <= 60; dx += 10) await mouse('mouseMoved', dx, 1);
  await mouse('mouseReleased', 60, 0);
  await waitFor("document.getElementById('status').textContent.includes('changed') && !document.getElementById('undo').disabled", 'the paint reply');
  const recipe = await evaluate(`(async () => (await fetch('api/recipe', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } })).text())()`);
  check(/"regions":\[\{"biome":"g","layer":"biomes","points":\[\[/.test(recipe), 'the paint drag made a region stroke: ' + recipe.slice(0, 300));
  check(await evaluate(serverSum) === before, 'painting kept the heights');
  // A protect drag: a snapshot of the samples under the brush at their shown heights.
  await evaluate("(() => { const t = document.getElementById('tool'); t.value = 'protect'; t.dispatchEvent(new Event('change')); })()");
  await evaluate("document.getElementById('status').textContent = ''");
  await mouse('mouseMoved', 0, 0);
  await mouse('mousePressed', 0, 1);
  await mouse('mouseMoved', 20, 1);
  await mouse('mouseReleased', 20, 0);
  await waitFor("document.getElementById('status').textContent.includes('changed')", 'the protect reply');
  const protectedRecipe = await evaluate(`(async () => (await fetch('api/recipe', { headers: { 'X-Terrane-Token': new URLSearchParams(location.search).get('token') } })).text())()`);
  check(/"edits":\[\{"grid":\[\d+,\d+\],"layer":"protection","samples":\[\[\d+,\d+,/.test(protectedRecipe), 'the protect drag made a snapshot');
  check(await evaluate(serverSum) === before, 'protecting kept the heights');
  check(errors.length === 0, 'no console errors' + (errors.length ? ': ' + errors.join('; ') : ''));
  ws.close();
} catch (error) {
  check(false, String(error));
}
browser.kill();
process.exit(failed ? 1 : 0);
