// terrane studio: the editor page: WebGL2 terrain, orbit camera, brush strokes over the JSON API.
'use strict';

const token = new URLSearchParams(location.search).get('token') || '';
const $ = (id) => document.getElementById(id);
const canvas = $('view');
const gl = canvas.getContext('webgl2', { antialias: true });

// The terrain as the server sent it: heights[j * (cellsX + 1) + i], terrain-local x = i * cellX.
const terrain = { cellsX: 0, cellsZ: 0, sizeX: 1, sizeZ: 1, seaLevel: -1e30, heights: null, lo: 0, hi: 1 };
const camera = { yaw: 0.6, pitch: 0.7, dist: 1, fov: 0.8 };
let texture = null, biomeTexture = null, paletteTexture = null, mesh = null, program = null, brushAt = null, dirty = true, busy = Promise.resolve();

function setStatus(text) { $('status').textContent = text; }

// One request at a time: edits apply in the order they were made.
function api(path, options = {}) {
  const run = async () => {
    const headers = Object.assign({ 'X-Terrane-Token': token }, options.headers || {});
    const response = await fetch('api/' + path, Object.assign({}, options, { headers }));
    if (!response.ok) {
      let message = response.status + ' ' + response.statusText;
      try { message = (await response.json()).error || message; } catch (e) { /* not JSON */ }
      throw new Error(path + ': ' + message);
    }
    return response;
  };
  const result = busy.then(run, run);
  busy = result.catch(() => {});
  return result;
}

function fail(error) {
  console.error(error);
  setStatus(String(error.message || error));
  document.title = 'terrane studio: error';
}

// ----- matrices (column-major) -----
function perspective(fovy, aspect, near, far) {
  const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
}
function lookAt(eye, target, up) {
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; };
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const z = norm(sub(eye, target)), x = norm(cross(up, z)), y = cross(z, x);
  return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
}
function multiply(a, b) {
  const out = new Array(16).fill(0);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) for (let k = 0; k < 4; k++) out[c * 4 + r] += a[k * 4 + r] * b[c * 4 + k];
  return out;
}
function invert(m) {
  const inv = new Array(16);
  inv[0] = m[5] * m[10] * m[15] - m[5] * m[11] * m[14] - m[9] * m[6] * m[15] + m[9] * m[7] * m[14] + m[13] * m[6] * m[11] - m[13] * m[7] * m[10];
  inv[4] = -m[4] * m[10] * m[15] + m[4] * m[11] * m[14] + m[8] * m[6] * m[15] - m[8] * m[7] * m[14] - m[12] * m[6] * m[11] + m[12] * m[7] * m[10];
  inv[8] = m[4] * m[9] * m[15] - m[4] * m[11] * m[13] - m[8] * m[5] * m[15] + m[8] * m[7] * m[13] + m[12] * m[5] * m[11] - m[12] * m[7] * m[9];
  inv[12] = -m[4] * m[9] * m[14] + m[4] * m[10] * m[13] + m[8] * m[5] * m[14] - m[8] * m[6] * m[13] - m[12] * m[5] * m[10] + m[12] * m[6] * m[9];
  inv[1] = -m[1] * m[10] * m[15] + m[1] * m[11] * m[14] + m[9] * m[2] * m[15] - m[9] * m[3] * m[14] - m[13] * m[2] * m[11] + m[13] * m[3] * m[10];
  inv[5] = m[0] * m[10] * m[15] - m[0] * m[11] * m[14] - m[8] * m[2] * m[15] + m[8] * m[3] * m[14] + m[12] * m[2] * m[11] - m[12] * m[3] * m[10];
  inv[9] = -m[0] * m[9] * m[15] + m[0] * m[11] * m[13] + m[8] * m[1] * m[15] - m[8] * m[3] * m[13] - m[12] * m[1] * m[11] + m[12] * m[3] * m[9];
  inv[13] = m[0] * m[9] * m[14] - m[0] * m[10] * m[13] - m[8] * m[1] * m[14] + m[8] * m[2] * m[13] + m[12] * m[1] * m[10] - m[12] * m[2] * m[9];
  inv[2] = m[1] * m[6] * m[15] - m[1] * m[7] * m[14] - m[5] * m[2] * m[15] + m[5] * m[3] * m[14] + m[13] * m[2] * m[7] - m[13] * m[3] * m[6];
  inv[6] = -m[0] * m[6] * m[15] + m[0] * m[7] * m[14] + m[4] * m[2] * m[15] - m[4] * m[3] * m[14] - m[12] * m[2] * m[7] + m[12] * m[3] * m[6];
  inv[10] = m[0] * m[5] * m[15] - m[0] * m[7] * m[13] - m[4] * m[1] * m[15] + m[4] * m[3] * m[13] + m[12] * m[1] * m[7] - m[12] * m[3] * m[5];
  inv[14] = -m[0] * m[5] * m[14] + m[0] * m[6] * m[13] + m[4] * m[1] * m[14] - m[4] * m[2] * m[13] - m[12] * m[1] * m[6] + m[12] * m[2] * m[5];
  inv[3] = -m[1] * m[6] * m[11] + m[1] * m[7] * m[10] + m[5] * m[2] * m[11] - m[5] * m[3] * m[10] - m[9] * m[2] * m[7] + m[9] * m[3] * m[6];
  inv[7] = m[0] * m[6] * m[11] - m[0] * m[7] * m[10] - m[4] * m[2] * m[11] + m[4] * m[3] * m[10] + m[8] * m[2] * m[7] - m[8] * m[3] * m[6];
  inv[11] = -m[0] * m[5] * m[11] + m[0] * m[7] * m[9] + m[4] * m[1] * m[11] - m[4] * m[3] * m[9] - m[8] * m[1] * m[7] + m[8] * m[3] * m[5];
  inv[15] = m[0] * m[5] * m[10] - m[0] * m[6] * m[9] - m[4] * m[1] * m[10] + m[4] * m[2] * m[9] + m[8] * m[1] * m[6] - m[8] * m[2] * m[5];
  const det = m[0] * inv[0] + m[1] * inv[4] + m[2] * inv[8] + m[3] * inv[12];
  return inv.map((v) => v / det);
}

// ----- GL -----
const vertexSource = `#version 300 es
precision highp float; precision highp sampler2D; precision highp usampler2D;
in vec2 a_ij;
uniform sampler2D u_h; uniform usampler2D u_b; uniform sampler2D u_pal; uniform ivec2 u_cells; uniform vec2 u_cell; uniform vec2 u_size;
uniform float u_mid; uniform mat4 u_mvp;
out vec3 v_normal; out float v_height; out vec2 v_xz; out vec3 v_biome;
float H(ivec2 p) { return texelFetch(u_h, clamp(p, ivec2(0), u_cells), 0).r; }
void main() {
  ivec2 p = ivec2(a_ij);
  float h = H(p);
  float dx = H(p + ivec2(1, 0)) - H(p - ivec2(1, 0)), dz = H(p + ivec2(0, 1)) - H(p - ivec2(0, 1));
  v_normal = normalize(vec3(-dx / (2.0 * u_cell.x), 1.0, -dz / (2.0 * u_cell.y)));
  v_height = h;
  v_biome = texelFetch(u_pal, ivec2(int(texelFetch(u_b, p, 0).r), 0), 0).rgb;
  v_xz = a_ij * u_cell;
  gl_Position = u_mvp * vec4(v_xz.x - u_size.x * 0.5, h - u_mid, v_xz.y - u_size.y * 0.5, 1.0);
}`;
const fragmentSource = `#version 300 es
precision highp float;
in vec3 v_normal; in float v_height; in vec2 v_xz; in vec3 v_biome;
uniform float u_lo, u_hi, u_sea; uniform vec3 u_brush;
out vec4 colour;
void main() {
  vec3 n = normalize(v_normal);
  float shade = 0.3 + 0.7 * max(dot(n, normalize(vec3(-0.5, 0.8, -0.35))), 0.0);
  float t = clamp((v_height - u_lo) / max(u_hi - u_lo, 1e-6), 0.0, 1.0);
  // The sample's biome colour, a little lighter with height.
  vec3 tint = v_biome * (0.85 + 0.3 * t);
  tint = mix(tint, vec3(0.45, 0.45, 0.42), smoothstep(0.6, 0.9, 1.0 - n.y));
  if (v_height < u_sea) tint = mix(tint, vec3(0.15, 0.35, 0.6), 0.7);
  vec3 c = tint * shade;
  if (u_brush.z > 0.0) {
    float d = abs(distance(v_xz, u_brush.xy) - u_brush.z);
    c = mix(c, vec3(1.0, 0.85, 0.2), 1.0 - smoothstep(0.0, u_brush.z * 0.04 + 0.5, d));
  }
  colour = vec4(c, 1.0);
}`;

function compile(type, source) {
  const shader = gl.createShader(type);
  gl.shaderSource(shader, source);
  gl.compileShader(shader);
  if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(shader));
  return shader;
}
function makeProgram() {
  const p = gl.createProgram();
  gl.attachShader(p, compile(gl.VERTEX_SHADER, vertexSource));
  gl.attachShader(p, compile(gl.FRAGMENT_SHADER, fragmentSource));
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
  return p;
}

// A grid of at most 512 x 512 cells that reads its heights from the texture.
function makeMesh() {
  const stepX = Math.max(1, Math.ceil(terrain.cellsX / 512)), stepZ = Math.max(1, Math.ceil(terrain.cellsZ / 512));
  const xs = [], zs = [];
  for (let i = 0; i < terrain.cellsX; i += stepX) xs.push(i);
  xs.push(terrain.cellsX);
  for (let j = 0; j < terrain.cellsZ; j += stepZ) zs.push(j);
  zs.push(terrain.cellsZ);
  const vertices = new Float32Array(xs.length * zs.length * 2);
  let v = 0;
  for (const j of zs) for (const i of xs) { vertices[v++] = i; vertices[v++] = j; }
  const indices = new Uint32Array((xs.length - 1) * (zs.length - 1) * 6);
  let k = 0;
  for (let b = 0; b + 1 < zs.length; b++) for (let a = 0; a + 1 < xs.length; a++) {
    const p = b * xs.length + a, q = p + xs.length;
    indices.set([p, q, p + 1, p + 1, q, q + 1], k);
    k += 6;
  }
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  const vb = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, vb);
  gl.bufferData(gl.ARRAY_BUFFER, vertices, gl.STATIC_DRAW);
  const loc = gl.getAttribLocation(program, 'a_ij');
  gl.enableVertexAttribArray(loc);
  gl.vertexAttribPointer(loc, 2, gl.FLOAT, false, 0, 0);
  const ib = gl.createBuffer();
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ib);
  gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, indices, gl.STATIC_DRAW);
  gl.bindVertexArray(null);
  return { vao, count: indices.length };
}

function viewProjection() {
  const aspect = canvas.width / Math.max(canvas.height, 1);
  const c = Math.cos(camera.pitch);
  const eye = [camera.dist * c * Math.sin(camera.yaw), camera.dist * Math.sin(camera.pitch), camera.dist * c * Math.cos(camera.yaw)];
  return multiply(perspective(camera.fov, aspect, camera.dist / 1000, camera.dist * 10), lookAt(eye, [0, 0, 0], [0, 1, 0]));
}

function draw() {
  dirty = false;
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(canvas.clientWidth * dpr), h = Math.round(canvas.clientHeight * dpr);
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  gl.viewport(0, 0, canvas.width, canvas.height);
  gl.clearColor(0.11, 0.125, 0.14, 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  if (!mesh) return;
  gl.enable(gl.DEPTH_TEST);
  gl.useProgram(program);
  const u = (name) => gl.getUniformLocation(program, name);
  gl.uniformMatrix4fv(u('u_mvp'), false, viewProjection());
  gl.uniform2i(u('u_cells'), terrain.cellsX, terrain.cellsZ);
  gl.uniform2f(u('u_cell'), terrain.sizeX / terrain.cellsX, terrain.sizeZ / terrain.cellsZ);
  gl.uniform2f(u('u_size'), terrain.sizeX, terrain.sizeZ);
  gl.uniform1f(u('u_mid'), (terrain.lo + terrain.hi) / 2);
  gl.uniform1f(u('u_lo'), terrain.lo);
  gl.uniform1f(u('u_hi'), terrain.hi);
  gl.uniform1f(u('u_sea'), terrain.seaLevel);
  gl.uniform3f(u('u_brush'), brushAt ? brushAt[0] : 0, brushAt ? brushAt[1] : 0, brushAt ? radius() : 0);
  gl.activeTexture(gl.TEXTURE0);
  gl.bindTexture(gl.TEXTURE_2D, texture);
  gl.uniform1i(u('u_h'), 0);
  gl.activeTexture(gl.TEXTURE1);
  gl.bindTexture(gl.TEXTURE_2D, biomeTexture);
  gl.uniform1i(u('u_b'), 1);
  gl.activeTexture(gl.TEXTURE2);
  gl.bindTexture(gl.TEXTURE_2D, paletteTexture);
  gl.uniform1i(u('u_pal'), 2);
  gl.bindVertexArray(mesh.vao);
  gl.drawElements(gl.TRIANGLES, mesh.count, gl.UNSIGNED_INT, 0);
  gl.bindVertexArray(null);
}
function redraw() { if (!dirty) { dirty = true; requestAnimationFrame(draw); } }

// ----- terrain data -----
async function loadHeights() {
  const response = await api('heights');
  const cells = response.headers.get('X-Terrane-Cells').split(',').map(Number);
  const size = response.headers.get('X-Terrane-Size').split(',').map(Number);
  Object.assign(terrain, { cellsX: cells[0], cellsZ: cells[1], sizeX: size[0], sizeZ: size[1] });
  terrain.seaLevel = Number(response.headers.get('X-Terrane-Sea-Level'));
  terrain.heights = new Float32Array(await response.arrayBuffer());
  let lo = Infinity, hi = -Infinity;
  for (const h of terrain.heights) { if (h < lo) lo = h; if (h > hi) hi = h; }
  Object.assign(terrain, { lo, hi });
  camera.dist = Math.max(terrain.sizeX, terrain.sizeZ) * 1.3;
  if (!texture) texture = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D, texture);
  gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
  gl.texImage2D(gl.TEXTURE_2D, 0, gl.R32F, terrain.cellsX + 1, terrain.cellsZ + 1, 0, gl.RED, gl.FLOAT, terrain.heights);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
  await loadBiomes();
  mesh = makeMesh();
  redraw();
}

function nearestTexture(tex) {
  gl.bindTexture(gl.TEXTURE_2D, tex);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
}

// Biome index per sample (R8UI) and the biomes' colours (a 256 x 1 palette).
async function loadBiomes() {
  const response = await api('biomes');
  const colours = (response.headers.get('X-Terrane-Biome-Colors') || '').split(';');
  const palette = new Uint8Array(256 * 4).fill(128);
  colours.forEach((c, k) => { if (c) palette.set([...c.split(',').map(Number), 255], k * 4); });
  const labels = new Uint8Array(await response.arrayBuffer());
  if (!biomeTexture) { biomeTexture = gl.createTexture(); paletteTexture = gl.createTexture(); }
  nearestTexture(biomeTexture);
  gl.texImage2D(gl.TEXTURE_2D, 0, gl.R8UI, terrain.cellsX + 1, terrain.cellsZ + 1, 0, gl.RED_INTEGER, gl.UNSIGNED_BYTE, labels);
  nearestTexture(paletteTexture);
  gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, 256, 1, 0, gl.RGBA, gl.UNSIGNED_BYTE, palette);
}

function decodeFloats(b64) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new Float32Array(bytes.buffer);
}

// An edit's reply: only the chunks it changed are copied and uploaded.
function applyEdit(reply) {
  gl.bindTexture(gl.TEXTURE_2D, texture);
  for (const c of reply.chunks) {
    const data = decodeFloats(c.heights);
    for (let j = 0; j < c.nz; j++)
      terrain.heights.set(data.subarray(j * c.nx, (j + 1) * c.nx), (c.j0 + j) * (terrain.cellsX + 1) + c.i0);
    gl.bindTexture(gl.TEXTURE_2D, texture);
    gl.texSubImage2D(gl.TEXTURE_2D, 0, c.i0, c.j0, c.nx, c.nz, gl.RED, gl.FLOAT, data);
    if (c.biomes) {
      gl.bindTexture(gl.TEXTURE_2D, biomeTexture);
      gl.texSubImage2D(gl.TEXTURE_2D, 0, c.i0, c.j0, c.nx, c.nz, gl.RED_INTEGER, gl.UNSIGNED_BYTE,
        Uint8Array.from(atob(c.biomes), (ch) => ch.charCodeAt(0)));
    }
  }
  $('undo').disabled = !reply.can_undo;
  $('redo').disabled = !reply.can_redo;
  setStatus(reply.chunks.length + ' chunk(s) changed');
  redraw();
}

async function loadCheck() {
  const report = await (await api('check')).json();
  const list = $('diagnostics');
  list.textContent = '';
  for (const d of report.diagnostics) {
    const li = document.createElement('li');
    li.className = d.severity;
    li.textContent = (d.line ? d.line + ':' + d.column + ' ' : '') + d.severity + ': ' + d.message + ' [' + d.check + ']';
    list.appendChild(li);
  }
  if (!report.diagnostics.length) list.innerHTML = '<li>no findings</li>';
}

// ----- picking -----
function heightAt(x, z) {
  const fi = x / terrain.sizeX * terrain.cellsX, fj = z / terrain.sizeZ * terrain.cellsZ;
  if (!(fi >= 0 && fj >= 0 && fi <= terrain.cellsX && fj <= terrain.cellsZ)) return null;
  const i = Math.min(Math.floor(fi), terrain.cellsX - 1), j = Math.min(Math.floor(fj), terrain.cellsZ - 1);
  const u = fi - i, v = fj - j, row = terrain.cellsX + 1, H = terrain.heights;
  const a = H[j * row + i], b = H[j * row + i + 1], c = H[(j + 1) * row + i], d = H[(j + 1) * row + i + 1];
  return (a * (1 - u) + b * u) * (1 - v) + (c * (1 - u) + d * u) * v;
}

// The terrain-local [x, z] under the pointer, or null: the ray marched, then bisected.
function pick(event) {
  const rect = canvas.getBoundingClientRect();
  const nx = (event.clientX - rect.left) / rect.width * 2 - 1, ny = 1 - (event.clientY - rect.top) / rect.height * 2;
  const inv = invert(viewProjection());
  const un = (z) => { const p = [nx, ny, z, 1], o = [0, 0, 0, 0];
    for (let r = 0; r < 4; r++) for (let k = 0; k < 4; k++) o[r] += inv[k * 4 + r] * p[k];
    return [o[0] / o[3], o[1] / o[3], o[2] / o[3]]; };
  const a = un(-1), b = un(1), mid = (terrain.lo + terrain.hi) / 2;
  const at = (t) => [a[0] + (b[0] - a[0]) * t + terrain.sizeX / 2, a[1] + (b[1] - a[1]) * t + mid, a[2] + (b[2] - a[2]) * t + terrain.sizeZ / 2];
  const length = Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
  const steps = Math.min(20000, Math.ceil(length / (Math.min(terrain.sizeX / terrain.cellsX, terrain.sizeZ / terrain.cellsZ) * 2)));
  let prev = 0;
  for (let s = 1; s <= steps; s++) {
    const t = s / steps, p = at(t), h = heightAt(p[0], p[2]);
    if (h !== null && p[1] <= h) {
      let lo = prev, hi = t;
      for (let k = 0; k < 24; k++) {
        const m = (lo + hi) / 2, q = at(m), hq = heightAt(q[0], q[2]);
        if (hq !== null && q[1] <= hq) hi = m; else lo = m;
      }
      const q = at(hi);
      return [q[0], q[2]];
    }
    prev = t;
  }
  return null;
}

// ----- tools, biomes and layers -----
// Each tool's stroke type and the layer group its strokes go to (docs/recipes.md, "Strokes").
const tools = {
  raise: { type: 'raise', group: 'sculpt' }, lower: { type: 'lower', group: 'sculpt' },
  flatten: { type: 'flatten', group: 'sculpt' }, smooth: { type: 'smooth', group: 'sculpt' },
  region: { type: 'region', group: 'biomes' }, protect: { type: 'protect', group: 'protection' },
  exclusion: { type: 'exclusion', group: 'exclusions' }, erase: { type: 'exclusion', group: 'exclusions', mode: 'erase' },
};
// A recipe without "layers" has these five, ids equal to their groups.
const defaultLayers = ['generation', 'biomes', 'sculpt', 'protection', 'exclusions'];
const recipe = { layers: [], biomes: [], biome: null, targets: {} };
const MAX_BODY = 1048576; // the server's request body limit

const radius = () => Number($('radius').value);
const currentTool = () => tools[$('tool').value] || null;
function strokeStrength(type) {
  const s = Number($('strength').value);
  // raise/lower take metres per stamp; a painted region paints fully (a sample takes the biome
  // only where strength x weight reaches 0.5, so less would paint little or nothing); every
  // other brush a blend 0..1.
  if (type === 'region') return 1;
  return type === 'raise' || type === 'lower' ? s : Math.min(1, s / 10);
}

async function loadRecipe() {
  const r = await (await api('recipe')).json();
  const layers = Array.isArray(r.layers) && r.layers.length ? r.layers : defaultLayers.map((id) => ({ id }));
  recipe.layers = layers.map((l) => ({ id: l.id, name: l.name || l.id, group: l.group || l.id, enabled: l.enabled !== false }));
  recipe.biomes = Object.keys(r.biomes || {}).map((name) => ({ name, color: r.biomes[name].color || [0.5, 0.5, 0.5, 1] }));
  if (!recipe.biomes.some((b) => b.name === recipe.biome)) recipe.biome = recipe.biomes.length ? recipe.biomes[0].name : null;
  for (const group of Object.keys(recipe.targets))
    if (!recipe.layers.some((l) => l.id === recipe.targets[group] && l.group === group)) delete recipe.targets[group];
  for (const l of recipe.layers) if (!(l.group in recipe.targets)) recipe.targets[l.group] = l.id;
  showBiomes();
  showLayers();
}

function showBiomes() {
  const list = $('biomes');
  list.textContent = '';
  for (const b of recipe.biomes) {
    const li = document.createElement('li'), input = document.createElement('input'), swatch = document.createElement('span');
    input.type = 'radio';
    input.name = 'biome';
    input.value = b.name;
    input.checked = b.name === recipe.biome;
    input.onchange = () => { recipe.biome = b.name; $('tool').value = 'region'; toolChanged(); };
    swatch.className = 'swatch';
    const c = b.color.slice(0, 3).map((v) => Math.round(Math.min(1, Math.max(0, v)) * 255));
    swatch.style.backgroundColor = 'rgb(' + c.join(',') + ')';
    const label = document.createElement('label');
    label.append(input, swatch, ' ' + b.name);
    li.appendChild(label);
    list.appendChild(li);
  }
}

// The recipe's layers: the checked one of the tool's group takes its strokes.
function showLayers() {
  const list = $('layers'), tool = currentTool();
  list.textContent = '';
  for (const l of recipe.layers) {
    const li = document.createElement('li'), target = document.createElement('input'), on = document.createElement('input');
    li.className = l.enabled ? '' : 'off';
    target.type = 'radio';
    target.name = 'layer';
    target.value = l.id;
    target.title = 'strokes of this group go here';
    target.disabled = !tool || tool.group !== l.group;
    target.checked = !target.disabled && recipe.targets[l.group] === l.id;
    target.onchange = () => { recipe.targets[l.group] = l.id; };
    on.type = 'checkbox';
    on.checked = l.enabled;
    on.disabled = true;
    on.title = l.enabled ? 'enabled' : 'disabled: generation skips its strokes';
    const name = document.createElement('span'), group = document.createElement('span');
    name.textContent = l.name;
    group.className = 'group';
    group.textContent = l.group;
    li.append(target, on, name, group);
    list.appendChild(li);
  }
}

// The strength the current tool sends ('-' for orbit and protect, which send none).
function showStrength() {
  const tool = currentTool();
  $('strength-v').textContent = tool && tool.type !== 'protect' ? String(strokeStrength(tool.type)) : '-';
}
function toolChanged() {
  showStrength();
  showLayers();
  redraw();
}

// The grid samples within the radius of any stamp, at their current heights.
function protectSamples(points) {
  const r = radius(), cx = terrain.sizeX / terrain.cellsX, cz = terrain.sizeZ / terrain.cellsZ, row = terrain.cellsX + 1;
  const keys = new Set();
  for (const [x, z] of points) {
    const i0 = Math.max(0, Math.ceil((x - r) / cx)), i1 = Math.min(terrain.cellsX, Math.floor((x + r) / cx));
    const j0 = Math.max(0, Math.ceil((z - r) / cz)), j1 = Math.min(terrain.cellsZ, Math.floor((z + r) / cz));
    for (let j = j0; j <= j1; j++) for (let i = i0; i <= i1; i++)
      if (Math.hypot(i * cx - x, j * cz - z) <= r) keys.add(j * row + i);
  }
  return [...keys].sort((a, b) => a - b).map((k) => [k % row, Math.floor(k / row), terrain.heights[k]]);
}

// The stroke a drag makes, in the recipe's own format (docs/recipes.md, "Strokes").
function buildStroke(d) {
  const tool = tools[d.kind], layer = recipe.targets[tool.group];
  if (tool.type === 'protect')
    return { type: 'protect', layer, grid: [terrain.cellsX, terrain.cellsZ], samples: protectSamples(d.points) };
  const stroke = { type: tool.type, layer, radius: radius(), strength: strokeStrength(tool.type), falloff: Number($('falloff').value), points: d.points };
  if (tool.type === 'flatten') stroke.target_height = d.target;
  if (tool.type === 'region') stroke.biome = recipe.biome;
  if (tool.mode) stroke.mode = tool.mode;
  return stroke;
}

// ----- interaction -----
let drag = null;

canvas.addEventListener('contextmenu', (e) => e.preventDefault());
canvas.addEventListener('pointerdown', (e) => {
  const tool = $('tool').value;
  canvas.setPointerCapture(e.pointerId);
  if (e.button === 2 || !tools[tool] || !terrain.heights) { drag = { orbit: true, x: e.clientX, y: e.clientY }; return; }
  const p = pick(e);
  if (!p) { drag = { orbit: true, x: e.clientX, y: e.clientY }; return; }
  drag = { orbit: false, kind: tool, points: [p], target: heightAt(p[0], p[1]) };
});
canvas.addEventListener('pointermove', (e) => {
  if (drag && drag.orbit) {
    camera.yaw -= (e.clientX - drag.x) * 0.005;
    camera.pitch = Math.max(0.05, Math.min(1.5, camera.pitch + (e.clientY - drag.y) * 0.005));
    drag.x = e.clientX;
    drag.y = e.clientY;
    redraw();
    return;
  }
  if (!terrain.heights) return;
  const p = pick(e);
  brushAt = p;
  if (drag && p) {
    const last = drag.points[drag.points.length - 1];
    if (Math.hypot(p[0] - last[0], p[1] - last[1]) >= radius() * 0.25) drag.points.push(p);
  }
  redraw();
});
canvas.addEventListener('pointerup', () => {
  const d = drag;
  drag = null;
  if (!d || d.orbit) return;
  if (d.kind === 'region' && !recipe.biome) { setStatus('the recipe has no biome to paint'); return; }
  const body = JSON.stringify(buildStroke(d));
  if (body.length > MAX_BODY) { setStatus(d.kind + ': the stroke is ' + body.length + ' bytes, over the 1 MiB a request takes; use a smaller radius'); return; }
  setStatus('applying ' + d.kind + '...');
  api('stroke', { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })
    .then((r) => r.json()).then(applyEdit).catch(fail);
});
canvas.addEventListener('wheel', (e) => {
  e.preventDefault();
  camera.dist *= Math.exp(e.deltaY * 0.001);
  redraw();
}, { passive: false });
window.addEventListener('resize', redraw);

$('undo').onclick = () => api('undo', { method: 'POST' }).then((r) => r.json()).then(applyEdit).catch(fail);
$('redo').onclick = () => api('redo', { method: 'POST' }).then((r) => r.json()).then(applyEdit).catch(fail);
$('save').onclick = () => api('save', { method: 'POST' }).then((r) => r.json())
  .then((r) => setStatus('saved ' + r.saved)).catch(fail);
$('generate').onclick = () => {
  setStatus('generating...');
  const events = watchProgress();
  api('generate', { method: 'POST' }).then(loadHeights).then(loadRecipe).then(loadCheck)
    .then(() => { $('undo').disabled = $('redo').disabled = true; setStatus('generated'); })
    .catch(fail).finally(() => events.close());
};
for (const id of ['radius', 'falloff']) {
  const show = () => { $(id + '-v').textContent = $(id).value; redraw(); };
  $(id).addEventListener('input', show);
  show();
}
$('strength').addEventListener('input', showStrength);
$('tool').addEventListener('change', toolChanged);

// Generation progress as Server-Sent Events, streamed only while a generation runs.
function watchProgress() {
  const events = new EventSource('api/events?token=' + encodeURIComponent(token));
  events.addEventListener('progress', (e) => {
    const p = JSON.parse(e.data);
    setStatus('generating: ' + p.stage + ' ' + Math.round(p.done * 100) + '%');
  });
  return events;
}

async function start() {
  if (!gl) throw new Error('this browser has no WebGL2');
  program = makeProgram();
  await loadHeights();
  await loadRecipe();
  toolChanged();
  await loadCheck();
  draw();
  setStatus(terrain.cellsX + ' x ' + terrain.cellsZ + ' cells');
  document.title = 'terrane studio: ready';
}
start().catch(fail);
