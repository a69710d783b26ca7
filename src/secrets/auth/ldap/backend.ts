/**
 * The LDAP auth method (vault.md §8): users log in with their directory password; policies come
 * from local mappings of their directory groups (and of the user), plus the config's token
 * policies.
 *
 * Storage: `config` → ConfigEntry (the bind password and client key under the barrier, never
 * returned); mappings per src/secrets/auth/shared/mappings.ts (names lower-cased unless
 * `case_sensitive_names`).
 */
import { InvalidRequestError, NotFoundError, PermissionDeniedError } from '../../errors.js';
import { FrameworkBackend, type PathDef } from '../../framework/backend.js';
import type { FieldData, FieldSchemas } from '../../framework/fields.js';
import type { Auth, RenewRequest, Request, Response } from '../../logical.js';
import type { BackendContext, BackendRegistration } from '../../registry.js';
import { getJSON, putJSON, type StorageView } from '../../storage-view.js';
import { Mappings } from '../shared/mappings.js';
import { addressAllowed } from '../shared/cidr.js';
import { LoginLockout } from '../shared/lockout.js';
import { equivalentPolicies, tokenAuth, tokenFields, tokenParamsData, updateTokenParams, type TokenParams } from '../shared/token-params.js';
import { DEFAULT_GROUP_FILTER, DEFAULT_USER_FILTER, directoryLogin, LdapLoginError, tlsVersionValid, type DirectoryConfig } from './directory.js';

/** The stored configuration: the directory settings in wire names, plus token parameters. */
interface ConfigEntry {
  settings: Record<string, unknown>;
  token: TokenParams;
}

const CONFIG_KEY = 'config';

/** One row per setting: its schema (with default) and how it is checked. Secrets are write-only. */
const SETTINGS: FieldSchemas = {
  url: { type: 'string', default: 'ldap://127.0.0.1', description: 'LDAP URL(s), comma-separated, tried in order.' },
  userdn: { type: 'string', description: 'Base DN of the user entries.' },
  userattr: { type: 'lowercase-string', default: 'cn', description: 'Attribute holding the username.' },
  userfilter: { type: 'string', default: DEFAULT_USER_FILTER, description: 'Filter to find the user entry (search-then-bind).' },
  discoverdn: { type: 'bool', description: 'Find the user DN by an (anonymous) search.' },
  binddn: { type: 'string', description: 'DN to bind as to search for users and groups.' },
  bindpass: { type: 'string', description: 'Password of binddn (never returned).' },
  groupdn: { type: 'string', description: 'Base DN of the group search.' },
  groupfilter: { type: 'string', default: DEFAULT_GROUP_FILTER, description: 'Filter of the group search.' },
  groupattr: { type: 'string', default: 'cn', description: 'Attribute of the found entries that names the group.' },
  upndomain: { type: 'string', description: 'Bind as <username>@<upndomain> (Active Directory).' },
  starttls: { type: 'bool', description: 'Upgrade ldap:// connections with StartTLS.' },
  insecure_tls: { type: 'bool', description: 'Skip server certificate verification.' },
  certificate: { type: 'string', description: 'PEM CA certificates for the server certificate.' },
  client_tls_cert: { type: 'string', description: 'PEM client certificate.' },
  client_tls_key: { type: 'string', description: 'PEM client key (never returned).' },
  tls_min_version: { type: 'string', default: 'tls12', allowedValues: ['tls10', 'tls11', 'tls12', 'tls13'] },
  tls_max_version: { type: 'string', default: 'tls12', allowedValues: ['tls10', 'tls11', 'tls12', 'tls13'] },
  deny_null_bind: { type: 'bool', default: true, description: 'Refuse empty passwords (which LDAP treats as anonymous).' },
  anonymous_group_search: { type: 'bool', description: 'Search groups anonymously.' },
  case_sensitive_names: { type: 'bool', description: 'Match user and group names case-sensitively.' },
  use_token_groups: { type: 'bool', description: 'Active Directory tokenGroups (not supported).' },
  username_as_alias: { type: 'bool', description: 'Use the username as the identity alias.' },
  request_timeout: { type: 'duration', default: 90, description: 'Limit of each LDAP operation.' },
  connection_timeout: { type: 'duration', default: 30, description: 'Limit of each connection attempt.' },
  dereference_aliases: { type: 'string', default: 'never', allowedValues: ['never', 'finding', 'searching', 'always'] },
  max_page_size: { type: 'int', description: 'Page size of searches (0: no paging).' },
};

const WRITE_ONLY = new Set(['bindpass', 'client_tls_key']);

const readConfig = (storage: StorageView) => getJSON<ConfigEntry>(storage, CONFIG_KEY);

function setting<T>(config: ConfigEntry, name: string): T {
  return (config.settings[name] ?? SETTINGS[name]!.default ?? (SETTINGS[name]!.type === 'bool' ? false : SETTINGS[name]!.type === 'int' || SETTINGS[name]!.type === 'duration' ? 0 : '')) as T;
}

function directoryConfig(config: ConfigEntry): DirectoryConfig {
  const s = <T>(name: string) => setting<T>(config, name);
  return {
    urls: s<string>('url').split(',').map((u) => u.trim()).filter(Boolean),
    userdn: s('userdn'),
    userattr: s('userattr'),
    userfilter: s('userfilter'),
    discoverdn: s('discoverdn'),
    binddn: s('binddn'),
    bindpass: s('bindpass'),
    groupdn: s('groupdn'),
    groupfilter: s('groupfilter'),
    groupattr: s('groupattr'),
    upndomain: s('upndomain'),
    starttls: s('starttls'),
    insecureTls: s('insecure_tls'),
    certificate: s('certificate'),
    clientTlsCert: s('client_tls_cert'),
    clientTlsKey: s('client_tls_key'),
    tlsMinVersion: s('tls_min_version'),
    tlsMaxVersion: s('tls_max_version'),
    denyNullBind: s('deny_null_bind'),
    anonymousGroupSearch: s('anonymous_group_search'),
    dereferenceAliases: s('dereference_aliases'),
    maxPageSize: s('max_page_size'),
    requestTimeoutMs: s<number>('request_timeout') * 1000,
    connectionTimeoutMs: s<number>('connection_timeout') * 1000,
  };
}

export function ldapBackend(context: BackendContext): FrameworkBackend {
  const lockout = new LoginLockout();
  const caseSensitive = async (storage: StorageView) => {
    const config = await readConfig(storage);
    return config ? setting<boolean>(config, 'case_sensitive_names') : false;
  };
  const mappings = new Mappings({ normalize: async (name, storage) => ((await caseSensitive(storage)) ? name : name.toLowerCase()) });

  async function writeConfig(request: Request, fields: FieldData): Promise<Response | undefined> {
    const existing = await readConfig(request.storage);
    const settings: Record<string, unknown> = { ...(existing?.settings ?? {}) };
    for (const name of Object.keys(SETTINGS)) if (fields.has(name)) settings[name] = fields.get(name);
    const next: ConfigEntry = { settings, token: updateTokenParams(fields, existing?.token) };
    const directory = directoryConfig(next);
    for (const url of directory.urls) {
      if (!/^ldaps?:\/\/[^/]+\/?$/i.test(url)) throw new InvalidRequestError(`invalid url ${JSON.stringify(url)}: want ldap://host[:port] or ldaps://host[:port]`);
    }
    if (!tlsVersionValid(directory.tlsMinVersion) || !tlsVersionValid(directory.tlsMaxVersion) || directory.tlsMaxVersion < directory.tlsMinVersion) {
      throw new InvalidRequestError("'tls_max_version' must be greater than or equal to 'tls_min_version'");
    }
    if ((directory.clientTlsCert === '') !== (directory.clientTlsKey === '')) {
      throw new InvalidRequestError('both client_tls_cert and client_tls_key must be set');
    }
    if (setting<boolean>(next, 'use_token_groups')) throw new InvalidRequestError('use_token_groups (Active Directory tokenGroups) is not supported');
    if (directory.requestTimeoutMs <= 0 || directory.connectionTimeoutMs <= 0) throw new InvalidRequestError('timeouts must be positive');
    await putJSON(request.storage, CONFIG_KEY, next);
    return undefined;
  }

  /** Check the password against the directory and resolve the mapped policies. */
  async function authenticate(storage: StorageView, config: ConfigEntry, username: string, password: string) {
    let login;
    try {
      login = await directoryLogin(directoryConfig(config), username, password);
    } catch (error) {
      if (error instanceof LdapLoginError) {
        context.logger.debug({ mount: context.mount.path, username, reason: String((error.cause as Error | undefined)?.message ?? '') }, 'ldap login failed');
        throw new InvalidRequestError(error.message);
      }
      throw error;
    }
    const fold = setting<boolean>(config, 'case_sensitive_names') ? (n: string) => n : (n: string) => n.toLowerCase();
    const { policies, groups } = await mappings.resolve(storage, fold(username), login.groups.map(fold));
    return { policies, groups, userDn: login.userDn };
  }

  async function login(request: Request, fields: FieldData): Promise<Response> {
    const config = await readConfig(request.storage);
    if (!config) throw new InvalidRequestError('ldap backend not configured');
    const username = fields.string('username');
    const password = fields.string('password');
    const principal = setting<boolean>(config, 'case_sensitive_names') ? username : username.toLowerCase();
    lockout.assertNotLocked(principal);
    if (!addressAllowed(request.remoteAddress, config.token.boundCidrs)) throw new PermissionDeniedError('token');
    let result;
    try {
      result = await authenticate(request.storage, config, username, password);
    } catch (error) {
      if (error instanceof InvalidRequestError && error.message === 'ldap operation failed: failed to bind as user') lockout.failed(principal);
      throw error;
    }
    lockout.succeeded(principal);
    const warnings = result.policies.length === 0 && config.token.policies.length === 0 ? ['user is not a member of any authorized policy'] : [];
    const auth: Auth = {
      ...tokenAuth(config.token),
      policies: [...config.token.policies, ...result.policies],
      displayName: username,
      metadata: { username },
      internalData: { password },
      alias: { name: username, metadata: { name: username } },
      groupAliases: result.groups,
    };
    return warnings.length ? { auth, warnings } : { auth };
  }

  async function renew(request: RenewRequest): Promise<Auth> {
    const config = await readConfig(request.storage);
    if (!config) throw new InvalidRequestError('ldap backend not configured');
    const username = request.auth.metadata?.username ?? '';
    const password = String(request.auth.internalData?.password ?? '');
    const { policies, groups } = await authenticate(request.storage, config, username, password);
    if (!equivalentPolicies([...config.token.policies, ...policies], request.auth.policies)) {
      throw new InvalidRequestError('policies have changed, not renewing');
    }
    return { ...request.auth, ttl: config.token.ttl, maxTtl: config.token.maxTtl, period: config.token.period, groupAliases: groups };
  }

  const paths: PathDef[] = [
    {
      pattern: 'config',
      fields: { ...SETTINGS, ...tokenFields() },
      existenceCheck: async (request) => (await readConfig(request.storage)) !== undefined,
      operations: {
        read: async (request) => {
          const config = await readConfig(request.storage);
          if (!config) throw new NotFoundError();
          const data: Record<string, unknown> = {};
          for (const name of Object.keys(SETTINGS)) if (!WRITE_ONLY.has(name)) data[name] = setting(config, name);
          return { data: { ...data, ...tokenParamsData(config.token) } };
        },
        create: writeConfig,
        update: writeConfig,
      },
      synopsis: 'Configure the LDAP server, how users and groups are found, and token parameters.',
    },
    ...mappings.paths(),
    {
      pattern: 'login/(?<username>.+)',
      unauthenticated: true,
      fields: { username: { type: 'string' }, password: { type: 'string' } },
      operations: { update: login },
      synopsis: 'Log in with the directory username and password.',
    },
  ];

  return new FrameworkBackend({ paths, renew, help: 'The LDAP auth method: users log in with their directory credentials.' });
}

export const ldapRegistration: BackendRegistration = {
  type: 'ldap',
  factory: ldapBackend,
  description: 'LDAP credentials',
};
