// terrane studio: editing the generator: the module graph, the recipe's sections in forms,
// presets, exports and the readout under the cursor (docs/studio.md). Loaded after app.js.
'use strict';

// The page's copy of the session's recipe (GET /api/recipe), the node types (GET /api/types)
// and the last findings of the graph check, by node id.
const editor = studio.editor = {
  recipe: null, types: [], byType: {}, findings: [], selected: null, pendingOut: null,
  view: { x: 40, y: 40, zoom: 1 }, tab: 'terrain', presets: null, lastMessage: '',
};
const SVGNS = 'http://www.w3.org/2000/svg';
const NODE_W = 180, HEAD_H = 22, PIN_H = 17;
const kindColour = { heightfield: '#7fd6a0', mask: '#c8c8c8', drainage: '#6fa8ff', water: '#3fb6ff', instances: '#ffc766' };

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v; else if (k.startsWith('on')) e[k] = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}
function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}
// A refusal said in the status line and the editor's message box (not a page error).
function tell(text) {
  editor.lastMessage = text;
  setStatus(text);
  for (const box of document.querySelectorAll('.editor-message')) box.textContent = text;
}

// ----- the one way an edit reaches the server: the whole recipe, one undoable step -----
// mutate(copy) changes a copy of the recipe (returning a message refuses the edit with it).
async function editRecipe(mutate, what) {
  if (!editor.recipe) return false;
  const next = JSON.parse(JSON.stringify(editor.recipe));
  const refused = mutate(next);
  if (typeof refused === 'string') { tell(refused); return false; }
  const body = JSON.stringify(next);
  if (body.length > MAX_BODY) { tell(what + ': the recipe is too large to send from the page'); return false; }
  tell(what + '...');
  const events = watchProgress();
  try {
    const reply = await (await api('edit', { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })).json();
    applyState(reply);
    editor.findings = reply.diagnostics || [];
    studio.stats.edits = (studio.stats.edits || 0) + 1;
    await reloadTerrain();
    await loadRecipe();
    loadCheck().catch(() => {});
    tell(what);
    return true;
  } catch (e) {
    if (e.status === 422 && e.reply) {
      // The graph check refused it: every finding shown at its node; nothing changed.
      editor.findings = e.reply.diagnostics || [];
      renderGraph();
      tell('not applied: ' + e.reply.error.replace(/^the graph has \d+ errors?; nothing was applied: /, ''));
      return false;
    }
    if (e.status === 400) { tell('not applied: ' + e.message.replace(/^edit: /, '')); return false; }
    fail(e);
    return false;
  } finally { events.close(); }
}
studio.editRecipe = editRecipe;

// ----- the graph -----
const graphOf = (r) => (r && r.graph && Array.isArray(r.graph.nodes) ? r.graph : null);
const nodeById = (g, id) => g.nodes.find((n) => n.id === id);
const typeOf = (n) => editor.byType[n.type] || { inputs: [], outputs: [], params: [], title: n.type };
function nodeHeight(n) {
  const t = typeOf(n);
  return HEAD_H + Math.max(t.inputs.length, t.outputs.length, 1) * PIN_H + 8;
}
// Nodes without a canvas position: placed by their depth from the sources.
function layout(g) {
  const depth = {};
  const visit = (n, seen) => {
    if (n.id in depth) return depth[n.id];
    if (seen.has(n.id)) return 0;
    seen.add(n.id);
    let d = 0;
    for (const link of Object.values(n.inputs || {})) {
      const src = link && nodeById(g, link.node);
      if (src) d = Math.max(d, visit(src, seen) + 1);
    }
    return (depth[n.id] = d);
  };
  const rows = {};
  for (const n of g.nodes) {
    const d = visit(n, new Set());
    if (!Array.isArray(n.position)) n._auto = [d * 240, (rows[d] = (rows[d] || 0) + 1) * 130 - 130];
  }
}
const posOf = (n) => (Array.isArray(n.position) ? n.position : n._auto || [0, 0]);
function pinPoint(n, pin, output) {
  const t = typeOf(n), [x, y] = posOf(n);
  const list = output ? t.outputs : t.inputs;
  const k = Math.max(0, list.findIndex((p) => p.name === pin));
  return [x + (output ? NODE_W : 0), y + HEAD_H + k * PIN_H + PIN_H / 2];
}
function outputPin(src, link) {
  const t = typeOf(src);
  return link.pin || (t.outputs[0] && t.outputs[0].name);
}

function renderGraph() {
  const box = $('graph-svg');
  if (!box) return;
  const world = $('graph-world');
  world.textContent = '';
  world.setAttribute('transform', `translate(${editor.view.x},${editor.view.y}) scale(${editor.view.zoom})`);
  const g = graphOf(editor.recipe);
  $('graph-start').hidden = !!g || !editor.recipe;
  if (!g) { showInspector(); return; }
  layout(g);
  const findings = {};
  for (const d of editor.findings) if (d.node) (findings[d.node] = findings[d.node] || []).push(d);
  // Links under the nodes: a wide invisible stroke takes the click that disconnects.
  for (const n of g.nodes) {
    for (const [pin, link] of Object.entries(n.inputs || {})) {
      const src = link && nodeById(g, link.node);
      if (!src) continue;
      const from = pinPoint(src, outputPin(src, link), true), to = pinPoint(n, pin, false);
      const mid = (from[0] + to[0]) / 2;
      const d = `M${from[0]},${from[1]} C${mid},${from[1]} ${mid},${to[1]} ${to[0]},${to[1]}`;
      const kind = ((typeOf(n).inputs.find((p) => p.name === pin)) || {}).kind;
      const edge = svg('g', { class: 'edge', 'data-to': n.id, 'data-pin': pin, 'data-from': src.id });
      edge.append(svg('path', { d, class: 'edge-hit' }), svg('path', { d, class: 'edge-line', stroke: kindColour[kind] || '#aaa' }));
      const title = svg('title');
      title.textContent = `${src.id}.${outputPin(src, link)} -> ${n.id}.${pin} (click: disconnect)`;
      edge.append(title);
      edge.addEventListener('click', (e) => { e.stopPropagation(); disconnect(n.id, pin); });
      world.append(edge);
    }
  }
  for (const n of g.nodes) {
    const t = typeOf(n), [x, y] = posOf(n), h = nodeHeight(n);
    const mine = findings[n.id] || [];
    const worst = mine.some((d) => d.severity === 'error') ? 'error' : mine.length ? 'warning' : '';
    const node = svg('g', { class: 'gnode ' + worst + (editor.selected === n.id ? ' selected' : '') + (n.type === 'comment' ? ' comment' : ''), 'data-node': n.id, transform: `translate(${x},${y})` });
    node.append(svg('rect', { class: 'body', width: NODE_W, height: h, rx: 4 }));
    const head = svg('rect', { class: 'head', width: NODE_W, height: HEAD_H, rx: 4 });
    node.append(head);
    const label = svg('text', { x: 6, y: 15, class: 'title' });
    label.textContent = n.id + (t.title && t.title !== n.id ? ' · ' + t.title : '');
    node.append(label);
    if (mine.length) {
      const tip = svg('title');
      tip.textContent = mine.map((d) => d.severity + ': ' + d.message).join('\n');
      node.append(tip);
      const mark = svg('text', { x: NODE_W - 14, y: 15, class: 'mark ' + worst });
      mark.textContent = '!';
      node.append(mark);
    }
    t.inputs.forEach((p, k) => {
      const cy = HEAD_H + k * PIN_H + PIN_H / 2;
      const c = svg('circle', { cx: 0, cy, r: 5, class: 'pin in', fill: kindColour[p.kind] || '#aaa', 'data-pin': p.name, 'data-kind': p.kind });
      c.addEventListener('pointerdown', (e) => { e.stopPropagation(); clickInput(n.id, p); });
      const txt = svg('text', { x: 9, y: cy + 4, class: 'pin-name' });
      txt.textContent = p.name + (p.required ? '' : '?');
      node.append(c, txt);
    });
    t.outputs.forEach((p, k) => {
      const cy = HEAD_H + k * PIN_H + PIN_H / 2;
      const c = svg('circle', { cx: NODE_W, cy, r: 5, class: 'pin out' + (editor.pendingOut && editor.pendingOut.node === n.id && editor.pendingOut.pin === p.name ? ' pending' : ''), fill: kindColour[p.kind] || '#aaa', 'data-pin': p.name, 'data-kind': p.kind });
      c.addEventListener('pointerdown', (e) => { e.stopPropagation(); clickOutput(n.id, p); });
      const txt = svg('text', { x: NODE_W - 9, y: cy + 4, class: 'pin-name', 'text-anchor': 'end' });
      txt.textContent = p.name;
      node.append(c, txt);
    });
    if (n.type === 'comment' && n.params && n.params.text) {
      const txt = svg('text', { x: 6, y: HEAD_H + 13, class: 'pin-name' });
      txt.textContent = String(n.params.text).slice(0, 30) + (String(n.params.text).length > 30 ? '…' : '');
      node.append(txt);
    }
    node.addEventListener('pointerdown', (e) => startNodeDrag(e, n));
    world.append(node);
  }
  showInspector();
}

// Connecting: click an output pin, then an input pin of the same kind.
function clickOutput(id, pin) {
  editor.pendingOut = { node: id, pin: pin.name, kind: pin.kind };
  tell(`connect ${id}.${pin.name} (${pin.kind}): click an input pin`);
  renderGraph();
}
function clickInput(id, pin) {
  const from = editor.pendingOut;
  if (!from) {
    select(id);
    return;
  }
  editor.pendingOut = null;
  connect(from.node, from.pin, id, pin.name);
}
// A typed link: refused in the page when the kinds differ (the server checks again).
async function connect(fromId, fromPin, toId, toPin) {
  const g = graphOf(editor.recipe);
  const src = g && nodeById(g, fromId), dst = g && nodeById(g, toId);
  if (!src || !dst) { tell('connect: no such node'); return false; }
  const out = typeOf(src).outputs.find((p) => p.name === fromPin), inp = typeOf(dst).inputs.find((p) => p.name === toPin);
  if (!out || !inp) { tell(`connect: ${!out ? fromId + ' has no output ' + fromPin : toId + ' has no input ' + toPin}`); renderGraph(); return false; }
  if (out.kind !== inp.kind) {
    tell(`cannot connect: input '${toPin}' of ${toId} takes a ${inp.kind}, but output '${fromPin}' of ${fromId} gives a ${out.kind}`);
    renderGraph();
    return false;
  }
  if (fromId === toId) { tell('cannot connect a node to itself'); renderGraph(); return false; }
  return editRecipe((r) => {
    const n = nodeById(r.graph, toId);
    n.inputs = n.inputs || {};
    n.inputs[toPin] = { node: fromId, pin: fromPin };
  }, `connected ${fromId}.${fromPin} to ${toId}.${toPin}`);
}
function disconnect(toId, toPin) {
  return editRecipe((r) => {
    const n = nodeById(r.graph, toId);
    if (!n || !n.inputs || !n.inputs[toPin]) return 'nothing to disconnect';
    delete n.inputs[toPin];
    if (!Object.keys(n.inputs).length) delete n.inputs;
  }, `disconnected ${toId}.${toPin}`);
}
// A new node of a type: a fresh id, placed right of the selection (or the view's corner).
function addNode(type) {
  const t = editor.byType[type];
  if (!t) { tell('no node type ' + type); return Promise.resolve(false); }
  let id = type, k = 1;
  const g = graphOf(editor.recipe);
  while (g && nodeById(g, id)) id = type + '_' + ++k;
  const near = g && editor.selected && nodeById(g, editor.selected);
  const at = near ? [posOf(near)[0] + 220, posOf(near)[1] + 40] : [Math.round(-editor.view.x / editor.view.zoom) + 60, Math.round(-editor.view.y / editor.view.zoom) + 60];
  editor.selected = id;
  return editRecipe((r) => {
    if (!graphOf(r)) return 'the recipe has no graph: start one first';
    const node = { id, type, position: at };
    if (type === 'comment') node.params = { text: 'note' };
    r.graph.nodes.push(node);
  }, `added ${id} (${t.title || type})`);
}
function removeNode(id) {
  return editRecipe((r) => {
    const g = graphOf(r);
    if (!g || !nodeById(g, id)) return 'no node ' + id;
    if (g.output === id) return `${id} is the graph's output: it stays (connect another Terrain Output first)`;
    g.nodes = g.nodes.filter((n) => n.id !== id);
    for (const n of g.nodes) {
      for (const [pin, link] of Object.entries(n.inputs || {})) if (link && link.node === id) delete n.inputs[pin];
      if (n.inputs && !Object.keys(n.inputs).length) delete n.inputs;
    }
    if (editor.selected === id) editor.selected = null;
  }, `removed ${id}`);
}
// A recipe without a graph gets the one it implies: landform -> biome_rules -> terrain_output.
function startGraph() {
  return editRecipe((r) => {
    if (graphOf(r)) return 'the recipe already has a graph';
    r.graph = { format_version: 1, output: 'out', nodes: [
      { id: 'land', type: 'landform', position: [0, 0] },
      { id: 'biomes', type: 'biome_rules', position: [240, 0], inputs: { field: { node: 'land', pin: 'field' } } },
      { id: 'out', type: 'terrain_output', position: [480, 0], inputs: { field: { node: 'biomes', pin: 'field' } } },
    ] };
  }, 'started a graph (landform, biome rules, output)');
}
function select(id) {
  editor.selected = id;
  renderGraph();
}
// Moving a node: dragged in the page, its position saved on release (one step).
function startNodeDrag(e, n) {
  e.stopPropagation();
  const start = [e.clientX, e.clientY], from = posOf(n).slice();
  let moved = false;
  const move = (ev) => {
    const dx = (ev.clientX - start[0]) / editor.view.zoom, dy = (ev.clientY - start[1]) / editor.view.zoom;
    if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
    if (!moved) return;
    n.position = [Math.round(from[0] + dx), Math.round(from[1] + dy)];
    renderGraph();
  };
  const up = () => {
    window.removeEventListener('pointermove', move);
    window.removeEventListener('pointerup', up);
    if (!moved) { select(n.id); return; }
    const to = n.position;
    n.position = from;
    editRecipe((r) => { nodeById(r.graph, n.id).position = to; }, `moved ${n.id}`);
  };
  window.addEventListener('pointermove', move);
  window.addEventListener('pointerup', up);
}

// ----- a parameter form from the registry: ranges, choices and defaults enforced -----
// A number as the graph check prints it (whole numbers without a fraction or exponent).
const numberText = (v) => (!Number.isFinite(v) ? 'null' : Number.isInteger(v) && Math.abs(v) <= 9007199254740992 ? v.toFixed(0) : String(v));
// A value typed for spec: [ok, value or message]; an empty field means the default (removed).
// The messages are the graph check's own (src/graph/graph_check.c), word for word, so the
// field says what `terrane graph check` would say of the value.
function parseParam(spec, text) {
  const t = String(text).trim();
  if (t === '') return [true, undefined];
  if (spec.type === 'number' || spec.type === 'integer') {
    if (spec.keywords && spec.keywords.includes(t)) return [true, t];
    const whole = spec.type === 'integer', kind = whole ? 'whole number' : 'number';
    const v = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) ? Number(t) : NaN;
    if (!Number.isFinite(v)) {
      return [false, spec.keywords ? `${spec.name}: expected a number or one of "${spec.keywords.join('|')}", found "${t.slice(0, 60)}"`
        : `${spec.name}: expected a ${kind}, found a string`];
    }
    const lo = spec.min ?? -Infinity, hi = spec.max ?? Infinity;
    if ((spec.min_exclusive ? v <= lo : v < lo) || v > hi || (whole && !Number.isInteger(v))) {
      return [false, hi === Infinity ? `${spec.name}: expected a ${kind} ${spec.min_exclusive ? '>' : '>='} ${numberText(lo)}, found ${numberText(v)}`
        : `${spec.name}: expected a ${kind} from ${spec.min_exclusive ? 'above ' : ''}${numberText(lo)} to ${numberText(hi)}, found ${numberText(v)}`];
    }
    return [true, v];
  }
  if (spec.type === 'choice') {
    if (spec.choices && !spec.choices.includes(t)) return [false, `${spec.name}: expected one of ${spec.choices.join('|')}, found "${t.slice(0, 40)}"`];
    return [true, t];
  }
  if (spec.type === 'string') return [true, t];
  try { return [true, JSON.parse(t)]; } catch (e) { return [false, `${spec.name}: not JSON: ${e.message}`]; }
}
// onDraft (optional): a number parameter's name can be dragged left or right to scrub its
// value; each value on the way goes to onDraft(v), and the release applies the last one as a
// change (one edit).
function paramField(spec, value, onChange, onDraft) {
  const row = el('label', { class: 'param', title: spec.description || '' });
  const name = el('span', { class: 'pname', text: spec.name });
  row.append(name);
  const def = spec.default == null ? '' : typeof spec.default === 'object' ? JSON.stringify(spec.default) : String(spec.default);
  let input;
  if (spec.type === 'choice') {
    input = el('select');
    input.append(el('option', { value: '', text: '(default ' + def + ')' }));
    for (const c of spec.choices || []) input.append(el('option', { value: c, text: c }));
    input.value = value == null ? '' : String(value);
  } else if (spec.type === 'number' || spec.type === 'integer') {
    input = el('input', { type: 'text', inputmode: 'decimal', placeholder: def });
    input.value = value == null ? '' : String(value);
  } else if (spec.type === 'string') {
    input = el('input', { type: 'text', placeholder: def });
    input.value = value == null ? '' : String(value);
  } else {
    input = el('textarea', { rows: 2, placeholder: def });
    input.value = value == null ? '' : JSON.stringify(value);
  }
  input.dataset.param = spec.name;
  const note = el('span', { class: 'range' });
  if (spec.min != null || spec.max != null) note.textContent = `${spec.min_exclusive ? '(' : '['}${spec.min ?? '-inf'}, ${spec.max ?? 'inf'}]`;
  input.addEventListener('change', () => {
    const [ok, v] = parseParam(spec, input.value);
    row.classList.toggle('invalid', !ok);
    if (!ok) { tell('not applied: ' + v); return; }
    onChange(v);
  });
  row.append(input, note);
  if (onDraft && (spec.type === 'number' || spec.type === 'integer')) scrubber(name, input, spec, onDraft);
  return row;
}

// Dragging a number parameter's name scrubs its value: a pixel is 1% of the value (at least
// 0.01), or 1/300 of its range when that is less; integers round. While the button is held
// every new value goes to onDraft; the release sends a 'change' (the applied edit).
function scrubber(handle, input, spec, onDraft) {
  handle.classList.add('scrub');
  handle.title = 'drag left or right to change ' + spec.name + ' (a draft preview follows; the release applies it)';
  handle.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    const [ok, parsed] = parseParam(spec, input.value);
    const start = ok && typeof parsed === 'number' ? parsed : typeof spec.default === 'number' ? spec.default : 0;
    const lo = spec.min ?? -Infinity, hi = spec.max ?? Infinity;
    const step = Math.min(Number.isFinite(lo) && Number.isFinite(hi) ? (hi - lo) / 300 : Infinity, Math.max(Math.abs(start) / 100, 0.01));
    const x0 = e.clientX;
    let moved = false, last = start;
    const move = (m) => {
      let v = start + (m.clientX - x0) * step;
      v = spec.type === 'integer' ? Math.round(v) : Number(v.toPrecision(6));
      if (v < lo || (spec.min_exclusive && v <= lo)) v = spec.min_exclusive ? lo + Math.abs(step) : lo;
      if (v > hi) v = hi;
      if (v === last) return;
      last = v;
      moved = true;
      input.value = String(v);
      handle.parentElement.classList.add('dragging');
      onDraft(v);
    };
    const up = () => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      handle.parentElement.classList.remove('dragging');
      if (moved) input.dispatchEvent(new Event('change'));
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
  });
}

// ----- draft previews while a parameter is dragged -----
// Each value sent goes to POST /api/preview (the edited recipe, not applied: preview quality on a
// coarse grid); one request at a time, and only the newest value waits (the ones between are
// skipped). A picture is shown only when it is newer than the one shown and the drag has not
// ended; its caption says which value it shows and whether a newer one is on its way. The
// release applies the edit, and the node's final preview replaces the draft: a draft that comes
// back after the release is dropped (never shown as the current result).
const draft = editor.draft = { seq: 0, shown: 0, busy: false, pending: null, released: true, dropped: 0, drawn: 0, value: null, running: null };
function draftPreview(nodeId, pin, param, value) {
  const next = JSON.parse(JSON.stringify(editor.recipe));
  const m = nodeById(next.graph, nodeId);
  m.params = m.params || {};
  m.params[param] = value;
  draft.released = false;
  draft.value = value;
  draft.pending = { seq: ++draft.seq, nodeId, pin, param, value, body: JSON.stringify(next) };
  draftCaption();
  return draftPump();
}
function draftCaption() {
  const caption = $('node-preview-caption');
  if (!caption || draft.released) return;
  const shown = draft.shownValue == null ? 'the last applied value' : draft.param + ' = ' + draft.shownValue;
  caption.textContent = 'draft (coarse, preview quality) of ' + shown + (draft.shown < draft.seq ? '; updating to ' + draft.param + ' = ' + draft.value + '...' : '');
  caption.className = 'caption draft' + (draft.shown < draft.seq ? ' stale' : '');
}
async function draftPump() {
  if (draft.busy || !draft.pending) return draft.running;
  const job = draft.pending;
  draft.pending = null;
  draft.busy = true;
  draft.running = (async () => {
    try {
      const reply = await api('preview?node=' + encodeURIComponent(job.nodeId) + '&pin=' + encodeURIComponent(job.pin), { method: 'POST', body: job.body, headers: { 'Content-Type': 'application/json' } });
      const bitmap = await createImageBitmap(await reply.blob());
      const canvas = $('node-draft');
      // Only newer than what is shown, only while dragging, only for the node still selected.
      if (draft.released || job.seq <= draft.shown || editor.selected !== job.nodeId || !canvas) { draft.dropped++; return; }
      canvas.width = bitmap.width;
      canvas.height = bitmap.height;
      canvas.getContext('2d').drawImage(bitmap, 0, 0);
      canvas.hidden = false;
      const img = document.querySelector('#node-preview img');
      if (img) img.hidden = true;
      draft.shown = job.seq;
      draft.param = job.param;
      draft.shownValue = job.value;
      draft.drawn++;
      draftCaption();
    } catch (e) {
      if (!draft.released && $('node-preview-caption')) $('node-preview-caption').textContent = 'draft preview failed: ' + e.message.replace(/^preview: /, '');
    } finally {
      draft.busy = false;
    }
  })();
  await draft.running;
  return draftPump();
}
// The drag ended: no draft is shown from now on (the edit's final preview follows).
function draftEnd() {
  draft.released = true;
  draft.pending = null;
  draft.shownValue = null;
  // Until the edit's final preview replaces it, the picture shown is the one last applied.
  const canvas = $('node-draft'), img = document.querySelector('#node-preview img'), caption = $('node-preview-caption');
  if (canvas) canvas.hidden = true;
  if (img) img.hidden = false;
  if (caption) {
    caption.textContent = img && img.complete && img.naturalWidth > 0 ? 'final preview, as applied' : 'final preview (loading)';
    caption.className = 'caption final';
  }
}
studio.draftPreview = draftPreview;
studio.draftEnd = draftEnd;

function showInspector() {
  const box = $('inspector');
  if (!box) return;
  box.textContent = '';
  const g = graphOf(editor.recipe);
  // Add a node: every type of the registry by category.
  const pickType = el('select', { id: 'add-type' });
  const cats = {};
  for (const t of editor.types) (cats[t.category] = cats[t.category] || []).push(t);
  for (const [cat, list] of Object.entries(cats)) {
    const og = el('optgroup', { label: cat });
    for (const t of list) og.append(el('option', { value: t.name, text: t.title || t.name }));
    pickType.append(og);
  }
  box.append(el('div', { class: 'row' }, pickType, el('button', { id: 'add-node', text: 'Add node', onclick: () => addNode(pickType.value) })));
  box.append(el('div', { class: 'editor-message hint', text: editor.lastMessage }));
  const n = g && editor.selected && nodeById(g, editor.selected);
  if (!n) { box.append(el('p', { class: 'hint', text: g ? 'Click a node to edit it; an output pin then an input pin to connect; a link to disconnect; drag a node to move it.' : '' })); return; }
  const t = typeOf(n);
  box.append(el('h3', { text: `${n.id} · ${t.title || n.type}` }), el('p', { class: 'hint', text: t.description || '' }));
  for (const d of editor.findings.filter((f) => f.node === n.id)) box.append(el('p', { class: 'finding ' + d.severity, text: d.severity + ': ' + d.message }));
  const form = el('div', { id: 'node-params' });
  for (const spec of t.params || []) {
    const value = n.params ? n.params[spec.name] : undefined;
    const pin = t.outputs.length ? t.outputs[0].name : null;
    form.append(paramField(spec, value, (v) => {
      draftEnd();
      return editRecipe((r) => {
        const m = nodeById(r.graph, n.id);
        m.params = m.params || {};
        if (v === undefined) delete m.params[spec.name]; else m.params[spec.name] = v;
        if (!Object.keys(m.params).length) delete m.params;
      }, `${n.id}.${spec.name} = ${v === undefined ? 'default' : JSON.stringify(v)}`);
    }, pin && n.type !== 'comment' ? (v) => { draftPreview(n.id, pin, spec.name, v).catch(fail); } : null));
  }
  box.append(form);
  box.append(el('button', { id: 'remove-node', text: 'Remove node', onclick: () => removeNode(n.id) }));
  // The node's first output as the session has it now (a new picture after every edit).
  // While a parameter is dragged, a draft picture (a canvas) stands in for it, captioned.
  const preview = el('div', { id: 'node-preview' });
  if (n.type !== 'comment' && t.outputs.length) {
    const img = el('img', { alt: 'preview of ' + n.id });
    const caption = el('div', { id: 'node-preview-caption', class: 'caption', text: 'final preview (loading)' });
    img.onerror = () => { preview.textContent = 'no preview (the node is not evaluated, or its output is not a picture)'; };
    img.onload = () => { caption.textContent = 'final preview, as applied'; caption.className = 'caption final'; };
    img.src = 'api/preview?node=' + encodeURIComponent(n.id) + '&pin=' + encodeURIComponent(t.outputs[0].name) + '&token=' + encodeURIComponent(token) + '&revision=' + state.revision;
    const canvasDraft = el('canvas', { id: 'node-draft' });
    canvasDraft.hidden = true;
    preview.append(img, canvasDraft, caption);
  }
  box.append(preview);
}

// ----- forms for the recipe's sections -----
// The landform controls are noise_terrain's parameters (the same names, ranges and defaults).
function landformSpecs() {
  const t = editor.byType.noise_terrain;
  return t ? t.params.filter((p) => p.name !== 'seed') : [];
}
const settingSpecs = [
  { name: 'seed', type: 'integer', min: 0, max: 4294967295, description: 'the world seed' },
  { name: 'sea_level', type: 'number', description: 'metres; water below it (absent: none)' },
];
// Any JSON object as fields: numbers, strings, booleans; arrays and objects as JSON.
function genericFields(obj, onChange) {
  const box = el('div', { class: 'generic' });
  for (const [k, v] of Object.entries(obj || {})) {
    if (k === 'color' && Array.isArray(v)) {
      const hex = '#' + v.slice(0, 3).map((c) => Math.round(Math.max(0, Math.min(1, c > 1 ? c / 255 : c)) * 255).toString(16).padStart(2, '0')).join('');
      const input = el('input', { type: 'color', value: hex });
      input.dataset.param = k;
      input.addEventListener('change', () => {
        const h = input.value;
        onChange(k, [1, 3, 5].map((o) => Math.round(parseInt(h.slice(o, o + 2), 16) / 255 * 1000) / 1000).concat(v.length > 3 ? [v[3]] : []));
      });
      box.append(el('label', { class: 'param' }, el('span', { class: 'pname', text: k }), input));
      continue;
    }
    const spec = { name: k, type: typeof v === 'number' ? 'number' : typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'boolean' : 'json' };
    if (spec.type === 'boolean') {
      const input = el('input', { type: 'checkbox' });
      input.checked = v;
      input.dataset.param = k;
      input.addEventListener('change', () => onChange(k, input.checked));
      box.append(el('label', { class: 'param' }, el('span', { class: 'pname', text: k }), input));
      continue;
    }
    box.append(paramField(spec, v, (nv) => onChange(k, nv)));
  }
  return box;
}
function sectionEdit(path, what) {
  return (key, value) => editRecipe((r) => {
    let o = r;
    for (const p of path) o = o[p] = o[p] || {};
    if (value === undefined) delete o[key]; else o[key] = value;
  }, what + '.' + key + ' = ' + (value === undefined ? 'default' : JSON.stringify(value)));
}
function showForms() {
  const box = $('forms');
  if (!box || !editor.recipe) return;
  const r = editor.recipe;
  box.textContent = '';
  box.append(el('div', { class: 'editor-message hint', text: editor.lastMessage }));
  // Settings.
  const settings = el('fieldset', { id: 'form-settings' }, el('legend', { text: 'Settings' }));
  for (const spec of settingSpecs) settings.append(paramField(spec, r[spec.name], (v) => sectionEdit([], 'settings')(spec.name, v)));
  const sizeSpec = { name: 'size', type: 'json', description: 'world size [x, z] in metres' };
  settings.append(paramField(sizeSpec, r.size, (v) => sectionEdit([], 'settings')('size', v)));
  const resolutionSpec = { name: 'resolution', type: 'json', description: 'grid cells [x, z]; the samples are one more a side' };
  settings.append(paramField(resolutionSpec, r.resolution, (v) => sectionEdit([], 'settings')('resolution', v)));
  const landNames = Object.keys(r.landforms || {});
  if (landNames.length) {
    settings.append(paramField({ name: 'default_landform', type: 'choice', choices: landNames, default: r.default_landform }, r.default_landform, (v) => sectionEdit([], 'settings')('default_landform', v)));
  }
  const biomeNames = Object.keys(r.biomes || {});
  if (biomeNames.length) {
    settings.append(paramField({ name: 'default_biome', type: 'choice', choices: biomeNames, default: r.default_biome }, r.default_biome, (v) => sectionEdit([], 'settings')('default_biome', v)));
  }
  box.append(settings);
  // Landforms: noise_terrain's table.
  const lands = el('fieldset', { id: 'form-landforms' }, el('legend', { text: 'Landforms' }));
  for (const name of landNames) {
    const sub = el('details', { open: '', 'data-landform': name }, el('summary', { text: name }));
    for (const spec of landformSpecs()) sub.append(paramField(spec, r.landforms[name][spec.name], (v) => sectionEdit(['landforms', name], 'landforms.' + name)(spec.name, v)));
    lands.append(sub);
  }
  if (!landNames.length) lands.append(el('p', { class: 'hint', text: 'no landforms' }));
  box.append(lands);
  // Biomes, rules, water: their own values as fields (the server enforces their ranges).
  const biomes = el('fieldset', { id: 'form-biomes' }, el('legend', { text: 'Biomes' }));
  for (const name of biomeNames) biomes.append(el('details', { 'data-biome': name }, el('summary', { text: name }), genericFields(r.biomes[name], sectionEdit(['biomes', name], 'biomes.' + name))));
  box.append(biomes);
  const rules = el('fieldset', { id: 'form-rules' }, el('legend', { text: 'Rules' }));
  (Array.isArray(r.rules) ? r.rules : []).forEach((rule, k) => {
    const maskBox = el('input', { type: 'checkbox', class: 'rule-mask', title: 'show where this rule matches on the terrain' });
    maskBox.checked = editor.maskRule === rule.id;
    maskBox.addEventListener('change', () => showRuleMask(maskBox.checked ? rule.id : null).catch(fail));
    rules.append(el('label', { class: 'param' }, el('span', { class: 'pname', text: 'show ' + (rule.id || 'rule ' + k) + ' on the terrain' }), maskBox));
    rules.append(el('details', { 'data-rule': rule.id || k }, el('summary', { text: (rule.id || 'rule ' + k) + (rule.biome ? ' → ' + rule.biome : '') }),
      genericFields(rule, (key, value) => editRecipe((x) => { if (value === undefined) delete x.rules[k][key]; else x.rules[k][key] = value; }, `rules[${k}].${key} = ${JSON.stringify(value)}`))));
  });
  if (!(Array.isArray(r.rules) && r.rules.length)) rules.append(el('p', { class: 'hint', text: 'no rules' }));
  box.append(rules);
  const layers = el('fieldset', { id: 'form-layers' }, el('legend', { text: 'Layers' }));
  for (const l of recipe.layers) {
    const input = el('input', { type: 'checkbox' });
    input.checked = l.enabled;
    input.dataset.layer = l.id;
    input.addEventListener('change', () => switchLayer(l, input.checked).then(showForms));
    layers.append(el('label', { class: 'param' }, el('span', { class: 'pname', text: l.name + ' (' + l.group + ')' }), input));
  }
  box.append(layers);
  const waterSet = el('fieldset', { id: 'form-water' }, el('legend', { text: 'Water' }));
  if (r.water && typeof r.water === 'object') waterSet.append(genericFields(r.water, sectionEdit(['water'], 'water')));
  else waterSet.append(el('p', { class: 'hint', text: 'no water section (water bodies are graph nodes: water_body, basin_water)' }));
  box.append(waterSet);
}

// ----- a rule's mask over the terrain (GET /api/rule_mask): where it matches and wins -----
async function showRuleMask(id) {
  editor.maskRule = id;
  if (!id) { show.mask = false; redraw(); tell('rule mask hidden'); return null; }
  const response = await api('rule_mask?rule=' + encodeURIComponent(id));
  const mask = new Uint8Array(await response.arrayBuffer());
  if (mask.length !== (terrain.cellsX + 1) * (terrain.cellsZ + 1)) return null;
  makeTexture(texture('mask'), gl.R8UI, terrain.cellsX + 1, terrain.cellsZ + 1, gl.RED_INTEGER, gl.UNSIGNED_BYTE, mask);
  show.mask = true;
  redraw();
  let wins = 0, matches = 0;
  for (const v of mask) { if (v === 255) wins++; if (v) matches++; }
  studio.ruleMask = { rule: id, wins, matches, samples: mask.length };
  tell(`rule ${id}: matches ${(matches / mask.length * 100).toFixed(1)}% of the samples, wins ${(wins / mask.length * 100).toFixed(1)}%`);
  return studio.ruleMask;
}
studio.showRuleMask = showRuleMask;

// ----- presets -----
async function showPresets() {
  const box = $('presets');
  if (!box) return;
  if (!editor.presets) editor.presets = (await (await api('presets')).json()).presets || [];
  box.textContent = '';
  box.append(el('div', { class: 'editor-message hint', text: editor.lastMessage }));
  for (const p of editor.presets) {
    // A project preset's picture is this recipe with the preset applied (its edits cleared), so
    // it follows the session (the revision in the address).
    const picture = el('img', { class: 'preset-picture', alt: p.builtin ? 'the ' + p.name + ' preset, shaded' : 'this recipe with the ' + p.name + ' preset applied, shaded',
      src: 'api/preset/picture?id=' + encodeURIComponent(p.id) + '&token=' + encodeURIComponent(token) + (p.builtin ? '' : '&revision=' + state.revision) });
    const card = el('div', { class: 'preset', 'data-preset': p.id }, picture,
      el('h3', { text: p.name + (p.builtin ? '' : ' (project)') }),
      el('p', { class: 'hint', text: p.description || '' }),
      el('p', { class: 'hint', text: 'sets: ' + (p.sets || []).join(', ') }));
    card.append(el('button', { 'data-choice': 'keep', text: 'Apply, keep my edits', onclick: () => applyPreset(p, 'keep') }),
      el('button', { 'data-choice': 'clear', text: 'Apply, clear my edits', onclick: () => applyPreset(p, 'clear') }));
    box.append(card);
  }
}
async function applyPreset(p, edits) {
  tell('applying ' + p.name + '...');
  const events = watchProgress();
  try {
    const reply = await (await api('preset', { method: 'POST', body: JSON.stringify({ id: p.id, edits }), headers: { 'Content-Type': 'application/json' } })).json();
    applyState(reply);
    editor.findings = reply.diagnostics || [];
    await reloadTerrain();
    await loadRecipe();
    loadCheck().catch(() => {});
    resetCamera();
    redraw();
    tell('applied the preset ' + p.name + (edits === 'clear' ? ' (edits cleared)' : ''));
  } catch (e) {
    if (e.status === 400 || e.status === 404 || e.status === 422) tell('preset not applied: ' + e.message.replace(/^preset: /, ''));
    else fail(e);
  } finally { events.close(); }
}

// ----- export -----
const exportKinds = {
  png: ['heightmap PNG (16-bit)', '.png'], r16: ['heightmap R16', '.r16'], geotiff: ['GeoTIFF (float32)', '.tif'],
  ter: ['BeamNG .ter', '.ter'], gltf: ['glTF mesh (.glb)', '.glb'], beamng: ['BeamNG level', ''],
  unity: ['Unity terrain (RAW + settings)', ''], cook: ['cooked payload (game)', ''],
};
function exportDefault(kind) {
  const stem = (studio.recipeName || 'terrain').replace(/\.(terrain\.)?json$/, '').replace(/\.scene$/, '');
  if (kind === 'beamng') return 'exports/levels/' + stem;
  if (kind === 'unity') return 'exports/unity/' + stem;
  if (kind === 'cook') return 'exports/cooked';
  return 'exports/' + stem + exportKinds[kind][1];
}
// The path (inside the project) asked in the page, then the server's verb; errors shown.
async function exportAs(kind, path, saved = false) {
  if (path == null) {
    const dialog = $('export-dialog');
    $('export-kind').textContent = exportKinds[kind][0];
    $('export-path').value = exportDefault(kind);
    studio.asking = 'export ' + kind;
    const choice = await new Promise((resolve) => {
      $('export-go').onclick = () => { dialog.close(); resolve('go'); };
      $('export-cancel').onclick = () => { dialog.close(); resolve('cancel'); };
      dialog.showModal();
    });
    studio.asking = null;
    if (choice !== 'go') { tell('export cancelled'); return false; }
    path = $('export-path').value.trim();
  }
  tell('exporting ' + exportKinds[kind][0] + ' to ' + path + '...');
  try {
    const reply = await (await api('export', { method: 'POST', body: JSON.stringify({ format: kind, path }), headers: { 'Content-Type': 'application/json' } })).json();
    tell('exported ' + reply.exported + ' (' + exportKinds[kind][0] + ')');
    studio.lastExport = reply;
    return true;
  } catch (e) {
    if (e.status === 409 && e.reply && e.reply.unsaved && !saved) {
      const choice = await ask(e.reply.error.replace(/^export: /, 'Export: ') + '.', [['save', 'Save, then export'], ['cancel', 'Cancel']]);
      if (choice !== 'save') { tell('export cancelled: the edits are not saved'); return false; }
      await save();
      if (state.dirty) return false;
      return exportAs(kind, path, true);
    }
    tell('export failed: ' + e.message.replace(/^export: /, ''));
    return false;
  }
}
studio.exportAs = exportAs;

// ----- the readout under the cursor: position, height, slope, biome, water -----
function readoutAt(p) {
  const box = $('readout');
  if (!box) return null;
  if (!p) { box.hidden = true; return null; }
  const [x, z] = p, h = heightAt(x, z);
  if (h == null) { box.hidden = true; return null; }
  const dx = terrain.cellX, dz = terrain.cellZ;
  const hx = ((heightAt(Math.min(x + dx, terrain.sizeX), z) ?? h) - (heightAt(Math.max(x - dx, 0), z) ?? h)) / (2 * dx);
  const hz = ((heightAt(x, Math.min(z + dz, terrain.sizeZ)) ?? h) - (heightAt(x, Math.max(z - dz, 0)) ?? h)) / (2 * dz);
  const slope = Math.atan(Math.hypot(hx, hz)) * 180 / Math.PI;
  const i = Math.round(x / dx), j = Math.round(z / dz), k = j * (terrain.cellsX + 1) + i;
  const bi = terrain.biomes ? terrain.biomes[k] : null;
  const biome = bi != null && recipe.biomes[bi] ? recipe.biomes[bi].name : bi != null ? '#' + bi : '?';
  let wet = null;
  if (water.has && water.grid && water.grid[2 * k + 1] === 1) wet = water.grid[2 * k] - h;
  // Until the exact heights replace the first frame's quantised ones, the height is approximate.
  const out = { x, z, height: h, slope, biome, water: wet, exact: terrain.exact };
  box.hidden = false;
  box.textContent = `x ${x.toFixed(1)}  z ${z.toFixed(1)}  height ${terrain.exact ? '' : '≈'}${h.toFixed(2)} m  slope ${slope.toFixed(1)}°  biome ${biome}` +
    (wet != null ? `  water ${Math.max(0, wet).toFixed(2)} m deep` : '');
  studio.readout = out;
  return out;
}
studio.readoutAt = readoutAt;
canvas.addEventListener('pointermove', (e) => { if (!drag && terrain.heights) readoutAt(pick(e)); });
canvas.addEventListener('pointerleave', () => { $('readout').hidden = true; });

// ----- copy, paste and delete in the graph (keys) -----
function copyNode() {
  const g = graphOf(editor.recipe), n = g && editor.selected && nodeById(g, editor.selected);
  if (!n) { tell('copy: select a node first'); return null; }
  editor.clipboard = JSON.parse(JSON.stringify(n));
  tell('copied ' + n.id);
  return editor.clipboard;
}
function pasteNode() {
  const c = editor.clipboard;
  if (!c) { tell('paste: nothing copied'); return Promise.resolve(false); }
  const g = graphOf(editor.recipe);
  let id = c.id, k = 1;
  while (g && nodeById(g, id)) id = c.id.replace(/_copy\d*$/, '') + '_copy' + (k++ > 1 ? k - 1 : '');
  const node = JSON.parse(JSON.stringify(c));
  node.id = id;
  delete node._auto;
  const at = posOf(c);
  node.position = [at[0] + 30, at[1] + 30];
  editor.selected = id;
  return editRecipe((r) => {
    if (!graphOf(r)) return 'the recipe has no graph: start one first';
    // Its links come along when their sources exist; nothing links to the copy yet.
    for (const [pin, link] of Object.entries(node.inputs || {})) if (!link || !nodeById(r.graph, link.node)) delete node.inputs[pin];
    r.graph.nodes.push(node);
  }, `pasted ${id}`);
}
studio.copyNode = copyNode;
studio.pasteNode = pasteNode;
window.addEventListener('keydown', (e) => {
  if (editor.tab !== 'graph') return;
  const t = e.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) return;
  const k = e.key.toLowerCase();
  if ((e.ctrlKey || e.metaKey) && k === 'c') { e.preventDefault(); copyNode(); }
  if ((e.ctrlKey || e.metaKey) && k === 'v') { e.preventDefault(); pasteNode(); }
  if ((k === 'delete' || k === 'backspace') && editor.selected) { e.preventDefault(); removeNode(editor.selected); }
});

// ----- tabs -----
function showTab(tab) {
  editor.tab = tab;
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('on', b.dataset.tab === tab);
  $('editor').hidden = tab === 'terrain';
  for (const p of document.querySelectorAll('#editor > .pane')) p.hidden = p.dataset.pane !== tab;
  if (tab === 'graph') renderGraph();
  if (tab === 'recipe') showForms();
  if (tab === 'presets') showPresets().catch(fail);
  if (tab === 'terrain') redraw();
}
studio.showTab = showTab;
for (const b of document.querySelectorAll('#tabs button')) b.onclick = () => showTab(b.dataset.tab);
$('export').onchange = () => {
  const kind = $('export').value;
  $('export').value = '';
  if (kind) exportAs(kind).catch(fail);
};
$('graph-start').onclick = () => startGraph();
// Panning (background drag) and zooming (wheel) the graph canvas.
(() => {
  const box = $('graph-svg');
  let pan = null;
  box.addEventListener('pointerdown', (e) => {
    if (editor.pendingOut) { editor.pendingOut = null; tell('connect cancelled'); renderGraph(); }
    pan = { x: e.clientX, y: e.clientY };
  });
  window.addEventListener('pointermove', (e) => {
    if (!pan) return;
    editor.view.x += e.clientX - pan.x;
    editor.view.y += e.clientY - pan.y;
    pan = { x: e.clientX, y: e.clientY };
    $('graph-world').setAttribute('transform', `translate(${editor.view.x},${editor.view.y}) scale(${editor.view.zoom})`);
  });
  window.addEventListener('pointerup', () => { pan = null; });
  box.addEventListener('wheel', (e) => {
    e.preventDefault();
    editor.view.zoom = Math.max(0.25, Math.min(2.5, editor.view.zoom * (e.deltaY < 0 ? 1.1 : 1 / 1.1)));
    renderGraph();
  }, { passive: false });
})();

// Every recipe load (an edit here, undo, another page, a generation) refreshes the editors.
studio.onRecipe = (r) => {
  editor.recipe = r;
  // The shown rule mask follows the terrain (or goes with its rule).
  if (editor.maskRule) {
    if ((r.rules || []).some((x) => x.id === editor.maskRule)) showRuleMask(editor.maskRule).catch(() => {});
    else showRuleMask(null);
  }
  const g = graphOf(r);
  if (editor.selected && !(g && nodeById(g, editor.selected))) editor.selected = null;
  if (editor.tab === 'graph') renderGraph();
  if (editor.tab === 'recipe') showForms();
};
(async () => {
  const response = await optional('types');
  editor.types = response ? (await response.json()).types || [] : [];
  for (const t of editor.types) editor.byType[t.name] = t;
  if (editor.tab === 'graph') renderGraph();
})().catch(fail);
