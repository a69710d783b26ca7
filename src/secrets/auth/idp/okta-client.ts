/**
 * The conversation with an Okta-compatible identity provider that one `idp` login needs
 * (vault.md §7.2): the authn API (username + password, then MFA by TOTP or push when the
 * transaction asks for it) and, when an API token is configured, the groups API with its
 * `Link: rel="next"` pages.
 *
 * Promises: every HTTP request ends within `timeoutMs` (connect, TLS, headers and body together);
 * every way the IdP can fail ends in an `IdpLoginError` whose message is the 400 text Vault gives
 * (`okta authentication failed`, `Okta auth failed: …`, `okta failure retrieving groups: …`, …).
 * Passwords and the API token go only to the IdP, never into an error message.
 */
import https from 'node:https';
import { rootCertificates } from 'node:tls';

/** A login the IdP refused or could not complete; `message` is the client-facing 400 text. */
export class IdpLoginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IdpLoginError';
  }
}

export interface OktaClientOptions {
  /** The org URL, e.g. `https://acme.okta.com` (see `orgUrl`). */
  readonly orgUrl: string;
  /** Sent as `Authorization: SSWS <token>`; without it groups are not queried. */
  readonly apiToken?: string;
  /** Extra CA certificates (PEM) to trust besides the system roots. */
  readonly caCertificates?: string;
  /** Per-request limit in milliseconds. */
  readonly timeoutMs: number;
  /** Pause between polls of a pending push (Okta's clients and Vault use 1 s). */
  readonly pushPollIntervalMs?: number;
  /** Upper bound on polls of one push before giving up (default: 5 minutes' worth). */
  readonly maxPushPolls?: number;
}

export interface OktaLoginInput {
  readonly username: string;
  readonly password: string;
  /** A TOTP passcode; preferred over push when the user has a TOTP factor. */
  readonly totp?: string;
  /** Only factors of this provider (`OKTA` or `GOOGLE`). */
  readonly provider?: string;
  /** Treat MFA_REQUIRED / MFA_ENROLL as success (the `bypass_okta_mfa` setting). */
  readonly bypassMfa: boolean;
  /**
   * The client's nonce for a push with number challenge: the number the user must pick on the
   * phone is handed to `onNumberChallenge` so that `verify/<nonce>` can show it.
   */
  readonly nonce?: string;
  readonly onNumberChallenge?: (correctAnswer: number) => void;
}

export interface OktaLoginResult {
  /** Okta group names (`profile.name`); undefined when no API token is configured. */
  readonly groups?: string[];
  readonly warnings: string[];
}

/** The org URL Vault derives from the config: `https://<org_name>.<base_url>`; a full `https://…` base_url is used as is. */
export function orgUrl(orgName: string, baseUrl: string): string {
  if (/^https:\/\//i.test(baseUrl)) return baseUrl.replace(/\/+$/, '');
  return `https://${orgName}.${baseUrl}`;
}

export const SUPPORTED_PROVIDERS = ['GOOGLE', 'OKTA'] as const;

const TOTP_FACTOR = 'token:software:totp';
const PUSH_FACTOR = 'push';
const MAX_BODY_BYTES = 1 << 20;

interface Factor {
  id?: string;
  factorType?: string;
  provider?: string;
  _embedded?: { challenge?: { correctAnswer?: unknown } };
}

interface AuthnResult {
  status?: string;
  factorResult?: string;
  stateToken?: string;
  _embedded?: { user?: { id?: string }; factors?: Factor[]; factor?: Factor };
}

interface HttpResult {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: unknown;
}

/** Thrown by `send` for transport problems; callers prefix it with the stage that failed. */
class TransportError extends Error {}

export class OktaClient {
  private readonly ca: string[] | undefined;

  constructor(private readonly options: OktaClientOptions) {
    this.ca = options.caCertificates ? [...rootCertificates, options.caCertificates] : undefined;
  }

  /** Run the whole login: authn, MFA if required, then groups (with an API token). */
  async login(input: OktaLoginInput): Promise<OktaLoginResult> {
    const warnings: string[] = [];
    let result = await this.authn('/api/v1/authn', { username: input.username, password: input.password });

    switch (result.status) {
      case 'SUCCESS':
        break;
      case 'PASSWORD_WARN':
        warnings.push('Your Okta password is in warning state and needs to be changed soon.');
        break;
      case 'MFA_ENROLL':
      case 'MFA_ENROLL_ACTIVATE':
        if (!input.bypassMfa) throw new IdpLoginError('okta authentication failed: you must complete MFA enrollment to continue');
        break;
      case 'MFA_REQUIRED':
        if (!input.bypassMfa) result = await this.multiFactor(result, input);
        break;
      default:
        // LOCKED_OUT, PASSWORD_EXPIRED, an error body (wrong password), anything unknown.
        throw new IdpLoginError('okta authentication failed');
    }

    const userId = result._embedded?.user?.id;
    if (this.options.apiToken === undefined) return { warnings };
    if (typeof userId !== 'string' || userId === '') throw new IdpLoginError('okta failure retrieving groups: the IdP returned no user id');
    const groups = await this.groups(userId);
    if (groups.length === 0) warnings.push('no Okta groups found; only policies from locally-defined groups available');
    return { groups, warnings };
  }

  private async multiFactor(challenge: AuthnResult, input: OktaLoginInput): Promise<AuthnResult> {
    let totp: Factor | undefined;
    let push: Factor | undefined;
    for (const factor of challenge._embedded?.factors ?? []) {
      if (input.provider && factor.provider !== input.provider) continue;
      if (!SUPPORTED_PROVIDERS.includes(factor.provider as (typeof SUPPORTED_PROVIDERS)[number])) continue;
      if (factor.factorType === TOTP_FACTOR) totp = factor;
      else if (factor.factorType === PUSH_FACTOR) push = factor;
    }
    let selected: Factor;
    if (totp && input.totp) selected = totp;
    else if (push && push.provider === 'OKTA') selected = push;
    else if (totp) throw new IdpLoginError("'totp' passcode parameter is required to perform MFA");
    else throw new IdpLoginError('Okta Verify Push or TOTP or Google TOTP factor is required in order to perform MFA');

    const path = `/api/v1/authn/factors/${encodeURIComponent(selected.id ?? '')}/verify`;
    const payload: Record<string, string> = { stateToken: challenge.stateToken ?? '' };
    if (selected === totp) payload.passCode = input.totp!;

    let result = await this.authn(path, payload);
    const maxPolls = this.options.maxPushPolls ?? 300;
    for (let polls = 0; result.status === 'MFA_CHALLENGE'; polls++) {
      switch (result.factorResult) {
        case 'WAITING': {
          const correctAnswer = result._embedded?.factor?._embedded?.challenge?.correctAnswer;
          if (typeof correctAnswer === 'number') {
            if (!input.nonce) throw new IdpLoginError('nonce must be provided during login request when presented with number challenge');
            input.onNumberChallenge?.(correctAnswer);
          }
          if (polls >= maxPolls) throw new IdpLoginError('failed to complete multi-factor authentication');
          await sleep(this.options.pushPollIntervalMs ?? 1000);
          result = await this.authn(path, payload);
          break;
        }
        case 'REJECTED':
          throw new IdpLoginError('multi-factor authentication denied');
        case 'TIMEOUT':
          throw new IdpLoginError('failed to complete multi-factor authentication');
        default:
          throw new IdpLoginError('okta authentication failed');
      }
    }
    // A wrong passcode is an error body without a status: not a success.
    if (result.status !== 'SUCCESS') throw new IdpLoginError('okta authentication failed');
    return result;
  }

  /** One authn-API call; the HTTP status is not checked, the transaction `status` decides. */
  private async authn(path: string, body: Record<string, string>): Promise<AuthnResult> {
    let response: HttpResult;
    try {
      response = await this.send('POST', this.url(path), body);
    } catch (error) {
      if (error instanceof TransportError) throw new IdpLoginError(`Okta auth failed: ${error.message}`);
      throw error;
    }
    return isObject(response.body) ? (response.body as AuthnResult) : {};
  }

  private async groups(userId: string): Promise<string[]> {
    const names: string[] = [];
    let next: URL | undefined = this.url(`/api/v1/users/${encodeURIComponent(userId)}/groups`);
    for (let page = 0; next; page++) {
      if (page >= 100) throw new IdpLoginError('okta failure retrieving groups: too many pages');
      let response: HttpResult;
      try {
        response = await this.send('GET', next);
      } catch (error) {
        if (error instanceof TransportError) throw new IdpLoginError(`okta failure retrieving groups: ${error.message}`);
        throw error;
      }
      if (response.status < 200 || response.status > 299) {
        throw new IdpLoginError(`okta failure retrieving groups: ${describeErrorBody(response)}`);
      }
      if (!Array.isArray(response.body)) throw new IdpLoginError('okta failure retrieving groups: the IdP did not return a list');
      for (const group of response.body) {
        const name = isObject(group) && isObject(group.profile) ? group.profile.name : undefined;
        if (typeof name === 'string') names.push(name);
      }
      next = nextLink(response.headers.link, next);
      // Only follow pages on the same origin: the API token must not travel anywhere else.
      if (next && next.origin !== new URL(this.options.orgUrl).origin) {
        throw new IdpLoginError('okta failure retrieving groups: next page is on another host');
      }
    }
    return names;
  }

  private url(path: string): URL {
    return new URL(path, this.options.orgUrl + '/');
  }

  private send(method: 'GET' | 'POST', url: URL, body?: unknown): Promise<HttpResult> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    if (this.options.apiToken !== undefined) headers.authorization = `SSWS ${this.options.apiToken}`;
    const timeoutMs = this.options.timeoutMs;

    return new Promise<HttpResult>((resolve, reject) => {
      const fail = (error: Error) => {
        clearTimeout(timer);
        request.destroy();
        reject(error);
      };
      const request = https.request(url, { method, headers, ca: this.ca }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) return fail(new TransportError('response too large'));
          chunks.push(chunk);
        });
        response.on('error', (error) => fail(new TransportError(networkMessage(error))));
        response.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) });
          } catch {
            const type = String(response.headers['content-type'] ?? 'no content type').split(';')[0];
            reject(new TransportError(`the IdP answered HTTP ${response.statusCode} with a body that is not JSON (${type})`));
          }
        });
      });
      const timer = setTimeout(() => fail(new TransportError(`no answer from ${url.host} within ${formatMs(timeoutMs)}`)), timeoutMs);
      request.on('error', (error) => fail(new TransportError(networkMessage(error))));
      request.end(payload);
    });
  }
}

function nextLink(header: string | string[] | undefined, base: URL): URL | undefined {
  const values = Array.isArray(header) ? header : header ? [header] : [];
  for (const value of values) {
    for (const part of value.split(',')) {
      const m = /<([^>]+)>\s*;\s*rel="?next"?/i.exec(part);
      if (m) return new URL(m[1]!, base);
    }
  }
  return undefined;
}

function describeErrorBody(response: HttpResult): string {
  const body = response.body;
  if (isObject(body) && typeof body.errorSummary === 'string') {
    return `HTTP ${response.status}: ${body.errorSummary}${typeof body.errorCode === 'string' ? ` (${body.errorCode})` : ''}`;
  }
  return `HTTP ${response.status}`;
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

function networkMessage(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (TLS_CODES.has(code) || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) return `TLS error: ${error.message}`;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot resolve ${(error as { hostname?: string }).hostname ?? 'host'}`;
  if (code === 'ECONNRESET') return 'connection reset by the IdP';
  return error.message;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
