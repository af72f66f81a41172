// A WebSocket client for Chromium's DevTools endpoint (RFC 6455: the opening handshake, masked
// text frames out, unmasked frames in, pings answered), with the browser WebSocket's shape
// (onopen, onmessage({ data }), onerror, send, close). Debian's own Node (18) has no WebSocket,
// and later ones only behind a flag: the browser test must run wherever `make test` installed
// Debian's nodejs and chromium.
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';

export class DevToolsSocket {
  constructor(address) {
    const u = new URL(address);
    this.onopen = this.onmessage = this.onerror = null;
    this.open = false;
    this.chunks = [];
    this.buffered = 0;
    this.need = 0; // bytes the frame being received needs in all (joined only once they are in)
    this.parts = [];
    this.sock = connect(Number(u.port), u.hostname);
    this.sock.setNoDelay(true);
    const key = randomBytes(16).toString('base64');
    this.sock.on('connect', () => this.sock.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n`
      + `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`));
    this.sock.on('data', (d) => {
      this.chunks.push(d);
      this.buffered += d.length;
      if (this.buffered >= this.need) this.read();
    });
    this.sock.on('error', (e) => { if (this.onerror) this.onerror(e); });
    this.sock.on('close', () => { this.open = false; });
  }

  // The bytes received so far as one buffer (joined only when a frame may be complete).
  take() {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] || Buffer.alloc(0);
  }

  read() {
    this.need = 0;
    let buf = this.take();
    if (!this.open) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = buf.subarray(0, end).toString('latin1').split('\r\n')[0];
      buf = buf.subarray(end + 4);
      this.chunks = [buf];
      this.buffered = buf.length;
      if (!/^HTTP\/1\.1 101\b/.test(status)) {
        if (this.onerror) this.onerror(new Error('no WebSocket: ' + status));
        this.sock.destroy();
        return;
      }
      this.open = true;
      if (this.onopen) this.onopen();
    }
    for (;;) {
      if (buf.length < 2) break;
      const fin = (buf[0] & 0x80) !== 0, op = buf[0] & 0x0f, masked = (buf[1] & 0x80) !== 0;
      let length = buf[1] & 0x7f, at = 2;
      if (length === 126) { if (buf.length < 4) break; length = buf.readUInt16BE(2); at = 4; }
      else if (length === 127) { if (buf.length < 10) break; length = Number(buf.readBigUInt64BE(2)); at = 10; }
      const mask = masked ? buf.subarray(at, at + 4) : null;
      if (masked) at += 4;
      if (buf.length < at + length) { this.need = at + length; break; }
      const payload = Buffer.from(buf.subarray(at, at + length));
      if (mask) for (let k = 0; k < payload.length; k++) payload[k] ^= mask[k & 3];
      buf = buf.subarray(at + length);
      if (op === 0x8) { this.open = false; this.sock.end(); break; }
      if (op === 0x9) { this.frame(0xA, payload); continue; }
      if (op === 0xA) continue;
      this.parts.push(payload);
      if (fin) {
        const text = Buffer.concat(this.parts).toString('utf8');
        this.parts = [];
        if (this.onmessage) this.onmessage({ data: text });
      }
    }
    this.chunks = buf.length ? [buf] : [];
    this.buffered = buf.length;
  }

  frame(op, payload) {
    const n = payload.length, mask = randomBytes(4);
    let head;
    if (n < 126) head = Buffer.from([0x80 | op, 0x80 | n]);
    else if (n < 65536) { head = Buffer.alloc(4); head[0] = 0x80 | op; head[1] = 0x80 | 126; head.writeUInt16BE(n, 2); }
    else { head = Buffer.alloc(10); head[0] = 0x80 | op; head[1] = 0x80 | 127; head.writeBigUInt64BE(BigInt(n), 2); }
    const body = Buffer.from(payload);
    for (let k = 0; k < n; k++) body[k] ^= mask[k & 3];
    this.sock.write(Buffer.concat([head, mask, body]));
  }

  send(text) {
    this.frame(0x1, Buffer.from(text, 'utf8'));
  }

  close() {
    if (this.open) this.frame(0x8, Buffer.alloc(0));
    this.open = false;
    this.sock.end();
  }
}
