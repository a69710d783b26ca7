/**
 * The Vault-compatible HTTP API: `/v1/…` over HTTP/1.1 (optionally TLS), accepting the `LIST`
 * method on the same port (see list-method.ts). This is the one place where wire requests become
 * logical requests and results and errors become Vault's bodies (spec §1).
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { StartupError } from '../../common/errors.js';
import { formatHostPort, HttpError, readBody } from '../../common/http.js';
import type { Logger } from '../../common/log.js';
import { StorageError } from '../../storage/types.js';
import type { Core, LogicalInput, LogicalResult } from '../core.js';
import { SealedError, SecretsError, WarningNotFoundError } from '../errors.js';
import { parseBool } from '../framework/fields.js';
import type { Operation } from '../logical.js';
import { LIST_HEADER, ListMethodStream } from './list-method.js';
import { serveRaw } from './sys-raw.js';

export interface SecretsServerOptions {
  readonly core: Core;
  readonly logger: Logger;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** Largest request body in bytes (Vault's default: 32 MiB). */
  readonly maxRequestSize?: number;
}

export interface RunningSecretsServer {
  readonly url: string;
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

/** A reply: status, JSON body (undefined: none). */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
}

/** Routes whose `data` Vault also copies to the top level of the body (node-vault reads them there). */
const INJECTED = /^sys\/(audit|auth|capabilities|capabilities-accessor|capabilities-self|mounts|policy|remount|rotate|key-status|ha-status|wrapping\/wrap|config\/cors|config\/auditing\/request-headers)(\/|$)/;

export class BadRequest extends SecretsError {
  constructor(message?: string) {
    super(400, message ?? 'bad request', message === undefined ? [] : [message]);
  }
}

function tokenOf(request: IncomingMessage): string | undefined {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const vault = header('x-vault-token') ?? header('x-secrets-token');
  if (vault) return vault.trim();
  const authorization = header('authorization');
  if (authorization?.startsWith('Bearer ')) return authorization.slice(7).trim();
  return undefined;
}

function parseBody(request: IncomingMessage, body: Buffer): Record<string, unknown> {
  const text = body.toString('utf8');
  if (text.trim() === '') return {};
  const type = String(request.headers['content-type'] ?? '');
  if (type.includes('application/x-www-form-urlencoded') && !/^\s*[{[]/.test(text)) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new BadRequest(`failed to decode JSON input: ${(error as Error).message}`);
  }
  if (parsed === null) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new BadRequest('failed to decode JSON input: the body must be a JSON object');
  return parsed as Record<string, unknown>;
}

function decodePath(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    throw new BadRequest('invalid URL escape in path');
  }
}

export function envelope(result: LogicalResult): Record<string, unknown> {
  return {
    request_id: result.requestId,
    lease_id: '',
    renewable: false,
    lease_duration: result.leaseDuration ?? 0,
    data: result.data ?? null,
    wrap_info: null,
    warnings: result.warnings?.length ? result.warnings : null,
    auth: result.auth ?? null,
    mount_type: result.mountType,
  };
}

/** The translation of every error to Vault's wire shape. */
export function errorReply(error: unknown, logger: Logger): Reply {
  if (error instanceof WarningNotFoundError) {
    return {
      status: 404,
      body: { request_id: randomUUID(), lease_id: '', renewable: false, lease_duration: 0, data: null, wrap_info: null, warnings: [error.warning], auth: null, mount_type: '' },
    };
  }
  if (error instanceof SecretsError) return { status: error.statusCode, body: { errors: error.errors } };
  if (error instanceof HttpError) {
    const message = error.statusCode === 413 ? 'http: request body too large' : error.message;
    return { status: error.statusCode, body: { errors: [message] } };
  }
  if (error instanceof StorageError && error.code === 'invalid') return { status: 400, body: { errors: [error.message] } };
  if (error instanceof StorageError && error.code === 'unavailable') {
    logger.error({ err: error }, 'storage unavailable');
    return { status: 503, body: { errors: ['storage backend unavailable'] } };
  }
  logger.error({ err: error }, 'request failed');
  return { status: 500, body: { errors: ['internal error'] } };
}

export async function handleHttp(core: Core, request: IncomingMessage, maxBody: number): Promise<Reply> {
  const target = request.url ?? '/';
  // Checked before URL parsing, which would resolve the dot segments away.
  if (decodePath(target.split('?')[0]!).split('/').some((segment) => segment === '..')) throw new BadRequest('path cannot contain parent references');
  const url = new URL(target, 'http://localhost');
  const pathname = decodePath(url.pathname);
  if (!pathname.startsWith('/v1/')) return { status: 404, body: { errors: [] } };
  const path = pathname.slice(4);
  if (path.split('/').some((segment) => segment === '..')) throw new BadRequest('path cannot contain parent references');

  let method = request.method ?? 'GET';
  if (method === 'GET' && String(request.headers[LIST_HEADER] ?? '').toUpperCase() === 'LIST') method = 'LIST';
  const body = await readBody(request, maxBody);

  if (request.headers['x-vault-wrap-ttl'] !== undefined) throw new BadRequest('response wrapping (X-Vault-Wrap-TTL) is not supported by this server');

  const raw = await serveRaw(core, method, path, url.searchParams, () => parseBody(request, body), tokenOf(request));
  if (raw) return raw;

  let operation: LogicalInput['operation'];
  const data: Record<string, unknown> = parseBody(request, body);
  switch (method) {
    case 'GET': {
      const list = url.searchParams.get('list');
      const help = url.searchParams.get('help');
      let isList = false;
      if (list !== null) {
        try {
          isList = parseBool(list);
        } catch {
          throw new BadRequest();
        }
      }
      if (help !== null && help !== '' && help !== '0' && help !== 'false') operation = 'help';
      else operation = isList ? 'list' : 'read';
      if (operation === 'read') {
        for (const [k, v] of url.searchParams) if (!(k in data)) data[k] = v;
      }
      break;
    }
    case 'LIST':
      operation = 'list';
      break;
    case 'POST':
    case 'PUT':
      operation = 'write';
      break;
    case 'DELETE':
      operation = 'delete';
      for (const [k, v] of url.searchParams) if (!(k in data)) data[k] = v;
      break;
    case 'PATCH': {
      const type = String(request.headers['content-type'] ?? '');
      if (!type.toLowerCase().startsWith('application/merge-patch+json')) {
        throw new SecretsError(415, 'unsupported media type', [`PATCH requires Content-Type of application/merge-patch+json, provided ${type}`]);
      }
      operation = 'patch';
      break;
    }
    default:
      return { status: 405, body: { errors: [] } };
  }
  if (core.sealed) throw new SealedError();
  const result = await core.handle({
    operation,
    path,
    data,
    token: tokenOf(request),
    remoteAddress: request.socket.remoteAddress ?? '',
    headers: request.headers,
    mergePatch: method === 'PATCH',
  });
  return logicalReply(result, path);
}

function logicalReply(result: LogicalResult, path: string): Reply {
  if (result.raw) return { status: result.statusCode ?? 200, body: result.raw.body };
  const op: Operation = result.operation;
  const hasData = result.data !== undefined && result.data !== null;
  if (op === 'list') {
    const keys = (result.data as { keys?: unknown[] } | null | undefined)?.keys;
    if (!hasData || !Array.isArray(keys) || keys.length === 0) return { status: 404, body: { errors: [] } };
  }
  if (!hasData && !result.auth && !result.warnings?.length) {
    if (result.statusCode && result.statusCode !== 200) return { status: result.statusCode, body: result.statusCode === 204 ? undefined : { errors: [] } };
    return op === 'read' ? { status: 404, body: { errors: [] } } : { status: 204 };
  }
  const body = envelope(result);
  if (INJECTED.test(path) && hasData) {
    for (const [k, v] of Object.entries(result.data!)) if (!(k in body)) body[k] = v;
  }
  return { status: result.statusCode ?? 200, body };
}

function send(response: ServerResponse, reply: Reply): void {
  if (reply.body === undefined) {
    response.writeHead(reply.status, { 'Cache-Control': 'no-store' });
    response.end();
    return;
  }
  const text = JSON.stringify(reply.body);
  response.writeHead(reply.status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

export async function startSecretsServer(options: SecretsServerOptions): Promise<RunningSecretsServer> {
  const maxBody = options.maxRequestSize ?? 32 * 1024 * 1024;
  const http: Server = createHttpServer({ keepAliveTimeout: 65_000 }, (request, response) => {
    handleHttp(options.core, request, maxBody)
      .catch((error: unknown) => errorReply(error, options.logger))
      .then((reply) => {
        if (reply.status === 413) response.setHeader('Connection', 'close');
        send(response, reply);
      })
      .catch((error: unknown) => {
        options.logger.error({ err: error }, 'cannot send response');
        response.destroy();
      });
  });
  const sockets = new Set<Socket>();
  const accept = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    http.emit('connection', new ListMethodStream(socket));
  };
  const front: NetServer = options.tls
    ? createTlsServer({ cert: options.tls.cert, key: options.tls.key }, accept)
    : createNetServer(accept);
  await new Promise<void>((resolve, reject) => {
    front.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? 'address already in use' : error.code === 'EACCES' ? 'permission denied' : error.message;
      reject(new StartupError(`cannot listen on ${formatHostPort(options.host, options.port)}: ${reason}`, { cause: error }));
    });
    front.listen(options.port, options.host, () => resolve());
  });
  const address = front.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `${options.tls ? 'https' : 'http'}://${formatHostPort(options.host, port)}`;
  return {
    url,
    port,
    host: options.host,
    close: async () => {
      await new Promise<void>((resolve) => {
        front.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        http.closeAllConnections();
      });
    },
  };
}
