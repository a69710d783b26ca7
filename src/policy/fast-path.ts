/**
 * The decision fast path: `POST /v1/data/…` — the request every policy client makes — served
 * straight from node:http, in front of fastify's router, by the very same Data API handler. Routing,
 * the per-request logger and the hook chain cost about as much as a whole decision, and this one
 * route needs none of them. It is installed only when the API has no authorization policy (that
 * runs as a fastify hook); every other request goes to fastify unchanged. Errors take the same
 * `errorResponse` translation as the rest of the server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, type ErrorResponse, type FastifyInstance } from '../common/http.js';
import type { ServerMetrics } from './metrics.js';
import type { ApiReply, ApiRequest, Query } from './requests.js';

export type DecisionHandler = (request: ApiRequest, reply: ApiReply) => unknown;

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

export function installDecisionFastPath(
  server: FastifyInstance,
  handler: DecisionHandler,
  options: { bodyLimit: number; metrics: ServerMetrics; errorResponse: (error: unknown) => ErrorResponse },
): void {
  const node = server.server;
  const [framework] = node.listeners('request') as RequestListener[];
  if (!framework) throw new Error('decision fast path: the HTTP server has no request listener to wrap');
  node.removeListener('request', framework);
  node.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (isDecision(request)) serve(request, response, handler, options);
    else framework.call(node, request, response);
  });
}

/** `POST /v1/data`, `POST /v1/data/…`, with or without a query string. */
function isDecision(request: IncomingMessage): boolean {
  if (request.method !== 'POST') return false;
  const url = request.url ?? '';
  if (!url.startsWith('/v1/data')) return false;
  const next = url.charCodeAt(8);
  return Number.isNaN(next) || next === 47 /* / */ || next === 63 /* ? */;
}

/**
 * Serve one decision. Everything after the body has arrived runs synchronously inside the request's
 * 'end' event: answering from a later microtask costs node a measurable extra per response.
 */
function serve(
  raw: IncomingMessage,
  response: ServerResponse,
  handler: DecisionHandler,
  options: { bodyLimit: number; metrics: ServerMetrics; errorResponse: (error: unknown) => ErrorResponse },
): void {
  const started = process.hrtime.bigint();
  const reply = new NodeReply(response);
  const observe = () => options.metrics.observe('v1/data', 'POST', response.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
  const fail = (error: unknown) => {
    const translated = options.errorResponse(error);
    reply.code(translated.statusCode);
    for (const [name, value] of Object.entries(translated.headers ?? {})) reply.header(name, value);
    reply.send(translated.body as Buffer | string);
    observe();
  };
  if (Number(raw.headers['content-length']) > options.bodyLimit) {
    raw.resume();
    return fail(new HttpError(413, 'request body too large', 'body_too_large'));
  }
  readBody(raw, options.bodyLimit, (error, body) => {
    if (error) return fail(error);
    const url = raw.url!;
    const request: ApiRequest = { method: 'POST', url, headers: raw.headers, query: parseQuery(url), body, socket: raw.socket, raw };
    try {
      const result = handler(request, reply);
      if (result instanceof Promise) result.then(observe, fail);
      else observe();
    } catch (thrown) {
      fail(thrown);
    }
  });
}

/** The whole body, or HttpError 413 past `limit` (events and a callback: this is the hot path). */
function readBody(request: IncomingMessage, limit: number, done: (error: unknown, body?: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (error: unknown, body?: Buffer) => {
    if (finished) return;
    finished = true;
    done(error, body);
  };
  request.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      request.removeAllListeners('data');
      request.resume();
      finish(new HttpError(413, 'request body too large', 'body_too_large'));
      return;
    }
    chunks.push(chunk);
  });
  request.once('end', () => finish(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
  request.once('error', (error) => finish(error));
}

/** A query string as fastify presents it: a repeated name becomes an array. */
function parseQuery(url: string): Query {
  const q = url.indexOf('?');
  const query: Query = {};
  if (q === -1) return query;
  for (const [key, value] of new URLSearchParams(url.slice(q + 1))) {
    const existing = query[key];
    query[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return query;
}

class NodeReply implements ApiReply {
  private readonly headers: Record<string, string> = {};

  constructor(private readonly response: ServerResponse) {}

  code(status: number): ApiReply {
    this.response.statusCode = status;
    return this;
  }

  header(name: string, value: string): ApiReply {
    this.headers[name] = value;
    return this;
  }

  sendText(status: number, contentType: string, text: string): void {
    this.response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
    this.response.end(text);
  }

  send(payload?: Buffer | string): ApiReply {
    // Written as a string so that node sends header and body in one write (a Buffer costs a writev);
    // latin1 carries the bytes of a Buffer through unchanged.
    const [text, encoding] = payload === undefined ? ['', 'latin1' as const] : Buffer.isBuffer(payload) ? [payload.toString('latin1'), 'latin1' as const] : [payload, 'utf8' as const];
    this.headers['content-length'] = String(encoding === 'latin1' ? text.length : Buffer.byteLength(text));
    this.response.writeHead(this.response.statusCode, this.headers);
    this.response.end(text, encoding);
    return this;
  }
}
