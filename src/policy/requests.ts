/**
 * Reading OPA API requests: bodies (gzip-decoded within the configured limit, JSON or YAML), URL
 * paths below an API prefix, boolean query flags as OPA reads them, and the reply writer (compact
 * JSON or `?pretty` two-space JSON, newline-terminated, as Go's json.Encoder writes).
 */
import { gunzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, Message } from './errors.js';
import { parseJson } from './json.js';

/**
 * What the API handlers read of a request and write to a reply: the part of fastify's request and
 * reply they use, so that the decision fast path (./fast-path.ts) can serve the same handlers
 * straight from node:http.
 */
export interface ApiRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly query: unknown;
  /** The raw body (a Buffer), when there is one. */
  readonly body: unknown;
  readonly socket: Socket;
  readonly raw: IncomingMessage;
}

export interface ApiReply {
  code(status: number): ApiReply;
  header(name: string, value: string): ApiReply;
  send(payload?: Buffer | string): ApiReply;
  /** Send text with this content type and nothing else added (when the reply can do it cheaply). */
  sendText?(status: number, contentType: string, text: string): void;
}

/** The request body, gunzipped when `Content-Encoding: gzip` (bounded by `gzipLimit`). */
export function bodyBytes(request: ApiRequest, gzipLimit: number): Buffer {
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const encoding = request.headers['content-encoding'];
  if (raw.length === 0 || typeof encoding !== 'string' || !encoding.includes('gzip')) return raw;
  try {
    return gunzipSync(raw, { maxOutputLength: gzipLimit });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw ApiError.badRequest(Message.gzipTooLarge);
    throw ApiError.badRequest(`could not decompress the body: ${(error as Error).message}`);
  }
}

export function isYaml(request: ApiRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.includes('yaml');
}

/** Parse a JSON (or, with a YAML content type, YAML) document; `what` names it in the 400. */
export function parseDocument(bytes: Buffer, yaml: boolean, what: string): unknown {
  const text = bytes.toString('utf8');
  try {
    return yaml ? parseYaml(text) : parseJson(text);
  } catch (error) {
    throw ApiError.badRequest(`${what}: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** The decoded segments of the URL path after `prefix` (`/v1/data/a/b%2Fc` → ['a', 'b/c']). */
export function pathAfter(request: ApiRequest, prefix: string): string[] {
  const url = request.url;
  const end = url.indexOf('?');
  const path = (end === -1 ? url : url.slice(0, end)).slice(prefix.length);
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '') continue;
    try {
      out.push(decodeURIComponent(segment));
    } catch {
      throw ApiError.badRequest(`bad path: ${path}`);
    }
  }
  return out;
}

/** The raw (still-escaped) remainder of the path after `prefix`, slashes kept: policy ids. */
export function rawRemainder(request: ApiRequest, prefix: string): string {
  const url = request.url;
  const end = url.indexOf('?');
  const rest = (end === -1 ? url : url.slice(0, end)).slice(prefix.length);
  try {
    return decodeURIComponent(rest);
  } catch {
    throw ApiError.badRequest(`bad path: ${rest}`);
  }
}

export type Query = Record<string, string | string[] | undefined>;

/** OPA's getBoolParam: present with an empty value, or `true`, means on. */
export function flag(query: Query, name: string): boolean {
  const value = query[name];
  if (value === undefined) return false;
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return last === '' || last?.toLowerCase() === 'true';
}

export function lastParam(query: Query, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
}

export function allParams(query: Query, name: string): string[] {
  const value = query[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export type ExplainMode = 'off' | 'notes' | 'fails' | 'full' | 'debug';

export function explainMode(query: Query): ExplainMode {
  const value = lastParam(query, 'explain');
  return value === 'notes' || value === 'fails' || value === 'full' || value === 'debug' ? value : 'off';
}

/** Serialise as Go's encoder does (newline-terminated); bigints are written as JSON numbers. */
export function toJson(value: unknown, pretty: boolean): string {
  try {
    return JSON.stringify(value, null, pretty ? 2 : undefined) + '\n';
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    const marked = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `\u0000bigint:${v}\u0000` : v), pretty ? 2 : undefined);
    return marked.replace(/"\\u0000bigint:(-?\d+)\\u0000"/g, '$1') + '\n';
  }
}

export function sendJson(reply: ApiReply, status: number, value: unknown, pretty = false): ApiReply {
  const text = toJson(value, pretty);
  if (reply.sendText) {
    reply.sendText(status, 'application/json', text);
    return reply;
  }
  // A Buffer, so that fastify leaves the content type exactly as OPA writes it (no charset).
  return reply.code(status).header('content-type', 'application/json').send(Buffer.from(text));
}
