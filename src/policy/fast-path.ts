/**
 * The decision fast path: `POST /v1/data/…` — the request every policy client makes — served
 * straight from node:http, in front of fastify's router, by the very same Data API handler. Routing,
 * the per-request logger and the hook chain cost about as much as a whole decision, and this one
 * route needs none of them. It is installed only when the API has no authentication or authorization
 * (those run as fastify hooks); every other request goes to fastify unchanged. Errors take the same
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
    if (isDecision(request)) void serve(request, response, handler, options);
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

async function serve(
  raw: IncomingMessage,
  response: ServerResponse,
  handler: DecisionHandler,
  options: { bodyLimit: number; metrics: ServerMetrics; errorResponse: (error: unknown) => ErrorResponse },
): Promise<void> {
  const started = process.hrtime.bigint();
  const reply = new NodeReply(response);
  try {
    const declared = Number(raw.headers['content-length']);
    if (declared > options.bodyLimit) throw new HttpError(413, 'request body too large', 'body_too_large');
    const body = await readBody(raw, options.bodyLimit);
    const url = raw.url!;
    const request: ApiRequest = { method: 'POST', url, headers: raw.headers, query: parseQuery(url), body, socket: raw.socket, raw };
    await handler(request, reply);
  } catch (error) {
    const translated = options.errorResponse(error);
    reply.code(translated.statusCode);
    for (const [name, value] of Object.entries(translated.headers ?? {})) reply.header(name, value);
    reply.send(translated.body as Buffer | string);
  }
  options.metrics.observe('v1/data', 'POST', response.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
}

/** The whole body, or HttpError 413 past `limit` (events, not an async iterator: this is the hot path). */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.resume();
        reject(new HttpError(413, 'request body too large', 'body_too_large'));
        return;
      }
      chunks.push(chunk);
    });
    request.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    request.once('error', reject);
  });
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
