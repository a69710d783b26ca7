/**
 * HTTP plumbing shared by the services, on fastify: raw request bodies (each protocol parses its own
 * formats and reports bad input in its own shape), request ids, a body size limit that answers 413,
 * one error path per server, TLS, listening with clear start-up errors, and graceful shutdown.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { StartupError } from './errors.js';
import type { Logger } from './log.js';

/** An error that already knows its HTTP status; services subclass it or translate it at their edge. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** A stable machine-readable reason (e.g. `body_too_large`, `not_found`, `method_not_allowed`). */
    readonly reason: string = 'error',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'HttpError';
  }
}

export interface ErrorResponse {
  readonly statusCode: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

export interface TlsOptions {
  readonly cert: string;
  readonly key: string;
  /** CA bundle for client certificates; with it, clients may present a certificate (never required). */
  readonly clientCa?: string;
}

export interface HttpServerOptions {
  readonly logger: Logger;
  /** Largest accepted request body in bytes (default 4 MiB); larger ones get 413 in the protocol's shape. */
  readonly bodyLimit?: number;
  readonly tls?: TlsOptions;
  /** Translate any error (thrown by a handler, or made by the plumbing: HttpError) into the protocol's shape. */
  readonly errorResponse: (error: unknown, request: FastifyRequest) => ErrorResponse;
}

export type { FastifyInstance, FastifyReply, FastifyRequest };

export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  const https = options.tls
    ? {
        cert: options.tls.cert,
        key: options.tls.key,
        ca: options.tls.clientCa,
        requestCert: options.tls.clientCa !== undefined,
        rejectUnauthorized: false,
      }
    : null;
  const server = Fastify({
    loggerInstance: options.logger,
    // Per-request lines are ours (debug level, in onResponse), not fastify's.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 4 * 1024 * 1024,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    forceCloseConnections: true,
    ...(https ? { https } : {}),
  }) as unknown as FastifyInstance;

  server.removeAllContentTypeParsers();
  server.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const reply = (error: unknown, request: FastifyRequest, res: FastifyReply) => {
    const translated = options.errorResponse(error, request);
    if (translated.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    res.code(translated.statusCode);
    if (translated.headers) res.headers(translated.headers);
    return res.send(translated.body);
  };
  server.setErrorHandler((error, request, res) => reply(fromFastifyError(error), request, res));
  server.setNotFoundHandler((request, res) =>
    reply(new HttpError(404, `${request.method} ${request.url}: not found`, 'not_found'), request, res),
  );
  // A hook per request costs every request a promise; pay it only when someone reads the lines.
  if (options.logger.isLevelEnabled('debug')) {
    server.addHook('onResponse', async (request, res) => {
      request.log.debug({ method: request.method, url: request.url, status: res.statusCode }, 'request');
    });
  }
  return server;
}

/** Fastify reports its own failures (body too large, unreadable body) with codes; give them our status and reason. */
function fromFastifyError(error: unknown): unknown {
  const code = (error as { code?: string }).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new HttpError(413, 'request body too large', 'body_too_large', { cause: error });
  if (code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return new HttpError(400, (error as Error).message, 'bad_request', { cause: error });
  }
  return error;
}

export interface ListenOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
}

export interface Listening {
  readonly host: string;
  readonly port: number;
  /** `http://127.0.0.1:8181` or `https://…`. */
  readonly url: string;
}

/** Listen, turning EADDRINUSE and friends into one clear line. */
export async function listen(server: FastifyInstance, where: ListenOptions): Promise<Listening> {
  try {
    await server.listen({ host: where.host, port: where.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EADDRINUSE' ? 'address already in use'
      : code === 'EACCES' ? 'permission denied'
      : code === 'EADDRNOTAVAIL' ? 'address not available on this machine'
      : (error as Error).message;
    throw new StartupError(`cannot listen on ${formatHostPort(where.host, where.port)}: ${reason}`, { cause: error });
  }
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : where.port;
  const scheme = isTlsServer(server) ? 'https' : 'http';
  return { host: where.host, port, url: `${scheme}://${formatHostPort(where.host, port)}` };
}

function isTlsServer(server: FastifyInstance): boolean {
  return typeof (server.server as unknown as { setSecureContext?: unknown }).setSecureContext === 'function';
}

export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Split `HOST:PORT` (`:8181` means localhost; `[::1]:8181` for IPv6). */
export function parseHostPort(value: string, defaultHost = '127.0.0.1'): ListenOptions {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value);
  if (!m || Number(m[3]) > 65535) throw new StartupError(`invalid address ${JSON.stringify(value)}: want HOST:PORT`);
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' || host === 'localhost' ? defaultHost : host, port: Number(m[3]) };
}

/** Read the whole body of a raw Node request (for servers that bypass a parser, e.g. streaming). */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, 'request body too large', 'body_too_large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

type Closer = () => Promise<void>;
const closers: Closer[] = [];
let signalsInstalled = false;

/**
 * Close `closer` on SIGTERM or SIGINT (closers run last-registered first), then exit 0. A second
 * signal exits at once.
 */
export function closeOnSignal(closer: Closer): void {
  closers.push(closer);
  if (signalsInstalled) return;
  signalsInstalled = true;
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) process.exit(130);
    closing = true;
    process.stderr.write(`${signal} received, shutting down\n`);
    void (async () => {
      for (const close of [...closers].reverse()) {
        try {
          await close();
        } catch (error) {
          process.stderr.write(`shutdown: ${(error as Error).message}\n`);
        }
      }
      process.exit(0);
    })();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
