/**
 * One LDAP login as Vault's ldap method performs it (vault.md §8), through ldapts:
 *
 *   1. connect to the first reachable URL (ldap:// with optional StartTLS, or ldaps://);
 *   2. find the DN to bind as: search `userdn` with `userfilter` as `binddn` (or anonymously with
 *      `discoverdn`), else `<username>@<upndomain>`, else `<userattr>=<username>,<userdn>`;
 *   3. bind as the user with the password — this is the credential check;
 *   4. rebind as `binddn` (if any) and search `groupdn` with `groupfilter`; group names are the
 *      `groupattr` values (the CN when a value is a DN, as with `memberOf`).
 *
 * Every failure is an `LdapLoginError` whose message is the client-facing 400 text; details (never
 * the password) go to `cause` for the server log. Each connection attempt is bounded by
 * `connectionTimeoutMs` and each operation by `requestTimeoutMs`.
 */
import { Client, Filter, ResultCodeError, type ClientOptions, type Entry } from 'ldapts';
import type { ConnectionOptions } from 'node:tls';

export class LdapLoginError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LdapLoginError';
  }
}

export interface DirectoryConfig {
  /** One or more URLs, tried in order. */
  readonly urls: readonly string[];
  readonly userdn: string;
  readonly userattr: string;
  readonly userfilter: string;
  readonly discoverdn: boolean;
  readonly binddn: string;
  readonly bindpass: string;
  readonly groupdn: string;
  readonly groupfilter: string;
  readonly groupattr: string;
  readonly upndomain: string;
  readonly starttls: boolean;
  readonly insecureTls: boolean;
  readonly certificate: string;
  readonly clientTlsCert: string;
  readonly clientTlsKey: string;
  readonly tlsMinVersion: string;
  readonly tlsMaxVersion: string;
  readonly denyNullBind: boolean;
  readonly anonymousGroupSearch: boolean;
  readonly dereferenceAliases: 'never' | 'finding' | 'searching' | 'always';
  readonly maxPageSize: number;
  readonly requestTimeoutMs: number;
  readonly connectionTimeoutMs: number;
}

export interface DirectoryLogin {
  /** The DN the user bound as. */
  readonly userDn: string;
  /** Group names found in the directory. */
  readonly groups: string[];
}

export const DEFAULT_USER_FILTER = '({{.UserAttr}}={{.Username}})';
export const DEFAULT_GROUP_FILTER = '(|(memberUid={{.Username}})(member={{.UserDN}})(uniqueMember={{.UserDN}}))';

const TLS_VERSIONS: Record<string, ConnectionOptions['minVersion']> = { tls10: 'TLSv1', tls11: 'TLSv1.1', tls12: 'TLSv1.2', tls13: 'TLSv1.3' };
const DEREF: Record<DirectoryConfig['dereferenceAliases'], 'never' | 'find' | 'search' | 'always'> = {
  never: 'never',
  finding: 'find',
  searching: 'search',
  always: 'always',
};

export function tlsVersionValid(version: string): boolean {
  return version in TLS_VERSIONS;
}

/** Check the user's password against the directory and collect their groups. */
export async function directoryLogin(config: DirectoryConfig, username: string, password: string): Promise<DirectoryLogin> {
  if (password === '' && config.denyNullBind) {
    throw new LdapLoginError('password cannot be of zero length when passwordless binds are being denied');
  }
  const { client, url } = await connect(config);
  try {
    const bindDn = await userBindDn(client, config, username);
    try {
      await client.bind(bindDn, password);
    } catch (error) {
      throw new LdapLoginError('ldap operation failed: failed to bind as user', { cause: error });
    }
    if (config.binddn !== '' && config.bindpass !== '' && !config.anonymousGroupSearch) {
      await serviceBind(client, config, 'ldap operation failed: failed to bind as the service account for the group search');
    } else if (config.anonymousGroupSearch) {
      await client.unbind().catch(() => undefined);
      await reconnect(client, config, url);
    }
    const userDn = config.upndomain !== '' ? await upnUserDn(client, config, username, bindDn) : bindDn;
    const groups = await groupNames(client, config, username, userDn);
    return { userDn, groups };
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

async function connect(config: DirectoryConfig): Promise<{ client: Client; url: string }> {
  const failures: unknown[] = [];
  for (const url of config.urls) {
    const client = new Client(clientOptions(config, url));
    try {
      await reconnect(client, config, url);
      return { client, url };
    } catch (error) {
      failures.push(error);
      await client.unbind().catch(() => undefined);
    }
  }
  throw new LdapLoginError('ldap operation failed: failed to connect to LDAP server', { cause: new AggregateError(failures, 'every LDAP URL failed') });
}

/** Open the connection (ldapts connects lazily) and upgrade it with StartTLS when configured. */
async function reconnect(client: Client, config: DirectoryConfig, url: string): Promise<void> {
  if (client.isConnected) return;
  if (config.starttls && !url.toLowerCase().startsWith('ldaps://')) {
    await client.startTLS(tlsOptions(config, url));
    return;
  }
  // ldapts connects lazily: a read of the root DSE makes it connect now, so that connection
  // errors surface here. A server that refuses the read itself has still been reached.
  try {
    await client.search('', { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] });
  } catch (error) {
    if (!(error instanceof ResultCodeError)) throw error;
  }
}

function clientOptions(config: DirectoryConfig, url: string): ClientOptions {
  return {
    url,
    timeout: config.requestTimeoutMs,
    connectTimeout: config.connectionTimeoutMs,
    tlsOptions: url.toLowerCase().startsWith('ldaps://') ? tlsOptions(config, url) : undefined,
  };
}

function tlsOptions(config: DirectoryConfig, url: string): ConnectionOptions {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return {
    host,
    ca: config.certificate || undefined,
    cert: config.clientTlsCert || undefined,
    key: config.clientTlsKey || undefined,
    rejectUnauthorized: !config.insecureTls,
    minVersion: TLS_VERSIONS[config.tlsMinVersion],
    maxVersion: TLS_VERSIONS[config.tlsMaxVersion],
  };
}

async function serviceBind(client: Client, config: DirectoryConfig, message: string): Promise<void> {
  try {
    await client.bind(config.binddn, config.bindpass);
  } catch (error) {
    throw new LdapLoginError(message, { cause: error });
  }
}

async function userBindDn(client: Client, config: DirectoryConfig, username: string): Promise<string> {
  if (config.discoverdn || (config.binddn !== '' && config.bindpass !== '')) {
    if (config.binddn !== '' && config.bindpass !== '') {
      await serviceBind(client, config, 'ldap operation failed: unable to retrieve user bind DN');
    }
    const filter = renderFilter(config.userfilter, { UserAttr: config.userattr, Username: Filter.escape(username) });
    const entries = await search(client, config, config.userdn, filter, ['1.1'], 'ldap operation failed: unable to retrieve user bind DN');
    if (entries.length !== 1) throw new LdapLoginError('ldap operation failed: unable to retrieve user bind DN', { cause: new Error(`LDAP search for binddn 0 or not unique (${entries.length})`) });
    return entries[0]!.dn;
  }
  if (config.upndomain !== '') return `${username}@${config.upndomain}`;
  return `${config.userattr}=${escapeDnValue(username)},${config.userdn}`;
}

/** With upndomain the bind name is not a DN: find the entry whose userPrincipalName it is. */
async function upnUserDn(client: Client, config: DirectoryConfig, username: string, bindDn: string): Promise<string> {
  if (config.binddn !== '' || config.discoverdn) return bindDn;
  const filter = `(userPrincipalName=${Filter.escape(`${username}@${config.upndomain}`)})`;
  const entries = await search(client, config, config.userdn, filter, ['1.1'], 'ldap operation failed: failed to get user DN');
  if (entries.length !== 1) throw new LdapLoginError('ldap operation failed: failed to get user DN');
  return entries[0]!.dn;
}

async function groupNames(client: Client, config: DirectoryConfig, username: string, userDn: string): Promise<string[]> {
  if (config.groupdn === '') return [];
  const filter = renderFilter(config.groupfilter, { UserAttr: config.userattr, Username: Filter.escape(username), UserDN: Filter.escape(userDn) });
  const entries = await search(client, config, config.groupdn, filter, [config.groupattr], 'ldap operation failed: unable to retrieve user groups');
  const names = new Set<string>();
  for (const entry of entries) {
    const attribute = Object.keys(entry).find((k) => k.toLowerCase() === config.groupattr.toLowerCase());
    const values = attribute ? entry[attribute] : config.groupattr.toLowerCase() === 'dn' ? entry.dn : undefined;
    for (const value of Array.isArray(values) ? values : values === undefined ? [] : [values]) {
      names.add(commonName(String(value)));
    }
  }
  return [...names];
}

async function search(client: Client, config: DirectoryConfig, base: string, filter: string, attributes: string[], message: string): Promise<Entry[]> {
  try {
    const result = await client.search(base, {
      scope: 'sub',
      filter,
      attributes,
      derefAliases: DEREF[config.dereferenceAliases],
      ...(config.maxPageSize > 0 ? { paged: { pageSize: config.maxPageSize } } : {}),
    });
    return result.searchEntries;
  } catch (error) {
    if (error instanceof LdapLoginError) throw error;
    throw new LdapLoginError(message, { cause: error });
  }
}

/** Fill Vault's Go-template placeholders (`{{.Username}}`, `{{.UserDN}}`, `{{.UserAttr}}`). */
export function renderFilter(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*\.(\w+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
}

/** RFC 4514 escaping of an attribute value inside a DN. */
export function escapeDnValue(value: string): string {
  let out = value.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`).replace(/\0/g, '\\00');
  if (out.startsWith(' ') || out.startsWith('#')) out = `\\${out}`;
  if (out.endsWith(' ') && !out.endsWith('\\ ')) out = `${out.slice(0, -1)}\\ `;
  return out;
}

/** The first CN of a DN (`cn=admins,ou=groups,…` → `admins`); anything else as is. */
export function commonName(value: string): string {
  const m = /^\s*cn\s*=\s*((?:\\.|[^,+])*)/i.exec(value);
  if (!m || !value.includes('=')) return value;
  return m[1]!.replace(/\\(.)/g, '$1').trim();
}
