/**
 * Vault clients send `LIST /v1/…` (node-vault, hashi-vault-js through axios, curl -X LIST). Node's
 * HTTP parser rejects methods it does not know with a 400 before any handler runs, so the secrets
 * server listens with a plain `net`/`tls` server and hands each connection to the HTTP server
 * through this stream, which follows HTTP/1.1 message framing (request head, then a
 * Content-Length or chunked body) and rewrites only the method token of each request head:
 * `LIST <target>` becomes `GET <target>` plus the header `X-Portcullis-Method: LIST`. Anything it
 * does not understand (oversize heads, upgrades) is passed through untouched for Node's parser to
 * judge. Responses go to the socket unchanged.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

export const LIST_HEADER = 'x-portcullis-method';
const MAX_HEAD = 64 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');

type State =
  | { mode: 'head' }
  | { mode: 'length'; remaining: number }
  | { mode: 'chunk-size' }
  | { mode: 'chunk-data'; remaining: number }
  | { mode: 'trailers' }
  | { mode: 'passthrough' };

export class ListMethodStream extends Duplex {
  private state: State = { mode: 'head' };
  private pending: Buffer = Buffer.alloc(0);

  constructor(readonly socket: Socket) {
    super({ allowHalfOpen: true });
    socket.on('data', (chunk: Buffer) => {
      const out = this.transform(chunk);
      if (out.length && !this.push(out)) socket.pause();
    });
    socket.on('end', () => {
      if (this.pending.length) this.push(this.pending);
      this.pending = Buffer.alloc(0);
      this.push(null);
    });
    socket.on('error', (error) => this.destroy(error));
    socket.on('close', () => this.destroy());
    socket.on('timeout', () => this.emit('timeout'));
    socket.on('drain', () => this.emit('drain'));
  }

  get remoteAddress() {
    return this.socket.remoteAddress;
  }
  get remotePort() {
    return this.socket.remotePort;
  }
  get remoteFamily() {
    return this.socket.remoteFamily;
  }
  get localAddress() {
    return this.socket.localAddress;
  }
  get localPort() {
    return this.socket.localPort;
  }
  get encrypted() {
    return (this.socket as Socket & { encrypted?: boolean }).encrypted ?? false;
  }
  setTimeout(ms: number, callback?: () => void): this {
    this.socket.setTimeout(ms);
    if (callback) this.once('timeout', callback);
    return this;
  }
  setNoDelay(noDelay?: boolean): this {
    this.socket.setNoDelay(noDelay);
    return this;
  }
  setKeepAlive(enable?: boolean, delay?: number): this {
    this.socket.setKeepAlive(enable, delay);
    return this;
  }
  ref(): this {
    this.socket.ref();
    return this;
  }
  unref(): this {
    this.socket.unref();
    return this;
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, encoding, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy(error ?? undefined);
    callback(error);
  }

  /** Feed bytes through the framing state machine; returns what the HTTP parser should see. */
  private transform(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    while (data.length > 0) {
      const state = this.state;
      switch (state.mode) {
        case 'passthrough':
          out.push(data);
          data = Buffer.alloc(0);
          break;
        case 'head': {
          // Tolerate blank lines between messages, as HTTP/1.1 parsers do.
          let start = 0;
          while (start < data.length && (data[start] === 0x0d || data[start] === 0x0a)) start++;
          if (start > 0) {
            out.push(data.subarray(0, start));
            data = data.subarray(start);
            if (data.length === 0) break;
          }
          const end = data.indexOf(CRLFCRLF);
          if (end === -1) {
            if (data.length > MAX_HEAD) {
              this.state = { mode: 'passthrough' };
              continue;
            }
            this.pending = Buffer.from(data);
            data = Buffer.alloc(0);
            break;
          }
          const head = data.subarray(0, end + 4);
          data = data.subarray(end + 4);
          out.push(this.rewriteHead(head));
          break;
        }
        case 'length':
        case 'chunk-data': {
          // Body bytes pass through untouched; then the next request head, or the next chunk size.
          const n = Math.min(state.remaining, data.length);
          out.push(data.subarray(0, n));
          data = data.subarray(n);
          state.remaining -= n;
          if (state.remaining === 0) this.state = { mode: state.mode === 'length' ? 'head' : 'chunk-size' };
          break;
        }
        case 'chunk-size':
        case 'trailers': {
          const eol = data.indexOf('\r\n');
          if (eol === -1) {
            if (data.length > MAX_HEAD) {
              this.state = { mode: 'passthrough' };
              continue;
            }
            this.pending = Buffer.from(data);
            data = Buffer.alloc(0);
            break;
          }
          const line = data.subarray(0, eol).toString('latin1');
          out.push(data.subarray(0, eol + 2));
          data = data.subarray(eol + 2);
          if (state.mode === 'trailers') {
            if (line === '') this.state = { mode: 'head' };
            break;
          }
          const size = parseInt(line.split(';')[0]!.trim(), 16);
          if (!Number.isFinite(size) || size < 0) this.state = { mode: 'passthrough' };
          else if (size === 0) this.state = { mode: 'trailers' };
          else this.state = { mode: 'chunk-data', remaining: size + 2 };
          break;
        }
      }
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  private rewriteHead(head: Buffer): Buffer {
    const text = head.toString('latin1');
    const lines = text.split('\r\n');
    const requestLine = lines[0] ?? '';
    let chunked = false;
    let length = 0;
    let upgrade = false;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'transfer-encoding' && /chunked/i.test(value)) chunked = true;
      else if (name === 'content-length' && /^\d+$/.test(value)) length = Number(value);
      else if (name === 'upgrade') upgrade = true;
    }
    if (upgrade || requestLine.startsWith('CONNECT ')) this.state = { mode: 'passthrough' };
    else if (chunked) this.state = { mode: 'chunk-size' };
    else if (length > 0) this.state = { mode: 'length', remaining: length };
    else this.state = { mode: 'head' };
    if (!requestLine.startsWith('LIST ')) return head;
    const rewritten = `GET ${requestLine.slice(5)}\r\n${LIST_HEADER}: LIST\r\n${lines.slice(1).join('\r\n')}`;
    return Buffer.from(rewritten, 'latin1');
  }
}
