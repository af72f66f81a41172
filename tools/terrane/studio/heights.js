// terrane studio: fetches the first frame's quantised 16-bit heights off the page's thread, decodes them to float32 and measures each chunk's height range.
'use strict';

// A request: {path ('api/heights?encoding=u16'), token, client}. The reply: {headers, heights
// (Float32Array), cmin, cmax (per chunk, row-major; quantised: widened by half a step, so they
// hold the exact heights too)} with the arrays transferred, or {error, status}.
const HEADERS = ['X-Terrane-Cells', 'X-Terrane-Size', 'X-Terrane-Chunk-Cells', 'X-Terrane-Sea-Level',
  'X-Terrane-Encoding', 'X-Terrane-Height-Offset', 'X-Terrane-Height-Scale'];

self.onmessage = async (event) => {
  const { path, token, client } = event.data;
  const timings = { start: Math.round(performance.timeOrigin + performance.now()) };
  try {
    const response = await fetch(path, { headers: { 'X-Terrane-Token': token, 'X-Terrane-Client': client } });
    if (!response.ok) {
      let message = response.status + ' ' + response.statusText;
      try { message = (await response.json()).error || message; } catch (e) { /* not JSON */ }
      self.postMessage({ error: 'heights: ' + message, status: response.status });
      return;
    }
    const headers = {};
    for (const name of HEADERS) headers[name] = response.headers.get(name);
    timings.headers = Math.round(performance.timeOrigin + performance.now());
    const bytes = await response.arrayBuffer();
    timings.body = Math.round(performance.timeOrigin + performance.now());
    let heights, half = 0;
    if (headers['X-Terrane-Encoding'] === 'u16') {
      // h = offset + scale * q; 65535 is a hole (NaN). The wire is little-endian.
      const offset = Number(headers['X-Terrane-Height-Offset']), scale = Number(headers['X-Terrane-Height-Scale']);
      const n = bytes.byteLength >> 1;
      let q = new Uint16Array(bytes, 0, n);
      if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) { // a big-endian machine
        const view = new DataView(bytes);
        q = Uint16Array.from({ length: n }, (_, k) => view.getUint16(2 * k, true));
      }
      heights = new Float32Array(n);
      for (let k = 0; k < n; k++) heights[k] = q[k] === 65535 ? NaN : offset + scale * q[k];
      half = scale / 2 + (Math.abs(offset) + scale * 65535) * 1.2e-7; // and float32 rounding
    } else {
      heights = new Float32Array(bytes);
    }
    // Each chunk's lowest and highest sample, shared borders included (frustum culling).
    const [cellsX, cellsZ] = headers['X-Terrane-Cells'].split(',').map(Number);
    const C = Number(headers['X-Terrane-Chunk-Cells']) || 32, row = cellsX + 1;
    const NX = Math.ceil(cellsX / C), NZ = Math.ceil(cellsZ / C);
    const cmin = new Float32Array(NX * NZ), cmax = new Float32Array(NX * NZ);
    for (let cz = 0; cz < NZ; cz++) for (let cx = 0; cx < NX; cx++) {
      const i0 = cx * C, i1 = Math.min(i0 + C, cellsX), j0 = cz * C, j1 = Math.min(j0 + C, cellsZ);
      let lo = Infinity, hi = -Infinity;
      for (let j = j0; j <= j1; j++) for (let k = j * row + i0, e = j * row + i1; k <= e; k++) {
        const h = heights[k];
        if (h < lo) lo = h;
        if (h > hi) hi = h;
      }
      cmin[cz * NX + cx] = lo - half;
      cmax[cz * NX + cx] = hi + half;
    }
    timings.done = Math.round(performance.timeOrigin + performance.now());
    self.postMessage({ headers, heights, cmin, cmax, timings }, [heights.buffer, cmin.buffer, cmax.buffer]);
  } catch (error) {
    self.postMessage({ error: 'heights: ' + String(error && error.message || error) });
  }
};
