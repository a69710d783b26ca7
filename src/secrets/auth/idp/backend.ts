/**
 * The `idp` auth method: an Okta-compatible identity provider (vault.md §7; enabled as `idp` or
 * `okta`). A login checks the username and password with the IdP's authn API (with MFA when the
 * IdP asks for it), reads the user's groups from the groups API when an API token is configured,
 * and grants the policies mapped locally to those groups and to the user.
 *
 * Two settings beyond Vault's, for IdPs that are not at `https://<org>.<domain>` (a test double,
 * an on-premises gateway): `base_url` may be a full `https://host:port` URL, used as the org URL
 * as is; `certificate` is a PEM CA bundle trusted for it in addition to the system roots.
 * `request_timeout` bounds every HTTP request to the IdP (default 30s).
 *
 * Storage: `config` → ConfigEntry (the API token is stored under the barrier, never returned);
 * mappings per src/secrets/auth/shared/mappings.ts.
 */
import { InvalidRequestError, NotFoundError, PermissionDeniedError } from '../../errors.js';
import { FrameworkBackend, type PathDef } from '../../framework/backend.js';
import type { FieldData } from '../../framework/fields.js';
import type { Auth, RenewRequest, Request, Response } from '../../logical.js';
import type { BackendRegistration } from '../../registry.js';
import { getJSON, putJSON, type StorageView } from '../../storage-view.js';
import { addressAllowed } from '../shared/cidr.js';
import { equivalentPolicies, tokenAuth, tokenFields, tokenParamsData, updateTokenParams, type TokenParams } from '../shared/token-params.js';
import { Mappings } from '../shared/mappings.js';
import { IdpLoginError, OktaClient, orgUrl, SUPPORTED_PROVIDERS, type OktaLoginResult } from './okta-client.js';

interface ConfigEntry {
  orgName: string;
  apiToken: string;
  baseUrl: string;
  /** Legacy: false means `oktapreview.com` when no base_url is set; undefined when never written. */
  production?: boolean;
  bypassOktaMfa: boolean;
  certificate: string;
  /** Seconds. */
  requestTimeout: number;
  token: TokenParams;
}

const CONFIG_KEY = 'config';
const DEFAULT_REQUEST_TIMEOUT = 30;
const NONCE_TTL_MS = 5 * 60_000;

const NO_API_TOKEN_WARNING =
  'No Okta API token is configured. Okta group membership will not be queried during login, so only policies from locally-defined users and groups will apply.';
const BYPASS_WARNING =
  'Okta MFA bypass is configured. In addition to ignoring Okta MFA requests, certain other account statuses will not be seen, such as PASSWORD_EXPIRED. Authentication will succeed in these cases.';

const readConfig = (storage: StorageView) => getJSON<ConfigEntry>(storage, CONFIG_KEY);

/** Options of the Okta client; tests may shorten the push polling interval. */
export interface IdpBackendOptions {
  readonly pushPollIntervalMs?: number;
}

export function idpBackend(options: IdpBackendOptions = {}): FrameworkBackend {
  const mappings = new Mappings({ normalize: (name) => name });
  /** Number challenges of pending push logins, by the client's nonce (for `verify/<nonce>`). */
  const challenges = new Map<string, { answer: number; expires: number }>();

  const configFields = {
    org_name: { type: 'string', deprecatedAlias: 'organization', description: 'Name of the organisation at the IdP.' },
    api_token: { type: 'string', deprecatedAlias: 'token', description: 'API token for the groups API (never returned).' },
    base_url: { type: 'string', description: 'The IdP domain (okta.com) or a full https:// org URL.' },
    production: { type: 'bool', description: 'Deprecated: false selects oktapreview.com.' },
    bypass_okta_mfa: { type: 'bool', description: 'Let users with MFA enrolled log in without it.' },
    certificate: { type: 'string', description: 'PEM CA certificates to trust for the IdP, besides the system roots.' },
    request_timeout: { type: 'duration', default: DEFAULT_REQUEST_TIMEOUT, description: 'Limit of each request to the IdP.' },
    ...tokenFields(['ttl', 'max_ttl']),
  } as const;

  async function writeConfig(request: Request, fields: FieldData): Promise<Response | undefined> {
    const existing = await readConfig(request.storage);
    const pick = <T>(name: string, get: () => T, fallback: T): T => (fields.has(name) ? get() : fallback);
    const next: ConfigEntry = {
      orgName: pick('org_name', () => fields.string('org_name'), existing?.orgName ?? ''),
      apiToken: pick('api_token', () => fields.string('api_token'), existing?.apiToken ?? ''),
      baseUrl: pick('base_url', () => fields.string('base_url').trim(), existing?.baseUrl ?? ''),
      production: pick<boolean | undefined>('production', () => fields.bool('production'), existing?.production),
      bypassOktaMfa: pick('bypass_okta_mfa', () => fields.bool('bypass_okta_mfa'), existing?.bypassOktaMfa ?? false),
      certificate: pick('certificate', () => fields.string('certificate'), existing?.certificate ?? ''),
      requestTimeout: pick('request_timeout', () => fields.duration('request_timeout'), existing?.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT),
      token: updateTokenParams(fields, existing?.token),
    };
    if (next.orgName === '') throw new InvalidRequestError('org_name is missing');
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(next.baseUrl) && !/^https:\/\/[^/]+\/?$/i.test(next.baseUrl)) {
      throw new InvalidRequestError(`base_url ${JSON.stringify(next.baseUrl)} must be a domain (okta.com) or an https:// URL without a path`);
    }
    if (next.certificate !== '' && !next.certificate.includes('-----BEGIN CERTIFICATE-----')) {
      throw new InvalidRequestError('certificate must be PEM-encoded CA certificates');
    }
    if (next.requestTimeout <= 0) throw new InvalidRequestError('request_timeout must be positive');
    await putJSON(request.storage, CONFIG_KEY, next);
    const warnings: string[] = [];
    if (next.apiToken === '') warnings.push(NO_API_TOKEN_WARNING);
    if (next.bypassOktaMfa) warnings.push(BYPASS_WARNING);
    return warnings.length ? { warnings } : undefined;
  }

  function client(config: ConfigEntry): OktaClient {
    const base = config.baseUrl !== '' ? config.baseUrl : config.production === false ? 'oktapreview.com' : 'okta.com';
    return new OktaClient({
      orgUrl: orgUrl(config.orgName, base),
      apiToken: config.apiToken === '' ? undefined : config.apiToken,
      caCertificates: config.certificate === '' ? undefined : config.certificate,
      timeoutMs: config.requestTimeout * 1000,
      pushPollIntervalMs: options.pushPollIntervalMs,
    });
  }

  /** Authenticate at the IdP and resolve the local mappings: the mapped policies, groups and warnings. */
  async function authenticate(
    storage: StorageView,
    config: ConfigEntry,
    input: { username: string; password: string; totp?: string; provider?: string; nonce?: string },
  ): Promise<{ policies: string[]; groups: string[]; warnings: string[] }> {
    let result: OktaLoginResult;
    try {
      result = await client(config).login({
        ...input,
        bypassMfa: config.bypassOktaMfa,
        onNumberChallenge: (answer) => {
          if (input.nonce) challenges.set(input.nonce, { answer, expires: Date.now() + NONCE_TTL_MS });
        },
      });
    } catch (error) {
      if (error instanceof IdpLoginError) throw new InvalidRequestError(error.message);
      throw error;
    } finally {
      if (input.nonce) challenges.delete(input.nonce);
    }
    const { policies, groups } = await mappings.resolve(storage, input.username, result.groups ?? []);
    return { policies, groups, warnings: result.warnings };
  }

  async function login(request: Request, fields: FieldData): Promise<Response> {
    const username = fields.string('username');
    const provider = fields.string('provider').toUpperCase();
    if (provider !== '' && !(SUPPORTED_PROVIDERS as readonly string[]).includes(provider)) {
      throw new InvalidRequestError(`provider ${provider} is not among the supported ones [${SUPPORTED_PROVIDERS.join(' ')}]`);
    }
    const config = await readConfig(request.storage);
    if (!config) throw new InvalidRequestError('Okta auth method not configured');
    if (!addressAllowed(request.remoteAddress, config.token.boundCidrs)) throw new PermissionDeniedError('token');
    const password = fields.string('password');
    const { policies, groups, warnings } = await authenticate(request.storage, config, {
      username,
      password,
      totp: fields.string('totp') || undefined,
      provider: provider || undefined,
      nonce: fields.string('nonce') || undefined,
    });
    const auth: Auth = {
      ...tokenAuth(config.token),
      policies: [...config.token.policies, ...policies],
      displayName: username,
      metadata: { username, policies: policies.join(',') },
      internalData: { password },
      alias: { name: username },
      groupAliases: groups.filter((g) => g !== ''),
    };
    return warnings.length ? { auth, warnings } : { auth };
  }

  async function renew(request: RenewRequest): Promise<Auth> {
    const config = await readConfig(request.storage);
    if (!config) throw new InvalidRequestError('Okta auth method not configured');
    const username = request.auth.metadata?.username ?? '';
    const password = String(request.auth.internalData?.password ?? '');
    // No TOTP is possible on renewal; a push factor is triggered again.
    const { policies, groups } = await authenticate(request.storage, config, { username, password });
    if (!equivalentPolicies([...config.token.policies, ...policies], request.auth.policies)) {
      throw new InvalidRequestError('policies have changed, not renewing');
    }
    return { ...request.auth, ttl: config.token.ttl, maxTtl: config.token.maxTtl, period: config.token.period, groupAliases: groups };
  }

  const paths: PathDef[] = [
    {
      pattern: 'config',
      fields: configFields,
      existenceCheck: async (request) => (await readConfig(request.storage)) !== undefined,
      operations: {
        read: async (request) => {
          const config = await readConfig(request.storage);
          if (!config) throw new NotFoundError();
          const data: Record<string, unknown> = {
            org_name: config.orgName,
            organization: config.orgName,
            bypass_okta_mfa: config.bypassOktaMfa,
            request_timeout: config.requestTimeout,
            ...tokenParamsData(config.token),
          };
          if (config.baseUrl !== '') data.base_url = config.baseUrl;
          if (config.production !== undefined) data.production = config.production;
          if (config.certificate !== '') data.certificate = config.certificate;
          return { data };
        },
        create: writeConfig,
        update: writeConfig,
      },
      synopsis: 'Configure the IdP: organisation, API token, address, MFA bypass and token parameters.',
    },
    ...mappings.paths(),
    {
      pattern: 'login/(?<username>.+)',
      unauthenticated: true,
      fields: {
        username: { type: 'string' },
        password: { type: 'string' },
        totp: { type: 'string' },
        provider: { type: 'string' },
        nonce: { type: 'string' },
      },
      operations: { update: login },
      synopsis: 'Log in with the IdP username and password (and a TOTP code when MFA needs one).',
    },
    {
      pattern: 'verify/(?<nonce>.+)',
      unauthenticated: true,
      fields: { nonce: { type: 'string' } },
      operations: {
        read: async (_request, fields) => {
          const challenge = challenges.get(fields.string('nonce'));
          if (!challenge || challenge.expires < Date.now()) throw new NotFoundError();
          return { data: { correct_answer: challenge.answer } };
        },
      },
      synopsis: 'The number to pick in Okta Verify for a pending push login with this nonce.',
    },
  ];

  return new FrameworkBackend({
    paths,
    renew,
    help: 'The idp auth method: users log in with their Okta-compatible identity provider credentials.',
  });
}

export const idpRegistration: BackendRegistration = {
  type: 'okta',
  aliases: ['idp'],
  factory: () => idpBackend(),
  description: 'identity provider (Okta-compatible) credentials',
};
