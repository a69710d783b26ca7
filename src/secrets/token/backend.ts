/**
 * The `token` auth method (`auth/token/…`) and the one place tokens are issued: token-store
 * creates, auth-method logins (through `issueForLogin`), and root tokens.
 */
import type { PolicyStore } from '../acl/store.js';
import { InvalidRequestError, PermissionDeniedError } from '../errors.js';
import { FrameworkBackend, type Backend } from '../framework/backend.js';
import type { FieldData, FieldSchemas } from '../framework/fields.js';
import type { Auth, MountInfo, Request, Response } from '../logical.js';
import { getJSON, putJSON, type StorageView } from '../storage-view.js';
import { sanitizePolicies, type TokenEntry, type TokenStore, type TokenType } from './store.js';
import { calculateTtl } from './ttl.js';

/** How the token service reaches an auth mount to renew one of its logins. */
export interface AuthMountHandle {
  readonly backend: Backend;
  readonly mount: MountInfo;
  readonly storage: StorageView;
  readonly defaultTtl: number;
  readonly maxTtl: number;
}

export interface TokenServiceOptions {
  readonly store: TokenStore;
  readonly policies: PolicyStore;
  /** The token store's own storage view (roles). */
  readonly view: StorageView;
  readonly defaultTtl: () => number;
  readonly maxTtl: () => number;
  readonly authMount: (accessor: string) => AuthMountHandle | undefined;
  /** The entry the core already looked up for this caller (saves a second lookup per request). */
  readonly entryOf?: (caller: object) => TokenEntry | undefined;
  /** Told about a tidy started in the background (to log its outcome). */
  readonly onTidy?: (running: Promise<number>) => void;
  readonly now?: () => number;
}

interface TokenRole {
  name: string;
  allowed_policies: string[];
  disallowed_policies: string[];
  allowed_policies_glob: string[];
  disallowed_policies_glob: string[];
  orphan: boolean;
  renewable: boolean;
  path_suffix: string;
  allowed_entity_aliases: string[];
  token_bound_cidrs: string[];
  token_explicit_max_ttl: number;
  token_no_default_policy: boolean;
  token_period: number;
  token_type: string;
}

const CREATE_FIELDS: FieldSchemas = {
  id: { type: 'string' },
  role_name: { type: 'string' },
  policies: { type: 'comma-string-slice', deprecatedAlias: 'policy' },
  meta: { type: 'kv-pairs' },
  no_parent: { type: 'bool' },
  no_default_policy: { type: 'bool' },
  renewable: { type: 'bool', default: true },
  ttl: { type: 'duration', deprecatedAlias: 'lease' },
  type: { type: 'string' },
  explicit_max_ttl: { type: 'duration' },
  display_name: { type: 'string' },
  num_uses: { type: 'int' },
  period: { type: 'duration' },
  entity_alias: { type: 'string' },
};

const ROLE_FIELDS: FieldSchemas = {
  role_name: { type: 'lowercase-string' },
  allowed_policies: { type: 'comma-string-slice' },
  disallowed_policies: { type: 'comma-string-slice' },
  allowed_policies_glob: { type: 'comma-string-slice' },
  disallowed_policies_glob: { type: 'comma-string-slice' },
  orphan: { type: 'bool' },
  renewable: { type: 'bool', default: true },
  path_suffix: { type: 'string' },
  allowed_entity_aliases: { type: 'comma-string-slice' },
  token_bound_cidrs: { type: 'comma-string-slice', deprecatedAlias: 'bound_cidrs' },
  token_explicit_max_ttl: { type: 'duration', deprecatedAlias: 'explicit_max_ttl' },
  token_no_default_policy: { type: 'bool' },
  token_period: { type: 'duration', deprecatedAlias: 'period' },
  token_type: { type: 'string', default: 'default-service' },
};

function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp('^' + pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
  return re.test(value);
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

export class TokenService {
  private readonly store: TokenStore;
  private readonly now: () => number;

  constructor(private readonly options: TokenServiceOptions) {
    this.store = options.store;
    this.now = options.now ?? Date.now;
  }

  /** Vault's `auth` block for a token. */
  authBlock(token: string, entry: TokenEntry): Record<string, unknown> {
    const ttl = entry.expireTime === 0 ? 0 : Math.max(0, Math.round((entry.expireTime - this.now()) / 1000));
    const block: Record<string, unknown> = {
      client_token: token,
      accessor: entry.type === 'batch' ? '' : entry.accessor,
      policies: entry.policies,
      token_policies: entry.policies,
      metadata: entry.meta,
      lease_duration: ttl,
      renewable: entry.renewable,
      entity_id: entry.entityId,
      token_type: entry.type,
      orphan: entry.orphan,
      mfa_requirement: null,
      num_uses: entry.numUses,
    };
    if (entry.policies.length === 0) delete block.token_policies;
    return block;
  }

  /** Vault's lookup `data` for a token (`id` is '' for lookups by accessor). */
  lookupData(entry: TokenEntry, id: string): Record<string, unknown> {
    const data: Record<string, unknown> = {
      accessor: entry.type === 'batch' ? '' : entry.accessor,
      creation_time: Math.floor(entry.creationTime / 1000),
      creation_ttl: entry.creationTtl,
      display_name: entry.displayName,
      entity_id: entry.entityId,
      expire_time: entry.expireTime === 0 ? null : rfc3339(entry.expireTime),
      explicit_max_ttl: entry.explicitMaxTtl,
      id,
      meta: entry.meta,
      num_uses: entry.numUses,
      orphan: entry.orphan,
      path: entry.path,
      policies: entry.policies,
      ttl: entry.expireTime === 0 ? 0 : Math.max(0, Math.round((entry.expireTime - this.now()) / 1000)),
      type: entry.type,
    };
    if (entry.expireTime !== 0) {
      data.issue_time = rfc3339(entry.creationTime);
      data.renewable = entry.renewable;
    }
    if (entry.lastRenewalTime) {
      data.last_renewal_time = Math.floor(entry.lastRenewalTime / 1000);
      data.last_renewal = rfc3339(entry.lastRenewalTime);
    }
    if (entry.role) data.role = entry.role;
    if (entry.period) data.period = entry.period;
    if (entry.boundCidrs.length) data.bound_cidrs = entry.boundCidrs;
    return data;
  }

  /** A new orphan root token (init, generate-root, dev mode). */
  async createRootToken(id?: string): Promise<string> {
    const { token } = await this.store.create(
      {
        accessor: this.store.newAccessor(),
        parentHash: '',
        policies: ['root'],
        path: 'auth/token/root',
        meta: null,
        displayName: 'root',
        numUses: 0,
        creationTime: this.now(),
        creationTtl: 0,
        expireTime: 0,
        lastRenewalTime: 0,
        explicitMaxTtl: 0,
        period: 0,
        role: '',
        type: 'service',
        entityId: '',
        renewable: false,
        orphan: true,
        boundCidrs: [],
        mountAccessor: '',
        backendMaxTtl: 0,
        backendTtl: 0,
      },
      id,
    );
    return token;
  }

  /** The token of a successful login through an auth method (see src/secrets/auth/index.ts). */
  async issueForLogin(auth: Auth, mount: AuthMountHandle, loginPath: string): Promise<{ auth: Record<string, unknown>; warnings: string[] }> {
    const type = resolveType(auth.tokenType);
    const policies = sanitizePolicies(auth.policies, !auth.noDefaultPolicy);
    if (policies.includes('root')) throw new InvalidRequestError('auth methods cannot create root tokens');
    const now = this.now();
    const maxTtl = mount.maxTtl;
    const { ttl, warnings } = calculateTtl({
      increment: 0,
      backendTtl: auth.ttl ?? 0,
      period: auth.period ?? 0,
      backendMaxTtl: auth.maxTtl ?? 0,
      explicitMaxTtl: auth.explicitMaxTtl ?? 0,
      start: now,
      now,
      defaultTtl: mount.defaultTtl,
      maxTtl,
    });
    const entityId = auth.alias ? await this.store.entityFor(mount.mount.accessor, auth.alias.name) : '';
    const displayName = auth.displayName ? `${mount.mount.type}-${auth.displayName}` : mount.mount.type;
    const { token, entry } = await this.store.create({
      accessor: this.store.newAccessor(),
      parentHash: '',
      policies,
      path: `${mount.mount.path}${loginPath}`,
      meta: auth.metadata && Object.keys(auth.metadata).length ? { ...auth.metadata } : null,
      displayName,
      numUses: type === 'batch' ? 0 : Math.max(0, auth.numUses ?? 0),
      creationTime: now,
      creationTtl: ttl,
      expireTime: ttl === 0 ? 0 : now + ttl * 1000,
      lastRenewalTime: 0,
      explicitMaxTtl: auth.explicitMaxTtl ?? 0,
      period: auth.period ?? 0,
      role: '',
      type,
      entityId,
      renewable: type === 'service' && (auth.renewable ?? true),
      orphan: true,
      boundCidrs: [...(auth.boundCidrs ?? [])],
      mountAccessor: mount.mount.accessor,
      auth,
      backendMaxTtl: auth.maxTtl ?? 0,
      backendTtl: auth.ttl ?? 0,
    });
    return { auth: this.authBlock(token, entry), warnings };
  }

  private async role(name: string): Promise<TokenRole | undefined> {
    return getJSON<TokenRole>(this.options.view, `roles/${name.toLowerCase()}`);
  }

  private async callerEntry(request: Request): Promise<TokenEntry> {
    const entry = request.caller ? (this.options.entryOf?.(request.caller) ?? (await this.store.lookup(request.caller.token))) : undefined;
    if (!entry) throw new PermissionDeniedError();
    return entry;
  }

  private async create(request: Request, fields: FieldData, mode: 'create' | 'orphan' | 'role'): Promise<Response> {
    const parent = await this.callerEntry(request);
    const isRoot = parent.policies.includes('root');
    const isSudo = isRoot || request.caller?.sudo === true;
    if (parent.type === 'batch') throw new InvalidRequestError('batch tokens cannot create more tokens');
    if (parent.numUses > 0) throw new InvalidRequestError('restricted use token cannot generate child tokens');
    const warnings: string[] = [];

    let role: TokenRole | undefined;
    let path = mode === 'orphan' ? 'auth/token/create-orphan' : 'auth/token/create';
    if (mode === 'role') {
      const roleName = fields.string('role_name');
      role = await this.role(roleName);
      if (!role) throw new InvalidRequestError(`unknown role ${roleName}`);
      path = `auth/token/create/${role.name}${role.path_suffix ? `/${role.path_suffix}` : ''}`;
    }

    const typeName = fields.has('type') ? fields.string('type') : role ? role.token_type : 'service';
    const type = resolveTypeStrict(typeName);
    const numUses = fields.int('num_uses');
    if (numUses < 0) throw new InvalidRequestError('number of uses cannot be negative');
    const id = fields.string('id');
    if (id !== '') {
      if (!isSudo) throw new InvalidRequestError('root or sudo privileges required to specify token id');
      if (type === 'batch') throw new InvalidRequestError('custom token ID cannot be used with batch tokens');
      if (id.includes('.')) throw new InvalidRequestError('token IDs can not contain a period');
      warnings.push('Supplying a custom ID for the token uses the weaker SHA1 hashing instead of the more secure SHA2-256 HMAC for token obfuscation. SHA1 hashed tokens on the wire leads to less secure lookups.');
    }

    let orphan = mode === 'orphan';
    if (role) orphan = role.orphan;
    else if (fields.bool('no_parent')) {
      if (!isSudo) throw new InvalidRequestError('root or sudo privileges required to create orphan token');
      orphan = true;
    }

    const noDefault = fields.bool('no_default_policy') || (role?.token_no_default_policy ?? false);
    let policies: string[];
    const requested = fields.strings('policies');
    if (role) {
      const asked = sanitizePolicies(requested.length ? requested : role.allowed_policies, false);
      if (role.allowed_policies.length || role.allowed_policies_glob.length) {
        const allowed = sanitizePolicies(role.allowed_policies, false);
        const bad = asked.filter((p) => p !== 'default' && !allowed.includes(p) && !role!.allowed_policies_glob.some((g) => globMatch(g, p)));
        if (bad.length) throw new InvalidRequestError(`token policies (${JSON.stringify(asked)}) must be subset of the role's allowed policies (${JSON.stringify(allowed)})`);
      } else if (!isSudo && !asked.every((p) => parent.policies.includes(p) || p === 'default')) {
        throw new InvalidRequestError('token policies must be subset of the parent token\'s policies');
      }
      const disallowed = sanitizePolicies(role.disallowed_policies, false);
      const forbidden = asked.filter((p) => disallowed.includes(p) || role!.disallowed_policies_glob.some((g) => globMatch(g, p)));
      if (forbidden.length) throw new InvalidRequestError(`token policy ${JSON.stringify(forbidden[0])} is disallowed by this role`);
      policies = sanitizePolicies(asked, !noDefault);
    } else if (requested.length === 0) {
      policies = noDefault ? parent.policies.filter((p) => p !== 'default') : [...parent.policies];
    } else {
      const asked = sanitizePolicies(requested, false);
      if (!isSudo && !asked.every((p) => p === 'default' || parent.policies.includes(p))) {
        throw new InvalidRequestError('child policies must be subset of parent');
      }
      policies = sanitizePolicies(asked, !noDefault && (parent.policies.includes('default') || isSudo));
    }
    for (const name of ['response-wrapping', 'control-group']) {
      if (policies.includes(name)) throw new InvalidRequestError(`cannot assign policy ${JSON.stringify(name)}`);
    }
    const isRootToken = policies.includes('root');
    if (isRootToken) {
      if (!isRoot) throw new InvalidRequestError('root tokens may not be created without parent token being root');
      if (type === 'batch') throw new InvalidRequestError('batch tokens cannot be root tokens');
    }
    for (const name of policies) {
      if (name !== 'root' && !(await this.options.policies.exists(name))) warnings.push(`Policy ${JSON.stringify(name)} does not exist`);
    }

    let period = fields.duration('period');
    if (period > 0 && !isSudo && !role) throw new InvalidRequestError('root or sudo privileges required to create periodic token');
    if (role && role.token_period > 0) period = role.token_period;
    let explicitMaxTtl = fields.duration('explicit_max_ttl');
    if (role && role.token_explicit_max_ttl > 0 && (explicitMaxTtl === 0 || role.token_explicit_max_ttl < explicitMaxTtl)) explicitMaxTtl = role.token_explicit_max_ttl;
    if (type === 'batch') {
      if (period > 0) throw new InvalidRequestError('batch tokens cannot be periodic');
      if (numUses > 0) throw new InvalidRequestError('batch tokens cannot have a num_uses value');
      if (explicitMaxTtl > 0) throw new InvalidRequestError('batch tokens cannot have an explicit max TTL');
    }

    const now = this.now();
    let ttl = fields.duration('ttl');
    if (period > 0 || ttl > 0 || !isRootToken) {
      const computed = calculateTtl({
        increment: 0,
        backendTtl: ttl,
        period,
        backendMaxTtl: 0,
        explicitMaxTtl,
        start: now,
        now,
        defaultTtl: this.options.defaultTtl(),
        maxTtl: this.options.maxTtl(),
      });
      ttl = computed.ttl;
      warnings.push(...computed.warnings);
    }
    if (!orphan && parent.expireTime !== 0) {
      const parentLeft = Math.floor((parent.expireTime - now) / 1000);
      if (ttl === 0 || ttl > parentLeft) {
        if (isRootToken && ttl === 0) throw new InvalidRequestError('expiring root tokens cannot create non-expiring root tokens');
        ttl = Math.max(0, parentLeft);
      }
    }

    const displayRaw = fields.string('display_name');
    const displayName = displayRaw ? `token-${displayRaw}`.replace(/[^a-zA-Z0-9-]/g, '-').replace(/-+$/, '') : 'token';
    const renewable = type === 'service' && !(isRootToken && ttl === 0) && fields.bool('renewable') && (role?.renewable ?? true);
    const meta = fields.pairs('meta');

    const { token, entry } = await this.options.store.create(
      {
        accessor: this.store.newAccessor(),
        parentHash: orphan ? '' : parent.idHash,
        policies,
        path,
        meta: Object.keys(meta).length ? meta : null,
        displayName,
        numUses,
        creationTime: now,
        creationTtl: ttl,
        expireTime: ttl === 0 ? 0 : now + ttl * 1000,
        lastRenewalTime: 0,
        explicitMaxTtl,
        period,
        role: role?.name ?? '',
        type,
        entityId: orphan ? '' : parent.entityId,
        renewable,
        orphan,
        boundCidrs: role?.token_bound_cidrs ?? [],
        mountAccessor: '',
        backendMaxTtl: 0,
        backendTtl: ttl,
      },
      id || undefined,
    );
    return { tokenAuth: this.authBlock(token, entry), ...(warnings.length ? { warnings } : {}) };
  }

  /** Renew `entry` (presented as `token`, '' when by accessor). */
  private async renew(entry: TokenEntry, token: string, increment: number): Promise<Response> {
    if (entry.type === 'batch') throw new InvalidRequestError('batch tokens cannot be renewed');
    if (entry.expireTime === 0 || !entry.renewable) throw new InvalidRequestError('lease is not renewable');
    const now = this.now();
    let backendTtl = entry.backendTtl;
    let backendMaxTtl = entry.backendMaxTtl;
    let period = entry.period;
    let defaultTtl = this.options.defaultTtl();
    let maxTtl = this.options.maxTtl();
    if (entry.mountAccessor) {
      const mount = this.options.authMount(entry.mountAccessor);
      if (!mount) throw new InvalidRequestError('no auth mount found for this token');
      defaultTtl = mount.defaultTtl;
      maxTtl = mount.maxTtl;
      if (mount.backend.renew && entry.auth) {
        const path = entry.path.startsWith(mount.mount.path) ? entry.path.slice(mount.mount.path.length) : entry.path;
        const auth = await mount.backend.renew({ auth: entry.auth, storage: mount.storage, mount: mount.mount, increment, path });
        backendTtl = auth.ttl ?? 0;
        backendMaxTtl = auth.maxTtl ?? 0;
        period = auth.period ?? 0;
        entry.auth = auth;
      }
    }
    const { ttl, warnings } = calculateTtl({ increment, backendTtl, period, backendMaxTtl, explicitMaxTtl: entry.explicitMaxTtl, start: entry.creationTime, now, defaultTtl, maxTtl });
    entry.expireTime = now + ttl * 1000;
    entry.lastRenewalTime = now;
    await this.store.save(entry);
    return { tokenAuth: this.authBlock(token, entry), ...(warnings.length ? { warnings } : {}) };
  }

  backend(): FrameworkBackend {
    const tokenField: FieldSchemas = { token: { type: 'string' } };
    const accessorField: FieldSchemas = { accessor: { type: 'string' } };
    const incrementFields: FieldSchemas = { increment: { type: 'duration' } };
    const requireToken = (fields: FieldData) => {
      const token = fields.string('token');
      if (!token) throw new InvalidRequestError('missing token ID');
      return token;
    };
    const requireAccessor = async (fields: FieldData) => {
      const accessor = fields.string('accessor');
      if (!accessor) throw new InvalidRequestError('missing accessor');
      const entry = await this.store.byAccessor(accessor);
      if (!entry) throw new InvalidRequestError('invalid accessor');
      return entry;
    };
    const lookup = async (_r: Request, fields: FieldData): Promise<Response> => {
      const token = requireToken(fields);
      const entry = await this.store.lookup(token);
      if (!entry) throw new PermissionDeniedError('token', 'bad token');
      return { data: this.lookupData(entry, token) };
    };
    const lookupSelf = async (request: Request): Promise<Response> => {
      const entry = await this.callerEntry(request);
      return { data: this.lookupData(entry, request.caller!.token) };
    };
    return new FrameworkBackend({
      help: 'The token credential backend is always enabled and builtin to Vault. It creates, looks up, renews and revokes tokens.',
      paths: [
        { pattern: 'create-orphan', fields: CREATE_FIELDS, operations: { update: (r, f) => this.create(r, f, 'orphan') }, synopsis: 'Create an orphan token.' },
        { pattern: 'create/(?<role_name>.+)', fields: CREATE_FIELDS, operations: { update: (r, f) => this.create(r, f, 'role') }, synopsis: 'Create a token from a role.' },
        { pattern: 'create', fields: CREATE_FIELDS, operations: { update: (r, f) => this.create(r, f, 'create') }, synopsis: 'Create a token.' },
        { pattern: 'lookup', fields: tokenField, operations: { update: lookup, read: lookup }, synopsis: 'Look up a token.' },
        { pattern: 'lookup-self', fields: tokenField, operations: { read: lookupSelf, update: lookupSelf }, synopsis: 'Look up the calling token.' },
        {
          pattern: 'lookup-accessor',
          fields: accessorField,
          operations: { update: async (_r, f) => ({ data: this.lookupData(await requireAccessor(f), '') }) },
          synopsis: 'Look up a token by its accessor.',
        },
        {
          pattern: 'renew',
          fields: { ...tokenField, ...incrementFields },
          operations: {
            update: async (_r, f) => {
              const token = requireToken(f);
              const entry = await this.store.lookup(token);
              if (!entry) throw new InvalidRequestError('token not found');
              return this.renew(entry, token, f.duration('increment'));
            },
          },
        },
        {
          pattern: 'renew-self',
          fields: incrementFields,
          operations: { update: async (r, f) => this.renew(await this.callerEntry(r), r.caller!.token, f.duration('increment')) },
        },
        {
          pattern: 'renew-accessor',
          fields: { ...accessorField, ...incrementFields },
          operations: { update: async (_r, f) => this.renew(await requireAccessor(f), '', f.duration('increment')) },
        },
        {
          pattern: 'revoke',
          fields: tokenField,
          operations: {
            update: async (_r, f) => {
              const entry = await this.store.lookup(requireToken(f));
              if (entry?.type === 'batch') throw new InvalidRequestError('batch tokens cannot be revoked');
              if (entry) await this.store.revokeTree(entry.idHash);
              return undefined;
            },
          },
        },
        {
          pattern: 'revoke-self',
          operations: {
            update: async (r) => {
              const entry = await this.callerEntry(r);
              if (entry.type === 'batch') throw new InvalidRequestError('batch tokens cannot be revoked');
              await this.store.revokeTree(entry.idHash);
              return undefined;
            },
          },
        },
        {
          pattern: 'revoke-accessor',
          fields: accessorField,
          operations: {
            update: async (_r, f) => {
              const accessor = f.string('accessor');
              if (!accessor) throw new InvalidRequestError('missing accessor');
              const entry = await this.store.byAccessor(accessor);
              if (!entry) return { warnings: ['No token found with this accessor'] };
              await this.store.revokeTree(entry.idHash);
              return undefined;
            },
          },
        },
        {
          pattern: 'revoke-orphan',
          fields: tokenField,
          operations: {
            update: async (r, f) => {
              if (!r.caller?.sudo) throw new InvalidRequestError('root or sudo privileges required to revoke and orphan');
              const entry = await this.store.lookup(requireToken(f));
              if (entry?.type === 'batch') throw new InvalidRequestError('batch tokens cannot be revoked');
              if (entry) await this.store.revokeOrphan(entry.idHash);
              return undefined;
            },
          },
        },
        {
          pattern: 'accessors/?',
          sudo: true,
          operations: { list: async () => ({ data: { keys: await this.store.accessors() } }) },
          synopsis: 'List token accessors (needs sudo).',
        },
        {
          pattern: 'roles/?',
          operations: { list: async () => ({ data: { keys: (await this.options.view.list('roles/')).filter((n) => !n.endsWith('/')) } }) },
        },
        {
          pattern: 'roles/(?<role_name>[^/]+)',
          fields: ROLE_FIELDS,
          existenceCheck: async (_r, f) => (await this.role(f.string('role_name'))) !== undefined,
          operations: {
            read: async (_r, f) => {
              const role = await this.role(f.string('role_name'));
              if (!role) return undefined;
              return { data: { ...role, token_explicit_max_ttl: role.token_explicit_max_ttl, explicit_max_ttl: role.token_explicit_max_ttl, period: role.token_period, bound_cidrs: role.token_bound_cidrs } };
            },
            create: (r, f) => this.writeRole(r, f),
            update: (r, f) => this.writeRole(r, f),
            delete: async (_r, f) => {
              await this.options.view.delete(`roles/${f.string('role_name')}`);
              return undefined;
            },
          },
        },
        {
          pattern: 'tidy',
          operations: {
            update: async () => {
              this.options.onTidy?.(this.store.tidy());
              return { statusCode: 202, warnings: ['Tidy operation successfully started. Any information from the operation will be printed to Vault\'s server logs.'] };
            },
          },
        },
      ],
    });
  }

  private async writeRole(_request: Request, fields: FieldData): Promise<Response | undefined> {
    const name = fields.string('role_name');
    const existing = await this.role(name);
    const pick = <K extends keyof TokenRole>(key: K, value: () => TokenRole[K], fallback: TokenRole[K]): TokenRole[K] =>
      fields.has(key) ? value() : existing ? existing[key] : fallback;
    const tokenType = pick('token_type', () => fields.string('token_type'), 'default-service');
    resolveTypeStrict(tokenType);
    const role: TokenRole = {
      name,
      allowed_policies: pick('allowed_policies', () => sanitizePolicies(fields.strings('allowed_policies'), false), []),
      disallowed_policies: pick('disallowed_policies', () => sanitizePolicies(fields.strings('disallowed_policies'), false), []),
      allowed_policies_glob: pick('allowed_policies_glob', () => fields.strings('allowed_policies_glob'), []),
      disallowed_policies_glob: pick('disallowed_policies_glob', () => fields.strings('disallowed_policies_glob'), []),
      orphan: pick('orphan', () => fields.bool('orphan'), false),
      renewable: pick('renewable', () => fields.bool('renewable'), true),
      path_suffix: pick('path_suffix', () => fields.string('path_suffix'), ''),
      allowed_entity_aliases: pick('allowed_entity_aliases', () => fields.strings('allowed_entity_aliases'), []),
      token_bound_cidrs: pick('token_bound_cidrs', () => fields.strings('token_bound_cidrs'), []),
      token_explicit_max_ttl: pick('token_explicit_max_ttl', () => fields.duration('token_explicit_max_ttl'), 0),
      token_no_default_policy: pick('token_no_default_policy', () => fields.bool('token_no_default_policy'), false),
      token_period: pick('token_period', () => fields.duration('token_period'), 0),
      token_type: tokenType,
    };
    if (role.path_suffix.includes('..')) throw new InvalidRequestError('error registering path suffix: path suffix cannot contain ".."');
    await putJSON(this.options.view, `roles/${name}`, role);
    return undefined;
  }
}

function resolveType(value: string | undefined): TokenType {
  return value === 'batch' || value === 'default-batch' ? 'batch' : 'service';
}

function resolveTypeStrict(value: string): TokenType {
  if (!['', 'service', 'batch', 'default', 'default-service', 'default-batch'].includes(value)) throw new InvalidRequestError("invalid 'token_type' value");
  return resolveType(value);
}

