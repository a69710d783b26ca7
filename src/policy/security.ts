/**
 * OPA's API security: `--authentication=token` takes the bearer token of `Authorization: Bearer …`
 * as the caller's identity (the engine does not judge it; the authorization policy does), and
 * `--authorization=basic` asks `data.system.authz.allow` (config `default_authorization_decision`)
 * about every request, with OPA's input `{identity, method, path, params, headers, body}`.
 */
import { ApiError, Code, Message } from './errors.js';
import type { ApiRequest } from './requests.js';
import type { Snapshot } from './store.js';

export type AuthenticationMode = 'token' | 'off';
export type AuthorizationMode = 'basic' | 'off';

/** The identity of `Authorization: Bearer <token>`, if any. */
export function bearerIdentity(request: ApiRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  return m ? m[1] : undefined;
}

/** Go's canonical header key: `content-type` → `Content-Type`. */
export function canonicalHeader(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

export interface AuthorizationInput {
  readonly identity?: string;
  readonly method: string;
  readonly path: string[];
  readonly params: Record<string, string[]>;
  readonly headers: Record<string, string[]>;
  readonly body?: unknown;
}

/** The input OPA's basic authorizer gives the policy. */
export function authorizationInput(request: ApiRequest, identity: string | undefined, body: unknown): AuthorizationInput {
  const url = request.url;
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  // As Go's net/http: the path is decoded as a whole, then split, then each segment unescaped again.
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    throw ApiError.badRequest(`invalid URL escape in ${rawPath}`);
  }
  const path = decoded.slice(1).split('/').map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
  const params: Record<string, string[]> = {};
  if (q !== -1) for (const [key, value] of new URLSearchParams(url.slice(q + 1))) (params[key] ??= []).push(value);
  const headers: Record<string, string[]> = {};
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) (headers[canonicalHeader(raw[i]!)] ??= []).push(raw[i + 1]!);
  const input: AuthorizationInput = { method: request.method.toUpperCase(), path, params, headers };
  return { ...input, ...(identity !== undefined ? { identity } : {}), ...(body !== undefined ? { body } : {}) };
}

/** Does OPA's authorizer read the body of this request (POST to `/` or to `/v0|v1/data/…`)? */
export function authorizerReadsBody(method: string, path: readonly string[]): boolean {
  if (method !== 'POST') return false;
  if (path.length === 1) return path[0] === '';
  return path.length >= 2 && (path[0] === 'v0' || path[0] === 'v1') && path[1] === 'data';
}

/**
 * Evaluate the authorization decision; resolves when allowed, throws the ApiError OPA answers
 * otherwise: 401 `request rejected by administrative policy` for false (or the policy's own
 * `reason`), 500 `authorization policy missing or undefined` when undefined.
 */
export function authorize(snapshot: Snapshot, decision: readonly string[], input: AuthorizationInput): void {
  const result = snapshot.refQuery(decision).eval({ input, data: snapshot.data });
  if (!result.defined) throw new ApiError(500, Code.internal, Message.unauthorizedUndefined);
  const value = result.value;
  if (value === true) return;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const decisionObject = value as { allowed?: unknown; reason?: unknown };
    if (!('allowed' in decisionObject)) throw new ApiError(500, Code.internal, Message.undefined);
    if (decisionObject.allowed === true) return;
    if (typeof decisionObject.reason === 'string') throw new ApiError(401, Code.unauthorized, decisionObject.reason);
  }
  throw new ApiError(401, Code.unauthorized, Message.unauthorized);
}
