// terrane studio: the editor page: WebGL2 chunked-LOD terrain, water, scatter proxies, brush strokes over the JSON API.
'use strict';

const params = new URLSearchParams(location.search);
const token = params.get('token') || '';
const $ = (id) => document.getElementById(id);
const canvas = $('view');
const gl = canvas.getContext('webgl2', { antialias: params.get('aa') !== '0' });

// The terrain as the server sent it: heights[j * (cellsX + 1) + i], terrain-local x = i * cellX.
const terrain = {
  cellsX: 0, cellsZ: 0, sizeX: 1, sizeZ: 1, cellX: 1, cellZ: 1, seaLevel: -1e30, heights: null, lo: 0, hi: 1,
  chunkCells: 32, chunksX: 0, chunksZ: 0, levels: 1, lod: null, lodFromServer: false, cmin: null, cmax: null,
  biomes: null, palette: null,
  // The textures' strides: 1, or (the first frame, coarse) every heightStride-th sample.
  heightStride: 1, biomeStride: 1, coarse: false,
};
// What is drawn: water surfaces and scatter proxies can be hidden (keys V and I).
const show = { water: true, instances: params.get('instances') !== '0', minimap: true, contours: false, mask: false,
  materials: params.get('materials') !== '0', blending: params.get('blending') !== '0', maps: params.get('maps') !== '0',
  // A Material's normal, roughness and emissive maps, each on by default (the lighting they give).
  normal: params.get('normal') !== '0', roughness: params.get('roughness') !== '0', emissive: params.get('emissive') !== '0' };
// Orbit: a target, yaw, pitch and distance; fly: a position with yaw and pitch (key F switches).
const camera = { mode: 'orbit', target: [0, 0, 0], yaw: 0.6, pitch: 0.7, dist: 1, fov: 0.8, pos: [0, 0, 0] };
let lodErrorPixels = Number(params.get('lod_error_pixels')) > 0 ? Number(params.get('lod_error_pixels')) : 2;
let textures = {}, programs = {}, levelMeshes = [], chunkBuffer = null, brushAt = null, dirty = false, busy = Promise.resolve();
const water = { grid: null, bodies: [], has: false, chunks: null };
const scatter = { list: [], rules: [], box: null, cone: null };
// Exposed for tests and benchmarks (window.studio).
const studio = window.studio = {
  terrain, show, camera, levels: null, fps: 0, frameMs: 0, firstFrameMs: null,
  stats: { strokesSent: 0, extendSent: 0, chunksDrawn: 0, chunksCulled: 0, waterChunksDrawn: 0, instancesDrawn: 0, instanceLoads: 0, frames: 0, strokeMs: [] },
};

function setStatus(text) { $('status').textContent = text; }

// This page's id: the server tells its changes from other pages' (X-Terrane-Client).
const clientId = Math.random().toString(36).slice(2, 12);
// The session's state as the server last told it (GET /api/state, edit replies, state events).
const state = studio.state = { revision: -1, dirty: false, disk_changed: false };
function applyState(st) {
  if (!st || typeof st.revision !== 'number') return;
  Object.assign(state, st);
  studio.revision = st.revision;
  if ('can_undo' in st) { $('undo').disabled = !st.can_undo; $('redo').disabled = !st.can_redo; }
  $('dirty').hidden = !st.dirty;
  document.title = document.title.replace(/^● /, '');
  if (st.dirty) document.title = '● ' + document.title;
}
// Closing or reloading the tab with unsaved edits asks first (they are also autosaved).
window.addEventListener('beforeunload', (e) => { if (state.dirty) { e.preventDefault(); e.returnValue = ''; } });

// A question in the page: resolves with the value of the choice clicked ([value, label] pairs).
function ask(text, choices) {
  const dialog = $('ask'), box = $('ask-choices');
  $('ask-text').textContent = text;
  box.textContent = '';
  studio.asking = text;
  return new Promise((resolve) => {
    for (const [value, label] of choices) {
      const b = document.createElement('button');
      b.textContent = label;
      b.dataset.choice = value;
      b.onclick = () => { dialog.close(); studio.asking = null; resolve(value); };
      box.appendChild(b);
    }
    dialog.oncancel = (e) => { e.preventDefault(); };
    if (!dialog.open) dialog.showModal();
  });
}

// One request at a time: edits apply in the order they were made.
function api(path, options = {}) {
  const run = async () => {
    const headers = Object.assign({ 'X-Terrane-Token': token, 'X-Terrane-Client': clientId }, options.headers || {});
    const response = await fetch('api/' + path, Object.assign({}, options, { headers }));
    if (!response.ok) {
      let message = response.status + ' ' + response.statusText, reply = null;
      try { reply = await response.json(); message = reply.error || message; } catch (e) { /* not JSON */ }
      // Where the library located the problem: line and column of the file.
      if (reply && reply.line) message = 'line ' + reply.line + ', column ' + reply.column + ': ' + message;
      const error = new Error(path.split('?')[0] + ': ' + message);
      error.status = response.status;
      error.reply = reply;
      throw error;
    }
    return response;
  };
  const result = busy.then(run, run);
  busy = result.catch(() => {});
  return result;
}
// An optional endpoint: null when the server does not have it (404), else the response.
const optional = (path, options) => api(path, options).catch((e) => { if (e.status === 404 || e.status === 405) return null; throw e; });

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
const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; };
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
function lookAt(eye, target, up) {
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

// ----- shaders -----
// Terrain: one chunk-sized grid per LOD level (every 2^level-th sample), drawn instanced per
// chunk; heights come from the full-resolution R32F texture, so level 0 is the server's field.
const terrainVS = `#version 300 es
precision highp float; precision highp int; precision highp sampler2D;
layout(location = 0) in vec3 a_local; layout(location = 1) in vec2 a_chunk; layout(location = 2) in vec4 a_skirt;
uniform sampler2D u_h; uniform ivec2 u_cells; uniform vec2 u_cell; uniform int u_stride; uniform mat4 u_vp;
uniform int u_hs; // the heights texture's stride: 1, or the first frame's coarse samples min(k u_hs, cells)
out vec3 v_normal; out vec3 v_pos;
float H(ivec2 p) { return texelFetch(u_h, (clamp(p, ivec2(0), u_cells) + u_hs - 1) / u_hs, 0).r; }
void main() {
  ivec2 p = min(ivec2(a_chunk.xy) + ivec2(a_local.xy), u_cells);
  float h = H(p);
  ivec2 lo = max(p - ivec2(u_stride), ivec2(0)), hi = min(p + ivec2(u_stride), u_cells);
  float dx = (H(ivec2(hi.x, p.y)) - H(ivec2(lo.x, p.y))) / (float(max(hi.x - lo.x, 1)) * u_cell.x);
  float dz = (H(ivec2(p.x, hi.y)) - H(ivec2(p.x, lo.y))) / (float(max(hi.y - lo.y, 1)) * u_cell.y);
  v_normal = normalize(vec3(-dx, 1.0, -dz));
  // A skirt vertex hangs below its edge (a_local.z: 1..4 = north, south, west, east; 0 none).
  int edge = int(a_local.z + 0.5);
  if (edge > 0) h -= edge == 1 ? a_skirt.x : edge == 2 ? a_skirt.y : edge == 3 ? a_skirt.z : a_skirt.w;
  v_pos = vec3(float(p.x) * u_cell.x, h, float(p.y) * u_cell.y);
  gl_Position = u_vp * vec4(v_pos, 1.0);
}`;
const terrainFS = `#version 300 es
precision highp float; precision highp int; precision highp usampler2D;
in vec3 v_normal; in vec3 v_pos;
uniform usampler2D u_b; uniform sampler2D u_pal; uniform ivec2 u_cells; uniform vec2 u_cell;
uniform float u_lo, u_hi, u_sea, u_contour; uniform vec3 u_brush; uniform vec3 u_eye;
uniform usampler2D u_mask; uniform int u_mask_on;
uniform int u_bs; // the biomes texture's stride (1, or the first frame's coarse one: nearest sample)
// Mapped materials: each sample's texture layer (255: the biome tint), the layers' colours, and
// the mapping: x cos(triplanar slope) (-2: off), y sharpness, z height-blend contrast (0: off),
// w macro variation; u_blend 0 draws each sample's layer alone (the discrete fallback).
uniform usampler2D u_layer; uniform sampler2D u_lpal; uniform int u_mapped, u_blend;
uniform vec4 u_map; uniform float u_macro_scale;
// The layers' image maps (GET /api/material_map): albedo, height, normal, roughness and emissive
// texture arrays, a slice a layer, and per layer (u_linfo, texel = layer): r 1 with an albedo
// image, g 1 with a height image, b its texture scale (repetitions per world unit), a the sum of
// 1 (a normal image), 2 (roughness) and 4 (emissive). u_mapbits: which of those three are drawn.
uniform highp sampler2DArray u_albedo, u_lheight, u_lnormal, u_lrough, u_lemit; uniform highp sampler2D u_linfo;
uniform int u_maps, u_mapbits;
vec3 dpx, dpy; // the position's screen derivatives, taken before any branch (mip levels)
out vec4 colour;
float hash2(vec2 p) { return fract(sin(dot(p, vec2(127.1, 311.7))) * 43758.5453); }
float vnoise(vec2 p) {
  vec2 i = floor(p), f = fract(p); f = f * f * (3.0 - 2.0 * f);
  return mix(mix(hash2(i), hash2(i + vec2(1, 0)), f.x), mix(hash2(i + vec2(0, 1)), hash2(i + vec2(1, 1)), f.x), f.y);
}
vec4 layerInfo(uint id) { return u_maps == 1 && id != 255u ? texelFetch(u_linfo, ivec2(int(id), 0), 0) : vec4(0.0); }
// A layer's slice of an image array at texture scale k: from above, or along the three axes on
// steep faces (triplanar, weights bw).
vec4 layerImage(highp sampler2DArray t, uint id, float k, bool tri, vec3 bw) {
  float z = float(id);
  if (!tri) return textureGrad(t, vec3(v_pos.xz * k, z), dpx.xz * k, dpy.xz * k);
  return bw.x * textureGrad(t, vec3(v_pos.zy * k, z), dpx.zy * k, dpy.zy * k)
       + bw.y * textureGrad(t, vec3(v_pos.xz * k, z), dpx.xz * k, dpy.xz * k)
       + bw.z * textureGrad(t, vec3(v_pos.xy * k, z), dpx.xy * k, dpy.xy * k);
}
// A layer's height map: its height image, or a value noise of its own standing in for one,
// projected as the image would be.
float layerHeight(uint id, bool tri, vec3 bw) {
  vec4 info = layerInfo(id);
  if (info.g > 0.5) return layerImage(u_lheight, id, info.b, tri, bw).r;
  vec2 o = vec2(float(id) * 37.0, float(id) * 11.0);
  if (!tri) return vnoise(v_pos.xz * 0.25 + o);
  return bw.x * vnoise(v_pos.zy * 0.25 + o) + bw.y * vnoise(v_pos.xz * 0.25 + o) + bw.z * vnoise(v_pos.xy * 0.25 + o);
}
// A layer's colour: its albedo image, or its flat colour shaded by its height map (h).
vec3 layerColour(uint id, vec3 tint, bool tri, vec3 bw, float h) {
  if (id == 255u) return tint * (0.8 + 0.4 * h);
  vec4 info = layerInfo(id);
  if (info.r > 0.5) return layerImage(u_albedo, id, info.b, tri, bw).rgb;
  return texelFetch(u_lpal, ivec2(int(id), 0), 0).rgb * (0.8 + 0.4 * h);
}
// A surface point as lighting sees it: colour, normal, roughness, emitted colour.
struct Surf { vec3 c; vec3 n; float r; vec3 e; };
// A layer's normal image in world space (tangent space, +Y up; OpenGL convention): each
// projection's normal added to the geometric normal's components in its plane (UDN blend).
vec3 layerNormal(uint id, float k, bool tri, vec3 bw, vec3 n) {
  if (!tri) { vec3 t = layerImage(u_lnormal, id, k, false, bw).xyz * 2.0 - 1.0; return normalize(vec3(n.x + t.x, n.y, n.z + t.y)); }
  float z = float(id);
  vec3 tx = textureGrad(u_lnormal, vec3(v_pos.zy * k, z), dpx.zy * k, dpy.zy * k).xyz * 2.0 - 1.0;
  vec3 ty = textureGrad(u_lnormal, vec3(v_pos.xz * k, z), dpx.xz * k, dpy.xz * k).xyz * 2.0 - 1.0;
  vec3 tz = textureGrad(u_lnormal, vec3(v_pos.xy * k, z), dpx.xy * k, dpy.xy * k).xyz * 2.0 - 1.0;
  return normalize(bw.x * vec3(n.x, n.y + tx.y, n.z + tx.x) + bw.y * vec3(n.x + ty.x, n.y, n.z + ty.y) + bw.z * vec3(n.x + tz.x, n.y + tz.y, n.z));
}
Surf layerSurf(uint id, vec3 tint, bool tri, vec3 bw, float h, vec3 n) {
  Surf s = Surf(layerColour(id, tint, tri, bw, h), n, 0.9, vec3(0.0));
  vec4 info = layerInfo(id);
  int bits = int(info.a + 0.5) & u_mapbits;
  if ((bits & 1) != 0) s.n = layerNormal(id, info.b, tri, bw, n);
  if ((bits & 2) != 0) s.r = layerImage(u_lrough, id, info.b, tri, bw).r;
  if ((bits & 4) != 0) s.e = layerImage(u_lemit, id, info.b, tri, bw).rgb;
  return s;
}
// The four samples around the point contribute their layers (ids decoded exactly, never
// interpolated); height maps bias the bilinear weights so one layer shows through another.
Surf mappedSurf(vec3 n, vec3 tint) {
  bool tri = n.y < u_map.x;
  vec3 bw = pow(abs(n), vec3(u_map.y)); bw /= max(bw.x + bw.y + bw.z, 1e-6);
  vec2 g = v_pos.xz / u_cell; ivec2 q0 = ivec2(floor(g)); vec2 f = clamp(g - vec2(q0), 0.0, 1.0);
  if (u_blend == 0) {
    uint id = texelFetch(u_layer, clamp(ivec2(floor(g + 0.5)), ivec2(0), u_cells), 0).r;
    return layerSurf(id, tint, tri, bw, layerHeight(id, tri, bw), n);
  }
  uint id[4]; float a[4], h[4]; float top = -1e9;
  for (int k = 0; k < 4; k++) {
    ivec2 o = ivec2(k & 1, k >> 1);
    id[k] = texelFetch(u_layer, clamp(q0 + o, ivec2(0), u_cells), 0).r;
    float w = (o.x == 1 ? f.x : 1.0 - f.x) * (o.y == 1 ? f.y : 1.0 - f.y);
    h[k] = layerHeight(id[k], tri, bw);
    a[k] = u_map.z > 0.0 ? w + h[k] : w;
    top = max(top, a[k]);
  }
  Surf s = Surf(vec3(0.0), vec3(0.0), 0.0, vec3(0.0)); float total = 0.0;
  for (int k = 0; k < 4; k++) {
    float b = u_map.z > 0.0 ? max(a[k] - (top - u_map.z), 0.0) : a[k];
    if (b <= 0.0) continue;
    Surf l = layerSurf(id[k], tint, tri, bw, h[k], n);
    s.c += b * l.c; s.n += b * l.n; s.r += b * l.r; s.e += b * l.e;
    total += b;
  }
  float inv = 1.0 / max(total, 1e-6);
  return Surf(s.c * inv, normalize(s.n + 1e-6 * n), s.r * inv, s.e * inv);
}
void main() {
  dpx = dFdx(v_pos);
  dpy = dFdy(v_pos);
  vec3 n = normalize(v_normal);
  vec3 sun = normalize(vec3(-0.5, 0.8, -0.35));
  float shade = 0.28 + 0.72 * max(dot(n, sun), 0.0);
  float t = clamp((v_pos.y - u_lo) / max(u_hi - u_lo, 1e-6), 0.0, 1.0);
  ivec2 q = clamp(ivec2(floor(v_pos.xz / u_cell + 0.5)), ivec2(0), u_cells);
  vec3 tint = texelFetch(u_pal, ivec2(int(texelFetch(u_b, (q + u_bs / 2) / u_bs, 0).r), 0), 0).rgb * (0.85 + 0.3 * t);
  vec3 glow = vec3(0.0), spec = vec3(0.0);
  if (u_mapped == 1) {
    Surf m = mappedSurf(n, tint);
    tint = m.c;
    if (u_map.w > 0.0) tint *= 1.0 + u_map.w * (vnoise(v_pos.xz * u_macro_scale) - 0.5) * 2.0;
    // The mapped path's lighting: the layers' normals, a Blinn-Phong highlight whose width and
    // strength follow roughness (0 a sharp bright sun glint, 1 none), emission added unlit.
    shade = 0.28 + 0.72 * max(dot(m.n, sun), 0.0);
    float r = clamp(m.r, 0.03, 1.0), gloss = (1.0 - r) * (1.0 - r);
    vec3 hv = normalize(sun + normalize(u_eye - v_pos));
    spec = vec3(gloss * 0.8 * pow(max(dot(m.n, hv), 0.0), 2.0 + 126.0 * gloss));
    glow = m.e;
  } else {
    tint = mix(tint, vec3(0.45, 0.45, 0.42), smoothstep(0.6, 0.9, 1.0 - n.y));
  }
  if (v_pos.y < u_sea) tint = mix(tint, vec3(0.15, 0.35, 0.6), 0.7); // no water surfaces: the sea as a tint
  vec3 c = tint * shade + spec + glow;
  if (u_mask_on == 1) { // a rule's mask: where it wins, stronger; where it matches but loses, lighter
    uint m = texelFetch(u_mask, q, 0).r;
    if (m > 0u) c = mix(c, vec3(0.95, 0.2, 0.8), m == 255u ? 0.55 : 0.25);
  }
  if (u_contour > 0.0) { // contour lines every u_contour metres, about a pixel wide
    float f = v_pos.y / u_contour, w = max(fwidth(f), 1e-4);
    c = mix(c, vec3(0.08, 0.08, 0.06), 0.65 * (1.0 - smoothstep(0.0, 1.2 * w, abs(fract(f + 0.5) - 0.5))));
  }
  if (u_brush.z > 0.0) {
    float d = abs(distance(v_pos.xz, u_brush.xy) - u_brush.z);
    c = mix(c, vec3(1.0, 0.85, 0.2), 1.0 - smoothstep(0.0, u_brush.z * 0.04 + 0.5, d));
  }
  colour = vec4(c, 1.0);
}`;
// The first frames' fragment shader (while only the coarse samples are in): the biome tint,
// lighter with height, steep ground greyer, the sea tint and the sun. A software renderer
// compiles and runs it several times faster than the full one above.
const firstFS = `#version 300 es
precision highp float; precision highp int; precision highp usampler2D;
in vec3 v_normal; in vec3 v_pos;
uniform usampler2D u_b; uniform sampler2D u_pal; uniform ivec2 u_cells; uniform vec2 u_cell;
uniform float u_lo, u_hi, u_sea; uniform int u_bs;
out vec4 colour;
void main() {
  vec3 n = normalize(v_normal);
  float shade = 0.28 + 0.72 * max(dot(n, normalize(vec3(-0.5, 0.8, -0.35))), 0.0);
  float t = clamp((v_pos.y - u_lo) / max(u_hi - u_lo, 1e-6), 0.0, 1.0);
  ivec2 q = clamp(ivec2(floor(v_pos.xz / u_cell + 0.5)), ivec2(0), u_cells);
  vec3 tint = texelFetch(u_pal, ivec2(int(texelFetch(u_b, (q + u_bs / 2) / u_bs, 0).r), 0), 0).rgb * (0.85 + 0.3 * t);
  tint = mix(tint, vec3(0.45, 0.45, 0.42), smoothstep(0.6, 0.9, 1.0 - n.y));
  if (v_pos.y < u_sea) tint = mix(tint, vec3(0.15, 0.35, 0.6), 0.7);
  colour = vec4(tint * shade, 1.0);
}`;
// Water: the same chunk grids at the water surface (u_w, dilated under the banks); shallow to
// deep colour by depth over each body's absorption distance.
const waterVS = `#version 300 es
precision highp float; precision highp int; precision highp sampler2D; precision highp usampler2D;
layout(location = 0) in vec3 a_local; layout(location = 1) in vec2 a_chunk;
uniform sampler2D u_w; uniform usampler2D u_wi; uniform ivec2 u_cells; uniform vec2 u_cell; uniform mat4 u_vp;
out vec3 v_pos; out float v_wet; flat out int v_body;
void main() {
  ivec2 p = min(ivec2(a_chunk.xy) + ivec2(a_local.xy), u_cells);
  vec2 w = texelFetch(u_w, p, 0).rg; // surface, wet (1) or dilated (0.5) or dry (0)
  v_wet = w.y;
  v_body = int(texelFetch(u_wi, p, 0).r);
  v_pos = vec3(float(p.x) * u_cell.x, w.x, float(p.y) * u_cell.y);
  gl_Position = u_vp * vec4(v_pos, 1.0);
}`;
const waterFS = `#version 300 es
precision highp float; precision highp int; precision highp sampler2D;
in vec3 v_pos; in float v_wet; flat in int v_body;
uniform sampler2D u_h; uniform sampler2D u_wpal; uniform ivec2 u_cells; uniform vec2 u_cell; uniform vec3 u_eye;
out vec4 colour;
float H(ivec2 p) { return texelFetch(u_h, clamp(p, ivec2(0), u_cells), 0).r; }
void main() {
  if (v_wet < 0.25) discard;
  vec2 f = v_pos.xz / u_cell;
  ivec2 i = ivec2(floor(f));
  vec2 t = f - vec2(i);
  float bed = mix(mix(H(i), H(i + ivec2(1, 0)), t.x), mix(H(i + ivec2(0, 1)), H(i + ivec2(1, 1)), t.x), t.y);
  float depth = max(v_pos.y - bed, 0.0);
  // Body k's colours: column k % width, rows 2 (k / width) (shallow) and the one after (deep).
  int pw = textureSize(u_wpal, 0).x;
  ivec2 at = ivec2(v_body % pw, 2 * (v_body / pw));
  vec4 shallow = texelFetch(u_wpal, at, 0), deep = texelFetch(u_wpal, at + ivec2(0, 1), 0);
  float k = 1.0 - exp(-depth / max(shallow.a, 1e-3));
  vec3 c = mix(shallow.rgb, deep.rgb, k);
  vec3 v = normalize(u_eye - v_pos), sun = normalize(vec3(-0.5, 0.8, -0.35));
  float spec = pow(max(dot(reflect(-sun, vec3(0.0, 1.0, 0.0)), v), 0.0), 64.0);
  colour = vec4(c + spec * 0.5, mix(0.45, 0.92, k));
}`;
// Scatter proxies: a box or a cone per instance, coloured by its rule.
const proxyVS = `#version 300 es
precision highp float;
layout(location = 0) in vec3 a_pos; layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec4 i_place; layout(location = 3) in vec4 i_look;
uniform mat4 u_vp;
out vec3 v_normal; out vec3 v_colour;
void main() {
  float c = cos(i_place.w), s = sin(i_place.w);
  vec3 p = a_pos * i_look.w;
  p = vec3(c * p.x + s * p.z, p.y, -s * p.x + c * p.z);
  v_normal = vec3(c * a_normal.x + s * a_normal.z, a_normal.y, -s * a_normal.x + c * a_normal.z);
  v_colour = i_look.rgb;
  gl_Position = u_vp * vec4(i_place.xyz + p, 1.0);
}`;
const proxyFS = `#version 300 es
precision highp float;
in vec3 v_normal; in vec3 v_colour;
out vec4 colour;
void main() {
  float shade = 0.35 + 0.65 * max(dot(normalize(v_normal), normalize(vec3(-0.5, 0.8, -0.35))), 0.0);
  colour = vec4(v_colour * shade, 1.0);
}`;

// Programs are compiled and linked without waiting for the result: asking for a status (or a
// uniform) waits until the GPU process has compiled it, which in a software renderer takes
// hundreds of milliseconds for the terrain's full shader. With KHR_parallel_shader_compile the
// page asks whether it is done (programReady) and draws with what is ready meanwhile; the
// status is read once, at the first use (finishProgram).
let parallelCompile = null;
function startProgram(vs, fs) {
  const p = gl.createProgram();
  const shaders = [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]].map(([type, source]) => {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    gl.attachShader(p, shader);
    return shader;
  });
  gl.linkProgram(p);
  return { p, shaders, u: null };
}
// Whether using the program now would not wait for its compilation (without the extension, the
// page cannot know: true).
function programReady(program) {
  return !!program && (program.u !== null || !parallelCompile || gl.getProgramParameter(program.p, parallelCompile.COMPLETION_STATUS_KHR));
}
function finishProgram(program) {
  if (program.u) return program;
  if (!gl.getProgramParameter(program.p, gl.LINK_STATUS)) {
    const logs = program.shaders.map((shader) => gl.getShaderInfoLog(shader)).filter(Boolean).join('\n');
    throw new Error(logs || gl.getProgramInfoLog(program.p));
  }
  const uniforms = {};
  for (let k = 0, n = gl.getProgramParameter(program.p, gl.ACTIVE_UNIFORMS); k < n; k++) {
    const name = gl.getActiveUniform(program.p, k).name;
    uniforms[name] = gl.getUniformLocation(program.p, name);
  }
  program.u = uniforms;
  return program;
}
function makeProgram(vs, fs) { return finishProgram(startProgram(vs, fs)); }
// A redraw once the programs still compiling are done (polled: the extension has no event).
let programPoll = 0;
function redrawWhenCompiled() {
  if (programPoll) return;
  programPoll = setTimeout(() => {
    programPoll = 0;
    if (!['terrain', 'water', 'proxy'].every((k) => programReady(programs[k]))) { redrawWhenCompiled(); return; }
    if (studio.timings && !studio.timings.compiled) studio.timings.compiled = Math.round(performance.now());
    redraw();
  }, 30);
}

// The terrain program's first draw, in the first frame's state, with nothing to show.
function warmUp() {
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  const zeros = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, zeros);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(3 * INSTANCE_FLOATS), gl.STATIC_DRAW);
  gl.enableVertexAttribArray(0);
  gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
  gl.enableVertexAttribArray(1);
  gl.vertexAttribPointer(1, 2, gl.FLOAT, false, INSTANCE_FLOATS * 4, 0);
  gl.vertexAttribDivisor(1, 1);
  gl.enableVertexAttribArray(2);
  gl.vertexAttribPointer(2, 4, gl.FLOAT, false, INSTANCE_FLOATS * 4, 8);
  gl.vertexAttribDivisor(2, 1);
  const index = gl.createBuffer();
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, index);
  gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, new Uint16Array([0, 1, 2]), gl.STATIC_DRAW);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(canvas.clientWidth * dpr);
  canvas.height = Math.round(canvas.clientHeight * dpr);
  gl.viewport(0, 0, canvas.width, canvas.height);
  gl.enable(gl.DEPTH_TEST);
  gl.disable(gl.CULL_FACE);
  const u = useProgram(programs.first);
  // Each sampler on its own unit, as draw() binds them (two types on one unit refuse the draw).
  const units = { u_h: 0, u_b: 1, u_pal: 2, u_mask: 6, u_layer: 7, u_lpal: 8, u_albedo: 9, u_lheight: 10, u_linfo: 11 };
  for (const [name, unit] of Object.entries(units)) if (u[name]) gl.uniform1i(u[name], unit);
  gl.drawElementsInstanced(gl.TRIANGLES, 3, gl.UNSIGNED_SHORT, 0, 1);
  gl.bindVertexArray(null);
  gl.deleteVertexArray(vao);
  gl.deleteBuffer(zeros);
  gl.deleteBuffer(index);
  gl.flush();
}

// A vertex array bound with the mesh's positions (attribute 0) and 16-bit indices; left bound so the
// caller adds its instance attributes.
function meshVao(vertices, indices) {
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(vertices), gl.STATIC_DRAW);
  gl.enableVertexAttribArray(0);
  gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, gl.createBuffer());
  gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, new Uint16Array(indices), gl.STATIC_DRAW);
  return vao;
}

// ----- chunk meshes -----
// Level l: the chunk's (C / 2^l + 1)^2 samples and a skirt under its four edges, so a chunk
// drawn beside a coarser or finer neighbour shows no crack. a_local = (i, j, skirt).
function makeLevelMesh(level) {
  // Every 2^level-th sample and the chunk's far edge (chunk cells need not be a power of two).
  const C = terrain.chunkCells, s = 1 << level, at = [];
  for (let k = 0; k < C; k += s) at.push(k);
  at.push(C);
  const n = at.length - 1, row = n + 1;
  const vertices = [];
  for (let b = 0; b <= n; b++) for (let a = 0; a <= n; a++) vertices.push(at[a], at[b], 0);
  const indices = [];
  for (let b = 0; b < n; b++) for (let a = 0; a < n; a++) {
    const p = b * row + a, q = p + row;
    indices.push(p, q, p + 1, p + 1, q, q + 1);
  }
  const gridCount = indices.length;
  // Each edge as a strip of quads down to its skirt copy.
  const edges = [[], [], [], []];
  for (let k = 0; k <= n; k++) { edges[0].push(k); edges[1].push(n * row + k); edges[2].push(k * row); edges[3].push(k * row + n); }
  edges.forEach((edge, e) => {
    const base = vertices.length / 3;
    for (const v of edge) vertices.push(vertices[v * 3], vertices[v * 3 + 1], e + 1);
    for (let k = 0; k < n; k++) indices.push(edge[k], base + k, edge[k + 1], edge[k + 1], base + k, base + k + 1);
  });
  const vao = meshVao(vertices, indices);
  gl.bindBuffer(gl.ARRAY_BUFFER, chunkBuffer);
  for (const loc of [1, 2]) {
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribDivisor(loc, 1);
  }
  gl.bindVertexArray(null);
  return { vao, count: indices.length, gridCount, level };
}

function makeMeshes() {
  if (!chunkBuffer) chunkBuffer = gl.createBuffer();
  levelMeshes = [];
  for (let l = 0; l < terrain.levels; l++) levelMeshes.push(makeLevelMesh(l));
  wholeMesh = makeWholeMesh();
}

// The whole terrain at the coarsest level as one grid (every chunk's corners): the first frames
// draw it in one call instead of one instance a chunk (16,384 instances at 4097^2 cost a software
// renderer about a second); null where it would pass 65,536 vertices.
let wholeMesh = null;
function makeWholeMesh() {
  const C = terrain.chunkCells, xs = [], zs = [];
  for (let k = 0; k < terrain.cellsX; k += C) xs.push(k);
  xs.push(terrain.cellsX);
  for (let k = 0; k < terrain.cellsZ; k += C) zs.push(k);
  zs.push(terrain.cellsZ);
  if (xs.length * zs.length > 65536) return null;
  const vertices = [], indices = [], row = xs.length;
  for (const z of zs) for (const x of xs) vertices.push(x, z, 0);
  for (let b = 0; b + 1 < zs.length; b++) for (let a = 0; a + 1 < xs.length; a++) {
    const p = b * row + a, q = p + row;
    indices.push(p, q, p + 1, p + 1, q, q + 1);
  }
  const vao = meshVao(vertices, indices);
  // One instance at the origin without skirts.
  gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(INSTANCE_FLOATS), gl.STATIC_DRAW);
  gl.enableVertexAttribArray(1);
  gl.vertexAttribPointer(1, 2, gl.FLOAT, false, INSTANCE_FLOATS * 4, 0);
  gl.vertexAttribDivisor(1, 1);
  gl.enableVertexAttribArray(2);
  gl.vertexAttribPointer(2, 4, gl.FLOAT, false, INSTANCE_FLOATS * 4, 8);
  gl.vertexAttribDivisor(2, 1);
  gl.bindVertexArray(null);
  return { vao, count: indices.length };
}

// Per-chunk sample range: [i0, i1] x [j0, j1], shared borders included.
function chunkRange(cx, cz) {
  const C = terrain.chunkCells;
  return [cx * C, Math.min(cx * C + C, terrain.cellsX), cz * C, Math.min(cz * C + C, terrain.cellsZ)];
}

// Each chunk's lowest and highest sample (frustum culling).
function chunkBounds(cx, cz) {
  const [i0, i1, j0, j1] = chunkRange(cx, cz), row = terrain.cellsX + 1, H = terrain.heights;
  let lo = Infinity, hi = -Infinity;
  for (let j = j0; j <= j1; j++) for (let k = j * row + i0, e = j * row + i1; k <= e; k++) {
    const h = H[k];
    if (h < lo) lo = h;
    if (h > hi) hi = h;
  }
  const c = cz * terrain.chunksX + cx;
  terrain.cmin[c] = lo;
  terrain.cmax[c] = hi;
}

// The largest vertical error of drawing chunk (cx, cz) at each level, computed here when the
// server has no /api/lod: the triangles the mesh draws against every sample under them.
function chunkLodLocal(cx, cz) {
  const [i0, i1, j0, j1] = chunkRange(cx, cz), row = terrain.cellsX + 1, H = terrain.heights, L = terrain.levels;
  const out = terrain.lod, base = (cz * terrain.chunksX + cx) * L;
  out[base] = 0;
  for (let l = 1; l < L; l++) {
    const s = 1 << l;
    const xs = [], zs = [];
    for (let k = 0; k < terrain.chunkCells; k += s) { xs.push(Math.min(i0 + k, i1)); zs.push(Math.min(j0 + k, j1)); }
    xs.push(i1);
    zs.push(j1);
    let err = 0;
    for (let b = 0; b + 1 < zs.length; b++) for (let a = 0; a + 1 < xs.length; a++) {
      const ia = xs[a], ib = xs[a + 1], ja = zs[b], jb = zs[b + 1];
      if (ib === ia || jb === ja) continue;
      const h00 = H[ja * row + ia], h10 = H[ja * row + ib], h01 = H[jb * row + ia], h11 = H[jb * row + ib];
      for (let j = ja; j <= jb; j++) {
        const v = (j - ja) / (jb - ja);
        for (let i = ia; i <= ib; i++) {
          const u = (i - ia) / (ib - ia);
          const m = u + v <= 1 ? h00 + (h10 - h00) * u + (h01 - h00) * v : h11 + (h01 - h11) * (1 - u) + (h10 - h11) * (1 - v);
          const e = Math.abs(H[j * row + i] - m);
          if (e > err) err = e;
        }
      }
    }
    out[base + l] = err;
  }
}

// ----- textures -----
function makeTexture(tex, internal, width, height, format, type, data) {
  gl.bindTexture(gl.TEXTURE_2D, tex);
  gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
  gl.texImage2D(gl.TEXTURE_2D, 0, internal, width, height, 0, format, type, data);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
  gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
  return tex;
}
const texture = (name) => textures[name] || (textures[name] = gl.createTexture());

// ----- terrain data -----
// The first frame's heights come quantised to 16 bits (half the bytes) through a worker
// (heights.js: fetch, decode, each chunk's range), so the page's thread stays free; it runs once
// and ends. Later loads fetch exact float32 here. Both resolve with {headers, heights, cmin, cmax}.
function requestQuantised() {
  const worker = new Worker('heights.js');
  return new Promise((resolve, reject) => {
    worker.onmessage = (event) => {
      const m = event.data;
      if (m.error) { const e = new Error(m.error); e.status = m.status; reject(e); } else resolve(m);
    };
    worker.onerror = (event) => reject(new Error('heights: ' + (event.message || 'the worker failed')));
    worker.postMessage({ path: 'api/heights?encoding=u16', token, client: clientId });
  }).finally(() => worker.terminate());
}
async function requestExact() {
  const response = await api('heights');
  const headers = {};
  for (const name of ['X-Terrane-Cells', 'X-Terrane-Size', 'X-Terrane-Chunk-Cells', 'X-Terrane-Sea-Level']) headers[name] = response.headers.get(name);
  return { headers, heights: new Float32Array(await response.arrayBuffer()), cmin: null, cmax: null };
}
// terrain.version counts every change of terrain.heights (a load, an edit's chunks); exact says
// whether they are the server's float32 values (false while the first, quantised ones show).
terrain.version = 0;
terrain.exact = false;

// The whole field: exact float32, or (quantised) 16 bits a sample for the first frame, whose
// exact values follow (exactHeights).
async function loadHeights(quantised = false) {
  const reply = await (quantised ? requestQuantised() : requestExact());
  if (studio.timings && !studio.timings.heightsIn) { studio.timings.heightsIn = Math.round(performance.now()); if (reply.timings) for (const [k, v] of Object.entries(reply.timings)) studio.timings['worker_' + k] = Math.round(v - performance.timeOrigin); }
  const header = (name) => reply.headers[name];
  const cells = header('X-Terrane-Cells').split(',').map(Number);
  const size = header('X-Terrane-Size').split(',').map(Number);
  const resized = cells[0] !== terrain.cellsX || cells[1] !== terrain.cellsZ;
  Object.assign(terrain, { cellsX: cells[0], cellsZ: cells[1], sizeX: size[0], sizeZ: size[1] });
  terrain.cellX = terrain.sizeX / terrain.cellsX;
  terrain.cellZ = terrain.sizeZ / terrain.cellsZ;
  terrain.seaLevel = Number(header('X-Terrane-Sea-Level'));
  const C = Number(header('X-Terrane-Chunk-Cells')) || 32;
  terrain.heights = reply.heights;
  terrain.version++;
  terrain.exact = !quantised;
  const limit = gl.getParameter(gl.MAX_TEXTURE_SIZE);
  if (terrain.cellsX + 1 > limit || terrain.cellsZ + 1 > limit)
    throw new Error('the terrain has ' + (terrain.cellsX + 1) + ' x ' + (terrain.cellsZ + 1) + ' samples; this WebGL allows ' + limit + ' a side');
  makeTexture(texture('heights'), gl.R32F, terrain.cellsX + 1, terrain.cellsZ + 1, gl.RED, gl.FLOAT, terrain.heights);
  terrain.heightStride = 1;
  const levels = Math.floor(Math.log2(C)) + 1;
  if (C !== terrain.chunkCells || levels !== terrain.levels || !levelMeshes.length || resized) {
    terrain.chunkCells = C;
    terrain.levels = levels;
    makeMeshes();
  }
  terrain.chunksX = Math.ceil(terrain.cellsX / C);
  terrain.chunksZ = Math.ceil(terrain.cellsZ / C);
  const chunks = terrain.chunksX * terrain.chunksZ;
  if (reply.cmin) {
    terrain.cmin = reply.cmin;
    terrain.cmax = reply.cmax;
  } else {
    terrain.cmin = new Float32Array(chunks);
    terrain.cmax = new Float32Array(chunks);
    for (let cz = 0; cz < terrain.chunksZ; cz++) for (let cx = 0; cx < terrain.chunksX; cx++) chunkBounds(cx, cz);
  }
  let lo = Infinity, hi = -Infinity;
  for (let c = 0; c < chunks; c++) { lo = Math.min(lo, terrain.cmin[c]); hi = Math.max(hi, terrain.cmax[c]); }
  Object.assign(terrain, { lo, hi });
  if (resized || camera.dist <= 1) resetCamera();
  const mark = (name) => { if (studio.timings && !studio.timings[name]) studio.timings[name] = Math.round(performance.now()); };
  mark('texture');
  await loadBiomes();
  mark('biomes');
  await loadLod();
  terrain.coarse = false;
  mark('lod');
  await loadMaterials();
  minimapDirty();
  redraw();
}

// The first frame's data: every stride-th sample of the heights (16 bits) and the biomes
// (GET /api/heights?encoding=u16&stride=S, /api/biomes?stride=S; S at most the chunk size, so
// the coarsest chunk level stands on these samples exactly), 1/S^2 of the bytes. The whole field
// follows (loadHeights); until then frames stay at the coarsest levels and there is no readout.
async function loadCoarse(stride) {
  const get = async (path) => {
    const r = await fetch('api/' + path, { headers: { 'X-Terrane-Token': token, 'X-Terrane-Client': clientId } });
    if (!r.ok) { const e = new Error(path.split('?')[0] + ': ' + r.status + ' ' + r.statusText); e.status = r.status; throw e; }
    return r;
  };
  const [hr, br] = await Promise.all([get('heights?encoding=u16&stride=' + stride), get('biomes?stride=' + stride)]);
  const header = (name) => hr.headers.get(name);
  const S = Number(header('X-Terrane-Stride')) || 1;
  const cells = header('X-Terrane-Cells').split(',').map(Number), size = header('X-Terrane-Size').split(',').map(Number);
  const [nx, nz] = header('X-Terrane-Samples').split(',').map(Number);
  Object.assign(terrain, { cellsX: cells[0], cellsZ: cells[1], sizeX: size[0], sizeZ: size[1] });
  terrain.cellX = terrain.sizeX / terrain.cellsX;
  terrain.cellZ = terrain.sizeZ / terrain.cellsZ;
  terrain.seaLevel = Number(header('X-Terrane-Sea-Level'));
  const C = Number(header('X-Terrane-Chunk-Cells')) || 32;
  const offset = Number(header('X-Terrane-Height-Offset')), scale = Number(header('X-Terrane-Height-Scale'));
  const q = new Uint16Array(await hr.arrayBuffer()), coarse = new Float32Array(q.length);
  for (let k = 0; k < q.length; k++) coarse[k] = q[k] === 65535 ? NaN : offset + scale * q[k];
  const limit = gl.getParameter(gl.MAX_TEXTURE_SIZE);
  if (terrain.cellsX + 1 > limit || terrain.cellsZ + 1 > limit)
    throw new Error('the terrain has ' + (terrain.cellsX + 1) + ' x ' + (terrain.cellsZ + 1) + ' samples; this WebGL allows ' + limit + ' a side');
  makeTexture(texture('heights'), gl.R32F, nx, nz, gl.RED, gl.FLOAT, coarse);
  terrain.heightStride = S;
  const colours = (br.headers.get('X-Terrane-Biome-Colors') || '').split(';');
  const palette = new Uint8Array(256 * 4).fill(128);
  colours.forEach((c, k) => { if (c) palette.set([...c.split(',').map(Number), 255], k * 4); });
  terrain.palette = palette;
  makeTexture(texture('biomes'), gl.R8UI, nx, nz, gl.RED_INTEGER, gl.UNSIGNED_BYTE, new Uint8Array(await br.arrayBuffer()));
  makeTexture(texture('palette'), gl.RGBA8, 256, 1, gl.RGBA, gl.UNSIGNED_BYTE, palette);
  terrain.biomeStride = S;
  terrain.chunkCells = C;
  terrain.levels = Math.floor(Math.log2(C)) + 1;
  makeMeshes();
  terrain.chunksX = Math.ceil(terrain.cellsX / C);
  terrain.chunksZ = Math.ceil(terrain.cellsZ / C);
  const NX = terrain.chunksX, chunks = NX * terrain.chunksZ;
  // Each chunk's range over the coarse samples it holds (shared borders in both chunks), widened
  // by half a quantisation step: the coarsest level's corners are among them.
  const cmin = new Float32Array(chunks).fill(Infinity), cmax = new Float32Array(chunks).fill(-Infinity);
  const owners = (i, chunksN) => { const c = Math.floor(i / C); return c >= chunksN ? [chunksN - 1] : i % C === 0 && c > 0 ? [c - 1, c] : [c]; };
  for (let b = 0; b < nz; b++) {
    const zs = owners(Math.min(b * S, terrain.cellsZ), terrain.chunksZ);
    for (let a = 0; a < nx; a++) {
      const h = coarse[b * nx + a];
      if (!(h === h)) continue;
      for (const cz of zs) for (const cx of owners(Math.min(a * S, terrain.cellsX), NX)) {
        const c = cz * NX + cx;
        if (h < cmin[c]) cmin[c] = h;
        if (h > cmax[c]) cmax[c] = h;
      }
    }
  }
  const half = scale / 2;
  let lo = Infinity, hi = -Infinity;
  for (let c = 0; c < chunks; c++) { cmin[c] -= half; cmax[c] += half; lo = Math.min(lo, cmin[c]); hi = Math.max(hi, cmax[c]); }
  Object.assign(terrain, { cmin, cmax, lo, hi, coarse: true, heights: null, biomes: null, exact: false });
  terrain.lod = new Float32Array(chunks * terrain.levels);
  terrain.lodFromServer = false;
  resetCamera();
}

// After a quantised first load: the exact float32 heights replace the quantised ones (the
// readout, picking, strokes and the texture then hold the server's values). A load or an edit
// meanwhile makes the reply stale: it is dropped, and asked for again while not exact.
async function exactHeights() {
  while (!terrain.exact) {
    const version = terrain.version;
    const reply = await requestExact();
    if (terrain.version !== version || terrain.exact) continue;
    if (reply.heights.length !== terrain.heights.length) { await loadHeights(); break; }
    // The quantised chunk ranges were widened by half a step: they hold the exact heights too.
    terrain.heights = reply.heights;
    terrain.version++;
    terrain.exact = true;
    // A new image for the texture (texImage2D): 0.04-0.05 s at 4097^2 in SwiftShader, where
    // texSubImage2D over the whole of it took 0.3-0.8 s.
    makeTexture(texture('heights'), gl.R32F, terrain.cellsX + 1, terrain.cellsZ + 1, gl.RED, gl.FLOAT, terrain.heights);
    minimapDirty();
    redraw();
  }
}

// The page's first load asks for the biomes and the LOD errors while the heights arrive (the
// server computes the errors meanwhile); each prefetched reply is used once, null when absent.
const prefetch = {};
function prefetchStart(paths) {
  for (const path of paths)
    prefetch[path] = fetch('api/' + path, { headers: { 'X-Terrane-Token': token, 'X-Terrane-Client': clientId } })
      .then((r) => (r.ok ? r : null)).catch(() => null);
}
function prefetched(path) {
  const p = prefetch[path];
  delete prefetch[path];
  return p || Promise.resolve(null);
}

// /api/lod: float32 per chunk (z then x) per level; without it the page measures its own.
async function loadLod() {
  const chunks = terrain.chunksX * terrain.chunksZ, L = terrain.levels;
  terrain.lod = new Float32Array(chunks * L);
  const response = (await prefetched('lod')) || await optional('lod');
  if (response) {
    const serverLevels = Number(response.headers.get('X-Terrane-Lod-Levels'));
    const data = new Float32Array(await response.arrayBuffer());
    if (serverLevels > 0 && data.length === chunks * serverLevels) {
      // Levels the server has beyond our meshes are dropped; ours beyond its count are refused.
      for (let c = 0; c < chunks; c++) for (let l = 0; l < L; l++)
        terrain.lod[c * L + l] = l < serverLevels ? data[c * serverLevels + l] : Infinity;
      terrain.lodFromServer = true;
      return;
    }
  }
  terrain.lodFromServer = false;
  for (let cz = 0; cz < terrain.chunksZ; cz++) for (let cx = 0; cx < terrain.chunksX; cx++) chunkLodLocal(cx, cz);
}

// Biome index per sample (R8UI) and the biomes' colours (a 256 x 1 palette).
async function loadBiomes() {
  const response = (await prefetched('biomes')) || await api('biomes');
  const colours = (response.headers.get('X-Terrane-Biome-Colors') || '').split(';');
  const palette = new Uint8Array(256 * 4).fill(128);
  colours.forEach((c, k) => { if (c) palette.set([...c.split(',').map(Number), 255], k * 4); });
  terrain.biomes = new Uint8Array(await response.arrayBuffer());
  terrain.palette = palette;
  makeTexture(texture('biomes'), gl.R8UI, terrain.cellsX + 1, terrain.cellsZ + 1, gl.RED_INTEGER, gl.UNSIGNED_BYTE, terrain.biomes);
  terrain.biomeStride = 1;
  makeTexture(texture('palette'), gl.RGBA8, 256, 1, gl.RGBA, gl.UNSIGNED_BYTE, palette);
}

// ----- mapped materials -----
// The material set's mapping and each sample's texture layer (GET /api/materials): drawn by the
// terrain shader with height blending, triplanar steep faces and macro variation.
const materials = { on: false, mapping: null, layers: 0, images: 0, arrays: null, loads: 0 };
// The image arrays' slices are MAP_SIZE square (every image is resized to it) with mipmaps.
const MAP_SIZE = 256;
// The map kinds, each an RGBA8 array of one slice a layer (the order of trn_material_map), and
// the layers' info texture; 1 x 1 x 1 (and no image) until a material set has image maps.
const MAP_KINDS = ['albedo', 'normal', 'roughness', 'height', 'emissive'];
function materialArrays(layers = 0) {
  if (materials.arrays && (!layers || materials.arrays.layers === layers)) return materials.arrays;
  const size = layers ? MAP_SIZE : 1, depth = Math.max(layers, 1), mips = layers ? Math.log2(MAP_SIZE) + 1 : 1;
  const old = materials.arrays;
  if (old) { for (const k of MAP_KINDS) gl.deleteTexture(old[k]); gl.deleteTexture(old.info); }
  const array = () => {
    const t = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, t);
    gl.texStorage3D(gl.TEXTURE_2D_ARRAY, mips, gl.RGBA8, size, size, depth);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MIN_FILTER, mips > 1 ? gl.LINEAR_MIPMAP_LINEAR : gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_WRAP_S, gl.REPEAT);
    gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_WRAP_T, gl.REPEAT);
    return t;
  };
  const info = gl.createTexture();
  makeTexture(info, gl.RGBA32F, 256, 1, gl.RGBA, gl.FLOAT, new Float32Array(256 * 4));
  materials.arrays = { info, layers };
  for (const k of MAP_KINDS) materials.arrays[k] = array();
  return materials.arrays;
}
// Each layer's image maps into the arrays (resized to MAP_SIZE by the browser's decoder), then
// mipmaps; a layer without a map keeps its colour (albedo) or a noise (height). A newer load
// supersedes one still running.
async function loadMaterialMaps(layers) {
  const load = ++materials.loads;
  const withMaps = layers.filter((l) => l.maps && MAP_KINDS.some((k) => l.maps[k])).length;
  if (!withMaps) { materials.images = 0; return; }
  const info = new Float32Array(256 * 4);
  const images = [];
  await Promise.all(layers.map(async (l, k) => {
    info[k * 4 + 2] = l.texture_scale > 0 ? l.texture_scale : 1;
    for (const map of MAP_KINDS) {
      if (!(l.maps && l.maps[map])) continue;
      const response = await optional('material_map?layer=' + k + '&map=' + map);
      if (!response) continue;
      const bitmap = await createImageBitmap(await response.blob(), { resizeWidth: MAP_SIZE, resizeHeight: MAP_SIZE, resizeQuality: 'high' });
      images.push([map, k, bitmap]);
    }
  }));
  if (load !== materials.loads) return;
  const arrays = materialArrays(layers.length);
  gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
  for (const [map, k, bitmap] of images) {
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, arrays[map]);
    gl.texSubImage3D(gl.TEXTURE_2D_ARRAY, 0, 0, 0, k, MAP_SIZE, MAP_SIZE, 1, gl.RGBA, gl.UNSIGNED_BYTE, bitmap);
    if (map === 'albedo' || map === 'height') info[k * 4 + (map === 'albedo' ? 0 : 1)] = 1;
    else info[k * 4 + 3] += map === 'normal' ? 1 : map === 'roughness' ? 2 : 4;
    bitmap.close();
  }
  for (const t of MAP_KINDS.map((k) => arrays[k])) { gl.bindTexture(gl.TEXTURE_2D_ARRAY, t); gl.generateMipmap(gl.TEXTURE_2D_ARRAY); }
  makeTexture(arrays.info, gl.RGBA32F, 256, 1, gl.RGBA, gl.FLOAT, info);
  materials.images = images.length;
  materials.imageList = images.map(([map, k]) => ({ layer: k, map })).sort((a, b) => a.layer - b.layer || (a.map < b.map ? -1 : 1));
  studio.materials.images = materials.imageList;
  redraw();
}
async function loadMaterials() {
  const response = await optional('materials');
  const reply = response ? await response.json() : null;
  const m = reply && reply.mapping;
  materials.on = !!(m && reply.samples);
  materials.mapping = m || null;
  materials.layers = reply && Array.isArray(reply.layers) ? reply.layers.length : 0;
  studio.materials = { mapping: materials.mapping, layers: materials.layers, maps: reply && Array.isArray(reply.layers) ? reply.layers.map((l) => l.maps || {}) : [], images: materials.imageList || [],
    from: reply && Array.isArray(reply.layers) ? reply.layers.map((l) => l.maps_from || null) : [], notes: reply && Array.isArray(reply.notes) ? reply.notes : [] };
  // A Material document that does not read, or maps found by the older file names: said once.
  if (studio.materials.notes.length && !materials.noted) { materials.noted = true; setStatus(studio.materials.notes.join(' | ')); }
  if (!materials.on) return;
  // The image maps change only with the material set: loaded once a session.
  if (!materials.mapsLoaded) { materials.mapsLoaded = true; materials.mapsReady = loadMaterialMaps(reply.layers).catch(fail); }
  const bin = atob(reply.samples);
  const ids = new Uint8Array(bin.length);
  for (let k = 0; k < bin.length; k++) ids[k] = bin.charCodeAt(k);
  makeTexture(texture('layers'), gl.R8UI, reply.cells[0] + 1, reply.cells[1] + 1, gl.RED_INTEGER, gl.UNSIGNED_BYTE, ids);
  const palette = new Uint8Array(256 * 4).fill(128);
  reply.layers.forEach((l, k) => palette.set([...l.color.map((c) => Math.round(c * 255)), 255], k * 4));
  makeTexture(texture('layerPalette'), gl.RGBA8, 256, 1, gl.RGBA, gl.UNSIGNED_BYTE, palette);
  redraw();
}

// ----- water -----
const colour01 = (c, fallback) => (Array.isArray(c) ? [0, 1, 2].map((k) => (c[k] > 1 ? c[k] / 255 : c[k])) : fallback);
// /api/water/grid (surface or NaN), /api/water/bodies, /api/water/index (optional; each body's
// index X-Terrane-Index-Bytes wide, little-endian, all ones where dry, so 300 lakes stay 300).
// The water shown stays until the new one is ready (no gap while it reloads).
async function loadWater() {
  // The bodies first: without any, the grid (all NaN) is not fetched.
  const bodies = await optional('water/bodies');
  const list = bodies ? ((await bodies.json()).bodies || []) : [];
  if (!bodies || !list.length) { Object.assign(water, { has: false, grid: null, bodies: list }); redraw(); return; }
  const response = await optional('water/grid');
  if (!response) return;
  const grid = new Float32Array(await response.arrayBuffer());
  const indexReply = list.length > 1 ? await optional('water/index') : null;
  const indexBytes = indexReply ? Number(indexReply.headers.get('X-Terrane-Index-Bytes') || 1) : 1;
  const Index = { 1: Uint8Array, 2: Uint16Array, 4: Uint32Array }[indexBytes];
  if (!Index) return;
  const index = indexReply ? new Index(await indexReply.arrayBuffer()) : null;
  const dry = 2 ** (8 * indexBytes) - 1;
  const nx = terrain.cellsX + 1, nz = terrain.cellsZ + 1;
  if (grid.length !== nx * nz) return;
  water.bodies = list;
  // (surface, wet): wet samples 1, then a few rings of dry neighbours at a wet neighbour's
  // surface (0.5: under the bank, hidden by the terrain) so coarse levels keep the shore.
  if (index && index.length !== nx * nz) return;
  const rg = new Float32Array(nx * nz * 2), body = new Index(nx * nz);
  let wet = 0;
  for (let k = 0; k < nx * nz; k++) {
    const w = grid[k];
    if (w === w) { rg[2 * k] = w; rg[2 * k + 1] = 1; wet++; } else { rg[2 * k] = terrain.heights[k] - 1; }
    body[k] = index && index[k] !== dry ? index[k] : 0;
  }
  for (let ring = 0; ring < 4 && wet > 0; ring++) {
    const before = rg.slice();
    for (let j = 0; j < nz; j++) for (let i = 0; i < nx; i++) {
      const k = j * nx + i;
      if (before[2 * k + 1] > 0) continue;
      for (const [di, dj] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
        const a = i + di, b = j + dj;
        if (a < 0 || b < 0 || a >= nx || b >= nz) continue;
        const m = b * nx + a;
        if (before[2 * m + 1] > 0) { rg[2 * k] = before[2 * m]; rg[2 * k + 1] = 0.5; body[k] = body[m]; break; }
      }
    }
  }
  water.has = wet > 0;
  water.grid = rg;
  // Chunks with any wet sample are the only ones the water pass draws.
  water.chunks = new Uint8Array(terrain.chunksX * terrain.chunksZ);
  for (let cz = 0; cz < terrain.chunksZ; cz++) for (let cx = 0; cx < terrain.chunksX; cx++) {
    const [i0, i1, j0, j1] = chunkRange(cx, cz);
    let any = 0;
    for (let j = j0; j <= j1 && !any; j++) for (let i = i0; i <= i1; i++) if (rg[2 * (j * nx + i) + 1] > 0) { any = 1; break; }
    water.chunks[cz * terrain.chunksX + cx] = any;
  }
  makeTexture(texture('water'), gl.RG32F, nx, nz, gl.RG, gl.FLOAT, rg);
  const [internal, type] = { 1: [gl.R8UI, gl.UNSIGNED_BYTE], 2: [gl.R16UI, gl.UNSIGNED_SHORT], 4: [gl.R32UI, gl.UNSIGNED_INT] }[indexBytes];
  makeTexture(texture('waterIndex'), internal, nx, nz, gl.RED_INTEGER, type, body);
  // Each body k at column k % pw: row 2 (k / pw) its shallow colour + absorption distance, the
  // next its deep colour; 256 columns, wider only where the rows would pass the size limit.
  const count = list.reduce((m, b, k) => Math.max(m, (Number.isInteger(b.index) ? b.index : k) + 1), 1);
  const limit = gl.getParameter(gl.MAX_TEXTURE_SIZE);
  const pw = Math.min(limit, Math.max(256, Math.ceil(count / Math.floor(limit / 2))));
  const rows = Math.min(Math.floor(limit / 2), Math.ceil(count / pw));
  const byIndex = new Map(list.map((b, k) => [Number.isInteger(b.index) ? b.index : k, b]));
  const pal = new Float32Array(pw * rows * 2 * 4);
  for (let k = 0; k < pw * rows; k++) {
    const b = byIndex.get(k) || list[0] || {};
    const at = (2 * Math.floor(k / pw) * pw + (k % pw)) * 4;
    pal.set([...colour01(b.shallow_color, [0.25, 0.55, 0.6]), b.absorption_distance > 0 ? b.absorption_distance : 4], at);
    pal.set([...colour01(b.deep_color, [0.05, 0.15, 0.3]), 1], at + pw * 4);
  }
  makeTexture(texture('waterPalette'), gl.RGBA32F, pw, rows * 2, gl.RGBA, gl.FLOAT, pal);
  redraw();
}

// ----- scatter proxies -----
function makeProxyMesh(kind) {
  const pos = [], nrm = [];
  const tri = (a, b, c, n) => { pos.push(...a, ...b, ...c); for (let k = 0; k < 3; k++) nrm.push(...n); };
  if (kind === 'box') {
    const faces = [[[1, 0, 0], [0, 1, 0], [0, 0, 1]], [[-1, 0, 0], [0, 0, 1], [0, 1, 0]], [[0, 1, 0], [0, 0, 1], [1, 0, 0]],
      [[0, -1, 0], [1, 0, 0], [0, 0, 1]], [[0, 0, 1], [1, 0, 0], [0, 1, 0]], [[0, 0, -1], [0, 1, 0], [1, 0, 0]]];
    for (const [n, u, v] of faces) {
      const c = n.map((x) => x * 0.5), at = (a, b) => [0, 1, 2].map((k) => c[k] + (u[k] * a + v[k] * b) * 0.5 + (k === 1 ? 0.5 : 0));
      tri(at(-1, -1), at(1, -1), at(1, 1), n);
      tri(at(-1, -1), at(1, 1), at(-1, 1), n);
    }
  } else {
    const seg = 10;
    for (let k = 0; k < seg; k++) {
      const a0 = k / seg * 2 * Math.PI, a1 = (k + 1) / seg * 2 * Math.PI, am = (a0 + a1) / 2;
      tri([0, 1, 0], [0.5 * Math.cos(a0), 0.15, 0.5 * Math.sin(a0)], [0.5 * Math.cos(a1), 0.15, 0.5 * Math.sin(a1)], norm([Math.cos(am), 0.5, Math.sin(am)]));
      tri([0, 0, 0], [0.12 * Math.cos(a1), 0.15, 0.12 * Math.sin(a1)], [0.12 * Math.cos(a0), 0.15, 0.12 * Math.sin(a0)], [Math.cos(am), 0, Math.sin(am)]);
    }
  }
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  for (const [loc, data] of [[0, pos], [1, nrm]]) {
    gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(data), gl.STATIC_DRAW);
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, 3, gl.FLOAT, false, 0, 0);
  }
  const instances = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, instances);
  for (const loc of [2, 3]) {
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, 4, gl.FLOAT, false, 32, (loc - 2) * 16);
    gl.vertexAttribDivisor(loc, 1);
  }
  gl.bindVertexArray(null);
  return { vao, count: pos.length / 3, instances, n: 0 };
}

// A rule's colour: a hue from its name; rocks and boulders are boxes, everything else a cone.
function ruleLook(rule) {
  let h = 0;
  for (const ch of rule) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  // Hues from red through green and purple to magenta, none water-blue.
  const degrees = h % 260, hue = (degrees < 170 ? degrees : degrees + 100) / 60, x = 1 - Math.abs((hue % 2) - 1);
  const rgb = [[1, x, 0], [x, 1, 0], [0, 1, x], [0, x, 1], [x, 0, 1], [1, 0, x]][Math.floor(hue) % 6].map((v) => 0.25 + 0.6 * v);
  return { rgb, box: /rock|boulder|stone|box|crate|build|house/i.test(rule), small: /grass|flower|bush|shrub|fern|plant|weed/i.test(rule) };
}

async function loadInstances(queued = true) {
  const response = queued ? await optional('instances') : await fetch('api/instances', { headers: { 'X-Terrane-Token': token } });
  if (!queued && !response.ok) return;
  const list = response ? ((await response.json()).instances || []) : [];
  scatter.list = list;
  studio.stats.instanceLoads++;
  if (!scatter.box) { scatter.box = makeProxyMesh('box'); scatter.cone = makeProxyMesh('cone'); }
  const rules = new Map();
  const boxes = [], cones = [];
  for (const it of list) {
    if (!rules.has(it.rule)) rules.set(it.rule, Object.assign(ruleLook(it.rule), { count: 0 }));
    const look = rules.get(it.rule);
    look.count++;
    // Proxies in metres: a boulder-sized box, a tree-sized cone (scaled by the instance).
    const size = (look.box ? 1.5 : look.small ? 1.2 : 5) * (it.scale || 1);
    (look.box ? boxes : cones).push(it.x, it.y, it.z, -(it.yaw || 0) * Math.PI / 180, ...look.rgb, size);
  }
  for (const [mesh, data] of [[scatter.box, boxes], [scatter.cone, cones]]) {
    gl.bindBuffer(gl.ARRAY_BUFFER, mesh.instances);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(data), gl.STATIC_DRAW);
    mesh.n = data.length / 8;
  }
  scatter.rules = [...rules.entries()];
  const legend = $('instances');
  legend.textContent = '';
  for (const [rule, look] of scatter.rules) {
    const li = document.createElement('li'), swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.backgroundColor = 'rgb(' + look.rgb.map((v) => Math.round(v * 255)).join(',') + ')';
    li.append(swatch, ' ' + rule + ' (' + (look.box ? 'box' : 'cone') + ', ' + look.count + ')');
    legend.appendChild(li);
  }
  if (!list.length) legend.innerHTML = '<li class="hint">no instances (the recipe has no palette)</li>';
  redraw();
}

// ----- cameras -----
function resetCamera() {
  camera.target = [terrain.sizeX / 2, (terrain.lo + terrain.hi) / 2, terrain.sizeZ / 2];
  camera.dist = Math.max(terrain.sizeX, terrain.sizeZ) * 1.3;
  camera.yaw = 0.6;
  camera.pitch = 0.7;
}
function eyePosition() {
  if (camera.mode === 'fly') return camera.pos;
  const c = Math.cos(camera.pitch), t = camera.target;
  return [t[0] + camera.dist * c * Math.sin(camera.yaw), t[1] + camera.dist * Math.sin(camera.pitch), t[2] + camera.dist * c * Math.cos(camera.yaw)];
}
// The direction the camera looks along.
function viewDirection() {
  const c = Math.cos(camera.pitch);
  return [-c * Math.sin(camera.yaw), -Math.sin(camera.pitch), -c * Math.cos(camera.yaw)];
}
function viewProjection() {
  const aspect = canvas.width / Math.max(canvas.height, 1), extent = Math.max(terrain.sizeX, terrain.sizeZ, terrain.hi - terrain.lo);
  const eye = eyePosition();
  const target = camera.mode === 'fly' ? [eye[0] + viewDirection()[0], eye[1] + viewDirection()[1], eye[2] + viewDirection()[2]] : camera.target;
  const near = camera.mode === 'fly' ? Math.max(0.05, Math.min(terrain.cellX, terrain.cellZ) * 0.25) : Math.max(0.05, camera.dist / 500);
  const far = camera.mode === 'fly' ? extent * 4 : camera.dist + extent * 2;
  return multiply(perspective(camera.fov, aspect, near, far), lookAt(eye, target, [0, 1, 0]));
}
function enterFly() {
  camera.pos = eyePosition();
  camera.mode = 'fly';
  $('camera').value = 'fly';
}
function enterOrbit() {
  // The new target: where the view meets the terrain's middle height, at most 3 sizes ahead.
  const d = viewDirection(), e = camera.pos, mid = (terrain.lo + terrain.hi) / 2;
  let t = d[1] < -1e-3 ? (e[1] - mid) / -d[1] : Math.max(terrain.sizeX, terrain.sizeZ) / 2;
  t = Math.max(1, Math.min(t, 3 * Math.max(terrain.sizeX, terrain.sizeZ)));
  camera.target = [e[0] + d[0] * t, e[1] + d[1] * t, e[2] + d[2] * t];
  camera.dist = t;
  camera.mode = 'orbit';
  $('camera').value = 'orbit';
}

// ----- drawing -----
// The frustum's six planes (a, b, c, d) from a view-projection matrix.
function frustumPlanes(m) {
  const row = (r) => [m[r], m[4 + r], m[8 + r], m[12 + r]];
  const r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
  return [[1, r0], [-1, r0], [1, r1], [-1, r1], [1, r2], [-1, r2]].map(([s, r]) => r3.map((v, k) => v + s * r[k]));
}

// Each visible chunk's level: the coarsest whose error, projected at the chunk's nearest
// point, stays within lodErrorPixels. Fills studio.levels (-1 culled) and the instance lists.
function chooseLevels(vp) {
  const planes = frustumPlanes(vp), eye = eyePosition(), NX = terrain.chunksX, NZ = terrain.chunksZ, L = terrain.levels;
  const C = terrain.chunkCells, cx0 = terrain.cellX * C, cz0 = terrain.cellZ * C;
  const K = canvas.height / (2 * Math.tan(camera.fov / 2));
  const levels = studio.levels && studio.levels.length === NX * NZ ? studio.levels : new Int8Array(NX * NZ);
  // The first frame: every chunk at its coarsest level (a picture at once); the next one refines.
  // Until the whole field is in (terrain.coarse), every frame stays at the coarsest levels.
  const allowance = studio.coarseFrame || terrain.coarse ? Infinity : lodErrorPixels;
  let culled = 0;
  for (let cz = 0; cz < NZ; cz++) for (let cx = 0; cx < NX; cx++) {
    const c = cz * NX + cx;
    const x0 = cx * cx0, x1 = Math.min((cx + 1) * cx0, terrain.sizeX), z0 = cz * cz0, z1 = Math.min((cz + 1) * cz0, terrain.sizeZ);
    const y0 = terrain.cmin[c] - terrain.lod[c * L + L - 1], y1 = terrain.cmax[c];
    let inside = true;
    for (let k = 0; k < 6; k++) {
      const p = planes[k];
      if (p[0] * (p[0] > 0 ? x1 : x0) + p[1] * (p[1] > 0 ? y1 : y0) + p[2] * (p[2] > 0 ? z1 : z0) + p[3] < 0) { inside = false; break; }
    }
    if (!inside) { levels[c] = -1; culled++; continue; }
    const dx = Math.max(x0 - eye[0], 0, eye[0] - x1), dy = Math.max(y0 - eye[1], 0, eye[1] - y1), dz = Math.max(z0 - eye[2], 0, eye[2] - z1);
    const d = Math.hypot(dx, dy, dz);
    let level = 0;
    if (d > 0) while (level + 1 < L && terrain.lod[c * L + level + 1] * K / d <= allowance) level++;
    levels[c] = level;
  }
  studio.levels = levels;
  studio.stats.chunksCulled = culled;
  return levels;
}

// The chunks of each level as (i0, j0, four skirt depths) instances. An edge shared with a
// chunk at the same level matches it exactly and gets no skirt (0: its triangles are empty);
// beside another level the skirt is twice the larger of the two errors deep.
const INSTANCE_FLOATS = 6;
function chunkInstances(levels, only) {
  const NX = terrain.chunksX, NZ = terrain.chunksZ, L = terrain.levels, C = terrain.chunkCells, lod = terrain.lod;
  const pad = 0.5 * terrain.cellX;
  const skirt = (c, l, cx, cz) => {
    if (cx < 0 || cz < 0 || cx >= NX || cz >= NZ) return 0;
    const n = cz * NX + cx, m = levels[n];
    if (m === l) return 0;
    return 2 * Math.max(lod[c * L + l], m < 0 ? lod[n * L + L - 1] : lod[n * L + m]) + pad;
  };
  // Per level, chunks without skirts first (drawn with the grid's indices only), then the rest.
  const bare = [], skirted = [];
  for (let l = 0; l < L; l++) { bare.push([]); skirted.push([]); }
  let total = 0;
  for (let cz = 0; cz < NZ; cz++) for (let cx = 0; cx < NX; cx++) {
    const c = cz * NX + cx, l = levels[c];
    if (l < 0 || (only && !only[c])) continue;
    const s0 = skirt(c, l, cx, cz - 1), s1 = skirt(c, l, cx, cz + 1), s2 = skirt(c, l, cx - 1, cz), s3 = skirt(c, l, cx + 1, cz);
    (s0 || s1 || s2 || s3 ? skirted : bare)[l].push(cx * C, cz * C, s0, s1, s2, s3);
    total++;
  }
  const data = new Float32Array(total * INSTANCE_FLOATS), counts = [], bareCounts = [], offsets = [];
  let at = 0;
  for (let l = 0; l < L; l++) {
    offsets.push(at);
    data.set(bare[l], at * INSTANCE_FLOATS);
    data.set(skirted[l], (at + bare[l].length / INSTANCE_FLOATS) * INSTANCE_FLOATS);
    bareCounts.push(bare[l].length / INSTANCE_FLOATS);
    counts.push((bare[l].length + skirted[l].length) / INSTANCE_FLOATS);
    at += counts[l];
  }
  return { data, counts, bareCounts, offsets };
}

function drawChunks(set) {
  gl.bindBuffer(gl.ARRAY_BUFFER, chunkBuffer);
  gl.bufferData(gl.ARRAY_BUFFER, set.data, gl.STREAM_DRAW);
  for (let l = 0; l < levelMeshes.length; l++) {
    if (!set.counts[l]) continue;
    const mesh = levelMeshes[l];
    gl.bindVertexArray(mesh.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, chunkBuffer);
    gl.uniform1i(currentProgram.u.u_stride, 1 << l);
    const bare = set.bareCounts[l], rest = set.counts[l] - bare;
    for (const [first, n, count] of [[0, bare, mesh.gridCount], [bare, rest, mesh.count]]) {
      if (!n) continue;
      const offset = (set.offsets[l] + first) * INSTANCE_FLOATS * 4;
      gl.vertexAttribPointer(1, 2, gl.FLOAT, false, INSTANCE_FLOATS * 4, offset);
      gl.vertexAttribPointer(2, 4, gl.FLOAT, false, INSTANCE_FLOATS * 4, offset + 8);
      gl.drawElementsInstanced(gl.TRIANGLES, count, gl.UNSIGNED_SHORT, 0, n);
    }
  }
  gl.bindVertexArray(null);
}
let currentProgram = null;
function useProgram(p) { finishProgram(p); currentProgram = p; gl.useProgram(p.p); return p.u; }
function bindTexture(unit, tex, location) {
  gl.activeTexture(gl.TEXTURE0 + unit);
  gl.bindTexture(gl.TEXTURE_2D, tex);
  gl.uniform1i(location, unit);
}

let lastFrame = 0;
const frameTimes = [];
function draw() {
  dirty = false;
  const t0 = performance.now();
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(canvas.clientWidth * dpr), h = Math.round(canvas.clientHeight * dpr);
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  gl.viewport(0, 0, canvas.width, canvas.height);
  gl.clearColor(0.11, 0.125, 0.14, 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  if (!levelMeshes.length || !terrain.lod) return;
  gl.enable(gl.DEPTH_TEST);
  gl.disable(gl.CULL_FACE);
  const vp = viewProjection(), eye = eyePosition();
  const levels = chooseLevels(vp);
  // Until the full program is compiled, the first frame's one draws every level (no mapped
  // materials, contours or masks meanwhile).
  const compiling = !programReady(programs.terrain);
  if (compiling) redrawWhenCompiled();
  const first = (studio.coarseFrame || terrain.coarse || compiling) && programs.first;
  let u = useProgram(first ? programs.first : programs.terrain);
  gl.uniformMatrix4fv(u.u_vp, false, vp);
  gl.uniform2i(u.u_cells, terrain.cellsX, terrain.cellsZ);
  gl.uniform2f(u.u_cell, terrain.cellX, terrain.cellZ);
  gl.uniform1f(u.u_lo, terrain.lo);
  gl.uniform1f(u.u_hi, terrain.hi);
  gl.uniform1f(u.u_sea, water.has ? -1e30 : terrain.seaLevel);
  gl.uniform1f(u.u_contour, show.contours ? Math.max(Number($('contour-step').value) || 0, 0) : 0);
  gl.uniform3f(u.u_eye, eye[0], eye[1], eye[2]); // the mapped path's highlights
  gl.uniform3f(u.u_brush, brushAt ? brushAt[0] : 0, brushAt ? brushAt[1] : 0, brushAt && currentTool() ? radius() : 0);
  bindTexture(0, textures.heights, u.u_h);
  bindTexture(1, textures.biomes, u.u_b);
  gl.uniform1i(u.u_hs, terrain.heightStride);
  gl.uniform1i(u.u_bs, terrain.biomeStride);
  bindTexture(2, textures.palette, u.u_pal);
  bindTexture(6, show.mask && textures.mask ? textures.mask : textures.biomes, u.u_mask);
  gl.uniform1i(u.u_mask_on, show.mask && textures.mask ? 1 : 0);
  const mapped = materials.on && show.materials && textures.layers;
  bindTexture(7, mapped ? textures.layers : textures.biomes, u.u_layer);
  bindTexture(8, mapped ? textures.layerPalette : textures.palette, u.u_lpal);
  gl.uniform1i(u.u_mapped, mapped ? 1 : 0);
  const arrays = materialArrays();
  gl.activeTexture(gl.TEXTURE9);
  gl.bindTexture(gl.TEXTURE_2D_ARRAY, arrays.albedo);
  gl.uniform1i(u.u_albedo, 9);
  gl.activeTexture(gl.TEXTURE10);
  gl.bindTexture(gl.TEXTURE_2D_ARRAY, arrays.height);
  gl.uniform1i(u.u_lheight, 10);
  bindTexture(11, arrays.info, u.u_linfo);
  [['normal', 'u_lnormal'], ['roughness', 'u_lrough'], ['emissive', 'u_lemit']].forEach(([map, name], k) => {
    gl.activeTexture(gl.TEXTURE12 + k);
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, arrays[map]);
    gl.uniform1i(u[name], 12 + k);
  });
  gl.uniform1i(u.u_mapbits, (show.normal ? 1 : 0) | (show.roughness ? 2 : 0) | (show.emissive ? 4 : 0));
  gl.uniform1i(u.u_maps, mapped && show.maps && materials.images > 0 ? 1 : 0);
  gl.uniform1i(u.u_blend, show.blending ? 1 : 0);
  const m = materials.mapping || {};
  gl.uniform4f(u.u_map, m.triplanar ? Math.cos((m.triplanar_slope || 0) * Math.PI / 180) : -2,
    m.triplanar_sharpness || 1, m.height_blend ? m.height_blend_contrast || 0 : 0, m.macro_variation || 0);
  gl.uniform1f(u.u_macro_scale, m.macro_scale || 0.01);
  if ((studio.coarseFrame || terrain.coarse) && wholeMesh) {
    // Every chunk at the coarsest level is this one grid (culling saves nothing here).
    gl.bindVertexArray(wholeMesh.vao);
    gl.uniform1i(u.u_stride, terrain.chunkCells);
    gl.drawElementsInstanced(gl.TRIANGLES, wholeMesh.count, gl.UNSIGNED_SHORT, 0, 1);
    gl.bindVertexArray(null);
    studio.stats.chunksDrawn = terrain.chunksX * terrain.chunksZ;
  } else {
    const set = chunkInstances(levels, null);
    drawChunks(set);
    studio.stats.chunksDrawn = set.data.length / INSTANCE_FLOATS;
  }
  studio.stats.instancesDrawn = 0;
  if (show.instances && scatter.box && programReady(programs.proxy)) {
    u = useProgram(programs.proxy);
    gl.uniformMatrix4fv(u.u_vp, false, vp);
    for (const mesh of [scatter.box, scatter.cone]) {
      if (!mesh.n) continue;
      gl.bindVertexArray(mesh.vao);
      gl.drawArraysInstanced(gl.TRIANGLES, 0, mesh.count, mesh.n);
      studio.stats.instancesDrawn += mesh.n;
    }
    gl.bindVertexArray(null);
  }
  studio.stats.waterChunksDrawn = 0;
  if ((show.instances && scatter.box) || (show.water && water.has)) if (!programReady(programs.proxy) || !programReady(programs.water)) redrawWhenCompiled();
  if (show.water && water.has && programReady(programs.water)) {
    u = useProgram(programs.water);
    gl.uniformMatrix4fv(u.u_vp, false, vp);
    gl.uniform2i(u.u_cells, terrain.cellsX, terrain.cellsZ);
    gl.uniform2f(u.u_cell, terrain.cellX, terrain.cellZ);
    gl.uniform3f(u.u_eye, eye[0], eye[1], eye[2]);
    bindTexture(0, textures.heights, u.u_h);
    bindTexture(3, textures.water, u.u_w);
    bindTexture(4, textures.waterIndex, u.u_wi);
    bindTexture(5, textures.waterPalette, u.u_wpal);
    // Water at most at level 2: its shore ring of dilated samples is four samples wide.
    const capped = levels.map((l) => Math.min(l, 2));
    const wset = chunkInstances(capped, water.chunks);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    gl.depthMask(false);
    drawChunks(wset);
    gl.depthMask(true);
    gl.disable(gl.BLEND);
    studio.stats.waterChunksDrawn = wset.data.length / INSTANCE_FLOATS;
  }
  drawMinimapOverlay();
  const t1 = performance.now();
  studio.stats.frames++;
  if (lastFrame && t1 - lastFrame < 1000) {
    frameTimes.push(t1 - lastFrame);
    if (frameTimes.length > 30) frameTimes.shift();
    const mean = frameTimes.reduce((a, b) => a + b, 0) / frameTimes.length;
    studio.fps = 1000 / mean;
  }
  lastFrame = t1;
  studio.frameMs = t1 - t0;
  const counts = new Array(terrain.levels).fill(0);
  for (const l of levels) if (l >= 0) counts[l]++;
  studio.stats.levelCounts = counts;
  $('fps').textContent = (continuous() ? studio.fps.toFixed(1) + ' fps, ' : '') + studio.frameMs.toFixed(1) + ' ms (cpu) · chunks by level ' + counts.join('/');
  if (continuous() && !measuring) redraw();
}
// Nothing is drawn before the first frame: a frame requested while the data load (a full-detail
// one, seconds in a software renderer) would hold up the coarse first frame behind it.
function redraw() {
  if (studio.firstFrameMs === null) return;
  if (!dirty) { dirty = true; requestAnimationFrame(() => { stepFly(); draw(); }); }
}

// ----- fly camera: WASD moves, Q/E down/up, Shift faster; right-drag (or any drag in fly) looks -----
const keys = new Set();
let flyClock = 0, measuring = false;
const continuous = () => measuring || params.get('continuous') === '1' || (camera.mode === 'fly' && keys.size > 0);
function stepFly() {
  const now = performance.now(), dt = flyClock ? Math.min(0.1, (now - flyClock) / 1000) : 0;
  flyClock = keys.size ? now : 0;
  if (!keys.size || !dt) return;
  const speed = Math.max(terrain.sizeX, terrain.sizeZ) * 0.15 * (keys.has('shift') ? 4 : 1) * dt;
  const d = viewDirection(), right = norm(cross(d, [0, 1, 0]));
  const move = [0, 0, 0];
  const add = (v, s) => { for (let k = 0; k < 3; k++) move[k] += v[k] * s; };
  if (keys.has('w')) add(d, 1);
  if (keys.has('s')) add(d, -1);
  if (keys.has('d')) add(right, 1);
  if (keys.has('a')) add(right, -1);
  if (keys.has('e')) add([0, 1, 0], 1);
  if (keys.has('q')) add([0, 1, 0], -1);
  if (camera.mode === 'fly') { for (let k = 0; k < 3; k++) camera.pos[k] += move[k] * speed; } else {
    // Orbit: the keys pan the target over the ground.
    const flat = norm([d[0], 0, d[2]]), side = norm(cross(flat, [0, 1, 0]));
    const f = (keys.has('w') ? 1 : 0) - (keys.has('s') ? 1 : 0), r = (keys.has('d') ? 1 : 0) - (keys.has('a') ? 1 : 0);
    camera.target[0] += (flat[0] * f + side[0] * r) * speed;
    camera.target[2] += (flat[2] * f + side[2] * r) * speed;
  }
}

// ----- mini-map: a hillshade with the biome colours; a click moves the camera's target -----
const minimap = { canvas: $('minimap'), base: null, dirty: true, timer: 0 };
function minimapDirty() {
  clearTimeout(minimap.timer);
  minimap.timer = setTimeout(() => { minimap.base = null; redraw(); }, minimap.base ? 250 : 0);
}
function minimapBase() {
  const size = minimap.canvas.width, row = terrain.cellsX + 1, H = terrain.heights;
  const image = new ImageData(size, size);
  const at = (i, j) => H[Math.min(terrain.cellsZ, Math.max(0, j)) * row + Math.min(terrain.cellsX, Math.max(0, i))];
  const step = Math.max(terrain.cellsX, terrain.cellsZ) / size;
  const sun = norm([-0.5, 0.8, -0.35]);
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) {
    const i = Math.round(x * step), j = Math.round(y * step), s = Math.max(1, Math.round(step));
    if (i > terrain.cellsX || j > terrain.cellsZ) continue;
    const dx = (at(i + s, j) - at(i - s, j)) / (2 * s * terrain.cellX), dz = (at(i, j + s) - at(i, j - s)) / (2 * s * terrain.cellZ);
    const n = norm([-dx, 1, -dz]), shade = 0.3 + 0.7 * Math.max(0, dot(n, sun));
    const b = terrain.biomes ? terrain.biomes[j * row + i] : 0, p = terrain.palette || [160, 160, 160];
    const k = (y * size + x) * 4;
    let rgb = [p[b * 4], p[b * 4 + 1], p[b * 4 + 2]];
    if (water.has && water.grid[2 * (j * row + i) + 1] === 1) rgb = [50, 100, 160];
    image.data.set([rgb[0] * shade, rgb[1] * shade, rgb[2] * shade, 255], k);
  }
  const off = document.createElement('canvas');
  off.width = off.height = size;
  off.getContext('2d').putImageData(image, 0, 0);
  return off;
}
function drawMinimapOverlay() {
  if (!terrain.heights) return;
  minimap.canvas.style.display = show.minimap ? '' : 'none';
  if (!show.minimap) return;
  if (!minimap.base) minimap.base = minimapBase();
  const g = minimap.canvas.getContext('2d'), size = minimap.canvas.width, scale = size / Math.max(terrain.sizeX, terrain.sizeZ);
  g.drawImage(minimap.base, 0, 0);
  const eye = eyePosition(), d = viewDirection(), t = camera.mode === 'fly' ? eye : camera.target;
  g.strokeStyle = '#ffd54f';
  g.lineWidth = 2;
  g.beginPath();
  g.arc(t[0] * scale, t[2] * scale, 4, 0, 2 * Math.PI);
  g.stroke();
  const f = norm([d[0], 0, d[2]]);
  g.beginPath();
  g.moveTo(t[0] * scale, t[2] * scale);
  g.lineTo(t[0] * scale + f[0] * 16, t[2] * scale + f[2] * 16);
  g.stroke();
}
minimap.canvas.addEventListener('pointerdown', (e) => {
  e.stopPropagation();
  const rect = minimap.canvas.getBoundingClientRect(), scale = Math.max(terrain.sizeX, terrain.sizeZ) / rect.width;
  const x = (e.clientX - rect.left) * scale, z = (e.clientY - rect.top) * scale;
  const h = heightAt(Math.min(x, terrain.sizeX), Math.min(z, terrain.sizeZ));
  if (camera.mode === 'fly') { camera.pos[0] = x; camera.pos[2] = z; camera.pos[1] = Math.max(camera.pos[1], (h ?? 0) + 10); } else camera.target = [x, h ?? camera.target[1], z];
  redraw();
});

// ----- edits -----
function decodeBytes(b64) { return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)); }

// An edit's reply: only the chunks it changed are copied and uploaded.
function applyEdit(reply, interim = false) {
  const row = terrain.cellsX + 1, L = terrain.levels;
  if (reply.chunks.length) terrain.version++;
  for (const c of reply.chunks) {
    const data = new Float32Array(decodeBytes(c.heights).buffer);
    for (let j = 0; j < c.nz; j++) terrain.heights.set(data.subarray(j * c.nx, (j + 1) * c.nx), (c.j0 + j) * row + c.i0);
    gl.bindTexture(gl.TEXTURE_2D, textures.heights);
    gl.texSubImage2D(gl.TEXTURE_2D, 0, c.i0, c.j0, c.nx, c.nz, gl.RED, gl.FLOAT, data);
    if (c.biomes) {
      const labels = decodeBytes(c.biomes);
      for (let j = 0; j < c.nz; j++) terrain.biomes.set(labels.subarray(j * c.nx, (j + 1) * c.nx), (c.j0 + j) * row + c.i0);
      gl.bindTexture(gl.TEXTURE_2D, textures.biomes);
      gl.texSubImage2D(gl.TEXTURE_2D, 0, c.i0, c.j0, c.nx, c.nz, gl.RED_INTEGER, gl.UNSIGNED_BYTE, labels);
    }
    // The reply names one chunk; its neighbours share the border samples it carries.
    for (let dz = -1; dz <= 1; dz++) for (let dx = -1; dx <= 1; dx++) {
      const cx = c.cx + dx, cz = c.cz + dz;
      if (cx < 0 || cz < 0 || cx >= terrain.chunksX || cz >= terrain.chunksZ) continue;
      const [i0, i1, j0, j1] = chunkRange(cx, cz);
      if (i1 < c.i0 || i0 > c.i0 + c.nx - 1 || j1 < c.j0 || j0 > c.j0 + c.nz - 1) continue;
      chunkBounds(cx, cz);
      if (!terrain.lodFromServer) chunkLodLocal(cx, cz);
    }
    if (Array.isArray(c.lod)) for (let l = 0; l < L; l++) terrain.lod[(c.cz * terrain.chunksX + c.cx) * L + l] = l < c.lod.length ? c.lod[l] : Infinity;
  }
  for (const c of reply.chunks) { terrain.lo = Math.min(terrain.lo, terrain.cmin[c.cz * terrain.chunksX + c.cx]); terrain.hi = Math.max(terrain.hi, terrain.cmax[c.cz * terrain.chunksX + c.cx]); }
  if (typeof reply.revision === 'number') applyState(reply); else { $('undo').disabled = !reply.can_undo; $('redo').disabled = !reply.can_redo; }
  if (Array.isArray(reply.layers)) showLayerCounts(reply.layers);
  setStatus(reply.ignored ? reply.ignored + ': nothing changed' : interim ? 'drawing: ' + reply.chunks.length + ' chunk(s) so far' : reply.chunks.length + ' chunk(s) changed');
  if (reply.water_changed) loadWater().catch(fail);
  if (!interim && materials.on && reply.chunks.length) loadMaterials().catch(fail);
  if (reply.chunks.length) minimapDirty();
  redraw();
  return reply;
}
// After a finished edit: the scatter follows the new surface, a second after the last edit and
// outside the request queue (a large palette's placements must not hold up the next stroke).
let instancesTimer = 0;
function afterEdit(reply) {
  if (reply.chunks.length && scatter.list.length) {
    clearTimeout(instancesTimer);
    instancesTimer = setTimeout(() => loadInstances(false).catch(fail), 1000);
  }
  return reply;
}

async function loadCheck() {
  const report = await (await api('check')).json();
  if (report.file) studio.recipeName = String(report.file).split('/').pop();
  const list = $('diagnostics');
  list.textContent = '';
  for (const d of report.diagnostics) {
    const li = document.createElement('li');
    li.className = d.severity;
    li.textContent = (d.line ? 'line ' + d.line + ', column ' + d.column + ': ' : '') + d.severity + ': ' + d.message + ' [' + d.check + ']' +
      (report.on_disk ? ' (the file on disk)' : '');
    list.appendChild(li);
  }
  if (!report.diagnostics.length) list.innerHTML = '<li>no findings</li>';
}

// ----- the graph's nodes: status and CPU time; a click shows the node's preview -----
async function loadNodes() {
  const response = await optional('nodes');
  const list = $('nodes');
  if (!response) { list.innerHTML = '<li class="hint">this server does not list nodes</li>'; return; }
  const reply = await response.json();
  list.textContent = '';
  for (const n of reply.nodes || []) {
    const li = document.createElement('li');
    li.className = 'node ' + (n.status || '');
    li.dataset.node = n.id;
    const ms = (v) => (typeof v === 'number' ? v.toFixed(v < 10 ? 1 : 0) + ' ms' : '');
    li.title = (n.type || '') + ': ' + (n.status || '') + (n.cached_cpu_ms ? ', cached ' + ms(n.cached_cpu_ms) : '');
    const name = document.createElement('span'), info = document.createElement('span');
    name.textContent = n.id;
    info.className = 'group';
    info.textContent = (n.status || '') + ' ' + ms(n.cpu_ms);
    li.append(name, info);
    li.onclick = () => showPreview(n, (n.outputs || [])[0]);
    list.appendChild(li);
  }
  if (reply.quality === 'preview' || reply.quality === 'final') $('quality').value = reply.quality;
  $('nodes-total').textContent = (typeof reply.total_cpu_ms === 'number' ? 'total ' + reply.total_cpu_ms.toFixed(0) + ' ms' : '') +
    (reply.quality ? ', ' + reply.quality : '');
}
function showPreview(node, pin) {
  const box = $('preview'), img = document.createElement('img'), caption = document.createElement('div');
  box.textContent = '';
  const pinName = pin && typeof pin === 'object' ? pin.name || pin.id : pin;
  caption.textContent = node.id + (pinName ? '.' + pinName : '') + ' (' + (node.type || '') + ')';
  img.alt = 'preview of ' + node.id;
  img.onerror = () => { caption.textContent += ': no preview (not evaluated, or not a picture)'; img.remove(); };
  img.src = 'api/preview?node=' + encodeURIComponent(node.id) + (pinName ? '&pin=' + encodeURIComponent(pinName) : '') + '&token=' + encodeURIComponent(token);
  box.append(caption, img);
  for (const p of (node.outputs || []).slice(1)) {
    const b = document.createElement('button'), name = typeof p === 'object' ? p.name || p.id : p;
    b.textContent = name;
    b.onclick = () => showPreview(node, p);
    box.appendChild(b);
  }
}

// ----- explain at cursor (the explain tool, or Alt-click with any tool) -----
async function explainAt(p) {
  const box = $('explain');
  box.textContent = 'explaining (' + p[0].toFixed(1) + ', ' + p[1].toFixed(1) + ')...';
  const response = await optional('explain?x=' + p[0] + '&z=' + p[1]);
  box.textContent = '';
  if (!response) { box.textContent = 'this server cannot explain a point'; return; }
  const reply = await response.json();
  const head = document.createElement('div');
  head.className = 'explain-biome';
  const biome = reply.biome && typeof reply.biome === 'object' ? reply.biome.name : reply.biome;
  head.textContent = 'biome: ' + (biome ?? '?') + ' at (' + p[0].toFixed(1) + ', ' + p[1].toFixed(1) + ')';
  box.appendChild(head);
  box.appendChild(describe(reply, 0));
  studio.lastExplain = reply;
}
// Any JSON as nested lists: a rule per line, numbers rounded.
function describe(value, depth) {
  const ul = document.createElement('ul');
  const entries = Array.isArray(value) ? value.map((v, k) => [k, v]) : Object.entries(value);
  for (const [key, v] of entries) {
    const li = document.createElement('li');
    if (v && typeof v === 'object' && depth < 3 && !(Array.isArray(v) && v.every((x) => typeof x !== 'object'))) {
      const label = Array.isArray(value) && v.id ? v.id : key;
      li.textContent = label + ':';
      if (v.pass === false || v.passed === false || v.match === false) li.className = 'off';
      li.appendChild(describe(v, depth + 1));
    } else {
      const text = (x) => (typeof x === 'number' ? String(Math.round(x * 1000) / 1000) : JSON.stringify(x));
      li.textContent = key + ': ' + (Array.isArray(v) ? '[' + v.map(text).join(', ') + ']' : text(v));
    }
    ul.appendChild(li);
  }
  return ul;
}

// ----- the measuring tool: two clicks, the distance between them -----
function measureTo(p) {
  const a = studio.measurePoint, ha = heightAt(a[0], a[1]), hb = heightAt(p[0], p[1]);
  const flat = Math.hypot(p[0] - a[0], p[1] - a[1]), rise = hb - ha;
  studio.measurePoint = null;
  studio.lastMeasure = { from: a, to: p, horizontal: flat, rise, distance: Math.hypot(flat, rise), grade: flat > 0 ? rise / flat * 100 : 0 };
  setStatus(`measured: ${flat.toFixed(1)} horizontal, ${rise >= 0 ? '+' : ''}${rise.toFixed(1)} m rise, ${studio.lastMeasure.distance.toFixed(1)} along the slope (${studio.lastMeasure.grade.toFixed(1)}% grade)`);
  return studio.lastMeasure;
}

// ----- picking -----
function heightAt(x, z) {
  const fi = x / terrain.cellX, fj = z / terrain.cellZ;
  if (!(fi >= 0 && fj >= 0 && fi <= terrain.cellsX && fj <= terrain.cellsZ)) return null;
  const i = Math.min(Math.floor(fi), terrain.cellsX - 1), j = Math.min(Math.floor(fj), terrain.cellsZ - 1);
  const u = fi - i, v = fj - j, row = terrain.cellsX + 1, H = terrain.heights;
  if (!H) return null; // the first frame's coarse samples only: no readout yet
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
  const a = un(-1), b = un(1);
  const at = (t) => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
  const length = Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
  const steps = Math.min(40000, Math.ceil(length / (Math.min(terrain.cellX, terrain.cellZ) * 2)));
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
const recipe = { layers: [], biomes: [], biome: null, targets: {}, layersFromServer: false };
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
  recipe.layersFromServer = false;
  const served = await optional('layers');
  if (served) {
    const list = (await served.json()).layers || [];
    recipe.layers = list.map((l) => ({ id: l.id || l.name, name: l.name, group: l.group || l.name, enabled: l.enabled !== false, strokes: l.strokes }));
    recipe.layersFromServer = true;
  }
  recipe.biomes = Object.keys(r.biomes || {}).map((name) => ({ name, color: r.biomes[name].color || [0.5, 0.5, 0.5, 1] }));
  if (!recipe.biomes.some((b) => b.name === recipe.biome)) recipe.biome = recipe.biomes.length ? recipe.biomes[0].name : null;
  for (const group of Object.keys(recipe.targets))
    if (!recipe.layers.some((l) => l.id === recipe.targets[group] && l.group === group)) delete recipe.targets[group];
  for (const l of recipe.layers) if (!(l.group in recipe.targets)) recipe.targets[l.group] = l.id;
  showBiomes();
  showLayers();
  if (studio.onRecipe) studio.onRecipe(r);
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

// The recipe's layers: the checked one of the tool's group takes its strokes; the checkbox
// switches the layer (POST /api/layer regenerates) when the server offers it.
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
    on.className = 'enable';
    on.checked = l.enabled;
    on.disabled = !recipe.layersFromServer;
    on.title = (l.enabled ? 'enabled' : 'disabled: generation skips its strokes') + (recipe.layersFromServer ? '' : ' (this server cannot switch layers)');
    on.onchange = () => switchLayer(l, on.checked);
    const name = document.createElement('span'), group = document.createElement('span');
    name.textContent = l.name;
    group.className = 'group';
    group.textContent = l.group + (typeof l.strokes === 'number' ? ' · ' + l.strokes : '');
    li.append(target, on, name, group);
    list.appendChild(li);
  }
}

// An edit's reply counts each layer's strokes: the list follows without a reload.
function showLayerCounts(layers) {
  let changed = false;
  for (const served of layers) {
    const l = recipe.layers.find((x) => x.id === (served.id || served.name));
    if (l && l.strokes !== served.strokes) { l.strokes = served.strokes; changed = true; }
  }
  if (changed) showLayers();
}

async function switchLayer(layer, enabled) {
  setStatus((enabled ? 'enabling ' : 'disabling ') + layer.name + '...');
  const events = watchProgress();
  try {
    const reply = await (await api('layer', { method: 'POST', body: JSON.stringify({ name: layer.id, enabled }), headers: { 'Content-Type': 'application/json' } })).json();
    if ('can_undo' in reply) { $('undo').disabled = !reply.can_undo; $('redo').disabled = !reply.can_redo; }
    await refreshState();
    await reloadTerrain();
    await loadRecipe();
    setStatus(layer.name + (enabled ? ' enabled' : ' disabled'));
  } catch (e) { fail(e); } finally { events.close(); }
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
  const r = radius(), cx = terrain.cellX, cz = terrain.cellZ, row = terrain.cellsX + 1;
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
  if (tool.type === 'protect') {
    if (!d.samples) d.samples = new Map();
    // Samples keep the height they had when the brush first covered them.
    for (const s of protectSamples(d.points.slice(d.protectedUpTo || 0))) if (!d.samples.has(s[1] * (terrain.cellsX + 1) + s[0])) d.samples.set(s[1] * (terrain.cellsX + 1) + s[0], s);
    d.protectedUpTo = d.points.length;
    const samples = [...d.samples.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
    return { type: 'protect', layer, grid: [terrain.cellsX, terrain.cellsZ], samples };
  }
  const stroke = { type: tool.type, layer, radius: radius(), strength: strokeStrength(tool.type), falloff: Number($('falloff').value), points: d.points };
  if (tool.type === 'flatten') stroke.target_height = d.target;
  if (tool.type === 'region') stroke.biome = recipe.biome;
  if (tool.mode) stroke.mode = tool.mode;
  return stroke;
}

// A drag's stroke goes out while it grows: the first request adds it, later ones replace it
// (?extend=1) as one history entry; one request in flight at a time; the release sends the last.
function pumpStroke(d) {
  if (d.inflight || d.failed) return;
  if (d.sentPoints === d.points.length && d.started) { if (d.ended) finishStroke(d); return; }
  if (!d.ended && d.points.length < 2 && !d.started) return;
  const body = JSON.stringify(buildStroke(d));
  if (body.length > MAX_BODY) { d.failed = true; setStatus(d.kind + ': the stroke is ' + body.length + ' bytes, over the 1 MiB a request takes; use a smaller radius'); return; }
  const extend = d.started;
  d.inflight = true;
  d.started = true;
  d.sentPoints = d.points.length;
  studio.stats.strokesSent++;
  if (extend) studio.stats.extendSent++;
  const sent = performance.now();
  api('stroke' + (extend ? '?extend=1' : ''), { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })
    .then((r) => r.json()).then((reply) => {
      d.last = applyEdit(reply, !(d.ended && d.sentPoints === d.points.length));
      // A stroke's round trip: sent, answered, its chunks in the textures (the last 100).
      studio.stats.strokeMs.push(performance.now() - sent);
      if (studio.stats.strokeMs.length > 100) studio.stats.strokeMs.shift();
    })
    .catch((e) => { d.failed = true; fail(e); })
    .finally(() => { d.inflight = false; pumpStroke(d); });
}
function finishStroke(d) {
  if (d.done) return;
  d.done = true;
  if (!d.last) return;
  setStatus(d.last.chunks.length + ' chunk(s) changed');
  afterEdit(d.last);
}

// ----- interaction -----
let drag = null;

canvas.addEventListener('contextmenu', (e) => e.preventDefault());
canvas.addEventListener('pointerdown', (e) => {
  const tool = $('tool').value;
  canvas.setPointerCapture(e.pointerId);
  canvas.focus();
  if (!terrain.heights) return;
  const look = { orbit: true, x: e.clientX, y: e.clientY };
  if (e.button === 2 || e.button === 1) { drag = look; return; }
  if (tool === 'measure') {
    const p = pick(e);
    if (p && studio.measurePoint) measureTo(p); else if (p) { studio.measurePoint = p; setStatus('measure: click the second point'); }
    return;
  }
  if (e.altKey || tool === 'explain') {
    const p = pick(e);
    if (p) explainAt(p).catch(fail);
    return;
  }
  if (!tools[tool]) { drag = look; return; }
  // A stroke (a protect snapshot above all) is made on the exact heights, not the quantised ones.
  if (!terrain.exact) { setStatus('the exact heights are still loading: try again in a moment'); drag = look; return; }
  const p = pick(e);
  if (!p) { drag = look; return; }
  if (tool === 'region' && !recipe.biome) { setStatus('the recipe has no biome to paint'); return; }
  drag = { orbit: false, kind: tool, points: [p], target: heightAt(p[0], p[1]), sentPoints: 0, started: false };
});
canvas.addEventListener('pointermove', (e) => {
  if (drag && drag.orbit) {
    const sign = camera.mode === 'fly' ? -1 : 1;
    camera.yaw -= (e.clientX - drag.x) * 0.005;
    camera.pitch = camera.mode === 'fly' ? Math.max(-1.5, Math.min(1.5, camera.pitch + sign * (e.clientY - drag.y) * 0.005))
      : Math.max(0.05, Math.min(1.5, camera.pitch + (e.clientY - drag.y) * 0.005));
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
    if (Math.hypot(p[0] - last[0], p[1] - last[1]) >= radius() * 0.25) { drag.points.push(p); pumpStroke(drag); }
  }
  redraw();
});
canvas.addEventListener('pointerup', () => {
  const d = drag;
  drag = null;
  if (!d || d.orbit) return;
  d.ended = true;
  setStatus('applying ' + d.kind + '...');
  pumpStroke(d);
});
canvas.addEventListener('wheel', (e) => {
  e.preventDefault();
  if (camera.mode === 'fly') {
    const d = viewDirection(), step = -e.deltaY * 0.001 * Math.max(terrain.sizeX, terrain.sizeZ) * 0.1;
    for (let k = 0; k < 3; k++) camera.pos[k] += d[k] * step;
  } else camera.dist *= Math.exp(e.deltaY * 0.001);
  redraw();
}, { passive: false });
window.addEventListener('resize', redraw);

// Keyboard shortcuts (listed in the side panel and docs/studio.md).
const toolKeys = ['orbit', 'raise', 'lower', 'flatten', 'smooth', 'region', 'protect', 'exclusion', 'erase', 'explain'];
window.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement && e.target.type !== 'range' && e.target.type !== 'checkbox' && e.target.type !== 'radio') return;
  if (e.target instanceof HTMLSelectElement || e.target instanceof HTMLTextAreaElement) return;
  const k = e.key.toLowerCase();
  if ((e.ctrlKey || e.metaKey) && k === 'z') { e.preventDefault(); $(e.shiftKey ? 'redo' : 'undo').click(); return; }
  if ((e.ctrlKey || e.metaKey) && k === 'y') { e.preventDefault(); $('redo').click(); return; }
  if ((e.ctrlKey || e.metaKey) && k === 's') { e.preventDefault(); $('save').click(); return; }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if ('wasdqe'.includes(k) || k === 'shift') { keys.add(k); flyClock = 0; redraw(); return; }
  if (k >= '0' && k <= '9') { $('tool').value = toolKeys[Number(k)]; toolChanged(); return; }
  if (k === 'f') { if (camera.mode === 'fly') enterOrbit(); else enterFly(); redraw(); }
  if (k === 'v') { show.water = !show.water; $('show-water').checked = show.water; redraw(); }
  if (k === 'i') { show.instances = !show.instances; $('show-instances').checked = show.instances;
$('show-contours').addEventListener('change', () => { show.contours = $('show-contours').checked; redraw(); });
$('contour-step').addEventListener('input', redraw); redraw(); }
  if (k === 'm') { show.minimap = !show.minimap; redraw(); }
  if (k === 'c') { show.contours = !show.contours; $('show-contours').checked = show.contours; redraw(); }
  if (k === 'h' || k === 'home') { resetCamera(); if (camera.mode === 'fly') enterOrbit(); redraw(); }
  if (k === '[' || k === ']') { radiusInput(k === '[' ? 0.8 : 1.25); }
});
window.addEventListener('keyup', (e) => { keys.delete(e.key.toLowerCase()); });
window.addEventListener('blur', () => keys.clear());
function radiusInput(factor) {
  const r = $('radius');
  r.value = String(Math.max(Number(r.min), Math.min(Number(r.max), Math.round(Number(r.value) * factor))));
  r.dispatchEvent(new Event('input'));
}

// Undo and redo: a stroke's chunks come back in the reply; a step across a generation or a layer
// switch regenerated the session ("regenerated"): everything is reloaded.
const editButton = (path) => () => api(path, { method: 'POST' }).then((r) => r.json()).then(async (reply) => {
  if (!reply.regenerated) return afterEdit(applyEdit(reply));
  applyState(reply);
  await reloadTerrain();
  await loadRecipe();
  setStatus(path + ': regenerated');
  return reply;
}).catch(fail);
$('undo').onclick = editButton('undo');
$('redo').onclick = editButton('redo');
// Save: refused (409) when the file changed on disk since it was loaded; the page asks.
async function save(force = false) {
  try {
    const r = await (await api('save' + (force ? '?force=1' : ''), { method: 'POST' })).json();
    setStatus('saved ' + r.saved);
    await refreshState();
  } catch (e) {
    if (e.status === 409 && e.reply && e.reply.conflict) {
      const choice = await ask(e.reply.error, [['overwrite', 'Save anyway (replace the file)'], ['cancel', 'Cancel']]);
      if (choice === 'overwrite') return save(true);
      setStatus('not saved: the file changed on disk');
      return;
    }
    fail(e);
  }
}
$('save').onclick = () => save();
// Generate: the recipe as it is on disk now. Unsaved edits would be lost: the page asks first.
async function generate(confirmed = false) {
  if (state.dirty && !confirmed) {
    const choice = await ask('Generate loads the recipe file as it is on disk and discards your unsaved edits. Save them first, or discard them?',
      [['discard', 'Discard edits and generate'], ['cancel', 'Cancel']]);
    if (choice !== 'discard') { setStatus('generate cancelled: the edits are kept'); return; }
  }
  setStatus('generating...');
  const events = watchProgress();
  try {
    await api('generate', { method: 'POST' });
    await reloadTerrain();
    await loadRecipe();
    await loadCheck();
    await refreshState();
    setStatus('generated');
  } catch (e) { fail(e); loadCheck().catch(() => {}); } finally { events.close(); }
}
$('generate').onclick = () => generate();
// Preview / Final: regenerate the session's recipe (its strokes kept, the history not) at that quality.
$('quality').onchange = async () => {
  const quality = $('quality').value;
  setStatus('generating (' + quality + ')...');
  const events = watchProgress();
  try {
    const body = await (await api('recipe')).text();
    await api('generate?quality=' + quality, body.length <= MAX_BODY ? { method: 'POST', body, headers: { 'Content-Type': 'application/json' } } : { method: 'POST' });
    await reloadTerrain();
    await loadRecipe();
    await loadNodes();
    await refreshState();
    setStatus('generated (' + quality + ')');
  } catch (e) { fail(e); } finally { events.close(); }
};
for (const id of ['radius', 'falloff']) {
  const showValue = () => { $(id + '-v').textContent = $(id).value; redraw(); };
  $(id).addEventListener('input', showValue);
  showValue();
}
$('lod').value = String(lodErrorPixels);
$('lod-v').textContent = lodErrorPixels + ' px';
$('lod').addEventListener('input', () => { lodErrorPixels = Number($('lod').value); $('lod-v').textContent = $('lod').value + ' px'; redraw(); });
$('strength').addEventListener('input', showStrength);
$('tool').addEventListener('change', toolChanged);
$('camera').addEventListener('change', () => { if ($('camera').value === 'fly') enterFly(); else enterOrbit(); redraw(); });
$('show-water').addEventListener('change', () => { show.water = $('show-water').checked; redraw(); });
$('show-instances').addEventListener('change', () => { show.instances = $('show-instances').checked; redraw(); });
$('show-instances').checked = show.instances;
$('show-contours').addEventListener('change', () => { show.contours = $('show-contours').checked; redraw(); });
$('contour-step').addEventListener('input', redraw);

// One Server-Sent Events stream for the page's life: generation progress, and the session's
// state after every change by any page (or on disk): another page's edit reloads what this one
// shows, so every open page shows the one shared session and history.
let progressShown = false, resyncing = null, diskAsked = null;
function watchProgress() { progressShown = true; return { close() { progressShown = false; } }; }
function openEvents() {
  const events = new EventSource('api/events?token=' + encodeURIComponent(token) + '&client=' + clientId);
  events.addEventListener('progress', (e) => {
    if (!progressShown) return;
    const p = JSON.parse(e.data);
    setStatus('generating: ' + p.stage + ' ' + Math.round(p.done * 100) + '%');
  });
  events.addEventListener('state', (e) => {
    const st = JSON.parse(e.data), was = studio.revision;
    applyState(st);
    if (st.others && st.revision !== was) resync();
    onDiskState(st);
  });
  studio.events = events;
}
// Another page changed the session: heights, water, layers and history as the server has them.
function resync() {
  if (resyncing) { resyncing.again = true; return; }
  resyncing = { again: false };
  const run = async () => {
    do {
      resyncing.again = false;
      await reloadTerrain();
      await loadRecipe();
      await refreshState();
    } while (resyncing.again);
  };
  run().then(() => { studio.stats.resyncs = (studio.stats.resyncs || 0) + 1; setStatus('updated from another page'); })
    .catch(fail).finally(() => { resyncing = null; });
}
// The recipe file changed on disk: say so (with where a broken edit is) and offer to load it.
async function onDiskState(st) {
  // Once per new finding: a changed file, a broken one, a fixed one.
  const key = st.disk_changed ? JSON.stringify(st.disk_error || null) : null;
  if (key === diskAsked) return;
  diskAsked = key;
  loadCheck().catch(() => {});
  if (!st.disk_changed) return;
  const where = st.disk_error ? ' It does not read as a recipe' + (st.disk_error.line ? ' (line ' + st.disk_error.line + ', column ' + st.disk_error.column + ')' : '') + ': ' + st.disk_error.message : '';
  setStatus('the recipe changed on disk' + (st.disk_error ? ': ' + (st.disk_error.line ? 'line ' + st.disk_error.line + ', column ' + st.disk_error.column + ': ' : '') + st.disk_error.message : ''));
  if (st.disk_error) return; // nothing to load yet: the Graph check panel shows where
  const choice = await ask('The recipe file changed on disk since the studio loaded it.' + where +
    (state.dirty ? ' Loading it discards your unsaved edits; saving now would overwrite that change.' : ''),
    [['load', 'Load the file from disk'], ['keep', 'Keep editing']]);
  if (choice === 'load') await generate(true);
}
async function refreshState() {
  const response = await optional('state');
  if (response) applyState(await response.json());
}
// Unsaved work from an earlier run (the recovery file beside the recipe): restore or drop it.
async function offerRecovery() {
  if (!state.recovery) return;
  const choice = await ask('Unsaved work from an earlier session was found (' + state.recovery + '). Restore it?',
    [['restore', 'Restore'], ['discard', 'Discard it']]);
  const reply = await (await api('recovery', { method: 'POST', body: JSON.stringify({ restore: choice === 'restore' }), headers: { 'Content-Type': 'application/json' } })).json();
  applyState(reply);
  if (choice === 'restore') {
    await reloadTerrain();
    await loadRecipe();
    setStatus('restored the unsaved work');
  }
}

async function reloadTerrain() {
  await loadHeights();
  await loadWater();
  await loadInstances();
  loadNodes().catch(fail);
}

// ----- tests and benchmarks -----
// The frame as RGBA bytes (drawn now, read before the compositor takes it).
function readFrame() {
  draw();
  const px = new Uint8Array(canvas.width * canvas.height * 4);
  gl.readPixels(0, 0, canvas.width, canvas.height, gl.RGBA, gl.UNSIGNED_BYTE, px);
  return px;
}
// How many pixels change when `what` (water, instances) is shown, and how many of them are bluish.
studio.pixelsChangedBy = (what) => {
  const was = show[what];
  show[what] = true;
  const on = readFrame();
  show[what] = false;
  const off = readFrame();
  show[what] = was;
  redraw();
  let changed = 0, bluish = 0, greener = 0, brighter = 0;
  for (let k = 0; k < on.length; k += 4) {
    if (Math.abs(on[k] - off[k]) + Math.abs(on[k + 1] - off[k + 1]) + Math.abs(on[k + 2] - off[k + 2]) > 24) {
      changed++;
      if (on[k + 2] > on[k] + 10) bluish++;
      if (on[k + 1] > off[k + 1] + 20) greener++;
      if (on[k] + on[k + 1] + on[k + 2] > off[k] + off[k + 1] + off[k + 2]) brighter++;
    }
  }
  return { changed, bluish, greener, brighter, total: on.length / 4 };
};
// Frame times while the orbit camera turns: each frame drawn and finished (a one-pixel read
// waits for the GPU), for `seconds` or at least `frames` frames; frames per second from the median.
studio.measure = (seconds = 3, frames = 3, turn = 0.01) => new Promise((resolve) => {
  measuring = true;
  const start = performance.now(), times = [];
  const step = () => {
    const t0 = performance.now();
    camera.yaw += turn;
    draw();
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
    const now = performance.now();
    times.push(now - t0);
    if (now - start < seconds * 1000 || times.length < frames) { setTimeout(step, 0); return; }
    measuring = false;
    const sorted = times.slice().sort((a, b) => a - b), median = sorted[sorted.length >> 1];
    resolve({ frames: times.length, median_ms: median, best_ms: sorted[0], fps: 1000 / median, levels: studio.stats.levelCounts, chunks: studio.stats.chunksDrawn });
  };
  setTimeout(step, 0);
});
// The heights texture read back (R32F through a framebuffer): what the vertex shader samples.
studio.textureHeights = () => {
  if (!gl.getExtension('EXT_color_buffer_float')) return null;
  const fb = gl.createFramebuffer(), w = terrain.cellsX + 1, h = terrain.cellsZ + 1;
  gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
  gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, textures.heights, 0);
  const rgba = new Float32Array(w * h * 4);
  gl.readPixels(0, 0, w, h, gl.RGBA, gl.FLOAT, rgba);
  gl.bindFramebuffer(gl.FRAMEBUFFER, null);
  gl.deleteFramebuffer(fb);
  const out = new Float32Array(w * h);
  for (let k = 0; k < out.length; k++) out[k] = rgba[k * 4];
  return out;
};
// The water as the GPU holds it, against the server's replies: every wet sample's body index read
// back from the index texture (none may read dry or name another body) and each body's colours
// where the shader looks them up in the palette texture.
studio.waterCheck = async () => {
  const bodies = (await (await api('water/bodies')).json()).bodies || [];
  const grid = new Float32Array(await (await api('water/grid')).arrayBuffer());
  const reply = await api('water/index');
  const bytes = Number(reply.headers.get('X-Terrane-Index-Bytes'));
  const Index = { 1: Uint8Array, 2: Uint16Array, 4: Uint32Array }[bytes];
  const index = new Index(await reply.arrayBuffer());
  const read = (tex, w, h, format, type, Array) => {
    const fb = gl.createFramebuffer();
    gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, tex, 0);
    const out = new Array(w * h * 4);
    gl.readPixels(0, 0, w, h, format, type, out);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.deleteFramebuffer(fb);
    return out;
  };
  const nx = terrain.cellsX + 1, nz = terrain.cellsZ + 1;
  const onGpu = read(textures.waterIndex, nx, nz, gl.RGBA_INTEGER, gl.UNSIGNED_INT, Uint32Array);
  // The palette's layout as loadWater makes it.
  const count = bodies.length, limit = gl.getParameter(gl.MAX_TEXTURE_SIZE);
  const width = Math.min(limit, Math.max(256, Math.ceil(count / Math.floor(limit / 2)))), rows = Math.min(Math.floor(limit / 2), Math.ceil(count / width));
  const pal = read(textures.waterPalette, width, rows * 2, gl.RGBA, gl.FLOAT, Float32Array);
  let wet = 0, dry = 0, other = 0, miscounted = 0, colours = 0;
  const counts = new Array(count).fill(0);
  for (let k = 0; k < nx * nz; k++) {
    if (grid[k] !== grid[k]) continue;
    wet++;
    const b = onGpu[4 * k];
    if (b >= count) { dry++; continue; }
    if (b !== index[k]) other++;
    counts[b]++;
  }
  bodies.forEach((b, k) => {
    if (counts[k] !== b.wet_samples) miscounted++;
    const at = (2 * Math.floor(k / width) * width + (k % width)) * 4;
    const shallow = colour01(b.shallow_color, null), deep = colour01(b.deep_color, null);
    for (let c = 0; c < 3; c++) if (Math.abs(pal[at + c] - shallow[c]) > 1e-6 || Math.abs(pal[at + width * 4 + c] - deep[c]) > 1e-6) { colours++; break; }
  });
  const last = count - 1, lastAt = (2 * Math.floor(last / width) * width + (last % width)) * 4;
  return { bytes, bodies: count, wet, dry, other, miscounted, colours, lastShallow: Array.from(pal.subarray(lastAt, lastAt + 3)), lastWet: counts[last] };
};
// lod_error_pixels set directly (the slider stops at 0.5).
studio.setLodErrorPixels = (v) => { $('lod').value = String(v); lodErrorPixels = v; $('lod-v').textContent = v + ' px'; draw(); return Array.from(studio.levels); };
studio.explainAt = explainAt;
studio.pick = pick;

async function start() {
  if (!gl) throw new Error('this browser has no WebGL2');
  if (!gl.getExtension('EXT_color_buffer_float')) { /* only readbacks need it; drawing does not */ }
  const mark = (name) => { studio.timings[name] = Math.round(performance.now()); };
  studio.timings = {};
  mark('script');
  parallelCompile = gl.getExtension('KHR_parallel_shader_compile');
  // The first frame's small program now; the others once the first frame is drawn, while the
  // whole field is fetched (?compile=upfront: all four now, waiting for each, as before).
  const upfront = params.get('compile') === 'upfront';
  programs.first = makeProgram(terrainVS, firstFS);
  const startRest = () => {
    programs.terrain = startProgram(terrainVS, terrainFS);
    programs.water = startProgram(waterVS, waterFS);
    programs.proxy = startProgram(proxyVS, proxyFS);
  };
  if (upfront) { startRest(); for (const k of ['terrain', 'water', 'proxy']) finishProgram(programs[k]); }
  mark('shaders');
  // A software renderer compiles a program for the draw state at its first draw (hundreds of
  // milliseconds): one degenerate triangle in the first frame's state compiles it while the
  // first frame's data is fetched (?warmup=0: not).
  if (params.get('warmup') !== '0') warmUp();
  // The first frame from every 8th sample (?coarse_first=0: from the whole field, at the chosen
  // allowance): 1/64 of the bytes to fetch and upload; a software renderer would rasterize a
  // full-detail frame for seconds, so the first frames stay at the coarsest levels.
  const coarseFirst = params.get('coarse_first') !== '0';
  if (coarseFirst) {
    await loadCoarse(8);
    mark('coarse');
  } else {
    prefetchStart(['biomes', 'lod']);
    await loadHeights(params.get('quantised') !== '0');
    mark('heights');
    await loadWater();
    mark('water');
  }
  studio.coarseFrame = coarseFirst;
  draw();
  studio.coarseFrame = false;
  // The first frame: drawn and finished (a one-pixel read waits for the GPU).
  gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
  studio.firstFrameMs = performance.now();
  studio.firstFrameLevels = studio.stats.levelCounts;
  document.body.dataset.firstFrameMs = studio.firstFrameMs.toFixed(0);
  if (!upfront) startRest();
  if (coarseFirst) {
    // The whole field (16 bits a sample; the exact heights follow), the LOD errors and water.
    prefetchStart(['biomes', 'lod']);
    await loadHeights(params.get('quantised') !== '0');
    mark('heights');
    await loadWater();
    mark('water');
  }
  redraw();
  const exact = exactHeights();
  await loadRecipe();
  toolChanged();
  await loadInstances();
  await loadCheck();
  await loadNodes();
  await exact;
  mark('exact');
  // Ready means drawn as it will stay: the programs compiled (polled, as redrawWhenCompiled).
  while (!['terrain', 'water', 'proxy'].every((k) => programReady(programs[k]))) await new Promise((r) => setTimeout(r, 30));
  mark('programs');
  draw();
  const notes = studio.materials && studio.materials.notes ? studio.materials.notes : [];
  setStatus(terrain.cellsX + ' x ' + terrain.cellsZ + ' cells, first frame ' + studio.firstFrameMs.toFixed(0) + ' ms' + notes.map((n) => ' | ' + n).join(''));
  document.title = 'terrane studio: ready';
  await refreshState();
  // ?events=0: no live updates (a headless capture whose virtual time waits for idle network).
  if (params.get('events') !== '0') openEvents();
  if (state.disk_changed) onDiskState(state);
  offerRecovery().catch(fail);
}
start().catch(fail);
