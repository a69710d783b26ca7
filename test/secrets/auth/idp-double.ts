/**
 * An Okta-compatible identity provider for tests: a small HTTPS server on 127.0.0.1 speaking the
 * two APIs the `idp` auth method uses (vault.md §7.2):
 *
 *   POST /api/v1/authn                              username + password → transaction status
 *   POST /api/v1/authn/factors/{factorId}/verify    stateToken (+ passCode) → MFA result
 *   GET  /api/v1/users/{id}/groups                  needs `Authorization: SSWS <api token>`;
 *                                                   pages with `Link: <…>; rel="next"`
 *
 * Each test builds its own directory of users (password, status, groups, MFA factors) and may
 * switch the server into a fault (`html`, `not-json`, `hang`, `error-500`) to see how the method
 * copes. The certificate comes from a fresh test CA (`caCert`); point the method at the double
 * with `base_url=<double.url>` (a full `https://127.0.0.1:<port>` URL) and `certificate=<caCert>`
 * — see docs/secrets.md, "Pointing idp at a test server".
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { CertificateAuthority } from '../../../src/common/tls.js';

/** What authn answers for a correct password (before MFA). */
export type AuthnStatus = 'SUCCESS' | 'PASSWORD_WARN' | 'LOCKED_OUT' | 'PASSWORD_EXPIRED' | 'MFA_ENROLL' | 'MFA_REQUIRED';

export interface TotpFactor {
  /** The one code the double accepts. */
  readonly passCode: string;
  readonly provider?: 'OKTA' | 'GOOGLE';
}

export interface PushFactor {
  /** How the user answers the push, after `waitPolls` verify calls that say WAITING (default 1). */
  readonly outcome: 'SUCCESS' | 'REJECTED' | 'TIMEOUT';
  readonly waitPolls?: number;
  /** Okta Verify's number challenge: the number shown while WAITING. */
  readonly numberChallenge?: number;
}

export interface IdpUser {
  readonly login: string;
  readonly password: string;
  /** Okta user id (default: derived from the login). */
  readonly id?: string;
  /** Default: MFA_REQUIRED when factors are given, else SUCCESS. */
  readonly status?: AuthnStatus;
  /** Group names (`profile.name`) the groups API returns. */
  readonly groups?: readonly string[];
  readonly factors?: { readonly totp?: TotpFactor; readonly push?: PushFactor };
}

/** A way for the whole server to misbehave, for the bad-IdP tests. */
export type IdpFault = 'html' | 'not-json' | 'hang' | 'error-500';

export interface IdpDoubleOptions {
  readonly users?: readonly IdpUser[];
  /** The API token the groups API accepts. */
  readonly apiToken?: string;
  /** Groups per page of the groups API (default 200, Okta's default). */
  readonly groupsPageSize?: number;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** The Authorization header, if any. */
  readonly authorization?: string;
  /** The JSON body with `password` and `passCode` replaced by `***`. */
  readonly body?: unknown;
}

interface Transaction {
  readonly user: IdpUser;
  polls: number;
}

const TOTP = 'token:software:totp';

export class IdpDouble {
  /** Every request, in order. */
  readonly requests: RecordedRequest[] = [];
  /** When set, every request gets this misbehaviour instead of an answer. */
  fault: IdpFault | undefined;
  private readonly users = new Map<string, IdpUser>();
  private readonly transactions = new Map<string, Transaction>();

  private constructor(
    private readonly server: https.Server,
    /** `https://127.0.0.1:<port>` — the `base_url` to configure. */
    readonly url: string,
    /** PEM of the CA that signed the server certificate — the `certificate` to configure. */
    readonly caCert: string,
    private readonly options: IdpDoubleOptions,
  ) {
    for (const user of options.users ?? []) this.setUser(user);
  }

  static async start(options: IdpDoubleOptions = {}): Promise<IdpDouble> {
    const ca = await CertificateAuthority.create('idp double CA');
    const pair = await ca.issueServer({ commonName: '127.0.0.1', hosts: ['127.0.0.1', 'localhost'] });
    let double: IdpDouble | undefined;
    const server = https.createServer({ cert: pair.cert, key: pair.key }, (req, res) => {
      void double!.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    double = new IdpDouble(server, `https://127.0.0.1:${port}`, ca.cert, options);
    return double;
  }

  /** Add or replace a user. */
  setUser(user: IdpUser): void {
    this.users.set(user.login.toLowerCase(), user);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = raw.length ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const url = new URL(req.url ?? '/', this.url);
    this.requests.push({ method: req.method ?? '', path: url.pathname + url.search, authorization: req.headers.authorization, body: redact(body) });

    switch (this.fault) {
      case 'hang':
        return; // never answer; close() ends the socket
      case 'html':
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><h1>Sign in</h1></body></html>');
        return;
      case 'not-json':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status": SUCC');
        return;
      case 'error-500':
        res.writeHead(500, { 'content-type': 'text/html' }).end('<html><body>Internal Server Error</body></html>');
        return;
    }

    const parts = url.pathname.split('/').filter(Boolean);
    if (req.method === 'POST' && url.pathname === '/api/v1/authn') return this.authn(res, body);
    if (req.method === 'POST' && parts.length === 6 && parts[2] === 'authn' && parts[3] === 'factors' && parts[5] === 'verify') {
      return this.verify(res, decodeURIComponent(parts[4]!), body);
    }
    if (req.method === 'GET' && parts.length === 5 && parts[2] === 'users' && parts[4] === 'groups') {
      return this.groups(req, res, url, decodeURIComponent(parts[3]!));
    }
    json(res, 404, oktaError('E0000022', 'The endpoint does not support the provided HTTP method'));
  }

  private authn(res: ServerResponse, body: unknown): void {
    const { username, password } = (body ?? {}) as { username?: unknown; password?: unknown };
    const user = typeof username === 'string' ? this.users.get(username.toLowerCase()) : undefined;
    if (!user || password !== user.password) {
      json(res, 401, oktaError('E0000004', 'Authentication failed'));
      return;
    }
    const status = user.status ?? (user.factors ? 'MFA_REQUIRED' : 'SUCCESS');
    if (status !== 'MFA_REQUIRED') {
      json(res, 200, { status, expiresAt: expiresAt(), sessionToken: token(), _embedded: { user: userObject(user) } });
      return;
    }
    const stateToken = token();
    this.transactions.set(stateToken, { user, polls: 0 });
    json(res, 200, {
      status: 'MFA_REQUIRED',
      stateToken,
      expiresAt: expiresAt(),
      _embedded: { user: userObject(user), factors: factorObjects(user) },
    });
  }

  private verify(res: ServerResponse, factorId: string, body: unknown): void {
    const { stateToken, passCode } = (body ?? {}) as { stateToken?: unknown; passCode?: unknown };
    const transaction = typeof stateToken === 'string' ? this.transactions.get(stateToken) : undefined;
    if (!transaction) {
      json(res, 403, oktaError('E0000011', 'Invalid token provided'));
      return;
    }
    const { user } = transaction;
    const factor = factorObjects(user).find((f) => f.id === factorId);
    if (!factor) {
      json(res, 404, oktaError('E0000007', `Not found: Resource not found: ${factorId} (UserFactor)`));
      return;
    }
    const success = () => {
      this.transactions.delete(stateToken as string);
      json(res, 200, { status: 'SUCCESS', expiresAt: expiresAt(), sessionToken: token(), _embedded: { user: userObject(user) } });
    };
    if (factor.factorType === TOTP) {
      if (passCode === user.factors!.totp!.passCode) success();
      else json(res, 403, oktaError('E0000068', 'Invalid Passcode/Answer'));
      return;
    }
    const push = user.factors!.push!;
    transaction.polls += 1;
    if (transaction.polls <= (push.waitPolls ?? 1)) {
      const challenge = push.numberChallenge === undefined ? {} : { _embedded: { challenge: { correctAnswer: push.numberChallenge } } };
      json(res, 200, { status: 'MFA_CHALLENGE', factorResult: 'WAITING', stateToken, _embedded: { factor: { ...factor, ...challenge } } });
    } else if (push.outcome === 'SUCCESS') {
      success();
    } else {
      json(res, 200, { status: 'MFA_CHALLENGE', factorResult: push.outcome, stateToken, _embedded: { factor } });
    }
  }

  private groups(req: IncomingMessage, res: ServerResponse, url: URL, userId: string): void {
    if (!this.options.apiToken || req.headers.authorization !== `SSWS ${this.options.apiToken}`) {
      json(res, 401, oktaError('E0000011', 'Invalid token provided'));
      return;
    }
    const user = [...this.users.values()].find((u) => userId === idOf(u));
    if (!user) {
      json(res, 404, oktaError('E0000007', `Not found: Resource not found: ${userId} (User)`));
      return;
    }
    const all = (user.groups ?? []).map((name, i) => ({
      id: `00g${i}`,
      type: name === 'Everyone' ? 'BUILT_IN' : 'OKTA_GROUP',
      profile: { name, description: `${name} group` },
    }));
    const limit = Number(url.searchParams.get('limit') ?? this.options.groupsPageSize ?? 200);
    const after = Number(url.searchParams.get('after') ?? 0);
    const page = all.slice(after, after + limit);
    const headers: Record<string, string> = {};
    if (after + limit < all.length) {
      headers.link = `<${this.url}/api/v1/users/${encodeURIComponent(userId)}/groups?after=${after + limit}&limit=${limit}>; rel="next"`;
    }
    json(res, 200, page, headers);
  }
}

function idOf(user: IdpUser): string {
  return user.id ?? `00u${Buffer.from(user.login).toString('hex').slice(0, 16)}`;
}

function userObject(user: IdpUser) {
  return {
    id: idOf(user),
    passwordChanged: '2026-01-01T00:00:00.000Z',
    profile: { login: user.login, firstName: user.login, lastName: 'Test', locale: 'en', timeZone: 'UTC' },
  };
}

function factorObjects(user: IdpUser) {
  const factors: Array<{ id: string; factorType: string; provider: string; vendorName: string }> = [];
  if (user.factors?.totp) {
    const provider = user.factors.totp.provider ?? 'OKTA';
    factors.push({ id: `ost${provider}`, factorType: TOTP, provider, vendorName: provider });
  }
  if (user.factors?.push) factors.push({ id: 'opfPUSH', factorType: 'push', provider: 'OKTA', vendorName: 'OKTA' });
  return factors;
}

function oktaError(errorCode: string, errorSummary: string) {
  return { errorCode, errorSummary, errorLink: errorCode, errorId: `oae${token().slice(0, 20)}`, errorCauses: [] };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function token(): string {
  return randomBytes(24).toString('base64url');
}

function expiresAt(): string {
  return new Date(Date.now() + 5 * 60_000).toISOString();
}

function redact(body: unknown): unknown {
  if (!body || typeof body !== 'object') return body;
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const key of ['password', 'passCode']) if (key in copy) copy[key] = '***';
  return copy;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
